// The per-thread state every scheme keeps beside its own: counters, the local share of the pending
// gauge, and the free policy's per-thread part.
#pragma once
#include <algorithm>

#include "registry.hpp"
#include "retired.hpp"
#include "stats.hpp"
#include "timeline.hpp"

namespace reclaim::core {

// A scheme's record derives from this. The fields here are written by the owning thread only; the
// scheme puts the fields other threads read (announcements, hazard slots) in its own record, and
// this block starts on its own cache line so the owner's writes do not disturb those readers.
template <class FreePolicy>
struct thread_record : record_base {
  // Batches of garbage the record hands over when its thread exits (orphanage::give); a scheme
  // with more lists than one says so.
  static constexpr unsigned orphan_batches = 1;

  alignas(cache_line) counters ctr;
  pending_gauge::local pending;
  typename FreePolicy::local freeing;
  // Guards open on this record now: guards nest, and only the outermost begins and ends the
  // operation. Written by the owner only (a relaxed load and store, no RMW); atomic so that a
  // domain being destroyed can check, in debug builds, that no guard is held.
  std::atomic<unsigned> depth{0};

  // Opens a guard; returns its nesting level (0: the outermost).
  unsigned enter() noexcept {
    const unsigned level = depth.load(std::memory_order_relaxed);
    depth.store(level + 1, std::memory_order_relaxed);
    return level;
  }
  // Closes the innermost guard; returns whether it was the outermost.
  bool leave() noexcept {
    const unsigned level = depth.load(std::memory_order_relaxed) - 1;
    depth.store(level, std::memory_order_relaxed);
    return level == 0;
  }

  void count_retired(pending_gauge& gauge) noexcept {
    counters::add(ctr.retired, 1);
    pending.retired(gauge);
  }
  void count_freed(std::uint64_t n) noexcept {
    counters::add(ctr.freed, n);
    pending.freed(n);
  }
  // This thread moved the global epoch to `epoch`: counted, and an epoch_advance event while a
  // timeline records.
  void count_epoch_advance(std::uint64_t epoch) noexcept {
    counters::add(ctr.epochs, 1);
    timeline::record_instant(timeline::event::epoch_advance, epoch);
  }
  // This thread began a new epoch holding `limbo` retired nodes not yet proven safe: while a
  // timeline records, an epoch_seen event with the garbage it holds (limbo plus the free policy's
  // freeable list). Call it before the new epoch frees anything.
  void saw_new_epoch(std::size_t limbo) noexcept {
    if (timeline::recording()) [[unlikely]]
      timeline::record_instant(timeline::event::epoch_seen, limbo + freeing.held());
  }
  // A batch the scheme proved safe goes to the free policy.
  void release_safe(retired_list&& safe, pending_gauge& gauge) noexcept {
    freeing.release(std::move(safe), *this);
    pending.flush(gauge);
  }
};

// Sums the counters of every record of a registry into a stats snapshot.
template <class Registry>
stats collect_stats(const Registry& threads, const pending_gauge& gauge) {
  stats s;
  threads.for_each([&](const auto& r) { r.ctr.add_to(s); });
  // Counters are read one by one while threads run, so freed can briefly lead retired.
  s.pending = s.retired > s.freed ? s.retired - s.freed : 0;
  s.pending_peak = std::max(gauge.peak(), s.pending);
  s.threads = threads.in_use();
  s.records = threads.size();
  return s;
}

}  // namespace reclaim::core
