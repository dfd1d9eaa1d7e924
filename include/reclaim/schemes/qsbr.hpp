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
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string_view>

#include "../concepts.hpp"
#include "../core/domain.hpp"
#include "../core/policy.hpp"
#include "../core/region_guard.hpp"
#include "../free/batch.hpp"
#include "detail/epoch_bags.hpp"

namespace reclaim {

template <class... Policies>
struct qsbr : core::scheme_base<qsbr<Policies...>> {
  using free_policy = core::find_policy_t<free_policy_kind, batch_free, Policies...>;
  static constexpr unsigned advance_interval =
      core::find_policy_t<epoch_advance_kind, advance_every<64>, Policies...>::value;
  static_assert(
      (core::known_kinds<free_policy_kind, epoch_advance_kind>::template contains<Policies> && ...),
      "qsbr takes a free policy and advance_every<K>");

  static constexpr std::string_view name = "qsbr";
  static constexpr reclaim::family family = reclaim::family::epoch;
  static constexpr bool bounds_garbage = false;
  static constexpr unsigned needs = needs_nothing;

  class domain;
  class guard;
  // What a reclaim::guard_ptr holds: a share in the thread's operation (core/region_guard.hpp).
  using protection = core::region_hold<domain>;
};

namespace detail {
template <class FreePolicy>
struct qsbr_record : core::thread_record<FreePolicy> {
  // The announcement of an offline record (never used, released, or thread_offline()). The epoch
  // starts at 1 and only grows, so no announced epoch is 0.
  static constexpr std::uint64_t offline = 0;
  static constexpr unsigned orphan_batches = epoch_bags::count;

  // Read by other threads' advance attempts: the epoch seen at the last quiescent state.
  alignas(core::cache_line) std::atomic<std::uint64_t> announce{offline};
  // Read by a barrier: the last epoch at which the owner freed its lists three epochs old (and
  // drained its free policy, while a barrier runs).
  std::atomic<std::uint64_t> collected{0};
  // Owner only.
  alignas(core::cache_line) std::uint64_t local_epoch = 0;  // the value announced
  bool online = false;
  epoch_bags bags;
  unsigned states_since_attempt = 0;

  void destroy_garbage() noexcept { bags.destroy_all(); }
};
}  // namespace detail

template <class... Policies>
class qsbr<Policies...>::domain
    : public core::domain_base<domain, detail::qsbr_record<free_policy>> {
  using record = detail::qsbr_record<free_policy>;
  using base = core::domain_base<domain, record>;
  static constexpr std::uint64_t offline = record::offline;

 public:
  using guard_type = qsbr::guard;
  static constexpr bool grace_periods = true;
  // Each flush_local() advances the epoch once if no thread holds it back (domain_base::detach()).
  static constexpr unsigned exit_flushes = detail::epoch_bags::lag;
  using base::retire;  // domain.retire(node[, deleter]) from any thread

  domain() = default;
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
  friend class core::region_hold<domain>;
  friend base;

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

  // In a child of fork(): r's thread does not exist here (core/registry.hpp). Offline, it holds no
  // grace period back.
  void forget_thread(record& r) noexcept { r.announce.store(offline, std::memory_order_relaxed); }

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
    // seq_cst: the scanner's view of the epoch must be in the order S (go_online()); it is a plain
    // load on x86. Acquire part: pairs with the CAS in try_advance(), so that what its scan saw
    // (every retirer of lists we free passed a later quiescent state) happens before our frees.
    std::uint64_t e = epoch_.load(std::memory_order_seq_cst);
    pass_quiescent_state(r, e);
    if (++r.states_since_attempt >= advance_interval) [[unlikely]] {
      r.states_since_attempt = 0;
      try_advance(r, e);
    }
  }

