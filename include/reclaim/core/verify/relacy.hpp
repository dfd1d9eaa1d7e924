// SPDX-License-Identifier: MIT
// core/sync.hpp's names in the verification build (RECLAIM_VERIFY): Relacy's simulation of the C++
// memory model (Debian's relacy-dev). Each atomic access is a scheduling point of the checker and
// a load may return any value the model allows (store buffering included: only seq_cst fences and
// operations forbid it); plain shared data that a model checks is an rl::var. Relacy's own
// relacy_std.hpp, which renames std's atomics, does not build with libstdc++ 12, and the library's
// code names core::atomic anyway: this header is the whole adapter.
//
// The source location of each access is the caller's (std::source_location), so that the
// checker's history names the library's line, not this file's.
//
// Simulated threads are fibers of one OS thread: RECLAIM_THREAD_LOCAL gives each its own value,
// indexed by rl::thread_index(). A simulated thread ends without pthread's thread-specific
// destructors: a model calls core::leave_thread() (core/registry.hpp) where a real thread would
// exit.
//
// Process-wide barriers (membarrier, mprotect, the split lock: core/platform/process_barrier.hpp)
// are modelled by what they guarantee: Relacy's systemwide_fence(), its model of such a barrier
// (after it, every simulated thread has seen what every other did before it, both ways), while a
// reader's light side is a compiler barrier, which orders nothing between threads. A reader that
// published a protection with a plain store and re-reads may then see a stale value unless a
// heavy side came between: store buffering, which a seq_cst fence on one side does not forbid.
#pragma once
// Relacy's headers as relacy/relacy.hpp includes them, without the macros it defines after them
// (new, delete, malloc, free, assert, errno and std's memory_order_* names), and without its
// Windows and pthread emulations, which rename POSIX: they would rewrite the library's code.
#include <relacy/base.hpp>
#include <relacy/context.hpp>
#include <relacy/context_base_impl.hpp>
#include <relacy/backoff.hpp>
#include <relacy/atomic_fence.hpp>
#include <relacy/atomic.hpp>
#include <relacy/var.hpp>
#include <relacy/thread_local.hpp>
#include <relacy/test_suite.hpp>
#include <relacy/dyn_thread.hpp>
#include <relacy/stdlib/mutex.hpp>
#include <relacy/stdlib/condition_variable.hpp>
#include <relacy/stdlib/semaphore.hpp>
#include <relacy/stdlib/event.hpp>

#include <pthread.h>
#include <signal.h>
#include <ucontext.h>

#include <atomic>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <optional>
#include <vector>
#include <ostream>
#include <source_location>
#include <string_view>
#include <type_traits>

