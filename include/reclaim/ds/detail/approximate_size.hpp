// SPDX-License-Identifier: MIT
// The element count behind every container's size(): a number any thread may read at any time,
// while other threads insert and erase, exact when no operation runs.
//
// What it is. A signed count split over `stripes` cache lines (1 KiB per container); a successful
// insert adds one and a successful erase subtracts one, on the calling thread's stripe; read() sums
// the stripes. Stripes 1 to 7 each belong to one live thread at a time, process-wide (the first 7
// threads to update any container, a stripe going back when its thread exits), and their owner
// updates them with a plain load and store: no RMW (a lock-prefixed add is some 20 cycles even
// uncontended). Every other thread shares stripe 0, updated with a relaxed RMW. The lab measured
// the whole count at 1 to 3% of hm_hashmap's throughput (20K keys, 50% inserts, 50% erases, one
// thread; about the run-to-run noise of that machine). A thread's erase may land on another stripe
// than the insert of the same key, so a stripe may be negative: only the sum means anything.
//
// What it promises (docs/writing-a-container.md, "size()"). Not linearizable: the count changes
// just after each operation's linearization point, and read() loads the stripes one after the
// other. When nothing runs, read() is the number of elements. While operations run, read() differs
// from the number of elements at any instant of the call by at most the number of successful
// inserts and erases that overlap the call; it is never negative (a sum below zero, an erase
// counted before the insert it undid, reads as 0).
//
// Why not one counter: with two threads and more, every update would move one cache line between
// cores (folly's and crossbeam's approximate sizes stripe or shard theirs for the same reason).
#pragma once
#include <pthread.h>

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "../../core/padding.hpp"
#include "../../core/platform/thread_exit.hpp"
#include "../../core/sync.hpp"

namespace reclaim::ds::detail {

// This thread's stripe plus one (0: none yet). Process-wide, like the owners below: a thread owns
// the same stripe number in every container.
RECLAIM_THREAD_LOCAL(unsigned, size_stripe_of_thread, 0u);
// Bit i: stripe i (1 to 7) has a live owner. Process-wide bookkeeping outside every protocol the
// models check, hence std's atomic (core/sync.hpp). In a child of fork() the stripes of the
// parent's other threads stay taken: the child's threads share stripe 0 sooner, counting as exactly.
inline std::atomic<std::uint32_t> size_stripes_owned{0};

// Thread exit (after its thread_local destructors): the stripe goes back. release: pairs with the
// acquire CAS of its next owner, whose plain updates then follow ours.
inline void release_size_stripe(void* stripe) noexcept {
  size_stripe_of_thread = 0;  // a container used after this (another key's destructor) claims again
  const auto i = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(stripe));
  size_stripes_owned.fetch_and(~(std::uint32_t{1} << i), std::memory_order_release);
}

// The first update of this thread: a free stripe of its own if one is left, else the shared one.
[[gnu::noinline]] inline unsigned claim_size_stripe() noexcept {
  static const pthread_key_t exit_key = core::new_thread_exit_key(&release_size_stripe);
  constexpr std::uint32_t own_stripes = 0xFEu;  // 1 to 7
  std::uint32_t owned = size_stripes_owned.load(std::memory_order_relaxed);
  for (;;) {
    const std::uint32_t free = own_stripes & ~owned;
    if (free == 0) return size_stripe_of_thread = 1;  // stripe 0, for good
    const auto i = static_cast<unsigned>(std::countr_zero(free));
    // acquire: pairs with the release in release_size_stripe() of its last owner.
    if (size_stripes_owned.compare_exchange_weak(owned, owned | (std::uint32_t{1} << i),
                                                 std::memory_order_acquire,
                                                 std::memory_order_relaxed)) {
      // Non-null (i >= 1), so the key's destructor runs. If it cannot be set, the stripe stays
      // taken after the thread exits: the threads after it share stripe 0, counting as exactly.
      (void)pthread_setspecific(exit_key, reinterpret_cast<void*>(std::uintptr_t{i}));
      return size_stripe_of_thread = i + 1;
    }
  }
}

class approximate_size {
 public:
  static constexpr unsigned stripes = 8;

  // Always inlined: a call costs as much as the update (GCC 12 kept it out of line).
  [[gnu::always_inline]] void add(std::int64_t delta) noexcept {
    unsigned s = size_stripe_of_thread;
    if (s == 0) [[unlikely]]
      s = claim_size_stripe();
    core::atomic<std::int64_t>& n = stripes_[s - 1].n;
    // relaxed: the count orders nothing. An owned stripe has one writer, so a load and a store
    // lose nothing; the shared one needs the RMW.
    if (s != 1)
      n.store(n.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
    else
      n.fetch_add(delta, std::memory_order_relaxed);
  }
  // The sum of the stripes, each loaded once (relaxed: see add()).
  std::size_t read() const noexcept {
    std::int64_t sum = 0;
    for (const stripe& s : stripes_) sum += s.n.load(std::memory_order_relaxed);
    return sum > 0 ? static_cast<std::size_t>(sum) : 0;
  }

 private:
  struct alignas(core::cache_line) stripe {
    core::atomic<std::int64_t> n{0};
  };
  stripe stripes_[stripes];
};

}  // namespace reclaim::ds::detail
