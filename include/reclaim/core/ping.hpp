// Publish-on-Ping (Singh and Brown, PPoPP 2025): the fence strategy (core/fence.hpp) of hazard_pop
// and epoch_pop. Readers keep their protections private: a release store into their slot and a
// compiler barrier, no fence. A reclaimer that is about to read the slots pings every thread of
// its domain with a signal and waits until each has answered; a thread answers in its handler,
// and answering is what publishes its slots.
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
// descheduled answers when it next runs, and the reclaimer waits for it, yielding.
//
// Differences from the paper. POP's handler copies the thread's private reservations into a
// published array; here the slots are already in the thread's record, where reclaimers read them
// after the answer, so the handler copies nothing: the answer's release store publishes the slots
// as the copy would, with one copy of the slots fewer. It also keeps the handler free of any
// reference to the thread's records, which may belong to domains destroyed since (the handler only
// touches this thread's mailbox, which is never freed).
//
// The mailboxes. A thread that uses a POP domain takes a mailbox (its kernel id and its last
// answer) from a process-wide list that only grows and reuses the mailboxes of exited threads. A
// mailbox is held by its thread (released at thread exit by a thread-specific key's destructor)
// and by each record of a live domain that the thread has bound to it (released when the thread
// leaves the domain, or when the domain is destroyed), so that a reclaimer that still sees a
// record bound to a mailbox knows the mailbox is that thread's.
#pragma once
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "fence.hpp"
#include "signals.hpp"

namespace reclaim::core {

struct ping_mailbox {
  std::atomic<pid_t> tid{0};                // the owner's kernel thread id
  std::atomic<std::uint64_t> answered{0};   // the number of the last ping its handler answered
  std::atomic<unsigned> holders{0};         // 0: free; the owner and its bound records
  ping_mailbox* next = nullptr;             // immutable once published
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free &&
                  std::atomic<ping_mailbox*>::is_always_lock_free,
              "a signal handler may only touch lock-free atomics");

namespace detail {

// Constant-initialized, so that the handler reads them without any initialization guard.
inline constinit std::atomic<std::uint64_t> pings{0};          // the latest ping's number
inline constinit std::atomic<ping_mailbox*> mailboxes{nullptr};  // every mailbox, newest first
// This thread's mailbox, or nullptr. Written by the thread, read by its own handler (relaxed, with
// signal fences: same thread).
inline constinit thread_local std::atomic<ping_mailbox*> my_mailbox{nullptr};

// The ping's handler: answers with the latest ping's number.
inline void answer_ping(int, siginfo_t*, void*) noexcept {
  ping_mailbox* m = my_mailbox.load(std::memory_order_relaxed);
  if (m == nullptr) return;  // a stale id reused by a thread that uses no POP domain
  // acquire: pairs with the reclaimer's seq_cst RMW of `pings` (its unlinks happen before what
  // this thread does after the handler).
  const std::uint64_t n = pings.load(std::memory_order_acquire);
  // The interrupted code's stores (its slots) stay before the answer (see the top of the file).
  std::atomic_signal_fence(std::memory_order_seq_cst);
  // release: pairs with the reclaimer's acquire load in wait(); what this thread stored before
  // it was interrupted (its protections) is visible to the reclaimer from then on.
  m->answered.store(n, std::memory_order_release);
}

// Thread exit: the thread lets go of its mailbox (its bound records may still hold it).
inline void release_my_mailbox(void* mailbox) noexcept {
  my_mailbox.store(nullptr, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);  // the handler sees nullptr from here on
  // release: pairs with the acquire CAS of the next taker in take_mailbox().
  static_cast<ping_mailbox*>(mailbox)->holders.fetch_sub(1, std::memory_order_release);
}

inline pthread_key_t mailbox_exit_key() {
  static const pthread_key_t key = [] {
    pthread_key_t k;
    if (pthread_key_create(&k, &release_my_mailbox) != 0) {
      std::fputs("reclaim: pthread_key_create failed: no thread-specific key left\n", stderr);
      std::abort();
    }
    return k;
  }();
  return key;
}

// This thread's mailbox, taken on its first use of a POP domain: a free one (held by no thread and
// no record) or a new one. Throws std::bad_alloc.
inline ping_mailbox& take_mailbox() {
  if (ping_mailbox* m = my_mailbox.load(std::memory_order_relaxed)) return *m;
  const pthread_key_t key = mailbox_exit_key();
  ping_mailbox* m = mailboxes.load(std::memory_order_acquire);
  for (; m; m = m->next) {
    unsigned free = 0;
    // acquire: pairs with the release decrements of its last holders, so that we start after
    // everything they did.
    if (m->holders.load(std::memory_order_relaxed) == 0 &&
        m->holders.compare_exchange_strong(free, 1, std::memory_order_acquire))
      break;
  }
  if (!m) {
    m = new ping_mailbox;
    m->holders.store(1, std::memory_order_relaxed);
    ping_mailbox* head = mailboxes.load(std::memory_order_relaxed);
    do {
      m->next = head;
      // release: publishes the mailbox; pairs with the acquire load above.
    } while (!mailboxes.compare_exchange_weak(head, m, std::memory_order_release,
                                              std::memory_order_relaxed));
  }
  // relaxed: read by reclaimers only through a record bound after this (its seq_cst store).
  m->tid.store(this_thread_kernel_id(), std::memory_order_relaxed);
  pthread_setspecific(key, m);
  std::atomic_signal_fence(std::memory_order_seq_cst);  // set up before the handler may use it
  my_mailbox.store(m, std::memory_order_relaxed);
  return *m;
}

}  // namespace detail

// The strategy: Signal is the ping's signal policy (core/signals.hpp).
template <class Signal>
struct ping_fence : compiler_only_light_side {
  static constexpr std::string_view scheme_name = "hazard_pop";

