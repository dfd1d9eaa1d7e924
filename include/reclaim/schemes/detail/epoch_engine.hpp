// SPDX-License-Identifier: MIT
// The epoch engine: the global epoch, the announcement protocol over it, the pass that advances
// it, and the grace period, barrier, flush and exit of the schemes that free a node three epochs
// after its retire (debra, ebr, ner, qsbr; epoch_pop takes the clock and the record's part). What
// differs between them is pacing, each scheme's own hooks: when a thread looks at the others (a
// full pass every K operations: ebr/ner; one record per check: debra; at quiescent states: qsbr).
//
// The protocol, argued once for all of them. An announcement is the epoch a thread read, or idle
// (0: the epoch starts at 1 and only grows) between operations, or lent while a barrier holds the
// garbage of the idle record. A pass lets the epoch move from e to e+1 when every record is idle
// or announces e (allows()). A thread announces with a seq_cst exchange, then re-reads the epoch
// until it finds the value it announced (announce()). Let X retire node n while its announcement
// (its bags' tag) is e, and R be a thread that holds n.
//  (1) While R is in an operation announced a, the epoch stays <= a+1. R's re-read found a after
//      its exchange, so in the single order S of seq_cst operations every CAS to a+1 or later
//      follows that exchange; a pass that allows a+1 -> a+2 reads R's announcement after it (the
//      pass reads the epoch it checks for, a+1, before its loads) and stops at a != a+1.
//  (2) R announced at most e+1. Had R read e+2 or more, the advance to e+2 came from a pass that
//      saw X idle or announcing e+1 after the operation that unlinked n (by (1), not during it:
//      X's release store in end(), the pass's acquire), and the CAS to e+2 and R's load of the
//      epoch carry the unlink to R, whose reads then cannot reach n.
// Hence while R may hold n the epoch is <= e+2: a bag tagged e is freed at e+3 (epoch_bags::lag).
// Without the re-read R could announce a stale epoch after a pass that missed its exchange, and
// the epoch could pass it (the paper's DEBRA counts the epoch changes it sees instead, and Fraser's
// EBR announces with a plain store: neither makes the argument hold in the C++ memory model).
//  (3) A grace period (synchronize()) that begins after its caller unlinked n reads the epoch, e,
//      with a seq_cst RMW that changes nothing, and waits for e+2. An operation R whose re-read
//      reads that RMW's value, or a later advance's (RMWs, which continue its release sequence),
//      synchronizes with it: the unlink happens before R's reads. One that read an earlier value
//      announced a <= e and holds the epoch <= a+1 <= e+1 ((1)): the epoch reaches e+2 only after
//      R ended. Waiting only for the operations whose announcements the caller sees would not do:
//      one whose exchange follows those loads in S may still read the old pointer with its
//      acquire loads (an RMW orders nothing else: no fence), as the model checker showed
//      (docs/verification.md).
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>

#include "../../concepts.hpp"
#include "../../core/domain.hpp"
#include "../../core/grace.hpp"
#include "../../core/region_guard.hpp"
#include "../../core/stats.hpp"
#include "epoch_bags.hpp"
#include "../../core/sync.hpp"

namespace reclaim::detail {

// What every epoch scheme declares: its family, that it needs from a container only the start and
// end of each operation, and that it does not bound garbage (a stalled thread stops the epoch).
template <class Scheme>
struct epoch_scheme : core::scheme_base<Scheme> {
  static constexpr reclaim::family family = reclaim::family::epoch;
  static constexpr bool bounds_garbage = false;
  static constexpr unsigned needs = needs_nothing;
};

// What a thread of an epoch scheme shows the others, and the garbage it keeps in bags tagged with
// epochs.
struct epoch_state {
  static constexpr std::uint64_t idle = 0;
  static constexpr std::uint64_t lent = std::uint64_t{1} << 63;  // idle, for passes
  // Whether a record that announced a lets the epoch move from e to e+1.
  static constexpr bool allows(std::uint64_t a, std::uint64_t e) noexcept {
    return a == e || a == idle || a == lent;
  }

