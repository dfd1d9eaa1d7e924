// SPDX-License-Identifier: MIT
// What every scheme's domain and declaration share, so that a scheme writes only what is its own.
//
// A scheme S declares itself by deriving from scheme_base<S> (the default node base and the
// default domain) and names its domain, derived from domain_base<Domain, Record>, which owns the
// thread registry, the orphanage and the pending gauge, and provides stats(), retire(), create(),
// flush(), synchronize(), barrier(), destruction and thread exit. What the domain supplies is the
// concept domain_contract below, checked by the compiler for every domain (in ~domain_base());
// docs/writing-a-scheme.md walks through it. How orphaned garbage is freed is the scheme's:
// free_safe_orphans() / take_safe_orphans() for schemes whose stamp says when a batch is safe
// (epochs, token rounds), adopt_orphans() for schemes whose reclaimers check every node they hold
// (hazard pointers, neutralization, per-node stamps).
#pragma once
#include <atomic>
#include <cassert>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

#include "grace.hpp"
#include "misuse.hpp"
#include "record.hpp"
#include "registry.hpp"
#include "retired.hpp"
#include "stats.hpp"
#include "sync.hpp"

namespace reclaim::core {

// The hooks domain_base calls, which a scheme's domain writes (privately: it declares domain_base
// its friend, and domain_base::hooks names them with that access). Required:
//   Record                     derives from thread_record<FreePolicy>; default-constructible;
//                              declares orphan_batches (lists it hands over at exit) if more than
//                              one; destroy_garbage() destroys every retired node it holds.
//   guard_type                 the scheme's guard (domain.retire() runs in one).
//   grace_periods              whether it offers synchronize() and barrier(); if so
//                              wait_for_grace_period(me, deadline) -> bool (synchronize()) and
//                              barrier_locked(me, deadline) -> bool (barrier(), serialized).
//   on_thread_exit(r)          the record leaves any operation it was in (the thread may exit
//                              inside a guard), hands its garbage over with orphan(), each list
//                              with its age (it may free first: hp scans once more), and drains
//                              its free policy, all while it holds its garbage against a barrier
//                              (thread_record::try_borrow). The base then flushes the gauge and
//                              clears the nesting.
//   flush_local(me)            flush(): frees what is already safe, cheap and non-blocking.
//   ~Domain()                  calls shutdown() first, while its own state is still alive.
// Optional:
//   take_garbage(r, gathered&) static; moves a record's lists out: for a barrier_locked() that
//                              collects with gather() or borrow_if_idle().
//   exit_flushes               how many flush_local() calls an exiting thread makes while the
//                              orphanage holds garbage, enough for the scheme's epoch to pass the
//                              age of everything in it (detach()).
//   forget_thread(r)           in a child of fork(), r's thread does not exist; r must stop
//                              holding anything up (an announcement goes quiescent, a token moves
//                              on, a read phase ends) using single-word steps only, since that
//                              thread may have stopped anywhere, even in the scheme's own code
//                              (domain_base::forget()).
//   fork_survivor(r)           in a child of fork(), r is the forking thread's record: what the
//                              parent's other threads were doing to it (a revocation) stopped
//                              half-way; single-word steps likewise (domain_base::survive_fork()).
template <class Domain>
concept domain_contract =
    requires {
      typename Domain::hooks::record;
      typename Domain::guard_type;
      { Domain::hooks::grace_periods() } -> std::same_as<bool>;
    } &&
    std::derived_from<typename Domain::hooks::record,
                      thread_record<typename Domain::hooks::record::free_policy>> &&
    std::default_initializable<typename Domain::hooks::record> &&
    requires(Domain& d, typename Domain::hooks::record& r) {
      Domain::hooks::on_thread_exit(d, r);
      Domain::hooks::flush_local(d, r);
      r.destroy_garbage();
    } &&
    (!Domain::hooks::grace_periods() ||
     requires(Domain& d, typename Domain::hooks::record& r, deadline t) {
       { Domain::hooks::wait_for_grace_period(d, r, t) } -> std::same_as<bool>;
       { Domain::hooks::barrier_locked(d, r, t) } -> std::same_as<bool>;
     });

template <class Domain, class Record>
class domain_base {
 public:
  domain_base(const domain_base&) = delete;
  domain_base& operator=(const domain_base&) = delete;

