// SPDX-License-Identifier: MIT
// What every container does around its operations and at its destruction, beside the scheme.
//
// Destruction. A container's destructor frees its remaining nodes at once, so no operation on it
// may still run: one that does (a visit() callback still running on another thread, a pop that
// has not returned) would read freed memory. Debug builds count the operations in flight and stop
// with a message when the container is destroyed under one, as they do for a domain destroyed
// under a guard. Release builds keep nothing. Then the scheme is told that the container's
// sources (the atomic pointers its protections read from) are going away: schemes whose helpers
// read other threads' sources (wfe, crystalline_w) wait until no helper can still read one
// (core::domain_base::wait_for_source_readers).
#pragma once
#include <atomic>
#include <cassert>

#include "../../core/platform/fork.hpp"
#include "../../core/sync.hpp"

namespace reclaim::ds::detail {

// A domain that is not a core::domain_base (a scheme of the user's own) may not have it.
template <class Domain>
void wait_for_source_readers(Domain& domain) noexcept {
  if constexpr (requires { domain.wait_for_source_readers(); }) domain.wait_for_source_readers();
}

#ifndef NDEBUG
class lifetime_check {
 public:
  // Held for the length of one public operation. Made before the operation's guard, so that it
  // ends after the guard has ended any read phase: under nbr a restart jumps back into the read
  // phase from wherever a signal finds it, and would run a destructor inside it twice.
  class operation {
   public:
    explicit operation(lifetime_check& c) noexcept : c_(c) {
      // relaxed: a count for a diagnostic, not a synchronization (under ThreadSanitizer an
      // ordered RMW here would order every operation after every other and hide their races).
      c_.in_flight_.fetch_add(1, std::memory_order_relaxed);
    }
    ~operation() { c_.in_flight_.fetch_sub(1, std::memory_order_relaxed); }
    operation(const operation&) = delete;
    operation& operator=(const operation&) = delete;

   private:
    lifetime_check& c_;
  };

  // (In a child of fork(), operations that other threads of the parent had under way never end:
  // not counted against it.)
  template <class Domain>
  void before_destruction(Domain& domain) const noexcept {
    assert((in_flight_.load(std::memory_order_relaxed) == 0 ||
            core::forks_passed.load(std::memory_order_relaxed) != forks_at_start_) &&
           "reclaim: container destroyed while one of its operations is still running (on another "
           "thread, or the callback of its own visit()); end every operation first");
    wait_for_source_readers(domain);
  }

 private:
  core::atomic<long> in_flight_{0};
  unsigned forks_at_start_ = core::forks_passed.load(std::memory_order_relaxed);
};
#else
class lifetime_check {
 public:
  struct operation {
    explicit operation(lifetime_check&) noexcept {}
  };
  template <class Domain>
  void before_destruction(Domain& domain) const noexcept {
    wait_for_source_readers(domain);
  }
};
#endif

}  // namespace reclaim::ds::detail
