// SPDX-License-Identifier: MIT
// rcu: per-operation epoch reservation, as the "rcu" scheme of the IBR benchmark (Wen et al.,
// PPoPP 2018; paper 001's artifact).
//
// What it is. A global epoch. Each operation reserves the current epoch at its start and clears
// the reservation at its end. Every N retires (per thread, advance_every<N>, default 32) a thread
// increments the epoch. Each retired node is stamped with the epoch at its retire (node_base adds
// the stamp). Every M retires (scan_every<M>, default 128) a thread scans its retired list: a node
// is freed when its stamp is below every current reservation.
//
// When to use it. Workloads where retires are frequent enough to drive the epoch (it advances only
// on retires, with no pass over the records); it is the simplest epoch scheme and frees in order
// of age. Do not expect frees from a thread that only reads: scans run on retires.
// Garbage is NOT bounded: a thread stalled inside an operation keeps its reservation and blocks
// every node retired at or after it. A thread between operations reserves nothing and blocks
// nothing; neither does an exited thread (its garbage goes to the orphanage, stamps and all).
//
// Needs from a container: only the start and end of each operation (the guard).
// Progress: lock-free operations; reclamation can be blocked by a stalled thread.
// Differences from the benchmark: the reservation is a seq_cst exchange re-validated by a re-read
// of the epoch, and the stamp is read with a seq_cst RMW (fetch_add(0)) instead of a load, so that
// the argument holds in the C++ memory model, not only on x86 (see retire()). "No reservation" is
// the largest epoch value, which no epoch reaches, never 0. Orphans are adopted at scans.
#pragma once
#include <atomic>
#include <cstdint>
#include <limits>
#include <string_view>

#include "../concepts.hpp"
#include "../core/domain.hpp"
#include "../core/policy.hpp"
#include "../core/region_guard.hpp"
#include "../free/batch.hpp"
#include "../policies.hpp"
#include "detail/epoch_engine.hpp"
#include "../core/sync.hpp"

namespace reclaim {

template <class... Policies>
struct rcu : detail::epoch_scheme<rcu<Policies...>> {
  // Its policies, as given in Policies... or by default: the free policy (batch_free),
  // advance_every<N> (32: the epoch grows by one every N retires) and scan_every<M> (128: a thread
  // scans its retired list every M retires).
  using free_policy = core::find_policy_t<free_policy_kind, batch_free, Policies...>;
  static constexpr unsigned epoch_frequency = core::policy_value<advance_every<32>, Policies...>;
  static constexpr unsigned empty_frequency = core::policy_value<scan_every<128>, Policies...>;
  static_assert((core::known_kinds<free_policy_kind, advance_kind,
                                   scan_every_kind>::template contains<Policies> &&
                 ...),
                "rcu takes a free policy, advance_every<N> and scan_every<M>");

  // Its name in the lab and in messages.
  static constexpr std::string_view name = "rcu";

  // The retire link plus the epoch of the retire.
  struct node_base : core::retired_hook {
    std::uint64_t retire_epoch = 0;
  };
  class domain;
  class guard;
  // What a reclaim::guard_ptr holds: a share in the thread's operation (core/region_guard.hpp).
  using protection = core::region_hold<domain>;
};

namespace detail {
template <class FreePolicy>
struct rcu_record : core::thread_record<FreePolicy> {
  // No reservation: larger than every epoch (the epoch starts at 1 and grows by one per N
  // retires), so it never collides with a valid one and the minimum ignores it.
  static constexpr std::uint64_t none = std::numeric_limits<std::uint64_t>::max();
  // While a barrier holds the garbage of a record that reserved nothing: no reservation either.
  static constexpr std::uint64_t lent = none - 1;

  // Read by other threads' scans.
  alignas(core::cache_line) core::atomic<std::uint64_t> reservation{none};
  // Owner only.
  alignas(core::cache_line) core::retired_list retired;
  unsigned retires_since_bump = 0;
  unsigned retires_since_scan = 0;

