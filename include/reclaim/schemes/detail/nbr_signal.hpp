// SPDX-License-Identifier: MIT
// The signal machinery of nbr (nbr.hpp): the per-thread phase word that the neutralizing signal's
// handler reads, the handler itself and its installation. What every signalling scheme shares
// (installing a handler, unblocking, sending to one thread) is in core/platform/signals.hpp.
//
// The handler touches only async-signal-safe state: lock-free atomics reached through a constinit
// thread_local pointer, the thread's restart point (reclaim::detail::restart_point, concepts.hpp),
// pthread_sigmask and siglongjmp. It is one function for every nbr instantiation and every domain:
// a thread is in at most one read phase at a time, and current_phase says which.
//
// User code in a read phase. A jump out of the middle of a user's comparison or hash (which may
// allocate, or take a lock) would leave malloc's lock or the user's held for ever. Containers run
// such code in a window (enter_user_code() / leave_user_code(): ds/detail/read_phase_compare.hpp
// wraps their comparisons) in which the handler only asks for the restart; the thread restarts
// itself when the window closes. The reclaimer waits meanwhile, as for any reader that has not
// left its read phase.
#pragma once
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <ucontext.h>

#include <atomic>
#include <cassert>
#include <cstdint>
#include <cstdio>
#include <string>

#include "../../concepts.hpp"
#include "../../read_phase.hpp"
#include "../../core/platform/mailbox.hpp"
#include "../../core/platform/signals.hpp"
#include "../../core/sync.hpp"

