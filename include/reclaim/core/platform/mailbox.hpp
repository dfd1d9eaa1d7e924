// SPDX-License-Identifier: MIT
// A thread's mailbox for the schemes' signals (nbr's neutralizing signal, the POP schemes' ping):
// its kernel id, which of those signals are on their way to it, and the POP answer. A signal
// handler reaches its own thread's mailbox through a constinit thread_local pointer, and mailboxes
// are never freed, so a late or stale signal never touches freed memory, nor a record of a domain
// destroyed since.
//
// At most one signal of each number on its way. A sender sets the signal's bit with an RMW and
// sends only if the bit was clear; the handler clears it first thing. So a thread that blocks the
// signal, or takes it with sigwait() or a signalfd, gets one, not one per resend: pending real-time
// signals queue up, against a limit (RLIMIT_SIGPENDING) shared by every process of the user.
//
// Holding. A thread takes a mailbox on its first use of a signalling domain, from a process-wide
// list that only grows, reusing the mailboxes of exited threads. A mailbox is held by its thread
// (released at thread exit by a thread-specific key's destructor) and by each record of a live
// domain that the thread bound to it (released when the thread leaves the domain, or when the
// domain is destroyed), so that a reclaimer that still sees a record bound to a mailbox knows the
// mailbox is that thread's. In a child of fork() every mailbox but the forking thread's is free
// again (the records bound to them are forgotten: core/registry.hpp), and the forking thread's
// learns its new kernel id.
#pragma once
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdint>

#include "../sync.hpp"
#include "signals.hpp"
#include "thread_exit.hpp"

