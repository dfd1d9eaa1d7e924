// SPDX-License-Identifier: MIT
// qsbr: quiescent-state-based reclamation (McKenney and Slingwine 1998; the epoch form of Hart et
// al. 2007 and of paper 001's benchmark).
//
// What it is. A global epoch. Threads announce nothing when an operation starts: the END of each
// (outermost) operation is a quiescent state, where the thread holds no pointer into the structure.
// There it announces (release) the epoch it observed and tries to advance it: if every online
// thread announced the current epoch e at a quiescent state, it CASes e -> e+1. A retired node is tagged
// with the epoch read at retire time, t, and goes into one of three limbo lists (t mod 3); a list
// tagged t is freed when its owner sees the epoch at t+3 (see quiescent_state() for why).
//
// When to use it. Read-mostly structures where operations must cost nothing at their start and end
// (one load of the epoch at the end, and a store only when it changed). Do NOT use it when threads
// may idle between operations for long: a live thread that stops calling operations keeps its last
// announcement and stops the epoch for everyone, exactly as a thread stalled inside an operation
// does. Such a thread should call domain.thread_offline() (an extended quiescent state, as in
// liburcu's rcu_thread_offline); its next operation brings it back online. An exited thread never
// blocks: its record is offline, and its garbage goes to the orphanage.
// Garbage is NOT bounded.
//
// Needs from a container: only the start and end of each operation (the guard).
// Progress: lock-free operations; reclamation can be blocked by a stalled or idle thread.
// Differences from the papers: a thread is online from its first operation (it announces once, with
// a seq_cst exchange validated by a re-read of the epoch); thread_offline() and thread exit take it
// offline. The try-advance interval is a policy (advance_every<K>, default 64 quiescent states,
// chosen by the defaults sweep of docs/results.md; advance_every<1> tries at every one, as the
// classic formulation does). Lists of exited (or offline) threads keep their tags in the
// orphanage, and any live thread frees them at tag + 3; the free policy is a parameter.
#pragma once
#include <atomic>
#include <cstdint>
#include <string_view>

#include "../concepts.hpp"
#include "../core/policy.hpp"
#include "../core/region_guard.hpp"
#include "../free/batch.hpp"
#include "../policies.hpp"
#include "detail/epoch_engine.hpp"
#include "../core/sync.hpp"

namespace reclaim {

template <class... Policies>
struct qsbr : detail::epoch_scheme<qsbr<Policies...>> {
  // Its policies, as given in Policies... or by default: the free policy (batch_free) and
  // advance_every<K> (64: the epoch is tried at every K-th quiescent state).
  using free_policy = core::find_policy_t<free_policy_kind, batch_free, Policies...>;
  static constexpr unsigned advance_interval = core::policy_value<advance_every<64>, Policies...>;
  static_assert(
      (core::known_kinds<free_policy_kind, advance_kind>::template contains<Policies> && ...),
      "qsbr takes a free policy and advance_every<K>");

  // Its name in the lab and in messages.
  static constexpr std::string_view name = "qsbr";

