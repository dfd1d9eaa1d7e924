// SPDX-License-Identifier: MIT
// nbr and nbr_plus: neutralization-based reclamation (Singh, Brown, Mashtizadeh, PPoPP 2021).
//
// What it is. Operations are read phases (traversals from the root that write nothing shared)
// followed by write phases that touch only nodes reserved at the end of the read phase (at most R
// per thread). Each thread keeps its retired nodes in a limbo bag. When the bag reaches its
// threshold the thread runs a signal round: it sends a signal to every thread it sees in a read
// phase, whose handler makes the thread drop its pointers and restart the read phase from the root
// (a siglongjmp to RECLAIM_READ_PHASE); then it frees every node of its bag that no thread
// reserved. nbr_plus (Algorithm 2) adds a low watermark: a thread whose bag is between the low and
// the high watermark frees the part of its bag retired before it crossed the low watermark as soon
// as it sees that another thread completed a whole signal round since then (announce timestamps,
// odd during a round), so fewer signals are sent for the same work (stats().signals counts them).
//
// When to use it. Structures whose operations fit the read/write-phase form (lazy_list,
// harris_list, dgt_bst, and hm_list, which restarts its searches from the head under nbr): garbage
// is bounded even when threads stall, and the per-read cost is a plain load, as under an epoch
// scheme. Signals cost a few microseconds each, so the threshold must not be tiny; the default,
// 1024, was chosen by the defaults sweep (docs/results.md: as fast as paper 000's 32K or faster on
// the lists and the hash map, and a structure that is rarely updated sees its garbage freed after
// 1024 retires instead of 32768). Paper 000's setting is nbr<scan_threshold<32768>>.
//
// What it bounds. With batch_free, a thread's bag holds at most max(threshold, R x records + 1)
// nodes: a round frees everything that is not reserved, and at most R x records nodes are. A
// stalled thread holds back at most its R reservations, whatever phase it stalls in. Garbage of an
// exited thread is adopted by the next retire of a live thread. With an amortized free policy the
// freeable list is bounded only while the retire rate stays within the policy's K, so
// bounds_garbage is the free policy's `bounded`.
//
// What it costs, and the wait the papers' implementations leave out. Per read phase: an RMW that
// makes the thread restartable, the saved restart point (sigsetjmp without the signal mask: no
// system call), and a relaxed load that checks the thread is not already restartable; per write
// phase: R' relaxed stores and an RMW (R' the nodes reserved). A round sends one signal per
// thread in a read phase. The published implementations free right after sending the signals,
// although a signalled thread may not have run its handler yet and may still be reading. Here the
// reclaimer waits, after signalling, until every thread it saw in a read phase has left that read
// phase (its phase word changed: write phase, end of operation, exit, or restart by its handler).
// A running thread does so within microseconds; a thread that was descheduled in a read phase holds
// the reclaimer until the kernel runs it again (the handler runs before anything else), so a round
// can take a scheduler time slice when threads outnumber cores. A thread stopped for good inside a
// read phase (SIGSTOP, a debugger) blocks its reclaimers; threads that use a domain must not block
// the signal (registration unblocks it). A signal that lands while another handler of the
// application runs on top of a read phase does not restart it (that would abort the application's
// handler): the reclaimer signals again until the read phase restarts or ends. A thread outside a
// read phase is neither signalled nor waited for: it holds no unreserved pointer, its reservations
// were published by the RMW that ended its read phase, and its next read phase begins with an RMW
// that follows the reclaimer's snapshot, so it cannot reach the nodes unlinked before. That last
// step, as the paper's argument for its CAS, relies on the RMW ordering later loads like a full
// fence: core::fence_after_rmw() says so, free on x86-64 (lock xadd is one), a seq_cst fence
// where the C++ model or the processor (Arm without LSE atomics) does not make the RMW one. A
// thread that exits, or never ran an operation, blocks nothing.
//
// Needs from a container: restartable read phases (needs_restartable_read_phases), written as in
// docs/writing-a-container.md: RECLAIM_READ_PHASE(g) in the operation's own frame at the start of
// every read phase, and g.write_phase(nodes...) (at most R nodes, nullptr allowed) before the
// first write or lock; from then on the operation dereferences only the nodes it reserved.
//
// Nesting. A protection held under nbr is a write phase's reservations. Guards nest, in one domain
// or across nbr domains, as long as no read phase is open when the inner guard begins (debug
// builds assert it): each guard has its own R reservations, so a container operation called from
// a write phase keeps what the outer phase reserved; while the inner guard lives, the thread's
// neutralizable phase is the inner one's, and when it ends the outer guard's again, so that the
// outer guard's next read phase can be neutralized (reclaimers of its domain do not wait for it).
// A read phase cannot contain another operation: the thread has one restart point, and beginning
// the nested read phase would end the outer one while its pointers are still in use.
//
// Progress: lock-free operations (a restarted read phase restarts only after a reclaimer retired
// a full bag); a round waits for the threads it saw reading, as described above.
// Differences from the paper: the wait above; only threads in a read phase are signalled (the
// paper signals every thread), and at most one signal is on its way to a thread at a time (its
// mailbox, core/platform/mailbox.hpp, says whether one is: a thread that blocks the signal gets
// one, and its read phase, which cannot be neutralized then, is waited for until it ends on its
// own); the signal is sent with tgkill to the kernel thread id in the mailbox, safe after the
// thread exited (pthread_kill on an exited thread is undefined): a reclaimer re-sends to it only
// while the reader's phase word has not moved, and exit moves it, so at most a resend racing with
// the exit reaches the id. tgkill names our own process too, so an id reused by another process is
// never signalled (ESRCH, after which the reader is not waited for: it runs nothing any more); one
// reused by a new thread of ours gets a spurious signal, which its handler ignores outside a read
// phase and otherwise answers with a harmless restart of the read phase from its root. Before a
// round that signals anyone, the handler is checked to be still ours (core/platform/signals.hpp: an
// application that replaced it is stopped with a message). A user's comparison inside a read
// phase runs in a window the signal does not cut (the restart waits until it returns:
// detail/nbr_signal.hpp). In a child of fork() the parent's other threads are forgotten: out of
// their read phases, their reservations cleared. A timestamp seen odd at the low watermark
// needs the next round to complete (s + 3), where the paper's s + 2 would accept a round that had
// only begun; garbage of exited threads goes to an orphanage instead of being lost; the signal is
// configurable and must not already have a foreign handler (the domain's constructor throws,
// naming the signal and the policy).
#pragma once
#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "../concepts.hpp"
#include "../read_phase.hpp"
#include "../core/domain.hpp"
#include "../core/guard_base.hpp"
#include "../core/guard_slots.hpp"
#include "../core/policy.hpp"
#include "../core/sorted_snapshot.hpp"
#include "../free/batch.hpp"
#include "../policies.hpp"
#include "detail/nbr_signal.hpp"
#include "../core/sync.hpp"