namespace reclaim::core {

struct thread_mailbox {
  core::atomic<pid_t> tid{0};                 // the owner's kernel thread id
  core::atomic<std::uint64_t> on_its_way{0};  // bit sig - 1: sent, its handler has not run yet
  core::atomic<std::uint64_t> answered{0};    // POP: the number of the last ping answered
  core::atomic<std::int64_t> ping_sent{0};    // POP: when it was sent (steady_clock ticks)
  core::atomic<unsigned> holders{0};          // 0: free; the owner and its bound records
  thread_mailbox* next = nullptr;             // immutable once published
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free &&
                  std::atomic<thread_mailbox*>::is_always_lock_free,
              "a signal handler may only touch lock-free atomics");

namespace detail {

// Constant-initialized, so that a handler reads them without any initialization guard.
#if !defined(RECLAIM_VERIFY)
inline constinit std::atomic<thread_mailbox*> mailboxes{nullptr};  // every mailbox, newest first
inline std::atomic<thread_mailbox*>& mailbox_list() noexcept { return mailboxes; }
#else
// The verification build: the list and the ping counter (core/ping.hpp) are the checker's atomics,
// which exist only inside a simulation. Made by the first signalling domain of a simulation
// (make_simulated_globals(), from its constructor: before the model's threads run), freed with
// every mailbox when the simulation ends (core::verify::end_simulation(), which a model runs after
// its domains are gone).
struct simulated_globals {
  core::atomic<thread_mailbox*> mailboxes{nullptr};
  core::atomic<std::uint64_t> pings{0};
};
inline simulated_globals* simulated = nullptr;
inline void make_simulated_globals() {
  if (simulated == nullptr) simulated = new simulated_globals;
}
inline core::atomic<thread_mailbox*>& mailbox_list() noexcept { return simulated->mailboxes; }
inline void free_simulated_globals() {
  if (simulated == nullptr) return;
  for (thread_mailbox *m = simulated->mailboxes.load(std::memory_order_relaxed), *next; m;
       m = next) {
    next = m->next;
    delete m;
  }
  delete simulated;
  simulated = nullptr;
}
// A failed simulation stops wherever it was: the next starts without its memory.
inline const bool simulated_globals_hooked =
    (core::verify::simulation_end_hooks().push_back(&free_simulated_globals),
     core::verify::per_thread_resets().push_back([] { simulated = nullptr; }), true);
#endif
// This thread's mailbox, or nullptr. Written by the thread, read by its own handlers (relaxed,
// with signal fences: same thread).
RECLAIM_SIGNAL_LOCAL(thread_mailbox*, my_mailbox, nullptr);

// Thread exit: the thread lets go of its mailbox (its bound records may still hold it).
inline void release_my_mailbox(void* mailbox) noexcept {
  my_mailbox.store(nullptr, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);  // the handlers see nullptr from here on
  // release: pairs with the acquire CAS of the next taker in take_mailbox().
  static_cast<thread_mailbox*>(mailbox)->holders.fetch_sub(1, std::memory_order_release);
}

void forget_other_threads_mailboxes() noexcept;

// Made with the first mailbox, and with it the mailboxes' fork handler.
inline pthread_key_t mailbox_exit_key() {
  static const pthread_key_t key = [] {
    const pthread_key_t k = new_thread_exit_key(&release_my_mailbox);
    (void)pthread_atfork(nullptr, nullptr, &forget_other_threads_mailboxes);
    return k;
  }();
  return key;
}

// In a child of fork(), where only the forking thread lives on: every other thread's mailbox is
// free again, no signal is on its way to any, and ours has the kernel id of the child's thread.
inline void forget_other_threads_mailboxes() noexcept {
  thread_mailbox* mine = my_mailbox.load(std::memory_order_relaxed);
  for (thread_mailbox* m = mailbox_list().load(std::memory_order_relaxed); m; m = m->next) {
    m->on_its_way.store(0, std::memory_order_relaxed);
    if (m != mine) m->holders.store(0, std::memory_order_relaxed);
  }
  if (mine) mine->tid.store(this_thread_kernel_id(), std::memory_order_relaxed);
}

}  // namespace detail

// This thread's mailbox, taken on its first use of a signalling domain: a free one (held by no
// thread and no record) or a new one. Throws std::bad_alloc.
inline thread_mailbox& take_mailbox() {
  if (thread_mailbox* m = detail::my_mailbox.load(std::memory_order_relaxed)) return *m;
  const pthread_key_t key = detail::mailbox_exit_key();
  thread_mailbox* m = detail::mailbox_list().load(std::memory_order_acquire);
  for (; m; m = m->next) {
    unsigned free = 0;
    // acquire: pairs with the release decrements of its last holders, so that we start after
    // everything they did.
    if (m->holders.load(std::memory_order_relaxed) == 0 &&
        m->holders.compare_exchange_strong(free, 1, std::memory_order_acquire))
      break;
  }
  if (!m) {
    m = new thread_mailbox;
    m->holders.store(1, std::memory_order_relaxed);
    thread_mailbox* head = detail::mailbox_list().load(std::memory_order_relaxed);
    do {
      m->next = head;
      // release: publishes the mailbox; pairs with the acquire load above.
    } while (!detail::mailbox_list().compare_exchange_weak(head, m, std::memory_order_release,
                                                           std::memory_order_relaxed));
  }
  // relaxed: read by reclaimers only through a record bound after this (its own publication).
  m->tid.store(this_thread_kernel_id(), std::memory_order_relaxed);
  // A signal sent to the mailbox's previous owner that never arrived must not stop ours.
  m->on_its_way.store(0, std::memory_order_relaxed);
#if !defined(RECLAIM_VERIFY)
  pthread_setspecific(key, m);
#else
  (void)key;  // a simulated thread keeps its mailbox: no thread-specific destructor runs for it
#endif
  std::atomic_signal_fence(std::memory_order_seq_cst);  // set up before a handler may use it
  detail::my_mailbox.store(m, std::memory_order_relaxed);
  return *m;
}

// The first thing a handler of `sig` does: the signal is no longer on its way to this thread.
// Returns the thread's mailbox (nullptr for a thread that has none: a stale id reused). seq_cst:
// a sender whose RMW finds the bit still set (send_once()) counts on this run of the handler,
// whose later loads then follow that sender's earlier stores in the single order S.
inline thread_mailbox* signal_arrived(int sig) noexcept {
  thread_mailbox* m = detail::my_mailbox.load(std::memory_order_relaxed);
  if (m) m->on_its_way.fetch_and(~(std::uint64_t{1} << (sig - 1)), std::memory_order_seq_cst);
  return m;
}

enum class sent { now, already_on_its_way, thread_gone };

// Sends sig to the mailbox's thread unless one is still on its way there. seq_cst: see
// signal_arrived().
inline sent send_once(thread_mailbox& m, int sig) noexcept {
  const std::uint64_t bit = std::uint64_t{1} << (sig - 1);
  if (m.on_its_way.fetch_or(bit, std::memory_order_seq_cst) & bit) return sent::already_on_its_way;
  if (send_signal(m.tid.load(std::memory_order_relaxed), sig)) return sent::now;
  m.on_its_way.fetch_and(~bit, std::memory_order_relaxed);
  return sent::thread_gone;
}

}  // namespace reclaim::core