  class domain;
  class guard;
  // What a reclaim::guard_ptr holds: a share in the thread's operation (core/region_guard.hpp).
  using protection = core::region_hold<domain>;
};

namespace detail {
template <class FreePolicy>
struct qsbr_record : epoch_record<FreePolicy> {
  // Read by a barrier: the last epoch at which the owner freed its lists three epochs old (and
  // drained its free policy, while a barrier runs).
  core::atomic<std::uint64_t> collected{0};
  // Owner only. Offline (never used, released, or thread_offline()), the record announces idle.
  bool online = false;
};
}  // namespace detail

// One qsbr instance's shared state: the epoch, the thread records with their limbo lists, and the
// garbage (core/domain.hpp). default_domain() is the one containers use unless given another.
template <class... Policies>
class qsbr<Policies...>::domain
    : public detail::epoch_engine<qsbr, detail::qsbr_record<free_policy>> {
  using engine = detail::epoch_engine<qsbr, detail::qsbr_record<free_policy>>;
  using typename engine::record;
  using typename engine::base;
  static constexpr std::uint64_t offline = engine::idle;

 public:
  ~domain() { this->shutdown(); }

  // The calling thread will run no operation for a while: it stops holding the epoch back, and
  // hands its garbage to the orphanage, since it will not free it while idle. Its next operation
  // brings it back online. Must not be called inside an operation.
  void thread_offline() noexcept {
    record& r = this->threads_.local();
    if (!r.online) return;
    go_offline(r);
    r.pending.flush(this->gauge_);
  }

 private:
  friend engine;
  friend base;
  friend class core::region_hold<domain>;

  // The fast path: a branch on an owner-only flag.
  record& begin(record& r) {
    if (r.enter() != 0) return r;
    if (!r.online) [[unlikely]] go_online(r);
    r.freeing.on_operation(r);
    return r;
  }

  void end(record& r) noexcept {
    if (r.leave()) quiescent_state(r);
  }

  // Why a list tagged t is safe at t+3. X unlinks n, then reads the epoch: t. X's announcements
  // before that were of epochs it read earlier, so <= t (read-read coherence); the epoch reaches
  // t+2 only after a scan saw X announce t+1 or go offline, both stores after the unlink (release;
  // the scan's load acquires), and the CAS to t+2 then carries the unlink to every thread that
  // reads the epoch at t+2 or later. Let R hold n in an operation O. The CAS to t+3 needs a scan
  // that saw R announce t+2 (or offline). If R first announced t+2 before O, R had read t+2 and O
  // cannot reach n. Otherwise that announcement, or R's going offline, follows O: O's reads happen
  // before the scan, the CAS, and the free by whoever reads t+3 (acquire). A record that comes
  // online during the scan: see go_online().
  void quiescent_state(record& r) noexcept {
    // seq_cst and acquire: epoch_clock::now(); it is a plain load on x86.
    std::uint64_t e = this->clock_.now();
    pass_quiescent_state(r, e);
    if (++r.paced >= advance_interval) [[unlikely]] {
      r.paced = 0;
      this->try_advance(r, e);
    }
  }

  // An online thread outside any operation, which read the epoch e.
  void pass_quiescent_state(record& r, std::uint64_t e) noexcept {
    if (e != r.seen_epoch) [[unlikely]] {
      // release: this operation's reads happen before a scan that reads this value (seq_cst load
      // in epoch_clock::all_allow()). Only the first store of a value matters (the argument
      // above), so an unchanged epoch stores nothing.
      r.announce.store(e, std::memory_order_release);
      on_new_epoch(r, e);
    }
  }

  // A thread coming online announces before its first read (the engine's announce-and-re-read):
  // a scan that misses the announcement precedes our re-read in S, and the scanner read its epoch
  // before scanning; so the scans that miss us are for epochs <= e and can allow at most
  // e -> e+1, which a quiescent state at e allows anyway: we are exactly a thread that passed a
  // quiescent state at e.
  [[gnu::noinline]] void go_online(record& r) {
    // Headers for the bags we hand over when we go offline again (thread_offline() used them).
    r.headers.reserve(record::orphan_batches);
    std::uint64_t was;
    const std::uint64_t e = this->clock_.announce(r.announce, was);
    r.online = true;
    if (e != r.seen_epoch) on_new_epoch(r, e);
  }

  void put_in_bag(record& r, core::retired_hook* node) {
    // The tag is an epoch value read after the unlink (sequenced before this retire), and no newer
    // than what our next quiescent state reads (coherence). acquire: pairs with the CAS in
    // epoch_clock::move_on(), since push() may free a list tagged three epochs before this value.
    r.bags.push(node, this->clock_.now(std::memory_order_acquire), r, this->gauge_);
  }

  // The engine's (our lists three or more epochs old, and the orphans), and the free policy's safe
  // garbage while a barrier waits for us.
  void on_new_epoch(record& r, std::uint64_t e) {
    engine::on_new_epoch(r, e);
    // seq_cst: a barrier's increment precedes its reading of the epoch it drives from, which
    // precedes every advance we may have seen (the order S); so while it waits for us, we see it.
    if (barriers_.load(std::memory_order_seq_cst) != 0) r.freeing.drain(r);
    // release: our frees happen before a barrier that reads this value (acquire).
    r.collected.store(e, std::memory_order_release);
  }

  // The caller is outside any operation: if online, it passes a quiescent state at each epoch it
  // sees (or it would hold the epoch back itself). Hides the engine's, for synchronize() too: an
  // operation that began before the call runs on an online thread whose last announcement the
  // engine sees, a; the advance to a+2 needs it to announce a+1, at a quiescent state after that
  // operation, or to go offline (quiescent_state()'s argument). A live thread that runs no
  // operation and is not offline announces nothing: it holds us until it does.
  bool drive_step(record& me, std::uint64_t e) {
    if (me.online) pass_quiescent_state(me, e);
    return this->try_advance(me, e);
  }

  // No borrowing (an operation begins with no RMW a borrower could order itself against): every
  // online thread frees its own lists when it sees the epoch three past their tags, and drains its
  // free policy while a barrier runs; a thread that went offline handed its lists to the
  // orphanage and drained its free policy. Every tag of the garbage retired before the call is at
  // most the epoch e read after the increment, so we drive the epoch to e+3 and wait for each
  // online thread to have collected there. A live thread that runs no operation and is not offline
  // never collects: it holds the barrier until it does (and it holds the epoch anyway).
  bool barrier_locked(record& me, core::deadline d) {
    barriers_.fetch_add(1, std::memory_order_seq_cst);
    typename base::gathered g;
    me.bags.take_all(g.unsafe);
    g.safe.splice(me.freeing.take());
    const std::uint64_t e = this->clock_.now();
    bool done = this->clock_.drive(e + detail::epoch_bags::lag, d,
                                   [&](std::uint64_t now) { return drive_step(me, now); });
    for (const record* r = this->threads_.head(); done && r; r = this->threads_.next_of(r)) {
      if (r == &me) continue;
      core::waiter w(d);
      // seq_cst: an offline record handed its lists over before (release store in go_offline());
      // acquire on collected: pairs with the release store in on_new_epoch().
      while (r->announce.load(std::memory_order_seq_cst) != offline &&
             r->collected.load(std::memory_order_acquire) < e + detail::epoch_bags::lag)
        if (!w.wait()) {
          done = false;
          break;
        }
    }
    const std::uint64_t now = this->clock_.now();
    g.safe.splice(this->take_safe_orphans(
        [now](std::uint64_t tag) { return detail::epoch_bags::safe(tag, now); }));
    barriers_.fetch_sub(1, std::memory_order_relaxed);
    return this->finish_barrier(me, g, done, e);
  }

  // Outside any operation, an online caller passes a quiescent state before and after one
  // advance; any caller then frees the orphans that are safe and its free policy's safe garbage.
  void flush_local(record& me) {
    const bool quiescent = me.level() == 0 && me.online;
    std::uint64_t e = this->clock_.now();
    if (quiescent) pass_quiescent_state(me, e);
    this->try_advance(me, e);
    e = this->clock_.now();
    if (quiescent)
      pass_quiescent_state(me, e);
    else
      this->free_safe_orphans(me,
                              [e](std::uint64_t tag) { return detail::epoch_bags::safe(tag, e); });
    me.freeing.drain(me);
  }

  // thread_offline() and thread exit: the engine's hand-over (an idle thread would not free its
  // lists), and the record stops holding the epoch back.
  void go_offline(record& r) noexcept {
    r.online = false;
    this->hand_over_and_leave(r);
  }

  // Thread exit: offline (a quiescent state, even if the thread left inside a guard: it will read
  // nothing more).
  void on_thread_exit(record& r) noexcept {
    go_offline(r);
    r.seen_epoch = 0;
  }

  core::atomic<unsigned> barriers_{0};  // barriers in progress (serialized: 0 or 1)
};

// An operation in d, from construction to destruction; the end of the outermost one is the
// thread's quiescent state. protect() is a plain load.
template <class... Policies>
class qsbr<Policies...>::guard : public core::region_scheme_guard<domain> {
 public:
  explicit guard(domain& d = qsbr::default_domain()) : core::region_scheme_guard<domain>(d) {}
};

}  // namespace reclaim
