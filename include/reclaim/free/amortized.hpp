// SPDX-License-Identifier: MIT
// The `amortized` free policies (paper 001, section 3.3: "amortized free", AF).
//
// What it is. When a scheme has proven a batch of retired objects safe, batch_free frees the whole
// batch at once. With jemalloc or tcmalloc that is the remote-batch-free problem: thousands of frees
// in a row overflow the thread's allocator cache, and the flush back to the objects' owning arenas
// (or a global cache) takes locks that every other freeing thread contends on; single free calls
// then take milliseconds. AF instead splices the safe batch onto a per-thread *freeable* list (O(1),
// no frees) and frees a few objects at the start of every operation, so that freed objects land in
// the thread's own allocator cache and are reallocated locally.
//
//   amortized_free<K>  frees K objects per operation (K = 1 as in the paper, whose ABtree frees at
//                      most about one object per operation).
//   adaptive_free      tunes K itself between 1 and 64 (adaptive_free_between<Min, Max> for other
//                      bounds): see adaptive_rate below for the rule and why it converges.
//
// When to use it. With jemalloc or tcmalloc, for schemes that free in batches (debra, hp, ...). With
// mimalloc, whose per-page free lists make remote frees cheap, AF brings nothing and costs a little
// (paper 001, table 3). A fixed K must be at least the number of objects retired per operation, or
// the freeable list grows without bound; adaptive_free needs no tuning as long as that rate is at
// most Max.
//
// What it costs. Garbage stays allocated a little longer (the freeable list is garbage the scheme
// already proved safe), and stats().pending counts it until it is freed. The per-operation cost is a
// test of the list when it is empty and K pops and frees otherwise. Time spent freeing
// (stats().free_ns) is estimated by sampling: one freeing operation in `timing_period` is timed and
// counted `timing_period` times, because reading the clock around every free would cost as much as
// the free itself. drain() (thread exit, domain destruction) is timed in full. The longest pause
// (stats().longest_pause_ns) is the longest of the timed steps, a sample of one step in
// `timing_period`, and of the drains.
//
// Token-EBR's periodic variant (paper 001, section 4) checks for the token between frees of a large
// batch; with AF there is no large batch to interrupt: a thread frees at most K objects before its
// next operation, where the scheme checks for the token anyway.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "../core/retired.hpp"
#include "../core/stats.hpp"
#include "../core/timeline.hpp"
#include "batch.hpp"

namespace reclaim {

namespace detail {

// A fixed number of frees per operation.
template <unsigned K>
struct fixed_rate {
  static constexpr unsigned min_k = K;
  static constexpr unsigned max_k = K;
  unsigned per_operation() const noexcept { return K; }
  void on_operation(bool /*list_nonempty*/) noexcept {}
  void on_emptied() noexcept {}
  void on_release(std::size_t /*leftover*/) noexcept {}
  void reset() noexcept {}
};

// The adaptive rule. K is Min times a power of two, in [Min, Max]; it changes only when a new
// safe batch arrives (release), looking at the period since the previous release:
//   - the previous list was not emptied in time (leftover > 0): K doubles;
//   - it was emptied within the first half of the period (it needed at most P/2 of the P operations
//     between the two releases): K halves;
//   - otherwise K stays.
// Why it converges. Suppose each period brings a batch of B objects over P operations, so the retire
// rate is r = B/P per operation. A batch needs B/K operations to free. K doubles while B/K > P, i.e.
// K < r, and halves while B/K <= P/2, i.e. K >= 2r. So K moves towards the band [r, 2r) and stays
// there, and that band holds exactly one such value: no oscillation at a constant rate. It gets
// there within log2(Max/Min) periods. Once K >= r every batch is freed before the next one arrives,
// so the freeable list holds at most one batch (B) plus what was left at the last doubling; while
// converging it holds at most a batch more per period, a few batches in all. If r > Max the list
// grows by B (1 - Max/r) per period: raise Max for such a structure.
// Noise (debra's periods vary in length) may move K by one step and back; each step is one factor of
// two, so K stays within [r/2, 4r) and the list within a few batches.
template <unsigned Min, unsigned Max>
struct adaptive_rate {
  static_assert(Min >= 1 && Min <= Max, "adaptive_free_between<Min, Max> needs 1 <= Min <= Max");
  static constexpr unsigned min_k = Min;
  static constexpr unsigned max_k = Max;

  unsigned per_operation() const noexcept { return k; }
  // Every operation counts towards the period; the ones before the list emptied are the cost.
  void on_operation(bool /*list_nonempty*/) noexcept { ++ops_in_period; }
  void on_emptied() noexcept {
    if (ops_to_empty == not_emptied) ops_to_empty = ops_in_period;
  }
  void on_release(std::size_t leftover) noexcept {
    if (leftover > 0) {
      k = k * 2 > Max ? Max : k * 2;
    } else if (ops_to_empty != not_emptied && ops_to_empty * 2 <= ops_in_period) {
      k = k / 2 < Min ? Min : k / 2;
    }
    ops_in_period = 0;
    ops_to_empty = not_emptied;
  }
  void reset() noexcept {
    k = Min;
    ops_in_period = 0;
    ops_to_empty = not_emptied;
  }

