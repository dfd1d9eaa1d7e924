// SPDX-License-Identifier: MIT
// Publish-on-Ping (Singh and Brown, PPoPP 2025): the fence strategy (core/fence.hpp) of hazard_pop
// and epoch_pop. Readers keep their protections private: a release store into their slot and a
// compiler barrier, no fence. A reclaimer that is about to read the slots pings every thread of
// its domain that may hold a protection with a signal and waits until each has answered; a thread
// answers in its handler, and answering is what publishes its slots.
//
// Why that is enough. The handler runs on the reader's own thread, between two of its
// instructions. It reads the number of the latest ping (acquire) and stores it as its answer
// (release). A reader that stored p in its slot before the handler ran: the store precedes the
// answer in the thread's order (the compiler keeps it there because of the signal fences on both
// sides; the processor because a release store orders the stores before it), so the reclaimer,
// whose acquire load reads the answer, then sees p in the slot (or a later value, which the reader
// stored with release after it was done with p). A reader that stores p after its handler ran
// re-reads the source after that: the handler read the reclaimer's ping number, which the
// reclaimer took (seq_cst RMW) after its unlink, so the re-read sees the unlink and the reader
// gives p up. A thread blocked in a system call or asleep answers at once (the kernel interrupts
// it; SA_RESTART resumes most calls, nanosleep and some others return EINTR); a thread that is
// descheduled answers when it next runs.
//
// Who is pinged: only threads that may hold a protection, those inside an operation (an open
// guard) or holding a protection that protects something. Each record carries an activity word
// (how many guards and protections hold it active, and how many times it went idle); a thread
// that becomes active stores it and runs a full fence before its first protection's re-read, and
// the reclaimer reads it after its own full fence: of the two, either the reclaimer sees the thread
// active, or the thread's re-reads see the reclaimer's unlinks (store buffering with a fence on
// each side). So a thread outside every operation is never interrupted (its blocking calls never
// see EINTR because of us), at the cost of one fence per operation, not per read. A thread that was
// inside an operation when the reclaimer looked may still be interrupted just after it left it.
//
// When no answer comes. A thread may block the signal, take it with sigwait() or a signalfd, or
// simply not run for a long time. The reclaimer never signals a thread again while an earlier ping
// is still on its way (each mailbox says whether one is), so pending signals do not pile up; it
// waits for an answer a bounded time counted from when the ping was sent (wait_for_answer: a ping
// still on its way from an earlier scan is waited for until its own time is up: a thread kept
// off its core, where threads outnumber cores, answers when it runs again), and for the threads
// that do not answer in time it falls back to a process-wide barrier (membarrier, else
// the mprotect barrier: core/platform/process_barrier.hpp), which makes every thread of the process
// run a full barrier whether or not it takes signals, and pairs with the readers' release store and
// compiler barrier exactly as hp_asym's does. stats().fallbacks counts those barriers. Where no
// process-wide barrier is available (old kernels off x86), the reclaimer waits for the answer as
// long as it takes. A replaced handler (the application's own, SIG_IGN, SIG_DFL) stops the program
// with a message naming the signal and the policy that changes it (core/platform/signals.hpp),
// checked before each round that signals anyone. A thread that is gone (tgkill fails with ESRCH) is
// not waited for: it runs nothing any more.
//
// Differences from the paper. POP's handler copies the thread's private reservations into a
// published array; here the slots are already in the thread's record, where reclaimers read them
// after the answer, so the handler copies nothing: the answer's release store publishes the slots
// as the copy would, with one copy of the slots fewer. It also keeps the handler free of any
// reference to the thread's records, which may belong to domains destroyed since (the handler only
// touches this thread's mailbox, which is never freed). The paper pings every thread; here only the
// active ones (above), and a lost answer degrades to a barrier instead of a hang.
//
// The mailboxes (core/platform/mailbox.hpp, shared with nbr): a record is bound to its thread's
// mailbox, which holds the thread's kernel id, its last answer and whether a ping is on its way to
// it.
#pragma once
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <new>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "fence.hpp"
#include "platform/mailbox.hpp"
#include "platform/process_barrier.hpp"
#include "platform/signals.hpp"
#include "stats.hpp"
#include "sync.hpp"

