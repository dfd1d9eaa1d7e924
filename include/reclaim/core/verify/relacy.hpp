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

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
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
    a_.store(as::in(value), verify::to_rl(order), verify::at(where));
    if (order == std::memory_order_seq_cst)
      rl::atomic_thread_fence(rl::mo_seq_cst, verify::at(where));
  }
  T exchange(T value, std::memory_order order = std::memory_order_seq_cst,
             here where = here::current()) {
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
    typename as::type seen = as::in(expected);
    const bool done = a_.compare_exchange(rl::bool_t<Weak>(), seen, as::in(desired),
                                          verify::to_rl(success), verify::to_rl(failure),
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
#define RECLAIM_THREAD_LOCAL(type, name, ...) \
  inline ::reclaim::core::per_thread<type> name { __VA_ARGS__ }