namespace reclaim {

// The neutralizing signal: rt_signal<K> is SIGRTMIN+K (the default is K = 4), signal_number<N> any
// other signal, e.g. signal_number<SIGUSR2> (core/platform/signals.hpp).

namespace detail {
struct nbr_variant {
  static constexpr std::string_view name = "nbr";
  static constexpr bool plus = false;
};
struct nbr_plus_variant {
  static constexpr std::string_view name = "nbr_plus";
  static constexpr bool plus = true;
};
}  // namespace detail

// NBR or NBR+ (Variant), used as nbr and nbr_plus (below), with its policies (policies.hpp) in
// any order.
template <class Variant, class... Policies>
struct basic_nbr : core::scheme_base<basic_nbr<Variant, Policies...>> {
  // Its policies, as given in Policies... or by default: the free policy (batch_free), the signal
  // (rt_signal<4>), slots<R> (8: the nodes a write phase reserves), and scan_threshold<N> (<1024>),
  // which gives the limbo bag's size that starts a signal round (its high watermark).
  using free_policy = core::find_policy_t<free_policy_kind, batch_free, Policies...>;
  using signal = core::find_policy_t<signal_kind, rt_signal<4>, Policies...>;
  static constexpr unsigned reservation_count = core::policy_value<slots<8>, Policies...>;
  using threshold_policy =
      core::find_policy_t<scan_threshold_kind, scan_threshold<1024>, Policies...>;
  static constexpr std::size_t threshold =
      threshold_policy::base + threshold_policy::per_slot * reservation_count;
  // nbr: the low watermark is the high one (no watching).
  static constexpr std::size_t low_watermark_size =
      Variant::plus
          ? std::max<std::size_t>(
                1, threshold *
                       core::find_policy_t<low_watermark_kind, low_watermark<50>,
                                           Policies...>::percent /
                       100)
          : threshold;
  static_assert(
      Variant::plus
          ? (core::known_kinds<free_policy_kind, signal_kind, scan_threshold_kind, slots_kind,
                               low_watermark_kind>::template contains<Policies> &&
             ...)
          : (core::known_kinds<free_policy_kind, signal_kind, scan_threshold_kind,
                               slots_kind>::template contains<Policies> &&
             ...),
      "nbr takes a free policy, rt_signal<K> or signal_number<N>, scan_threshold<N> and "
      "slots<R> (the reservations of a write phase); nbr_plus also low_watermark<P>");
  static_assert(reservation_count < threshold, "slots<R> must be below scan_threshold<N>");