  // The domain's hooks as domain_base sees them (its friend), for domain_contract to check.
  struct hooks {
    using record = Record;
    template <class D = Domain>
    static constexpr auto grace_periods() -> decltype(bool{D::grace_periods}) {
      return D::grace_periods;
    }
    template <class D = Domain>
    static auto on_thread_exit(D& d, Record& r) -> decltype(d.on_thread_exit(r));
    template <class D = Domain>
    static auto flush_local(D& d, Record& r) -> decltype(d.flush_local(r));
    template <class D = Domain>
    static auto wait_for_grace_period(D& d, Record& r, deadline t)
        -> decltype(d.wait_for_grace_period(r, t));
    template <class D = Domain>
    static auto barrier_locked(D& d, Record& r, deadline t) -> decltype(d.barrier_locked(r, t));
  };

  // A snapshot of the counters; does not register the calling thread.
  reclaim::stats stats() const { return collect_stats(threads_, gauge_); }

  // True from the first step of the domain's destructor: a deleter that would retire its node
  // again (rc_ptr.hpp's deferred decrements) finishes at once instead, since no thread may hold a
  // protection on a domain being destroyed. Read only by deleters and the destroying thread.
  bool shutting_down() const noexcept { return shut_down_; }

  // Retires `node` from any thread, outside any guard (or inside one: guards nest). The calling
  // thread registers as on any first use, and the retire runs in an operation of its own: it costs
  // a guard's begin and end. The node must already be unreachable for operations that begin now.
  template <class T>
  void retire(T* node) {
    typename Domain::guard_type g(self());
    g.retire(node);
  }
  // With a deleter object (see core::to_retired: a stateful one lives in the node).
  template <class T, class D>
  void retire(T* node, D&& deleter) {
    typename Domain::guard_type g(self());
    g.retire(node, std::forward<D>(deleter));
  }

  // A node made as the scheme wants its nodes made: `new T(args...)`, except where the scheme keeps
  // node memory of its own (lfrc hides this with one that takes from the domain's free list).
  // Containers that make nodes without a guard use it (a guard's create() does the same).
  template <class T, class... Args>
  T* create(Args&&... args) {
    return new T(std::forward<Args>(args)...);
  }

  // A container calls this first in its destructor, before the atomic pointers it protects reads
  // from (its sources: a head, a root, a queue's tail) go away. It returns once no thread can
  // still read one of those sources on behalf of a protect() that has returned. Only schemes
  // whose helpers read other threads' sources (wfe, crystalline_w) have anything to wait for and
  // hide this with their own; for the others a read of a source ends before protect() returns.
  void wait_for_source_readers() const noexcept {}

  // Cheap and non-blocking: the calling thread frees what is already safe of its own garbage and
  // of the orphanage, advancing the epoch (or scanning, or running a round) once if it can.
  // docs/schemes.md says what each scheme does. nbr: not inside a read phase.
  void flush() { self().flush_local(threads_.local()); }

  // Returns once every operation (outermost guard) that began before the call has ended. Must not
  // be called inside a guard of the same domain (it stops the program, naming the mistake: it
  // would wait for itself). A thread stalled inside an
  // operation makes it wait for ever (qsbr: also a live thread that is not offline): try_ bounds
  // the wait and says whether the grace period completed.
  void synchronize()
    requires Domain::grace_periods
  {
    (void)synchronize_until(no_deadline);
  }
  template <class Rep, class Period>
  bool try_synchronize(std::chrono::duration<Rep, Period> timeout)
    requires Domain::grace_periods
  {
    return synchronize_until(after(timeout));
  }

  // Returns once everything retired (by any thread) before the call has been freed, its deleter
  // run: the garbage of busy, idle and exited threads alike. Same rules as synchronize(), and the
  // same things that block it; also stopped, naming the mistake, where the calling thread's own
  // protection (a guard_ptr, a hazard_pointer) holds a node retired before the call. try_ returns
  // false at the deadline, leaving what it gathered in the orphanage with its age, to be freed as
  // usual.
  void barrier()
    requires Domain::grace_periods
  {
    (void)barrier_until(no_deadline);
  }
  template <class Rep, class Period>
  bool try_barrier(std::chrono::duration<Rep, Period> timeout)
    requires Domain::grace_periods
  {
    return barrier_until(after(timeout));
  }

