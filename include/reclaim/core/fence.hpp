// SPDX-License-Identifier: MIT
// Fence strategies for pointer schemes: a light side run by readers on every protection and a heavy
// side run by reclaimers before they read the protections. The symmetric strategy makes both sides
// full barriers; the asymmetric strategies (paper 004: membarrier, mprotect, split-CAS; and
// Publish-on-Ping's signals, core/ping.hpp) make the light side a compiler barrier and the heavy
// side a barrier that reaches every reader.
//
// A strategy F is a type with:
//   F::scheme_name                   the name of hp under this strategy ("hp", "hp_asym", ...)
//   F::prepare()                     once per domain, before any thread uses it: what the heavy
//                                    side needs from the process (a registration, a handler);
//                                    throws std::runtime_error, naming what is missing, where
//                                    the strategy cannot work on this machine
//   The light side, in two forms:
//   F::publish(slot, p), then a re-read of the source with F::reread(order): a protection that
//     the scheme validates itself (hp's protect, try_protect);
//   a release store of the slot, then F::light(): a protection published for a caller who
//     re-reads the source with an order of their own (P2530's reset_protection(ptr)).
//   F::record_state                  what the strategy keeps in each thread's record (empty but
//                                    for strategies that must know the readers: POP)
//   F::enter(state)                  before the record's owner publishes a protection (each
//                                    outermost guard, each slot taken by a protection); may throw
//                                    std::bad_alloc
//   F::activate(state), F::deactivate(state)
//                                    the record's first guard or holding protection begins, its
//                                    last ends (slots cleared); true on the change from idle (the
//                                    caller then runs a full fence before any re-read) or to idle.
//                                    Only strategies that must know which readers may hold a
//                                    protection keep it (POP: tracks_activity is true); the others
//                                    return false
//   F::leave(state)                  the owner exits, its protections cleared
//   F::forget(state)                 in a child of fork(): the record's thread does not exist
//   F::heavy(mine, for_each_state, counters)
//                                    the heavy side, run by a reclaimer (whose record's state is
//                                    `mine`) after its unlinks and before it reads any slot or any
//                                    other thread's guard depth (scans, synchronize());
//                                    for_each_state(f) calls f(const record_state&) for every
//                                    record of the domain; counts signals sent in the counters
//
// The argument every strategy makes, in its own terms: a reader stores a protection p in its slot
// and then re-reads the source of p; a reclaimer unlinks p and then reads every slot. The heavy
// side must ensure that either the reclaimer's read of the slot sees p, or the reader's re-read
// sees the unlink (and the reader then gives p up). That is a store followed by a load on each
// side, the one reordering that x86 (through its store buffer) and the C++ model both allow.
#pragma once
#include <atomic>
#include <cstddef>
#include <string_view>
#include <type_traits>

#include "stats.hpp"
#include "sync.hpp"

namespace reclaim::core {

// What a strategy whose heavy side reaches every thread without knowing them declares: nothing
// per record.
struct no_record_state {
  struct record_state {};
  static constexpr bool tracks_activity = false;
  static void enter(record_state&) noexcept {}
  static bool activate(record_state&) noexcept { return false; }
  static bool deactivate(record_state&) noexcept { return false; }
  static void leave(record_state&) noexcept {}
  static void forget(record_state&) noexcept {}
};

// Heavy and light both full barriers: portable, no system call, and a fence on every read.
struct symmetric_fence : no_record_state {
  static constexpr std::string_view scheme_name = "hp";
  static void prepare() noexcept {}

  // A reader's published protection must be visible before its re-read of the source. A seq_cst
  // store and a seq_cst re-read are ordered so in the C++ model, and pair with heavy(): if the
  // reclaimer's fence comes after the store in the single total order S, its later load of the
  // slot sees the store; if before, the re-read (later in S) sees the unlink that preceded the
  // fence. That is xchg then mov on x86, stlr then ldar on Arm. (A release store, a seq_cst fence
  // and the re-read would do the same, but GCC's fence on x86-64, `lock or $0,(%rsp)`, makes the
  // next reload of a value spilled to the top of the stack wait for the locked instruction:
  // hm_list under hp ran 2.4 times slower in the lab for the key its search reloads from there
  // after every fence.)
  template <class T>
  static void publish(core::atomic<T>& slot, std::type_identity_t<T> p) noexcept {
    // seq_cst (release part): our reads of the slot's previous node happen before a scan that
    // sees the new value (acquire in the scan) and frees that node.
    slot.store(p, std::memory_order_seq_cst);
  }
  static constexpr std::memory_order reread(std::memory_order) noexcept {
    return std::memory_order_seq_cst;
  }
  // Full fence after a release store of a protection, for a caller who re-reads the source with
  // any order. Pairs with heavy().
  static void light() noexcept { core::thread_fence(std::memory_order_seq_cst); }

  // Full fence: the unlink that preceded the retire is visible before we read the protections.
  template <class ForEachState>
  static void heavy(record_state&, ForEachState&&, counters&) noexcept {
    core::thread_fence(std::memory_order_seq_cst);
  }
};

// The light side of every asymmetric strategy: the protection is a release store, kept before the
// re-read by a compiler barrier only. The processor may still hold the store in its store buffer
// while it re-reads (the store-load reordering that TSO allows); the strategy's heavy side is what
// drains it, from the reclaimer's side, once per scan instead of once per read.
struct compiler_only_light_side {
  template <class T>
  static void publish(core::atomic<T>& slot, std::type_identity_t<T> p) noexcept {
    // release: our reads of the slot's previous node happen before a scan that sees the new value
    // (acquire in the scan) and frees that node. A plain store on x86, stlr on Arm.
    slot.store(p, std::memory_order_release);
    light();
  }
  // The re-read needs no more than the caller's order (acquire, to read the node).
  static constexpr std::memory_order reread(std::memory_order order) noexcept { return order; }
  // Compiler barrier (seq_cst signal fence): the compiler keeps the slot's store before the
  // re-read; the heavy side reaches the processor. A signal fence also orders the thread with a
  // signal handler that interrupts it, which is what Publish-on-Ping's handler relies on.
  static void light() noexcept { core::asymmetric_light_side(); }
};

// An asymmetric strategy from a process-wide barrier (core/platform/process_barrier.hpp):
// Barrier::run() returns once every thread of the process has executed a full memory barrier since
// the call began (or will execute one before it next runs: a thread that is not running passed
// through a context switch, itself a full barrier). The argument: a reader's barrier point either
// follows its store of p (then the store is visible to every processor before run() returns, and
// the reclaimer's later read of the slot sees it) or precedes it (then the reader's re-read, which
// follows its store in program order, comes after the barrier point, which comes after run()
// began, which comes after the reclaimer's unlink: the re-read sees the unlink).
template <class Barrier>
struct asymmetric_fence : compiler_only_light_side, no_record_state {
  static constexpr std::string_view scheme_name = Barrier::scheme_name;
  static void prepare() { core::prepare_process_barrier<Barrier>(); }

  template <class ForEachState>
  static void heavy(record_state&, ForEachState&&, counters&) noexcept {
    // Full fences on both sides of the system call: the compiler must not move our unlinks after
    // it or our reads of the slots before it (the kernel orders the processor on its own).
    core::thread_fence(std::memory_order_seq_cst);
    core::run_process_barrier<Barrier>();
    core::thread_fence(std::memory_order_seq_cst);
  }
};

}  // namespace reclaim::core