  // Its name in the lab and in messages (the variant's), and its family.
  static constexpr std::string_view name = Variant::name;
  static constexpr reclaim::family family = reclaim::family::neutralization;
  // max(threshold, R x records + 1) per thread; the free policy decides whether what a round
  // proved safe is freed within a bound too (batch_free: yes).
  static constexpr bool bounds_garbage = free_policy::bounded;
  static constexpr unsigned needs = needs_restartable_read_phases;

  class domain;
  class guard;
};

// nbr<Policies...>: Algorithm 1. nbr_plus<Policies...>: Algorithm 2.
template <class... Policies>
using nbr = basic_nbr<detail::nbr_variant, Policies...>;
template <class... Policies>
using nbr_plus = basic_nbr<detail::nbr_plus_variant, Policies...>;

namespace detail {

// Slots of a block that a write phase may have filled. In the record, not in the guard: a
// neutralized read phase jumps back into the guard's frame, where a non-volatile object changed
// after the restart point would hold an indeterminate value.
struct reservations_used {
  unsigned count = 0;
};
template <unsigned R>
using reservation_block = core::slot_block<const core::retired_hook*, R, reservations_used>;

template <class FreePolicy, unsigned R>
struct nbr_record : core::thread_record<FreePolicy> {
  // Read by reclaimers.
  alignas(core::cache_line) nbr_phase phase;
  // The owner's mailbox (core/platform/mailbox.hpp: its kernel id, the signals on their way to it),
  // held while bound; published by the phase RMWs.
  core::atomic<core::thread_mailbox*> mailbox{nullptr};
  core::atomic<std::uint64_t> announce{0};  // nbr_plus: odd while the owner runs a signal round
  // The outermost guard's R reservations, and blocks for nested guards.
  reservation_block<R> reserved;
  // Written by the owner around each retire, read by a barrier (core::garbage_claim).
  alignas(core::cache_line) core::garbage_claim claim;
  // Owner only (or a barrier that borrowed the record).
  core::retired_list bag;  // newest first
  bool bound = false;                                // mailbox held and signal unblocked
  // nbr_plus: watching other threads' rounds since the bag crossed the low watermark.
  bool watching = false;
  const core::retired_hook* bookmark = nullptr;  // newest node retired before watching began
  std::size_t retires_since_check = 0;
  std::vector<std::pair<const nbr_record*, std::uint64_t>> announces_seen;
  // Scratch for rounds, kept to reuse its capacity.
  struct reader {
    const nbr_record* rec;
    std::uint64_t seq;  // the read phase it was seen in
    core::thread_mailbox* mailbox;
  };
  std::vector<reader> readers;
  core::sorted_snapshot reserved_now;  // every reservation, for a reclamation pass

  nbr_record() = default;
  nbr_record(const nbr_record&) = delete;
  nbr_record& operator=(const nbr_record&) = delete;
  // The domain is destroyed: no reclaimer is left to signal through this record.
  ~nbr_record() { let_go_of_mailbox(); }
  void let_go_of_mailbox() noexcept {
    if (!bound) return;
    bound = false;
    // release: pairs with the acquire CAS of the mailbox's next taker (core::take_mailbox()).
    mailbox.load(std::memory_order_relaxed)->holders.fetch_sub(1, std::memory_order_release);
  }