 protected:
  domain_base() = default;
  // A domain whose constructor threw never had a thread; any other must have shut down while its
  // own state was still alive.
  ~domain_base() {
    static_assert(domain_contract<Domain>,
                  "a scheme's domain must provide the hooks of core::domain_contract "
                  "(core/domain.hpp, docs/writing-a-scheme.md)");
    assert((shut_down_ || threads_.size() == 0) &&
           "a scheme's domain destructor must call shutdown() first");
  }

  // The first statement of every domain destructor: exiting threads skip the domain from here on
  // (one detaching now is waited for), then every record's garbage and every orphan is destroyed.
  // No thread may still hold a guard on the domain: it would read freed memory.
  void shutdown() noexcept {
    shut_down_ = true;  // before the deleters below run: they may ask (shutting_down())
    threads_.close();
    threads_.for_each([](Record& r) {
      if (r.forgotten) return;  // a thread of the parent of this forked process: left as it was
      assert(r.level() == 0 &&
             "reclaim: domain destroyed while a guard or guard_ptr on it is held");
      r.freeing.drain(r);
      r.destroy_garbage();
    });
    orphans_.take_all().destroy_all();
  }

  // Thread exit: hands `list` over with its age (see orphan_batch), in a header the record
  // reserved when its thread registered: O(1), no allocation.
  void orphan(Record& r, retired_list&& list, std::uint64_t stamp = 0) noexcept {
    orphans_.give(std::move(list), stamp, r.headers);
  }

  // The orphaned batches whose stamp satisfies is_safe, as one list; the others stay.
  template <class Pred>
  retired_list take_safe_orphans(Pred is_safe) noexcept {
    if (orphans_.empty()) [[likely]] return {};
    return orphans_.take_if(is_safe);
  }
  // The same, handed to r's free policy.
  template <class Pred>
  void free_safe_orphans(Record& r, Pred is_safe) noexcept {
    retired_list safe = take_safe_orphans(is_safe);
    if (!safe.empty()) r.release_safe(std::move(safe), gauge_);
  }

  // Every orphaned node, for a scheme that checks each node it holds before freeing it.
  retired_list adopt_orphans() noexcept {
    if (orphans_.empty()) [[likely]] return {};
    return orphans_.take_all();
  }

  // What a barrier gathers: garbage not yet proven safe, and garbage already proven safe (taken
  // from free policies).
  using gathered = gathered_garbage;

  // A barrier's first step: our own garbage (Domain::take_garbage(record, into) moves a record's
  // lists out), then every other record's, borrowed from its owner (borrow(record, into) tries
  // once and returns false while the owner is busy: borrow_if_idle()) or, from an owner that stays
  // busy, handed over at the start of its next operation (answer_handover(), where the scheme
  // answers), then every orphan. So a barrier does not need an idle moment of each
  // thread: a thread that runs operations back to back answers within one operation. False at the
  // deadline, with what it gathered so far in `into`.
  template <class Borrow>
  bool gather(Record& me, gathered& into, deadline d, Borrow borrow) {
    Domain::take_garbage(me, into);  // barriers are serialized: no one borrows ours meanwhile
    for (Record* r = threads_.head(); r; r = threads_.next_of(r)) {
      if (r == &me || r->forgotten) continue;
      waiter w(d);
      bool asked = false;
      while (!borrow(*r, into)) {
        if (!asked) {
          // release: pairs with the acquire CAS in answer_handover_slow(), so that the last
          // barrier's take of r->handed (take_handed_over(); that barrier is ordered before ours
          // by the barriers' lock) happens before the owner fills it again.
          r->handover.store(Record::asked, std::memory_order_release);
          asked = true;
        } else if (take_handed_over(*r, into)) {
          break;
        }
        if (!w.wait()) {
          settle_handover(*r, into);
          return false;
        }
      }
    }
    into.unsafe.splice(orphans_.take_all());
    return true;
  }

