// debra: distributed epoch-based reclamation (Brown, PODC 2015).
//
// What it is. A global epoch; each thread announces the epoch it saw at the start of an operation,
// with a quiescent bit that is set between operations. Every k operations a thread checks one other
// thread's announcement; once it has seen every thread quiescent or caught up with the current
// epoch, it tries to advance the epoch. A thread retires into one of three limbo bags, tagged with
// the epoch it announced, and frees a bag once it sees the epoch three past the bag's tag (see
// on_new_epoch() for why three and not two).
//
// When to use it. Operations are cheap (one fenced RMW per operation, no per-read cost), so it is a
// good default for any structure whose operations are short. Garbage is NOT bounded: one thread that
// stalls inside an operation stops the epoch, and every thread's bags grow until it resumes.
//
// Needs from a container: only the start and end of each operation (the guard).
// Progress: lock-free operations; reclamation can be blocked by a stalled thread.
// Differences from the paper: DEBRA+ neutralization is not included (see nbr for a neutralizing
// scheme). The bags carry their epoch as a tag instead of rotating one bag per epoch change seen, so
// a thread that missed epochs frees every bag old enough at once, and an exited thread's bags keep
// their age in the orphanage: any live thread frees them once it sees their tag + 3. For the tag to
// mean that, a thread re-reads the epoch after announcing (one load of a read-mostly line) until
// the two agree, as ebr does (begin()).
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>

#include "../concepts.hpp"
#include "../core/domain.hpp"
#include "../core/policy.hpp"
#include "../core/region_guard.hpp"
#include "../free/batch.hpp"
#include "detail/epoch_bags.hpp"

namespace reclaim {

// debra<check_every<K>>: check one other thread every K operations (paper 003 uses 20).
struct debra_check_kind {};
template <unsigned K>
struct check_every {
  static_assert(K > 0);
  using policy_kind = debra_check_kind;
  static constexpr unsigned value = K;
};

template <class... Policies>
struct debra : core::scheme_base<debra<Policies...>> {
  using free_policy = core::find_policy_t<free_policy_kind, batch_free, Policies...>;
  static constexpr unsigned check_interval =
      core::find_policy_t<debra_check_kind, check_every<20>, Policies...>::value;
  static_assert((core::known_kinds<free_policy_kind, debra_check_kind>::template contains<Policies> &&
                 ...),
                "debra takes a free policy and check_every<K>");

  static constexpr std::string_view name = "debra";
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
struct debra_record : core::thread_record<FreePolicy> {
  // An announcement is (epoch << 1) | quiescent, with lent_bit added while a barrier holds the
  // garbage of the (quiescent) record.
  static constexpr std::uint64_t quiescent_bit = 1, lent_bit = std::uint64_t{1} << 63;
  static constexpr unsigned orphan_batches = epoch_bags::count;

  // Read by other threads' checks.
  alignas(core::cache_line) std::atomic<std::uint64_t> announce{quiescent_bit};
  // Owner only.
  alignas(core::cache_line) std::uint64_t seen_epoch = 0;
  epoch_bags bags;  // tagged with seen_epoch at retire
  unsigned ops_since_check = 0;
  debra_record* check_cursor = nullptr;  // next record to check; nullptr: start a pass at the head