  // An online thread outside any operation, which read the epoch e.
  void pass_quiescent_state(record& r, std::uint64_t e) noexcept {
    if (e != r.local_epoch) [[unlikely]] {
      // release: this operation's reads happen before a scan that reads this value (seq_cst load
      // in can_advance()). Only the first store of a value matters (the argument above), so an
      // unchanged epoch stores nothing.
      r.announce.store(e, std::memory_order_release);
      on_new_epoch(r, e);
    }
  }

  // A thread coming online announces before its first read, then re-reads the epoch until it finds
  // the value it announced, e. A scan that misses the announcement (its seq_cst load precedes our
  // exchange in S) precedes our re-read too, and the scanner read its epoch before scanning; so the
  // scans that miss us are for epochs <= e and can allow at most e -> e+1, which a quiescent state
  // at e allows anyway: we are exactly a thread that passed a quiescent state at e.
  [[gnu::noinline]] void go_online(record& r) {
    // Headers for the bags we hand over when we go offline again (thread_offline() used them).
    r.headers.reserve(record::orphan_batches);
    std::uint64_t e = epoch_.load(std::memory_order_seq_cst);
    for (;;) {
      // Full fence (seq_cst RMW): visible before our first read of a shared pointer; pairs with
      // the seq_cst load in can_advance().
      r.announce.exchange(e, std::memory_order_seq_cst);
      std::uint64_t now = epoch_.load(std::memory_order_seq_cst);
      if (now == e) break;
      e = now;
    }
    r.online = true;
    if (e != r.local_epoch) on_new_epoch(r, e);
  }

  void retire(record& r, core::retired_hook* node) {
    // The tag is an epoch value read after the unlink (sequenced before this retire), and no newer
    // than what our next quiescent state reads (coherence). acquire: pairs with the CAS in
    // try_advance(), since push() may free a list tagged three epochs before this value.
    r.bags.push(node, epoch_.load(std::memory_order_acquire), r, this->gauge_);
    r.count_retired(this->gauge_);
  }

  // Frees our lists three or more epochs old, and those that exited or offline threads handed over
  // with their tags.
  void on_new_epoch(record& r, std::uint64_t e) {
    r.saw_new_epoch(r.bags.size());
    r.local_epoch = e;
    r.bags.collect(e, r, this->gauge_);
    this->free_safe_orphans(r, [e](std::uint64_t tag) { return detail::epoch_bags::safe(tag, e); });
    // seq_cst: a barrier's increment precedes its reading of the epoch it drives from, which
    // precedes every advance we may have seen (the order S); so while it waits for us, we see it.
    if (barriers_.load(std::memory_order_seq_cst) != 0) r.freeing.drain(r);
    // release: our frees happen before a barrier that reads this value (acquire).
    r.collected.store(e, std::memory_order_release);
  }

  bool can_advance(std::uint64_t e) const noexcept {
    for (const record* other = this->threads_.head(); other;
         other = decltype(this->threads_)::next_of(other)) {
      // seq_cst: pairs with the exchange in go_online(); acquire part: pairs with the release
      // stores in quiescent_state(), thread_offline() and detach().
      std::uint64_t a = other->announce.load(std::memory_order_seq_cst);
      if (a != offline && a != e) return false;
    }
    return true;
  }

  // Whether the epoch moved past e (by our CAS or another's).
  [[gnu::noinline]] bool try_advance(record& r, std::uint64_t e) {
    core::scan_timer timer(r.ctr);
    if (!can_advance(e)) return false;
    std::uint64_t expected = e;
    // seq_cst: in the order S of go_online(); release for the loads of the new epoch.
    if (epoch_.compare_exchange_strong(expected, e + 1, std::memory_order_seq_cst,
                                       std::memory_order_relaxed))
      r.count_epoch_advance(e + 1);
    return true;
  }

  // The caller is outside any operation: if online, it passes a quiescent state at each epoch it
  // sees (or it would hold the epoch back itself).
  bool advance_as_quiescent(record& me, std::uint64_t e) {
    if (me.online) pass_quiescent_state(me, e);
    return try_advance(me, e);
  }