  // Borrows r through `word` if it holds `idle` now, and moves its garbage into `into`. See
  // thread_record::try_borrow for the protocol. A request for a hand-over made before is settled
  // while r is lent (its owner cannot answer meanwhile).
  template <class W>
  static bool borrow_if_idle(Record& r, core::atomic<W>& word, W idle, W lent, gathered& into) {
    if (!r.try_borrow(word, idle, lent)) return false;
    Domain::take_garbage(r, into);
    settle_handover(r, into);
    r.give_back(word, lent, idle);
    return true;
  }

  // The owner's side of a hand-over, for schemes whose borrowing word is the operation's
  // announcement (a borrow needs the owner idle): at the start of each operation, after the RMW
  // that holds its garbage, it answers a barrier that asked by moving its garbage into `handed`.
  // Barriers of one domain are serialized, so a record has one request at a time.
  static void answer_handover(Record& r) noexcept {
    if (handover_asked(r)) [[unlikely]] answer_handover_slow(r);
  }
  // relaxed: a hint; answer_handover_slow()'s CAS is what synchronizes with the request.
  static bool handover_asked(const Record& r) noexcept {
    return r.handover.load(std::memory_order_relaxed) == Record::asked;
  }
  [[gnu::noinline]] static void answer_handover_slow(Record& r) noexcept {
    std::uint32_t expected = Record::asked;
    // A CAS against the barrier's withdrawal (settle_handover()): only one wins. acquire: pairs
    // with the release store of the request in gather().
    if (!r.handover.compare_exchange_strong(expected, Record::handing, std::memory_order_acquire,
                                            std::memory_order_relaxed))
      return;
    Domain::take_garbage(r, r.handed);
    // release: our moves happen before the barrier's acquire load that reads handed_over.
    r.handover.store(Record::handed_over, std::memory_order_release);
  }

  // The owner answered our request: its garbage is ours.
  static bool take_handed_over(Record& r, gathered& into) noexcept {
    // acquire: pairs with the release store in answer_handover_slow(): its moves happen before.
    if (r.handover.load(std::memory_order_acquire) != Record::handed_over) return false;
    into.unsafe.splice(std::move(r.handed.unsafe));
    into.safe.splice(std::move(r.handed.safe));
    r.handover.store(Record::not_asked, std::memory_order_relaxed);
    return true;
  }
  // Withdraws our request, or takes what the owner handed over if it answered first (while it is
  // answering, a few pointer moves, we wait).
  static void settle_handover(Record& r, gathered& into) noexcept {
    std::uint32_t state = Record::asked;
    // relaxed: a CAS against the owner's (answer_handover_slow()); only one wins.
    if (r.handover.compare_exchange_strong(state, Record::not_asked, std::memory_order_relaxed) ||
        state == Record::not_asked)
      return;
    while (!take_handed_over(r, into)) core::yield_now();
  }

  // Frees `list` now, counted on me: the free policy would keep it for later.
  void free_now(Record& me, retired_list&& list) {
    me.release_safe(std::move(list), gauge_);
    me.freeing.drain(me);
    me.pending.flush(gauge_);
  }

  // The end of a barrier: what was proven safe is freed; what is still unsafe (the deadline
  // passed) goes to the orphanage stamped with `stamp` (an age no younger than any of its nodes'),
  // where the scheme frees it as any orphan. Returns whether the barrier completed: every step
  // done in time and nothing left.
  bool finish_barrier(Record& me, gathered& g, bool done, std::uint64_t stamp) {
    if (done) g.safe.splice(std::move(g.unsafe));
    free_now(me, std::move(g.safe));
    done = done && g.unsafe.empty();
    orphan(me, std::move(g.unsafe), stamp);
    return done;
  }

