// SPDX-License-Identifier: MIT
// sized_for<Scheme, Container>: the same scheme with as many protections per guard as a container
// uses at once, where the scheme's defaults hold fewer: hp, lfrc, he, wfe and crystalline with
// slots<Container::slots_used>, nbr and nbr_plus with slots<Container::reservations_used>;
// every other scheme, and a scheme that already holds enough, as it is.
//
// Most containers protect two or three nodes at once, which hp<> (4 slots) and nbr<> (8
// reservations) cover. lazy_skiplist protects a predecessor on every level of a tower, so it runs
// under hp<reclaim::slots<14>> and nbr<reclaim::slots<13>>: the same schemes, sized for
// it. The lab and the tests run every container under sized_for<Scheme, Container> (for the
// others it is Scheme), so that "hp" names one scheme on every container. lazy_skiplist sizes its
// scheme itself (lazy_skiplist<Key, hp<>> runs on hp<slots<14>>): a user names neither.
//
// Container is any instantiation of the container: what it uses does not depend on the scheme. A
// size is a policy put first in the pack, where it wins over one the pack already has
// (core::find_policy takes the first of its kind).
#pragma once
#include <type_traits>

#include "hp.hpp"
#include "lfrc.hpp"
#include "nbr.hpp"

namespace reclaim {
namespace detail {

template <class Container>
constexpr unsigned slots_used_by = 0;
template <class Container>
  requires requires { Container::slots_used; }
constexpr unsigned slots_used_by<Container> = Container::slots_used;
template <class Container>
constexpr unsigned reservations_used_by = 0;
template <class Container>
  requires requires { Container::reservations_used; }
constexpr unsigned reservations_used_by<Container> = Container::reservations_used;

template <class Scheme, unsigned Slots, unsigned Reservations>
struct sized {
  using type = Scheme;
};
// Schemes whose guards validate reads in a number of slots (hp and its family, lfrc, he, wfe,
// crystalline_l and crystalline_w): slots<K>, put first, sizes them.
template <template <class...> class Scheme, class... Policies, unsigned Slots,
          unsigned Reservations>
  requires Scheme<Policies...>::guard::validates
struct sized<Scheme<Policies...>, Slots, Reservations> {
  using type = std::conditional_t<(Scheme<Policies...>::guard::slot_count >= Slots),
                                  Scheme<Policies...>, Scheme<reclaim::slots<Slots>, Policies...>>;
};
// The same for schemes with a leading variant flag (basic_crystalline<WaitFree, ...>).
template <template <bool, class...> class Scheme, bool Variant, class... Policies, unsigned Slots,
          unsigned Reservations>
  requires Scheme<Variant, Policies...>::guard::validates
struct sized<Scheme<Variant, Policies...>, Slots, Reservations> {
  using type = std::conditional_t<(Scheme<Variant, Policies...>::guard::slot_count >= Slots),
                                  Scheme<Variant, Policies...>,
                                  Scheme<Variant, reclaim::slots<Slots>, Policies...>>;
};
template <class Variant, class... Policies, unsigned Slots, unsigned Reservations>
struct sized<basic_nbr<Variant, Policies...>, Slots, Reservations> {
  using type =
      std::conditional_t<(basic_nbr<Variant, Policies...>::reservation_count >= Reservations),
                         basic_nbr<Variant, Policies...>,
                         basic_nbr<Variant, slots<Reservations>, Policies...>>;
};

}  // namespace detail

// Scheme sized for Slots hazard slots and Reservations reservations: what a container names
// inside its own definition, where it is not complete yet (lazy_skiplist).
template <class Scheme, unsigned Slots, unsigned Reservations>
using sized_to = typename detail::sized<Scheme, Slots, Reservations>::type;

template <class Scheme, class Container>
using sized_for =
    sized_to<Scheme, detail::slots_used_by<Container>, detail::reservations_used_by<Container>>;

}  // namespace reclaim
