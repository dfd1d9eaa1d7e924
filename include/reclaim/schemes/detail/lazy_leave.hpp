// SPDX-License-Identifier: MIT
// Lazy leave's word (crystalline.hpp, hyaline.hpp): an operation's end may leave published what
// the thread's next operation would publish again (Crystalline's empty reservations, Hyaline's
// count in a shared slot), so that the next start costs one single-width CAS on the thread's own
// record instead of a double-width one on shared state. What is left published holds garbage
// like an operation that runs, so other threads release it on the owner's behalf (revoke) while
// the owner is between operations; this word says which of them may touch it.
//
// The owner is inside an operation, or between two with something left published (kept) or
// nothing (idle); or another thread is releasing what it kept (revoking). The steps and what
// synchronizes with what:
//   end(keep)      the owner, at an outermost end: a release store of kept or idle. Pairs with
//                  revoke()'s acquire CAS: the owner's record as it left it (its slots, handle)
//                  happens before the revoker reads it.
//   revoke(f)      another thread: kept -> revoking by an acquire CAS, f() releases on the
//                  owner's behalf, then a release store of idle. Pairs with resume()'s CAS, which
//                  reads it: the revoker's writes to the record happen before the owner's next
//                  operation reads them.
//   resume()       the owner, at an outermost start: a seq_cst CAS to inside, waiting while a
//                  revoker works. Whichever of resume()'s and revoke()'s CASes comes first in the
//                  word's modification order wins: the revoker finds the owner inside and leaves
//                  what it kept, or the owner waits for idle and publishes afresh. The CAS is a
//                  locked instruction, a full fence on x86-64; the scheme follows it with
//                  core::fence_after_rmw() where its start needs a fence (the one that
//                  synchronize() relies on, since a resumed operation makes no other RMW).
#pragma once
#include <cstdint>

#include "../../core/sync.hpp"

namespace reclaim::detail {

class lazy_leave {
 public:
  enum state : std::uint32_t { inside, kept, idle, revoking };

  // The start of an outermost operation (owner): what the word said before, kept or idle. A
  // scheme's model-checker fault may pass notice_revoker = false (then revoking may be returned).
  // This and end() are inlined into the operation's start and end, which they are most of (left
  // to GCC, crystalline_w's hash-map operation took 8 instructions more).
  [[gnu::always_inline]] state resume(bool notice_revoker = true) noexcept {
    std::uint32_t w = word_.load(std::memory_order_relaxed);
    for (;;) {
      if (w == revoking && notice_revoker) [[unlikely]] {
        core::yield_now();
        w = word_.load(std::memory_order_relaxed);
      } else if (word_.compare_exchange_weak(w, inside, std::memory_order_seq_cst,
                                             std::memory_order_relaxed)) {
        return static_cast<state>(w);
      }
    }
  }
  // The end of an outermost operation (owner).
  [[gnu::always_inline]] void end(bool keep) noexcept {
    word_.store(keep ? kept : idle, std::memory_order_release);
  }
  // The owner outside any operation, after resume() (it released what it kept, or exits).
  void settle_idle() noexcept { word_.store(idle, std::memory_order_relaxed); }

  // Runs release() on the owner's behalf if the owner is between operations with something kept;
  // false (nothing run) otherwise.
  template <class Release>
  bool revoke(Release release) noexcept {
    if (!begin_revoke()) return false;
    release();
    word_.store(idle, std::memory_order_release);
    return true;
  }
  // revoke()'s first step alone (a test cuts a revocation there, as fork() may).
  bool begin_revoke() noexcept {
    std::uint32_t w = kept;
    return word_.load(std::memory_order_relaxed) == kept &&
           word_.compare_exchange_strong(w, revoking, std::memory_order_acquire,
                                         std::memory_order_relaxed);
  }

  // In a child of fork(), single-threaded: whether a revoker (a thread gone there) stopped
  // half-way, and the state the scheme settles it in.
  bool revocation_cut() const noexcept {
    return word_.load(std::memory_order_relaxed) == revoking;
  }
  void settle_after_fork(bool keep) noexcept {
    word_.store(keep ? kept : idle, std::memory_order_relaxed);
  }

 private:
  core::atomic<std::uint32_t> word_{idle};
};

}  // namespace reclaim::detail