namespace reclaim::core {

namespace verify {

inline rl::memory_order to_rl(std::memory_order order) noexcept {
  switch (order) {
    case std::memory_order_relaxed: return rl::mo_relaxed;
    case std::memory_order_consume: return rl::mo_consume;
    case std::memory_order_acquire: return rl::mo_acquire;
    case std::memory_order_release: return rl::mo_release;
    case std::memory_order_acq_rel: return rl::mo_acq_rel;
    default: return rl::mo_seq_cst;
  }
}
// A compare-and-swap's failure order when only the success order is given, as std derives it.
inline std::memory_order failure_order(std::memory_order success) noexcept {
  if (success == std::memory_order_acq_rel) return std::memory_order_acquire;
  if (success == std::memory_order_release) return std::memory_order_relaxed;
  return success;
}
// The success order Relacy is given: it follows C++11, where a failure order may not be stronger
// than the success order, and silently reads a stronger one as relaxed (a release CAS whose failure
// acquires would synchronize with nothing). C++17 allows it; the success order is raised to cover
// the failure's acquire instead, which makes a successful CAS there stronger than C++ asks.
inline std::memory_order covering(std::memory_order success, std::memory_order failure) noexcept {
  const bool failure_acquires =
      failure == std::memory_order_acquire || failure == std::memory_order_consume;
  if (failure == std::memory_order_seq_cst) return std::memory_order_seq_cst;
  if (!failure_acquires) return success;
  if (success == std::memory_order_relaxed) return std::memory_order_acquire;
  if (success == std::memory_order_release) return std::memory_order_acq_rel;
  return success;
}
inline rl::debug_info at(const std::source_location& where) noexcept {
  return rl::debug_info(where.function_name(), where.file_name(), where.line());
}

// How a value of T is kept in an rl::atomic, which takes integers, bools and non-const object
// pointers, and prints what it holds in the history: pointers of any kind as void*, enumerations
// as their underlying integer, and other trivially copyable types (marked pointers, the stamp
// pool's links, the DWCAS pairs) as their bytes.
template <class T>
struct bytes_of {
  T value{};
  friend bool operator==(const bytes_of& a, const bytes_of& b) noexcept {
    return std::memcmp(&a.value, &b.value, sizeof(T)) == 0;
  }
  friend std::ostream& operator<<(std::ostream& out, const bytes_of& v) {
    unsigned char raw[sizeof(T)];
    std::memcpy(raw, &v.value, sizeof(T));
    out << "0x" << std::hex;
    for (std::size_t i = sizeof(T); i-- > 0;) out << (raw[i] >> 4) << (raw[i] & 15);
    return out << std::dec;
  }
};
template <class T>
struct stored {
  using type = bytes_of<T>;
  static type in(T v) noexcept { return {v}; }
  static T out(type v) noexcept { return v.value; }
};
template <class T>
  requires std::is_integral_v<T>
struct stored<T> {
  using type = T;
  static T in(T v) noexcept { return v; }
  static T out(T v) noexcept { return v; }
};
template <class T>
  requires std::is_enum_v<T>
struct stored<T> {
  using type = std::underlying_type_t<T>;
  static type in(T v) noexcept { return static_cast<type>(v); }
  static T out(type v) noexcept { return static_cast<T>(v); }
};
template <class T>
  requires std::is_pointer_v<T>
struct stored<T> {
  using type = void*;
  static void* in(T v) noexcept { return const_cast<void*>(reinterpret_cast<const void*>(v)); }
  static T out(void* v) noexcept { return reinterpret_cast<T>(v); }
};

// Most simulated threads a model may run.
inline constexpr unsigned max_threads = 8;

// Runs a handler of a signal sent to this simulated thread, if one is pending and the checker
// chooses this point for it (the signals' section below).
inline void deliver_pending();

// A preemption a model injects into the library's code: simulated thread `thread` stops before
// its first checked access made in a function whose name contains `in`, until `until()` holds
// (another thread's progress, read without ordering anything). Random schedules almost never keep
// one thread off the processor for the dozens of steps another needs to move an epoch or a clock;
// a model that needs exactly that window asks for it. One per simulation, set by the model.
struct injected_pause {
  unsigned thread;
  std::string_view in;
  std::function<bool()> until;
};
inline std::optional<injected_pause> pause;

// Every checked access of the library begins here: the preemption, then a pending signal.
inline void before_access(const std::source_location& where) {
  if (pause && rl::is_ctx() && rl::thread_index() == pause->thread &&
      std::string_view(where.function_name()).find(pause->in) != std::string_view::npos) {
    const injected_pause p = std::move(*pause);
    pause.reset();  // once, and the wait's own accesses are not paused again
    while (!p.until()) rl::yield(1, at(where));
  }
  deliver_pending();
}

}  // namespace verify

template <class T>
class atomic {
  using here = std::source_location;
  using as = verify::stored<T>;

 public:
  static constexpr bool is_always_lock_free = true;

  // std::atomic's default constructor value-initialises (C++20).
  atomic(here where = here::current()) noexcept : atomic(T{}, where) {}
  atomic(T value, here where = here::current()) noexcept {  // NOLINT: as std::atomic's
    a_.store(as::in(value), rl::mo_relaxed, verify::at(where));
  }
  atomic(const atomic&) = delete;
  atomic& operator=(const atomic&) = delete;

