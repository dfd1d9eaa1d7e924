// SPDX-License-Identifier: MIT
// The per-thread state every scheme keeps beside its own: counters, the local share of the pending
// gauge, and the free policy's per-thread part.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>

#include "registry.hpp"
#include "retired.hpp"
#include "stats.hpp"
#include "timeline.hpp"
#include "sync.hpp"

namespace reclaim::core {

// Garbage gathered for a barrier: not yet proven safe, and already proven safe (taken from a free
// policy).
struct gathered_garbage {
  retired_list unsafe;
  retired_list safe;
};

// A scheme's record derives from this. The fields here are written by the owning thread only; the
// scheme puts the fields other threads read (announcements, hazard slots) in its own record, and
// this block starts on its own cache line so the owner's writes do not disturb those readers.
template <class FreePolicy>
struct thread_record : record_base {
  using free_policy = FreePolicy;
  // Batches of garbage the record hands over when its thread exits (orphanage::give); a scheme
  // with more lists than one says so.
  static constexpr unsigned orphan_batches = 1;

  alignas(cache_line) counters ctr;
  pending_gauge::local pending;
  typename FreePolicy::local freeing;
  // The guards open on this record (low 32 bits: guards nest, and only the outermost begins and
  // ends the operation) and the operations ever begun on it (high 32 bits, wrapping), so that
  // synchronize() can tell the operation it saw open from a later one (wait_for_open_guards()).
  // Written by the owner only (a relaxed load and a release store, no RMW).
  core::atomic<std::uint64_t> depth{0};
  static constexpr std::uint64_t one_operation = std::uint64_t{1} << 32;
  static constexpr unsigned level_of(std::uint64_t d) noexcept { return static_cast<unsigned>(d); }
  static constexpr std::uint32_t operation_of(std::uint64_t d) noexcept {
    return static_cast<std::uint32_t>(d >> 32);
  }

  // Opens a guard; returns its nesting level (0: the outermost).
  unsigned enter() noexcept {
    const std::uint64_t d = depth.load(std::memory_order_relaxed);
    const unsigned level = level_of(d);
    // release: a synchronize() that reads this value knows the previous operation ended, and its
    // reads happen before (the release store in leave() comes first in program order).
    depth.store(d + 1 + (level == 0 ? one_operation : 0), std::memory_order_release);
    return level;
  }
  // Closes the innermost guard; returns whether it was the outermost.
  bool leave() noexcept {
    const std::uint64_t d = depth.load(std::memory_order_relaxed) - 1;
    // release: the operation's reads happen before a synchronize() that reads this value.
    depth.store(d, std::memory_order_release);
    return level_of(d) == 0;
  }
  // Thread exit: whatever guards the thread left open are closed.
  void leave_all() noexcept {
    const std::uint64_t d = depth.load(std::memory_order_relaxed);
    depth.store(d - level_of(d), std::memory_order_release);
  }
  unsigned level() const noexcept { return level_of(depth.load(std::memory_order_relaxed)); }

  // Garbage hand-over for barrier(): a barrier takes the garbage of a record whose owner is between
  // operations (it may be idle for ever). The owner announces with an RMW on a word of its record
  // whenever it starts touching its garbage (epoch schemes: the announcement at the start of each
  // operation; hp and nbr: a claim word around retire()). The borrower takes the record by a CAS
  // that swaps that word from its idle value to a lent value; being RMWs on one word, the CAS and
  // the owner's RMWs are totally ordered: either the owner's RMW comes first (the CAS fails, the
  // borrower tries again later) or the CAS does, and the owner's RMW reads the lent value and waits
  // (wait_until_given_back()) until the borrower has moved the lists out, a few pointer moves.
  // Barriers of one domain are serialized, so there is one borrower at a time.
  core::atomic<bool> borrowed{false};

  template <class W>
  bool try_borrow(core::atomic<W>& word, W idle, W lent) noexcept {
    borrowed.store(true, std::memory_order_relaxed);
    // acquire: pairs with the owner's release that made the word idle (its last changes to its
    // garbage happen before our moves); release: an owner whose RMW reads `lent` sees
    // borrowed == true.
    if (word.compare_exchange_strong(idle, lent, std::memory_order_acq_rel,
                                     std::memory_order_relaxed))
      return true;
    borrowed.store(false, std::memory_order_relaxed);
    return false;
  }
  template <class W>
  void give_back(core::atomic<W>& word, W lent, W idle) noexcept {
    // release (both): our moves happen before the owner's next touch, whether its next RMW reads
    // the idle value we restore or it is already waiting on `borrowed`.
    word.compare_exchange_strong(lent, idle, std::memory_order_release, std::memory_order_relaxed);
    borrowed.store(false, std::memory_order_release);
  }
  // The owner's RMW read the lent value.
  [[gnu::noinline]] void wait_until_given_back() noexcept {
    // acquire: pairs with the release store in give_back().
    while (borrowed.load(std::memory_order_acquire)) core::yield_now();
  }

  // Hand-over on request, for a record whose owner is never idle long enough to be borrowed (it
  // runs operations back to back, and its announcement is idle for nanoseconds between them): a
  // barrier asks, and the owner moves its garbage into `handed` at the start of its next operation
  // (domain_base::gather() and answer_handover() say how). The owner pays one relaxed load per
  // operation.
  static constexpr std::uint32_t not_asked = 0, asked = 1, handing = 2, handed_over = 3;
  core::atomic<std::uint32_t> handover{not_asked};
  gathered_garbage handed;  // the owner's garbage, from its answer until the barrier takes it

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

// hp and nbr: their operations begin with no RMW a borrower could order itself against, so the
// owner holds its garbage with one on this word around each retire (and each step of an amortized
// free policy), and a barrier borrows the record while the word is free.
struct garbage_claim {
  static constexpr std::uint32_t free = 0, held = 1, lent = 2;
  core::atomic<std::uint32_t> word{free};

  // Holds r's garbage for the owner while it lives. Nested (a deleter run by a scan that retires
  // into the same domain) it leaves the word held for the outer scope.
  template <class Record>
  class scope {
   public:
    explicit scope(Record& r) noexcept
        // acquire: pairs with a borrower's give_back() (release), whose moves happen before ours.
        : claim_(r.claim), was_(claim_.word.exchange(held, std::memory_order_acquire)) {
      if (was_ == lent) [[unlikely]]
        r.wait_until_given_back();
    }
    // release: our changes to the garbage happen before a borrower's CAS that reads `free`.
    // held & held is held (nested), free & held and lent & held are free.
    ~scope() { claim_.word.store(was_ & held, std::memory_order_release); }
    scope(const scope&) = delete;
    scope& operator=(const scope&) = delete;

   private:
    garbage_claim& claim_;
    const std::uint32_t was_;
  };

  // The free policy's step at the start of an operation, holding the garbage if it touches any.
  template <class Record>
  static void free_policy_step(Record& r) noexcept {
    if constexpr (Record::free_policy::keeps_safe_garbage) {
      scope<Record> holding(r);
      r.freeing.on_operation(r);
    } else {
      r.freeing.on_operation(r);
    }
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
