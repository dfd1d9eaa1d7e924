// The signal machinery of nbr (nbr.hpp): the per-thread phase word that the neutralizing signal's
// handler reads, the handler itself and its installation. What every signalling scheme shares
// (installing a handler, unblocking, sending to one thread) is in core/signals.hpp.
//
// The handler touches only async-signal-safe state: lock-free atomics reached through a constinit
// thread_local pointer, the thread's restart point (reclaim::detail::restart_point, concepts.hpp),
// pthread_sigmask and siglongjmp. It is one function for every nbr instantiation and every domain: a
// thread is in at most one read phase at a time, and current_phase says which.
#pragma once
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <ucontext.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "../../concepts.hpp"
#include "../../core/signals.hpp"

namespace reclaim::detail {

// The part of a thread's nbr record that its signal handler reads and writes.
struct nbr_phase {
  // Odd while the thread is in a read phase (restartable), even otherwise. Written only by the
  // owning thread and by the signal handler, which runs on that same thread; reclaimers read it.
  // A reclaimer that saw an odd value waits until it changes: the thread either left its read
  // phase (write phase, end of operation, exit) or its handler restarted it (which leaves the
  // read phase first).
  std::atomic<std::uint64_t> seq{0};
  // Read phases restarted by a neutralizing signal (the handler's own count; for observers).
  std::atomic<std::uint64_t> restarts{0};
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "the signal handler may only touch lock-free atomics");

// The phase word of the operation this thread runs, or nullptr between operations. Written by the
// owning thread, read by its own signal handler (so relaxed suffices: same thread).
inline constinit thread_local std::atomic<nbr_phase*> current_phase{nullptr};
static_assert(std::atomic<nbr_phase*>::is_always_lock_free);

// The signal mask this thread runs its read phases with, recorded when it registers with a domain
// (the neutralizing signals unblocked). Read by the handler: plain thread-local memory.
inline constinit thread_local sigset_t read_phase_mask{};

// Set by the handler when it declined to restart because the masks differed: either another
// handler was running (harmless), or the application changed this thread's mask since it was
// recorded. The next operation then records the mask again (refresh_read_phase_mask()).
inline constinit thread_local std::atomic<bool> read_phase_mask_suspect{false};
static_assert(std::atomic<bool>::is_always_lock_free);

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
inline void nbr_on_signal(int, siginfo_t*, void* context) noexcept {
  nbr_phase* phase = current_phase.load(std::memory_order_relaxed);
  if (phase == nullptr) return;
  const std::uint64_t s = phase->seq.load(std::memory_order_relaxed);
  if ((s & 1) == 0) return;
  if (!interrupted_the_read_phase_itself(context)) {
    read_phase_mask_suspect.store(true, std::memory_order_relaxed);
    return;
  }
  phase->restarts.store(phase->restarts.load(std::memory_order_relaxed) + 1,
                        std::memory_order_relaxed);
  // release: pairs with the acquire load in the reclaimer's wait (wait_for_readers in nbr.hpp);
  // everything this read phase did (only reads) happens before the reclaimer frees.
  phase->seq.store(s + 1, std::memory_order_release);
  pthread_sigmask(SIG_SETMASK, &read_phase_mask, nullptr);
  siglongjmp(restart_point, 1);
}

// Installs nbr_on_signal for `sig` once per process (core/signals.hpp; SA_RESTART: a thread
// interrupted in a system call outside a read phase resumes it; SA_SIGINFO: the handler reads the
// interrupted context's mask). Throws if the signal already has a handler that is not nbr's.
inline void install_nbr_handler(int sig, const std::string& sig_name) {
  core::install_signal_handler(sig, sig_name, "nbr", &nbr_on_signal);
}

// A thread that registers with an nbr domain must receive the signal (core::unblock_signal).
// Records the mask its read phases run with.
inline void unblock_signal(int sig) noexcept {
  core::unblock_signal(sig);
  pthread_sigmask(SIG_BLOCK, nullptr, &read_phase_mask);
}

// Outside any read phase, after the handler declined a restart: record the mask again.
inline void refresh_read_phase_mask() noexcept {
  if (!read_phase_mask_suspect.load(std::memory_order_relaxed)) [[likely]] return;
  read_phase_mask_suspect.store(false, std::memory_order_relaxed);
  pthread_sigmask(SIG_BLOCK, nullptr, &read_phase_mask);
}

using core::send_signal;
using core::this_thread_kernel_id;

}  // namespace reclaim::detail