  // Read by other threads' passes.
  alignas(core::cache_line) core::atomic<std::uint64_t> announce{idle};
  // Owner only (or a barrier that borrowed the record).
  alignas(core::cache_line) std::uint64_t seen_epoch = 0;  // the epoch the bags are collected at
  epoch_bags bags;
};

// The global epoch and the steps of the protocol on it.
class epoch_clock {
 public:
  // seq_cst: in the order S of the argument; acquire part: pairs with the advancing CAS
  // (move_on()), so what its pass saw (the retirers of the bags it makes safe left their
  // operations) happens before the frees of whoever reads the new value.
  std::uint64_t now() const noexcept { return epoch_.load(std::memory_order_seq_cst); }
  // With a weaker order where the caller argues it.
  std::uint64_t now(std::memory_order order) const noexcept { return epoch_.load(order); }

  // seq_cst RMW, for rcu, whose epoch moves by RMWs with no pass (rcu.hpp argues why): n = 0
  // reads it at the head of a release sequence, n = 1 advances it.
  std::uint64_t fetch_add(std::uint64_t n) noexcept {
    return epoch_.fetch_add(n, std::memory_order_seq_cst);
  }

  // Announces the current epoch in `slot` and returns it once a re-read agrees ((1) above); `was`
  // gets what the slot held before. The exchange is a full fence (seq_cst RMW): the announcement
  // is visible before the operation's first read of a shared pointer, where a plain store could
  // sit in x86's store buffer; it pairs with the seq_cst loads of passes (all_allow()). Being an
  // RMW it also tells a scheme whether a barrier held the garbage of its idle record
  // (thread_record::try_borrow): only the first exchange can see that.
  [[gnu::always_inline]] std::uint64_t announce(core::atomic<std::uint64_t>& slot,
                                                std::uint64_t& was) noexcept {
    std::uint64_t e = now();
    was = slot.exchange(e, std::memory_order_seq_cst);
    if (RECLAIM_MUTATED(epoch_announce_without_reread)) return e;
    for (std::uint64_t again; (again = now()) != e;) {
      e = again;
      slot.exchange(e, std::memory_order_seq_cst);
    }
    return e;
  }

  // Every record allows e -> e+1 (state_of(record) is its epoch_state). Records registered during
  // the pass read the epoch after registering, so they announce e or later: missing them is safe.
  template <class Threads, class StateOf>
  static bool all_allow(const Threads& threads, std::uint64_t e, StateOf state_of) noexcept {
    for (const auto* other = threads.head(); other; other = Threads::next_of(other)) {
      // seq_cst: pairs with the exchange in announce() ((1)); acquire part: an idle announcement
      // carries the other thread's completed reads (the release store that ended its operation).
      const auto order = RECLAIM_MUTATED(epoch_pass_relaxed) ? std::memory_order_relaxed
                                                             : std::memory_order_seq_cst;
      if (!epoch_state::allows(state_of(*other).announce.load(order), e))
        return false;
    }
    return true;
  }

  // A pass allowed e -> e+1: moves the epoch there unless another thread did.
  template <class Record>
  void move_on(Record& r, std::uint64_t e) noexcept {
    std::uint64_t expected = e;
    // seq_cst: in the order S of (1), and a release for whoever reads the new epoch (now()).
    if (epoch_.compare_exchange_strong(expected, e + 1, std::memory_order_seq_cst,
                                       std::memory_order_relaxed))
      r.count_epoch_advance(e + 1);
  }

  // The epoch a grace period that begins now waits for, (3) above: e + 2, where e is read by a
  // seq_cst RMW that changes nothing.
  std::uint64_t grace_target() noexcept {
    const unsigned wait = RECLAIM_MUTATED(epoch_grace_one_epoch_short) ? 1 : 2;
    return epoch_.fetch_add(0, std::memory_order_seq_cst) + wait;
  }

  // synchronize() and barrier(): moves the epoch to at least `target`. step(e) tries e -> e+1 (a
  // pass and a CAS) and says whether the epoch moved past e; it fails while a thread is still in an
  // operation of an older epoch, and between failures we wait. False at the deadline.
  template <class Step>
  bool drive(std::uint64_t target, core::deadline d, Step step) const {
    core::waiter w(d);
    for (;;) {
      const std::uint64_t e = now();  // seq_cst and acquire: see now()
      if (e >= target) return true;
      if (!step(e) && !w.wait()) return false;
    }
  }