  static void prepare() {
    install_signal_handler(Signal::number(), Signal::describe(), "hazard_pop (Publish-on-Ping)",
                           &detail::answer_ping);
  }

  // A record's binding to its thread's mailbox; reclaimers ping the threads of bound records.
  struct record_state {
    record_state() = default;
    record_state(const record_state&) = delete;
    record_state& operator=(const record_state&) = delete;
    // The domain is destroyed: no reclaimer is left to ping through this record.
    ~record_state() {
      if (bound.load(std::memory_order_relaxed))
        mailbox.load(std::memory_order_relaxed)->holders.fetch_sub(1, std::memory_order_release);
    }

    // Read by reclaimers.
    std::atomic<bool> bound{false};
    std::atomic<ping_mailbox*> mailbox{nullptr};
    // Owner only: what its last heavy() pinged, kept for its capacity.
    std::vector<std::pair<const record_state*, ping_mailbox*>> pinged;
  };

  // Before the owner's first protection: a relaxed load and a branch on the fast path.
  static void enter(record_state& s) {
    if (!s.bound.load(std::memory_order_relaxed)) [[unlikely]]
      bind(s);
  }

  // The owner leaves the domain, its slots cleared (release stores). release: pairs with the
  // reclaimer's acquire load of `bound` in wait(): a reclaimer that stops waiting because the
  // record is unbound sees the cleared slots.
  static void leave(record_state& s) noexcept {
    if (!s.bound.load(std::memory_order_relaxed)) return;
    s.bound.store(false, std::memory_order_release);
    s.mailbox.load(std::memory_order_relaxed)->holders.fetch_sub(1, std::memory_order_release);
  }

  // Pings every thread bound to a record of the domain but our own, then waits for each answer.
  template <class ForEachState>
  static std::size_t heavy(record_state& mine, ForEachState&& for_each_state) {
    // seq_cst RMW: our unlinks happen before a handler that reads this number or a later one
    // (acquire in answer_ping()). Preceded by a full fence: in the single order S, our reads of
    // `bound` below follow our unlinks, pairing with bind()'s fence (a thread that binds after
    // we read it unbound re-reads sources after the unlinks).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    const std::uint64_t n = detail::pings.fetch_add(1, std::memory_order_seq_cst) + 1;
    ping_mailbox* self = detail::my_mailbox.load(std::memory_order_relaxed);
    mine.pinged.clear();
    for_each_state([&](const record_state& s) {
      // seq_cst: see above; acquire part: the mailbox the owner bound with.
      if (!s.bound.load(std::memory_order_seq_cst)) return;
      ping_mailbox* m = s.mailbox.load(std::memory_order_relaxed);
      // Our own slots we read in program order. (By record too: an exiting thread's handler no
      // longer answers, its mailbox already given up, while it scans once more.)
      if (&s == &mine || m == self) return;
      send_signal(m->tid.load(std::memory_order_relaxed), Signal::number());
      mine.pinged.emplace_back(&s, m);
    });
    for (const auto& [s, m] : mine.pinged) wait(*s, *m, n);
    return mine.pinged.size();
  }

 private:
  // The handler's answer to ping n or a later one; or the record's owner gone (unbound, or bound
  // to another mailbox: a thread that bound it after our ping needs no answer, since its re-reads
  // follow our unlinks). A signal can arrive late or not at all (a thread bound with the signal
  // blocked, a stale id after the mailbox changed hands, the thread was stopped): resend every
  // resend_after yields, to whoever holds the mailbox now.
  static constexpr unsigned resend_after = 256;
  static void wait(const record_state& s, const ping_mailbox& m, std::uint64_t n) {
    for (unsigned spins = 0;; ++spins) {
      // acquire: pairs with the release store in answer_ping(), and with leave().
      if (m.answered.load(std::memory_order_acquire) >= n) return;
      if (!s.bound.load(std::memory_order_acquire) ||
          s.mailbox.load(std::memory_order_relaxed) != &m)
        return;
      if (spins < 64) continue;
      // The thread may need this core to run its handler (threads may outnumber cores).
      std::this_thread::yield();
      if (spins % resend_after == 0)
        send_signal(m.tid.load(std::memory_order_relaxed), Signal::number());
    }
  }

  [[gnu::noinline]] static void bind(record_state& s) {
    ping_mailbox& m = detail::take_mailbox();
    unblock_signal(Signal::number());  // a reclaimer waits for us to answer
    m.holders.fetch_add(1, std::memory_order_relaxed);  // we hold it already: no order needed
    s.mailbox.store(&m, std::memory_order_relaxed);
    // seq_cst store and fence: the binding is visible before our first protection's re-read. A
    // reclaimer that read us unbound had its full fence (heavy()) before that read in S, so our
    // re-reads after this fence see its unlinks.
    s.bound.store(true, std::memory_order_seq_cst);
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
};

}  // namespace reclaim::core