  void destroy_garbage() noexcept { bags.destroy_all(); }
};
}  // namespace detail

template <class... Policies>
class debra<Policies...>::domain
    : public core::domain_base<domain, detail::debra_record<free_policy>> {
  using record = detail::debra_record<free_policy>;
  using base = core::domain_base<domain, record>;
  static constexpr std::uint64_t quiescent_bit = record::quiescent_bit, lent_bit = record::lent_bit;

 public:
  using guard_type = debra::guard;
  static constexpr bool grace_periods = true;
  // Each flush_local() advances the epoch once if no thread holds it back (domain_base::detach()).
  static constexpr unsigned exit_flushes = detail::epoch_bags::lag;
  using base::retire;  // domain.retire(node[, deleter]) from any thread

  domain() = default;
  ~domain() { this->shutdown(); }

 private:
  friend class core::region_hold<domain>;
  friend base;

  // Why a node tagged e is safe at e+3 (the argument of ebr.hpp, which debra's checks satisfy).
  //  (1) While R is in an operation announced a, the epoch stays <= a+1: R re-read the epoch after
  //      its exchange and found a, so a check of R that missed the exchange (read R quiescent)
  //      precedes it in the single order S, and so does the checker's own read of the epoch p it
  //      checks for: p <= a, and that pass can advance to p+1 <= a+1 at most. A later pass needs R
  //      quiescent or announcing a+1.
  //  (2) A reader R that holds n announced at most e+1, where e is the tag (the retirer X's
  //      validated announcement): had R read e+2 or more, the advance to e+2 came from a pass that
  //      saw X quiescent after the operation that unlinked n (by (1), not during it), so the
  //      unlink happens before R's reads (X's release store in end(), the check's acquire, the
  //      CAS, R's load of the epoch).
  // Hence the epoch reaches e+3 only once every reader that may hold n has left its operation.
  // Without the re-read, a thread could announce a stale epoch after a check had seen it quiescent
  // (paper's DEBRA counts the epoch changes it observes instead, which tags cannot).
  record& begin(record& r) {
    if (r.enter() != 0) return r;
    // seq_cst loads and exchange: the order S of argument (1); the loads pair with the CAS in
    // try_advance() (acquire: what the checks saw happens before the frees of on_new_epoch()),
    // the exchange with the seq_cst load in check_one().
    std::uint64_t e = epoch_.load(std::memory_order_seq_cst);
    // Full fence (seq_cst RMW): the announcement is visible before this operation's first read of
    // a shared pointer; a plain store could sit in x86's store buffer while we read a node. An RMW
    // also tells us whether a barrier holds our garbage (thread_record::try_borrow); only the
    // first can (a barrier borrows a quiescent record only).
    const std::uint64_t was = r.announce.exchange(e << 1, std::memory_order_seq_cst);
    for (std::uint64_t now; (now = epoch_.load(std::memory_order_seq_cst)) != e;) {
      e = now;
      r.announce.exchange(e << 1, std::memory_order_seq_cst);
    }
    if (was & lent_bit) [[unlikely]] r.wait_until_given_back();
    this->answer_handover(r);  // a barrier that could not borrow us asks
    if (e != r.seen_epoch) [[unlikely]] on_new_epoch(r, e);
    r.freeing.on_operation(r);
    if (++r.ops_since_check >= check_interval) [[unlikely]] {
      r.ops_since_check = 0;
      check_one(r, e);
    }
    return r;
  }

  void end(record& r) noexcept {
    if (!r.leave()) return;
    // release: our reads of nodes in this operation happen before a checker that sees us
    // quiescent (acquire in check_one()) lets the epoch advance towards freeing them.
    r.announce.store((r.seen_epoch << 1) | quiescent_bit, std::memory_order_release);
  }

  void retire(record& r, core::retired_hook* node) {
    r.bags.push_open(node);  // tagged with the epoch of this operation (on_new_epoch())
    r.count_retired(this->gauge_);
  }

  // Frees every bag three epochs old (begin() says why three and not two: a reader that announced
  // e+1 may hold a node tagged e and still let the epoch reach e+2), and the orphans of exited
  // threads, which kept their tags, by the same rule.
  void on_new_epoch(record& r, std::uint64_t e) {
    r.saw_new_epoch(r.bags.size());
    r.seen_epoch = e;
    r.check_cursor = nullptr;
    r.bags.collect(e, r, this->gauge_);
    r.bags.open(e, r, this->gauge_);
    this->free_safe_orphans(r, [e](std::uint64_t tag) { return detail::epoch_bags::safe(tag, e); });
  }

  void check_one(record& r, std::uint64_t e) {
    core::scan_timer timer(r.ctr);
    record* other = r.check_cursor ? r.check_cursor : this->threads_.head();
    // seq_cst: pairs with the exchange in begin(); acquire part: a quiescent announcement carries
    // the other thread's completed reads (release in end()).
    std::uint64_t a = other->announce.load(std::memory_order_seq_cst);
    if ((a & quiescent_bit) == 0 && (a >> 1) != e) return;  // it still runs in an older epoch
    r.check_cursor = decltype(this->threads_)::next_of(other);
    if (r.check_cursor == nullptr) try_advance(r, e);
  }

  // Every thread was quiescent or in epoch e when we looked. Threads registered after the pass began
  // read the epoch after their registration, so they announce e or later: skipping them is safe.
  void try_advance(record& r, std::uint64_t e) {
    std::uint64_t expected = e;
    // seq_cst: release publishes what we learned (the others' acquired reads) to whoever sees the
    // new epoch (the loads in begin()); in the order S of argument (1) with those loads.
    if (epoch_.compare_exchange_strong(expected, e + 1, std::memory_order_seq_cst,
                                       std::memory_order_relaxed))
      r.count_epoch_advance(e + 1);
  }

  // Every record quiescent or in epoch e: check_one()'s pass, all at once (synchronize()).
  bool can_advance(std::uint64_t e) const noexcept {
    for (const record* other = this->threads_.head(); other;
         other = decltype(this->threads_)::next_of(other)) {
      // seq_cst and acquire: as in check_one().
      const std::uint64_t a = other->announce.load(std::memory_order_seq_cst);
      if ((a & quiescent_bit) == 0 && (a >> 1) != e) return false;
    }
    return true;
  }
  bool advance(record& r, std::uint64_t e) {
    if (!can_advance(e)) return false;
    try_advance(r, e);
    return true;
  }

  // An operation that began before the call is seen announcing a (or it has ended), and keeps the
  // epoch <= a+1 while it runs (argument (1) of begin()): the epoch reaches a+2 only after it
  // ended. An operation that begins once the epoch has moved on announces a later epoch and does
  // not hold that target.
  bool wait_for_grace_period(record& me, core::deadline d) {
    std::uint64_t target = 0;
    this->threads_.for_each([&](const record& r) {
      // seq_cst: after the exchange of an operation that began before the call (argument (1)).
      const std::uint64_t a = r.announce.load(std::memory_order_seq_cst);
      if ((a & quiescent_bit) == 0) target = std::max(target, (a >> 1) + 2);
    });
    return detail::drive_epoch(epoch_, target, d, [&](std::uint64_t e) { return advance(me, e); });
  }

  static void take_garbage(record& r, typename base::gathered& into) noexcept {
    r.bags.take_all(into.unsafe);
    into.safe.splice(r.freeing.take());
  }

  // Our garbage, then every other record's (borrowed while quiescent) and the orphans: every tag is
  // at most the epoch e read after, so all of it is safe at e+3 (begin()).
  bool barrier_locked(record& me, core::deadline d) {
    typename base::gathered g;
    bool done = this->gather(me, g, d, [](record& r, typename base::gathered& into) {
      const std::uint64_t a = r.announce.load(std::memory_order_relaxed);
      if ((a & quiescent_bit) == 0) return false;  // in an operation: try again later
      return base::borrow_if_idle(r, r.announce, a, a | lent_bit, into);
    });
    const std::uint64_t e = epoch_.load(std::memory_order_seq_cst);
    done = done && detail::drive_epoch(epoch_, e + 3, d, [&](std::uint64_t now) {
      return advance(me, now);
    });
    return this->finish_barrier(me, g, done, e);
  }

  // An operation of our own (which holds our garbage against a barrier), one advance if every
  // thread allows it, what that makes safe, and the free policy's safe garbage.
  void flush_local(record& me) {
    record& r = begin(me);
    advance(r, r.seen_epoch);
    const std::uint64_t e = epoch_.load(std::memory_order_seq_cst);
    if (e != r.seen_epoch) on_new_epoch(r, e);  // a later tag for later retires is only safer
    r.freeing.drain(r);
    end(r);
  }

  // Thread exit: the record holds its garbage (an announcement that is not quiescent, even if the
  // thread left inside a guard), its bags go to the orphanage with their tags and its free policy
  // is drained, and then it goes quiescent. The progress of its checks is kept (ops_since_check,
  // and the pass with the epoch it is for): a run of short-lived threads that reuse this record,
  // each running fewer operations than a pass takes, must still complete passes together, or the
  // epoch would never advance. The checks of a pass are valid whoever made them, as long as the
  // epoch did not change (on_new_epoch() starts a new pass).
  void on_thread_exit(record& r) noexcept {
    if (r.announce.exchange(r.seen_epoch << 1, std::memory_order_seq_cst) & lent_bit)
      r.wait_until_given_back();
    r.bags.hand_over([&](core::retired_list&& bag, std::uint64_t tag) {
      this->orphan(r, std::move(bag), tag);
    });
    r.freeing.drain(r);
    // release: pairs with the seq_cst loads of the checks, as in end().
    r.announce.store((r.seen_epoch << 1) | quiescent_bit, std::memory_order_release);
  }

  // In a child of fork(): r's thread does not exist here (core/registry.hpp). Quiescent, it holds
  // the epoch back no more.
  void forget_thread(record& r) noexcept {
    r.announce.store((r.seen_epoch << 1) | quiescent_bit, std::memory_order_relaxed);
  }

  alignas(core::cache_line) std::atomic<std::uint64_t> epoch_{1};
};

template <class... Policies>
class debra<Policies...>::guard : public core::region_scheme_guard<domain> {
 public:
  explicit guard(domain& d = debra::default_domain()) : core::region_scheme_guard<domain>(d) {}
};

}  // namespace reclaim
