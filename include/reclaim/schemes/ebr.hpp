// ebr: epoch-based reclamation (Fraser, PhD thesis 2004), and the machinery of ner (ner.hpp).
//
// What it is. A global epoch. A thread entering an operation (a critical region) announces the
// global epoch and is active until the operation ends. On region entries it tries to advance the
// epoch: it scans every record, and if every active thread announced the current epoch e, it CASes
// e -> e+1. Each thread has three limbo lists indexed by epoch mod 3; a node goes into the list of
// the epoch its retirer announced, and a list tagged e is freed once the thread sees the epoch at
// e+3 (see begin() for why three and not two). Fraser's threads try to advance on every region
// entry (ebr<advance_every<1>>); ours try every 64 entries by default, because the pass over all
// records and the CAS on the shared epoch line on every entry cost up to 2.4x the throughput
// (docs/results.md, "Defaults chosen by measurement"). ner (Hart et al. 2007) is the same template
// with paper 003's interval, 100.
//
// When to use it. Short operations, read-mostly or not; advance_every<1> when garbage must be
// freed as soon as possible and the pass over all records (O(threads) remote reads) on every entry
// is affordable. Prefer debra when there are many threads: it checks one record per K operations
// instead of all of them.
// Garbage is NOT bounded: a thread that stalls inside an operation stops the epoch, and every
// thread's lists grow until it resumes. A thread that exits (even inside an operation) blocks
// nothing: its record is idle, and its garbage goes to the orphanage.
//
// Needs from a container: only the start and end of each operation (the guard).
// Progress: lock-free operations; reclamation can be blocked by a stalled thread.
// Differences from the papers: Fraser's threads announce with a plain store after reading the
// epoch; ours re-read the epoch after announcing (one load) until the two agree, which makes the
// three-list argument hold in the C++ memory model (begin()). Limbo lists carry their epoch as a
// tag, so a thread that missed epochs frees all lists that are old enough at once, and an exited
// thread's lists keep their age in the orphanage: any live thread frees them once it sees their
// tag + 3. The free policy is a parameter.
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

// Flavour: the name and the default advance interval. ebr and ner are the same template.
template <class Flavour, class... Policies>
struct basic_ebr : core::scheme_base<basic_ebr<Flavour, Policies...>> {
  using free_policy = core::find_policy_t<free_policy_kind, batch_free, Policies...>;
  static constexpr unsigned advance_interval =
      core::find_policy_t<epoch_advance_kind, typename Flavour::default_interval,
                          Policies...>::value;
  static_assert(
      (core::known_kinds<free_policy_kind, epoch_advance_kind>::template contains<Policies> && ...),
      "ebr/ner take a free policy and advance_every<K>");

  static constexpr std::string_view name = Flavour::name;
  static constexpr reclaim::family family = reclaim::family::epoch;
  static constexpr bool bounds_garbage = false;
  static constexpr unsigned needs = needs_nothing;

  class domain;
  class guard;
  // What a reclaim::guard_ptr holds: a share in the thread's operation (core/region_guard.hpp).
  using protection = core::region_hold<domain>;
};

namespace detail {
struct ebr_flavour {
  static constexpr std::string_view name = "ebr";
  using default_interval = advance_every<64>;  // Fraser: advance_every<1> (see the top)
};
}  // namespace detail

// ebr<advance_every<K>, FreePolicy>: try to advance every 64 entries by default.
template <class... Policies>
using ebr = basic_ebr<detail::ebr_flavour, Policies...>;

namespace detail {
template <class FreePolicy>
struct ebr_record : core::thread_record<FreePolicy> {
  // The announcement of a thread outside any operation. The epoch starts at 1 and only grows, so
  // no valid announcement is 0.
  static constexpr std::uint64_t idle = 0;
  // The announcement while a barrier holds the garbage of the (idle) record: idle for scans.
  static constexpr std::uint64_t lent = std::uint64_t{1} << 63;
  static constexpr unsigned orphan_batches = epoch_bags::count;

  // Read by other threads' advance attempts.
  alignas(core::cache_line) std::atomic<std::uint64_t> announce{idle};
  // Owner only.
  alignas(core::cache_line) std::uint64_t local_epoch = 0;  // announced by the current operation
  epoch_bags bags;
  unsigned entries_since_attempt = 0;

  void destroy_garbage() noexcept { bags.destroy_all(); }
};
}  // namespace detail

