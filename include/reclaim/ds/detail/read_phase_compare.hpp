// SPDX-License-Identifier: MIT
// A container's comparison, as its read phases call it. Under a neutralizing scheme (nbr) a signal
// may restart a read phase at any instruction, by a jump out of whatever runs: harmless for the
// container's own code, which takes no lock and allocates nothing there, but not for a user's
// comparison, which may (a jump out of malloc leaves its lock held, and the next allocation
// deadlocks). So a comparison that may run user code runs in the guard's user code window, whose
// restart waits until the comparison returns (schemes/detail/nbr_signal.hpp): two thread-local
// stores and a load around it. Arithmetic, enumeration and pointer keys compared by std::less or
// std::greater run no user code and open no window; nor does any comparison under the other
// schemes, for which this is the comparison itself.
#pragma once
#include <functional>
#include <type_traits>

#include "../../concepts.hpp"

namespace reclaim::ds::detail {

template <class Compare, class A, class B>
inline constexpr bool runs_no_user_code = [] {
  using a = std::remove_cvref_t<A>;
  using b = std::remove_cvref_t<B>;
  constexpr bool plain = std::is_scalar_v<a> && std::is_scalar_v<b>;
  return plain && (std::is_same_v<Compare, std::less<a>> || std::is_same_v<Compare, std::less<>> ||
                   std::is_same_v<Compare, std::greater<a>> ||
                   std::is_same_v<Compare, std::greater<>>);
}();

// Compare, called in the guard's user code window where it may run user code.
template <class Compare, class Guard>
class user_code_window_compare {
 public:
  user_code_window_compare(const Compare& comp) : comp_(comp) {}  // NOLINT: stands for Compare

  template <class A, class B>
  bool operator()(const A& a, const B& b) const {
    if constexpr (runs_no_user_code<Compare, A, B>) {
      return comp_(a, b);
    } else {
      Guard::enter_user_code();
      const bool less = comp_(a, b);
      Guard::leave_user_code();  // may restart the read phase, if a signal asked to
      return less;
    }
  }

 private:
  [[no_unique_address]] Compare comp_;
};

// What a container's read phases call: Compare itself, with nothing around it, unless the scheme
// neutralizes read phases.
template <class Compare, class Scheme>
using read_phase_compare =
    std::conditional_t<neutralizable_guard<typename Scheme::guard>,
                       user_code_window_compare<Compare, typename Scheme::guard>, Compare>;

}  // namespace reclaim::ds::detail