namespace reclaim::detail {

// The part of a thread's nbr record that its signal handler reads and writes.
struct nbr_phase {
  // Odd while the thread is in a read phase (restartable), even otherwise. Written only by the
  // owning thread and by the signal handler, which runs on that same thread; reclaimers read it.
  // A reclaimer that saw an odd value waits until it changes: the thread either left its read
  // phase (write phase, end of operation, exit) or its handler restarted it (which leaves the
  // read phase first).
  core::atomic<std::uint64_t> seq{0};
  // Read phases restarted by a neutralizing signal (the handler's own count; for observers).
  core::atomic<std::uint64_t> restarts{0};
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "the signal handler may only touch lock-free atomics");

// The phase word of the operation this thread runs, or nullptr between operations. Written by the
// owning thread, read by its own signal handler (so relaxed suffices: same thread).
RECLAIM_SIGNAL_LOCAL(nbr_phase*, current_phase, nullptr);
static_assert(std::atomic<nbr_phase*>::is_always_lock_free);

// The signal mask this thread runs its read phases with, recorded when it registers with a domain
// (the neutralizing signals unblocked). Read by the handler: plain thread-local memory.
inline constinit thread_local sigset_t read_phase_mask{};

// Set by the handler when it declined to restart because the masks differed: either another
// handler was running (harmless), or the application changed this thread's mask since it was
// recorded. The next operation then records the mask again (refresh_read_phase_mask()).
RECLAIM_SIGNAL_LOCAL(bool, read_phase_mask_suspect, false);
static_assert(std::atomic<bool>::is_always_lock_free);

// The user code window (see the top): set while it is open; restart_wanted set by the handler when
// a signal asked for a restart inside it. Written by the thread and its own handler (relaxed, with
// signal fences: same thread).
RECLAIM_SIGNAL_LOCAL(bool, in_user_code, false);
RECLAIM_SIGNAL_LOCAL(bool, restart_wanted, false);

// Whether the context the signal interrupted ran with the read-phase mask. It does not when the
// signal arrived while another handler of the application ran on top of the read phase (that
// handler's signal is blocked while it runs): jumping out would abort the application's handler.
inline bool interrupted_the_read_phase_itself(const void* context) noexcept {
  const sigset_t& interrupted = static_cast<const ucontext_t*>(context)->uc_sigmask;
  // The kernel fills only the signals it knows (1 to SIGRTMAX) of the ucontext's mask.
  for (int sig = 1; sig <= SIGRTMAX; ++sig)
    if (sigismember(&interrupted, sig) != sigismember(&read_phase_mask, sig)) return false;
  return true;
}

// The neutralizing signal's handler. In a read phase: count the restart, leave the read phase (so
// that a waiting reclaimer sees the phase word change), restore the read-phase mask (the kernel
// blocked the signal for the handler, and siglongjmp to a point saved with sigsetjmp(env, 0) does
// not restore it) and jump back to the start of the read phase. Anywhere else: return (the signal
// only asked "are you reading?", and the answer is no). In a read phase interrupted by another
// handler of the application: return without acknowledging; the read phase goes on once that
// handler returns, and the reclaimer keeps waiting for it (and signals again) until it leaves.
// Leaves the read phase, counted as a restart: from here on a reclaimer waiting for it may free.
// release: pairs with the acquire load in the reclaimer's wait (wait_for() in nbr.hpp);
// everything the read phase did (only reads) happens before the reclaimer frees.
inline void leave_neutralized(nbr_phase& phase, std::uint64_t s) noexcept {
  phase.restarts.store(phase.restarts.load(std::memory_order_relaxed) + 1,
                       std::memory_order_relaxed);
  phase.seq.store(s + 1, std::memory_order_release);
}

inline void nbr_on_signal(int sig, siginfo_t*, void* context) noexcept {
  // First: the signal is no longer on its way (core/platform/mailbox.hpp), whatever this thread is
  // doing: a reclaimer that finds it on its way sends no other, and counts on this run of the
  // handler.
  (void)core::signal_arrived(sig);
  nbr_phase* phase = current_phase.load(std::memory_order_relaxed);
  if (phase == nullptr) return;
  const std::uint64_t s = phase->seq.load(std::memory_order_relaxed);
  if ((s & 1) == 0) return;
  if (!interrupted_the_read_phase_itself(context)) {
    read_phase_mask_suspect.store(true, std::memory_order_relaxed);
    return;
  }
  if (in_user_code.load(std::memory_order_relaxed)) {
    restart_wanted.store(true, std::memory_order_relaxed);  // leave_user_code() restarts
    return;
  }
  leave_neutralized(*phase, s);
  core::set_signal_mask(read_phase_mask);
  siglongjmp(RECLAIM_RESTART_POINT, 1);
}

// The window around user code inside a read phase (see the top).
inline void enter_user_code() noexcept {
  in_user_code.store(true, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);  // open before the user's first instruction
}
inline void leave_user_code() noexcept {
  std::atomic_signal_fence(std::memory_order_seq_cst);  // closed after the user's last instruction
  in_user_code.store(false, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);  // a signal from here on jumps by itself
  if (!restart_wanted.load(std::memory_order_relaxed)) [[likely]] return;
  // Cleared first: a signal between here and the jump restarts us by itself, with nothing left
  // wanted. (The handler wants a restart only in a read phase, which user code does not end.)
  restart_wanted.store(false, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  nbr_phase& phase = *current_phase.load(std::memory_order_relaxed);
  const std::uint64_t s = phase.seq.load(std::memory_order_relaxed);
  assert((s & 1) == 1);
  leave_neutralized(phase, s);
  siglongjmp(RECLAIM_RESTART_POINT, 1);  // not in a handler: the mask is the read phase's already
}
// An operation ends (possibly by an exception out of user code): no window stays open.
inline void close_user_code() noexcept {
  in_user_code.store(false, std::memory_order_relaxed);
  restart_wanted.store(false, std::memory_order_relaxed);
}

// Installs nbr_on_signal for `sig` once per process (core/platform/signals.hpp; SA_RESTART: a
// thread interrupted in a system call outside a read phase resumes it; SA_SIGINFO: the handler
// reads the interrupted context's mask). Throws if the signal already has a handler that is not
// nbr's.
inline void install_nbr_handler(int sig, const std::string& sig_name) {
  core::install_signal_handler(sig, sig_name, "nbr", &nbr_on_signal);
#if defined(RECLAIM_VERIFY)
  core::detail::make_simulated_globals();  // the mailboxes' list (core/platform/mailbox.hpp)
#endif
}

// A thread that registers with an nbr domain must receive the signal (core::unblock_signal).
// Records the mask its read phases run with.
inline void unblock_signal(int sig) noexcept {
  core::unblock_signal(sig);
  pthread_sigmask(SIG_BLOCK, nullptr, &read_phase_mask);
}

// Debug builds, when a thread binds to a domain: no handler of the application is installed with
// SA_NODEFER while leaving `sig` out of its sa_mask. Such a handler runs with the very mask of the
// read phase it interrupts, so nbr_on_signal() cannot tell it from the read phase and would jump
// out of it, cutting the application's handler short. Names the signal and the fix, and returns
// false. The handlers of synchronous faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP: a crash
// handler, a sanitizer's) are left out: they run only when the thread itself faults.
inline bool no_handler_hides_from(int sig) noexcept {
  for (int other = 1; other <= SIGRTMAX; ++other) {
    struct sigaction a{};
    if (other == sig || other == SIGSEGV || other == SIGBUS || other == SIGFPE ||
        other == SIGILL || other == SIGTRAP || sigaction(other, nullptr, &a) != 0)
      continue;
    const bool handled = (a.sa_flags & SA_SIGINFO) != 0 ||
                         (a.sa_handler != SIG_DFL && a.sa_handler != SIG_IGN);
    if (handled && (a.sa_flags & SA_NODEFER) != 0 && !sigismember(&a.sa_mask, sig)) {
      std::fprintf(stderr,
                   "reclaim::nbr: the handler of signal %d is installed with SA_NODEFER and "
                   "without nbr's signal (%d) in its sa_mask: nbr would take it for the read phase "
                   "it interrupts and cut it short; add signal %d to that handler's sa_mask\n",
                   other, sig, sig);
      return false;
    }
  }
  return true;
}

// Outside any read phase, after the handler declined a restart: record the mask again.
inline void refresh_read_phase_mask() noexcept {
  if (!read_phase_mask_suspect.load(std::memory_order_relaxed)) [[likely]] return;
  read_phase_mask_suspect.store(false, std::memory_order_relaxed);
  pthread_sigmask(SIG_BLOCK, nullptr, &read_phase_mask);
}


}  // namespace reclaim::detail
