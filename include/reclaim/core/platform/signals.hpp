// SPDX-License-Identifier: MIT
// Signals that schemes send to the threads of their domain: nbr's neutralizing signal
// (schemes/detail/nbr_signal.hpp) and Publish-on-Ping's ping (core/ping.hpp). What they share is
// here: the policy that chooses the signal, installing a handler once per process without taking
// over one the application installed, checking before a round of signals that the application has
// not replaced it since, unblocking the signal in a thread that registers, and sending it to one
// thread by its kernel id.
//
// What the application must leave alone: the scheme's signal number (its handler, and its
// delivery: a thread that blocks it, or reads it with sigwait() or a signalfd, takes it from the
// scheme). The defaults, SIGRTMIN+4 (nbr) and SIGRTMIN+5 (hazard_pop, epoch_pop), are chosen to be
// out of the way; a program that uses them picks others with the policies below.
#pragma once
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>

#include "../sync.hpp"
#include "fork.hpp"

// State that a thread shares only with its own signal handlers: `inline constinit thread_local
// std::atomic<type> name{init}`, accessed relaxed with signal fences (same thread). In the
// verification build, one value per simulated thread, each access a point where a simulated signal
// may arrive (core/verify/relacy.hpp, verify::own).
#if defined(RECLAIM_VERIFY)
#define RECLAIM_SIGNAL_LOCAL(type, name, init) inline ::reclaim::core::verify::own<type> name{init}
#else
#define RECLAIM_SIGNAL_LOCAL(type, name, init) \
  inline constinit thread_local std::atomic<type> name { init }
#endif

namespace reclaim::core {

using signal_handler = void (*)(int, siginfo_t*, void*);

// Installs `handler` for `sig` once per process (SA_SIGINFO, SA_RESTART: a thread interrupted in a
// system call resumes it). If the signal already has another handler, throws, naming the signal,
// the scheme and the policy to choose another: the application's own handlers are left alone, and
// so are other schemes' (nbr and the POP schemes cannot share one signal).
inline void install_signal_handler(int sig, const std::string& sig_name,
                                   std::string_view scheme, signal_handler handler) {
  struct installing {};
  std::lock_guard lock(mutex_across_fork<installing>());
#if defined(RECLAIM_VERIFY)
  verify::install_handler(sig, handler);  // the simulated signals' handler (core/verify/relacy.hpp)
#endif
  const std::string who = "reclaim::" + std::string(scheme);
  struct sigaction old{};
  if (sigaction(sig, nullptr, &old) != 0)
    throw std::runtime_error(who + ": cannot query signal " + sig_name);
  const bool ours = (old.sa_flags & SA_SIGINFO) != 0 && old.sa_sigaction == handler;
  const bool foreign = !ours && ((old.sa_flags & SA_SIGINFO) != 0 ||
                                 (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN));
  if (foreign)
    throw std::runtime_error(
        who + ": signal " + sig_name + " already has a handler that is not " + std::string(scheme) +
        "'s; choose another signal with the policy reclaim::rt_signal<K> (SIGRTMIN+K) or "
        "reclaim::signal_number<N>");
  if (ours) return;
  struct sigaction action{};
  action.sa_sigaction = handler;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART | SA_SIGINFO;
  if (sigaction(sig, &action, nullptr) != 0)
    throw std::runtime_error(who + ": cannot install a handler for signal " + sig_name);
}

// Before a round of signals: `handler` must still be the signal's handler. An application that
// replaced it after the domain installed it (its own handler, SIG_IGN, SIG_DFL) would make the
// round wait for answers that never come, or kill the process (SIG_DFL of a real-time signal), so
// this stops the program with a message naming the signal and the policy that changes it. One
// system call; schemes run it once per round, only when the round signals someone.
inline void require_signal_handler(int sig, std::string_view scheme,
                                   signal_handler handler) noexcept {
  struct sigaction now{};
  if (sigaction(sig, nullptr, &now) == 0 && (now.sa_flags & SA_SIGINFO) != 0 &&
      now.sa_sigaction == handler)
    return;
  const char* what = (now.sa_flags & SA_SIGINFO) != 0 ? "another handler"
                     : now.sa_handler == SIG_DFL      ? "SIG_DFL"
                     : now.sa_handler == SIG_IGN      ? "SIG_IGN"
                                                      : "another handler";
  char name[48];
  if (sig >= SIGRTMIN && sig <= SIGRTMAX)
    std::snprintf(name, sizeof name, "%d (SIGRTMIN+%d)", sig, sig - SIGRTMIN);
  else
    std::snprintf(name, sizeof name, "%d", sig);
  std::fprintf(stderr,
               "reclaim::%.*s: the handler of signal %s was replaced (now %s) after the domain "
               "installed it; the scheme needs that signal for itself: leave it alone, or give the "
               "scheme another with the policy reclaim::rt_signal<K> (SIGRTMIN+K) or "
               "reclaim::signal_number<N>\n",
               static_cast<int>(scheme.size()), scheme.data(), name, what);
  std::abort();
}

// A thread that registers with a signalling domain must receive the signal (it inherits its
// creator's mask, which may block it): a reclaimer waits for the threads it signals.
inline void unblock_signal(int sig) noexcept {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

// The kernel thread id, which (unlike a pthread_t) may be used after the thread exited: tgkill to a
// stale id fails with ESRCH or reaches another thread of this process, whose handler must then
// find nothing to do (each scheme's handler says why it does).
inline pid_t this_thread_kernel_id() noexcept {
#if defined(RECLAIM_VERIFY)
  // A simulated thread's id: its index + 1 (core/verify/relacy.hpp, verify::send_signal()).
  if (rl::is_ctx()) return static_cast<pid_t>(rl::thread_index() + 1);
#endif
  return static_cast<pid_t>(::syscall(SYS_gettid));
}

// The signal mask of this thread from here on (pthread_sigmask(SIG_SETMASK)).
inline void set_signal_mask(const sigset_t& mask) noexcept {
  pthread_sigmask(SIG_SETMASK, &mask, nullptr);
#if defined(RECLAIM_VERIFY)
  verify::set_signal_mask(mask);  // and of its simulated signals
#endif
}

// Sends sig to the thread of this process with kernel id tid. False when no such thread exists
// (ESRCH): it exited, or it was a thread of the parent of this forked process. A thread that is
// gone runs nothing any more, so a reclaimer waiting for its answer may stop waiting. (tgkill names
// our own process: a reused id of another process is never signalled.)
inline bool send_signal(pid_t tid, int sig) noexcept {
#if defined(RECLAIM_VERIFY)
  // A simulated thread's: marked pending, delivered at one of its later accesses.
  if (rl::is_ctx()) return verify::send_signal(tid, sig);
#endif
  return ::syscall(SYS_tgkill, ::getpid(), tid, sig) == 0 || errno != ESRCH;
}

}  // namespace reclaim::core
