// SPDX-License-Identifier: MIT
// What every scheme reports, and the per-thread counters behind it.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <utility>
#include "sync.hpp"

namespace reclaim {

// A snapshot of a domain's reclamation state. Counters a scheme has no use for stay zero.
struct stats {
  std::uint64_t retired = 0;       // objects handed to retire()
  std::uint64_t freed = 0;         // objects destroyed so far
  std::uint64_t pending = 0;       // retired - freed: garbage right now
  std::uint64_t pending_peak = 0;  // highest `pending` seen (within threads x flush_interval)
  std::uint64_t epochs = 0;        // epoch advances or grace periods completed
  std::uint64_t scans = 0;         // hazard scans / reclamation passes
  std::uint64_t signals = 0;       // signals sent (neutralization, pings)
  // Scans that did not get every ping answered in time (a thread blocks the signal, takes it with
  // sigwait() or a signalfd, or has not run) and used a process-wide barrier instead (hazard_pop,
  // epoch_pop: core/ping.hpp).
  std::uint64_t fallbacks = 0;
  std::uint64_t free_ns = 0;       // time spent in free calls, nanoseconds
  // Time spent deciding what is safe to free (scans of hazards or announcements, epoch advance
  // attempts, walks of stamped lists), nanoseconds, estimated by sampling (core::scan_timer).
  // (free_ns + scan_ns) / freed is a scheme's reclamation cost per node.
  std::uint64_t scan_ns = 0;
  // Double-width compare-and-swaps (`lock cmpxchg16b` on x86-64, a locked instruction that costs
  // about twice a single-width one) on the 16-byte words of hyaline's shared slots and
  // crystalline's reservations, snapshot reads of those words included (each is one). Divided by
  // the operations: their cost per operation.
  std::uint64_t wide_cas = 0;
  std::uint64_t wide_cas_failed = 0;  // of those, the ones whose comparison failed
  std::uint64_t threads = 0;       // thread records in use now
  std::uint64_t records = 0;       // thread records ever created (reused after threads exit)
  // The longest single reclamation pause of any thread, nanoseconds (wall time): one batch freed
  // at once, one amortized step (of those timed, see free/amortized.hpp), one drain. A maximum,
  // not a sum: the difference of two snapshots means nothing.
  std::uint64_t longest_pause_ns = 0;
};

namespace core {

// Per-thread counters. Each is written by its owner only, so an increment is a relaxed load and
// store, not a locked RMW; stats() reads them from any thread (relaxed: a snapshot, not a barrier).
struct counters {
  core::atomic<std::uint64_t> retired{0}, freed{0}, epochs{0}, scans{0}, signals{0}, fallbacks{0},
      free_ns{0}, scan_ns{0}, wide_cas{0}, wide_cas_failed{0};
  core::atomic<std::uint64_t> longest_pause_ns{0};
  // Owner only: the calls since the last timed one (sampled_timer), of scans and of single frees.
  unsigned scans_untimed = 0, frees_untimed = 0;

  static void add(core::atomic<std::uint64_t>& c, std::uint64_t n) noexcept {
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  // A double-width compare-and-swap on `word` (core::atomic_pair, platform/dwcas.hpp), counted;
  // the owner's only, as every counter here.
  template <class Pair, class Value>
  bool cas_wide(Pair& word, Value& expected, const Value& desired) noexcept {
    add(wide_cas, 1);
    if (word.compare_exchange(expected, desired)) return true;
    add(wide_cas_failed, 1);
    return false;
  }
  // A snapshot read of such a word: one compare-and-swap that changes nothing.
  template <class Pair>
  auto load_wide(const Pair& word) noexcept {
    add(wide_cas, 1);
    return word.load();
  }
  // Replaces such a word: a snapshot read, then compare-and-swaps until one holds.
  template <class Pair, class Value>
  void store_wide(Pair& word, const Value& desired) noexcept {
    Value seen = load_wide(word);
    while (!cas_wide(word, seen, desired)) {
    }
  }
  // A pause of `ns`: the longest one so far is kept.
  void paused(std::uint64_t ns) noexcept {
    if (ns > longest_pause_ns.load(std::memory_order_relaxed))
      longest_pause_ns.store(ns, std::memory_order_relaxed);
  }

  void add_to(stats& s) const noexcept {
    s.retired += retired.load(std::memory_order_relaxed);
    s.freed += freed.load(std::memory_order_relaxed);
    s.epochs += epochs.load(std::memory_order_relaxed);
    s.scans += scans.load(std::memory_order_relaxed);
    s.signals += signals.load(std::memory_order_relaxed);
    s.fallbacks += fallbacks.load(std::memory_order_relaxed);
    s.free_ns += free_ns.load(std::memory_order_relaxed);
    s.scan_ns += scan_ns.load(std::memory_order_relaxed);
    s.wide_cas += wide_cas.load(std::memory_order_relaxed);
    s.wide_cas_failed += wide_cas_failed.load(std::memory_order_relaxed);
    s.longest_pause_ns =
        std::max(s.longest_pause_ns, longest_pause_ns.load(std::memory_order_relaxed));
  }
};

// The domain-wide count of pending garbage and its peak. Threads keep a local delta and flush it
// here when it reaches flush_interval either way (net retires or net frees) and after each batch
// the scheme proves safe, so the hot path touches no shared line; the peak is exact to within
// (threads x flush_interval). Flushing on frees matters for amortized free policies, which free
// between the scheme's flush points: a thread that frees its freeable list without retiring would
// otherwise leave its whole list counted in the gauge while other threads' flushes set the peak.
class pending_gauge {
 public:
  static constexpr std::int64_t flush_interval = 64;