  // An operation that began before the call runs on an online thread whose last announcement we
  // see, a (or a later one, or offline); the advance to a+2 needs it to announce a+1, at a
  // quiescent state after that operation, or to go offline (quiescent_state()'s argument). A live
  // thread that runs no operation and is not offline announces nothing: it holds us until it does.
  bool wait_for_grace_period(record& me, core::deadline d) {
    std::uint64_t target = 0;
    this->threads_.for_each([&](const record& r) {
      // seq_cst: in the order S of go_online().
      const std::uint64_t a = r.announce.load(std::memory_order_seq_cst);
      if (&r != &me && a != offline) target = std::max(target, a + 2);
    });
    return detail::drive_epoch(epoch_, target, d,
                               [&](std::uint64_t e) { return advance_as_quiescent(me, e); });
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
    const std::uint64_t e = epoch_.load(std::memory_order_seq_cst);
    bool done = detail::drive_epoch(epoch_, e + 3, d, [&](std::uint64_t now) {
      return advance_as_quiescent(me, now);
    });
    for (const record* r = this->threads_.head(); done && r; r = this->threads_.next_of(r)) {
      if (r == &me) continue;
      core::waiter w(d);
      // seq_cst: an offline record handed its lists over before (release store in go_offline());
      // acquire on collected: pairs with the release store in on_new_epoch().
      while (r->announce.load(std::memory_order_seq_cst) != offline &&
             r->collected.load(std::memory_order_acquire) < e + 3)
        if (!w.wait()) {
          done = false;
          break;
        }
    }
    const std::uint64_t now = epoch_.load(std::memory_order_seq_cst);
    g.safe.splice(this->take_safe_orphans(
        [now](std::uint64_t tag) { return detail::epoch_bags::safe(tag, now); }));
    barriers_.fetch_sub(1, std::memory_order_relaxed);
    return this->finish_barrier(me, g, done, e);
  }

  // Outside any operation, an online caller passes a quiescent state before and after one
  // advance; any caller then frees the orphans that are safe and its free policy's safe garbage.
  void flush_local(record& me) {
    const bool quiescent = me.level() == 0 && me.online;
    std::uint64_t e = epoch_.load(std::memory_order_seq_cst);
    if (quiescent) pass_quiescent_state(me, e);
    try_advance(me, e);
    e = epoch_.load(std::memory_order_seq_cst);
    if (quiescent)
      pass_quiescent_state(me, e);
    else
      this->free_safe_orphans(me,
                              [e](std::uint64_t tag) { return detail::epoch_bags::safe(tag, e); });
    me.freeing.drain(me);
  }

  // thread_offline() and thread exit: the record's lists go to the orphanage with their tags, since
  // an idle thread would not free them, its free policy is drained, and it stops holding the epoch
  // back.
  void go_offline(record& r) noexcept {
    r.online = false;
    r.bags.hand_over([&](core::retired_list&& bag, std::uint64_t tag) {
      this->orphan(r, std::move(bag), tag);
    });
    r.freeing.drain(r);
    // release: the reads of our past operations happen before a scan that sees us offline (seq_cst
    // load in can_advance()), as at a quiescent state; and the hand-over before a barrier's.
    r.announce.store(offline, std::memory_order_release);
  }

  // Thread exit: offline (a quiescent state, even if the thread left inside a guard: it will read
  // nothing more).
  void on_thread_exit(record& r) noexcept {
    go_offline(r);
    r.local_epoch = 0;
  }

  alignas(core::cache_line) std::atomic<std::uint64_t> epoch_{1};
  std::atomic<unsigned> barriers_{0};  // barriers in progress (serialized: 0 or 1)
};

template <class... Policies>
class qsbr<Policies...>::guard : public core::region_scheme_guard<domain> {
 public:
  explicit guard(domain& d = qsbr::default_domain()) : core::region_scheme_guard<domain>(d) {}
};

}  // namespace reclaim