  void destroy_garbage() noexcept { retired.destroy_all(); }
};
}  // namespace detail

// One rcu instance's shared state: the epoch, the thread records with their reservations and
// retired lists, and the garbage (core/domain.hpp). default_domain() is the one containers use
// unless given another.
template <class... Policies>
class rcu<Policies...>::domain : public core::domain_base<domain, detail::rcu_record<free_policy>> {
  using record = detail::rcu_record<free_policy>;
  using base = core::domain_base<domain, record>;
  static constexpr std::uint64_t none = record::none, lent = record::lent;

 public:
  // Its scheme's guard, and it offers synchronize() and barrier() (concepts.hpp's grace_periods).
  using guard_type = rcu::guard;
  static constexpr bool grace_periods = true;
  using base::retire;  // domain.retire(node[, deleter]) from any thread

  ~domain() { this->shutdown(); }

 private:
  friend class core::region_hold<domain>;
  friend base;

  record& begin(record& r) {
    if (r.enter() != 0) return r;
    // The epoch engine's announcement (epoch_clock::announce()): a seq_cst exchange, a full fence
    // before our first read of a shared pointer, re-validated by seq_cst re-reads of the epoch;
    // the order S of the argument in retire(). The loads pair with the seq_cst RMWs on the epoch,
    // the exchange with the seq_cst load in scan().
    std::uint64_t was;
    (void)clock_.announce(r.reservation, was);
    // The first exchange found our garbage lent (try_borrow): a barrier borrows only a record that
    // reserves nothing.
    if (was == lent) [[unlikely]] r.wait_until_given_back();
    this->answer_handover(r);  // a barrier that could not borrow us asks
    r.freeing.on_operation(r);
    return r;
  }

  // In a child of fork(): r's thread does not exist here (core/registry.hpp). Its reservation
  // goes, so that it blocks no node.
  void forget_thread(record& r) noexcept { r.reservation.store(none, std::memory_order_relaxed); }

  void end(record& r) noexcept {
    if (!r.leave()) return;
    // release: our reads of nodes happen before a scan that sees no reservation (seq_cst load in
    // scan()) frees them.
    r.reservation.store(none, RECLAIM_MUTATED(rcu_end_relaxed) ? std::memory_order_relaxed
                                                               : std::memory_order_release);
  }

  // Why "stamp < every reservation" is safe. X unlinks n, then reads the epoch with a seq_cst RMW
  // (value s). Every write to the epoch is an RMW, so every later value is in the release sequence
  // of X's RMW: a thread that reads any of them with acquire sees the unlink. Let R hold n with
  // reservation r (R re-read the epoch after its exchange and found r).
  //  - If a scan reads r: r <= s, since r > s was read after X's RMW and R would not reach n; so
  //    n's stamp s is not below r and n stays.
  //  - If a scan misses R (its seq_cst load precedes R's exchange in S): X's RMW happens before the
  //    scan (same thread, or through the orphanage), so it precedes R's re-read in S, which then
  //    reads s or a later value: R saw the unlink and cannot hold n.
  void retire(record& r, core::retired_hook* hook) {
    auto* node = static_cast<node_base*>(hook);
    // seq_cst RMW (reads, writes nothing new): heads the release sequence above; a plain load
    // would not synchronize with the readers that read later epochs.
    node->retire_epoch = RECLAIM_MUTATED(rcu_stamp_by_load) ? clock_.now() : clock_.fetch_add(0);
    r.retired.push(node);
    r.count_retired(this->gauge_);
    if (++r.retires_since_bump >= epoch_frequency) [[unlikely]] {
      r.retires_since_bump = 0;
      // seq_cst: an RMW in the release sequence of every stamp read before it.
      const std::uint64_t e = clock_.fetch_add(1);
      r.count_epoch_advance(e + 1);
    }
    if (++r.retires_since_scan >= empty_frequency) [[unlikely]] {
      r.retires_since_scan = 0;
      scan(r);
    }
  }

