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

template <class Compare, class Scheme>
class read_phase_compare {
 public:
  read_phase_compare(const Compare& comp) : comp_(comp) {}  // NOLINT: stands for Compare

  template <class A, class B>
  bool operator()(const A& a, const B& b) const {
    using guard = typename Scheme::guard;
    if constexpr (neutralizable_guard<guard> && !runs_no_user_code<Compare, A, B>) {
      guard::enter_user_code();
      const bool less = comp_(a, b);
      guard::leave_user_code();  // may restart the read phase, if a signal asked to
      return less;
    } else {
      return comp_(a, b);
    }
  }

 private:
  [[no_unique_address]] Compare comp_;
};

}  // namespace reclaim::ds::detail