  // The barrier of a scheme whose reclaimers check every node against what readers publish (hp,
  // the era schemes): our garbage, then every other record's (borrowed through its garbage_claim
  // between its retires, even while its thread stalls inside a guard) and the orphans; then scans
  // (Domain::take_unprotected(me, from, safe)) until nothing gathered is protected or the deadline
  // passes. Nodes that the caller's own protections hold would be waited for for ever:
  // Domain::refuse_own_protection(me, left) names and stops them. What is still protected waits
  // in the orphanage, stamped by stamp().
  template <class Stamp>
  bool scan_barrier(Record& me, deadline d, Stamp stamp) {
    gathered g;
    bool done = gather(me, g, d, [](Record& r, gathered& into) {
      return borrow_if_idle(r, r.claim.word, garbage_claim::free, garbage_claim::lent, into);
    });
    waiter w(d);
    self().take_unprotected(me, g.unsafe, g.safe);
    self().refuse_own_protection(me, g.unsafe);
    for (;;) {
      counters::add(me.ctr.scans, 1);
      if (g.unsafe.empty() || !w.wait()) break;
      self().take_unprotected(me, g.unsafe, g.safe);
    }
    return finish_barrier(me, g, done && g.unsafe.empty(), stamp());
  }

  // The schemes without an epoch of their own (hp, nbr, lfrc, hyaline, crystalline): returns once
  // every outermost guard open at the call has closed (its record's depth shows no guard, or a
  // later operation). The fence orders the caller's earlier writes (an unlink) before its reads of
  // the depths; a guard it misses began after, and that guard's reads see the unlink only if the
  // guard's side orders its depth store before its reads too: a seq_cst RMW or fence at the start
  // of its operation (nbr's read phase, hyaline's slot, the POP schemes' activation) or a seq_cst
  // publication and re-read before its first read (hp's symmetric fence). hp_asym, hp_mprotect and
  // hp_splitcas publish the depth with a plain store and no fence: their synchronize() runs the
  // heavy side of the fence first (hp.hpp), which reaches the readers' side. All depths are read
  // first, so that a guard opened while we wait for another is not waited for. A forgotten record
  // (fork) is never inside a guard.
  bool wait_for_open_guards(deadline d) const {
    core::thread_fence(std::memory_order_seq_cst);
    std::vector<std::pair<const Record*, std::uint64_t>> open;
    for (const Record* r = threads_.head(); r; r = threads_.next_of(r)) {
      // acquire: pairs with the release stores in enter() and leave(): the operation's reads
      // happen before our return.
      const std::uint64_t seen = r->depth.load(std::memory_order_acquire);
      if (Record::level_of(seen) != 0) open.emplace_back(r, seen);
    }
    for (const auto& [r, seen] : open) {
      waiter w(d);
      for (;;) {
        const std::uint64_t now = r->depth.load(std::memory_order_acquire);
        if (Record::level_of(now) == 0 || Record::operation_of(now) != Record::operation_of(seen))
          break;
        if (!w.wait()) return false;
      }
    }
    return true;
  }

  thread_registry<Record, domain_base> threads_{*this};
  orphanage orphans_;
  pending_gauge gauge_;

 private:
  friend class thread_registry<Record, domain_base>;

  Domain& self() noexcept { return static_cast<Domain&>(*this); }

  // In a child of fork() (core/registry.hpp): r belonged to a thread of the parent other than the
  // one that forked. That thread stopped for good wherever it was, maybe in the middle of the
  // scheme's own code, so r's garbage and its other owner-only state are never touched again (a
  // leak of what it held). What other threads wait on is released with single-word steps: it
  // leaves every guard (synchronize() and the domain's destruction no longer see it inside one),
  // and the scheme's forget_thread(r) does the rest.
  void forget(Record& r) noexcept {
    r.forgotten = true;
    r.leave_all();
    if constexpr (requires { self().forget_thread(r); }) self().forget_thread(r);
  }
  // In a child of fork(): r is the forking thread's record, which the parent's other threads may
  // have been changing on its behalf when they stopped; the scheme's fork_survivor(r), if any,
  // finishes or undoes that with single-word steps, as forget_thread().
  void survive_fork(Record& r) noexcept {
    if constexpr (requires { self().fork_survivor(r); }) self().fork_survivor(r);
  }

  bool synchronize_until(deadline d) {
    Record& me = threads_.local();
    refuse_inside_an_operation(me);
    return self().wait_for_grace_period(me, d);
  }