  static constexpr std::uint64_t not_emptied = ~std::uint64_t{0};
  unsigned k = Min;
  std::uint64_t ops_in_period = 0;
  std::uint64_t ops_to_empty = not_emptied;
};

// The per-thread part shared by both policies: the freeable list and the rate.
template <class Rate>
class amortized_local {
 public:
  // One freeing operation in timing_period is timed, and its time counted timing_period times.
  static constexpr unsigned timing_period = 8;

  // The scheme proved `safe` free to reclaim: keep it for later, free nothing now.
  template <class Ctx>
  void release(core::retired_list&& safe, Ctx&) noexcept {
    if (safe.empty()) return;
    rate_.on_release(freeable_.size());
    // First in, first out, batch by batch: the new batch goes behind what is already waiting (the
    // old list is spliced in front of it). Pushed in front, it would starve the older nodes
    // whenever K matches the retire rate.
    safe.splice(std::move(freeable_));
    freeable_ = std::move(safe);
  }

  // At the start of every operation: free up to K objects.
  template <class Ctx>
  void on_operation(Ctx& ctx) noexcept {
    rate_.on_operation(!freeable_.empty());
    if (freeable_.empty()) return;
    free_some(ctx);
  }

  // Thread exit or domain destruction: free everything, timed in full.
  template <class Ctx>
  void drain(Ctx& ctx) noexcept {
    if (!freeable_.empty()) {
      core::free_timer timer(ctx.ctr);
      ctx.count_freed(timeline::free_all(freeable_));  // one batch_free event while recording
    }
    rate_.reset();
  }

  // A barrier takes the freeable list (from the owner, or from a borrowed record) to free it now.
  core::retired_list take() noexcept { return std::move(freeable_); }

  // For tests and observers on the owning thread.
  std::size_t freeable() const noexcept { return freeable_.size(); }
  std::size_t held() const noexcept { return freeable_.size(); }
  unsigned per_operation() const noexcept { return rate_.per_operation(); }

 private:
  template <class Ctx>
  [[gnu::noinline]] void free_some(Ctx& ctx) noexcept {
    unsigned k = rate_.per_operation();
    if (++timing_tick_ >= timing_period) {
      timing_tick_ = 0;
      auto start = std::chrono::steady_clock::now();
      std::size_t n = free_up_to(k);
      auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now() - start);
      core::counters::add(ctx.ctr.free_ns, static_cast<std::uint64_t>(ns.count()) * timing_period);
      ctx.ctr.paused(static_cast<std::uint64_t>(ns.count()));  // the longest of the timed steps
      ctx.count_freed(n);
    } else {
      ctx.count_freed(free_up_to(k));
    }
    if (freeable_.empty()) rate_.on_emptied();
  }

  // One test of the timeline recorder per call: recording, each free is timed and a slow one
  // becomes a slow_free event (timeline::free_one).
  std::size_t free_up_to(unsigned k) noexcept {
    if (timeline::recording()) [[unlikely]]
      return free_up_to(k, timeline::free_one);
    return free_up_to(k, [](core::retired_hook* node) { node->destroy(node); });
  }
  template <class Free>
  std::size_t free_up_to(unsigned k, Free free) noexcept {
    std::size_t n = 0;
    for (; n < k; ++n) {
      core::retired_hook* node = freeable_.pop();
      if (!node) break;
      free(node);
    }
    return n;
  }

  core::retired_list freeable_;
  Rate rate_;
  unsigned timing_tick_ = timing_period - 1;  // the first freeing operation is timed
};

}  // namespace detail

// amortized_free<K>: free K objects of the safe garbage per operation (paper 001's AF; K = 1 there).
template <unsigned K = 1>
struct amortized_free {
  static_assert(K >= 1, "amortized_free<K> frees at least one object per operation");
  using policy_kind = free_policy_kind;
  // Not bounded: a container that retires more than K nodes per operation grows the freeable list
  // without bound.
  static constexpr bool bounded = false;
  static constexpr bool keeps_safe_garbage = true;
  static constexpr unsigned per_operation = K;
  using local = detail::amortized_local<detail::fixed_rate<K>>;
};

// adaptive_free_between<Min, Max>: amortized freeing whose K follows the retire rate (see
// detail::adaptive_rate for the rule). adaptive_free is the usual bounds, 1 to 64.
template <unsigned Min, unsigned Max>
struct adaptive_free_between {
  using policy_kind = free_policy_kind;
  // Not bounded: a retire rate above Max grows the freeable list without bound.
  static constexpr bool bounded = false;
  static constexpr bool keeps_safe_garbage = true;
  static constexpr unsigned min_per_operation = Min;
  static constexpr unsigned max_per_operation = Max;
  using local = detail::amortized_local<detail::adaptive_rate<Min, Max>>;
};
using adaptive_free = adaptive_free_between<1, 64>;

}  // namespace reclaim