  T load(std::memory_order order = std::memory_order_seq_cst, here where = here::current()) const {
    verify::before_access(where);
    return as::out(a_.load(verify::to_rl(order), verify::at(where)));
  }
  // A seq_cst store is followed by a seq_cst fence: Relacy orders seq_cst fences against each
  // other and seq_cst loads against seq_cst stores, but not a seq_cst store against another
  // thread's fence, which the standard does (a load sequenced after a seq_cst fence observes the
  // last seq_cst store that precedes the fence in S): without it, a hazard published with a
  // seq_cst store is missed by a scan after its fence. The model is stronger than C++ there (as
  // x86's mov + mfence is): a fault that reorders a seq_cst store with a later relaxed load of
  // another object goes unseen (docs/verification.md).
  void store(T value, std::memory_order order = std::memory_order_seq_cst,
             here where = here::current()) {
    verify::before_access(where);
    a_.store(as::in(value), verify::to_rl(order), verify::at(where));
    if (order == std::memory_order_seq_cst)
      rl::atomic_thread_fence(rl::mo_seq_cst, verify::at(where));
  }
  T exchange(T value, std::memory_order order = std::memory_order_seq_cst,
             here where = here::current()) {
    verify::before_access(where);
    return as::out(a_.exchange(as::in(value), verify::to_rl(order), verify::at(where)));
  }
  // compare_exchange_weak and _strong, each with a failure order or the one std derives.
#define RECLAIM_VERIFY_CAS(name, weak)                                                  \
  bool name(T& expected, T desired, std::memory_order success, std::memory_order failure, \
            here where = here::current()) {                                             \
    return cas<weak>(expected, desired, success, failure, where);                       \
  }                                                                                     \
  bool name(T& expected, T desired, std::memory_order order = std::memory_order_seq_cst, \
            here where = here::current()) {                                             \
    return cas<weak>(expected, desired, order, verify::failure_order(order), where);    \
  }
  RECLAIM_VERIFY_CAS(compare_exchange_weak, true)
  RECLAIM_VERIFY_CAS(compare_exchange_strong, false)
#undef RECLAIM_VERIFY_CAS

  // The integer read-modify-writes, forwarded alike (Relacy refuses them for other types).
#define RECLAIM_VERIFY_FORWARD(rmw)                                                     \
  T rmw(T arg, std::memory_order order = std::memory_order_seq_cst,                    \
        here where = here::current()) {                                                \
    verify::before_access(where);                                                      \
    return a_.rmw(arg, verify::to_rl(order), verify::at(where));                       \
  }
  RECLAIM_VERIFY_FORWARD(fetch_add)
  RECLAIM_VERIFY_FORWARD(fetch_sub)
  RECLAIM_VERIFY_FORWARD(fetch_and)
  RECLAIM_VERIFY_FORWARD(fetch_or)
#undef RECLAIM_VERIFY_FORWARD

  operator T() const { return load(); }  // NOLINT: as std::atomic's
  T operator=(T value) {
    store(value);
    return value;
  }

 private:
  template <bool Weak>
  bool cas(T& expected, T desired, std::memory_order success, std::memory_order failure,
           here where) {
    verify::before_access(where);
    typename as::type seen = as::in(expected);
    const bool done = a_.compare_exchange(rl::bool_t<Weak>(), seen, as::in(desired),
                                          verify::to_rl(verify::covering(success, failure)),
                                          verify::to_rl(failure),
                                          verify::at(where));
    expected = as::out(seen);
    return done;
  }

  mutable rl::atomic<typename as::type> a_;
};

template <class T>
atomic<T>& atomic_ref(atomic<T>& object) noexcept {
  return object;
}

inline void thread_fence(std::memory_order order,
                         std::source_location where = std::source_location::current()) {
  rl::atomic_thread_fence(verify::to_rl(order), verify::at(where));
}
// A compiler barrier orders nothing between threads.
inline void signal_fence(std::memory_order) noexcept {}
inline void yield_now(std::source_location where = std::source_location::current()) {
  rl::yield(1, verify::at(where));
}
template <class Rep, class Period>
void sleep_for(std::chrono::duration<Rep, Period>,
               std::source_location where = std::source_location::current()) {
  rl::yield(1, verify::at(where));
}

namespace verify {
// Every per_thread's reset, for forget_threads().
inline std::vector<std::function<void()>>& per_thread_resets() {
  static std::vector<std::function<void()>> all;
  return all;
}
// Before a simulation: every simulated thread starts as a new thread would. A run that failed
// stopped its threads wherever they were, bindings and all (that memory was the checker's).
inline void forget_threads() {
  for (auto& reset : per_thread_resets()) reset();
  pause.reset();
}
}  // namespace verify

// One value per simulated thread, used with the expressions a thread_local T is used with.
template <class T>
class per_thread {
 public:
  template <class... Init>
  explicit per_thread(const Init&... init) {
    verify::per_thread_resets().push_back([this, initial = T{init...}] {
      for (T& v : values_) v = initial;
    });
    verify::per_thread_resets().back()();
  }
  T& mine() noexcept { return values_[rl::is_ctx() ? rl::thread_index() : 0]; }
  operator T&() noexcept { return mine(); }  // NOLINT: stands for the thread's T
  per_thread& operator=(const T& value) {
    mine() = value;
    return *this;
  }
  T operator->() noexcept
    requires std::is_pointer_v<T>
  {
    return mine();
  }