 private:
  alignas(core::cache_line) core::atomic<std::uint64_t> epoch_{1};
};

// A record of an epoch scheme. `paced` counts the chances since the scheme last looked at the
// other threads (operations for debra, ebr, ner; quiescent states for qsbr).
template <class FreePolicy>
struct epoch_record : core::thread_record<FreePolicy>, epoch_state {
  static constexpr unsigned orphan_batches = epoch_bags::count;
  unsigned paced = 0;

  void destroy_garbage() noexcept { bags.destroy_all(); }
};

// The domain of an epoch scheme, Scheme::domain (CRTP), which befriends the engine and provides its
// pacing: pace_interval and pace(r, e), called at one operation start in pace_interval with the
// epoch announced, and put_in_bag(r, node), a retire's tagging. It may hide on_new_epoch() to do
// more there, and qsbr, which announces at quiescent states and not at operation starts, hides the
// hooks of operations, barrier, flush and exit as well.
template <class Scheme, class Record>
class epoch_engine : public core::domain_base<typename Scheme::domain, Record> {
  using Derived = typename Scheme::domain;

 protected:
  using record = Record;
  using base = core::domain_base<Derived, Record>;
  static constexpr std::uint64_t idle = epoch_state::idle, lent = epoch_state::lent;

 public:
  // Its scheme's guard, and it offers synchronize() and barrier() (concepts.hpp's grace_periods).
  using guard_type = typename Scheme::guard;
  static constexpr bool grace_periods = true;
  // Each flush_local() advances the epoch once if no thread holds it back (domain_base::detach()).
  static constexpr unsigned exit_flushes = epoch_bags::lag;
  using base::retire;  // domain.retire(node[, deleter]) from any thread

 protected:
  friend base;
  friend class core::region_hold<Derived>;

  Derived& self() noexcept { return static_cast<Derived&>(*this); }
  static const epoch_state& state_of(const Record& r) noexcept { return r; }

  // An operation starts: the announcement, and the free policy's turn. What a start does only now
  // and then (answer a barrier, see a new epoch, pace) is begin_rare(), out of line, so that the
  // common start, inlined into the operation, is the exchange, its re-read and four compares.
  [[gnu::always_inline]] Record& begin(Record& r) {
    if (r.enter() != 0) return r;
    std::uint64_t was;
    const std::uint64_t e = clock_.announce(r.announce, was);
    if (was == lent || base::handover_asked(r) || e != r.seen_epoch ||
        r.paced + 1 >= Derived::pace_interval) [[unlikely]] {
      begin_rare(r, e, was);
      return r;
    }
    ++r.paced;
    r.freeing.on_operation(r);
    return r;
  }
  [[gnu::noinline]] void begin_rare(Record& r, std::uint64_t e, std::uint64_t was) {
    // The first exchange found our garbage lent: a barrier borrows an idle record only.
    if (was == lent) r.wait_until_given_back();
    this->answer_handover(r);  // a barrier that could not borrow us asks
    if (e != r.seen_epoch) self().on_new_epoch(r, e);
    r.freeing.on_operation(r);
    if (++r.paced >= Derived::pace_interval) {
      r.paced = 0;
      self().pace(r, e);
    }
  }

  [[gnu::always_inline]] void end(Record& r) noexcept {
    if (!r.leave()) return;
    // release: our reads of nodes in this operation happen before a pass that sees us idle
    // (all_allow()) lets the epoch move on towards freeing them.
    r.announce.store(idle, RECLAIM_MUTATED(epoch_end_relaxed) ? std::memory_order_relaxed
                                                              : std::memory_order_release);
  }

  void retire(Record& r, core::retired_hook* node) {
    self().put_in_bag(r, node);
    r.count_retired(this->gauge_);
  }

  // The thread sees epoch e (its operation announced it, or it read it after an advance): frees
  // every bag three epochs old ((2) above), and the orphans of exited threads, which kept their
  // tags, by the same rule.
  void on_new_epoch(Record& r, std::uint64_t e) {
    r.saw_new_epoch(r.bags.size());
    r.seen_epoch = e;
    r.bags.collect(e, r, this->gauge_);
    this->free_safe_orphans(r, [e](std::uint64_t tag) { return epoch_bags::safe(tag, e); });
  }