namespace reclaim::core {

namespace detail {

// The latest ping's number. Constant-initialized, so that the handler reads it without any
// initialization guard.
#if !defined(RECLAIM_VERIFY)
inline constinit std::atomic<std::uint64_t> pings{0};
inline std::atomic<std::uint64_t>& ping_counter() noexcept { return pings; }
#else
// The verification build: the checker's atomic, one per simulation (core/platform/mailbox.hpp).
inline core::atomic<std::uint64_t>& ping_counter() noexcept { return simulated->pings; }
#endif

// The ping's handler: answers with the latest ping's number.
inline void answer_ping(int sig, siginfo_t*, void*) noexcept {
  // First: the ping is no longer on its way (core/platform/mailbox.hpp). A reclaimer that found it
  // still on its way, and so sent none, took its ping number before that in S, so we answer its
  // ping too.
  thread_mailbox* m = signal_arrived(sig);
  if (m == nullptr) return;  // a stale id reused by a thread that uses no signalling domain
  // seq_cst (acquire part): pairs with the reclaimer's seq_cst RMW of `pings` (its unlinks happen
  // before what this thread does after the handler).
  const std::uint64_t n = ping_counter().load(std::memory_order_seq_cst);
  // The interrupted code's stores (its slots) stay before the answer (see the top of the file).
  core::signal_fence(std::memory_order_seq_cst);
  // release: pairs with the reclaimer's acquire load in wait_for_answer(); what this thread stored
  // before it was interrupted (its protections) is visible to the reclaimer from then on.
  m->answered.store(n, RECLAIM_MUTATED(pop_answer_relaxed) ? std::memory_order_relaxed
                                                            : std::memory_order_release);
}

}  // namespace detail

// The strategy: Signal is the ping's signal policy (core/platform/signals.hpp).
template <class Signal>
struct ping_fence : compiler_only_light_side {
  static constexpr std::string_view scheme_name = "hazard_pop";
  using clock = std::chrono::steady_clock;

  // The fallback barrier for threads that do not answer, prepared with the handler (it may not
  // exist here: then the reclaimer waits for every answer).
  static void prepare() {
    install_signal_handler(Signal::number(), Signal::describe(), "hazard_pop (Publish-on-Ping)",
                           &detail::answer_ping);
#if defined(RECLAIM_VERIFY)
    detail::make_simulated_globals();
#endif
    (void)fallback_barrier();
  }

  // A record's binding to its thread's mailbox, and its activity; reclaimers ping the threads of
  // bound, active records.
  struct record_state {
    record_state() = default;
    record_state(const record_state&) = delete;
    record_state& operator=(const record_state&) = delete;
    // The domain is destroyed: no reclaimer is left to ping through this record.
    ~record_state() {
      if (bound.load(std::memory_order_relaxed))
        mailbox.load(std::memory_order_relaxed)->holders.fetch_sub(1, std::memory_order_release);
    }

    // Read by reclaimers. activity: (times it went idle << 32) | guards and protections active.
    core::atomic<bool> bound{false};
    core::atomic<thread_mailbox*> mailbox{nullptr};
    core::atomic<std::uint64_t> activity{0};
    // Owner only: what its last heavy() pinged, kept for its capacity.
    struct ping {
      const record_state* state;
      thread_mailbox* mailbox;
      std::uint64_t activity;
      clock::time_point give_up;
    };
    std::vector<ping> pinged;
  };

  // Guards and holding protections make a record active (activate(), deactivate()).
  static constexpr bool tracks_activity = true;

  // Before the owner's first protection: a relaxed load and a branch on the fast path.
  static void enter(record_state& s) {
    if (!s.bound.load(std::memory_order_relaxed)) [[unlikely]]
      bind(s);
  }

  // The record becomes active (its first guard or protection): true on the change from idle, after
  // which the caller runs a full fence before any protection's re-read (pairs with the fence in
  // heavy(): either the reclaimer sees us active, or our re-reads see its unlinks). The store is
  // relaxed: the fence that follows orders it.
  static bool activate(record_state& s) noexcept {
    const std::uint64_t a = s.activity.load(std::memory_order_relaxed);
    s.activity.store(a + 1, std::memory_order_relaxed);
    return count_of(a) == 0;
  }
  // The record's last guard or protection ends, its slots cleared (release stores): returns true
  // when the record is idle from here on. release: pairs with the acquire load in heavy() and
  // wait_for_answer(): a reclaimer that sees us idle sees the cleared slots.
  static bool deactivate(record_state& s) noexcept {
    const std::uint64_t a = s.activity.load(std::memory_order_relaxed) - 1;
    const bool idle = count_of(a) == 0;
    s.activity.store(idle ? a + went_idle : a, std::memory_order_release);
    return idle;
  }