 private:
  T values_[verify::max_threads];
};

namespace verify {

// Signals (core/platform/signals.hpp: nbr's neutralizing signal, Publish-on-Ping's ping). A fiber
// cannot receive a signal, so sending one (send_signal()) marks it pending for the simulated
// thread, and that thread runs the handler itself where a real signal could interrupt it: before
// any of its checked accesses (core::atomic) or of the state it shares with its own handler
// (verify::own below), at the point the checker chooses: each such point with a signal pending
// delivers it or not (a scheduling choice), so the handler runs after any number of the target's
// steps and its own accesses interleave with the other threads'. Those are the only states a
// handler can tell apart (it reads nothing else of the thread), and a jump out of a read phase
// discards the same work whether the signal came at the access or just before it.
//
// Pending is plain state, not a checked atomic: delivery carries no happens-before from the sender
// (a real tgkill's way through the kernel would; no protocol of the library counts on it). As the
// kernel does without SA_NODEFER, a signal is blocked while its handler runs, until the handler
// returns or sets the thread's mask (nbr's, before it jumps: set_signal_mask()); it stays pending
// meanwhile. The handler gets the interrupted context's mask (the thread's, with the simulated
// blocked signals), all it reads of the context.
using signal_action = void (*)(int, siginfo_t*, void*);
struct simulated_signals {
  std::uint64_t pending[max_threads]{};  // bit sig - 1
  std::uint64_t blocked[max_threads]{};
  unsigned count = 0;                    // pending over every thread: the fast path's test
  signal_action action[65]{};            // the handlers installed (process-wide, never reset)
  simulated_signals() {
    per_thread_resets().push_back([this] {
      std::memset(pending, 0, sizeof pending);
      std::memset(blocked, 0, sizeof blocked);
      count = 0;
    });
  }
};
inline simulated_signals signals;

// sigaction() for the simulation: the handler a delivery runs.
inline void install_handler(int sig, signal_action handler) { signals.action[sig] = handler; }

// tgkill() for the simulation: `tid` is a simulated thread's kernel id (index + 1). True: a
// simulated thread exists until the model ends (one that finished takes its signal in after(), if
// it runs there, or never).
inline bool send_signal(int tid, int sig) {
  const unsigned t = static_cast<unsigned>(tid - 1);
  if (t >= max_threads || sig < 1 || sig > 64) return false;
  const std::uint64_t bit = std::uint64_t{1} << (sig - 1);
  if ((signals.pending[t] & bit) == 0) ++signals.count;
  signals.pending[t] |= bit;
  return true;
}

// pthread_sigmask(SIG_SETMASK, set) for the simulated signals of this thread.
inline void set_signal_mask(const sigset_t& set) {
  if (!rl::is_ctx()) return;
  std::uint64_t bits = 0;
  for (int sig = 1; sig <= 64; ++sig)
    if (sigismember(&set, sig) == 1) bits |= std::uint64_t{1} << (sig - 1);
  signals.blocked[rl::thread_index()] = bits;
}

inline void deliver_pending() {
  if (signals.count == 0 || !rl::is_ctx()) return;
  const unsigned t = rl::thread_index();
  const std::uint64_t ready = signals.pending[t] & ~signals.blocked[t];
  if (ready == 0 || rl::rand(2) == 0) return;  // here, or at a later point
  const int sig = std::countr_zero(ready) + 1;
  const std::uint64_t bit = std::uint64_t{1} << (sig - 1), was_blocked = signals.blocked[t];
  signals.pending[t] &= ~bit;
  --signals.count;
  ucontext_t interrupted{};
  pthread_sigmask(SIG_BLOCK, nullptr, &interrupted.uc_sigmask);
  for (int other = 1; other <= 64; ++other)
    if ((was_blocked >> (other - 1)) & 1) sigaddset(&interrupted.uc_sigmask, other);
  signals.blocked[t] = was_blocked | bit;
  if (signals.action[sig] != nullptr) signals.action[sig](sig, nullptr, &interrupted);
  signals.blocked[t] = was_blocked;  // it returned: the kernel restores the interrupted mask
}

// State that only a thread and its own signal handler touch (a thread_local std::atomic in normal
// builds, accessed relaxed with signal fences): one value per simulated thread, unchecked (one
// thread, program order), each access a point where a signal may arrive.
template <class T>
class own {
 public:
  explicit own(T initial) : value_(initial) {}
  T load(std::memory_order = std::memory_order_seq_cst) const {
    deliver_pending();
    return value_.mine();
  }
  void store(T v, std::memory_order = std::memory_order_seq_cst) {
    deliver_pending();
    value_.mine() = v;
  }

