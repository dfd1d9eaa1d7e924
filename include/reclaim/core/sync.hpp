// SPDX-License-Identifier: MIT
// The library's one door to atomics, fences, per-thread state and waiting. Every protocol of the
// library reaches them through these names, so that a verification build (RECLAIM_VERIFY, tests/
// verify/) runs the same code under a model checker that simulates the C++ memory model and its
// own threads: there the names below are the checker's atomics (each access a scheduling point,
// each load free to return any value the model allows), fences, per-simulated-thread storage and
// yields (core/verify/relacy.hpp). In every other build they are exactly std's: aliases and inline
// forwards that cost nothing (docs/verification.md has the instruction counts).
//
//   atomic<T>                       std::atomic<T>
//   atomic_ref(T& x)                std::atomic_ref<T>(x), on a field that is an atomic<T> in the
//                                   verification build
//   thread_fence(order)             std::atomic_thread_fence(order)
//   signal_fence(order)             std::atomic_signal_fence(order): a compiler barrier
//   fence_after_rmw()               after a seq_cst read-modify-write that the protocol counts as a
//                                   full fence, as the instruction is on x86-64 (lock-prefixed) but
//                                   C++ does not promise (nor Arm without LSE: ldaxr/stlxr): a
//                                   compiler barrier on x86-64, a seq_cst fence elsewhere and in
//                                   the verification build (where the fault rmw_not_a_fence
//                                   withholds it)
//   yield_now()                     std::this_thread::yield()
//   sleep_for(duration)             std::this_thread::sleep_for(duration)
//   asymmetric_light_side()         an asymmetric fence's light side (core/fence.hpp): a compiler
//                                   barrier, which the heavy side below complements
//   run_process_barrier<B>(), prepare_process_barrier<B>()
//                                   B::run(), B::prepare(): a process-wide barrier
//                                   (core/platform/process_barrier.hpp); the checker models it by
//                                   what it guarantees
//   process_mutex, process_condition, process_allocator<T>
//                                   std::mutex, std::condition_variable, std::allocator<T>: for
//                                   process-wide bookkeeping outside every protocol (the live
//                                   domains' table, core/registry.hpp). In the verification build a
//                                   lock and a wait that do nothing, and memory outside the
//                                   checker's heap: its simulated threads are fibers of one OS
//                                   thread, and a failing schedule abandons them wherever they are
//                                   (a lock one held would block the next schedule for ever; a
//                                   table node from the checker's heap would outlive that heap)
//   RECLAIM_THREAD_LOCAL(T, name, init...)
//                                   declares `inline constinit thread_local T name{init...}`: the
//                                   checker's threads are fibers of one OS thread, so there it is
//                                   one T per simulated thread, used with the same expressions
//   RECLAIM_MUTATED(name)           false, at compile time; in the verification build, true while
//                                   the model runs with the fault `name` injected (docs/
//                                   verification.md lists them), so that the checker is shown to
//                                   catch it: `if (!RECLAIM_MUTATED(x)) fence();`
//
// State that no protocol shares between threads, or that is process-wide and outside every
// protocol the models check (fork and signal bookkeeping, the live domains' lock), keeps std's
// types: the checker's objects exist only inside a simulation.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#if defined(RECLAIM_VERIFY)
#include "verify/relacy.hpp"
#else

namespace reclaim::core {

template <class T>
using atomic = std::atomic<T>;

using process_mutex = std::mutex;
using process_condition = std::condition_variable;
template <class T>
using process_allocator = std::allocator<T>;

template <class T>
std::atomic_ref<T> atomic_ref(T& object) noexcept {
  return std::atomic_ref<T>(object);
}

inline void thread_fence(std::memory_order order) noexcept { std::atomic_thread_fence(order); }
inline void signal_fence(std::memory_order order) noexcept { std::atomic_signal_fence(order); }
inline void fence_after_rmw() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  std::atomic_signal_fence(std::memory_order_seq_cst);
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}
inline void yield_now() noexcept { std::this_thread::yield(); }
template <class Rep, class Period>
void sleep_for(std::chrono::duration<Rep, Period> d) {
  std::this_thread::sleep_for(d);
}

inline void asymmetric_light_side() noexcept {
  std::atomic_signal_fence(std::memory_order_seq_cst);
}
template <class Barrier>
void run_process_barrier() noexcept {
  Barrier::run();
}
template <class Barrier>
void prepare_process_barrier() {
  Barrier::prepare();
}

}  // namespace reclaim::core

#define RECLAIM_THREAD_LOCAL(type, name, ...) inline constinit thread_local type name{__VA_ARGS__}
// A literal false: a memory order chosen by it must be a constant for the compiler's atomic
// builtins, which treat any other as seq_cst.
#define RECLAIM_MUTATED(name) false

#endif
