// SPDX-License-Identifier: MIT
// A test-and-test-and-set lock for per-node locks, which yields the processor after a short spin:
// with more threads than cores (oversubscription) the holder may be descheduled, and spinning
// through our whole time slice would only delay it.
#pragma once
#include <atomic>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include "../../core/sync.hpp"
#define RECLAIM_CPU_RELAX() _mm_pause()
#else
#define RECLAIM_CPU_RELAX() ((void)0)
#endif

namespace reclaim::ds::detail {

class spinlock {
 public:
  void lock() noexcept {
    for (unsigned spins = 0;; ++spins) {
      // acquire: pairs with the release in unlock(); the critical section sees the last holder's.
      if (!locked_.load(std::memory_order_relaxed) &&
          !locked_.exchange(true, std::memory_order_acquire))
        return;
      if (spins < 64)
        RECLAIM_CPU_RELAX();
      else
        core::yield_now();
    }
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  core::atomic<bool> locked_{false};
};

// Holds two node locks taken in list order (predecessor first), which is what keeps the lazy list
// deadlock-free.
class ordered_lock_pair {
 public:
  ordered_lock_pair(spinlock& first, spinlock& second) noexcept : first_(first), second_(second) {
    first_.lock();
    second_.lock();
  }
  ~ordered_lock_pair() {
    second_.unlock();
    first_.unlock();
  }
  ordered_lock_pair(const ordered_lock_pair&) = delete;
  ordered_lock_pair& operator=(const ordered_lock_pair&) = delete;

 private:
  spinlock& first_;
  spinlock& second_;
};

}  // namespace reclaim::ds::detail