  // Waiting for a grace period inside an operation of the same domain would wait for itself: a
  // hang, stopped with a message in every build (one load). What a thread's own protections
  // outside operations (hp's guard_ptr or hazard_pointer) hold up is the scheme's to check, where
  // it sees what is left (hp's barrier_locked()).
  static void refuse_inside_an_operation(const Record& me) noexcept {
    if (me.level() != 0)
      stop_on_misuse(
          "synchronize() or barrier() inside a guard of the same domain (or while a region_guard "
          "or guard_ptr holds this thread's operation) would wait for its own operation; end it "
          "first");
  }

  // Barriers of a domain are serialized: one borrower at a time (thread_record::try_borrow).
  bool barrier_until(deadline d) {
    waiter w(d);
    // acquire: pairs with the release below, so the previous barrier's moves happen before ours.
    while (barrier_running_.exchange(true, std::memory_order_acquire))
      if (!w.wait()) return false;
    struct done_on_exit {
      core::atomic<bool>& running;
      ~done_on_exit() { running.store(false, std::memory_order_release); }
    } done{barrier_running_};
    Record& me = threads_.local();
    refuse_inside_an_operation(me);
    // One header more than the owner's exit needs, for what finish_barrier() may hand over.
    me.headers.reserve(Record::orphan_batches + 1);
    return self().barrier_locked(me, d);
  }

  // Whether the scheme's exiting threads flush the orphanage (Domain::exit_flushes).
  static constexpr bool flushes_at_exit() { return requires { Domain::exit_flushes; }; }

  void detach(Record& r) noexcept {
    // seq_cst, here and in free_orphans_on_exit(): see there.
    if constexpr (flushes_at_exit()) exiting_.fetch_add(1, std::memory_order_seq_cst);
    self().on_thread_exit(r);
    r.leave_all();
    free_orphans_on_exit(r);
    r.pending.flush(gauge_);
  }

  // The last thread out frees what exited threads left, its own garbage included (paper 003,
  // section 4.3, gives Stamp-it's last thread this duty; the epoch schemes take it here). Without
  // it, the garbage of a program's last workers waited for the next operation on the domain, or
  // for its destruction. With no other thread in an operation, each flush advances the epoch once
  // and frees what that makes safe. The record is idle here, its garbage handed over: a flush is
  // an operation of its own, as a user's flush() before exit would be.
  // A flush gives up when another thread holds the epoch back. If that thread is alive, it frees
  // the orphans in a later operation or when it exits. If it is exiting too (inside its own
  // on_thread_exit(), which holds its garbage with an old announcement), the two could each give
  // up on the other; so the last of the threads exiting at once flushes again once the others are
  // done: exiting_ counts them, and the thread whose decrement takes it to zero comes after every
  // other's flushes. It sees every thread that held it back: that thread's increment precedes its
  // announcement, which our scan read, and our decrement follows that scan, all in the single
  // order of seq_cst operations, so our decrement finds its count still in exiting_.
  void free_orphans_on_exit(Record& r) {
    if constexpr (flushes_at_exit()) {
      auto flush_orphans = [&] {
        for (unsigned i = 0; i < Domain::exit_flushes && !orphans_.empty(); ++i)
          self().flush_local(r);
      };
      flush_orphans();
      if (exiting_.fetch_sub(1, std::memory_order_seq_cst) == 1) flush_orphans();
    }
  }

  core::atomic<bool> barrier_running_{false};
  core::atomic<unsigned> exiting_{0};  // threads inside detach(), where flushes_at_exit()
  bool shut_down_ = false;
};

// The declaration every scheme starts from: its nodes derive from retired_hook (a scheme that
// stamps nodes declares its own node_base), and its default domain.
template <class Scheme>
struct scheme_base {
  using node_base = retired_hook;

  // Built on first use and never destroyed, so that thread_local and static destructors may use it
  // whenever they run; what it holds at process exit is not freed (leak checkers see it as
  // reachable). Make a domain of your own to have everything freed when it is destroyed.
  static auto& default_domain() {
    static auto* domain = new typename Scheme::domain;
    return *domain;
  }
};

}  // namespace reclaim::core