  // The owner leaves the domain, its slots cleared (release stores). release: pairs with the
  // reclaimer's acquire load of `bound` in wait_for_answer(): a reclaimer that stops waiting
  // because the record is unbound sees the cleared slots.
  static void leave(record_state& s) noexcept {
    if (!s.bound.load(std::memory_order_relaxed)) return;
    s.activity.store(idle_after(s.activity.load(std::memory_order_relaxed)),
                     std::memory_order_relaxed);
    s.bound.store(false, std::memory_order_release);
    s.mailbox.load(std::memory_order_relaxed)->holders.fetch_sub(1, std::memory_order_release);
  }
  // In a child of fork(): the record's thread does not exist here. Unbound, so that no reclaimer
  // pings it; its mailbox is freed with every other (core/platform/mailbox.hpp).
  static void forget(record_state& s) noexcept {
    s.activity.store(idle_after(s.activity.load(std::memory_order_relaxed)),
                     std::memory_order_relaxed);
    s.bound.store(false, std::memory_order_relaxed);
  }

  // Pings every thread bound to an active record of the domain but our own, waits for each
  // answer, and falls back to a process-wide barrier for those that do not answer in time;
  // counts the signals and the fallbacks in `ctr`. Never needs memory it cannot get: without room
  // to remember whom it pinged, it waits for each right after pinging it.
  template <class ForEachState>
  static void heavy(record_state& mine, ForEachState&& for_each_state, counters& ctr) noexcept {
    // seq_cst RMW: our unlinks happen before a handler that reads this number or a later one
    // (seq_cst load in answer_ping()). Preceded by a full fence: in the single order S, our reads
    // of `bound` and `activity` below follow our unlinks, pairing with bind()'s fence and the
    // fence after activate() (a thread we see unbound or idle re-reads sources after the unlinks).
    core::thread_fence(std::memory_order_seq_cst);
    const std::uint64_t n = detail::ping_counter().fetch_add(1, std::memory_order_seq_cst) + 1;
    thread_mailbox* self = detail::my_mailbox.load(std::memory_order_relaxed);
    const bool can_fall_back = fallback_barrier() != nullptr;
    mine.pinged.clear();
    bool handler_checked = false, unanswered = false;
    for_each_state([&](const record_state& s) {
      // seq_cst: see above; acquire part: the mailbox the owner bound with.
      if (!s.bound.load(std::memory_order_seq_cst)) return;
      thread_mailbox* m = s.mailbox.load(std::memory_order_relaxed);
      // Our own slots we read in program order. (By record too: an exiting thread's handler no
      // longer answers, its mailbox already given up, while it scans once more.)
      if (&s == &mine || m == self) return;
      // acquire (and after the fence above): pairs with the release store in deactivate(): an
      // idle record's slots are seen cleared.
      const std::uint64_t a = s.activity.load(std::memory_order_acquire);
      if (count_of(a) == 0) return;
      if (!std::exchange(handler_checked, true))
        require_signal_handler(Signal::number(), "hazard_pop", &detail::answer_ping);
      // At most one ping on its way to a thread (core/platform/mailbox.hpp). One that has not
      // answered an earlier ping (it has not run since, or blocks the signal, or takes it with
      // sigwait()) gets no second one: we wait for that one until its time is up, then the barrier
      // covers it.
      const sent ping = send_once(*m, Signal::number());
      if (ping == sent::thread_gone) return;
      const clock::time_point now = clock::now();
      if (ping == sent::now) {
        counters::add(ctr.signals, 1);
        // relaxed: a hint for later scans; one that reads an older time only falls back sooner.
        m->ping_sent.store(now.time_since_epoch().count(), std::memory_order_relaxed);
      }
      const clock::time_point give_up =
          (ping == sent::now ? now
                             : clock::time_point(clock::duration(
                                   m->ping_sent.load(std::memory_order_relaxed)))) +
          answer_patience;
      if (can_fall_back && give_up <= now) {
        unanswered = true;
        return;
      }
      try {
        mine.pinged.push_back({&s, m, a, give_up});
      } catch (const std::bad_alloc&) {
        unanswered |= !wait_for_answer(s, *m, n, a, give_up);
      }
    });
    for (const auto& p : mine.pinged)
      if (!RECLAIM_MUTATED(pop_scan_without_answers))
        unanswered |= !wait_for_answer(*p.state, *p.mailbox, n, p.activity, p.give_up);
    if (unanswered) {
      // Full fences around the barrier: as in asymmetric_fence::heavy() (core/fence.hpp).
      fallback_barrier()();
      core::thread_fence(std::memory_order_seq_cst);
      counters::add(ctr.fallbacks, 1);
    }
  }