  // Slow path: adopt orphans (they keep their stamps, so they join our list as they are; the
  // orphanage's release/acquire carries their stamps' RMWs to us), take the minimum reservation,
  // free what is older than it.
  [[gnu::noinline]] void scan(record& r) {
    core::scan_timer timer(r.ctr);
    r.retired.splice(this->adopt_orphans());
    std::uint64_t min = none;
    for (const record* other = this->threads_.head(); other;
         other = decltype(this->threads_)::next_of(other)) {
      // seq_cst: pairs with the exchange in begin(); acquire part: pairs with the release store in
      // end() and detach().
      std::uint64_t v = other->reservation.load(std::memory_order_seq_cst);
      if (v < min) min = v;
    }
    core::retired_list safe;
    r.retired.partition_into(safe, [min](core::retired_hook* h) {
      return static_cast<node_base*>(h)->retire_epoch < min;
    });
    core::counters::add(r.ctr.scans, 1);
    r.release_safe(std::move(safe), this->gauge_);
  }

  // A grace period: the epoch moves to s+1, so an operation that begins after reserves s+1 or
  // later; one that began before reserved at most s and holds it until it ends. Wait until no
  // reservation is s or older (none and lent are larger than every epoch).
  bool wait_for_grace_period(record& me, core::deadline d) {
    // seq_cst RMW: in the release sequence of every stamp read before (retire()).
    const std::uint64_t s = clock_.fetch_add(1);
    me.count_epoch_advance(s + 1);
    for (const record* other = this->threads_.head(); other;
         other = decltype(this->threads_)::next_of(other)) {
      core::waiter w(d);
      // seq_cst and acquire: as in scan(); a value above s is a later operation's reservation (an
      // RMW in the release sequence of the end() before it) or none.
      while (other->reservation.load(std::memory_order_seq_cst) <=
             s - (RECLAIM_MUTATED(rcu_grace_one_epoch_short) ? 1 : 0))
        if (!w.wait()) return false;
    }
    return true;
  }

  static void take_garbage(record& r, typename base::gathered& into) noexcept {
    into.unsafe.splice(std::move(r.retired));
    into.safe.splice(r.freeing.take());
  }

  // Our garbage, then every other record's (borrowed while it reserves nothing) and the orphans:
  // each stamp was read before the grace period's increment, so all of it is older than every
  // reservation that remains after it.
  bool barrier_locked(record& me, core::deadline d) {
    typename base::gathered g;
    bool done = this->gather(me, g, d, [](record& r, typename base::gathered& into) {
      return base::borrow_if_idle(r, r.reservation, none, lent, into);
    });
    done = done && wait_for_grace_period(me, d);
    return this->finish_barrier(me, g, done, 0);
  }

  // One epoch increment (so that our own reservation is newer than every stamp so far), a scan in
  // an operation of our own (which holds our garbage against a barrier), and the free policy's
  // safe garbage.
  void flush_local(record& me) {
    me.count_epoch_advance(clock_.fetch_add(1) + 1);
    record& r = begin(me);
    scan(r);
    r.freeing.drain(r);
    end(r);
  }

  // Thread exit: the record holds its garbage (a reservation of the current epoch, even if the
  // thread left inside a guard), its retired list goes to the orphanage, each node with its stamp,
  // its free policy is drained, and then it reserves nothing. The counters are kept: short-lived
  // threads that reuse this record still bump and scan.
  void on_thread_exit(record& r) noexcept {
    if (r.reservation.exchange(clock_.now(), std::memory_order_seq_cst) == lent)
      r.wait_until_given_back();
    this->orphan(r, std::move(r.retired));
    r.freeing.drain(r);
    // release: pairs with the seq_cst load in scan().
    r.reservation.store(none, std::memory_order_release);
  }

  detail::epoch_clock clock_;  // moved by RMWs only, with no pass
};

// An operation in d, from construction to destruction, which reserves the epoch it began in;
// protect() is a plain load.
template <class... Policies>
class rcu<Policies...>::guard : public core::region_scheme_guard<domain> {
 public:
  explicit guard(domain& d = rcu::default_domain()) : core::region_scheme_guard<domain>(d) {}
};

}  // namespace reclaim
