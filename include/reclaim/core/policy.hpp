// SPDX-License-Identifier: MIT
// Named template parameters ("policy packs"): debra<check_every<20>, amortized_free<1>> reads as what
// it is, in any order, with defaults for what is not named.
#pragma once
#include <type_traits>

namespace reclaim::core {

// Each policy type names its kind with a nested `policy_kind` tag. find_policy picks the first policy
// of the given kind from the pack, or Default.
template <class Kind, class Default, class... Policies>
struct find_policy {
  using type = Default;
};

template <class Kind, class Default, class First, class... Rest>
struct find_policy<Kind, Default, First, Rest...> {
  using type = std::conditional_t<std::is_same_v<typename First::policy_kind, Kind>, First,
                                  typename find_policy<Kind, Default, Rest...>::type>;
};

template <class Kind, class Default, class... Policies>
using find_policy_t = typename find_policy<Kind, Default, Policies...>::type;

// A policy that is one number of its kind: slots<K> is a value_policy<slots_kind, unsigned, K>.
template <class Kind, class T, T V>
struct value_policy {
  using policy_kind = Kind;
  static constexpr T value = V;
};

// The value of the pack's policy of Default's kind, or Default's: policy_value<slots<4>, Ps...>.
template <class Default, class... Policies>
inline constexpr auto policy_value =
    find_policy_t<typename Default::policy_kind, Default, Policies...>::value;

// Every policy of a pack must be of a kind the scheme knows: a misspelt policy is a compile error,
// not a silently ignored parameter.
template <class... Kinds>
struct known_kinds {
  template <class Policy>
  static constexpr bool contains = (std::is_same_v<typename Policy::policy_kind, Kinds> || ...);
};

}  // namespace reclaim::core
