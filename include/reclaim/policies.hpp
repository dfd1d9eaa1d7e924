// SPDX-License-Identifier: MIT
// The home of the public policies: the named template parameters a user passes to a scheme
// (`hp<slots<8>>`, `debra<check_every<20>, amortized_free<1>>`), in any order, with defaults for
// what is not named. One definition each, and one word for one idea across every scheme that takes
// it; what the idea counts in a given scheme (operations, allocations, retires) is said here and
// in that scheme's header. Each policy names its kind with a nested `policy_kind` tag, which
// core::find_policy_t looks for (core/policy.hpp); a scheme refuses a kind it does not take.
// The free policies (batch_free, amortized_free<K>, adaptive_free_between<Min, Max>) are classes
// with behaviour of their own, in free/; this header includes them so that it names every
// parameter.
#pragma once
#include <signal.h>

#include <cstddef>
#include <string>

#include "core/policy.hpp"
#include "free/amortized.hpp"
#include "free/batch.hpp"

namespace reclaim {

// slots<K>: how many protections an operation holds at once: the hazard pointers of each guard
// under hp and its variants, its counted references under lfrc, its era reservations under he, wfe,
// crystalline_l and crystalline_w, the reservations of hyaline's robust variants, and the nodes
// one write phase of nbr may reserve. A container's slots_used must not exceed it; sized_for
// (schemes/sized_for.hpp) picks it for a container.
struct slots_kind {};
template <unsigned K>
struct slots : core::value_policy<slots_kind, unsigned, K> {
  static_assert(K > 0);
};

// advance_every<N>: a thread advances the scheme's global clock (tries to: an epoch scheme first
// checks that no thread holds it back) once every N of its chances: operation starts for ebr and
// ner, quiescent states for qsbr, retires for rcu, allocations (create()) for he, ibr, wfe,
// crystalline_l and crystalline_w. Smaller N frees sooner (the era schemes: tells more nodes
// apart), larger N costs readers less.
struct advance_kind {};
template <unsigned N>
struct advance_every : core::value_policy<advance_kind, unsigned, N> {
  static_assert(N > 0);
};

// check_every<K>: a thread looks for what it waits on once every K steps: debra checks one other
// thread's announcement every K operations (paper 003 uses 20); Token-EBR looks for the returned
// token every K frees while it frees a bag (token_periodic).
struct check_kind {};
template <unsigned K>
struct check_every : core::value_policy<check_kind, unsigned, K> {
  static_assert(K > 0);
};

// scan_every<N>: a thread looks at its retired nodes once every N of its retires and frees what no
// reservation covers (he, ibr, wfe, crystalline_l, crystalline_w; rcu: what no reservation can
// hold).
struct scan_every_kind {};
template <unsigned N>
struct scan_every : core::value_policy<scan_every_kind, unsigned, N> {
  static_assert(N > 0);
};

// scan_threshold<Base, PerSlot>: a thread reclaims once it holds Base + PerSlot x H retired nodes,
// H the domain's protections: hp scans (Michael's R = H + Omega(H), so that a scan frees at least
// R - H nodes: hp requires PerSlot >= 1; default <100, 2>), nbr runs a signal round when its limbo
// bag holds that many (its high watermark; default <1024>).
struct scan_threshold_kind {};
template <std::size_t Base, std::size_t PerSlot = 0>
struct scan_threshold {
  using policy_kind = scan_threshold_kind;
  static constexpr std::size_t base = Base;
  static constexpr std::size_t per_slot = PerSlot;
};

// low_watermark<P>: nbr_plus starts watching other threads' rounds when its bag is P percent of
// its scan_threshold.
struct low_watermark_kind {};
template <unsigned Percent>
struct low_watermark {
  static_assert(Percent >= 1 && Percent < 100);
  using policy_kind = low_watermark_kind;
  static constexpr unsigned percent = Percent;
};

// stall_threshold<N>: hyaline_s and hyaline_1s: entering threads avoid a slot whose threads owe at
// least N decrements (a stalled thread there accumulates them).
struct stall_threshold_kind {};
template <unsigned N>
struct stall_threshold : core::value_policy<stall_threshold_kind, unsigned, N> {
  static_assert(N > 0);
};

// fast_path<N>: wfe's and crystalline_w's fast-path tries before a protect() asks for help (for
// tests, 0 sends every read under wfe, and every read whose era changed under crystalline_w, to
// the slow path).
struct fast_path_kind {};
template <unsigned N>
struct fast_path : core::value_policy<fast_path_kind, unsigned, N> {};

// fence_policy<F>: who pays for a hazard pointer's store-load order (core/fence.hpp): the readers
// (symmetric_fence, hp's default), a process-wide barrier run by scans (hp_asym, hp_mprotect,
// hp_splitcas) or a signal to each reader (hazard_pop, epoch_pop).
struct fence_kind {};
template <class Fence>
struct fence_policy {
  using policy_kind = fence_kind;
  using type = Fence;
};

// scan_policy<S>: how an hp scan tells protected retired nodes from the others (schemes/hp.hpp:
// sorted_scan, the default, or naive_scan). A policy's snapshot is per record and reused across
// scans; take(find) runs once per scan, protects(node, find) once per retired node, where find(f)
// calls f(hazard) for every published hazard until f returns true, and returns whether one did.
struct scan_policy_kind {};
template <class Scan>
struct scan_policy {
  using policy_kind = scan_policy_kind;
  using type = Scan;
};

// The signal a scheme sends: rt_signal<K> is SIGRTMIN+K, signal_number<N> any other signal, e.g.
// signal_number<SIGUSR2>. Each scheme that signals has a default of its own (nbr: SIGRTMIN+4,
// hazard_pop and epoch_pop: SIGRTMIN+5), so that both may run in one process.
struct signal_kind {};
template <int K>
struct rt_signal {
  static_assert(K >= 0);
  using policy_kind = signal_kind;
  static int number() noexcept { return SIGRTMIN + K; }
  static std::string describe() {
    return "SIGRTMIN+" + std::to_string(K) + " (" + std::to_string(number()) + ")";
  }
};
template <int N>
struct signal_number {
  static_assert(N > 0);
  using policy_kind = signal_kind;
  static int number() noexcept { return N; }
  static std::string describe() { return std::to_string(N); }
};

// The older spellings of the same ideas, for one release.
template <unsigned N>
using era_frequency [[deprecated("use advance_every<N>")]] = advance_every<N>;
template <unsigned N>
using epoch_freq [[deprecated("use advance_every<N>")]] = advance_every<N>;
template <unsigned N>
using scan_frequency [[deprecated("use scan_every<N>")]] = scan_every<N>;
template <unsigned M>
using empty_freq [[deprecated("use scan_every<M>")]] = scan_every<M>;
template <unsigned K>
using token_check_every [[deprecated("use check_every<K>")]] = check_every<K>;
template <std::size_t N>
using bag_threshold [[deprecated("use scan_threshold<N>")]] = scan_threshold<N>;
template <unsigned R>
using reservations [[deprecated("use slots<R>")]] = slots<R>;

}  // namespace reclaim