  class local {
   public:
    void retired(pending_gauge& g) noexcept {
      if (++delta_ >= flush_interval) flush(g);
    }
    // Frees flush to the gauge of the last flush (a record belongs to one domain). Before the
    // first flush there is none to flush to; the flush that follows every safe batch
    // (thread_record::release_safe) catches up.
    void freed(std::uint64_t n) noexcept {
      delta_ -= static_cast<std::int64_t>(n);
      if (delta_ <= -flush_interval && gauge_) flush(*gauge_);
    }
    void flush(pending_gauge& g) noexcept {
      gauge_ = &g;
      if (delta_ != 0) g.add(std::exchange(delta_, 0));
    }

   private:
    std::int64_t delta_ = 0;
    pending_gauge* gauge_ = nullptr;
  };

  std::uint64_t peak() const noexcept {
    return static_cast<std::uint64_t>(peak_.load(std::memory_order_relaxed));
  }

 private:
  void add(std::int64_t delta) noexcept {
    std::int64_t now = pending_.fetch_add(delta, std::memory_order_relaxed) + delta;
    std::int64_t peak = peak_.load(std::memory_order_relaxed);
    while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
  }

  core::atomic<std::int64_t> pending_{0};
  core::atomic<std::int64_t> peak_{0};
};

// Measures the wall time of a block of frees into counters::free_ns; the block is one pause
// (counters::longest_pause_ns).
class free_timer {
 public:
  explicit free_timer(counters& c) noexcept : c_(c), start_(std::chrono::steady_clock::now()) {}
  ~free_timer() {
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                   start_);
    counters::add(c_.free_ns, static_cast<std::uint64_t>(ns.count()));
    c_.paused(static_cast<std::uint64_t>(ns.count()));
  }
  free_timer(const free_timer&) = delete;
  free_timer& operator=(const free_timer&) = delete;

 private:
  counters& c_;
  std::chrono::steady_clock::time_point start_;
};

// Measures the wall time of a block that runs often and briefly into a counter: one run in
// `period` is timed and counted `period` times, an estimate of the total that is unbiased when the
// runs do not follow a pattern of the period's length, where two clock reads on every run would
// cost more than the run. The period is prime, so that kinds of runs that alternate (nbr's signal
// round and its scan) are each timed in turn. `untimed` is the record's count of runs since the
// last timed one (scans and single frees keep one each). Owner only.
class sampled_timer {
 public:
  static constexpr unsigned period = 17;

  sampled_timer(core::atomic<std::uint64_t>& into, unsigned& untimed) noexcept
      : into_(into), timed_(++untimed == period) {
    if (timed_) {
      untimed = 0;
      start_ = std::chrono::steady_clock::now();
    }
  }
  ~sampled_timer() {
    if (!timed_) return;
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                   start_);
    counters::add(into_, period * static_cast<std::uint64_t>(ns.count()));
  }
  sampled_timer(const sampled_timer&) = delete;
  sampled_timer& operator=(const sampled_timer&) = delete;

 private:
  core::atomic<std::uint64_t>& into_;
  bool timed_;
  std::chrono::steady_clock::time_point start_{};
};

// A reclamation pass that decides what is safe to free (a scan of hazards or announcements, an
// epoch advance attempt, a walk of stamped lists), into counters::scan_ns. Some schemes run one on
// every operation (ebr<advance_every<1>> tries to advance on every entry): sampled.
class scan_timer : public sampled_timer {
 public:
  explicit scan_timer(counters& c) noexcept : sampled_timer(c.scan_ns, c.scans_untimed) {}
};

}  // namespace core
}  // namespace reclaim
