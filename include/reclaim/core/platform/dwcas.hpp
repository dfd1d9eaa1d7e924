// SPDX-License-Identifier: MIT
// A pair of 64-bit words changed together by one double-width compare-and-swap: what Hyaline's slot
// heads, Crystalline's and WFE's reservations and WFE's help results need.
//
// Lock-free by construction: on x86-64 it is `lock cmpxchg16b`, on AArch64 an exclusive pair
// (ldaxp / stlxp), both written out here rather than left to std::atomic<16 bytes>, which GCC
// compiles into calls to libatomic (a lock-free cmpxchg16b there only where the CPU has it, and
// is_lock_free() answers false). Every x86-64 CPU since the first Core 2 and Opteron Rev F has
// cmpxchg16b; a CPU without it faults on the first use. Under ThreadSanitizer the same operations
// go through the compiler's 16-byte __atomic builtins, which TSan models (build with -mcx16, as the
// tsan preset does): inline assembly would hide the synchronization from it. Other architectures
// fail to compile, with the reason. The model checker's build (core/sync.hpp) has its own.
#pragma once
#include <atomic>
#include <cstdint>

#include "../sync.hpp"

#if !defined(__x86_64__) && !defined(__aarch64__)
#error "reclaim: this scheme needs a double-width compare-and-swap, implemented for x86-64 " \
       "(cmpxchg16b) and AArch64 (ldaxp/stlxp) only; use a scheme of another family"
#endif

namespace reclaim::core {

// Two words, compared and replaced as one.
struct word_pair {
  std::uint64_t lo = 0;
  std::uint64_t hi = 0;
  friend bool operator==(const word_pair&, const word_pair&) = default;
};

// Every operation is sequentially consistent (a locked instruction on x86-64; acquire-release
// exclusives on AArch64, which with the barrier below order as seq_cst RMWs do).
#if defined(RECLAIM_VERIFY)
// The model checker's (core/sync.hpp): one checked atomic of the pair, each operation a seq_cst
// read-modify-write followed by a seq_cst fence, as the instructions below are full barriers
// (lock cmpxchg16b; ldaxp/stlxp and dmb ish), which the schemes that use it rely on.
class atomic_pair {
 public:
  atomic_pair() noexcept = default;
  explicit atomic_pair(word_pair initial) noexcept : pair_(initial) {}
  bool compare_exchange(word_pair& expected, word_pair desired) noexcept {
    const bool done = pair_.compare_exchange_strong(expected, desired, std::memory_order_seq_cst);
    core::thread_fence(std::memory_order_seq_cst);
    return done;
  }
  word_pair load() const noexcept {
    const word_pair seen = pair_.load(std::memory_order_seq_cst);
    core::thread_fence(std::memory_order_seq_cst);
    return seen;
  }
  std::uint64_t peek_lo() const noexcept { return pair_.load(std::memory_order_relaxed).lo; }
  std::uint64_t peek_hi() const noexcept { return pair_.load(std::memory_order_relaxed).hi; }
  void store(word_pair desired) noexcept {
    pair_.exchange(desired, std::memory_order_seq_cst);
    core::thread_fence(std::memory_order_seq_cst);
  }

 private:
  core::atomic<word_pair> pair_;
};
#else
class alignas(16) atomic_pair {
 public:
  constexpr atomic_pair() noexcept = default;
  constexpr explicit atomic_pair(word_pair initial) noexcept : lo_(initial.lo), hi_(initial.hi) {}
  atomic_pair(const atomic_pair&) = delete;
  atomic_pair& operator=(const atomic_pair&) = delete;

  // Replaces the pair with `desired` if it equals `expected` and returns true; otherwise stores
  // what it holds in `expected` and returns false. Either way the read is one atomic snapshot.
  bool compare_exchange(word_pair& expected, word_pair desired) noexcept {
#if defined(__SANITIZE_THREAD__)
    uint128 e = join(expected);
    const bool ok = __atomic_compare_exchange_n(as_int128(), &e, join(desired), false,
                                                __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    expected = split(e);
    return ok;
#elif defined(__x86_64__)
    bool ok;
    asm volatile("lock cmpxchg16b %1"
                 : "=@ccz"(ok), "+m"(*this), "+a"(expected.lo), "+d"(expected.hi)
                 : "b"(desired.lo), "c"(desired.hi)
                 : "memory");
    return ok;
#else  // AArch64: a single-copy atomic pair read is guaranteed only when the store-exclusive that
       // follows succeeds, so a failed comparison writes back what it read to confirm it.
    std::uint64_t lo, hi;
    std::uint32_t failed;
    bool ok;
    do {
      asm volatile("ldaxp %0, %1, %2" : "=&r"(lo), "=&r"(hi) : "Q"(*this) : "memory");
      ok = lo == expected.lo && hi == expected.hi;
      const word_pair put = ok ? desired : word_pair{lo, hi};
      asm volatile("stlxp %w0, %2, %3, %1"
                   : "=&r"(failed), "=Q"(*this)
                   : "r"(put.lo), "r"(put.hi)
                   : "memory");
    } while (failed);
    asm volatile("dmb ish" ::: "memory");
    if (!ok) expected = {lo, hi};
    return ok;
#endif
  }

  // An atomic snapshot of the pair (a compare-and-swap that changes nothing: it writes the line).
  word_pair load() const noexcept {
    word_pair seen{};
    const_cast<atomic_pair*>(this)->compare_exchange(seen, seen);
    return seen;
  }

  // The low (high) word alone, by an 8-byte atomic load (one plain load): a hint for a caller that
  // tolerates a stale value, neither ordered nor a snapshot of the pair.
  std::uint64_t peek_lo() const noexcept { return __atomic_load_n(&lo_, __ATOMIC_RELAXED); }
  std::uint64_t peek_hi() const noexcept { return __atomic_load_n(&hi_, __ATOMIC_RELAXED); }

  // Replaces the pair (a compare-and-swap loop).
  void store(word_pair desired) noexcept {
    word_pair seen = load();
    while (!compare_exchange(seen, desired)) {
    }
  }

 private:
#if defined(__SANITIZE_THREAD__)
  __extension__ typedef unsigned __int128 uint128;  // a GCC extension: no -Wpedantic warning
  uint128* as_int128() noexcept { return reinterpret_cast<uint128*>(this); }
  static uint128 join(word_pair p) noexcept { return (static_cast<uint128>(p.hi) << 64) | p.lo; }
  static word_pair split(uint128 v) noexcept {
    return {static_cast<std::uint64_t>(v), static_cast<std::uint64_t>(v >> 64)};
  }
#endif
  std::uint64_t lo_ = 0;
  std::uint64_t hi_ = 0;
};
#endif

}  // namespace reclaim::core