 private:
  mutable per_thread<T> value_;
};

// What a model runs when its simulation ends, after its domains are gone (objects of the checker
// that live as long as a simulation: the mailboxes, core/platform/mailbox.hpp): Relacy reports an
// atomic still alive at the end as a leak.
inline std::vector<std::function<void()>>& simulation_end_hooks() {
  static std::vector<std::function<void()>> all;
  return all;
}
inline void end_simulation() {
  for (auto& hook : simulation_end_hooks()) hook();
}

}  // namespace verify

// Process-wide bookkeeping (core/sync.hpp says why these do nothing): one OS thread runs every
// simulated thread, so there is no other thread to exclude or to wait for.
struct process_mutex {
  void lock() noexcept {}
  void unlock() noexcept {}
  bool try_lock() noexcept { return true; }
};
struct process_condition {
  template <class Lock, class Predicate>
  void wait(Lock&, Predicate) noexcept {}
  void notify_all() noexcept {}
};
template <class T>
struct process_allocator {
  using value_type = T;
  process_allocator() = default;
  template <class U>
  process_allocator(const process_allocator<U>&) noexcept {}  // NOLINT: as std::allocator's
  T* allocate(std::size_t n) {
    if (void* p = std::malloc(n * sizeof(T))) return static_cast<T*>(p);  // not Relacy's heap
    throw std::bad_alloc();
  }
  void deallocate(T* p, std::size_t) noexcept { std::free(p); }
  friend bool operator==(const process_allocator&, const process_allocator&) noexcept {
    return true;
  }
};

// The light and heavy sides of a process-wide barrier, as the top says.
inline void asymmetric_light_side() noexcept {}
template <class Barrier>
void run_process_barrier(std::source_location where = std::source_location::current()) {
  rl::systemwide_fence(verify::at(where));
}
template <class Barrier>
void prepare_process_barrier() {}

// The fault the running model injects (RECLAIM_MUTATED(name), core/sync.hpp), chosen at run time
// so that one build runs every mutant: tests/verify/ sets it.
inline std::string_view mutant{};

}  // namespace reclaim::core

#define RECLAIM_MUTATED(name) (::reclaim::core::mutant == std::string_view(#name))

namespace reclaim::core {
// What the platform's locked RMW is (core/sync.hpp), told to the checker: a seq_cst fence.
inline void fence_after_rmw(std::source_location where = std::source_location::current()) {
  if (!RECLAIM_MUTATED(rmw_not_a_fence)) thread_fence(std::memory_order_seq_cst, where);
}
}  // namespace reclaim::core
#define RECLAIM_THREAD_LOCAL(type, name, ...) \
  inline ::reclaim::core::per_thread<type> name { __VA_ARGS__ }