  void destroy_garbage() noexcept { bag.destroy_all(); }
};

}  // namespace detail

// One nbr instance's shared state: the signal that neutralizes readers (its handler installed on
// construction), the thread records with their reservations and limbo bags, and the garbage
// (core/domain.hpp). default_domain() is the one containers use unless given another.
template <class Variant, class... Policies>
class basic_nbr<Variant, Policies...>::domain
    : public core::domain_base<domain, detail::nbr_record<free_policy, reservation_count>> {
  static constexpr unsigned R = reservation_count;
  using record = detail::nbr_record<free_policy, R>;
  using block = detail::reservation_block<R>;
  using base = core::domain_base<domain, record>;
  using claim = core::garbage_claim;
  using holding = claim::scope<record>;

 public:
  // Its scheme's guard, and it offers synchronize() and barrier() (concepts.hpp's grace_periods).
  using guard_type = basic_nbr::guard;
  static constexpr bool grace_periods = true;
  using base::retire;  // domain.retire(node[, deleter]) from any thread

  domain() : signal_(signal::number()) { detail::install_nbr_handler(signal_, signal::describe()); }
  ~domain() { this->shutdown(); }

  // Read phases restarted by a signal, over every thread (for tests and observers).
  std::uint64_t restarts() const noexcept {
    std::uint64_t n = 0;
    this->threads_.for_each(
        [&](const record& r) { n += r.phase.restarts.load(std::memory_order_relaxed); });
    return n;
  }
  int signal_number() const noexcept { return signal_; }

 private:
  friend class guard;
  friend base;

  // Between lo and hi watermark, nbr_plus looks at the others' announcements about 16 times.
  static constexpr std::size_t check_interval =
      std::max<std::size_t>(1, (threshold - low_watermark_size) / 16);

  // A guard opens on r; returns its reservation block (the record's for the outermost guard, the
  // block of its nesting level for a nested one). It may nest inside another guard of any nbr
  // domain, but not inside a read phase: the thread has one restart point, and the nested
  // operation would end the outer read phase (the outer one's pointers would no longer be
  // neutralized) or jump into the wrong frame. `outer` is the phase the thread was in (restored by
  // end()).
  block& begin(record& r, [[maybe_unused]] const detail::nbr_phase* outer) {
    assert((outer == nullptr || (outer->seq.load(std::memory_order_relaxed) & 1) == 0) &&
           "reclaim::nbr: an operation began inside a read phase; nest operations only outside "
           "read phases (between operations or in a write phase)");
    if (!r.bound) [[unlikely]] bind(r);  // first: if it throws, nothing has changed
    const unsigned level = r.enter();
    block& b = level == 0 ? r.reserved : nested_block(r, level);
    if (level == 0) {
      detail::refresh_read_phase_mask();
      core::garbage_claim::free_policy_step(r);
    }
    detail::current_phase.store(&r.phase, std::memory_order_relaxed);
    return b;
  }

  // The block of nesting level `level`, allocated the first time a thread nests that deep (a
  // failed allocation leaves the nesting as it was).
  [[gnu::noinline]] static block& nested_block(record& r, unsigned level) {
    try {
      return r.reserved.at(level, [] {});
    } catch (...) {
      r.leave();
      throw;
    }
  }

  // A guard ends: its read phase (if any) and its reservations go, and the thread is back in the
  // phase of the guard it was nested in.
  static void end(record& r, block& b, detail::nbr_phase* outer) noexcept {
    // First, so that a signal arriving during the rest of end() finds the thread not restartable.
    leave_read_phase(r);
    detail::close_user_code();
    clear_reservations(b);
    r.leave();
    detail::current_phase.store(outer, std::memory_order_relaxed);
  }

  // The first operation of a thread on this record: who to signal, and make sure it can be.
  // Throws std::bad_alloc (the thread's first mailbox) before anything has changed.
  [[gnu::noinline]] void bind(record& r) {
    core::thread_mailbox& m = core::take_mailbox();
    m.holders.fetch_add(1, std::memory_order_relaxed);  // we hold it already: no order needed
    // relaxed: published to reclaimers by the RMW that begins the first read phase (its release
    // part), which they read before this field.
    r.mailbox.store(&m, std::memory_order_relaxed);
    detail::unblock_signal(signal_);
    assert(detail::no_handler_hides_from(signal_));
    r.bound = true;
  }

  static void leave_read_phase(record& r) noexcept {
    const std::uint64_t s = r.phase.seq.load(std::memory_order_relaxed);
    // release: pairs with the acquire load in wait_for(); the read phase's reads happen
    // before the reclaimer's frees. (A signal between the load and the RMW restarts the read phase,
    // which is harmless: nothing has been done yet.)
    if (s & 1) r.phase.seq.fetch_add(1, std::memory_order_release);
  }

  static void begin_read_phase(record& r, block& b) noexcept {
    assert((r.phase.seq.load(std::memory_order_relaxed) & 1) == 0);
    clear_reservations(b);
    // seq_cst RMW (the paper's CAS; lock xadd on x86-64): the thread is restartable before any read
    // of a shared node. Pairs with the seq_cst load in signal_round(): either the reclaimer sees
    // this read phase and waits for it, or this read phase starts after the reclaimer's snapshot
    // and its reads cannot reach the nodes unlinked before it.
    r.phase.seq.fetch_add(1, std::memory_order_seq_cst);
    // The assumption at the top of the file: this RMW orders our later loads like a full fence
    // (lock xadd on x86-64, where this is a compiler barrier; a fence elsewhere).
    core::fence_after_rmw();
  }

  template <class... Nodes>
  static void write_phase(record& r, block& b, Nodes... nodes) noexcept {
    static_assert(sizeof...(Nodes) <= R, "write_phase reserves more nodes than slots<R>");
    assert((r.phase.seq.load(std::memory_order_relaxed) & 1) == 1 &&
           "write_phase outside a read phase");
    // Counted first: if a signal restarts us mid-way, the next read phase clears these slots.
    b.owner.count = std::max<unsigned>(b.owner.count, sizeof...(Nodes));
    unsigned i = 0;
    // The fault: the thread stops being restartable before its reservations are stored.
    if (RECLAIM_MUTATED(nbr_reserve_after_phase_end))
      r.phase.seq.fetch_add(1, std::memory_order_seq_cst);
    // relaxed: published by the release part of the RMW below.
    (b.slots[i++].store(static_cast<const core::retired_hook*>(nodes), std::memory_order_relaxed),
     ...);
    // seq_cst RMW (the paper's CAS): the reservations are visible before the thread stops being
    // restartable. Pairs with the seq_cst load in signal_round() and the acquire load in
    // wait_for(): a reclaimer that sees this even value then reads these reservations.
    if (!RECLAIM_MUTATED(nbr_reserve_after_phase_end))
      r.phase.seq.fetch_add(1, std::memory_order_seq_cst);
  }

  static void clear_reservations(block& b) noexcept {
    // release: the previous write phase's accesses to these nodes (its unlocks, its writes) happen
    // before a reclaimer that reads the slot empty (acquire in collect_reservations()) frees them.
    for (unsigned i = 0; i < b.owner.count; ++i)
      b.slots[i].store(nullptr, std::memory_order_release);
    b.owner.count = 0;
  }

  // Never throws: rounds and reclamation passes need no memory they cannot get.
  void retire(record& r, core::retired_hook* node) noexcept {
    assert((r.phase.seq.load(std::memory_order_relaxed) & 1) == 0 && "retire inside a read phase");
    holding garbage(r);
    r.bag.push(node);
    r.count_retired(this->gauge_);
    r.bag.splice(this->adopt_orphans());
    if (r.bag.size() >= low_watermark_size) [[unlikely]] on_full_bag(r);
  }

  [[gnu::noinline]] void on_full_bag(record& r) {
    if (r.bag.size() >= threshold) {
      round(r);
      r.watching = false;
      reclaim_older_than(r, nullptr);
      return;
    }
    if constexpr (Variant::plus) {
      if (!r.watching) {
        start_watching(r);
      } else if (++r.retires_since_check >= check_interval) {
        r.retires_since_check = 0;
        if (observed_a_round(r)) {
          r.watching = false;
          reclaim_older_than(r, r.bookmark);
        }
      }
    }
  }

  // A signal round of our own; nbr_plus announces it to the threads that watch.
  void round(record& r) {
    core::scan_timer timer(r.ctr);
    if constexpr (Variant::plus) {
      // seq_cst RMW: the round (odd) begins before its snapshot of the phase words; pairs with
      // the acquire loads in observed_a_round().
      r.announce.fetch_add(1, std::memory_order_seq_cst);
      signal_round(r);
      // release: the round, including its wait for every reader, happens before a watcher
      // that sees it complete (acquire in observed_a_round()) frees its own nodes.
      r.announce.fetch_add(1, std::memory_order_release);
    } else {
      signal_round(r);
    }
  }

  // An operation here is an outermost guard: see core::domain_base::wait_for_open_guards.
  bool wait_for_grace_period(record&, core::deadline d) const {
    return this->wait_for_open_guards(d);
  }

  // nbr_plus: the bookmark pointed into the bag taken, so the watch starts again.
  static void take_garbage(record& r, typename base::gathered& into) noexcept {
    into.unsafe.splice(std::move(r.bag));
    into.safe.splice(r.freeing.take());
    r.watching = false;
    r.bookmark = nullptr;
  }

  // Our garbage, then every other record's (borrowed between its retires) and the orphans; one
  // round neutralizes every read phase that could still reach them, and what write phases reserve
  // is freed once they have moved on (a read phase that begins after the round cannot reach a node
  // unlinked before it, so no second round is needed).
  bool barrier_locked(record& me, core::deadline d) {
    typename base::gathered g;
    bool done = this->gather(me, g, d, [](record& r, typename base::gathered& into) {
      return base::borrow_if_idle(r, r.claim.word, claim::free, claim::lent, into);
    });
    round(me);
    core::waiter w(d);
    for (;;) {
      take_unreserved(me, g.unsafe, g.safe);
      if (g.unsafe.empty() || !w.wait()) break;
    }
    // Only what no one protects any more is safe: the rest waits in the orphanage.
    return this->finish_barrier(me, g, done && g.unsafe.empty(), 0);
  }

  // A round and a reclamation pass over the whole bag (with the orphans), and the free policy's
  // safe garbage. Not inside a read phase: the round does not neutralize our own.
  void flush_local(record& r) {
    assert((r.phase.seq.load(std::memory_order_relaxed) & 1) == 0 && "flush inside a read phase");
    holding garbage(r);
    r.bag.splice(this->adopt_orphans());
    round(r);
    r.watching = false;
    reclaim_older_than(r, nullptr);
    r.freeing.drain(r);
  }

  // Signals every other thread seen in a read phase, then waits until each has left that read
  // phase (restarted by its handler, or gone on to a write phase or the end of its operation).
  // Needs no memory it cannot get: without room to remember a reader, it waits for it at once.
  void signal_round(record& r) noexcept {
    r.readers.clear();
    // Full fence: the unlinks before this round are ordered before our loads of the phase words
    // (seq_cst below), whatever order the container unlinked with; pairs with the fence after the
    // RMW that begins a read phase. One per round: cheap next to the signals. (The model checker
    // found it missing: docs/verification.md.)
    if (!RECLAIM_MUTATED(nbr_round_without_fence)) core::thread_fence(std::memory_order_seq_cst);
    bool handler_checked = false;
    for (const record* other = this->threads_.head(); other;
         other = decltype(this->threads_)::next_of(other)) {
      if (other == &r) continue;
      // seq_cst: pairs with the seq_cst RMWs in begin_read_phase() and write_phase(); the
      // acquire part makes an even value carry that thread's reservations and its mailbox.
      const std::uint64_t s = other->phase.seq.load(std::memory_order_seq_cst);
      if ((s & 1) == 0) continue;
      if (!std::exchange(handler_checked, true))
        core::require_signal_handler(signal_, "nbr", &detail::nbr_on_signal);
      const typename record::reader reader{other, s,
                                           other->mailbox.load(std::memory_order_relaxed)};
      if (!signal(r, reader)) continue;
      try {
        r.readers.push_back(reader);
      } catch (const std::bad_alloc&) {
        wait_for(r, reader);
      }
    }
    for (const auto& reader : r.readers)
      if (!RECLAIM_MUTATED(nbr_round_without_wait)) wait_for(r, reader);
    core::counters::add(r.ctr.epochs, 1);  // a completed round is a (relaxed) grace period
  }

  // Sends the signal to a reader unless one is still on its way to it (it has not run the handler
  // yet: it is descheduled, or it blocks the signal, which then stays pending): pending real-time
  // signals queue up, and their number is limited for the whole user (core/platform/mailbox.hpp).
  // False if the thread is gone.
  bool signal(record& r, const typename record::reader& reader) const noexcept {
    switch (core::send_once(*reader.mailbox, signal_)) {
      case core::sent::now:
        core::counters::add(r.ctr.signals, 1);
        return true;
      case core::sent::already_on_its_way:
        return true;
      case core::sent::thread_gone:
        return false;
    }
    return false;
  }

  // A reader that got the signal while another handler of the application ran on top of its read
  // phase declines to restart (nbr_on_signal()); it is signalled again every resend_after yields
  // until it restarts or leaves its read phase on its own (not while a signal is still on its way:
  // a thread that blocks the signal leaves its read phase on its own, its read phases being short).
  // A thread that is gone (its id unknown: it exited, or belonged to the parent of this forked
  // process) runs nothing any more: it is not waited for.
  static constexpr unsigned resend_after = 1024;

  void wait_for(record& r, const typename record::reader& reader) const noexcept {
    unsigned spins = 0;
    // acquire: pairs with the release in leave_neutralized() and leave_read_phase() and with the
    // RMW in write_phase(): the reader's reads (and its reservations) happen before our frees.
    while (reader.rec->phase.seq.load(std::memory_order_acquire) == reader.seq) {
      // The reader may need this core to run its handler (threads may outnumber cores).
      if (++spins < 64) continue;
      core::yield_now();
      if (spins % resend_after == 0 && !signal(r, reader)) return;
    }
  }

  // nbr_plus: the bag crossed the low watermark. Remember its newest node (everything from it on
  // was retired before now) and every other thread's announcement.
  //
  // Full fence (seq_cst), once per bag: the unlinks of the bookmarked nodes must precede our reads
  // of the announcements. Without it a store-to-load reordering (which x86's TSO allows, and the
  // C++ model too) could let us read an even announcement s while our last unlink still sits in
  // the store buffer; that thread's next round (s+1) could then take its snapshot of the phase
  // words before the unlink was visible, miss a reader that reaches the node, and end (s+2), and we
  // would free the node under that reader. With the fence, the round's seq_cst RMW follows it in
  // the single order S (our load reads a value before that RMW), and so does every phase-word load
  // of its snapshot; a reader the snapshot misses begins its read phase after the fence in S, and
  // its reads see the unlink (under the same assumption as every read phase: the RMW that begins
  // it orders later loads like a full fence; see the top of this file).
  // Out of memory for the announcements, it does not watch: the bag then waits for a round of its
  // own at the high watermark, as under nbr.
  void start_watching(record& r) noexcept {
    r.bookmark = r.bag.head();
    r.retires_since_check = 0;
    r.announces_seen.clear();
    core::thread_fence(std::memory_order_seq_cst);
    try {
      for (const record* other = this->threads_.head(); other;
           other = decltype(this->threads_)::next_of(other)) {
        if (other == &r) continue;
        // acquire: pairs with the release that ends a round; seq_cst would not add anything
        // here, since only later values matter.
        r.announces_seen.emplace_back(other, other->announce.load(std::memory_order_acquire));
      }
      r.watching = true;
    } catch (const std::bad_alloc&) {
      r.watching = false;
    }
  }

  // Whether some thread began and completed a round since start_watching(). An even value s was
  // between rounds: s + 2 ends the next one. An odd s was inside a round that may have taken its
  // snapshot before our bookmarked nodes were unlinked: s + 1 ends that one, s + 3 the next.
  static bool observed_a_round(const record& r) {
    for (const auto& [other, s] : r.announces_seen) {
      // acquire: pairs with the release that ends a round in on_full_bag(): that round's wait
      // for its readers happens before our frees.
      const std::uint64_t now = other->announce.load(std::memory_order_acquire);
      if (now >= s + 2 + (s & 1)) return true;
    }
    return false;
  }

  // Frees the unreserved nodes among `first_old` and everything older (the whole bag when
  // first_old is nullptr); reserved ones, and the newer nodes, stay in the bag.
  void reclaim_older_than(record& r, const core::retired_hook* first_old) {
    core::retired_list newer;
    core::retired_list old = split_from(r.bag, first_old, newer);
    core::retired_list safe;
    take_unreserved(r, old, safe);
    // Newer nodes stay in front of the kept old ones: the bag stays ordered newest first.
    old.splice(std::move(newer));
    r.bag = std::move(old);
    r.release_safe(std::move(safe), this->gauge_);
  }

  // Moves the nodes of `list` that no write phase reserves now into `safe` (a reclamation pass).
  void take_unreserved(record& r, core::retired_list& list, core::retired_list& safe) noexcept {
    core::scan_timer timer(r.ctr);
    const auto find = [&](auto&& f) { return find_reservation(f); };
    r.reserved_now.take(find);
    list.partition_into(safe, [&](core::retired_hook* node) {
      return !r.reserved_now.protects(static_cast<const void*>(node), find);
    });
    core::counters::add(r.ctr.scans, 1);
  }

  // Splits `bag` before `first_old`: returns first_old and everything older, leaves the newer
  // nodes in `newer`. first_old == nullptr: the whole bag is old.
  static core::retired_list split_from(core::retired_list& bag, const core::retired_hook* first_old,
                                       core::retired_list& newer) {
    core::retired_list old;
    if (first_old == nullptr || first_old == bag.head()) {
      old = std::move(bag);
      return old;
    }
    std::size_t count = 1;
    core::retired_hook* last_new = bag.head();
    while (last_new->next_retired != first_old) {
      last_new = last_new->next_retired;
      ++count;
    }
    core::retired_hook* first = bag.head();
    core::retired_hook* tail = bag.tail();
    const std::size_t total = bag.size();
    bag = core::retired_list{};
    newer.splice(first, last_new, count);
    old.splice(const_cast<core::retired_hook*>(first_old), tail, total - count);
    return old;
  }

  // f(p) for every reservation p of every record and every nesting level, ours included, until f
  // returns true; whether it did.
  template <class F>
  bool find_reservation(F&& f) const {
    bool found = false;
    for (const record* other = this->threads_.head(); other && !found;
         other = decltype(this->threads_)::next_of(other)) {
      other->reserved.for_each([&](const block& b) {
        for (const auto& slot : b.slots) {
          if (found) return;
          // acquire: pairs with the release stores in clear_reservations() (and, through the
          // phase word read in the round, with the RMW in write_phase()).
          if (const core::retired_hook* p = slot.load(std::memory_order_acquire)) found = f(p);
        }
      });
    }
    return found;
  }

  // In a child of fork(): r's thread does not exist here (core/registry.hpp) and reads nothing any
  // more: out of any read phase, so that no round waits for it, and its reservations go.
  void forget_thread(record& r) noexcept {
    const std::uint64_t s = r.phase.seq.load(std::memory_order_relaxed);
    r.phase.seq.store(s + (s & 1), std::memory_order_relaxed);
    r.reserved.for_each_owned([](block& b) {
      for (auto& slot : b.slots) slot.store(nullptr, std::memory_order_relaxed);
    });
    r.bound = false;  // its mailbox is free again (core/platform/mailbox.hpp)
  }

  // Thread exit, possibly inside an operation: the record leaves any read phase and drops its
  // reservations, its garbage goes to the orphanage, and it is left as a new thread should find it.
  // The phase word and the announcement keep counting: a reclaimer waiting on the old value, or a
  // watcher comparing with it, must see them move on.
  void on_thread_exit(record& r) noexcept {
    leave_read_phase(r);
    holding garbage(r);
    r.reserved.for_each_owned([](block& b) {
      b.owner.count = R;
      clear_reservations(b);
    });
    this->orphan(r, std::move(r.bag));
    r.freeing.drain(r);
    if (detail::current_phase.load(std::memory_order_relaxed) == &r.phase)
      detail::current_phase.store(nullptr, std::memory_order_relaxed);
    r.let_go_of_mailbox();
    r.watching = false;
    r.bookmark = nullptr;
  }

  const int signal_;
};

// An operation in d, from construction to destruction: read phases that a signal may restart
// (at RECLAIM_READ_PHASE), each followed by a write phase on the nodes it reserved.
template <class Variant, class... Policies>
class basic_nbr<Variant, Policies...>::guard : public core::guard_base<guard> {
 public:
  // Reads are not validated (a reader is restarted instead), RECLAIM_READ_PHASE puts a restart
  // point in the container's frame, and a write phase reserves at most reservation_count nodes.
  static constexpr bool validates = false;
  static constexpr bool neutralizable = true;
  static constexpr unsigned reservation_count = basic_nbr::reservation_count;