template <class Flavour, class... Policies>
class basic_ebr<Flavour, Policies...>::domain
    : public core::domain_base<domain, detail::ebr_record<free_policy>> {
  using record = detail::ebr_record<free_policy>;
  using base = core::domain_base<domain, record>;
  static constexpr std::uint64_t idle = record::idle, lent = record::lent;

 public:
  using guard_type = basic_ebr::guard;
  static constexpr bool grace_periods = true;
  // Each flush_local() advances the epoch once if no thread holds it back (domain_base::detach()).
  static constexpr unsigned exit_flushes = detail::epoch_bags::lag;
  using base::retire;  // domain.retire(node[, deleter]) from any thread

  domain() = default;
  ~domain() { this->shutdown(); }

 private:
  friend class core::region_hold<domain>;
  friend base;

  // Why a list tagged e is safe at e+3 and not e+2. Let X retire node n while announcing e, and R
  // be a thread still holding n.
  //  (1) R announced at most e+1: if R had read e+2 or later, the epoch had passed e+1, so some
  //      scan saw X idle or in a later operation (X's release store in end(), that scan's acquire),
  //      after the unlink of n; the advancing CAS and R's load of the epoch carry that to R, whose
  //      reads then cannot reach n.
  //  (2) While R is active with announcement a, the epoch stays <= a+1: R re-read the epoch after
  //      its seq_cst exchange and found a, so every CAS to a+1 or beyond follows that load in the
  //      single order S, and so does every scan that could allow a+2; such a scan reads R's
  //      announcement (seq_cst load after the exchange in S) and stops at a != a+1.
  // Hence while R may hold n the epoch is <= e+2; a list tagged e is freed at e+3. Without the
  // re-read, R could announce a stale a while scans that missed its exchange move the epoch on.
  record& begin(record& r) {
    if (r.enter() != 0) return r;
    // seq_cst (both loads and the exchange): the argument (2) above is about the order S; the
    // loads pair with the seq_cst CAS in try_advance(), the exchange with the seq_cst load in
    // can_advance(). Acquire part of the load: what the advancer learned from its scan (that
    // retirers of old lists left their operations) happens before we free those lists.
    std::uint64_t e = epoch_.load(std::memory_order_seq_cst);
    // Full fence (seq_cst RMW): the announcement is visible before this operation's first read of
    // a shared pointer; a plain store could sit in x86's store buffer while we read a node. An RMW
    // also tells us whether a barrier holds our garbage (thread_record::try_borrow); only the
    // first can (a barrier borrows an idle record only).
    const std::uint64_t was = r.announce.exchange(e, std::memory_order_seq_cst);
    for (std::uint64_t now; (now = epoch_.load(std::memory_order_seq_cst)) != e;) {
      e = now;
      r.announce.exchange(e, std::memory_order_seq_cst);
    }
    if (was == lent) [[unlikely]] r.wait_until_given_back();
    this->answer_handover(r);  // a barrier that could not borrow us asks
    if (e != r.local_epoch) [[unlikely]] on_new_epoch(r, e);
    r.freeing.on_operation(r);
    if (++r.entries_since_attempt >= advance_interval) [[unlikely]] {
      r.entries_since_attempt = 0;
      try_advance(r, e);
    }
    return r;
  }

  void end(record& r) noexcept {
    if (!r.leave()) return;
    // release: our reads of nodes in this operation happen before a scan that sees us idle
    // (seq_cst load in can_advance()) lets the epoch move on towards freeing them.
    r.announce.store(idle, std::memory_order_release);
  }

  void retire(record& r, core::retired_hook* node) {
    r.bags.push(node, r.local_epoch, r, this->gauge_);
    r.count_retired(this->gauge_);
  }

  // Seen at entry: free every list three or more epochs old, our own and those exited threads
  // handed over with their tags.
  void on_new_epoch(record& r, std::uint64_t e) {
    r.saw_new_epoch(r.bags.size());
    r.local_epoch = e;
    r.bags.collect(e, r, this->gauge_);
    this->free_safe_orphans(r, [e](std::uint64_t tag) { return detail::epoch_bags::safe(tag, e); });
  }

  // Every active thread announced e: a full pass over the records.
  bool can_advance(std::uint64_t e) const noexcept {
    for (const record* other = this->threads_.head(); other;
         other = decltype(this->threads_)::next_of(other)) {
      // seq_cst: pairs with the exchange in begin() (argument (2)); acquire part: an idle
      // announcement carries the other thread's completed reads (release in end(), detach()).
      std::uint64_t a = other->announce.load(std::memory_order_seq_cst);
      if (a != idle && a != lent && a != e) return false;
    }
    return true;
  }

  // Slow path, out of line: one pass and a CAS; whether the epoch moved past e. Records registered
  // during the pass read the epoch after registering, so they announce e or later; missing them is
  // safe.
  [[gnu::noinline]] bool try_advance(record& r, std::uint64_t e) {
    core::scan_timer timer(r.ctr);
    if (!can_advance(e)) return false;
    std::uint64_t expected = e;
    // seq_cst: in the order S of argument (2), and a release for whoever reads the new epoch
    // (the loads in begin()): what this scan saw (retirers gone) happens before their frees.
    if (epoch_.compare_exchange_strong(expected, e + 1, std::memory_order_seq_cst,
                                       std::memory_order_relaxed))
      r.count_epoch_advance(e + 1);
    return true;
  }

  // An operation that began before the call is seen announcing a (or it has ended), and keeps the
  // epoch <= a+1 while it runs (argument (2) of begin()): the epoch reaches a+2 only after it
  // ended. An operation that begins once the epoch has moved on announces a later epoch and does
  // not hold that target.
  bool wait_for_grace_period(record& me, core::deadline d) {
    std::uint64_t target = 0;
    this->threads_.for_each([&](const record& r) {
      // seq_cst: after the exchange of an operation that began before the call (argument (2)).
      const std::uint64_t a = r.announce.load(std::memory_order_seq_cst);
      if (a != idle && a != lent) target = std::max(target, a + 2);
    });
    return detail::drive_epoch(epoch_, target, d,
                               [&](std::uint64_t e) { return try_advance(me, e); });
  }

  static void take_garbage(record& r, typename base::gathered& into) noexcept {
    r.bags.take_all(into.unsafe);
    into.safe.splice(r.freeing.take());
  }

  // Our garbage, then every other record's (borrowed while idle) and the orphans: every tag is at
  // most the epoch e read after, so all of it is safe at e+3 (begin()).
  bool barrier_locked(record& me, core::deadline d) {
    typename base::gathered g;
    bool done = this->gather(me, g, d, [](record& r, typename base::gathered& into) {
      return base::borrow_if_idle(r, r.announce, idle, lent, into);
    });
    const std::uint64_t e = epoch_.load(std::memory_order_seq_cst);
    done = done && detail::drive_epoch(epoch_, e + 3, d, [&](std::uint64_t now) {
      return try_advance(me, now);
    });
    return this->finish_barrier(me, g, done, e);
  }

  // An operation of our own (which holds our garbage against a barrier), one advance if every
  // thread allows it, what that makes safe, and the free policy's safe garbage.
  void flush_local(record& me) {
    record& r = begin(me);
    try_advance(r, r.local_epoch);
    const std::uint64_t e = epoch_.load(std::memory_order_seq_cst);
    if (e != r.local_epoch) on_new_epoch(r, e);  // a later tag for later retires is only safer
    r.freeing.drain(r);
    end(r);
  }

  // Thread exit: the record holds its garbage (a non-idle announcement, even if the thread left
  // inside a guard), its lists go to the orphanage with their tags and its free policy is
  // drained, and then it goes idle. entries_since_attempt is kept: short-lived threads that reuse
  // this record still get to advance the epoch.
  void on_thread_exit(record& r) noexcept {
    // An epoch no newer than the current one (never idle: the epoch starts at 1).
    const std::uint64_t holding = r.local_epoch == 0 ? 1 : r.local_epoch;
    if (r.announce.exchange(holding, std::memory_order_seq_cst) == lent)
      r.wait_until_given_back();
    r.bags.hand_over([&](core::retired_list&& bag, std::uint64_t tag) {
      this->orphan(r, std::move(bag), tag);
    });
    r.freeing.drain(r);
    r.local_epoch = 0;
    // release: pairs with the seq_cst load in can_advance(), as in end().
    r.announce.store(idle, std::memory_order_release);
  }

  // In a child of fork(): r's thread does not exist here (core/registry.hpp). Idle, it holds the
  // epoch back no more.
  void forget_thread(record& r) noexcept { r.announce.store(idle, std::memory_order_relaxed); }

  alignas(core::cache_line) std::atomic<std::uint64_t> epoch_{1};
};

template <class Flavour, class... Policies>
class basic_ebr<Flavour, Policies...>::guard : public core::region_scheme_guard<domain> {
 public:
  explicit guard(domain& d = basic_ebr::default_domain())
      : core::region_scheme_guard<domain>(d) {}
};

}  // namespace reclaim