  // A full pass and a CAS, out of line; whether the epoch moved past e (by our CAS or another's).
  [[gnu::noinline]] bool try_advance(Record& r, std::uint64_t e) {
    core::scan_timer timer(r.ctr);
    if (!epoch_clock::all_allow(this->threads_, e, state_of)) return false;
    clock_.move_on(r, e);
    return true;
  }

  // One step of synchronize() or barrier() by a caller outside any operation (qsbr's hides it).
  bool drive_step(Record& me, std::uint64_t e) { return try_advance(me, e); }

  bool wait_for_grace_period(Record& me, core::deadline d) {
    const std::uint64_t target = RECLAIM_MUTATED(epoch_grace_from_announcements)
                                     ? announced_target(me)
                                     : clock_.grace_target();
    return clock_.drive(target, d, [&](std::uint64_t e) { return self().drive_step(me, e); });
  }
  // The target before (3) was found wrong: a+2 for each announcement a seen. Only the model
  // checker's fault epoch_grace_from_announcements runs it (docs/verification.md).
  std::uint64_t announced_target(const Record& me) const {
    std::uint64_t target = 0;
    this->threads_.for_each([&](const Record& r) {
      const std::uint64_t a = r.announce.load(std::memory_order_seq_cst);
      if (&r != &me && a != idle && a != lent) target = std::max(target, a + 2);
    });
    return target;
  }

  static void take_garbage(Record& r, typename base::gathered& into) noexcept {
    r.bags.take_all(into.unsafe);
    into.safe.splice(r.freeing.take());
  }

  // Our garbage, then every other record's (borrowed while idle) and the orphans: every tag is at
  // most the epoch e read after, so all of it is safe at e+3.
  bool barrier_locked(Record& me, core::deadline d) {
    typename base::gathered g;
    bool done = this->gather(me, g, d, [](Record& r, typename base::gathered& into) {
      return base::borrow_if_idle(r, r.announce, idle, lent, into);
    });
    const std::uint64_t e = clock_.now();
    done = done && clock_.drive(e + epoch_bags::lag, d,
                                [&](std::uint64_t now) { return try_advance(me, now); });
    return this->finish_barrier(me, g, done, e);
  }

  // An operation of our own (which holds our garbage against a barrier), one advance if every
  // thread allows it, what that makes safe, and the free policy's safe garbage.
  void flush_local(Record& me) {
    Record& r = begin(me);
    try_advance(r, r.seen_epoch);
    const std::uint64_t e = clock_.now();
    // A later tag for later retires is only safer.
    if (e != r.seen_epoch) self().on_new_epoch(r, e);
    r.freeing.drain(r);
    end(r);
  }

  // The bags go to the orphanage with their tags (an idle thread would not free them), the free
  // policy is drained, and the record goes idle: it holds the epoch back no more.
  void hand_over_and_leave(Record& r) noexcept {
    r.bags.hand_over([&](core::retired_list&& bag, std::uint64_t tag) {
      this->orphan(r, std::move(bag), tag);
    });
    r.freeing.drain(r);
    // release: the reads of our past operations happen before a pass that sees us idle, as in
    // end(); and the hand-over before a barrier's.
    r.announce.store(idle, std::memory_order_release);
  }

  // Thread exit: the record holds its garbage first (an announcement of an epoch no newer than the
  // current one, never idle, even if the thread left inside a guard). The pacing state is kept
  // (paced, and the epoch a debra pass is for): a run of short-lived threads that reuse this
  // record, each running fewer operations than the pacing interval, must still advance the epoch.
  void on_thread_exit(Record& r) noexcept {
    const std::uint64_t holding = r.seen_epoch == 0 ? 1 : r.seen_epoch;
    if (r.announce.exchange(holding, std::memory_order_seq_cst) == lent)
      r.wait_until_given_back();
    hand_over_and_leave(r);
  }

  // In a child of fork(): r's thread does not exist here (core/registry.hpp). Idle, it holds the
  // epoch back no more.
  void forget_thread(Record& r) noexcept { r.announce.store(idle, std::memory_order_relaxed); }

  epoch_clock clock_;
};

}  // namespace reclaim::detail