  // Takes the reservation block of its nesting level (allocated the first time a thread nests that
  // deep) and makes the thread's neutralizable phase its own until it ends.
  explicit guard(domain& d = basic_nbr::default_domain())
      : domain_(d), record_(d.threads_.local()),
        outer_phase_(detail::current_phase.load(std::memory_order_relaxed)),
        block_(d.begin(record_, outer_phase_)) {}
  ~guard() {
    this->check_owner();
    domain::end(record_, block_, outer_phase_);
  }

  // acquire: pairs with the release store or CAS that published the node. No validation: a read
  // phase that could reach a freed node is restarted before the node is freed.
  template <class P>
  P protect(const core::atomic<P>& src, unsigned /*slot*/) const noexcept {
    this->check_owner();
    return src.load(std::memory_order_acquire);
  }

  // The phase markers (RECLAIM_READ_PHASE calls the first two).
  void leave_read_phase() noexcept { domain::leave_read_phase(record_); }
  void begin_read_phase() noexcept { domain::begin_read_phase(record_, block_); }
  // Around user code inside a read phase (a comparison, a hash), which a neutralizing signal must
  // not cut: the restart waits for leave_user_code() (schemes/detail/nbr_signal.hpp). Containers
  // use them through ds/detail/read_phase_compare.hpp.
  static void enter_user_code() noexcept { detail::enter_user_code(); }
  static void leave_user_code() noexcept { detail::leave_user_code(); }
  // Ends the read phase, reserving the given nodes (nullptr allowed): from here on the operation
  // may dereference only these and nodes it allocated.
  template <class... Nodes>
  void write_phase(Nodes... nodes) noexcept {
    domain::write_phase(record_, block_, nodes...);
  }

 private:
  friend class core::guard_base<guard>;
  void retire_hook(core::retired_hook* node) { domain_.retire(record_, node); }

  domain& domain_;
  typename domain::record& record_;
  detail::nbr_phase* outer_phase_;  // the phase this guard nests in; nullptr for an outermost one
  typename domain::block& block_;
};

}  // namespace reclaim