 private:
  static constexpr std::uint64_t went_idle = std::uint64_t{1} << 32;
  static constexpr std::uint32_t count_of(std::uint64_t a) noexcept {
    return static_cast<std::uint32_t>(a);
  }
  static constexpr std::uint64_t idle_after(std::uint64_t a) noexcept {
    return (a & ~(went_idle - 1)) + (count_of(a) != 0 ? went_idle : 0);
  }

  // How long after a ping a reclaimer waits for its answer before it falls back to the
  // process-wide barrier: a running thread answers within microseconds; one that is descheduled
  // may take a time slice.
  static constexpr auto answer_patience = std::chrono::milliseconds(2);

  // Waits for the handler's answer to ping n or a later one, or for the record's owner to be done
  // with what it held when we looked (it went idle since: its activity moved past `seen`; or it
  // is unbound, or bound to another mailbox: a thread that bound it after our ping needs no
  // answer, since its re-reads follow our unlinks). False if none came by give_up (and the
  // fallback barrier exists; otherwise it waits as long as it takes).
  static bool wait_for_answer(const record_state& s, const thread_mailbox& m, std::uint64_t n,
                              std::uint64_t seen, clock::time_point give_up) noexcept {
    for (unsigned spins = 0;; ++spins) {
      // acquire: pairs with the release store in answer_ping(), and with deactivate() and leave().
      if (m.answered.load(std::memory_order_acquire) >= n) return true;
      if (!s.bound.load(std::memory_order_acquire) ||
          s.mailbox.load(std::memory_order_relaxed) != &m)
        return true;
      const std::uint64_t a = s.activity.load(std::memory_order_acquire);
      if ((a >> 32) != (seen >> 32)) return true;
      if (spins < 64) continue;
      // The thread may need this core to run its handler (threads may outnumber cores).
      core::yield_now();
      if (spins % 64 == 0 && fallback_barrier() && clock::now() > give_up)
        return false;
    }
  }

  // membarrier, or the mprotect barrier where membarrier is missing; nullptr where neither works.
  using barrier_fn = void (*)() noexcept;
  static barrier_fn fallback_barrier() noexcept {
#if defined(RECLAIM_VERIFY)
    // Not under the checker: a simulated thread answers when it next runs, so a reclaimer waits
    // for every answer (as where no barrier exists), and clock time plays no part.
    return nullptr;
#endif
    static const barrier_fn chosen = []() noexcept -> barrier_fn {
      try {
        membarrier_barrier::prepare();
        return &membarrier_barrier::run;
      } catch (...) {
        return nullptr;
      }
    }();
    return chosen;
  }

  [[gnu::noinline]] static void bind(record_state& s) {
    thread_mailbox& m = take_mailbox();
    unblock_signal(Signal::number());  // a reclaimer waits for us to answer
    m.holders.fetch_add(1, std::memory_order_relaxed);  // we hold it already: no order needed
    s.mailbox.store(&m, std::memory_order_relaxed);
    // seq_cst store and fence: the binding is visible before our first protection's re-read. A
    // reclaimer that read us unbound had its full fence (heavy()) before that read in S, so our
    // re-reads after this fence see its unlinks.
    s.bound.store(true, std::memory_order_seq_cst);
    core::thread_fence(std::memory_order_seq_cst);
  }
};

}  // namespace reclaim::core
