// SPDX-License-Identifier: MIT
// What every scheme provides and what every container offers, so that one container source serves
// every compatible scheme and the lab derives the applicability matrix from declarations alone.
//
// A scheme S is a type with:
//   S::name, S::family, S::bounds_garbage   what it is and whether its garbage is bounded
//   S::needs                                what it requires of a container (a set of `needs` bits)
//   S::domain                               the shared state; S::default_domain() is the default one
//   S::node_base                            the base every node it protects derives from
//   S::guard                                RAII operation guard: begin on construction, end on
//                                           destruction; protect(), retire(), create(), phases
// A container C declares, for each requirement a scheme may have, whether it meets it and, if not,
// why: C::offers(need) -> support.
#pragma once
#include <atomic>
#include <concepts>
#include <string_view>
#include <type_traits>

#include "core/stats.hpp"
#include "core/sync.hpp"

namespace reclaim {

// How a scheme decides that a retired node is safe to free, which says what it asks of a
// container: S::family, printed by `reclaim-bench list` and in each trial's JSON line.
enum class family { none, epoch, pointer, era, neutralization, reference_counting };

// The family's name as the lab and messages print it ("reference counting", with a space).
constexpr std::string_view to_string(family f) {
  switch (f) {
    case family::none: return "none";
    case family::epoch: return "epoch";
    case family::pointer: return "pointer";
    case family::era: return "era";
    case family::neutralization: return "neutralization";
    case family::reference_counting: return "reference counting";
  }
  return "?";
}

// What a scheme may need of a container.
enum needs : unsigned {
  needs_nothing = 0,
  // Every pointer the container dereferences is read from a source it can re-read after publishing
  // a protection, and a node removed from the structure is recognisable (marked) at that point, so
  // that a successful re-read proves the node was still reachable (hazard pointers, eras).
  needs_validated_reads = 1u << 0,
  // Operations are sequences of read phases that begin at the root and keep no pointers across a
  // restart, followed by write phases that touch only nodes reserved at the end of the read phase
  // (neutralization, paper 000 section 4).
  needs_restartable_read_phases = 1u << 1,
  // Every node a protected read can reach was allocated on its own (with new, or the guard's
  // create()) and is retired or deleted, never a member of the container or of another object:
  // reference counting keeps each node's count in a header in front of it, in memory it never
  // gives back (lfrc). A container answers this one explicitly: embedded sentinels say no.
  needs_allocated_nodes = 1u << 2,
};
inline constexpr needs all_needs[] = {needs_validated_reads, needs_restartable_read_phases,
                                      needs_allocated_nodes};

// The name of one need, for messages and the applicability matrix; "nothing" for needs_nothing
// and for a value that is not a single need.
constexpr std::string_view to_string(needs n) {
  switch (n) {
    case needs_validated_reads: return "validated reads";
    case needs_restartable_read_phases: return "restartable read phases";
    case needs_allocated_nodes: return "allocated nodes";
    default: return "nothing";
  }
}

// A container's answer for one requirement.
struct support {
  bool yes;
  std::string_view why_not = {};
};

// What applies() answers: ok when the scheme can protect the container, and otherwise the
// container's reason (the why_not of the first need it lacks).
struct applicability {
  bool ok;
  std::string_view why_not = {};
};

// Whether Container meets what Scheme needs of it in n: the scheme does not need n, or the
// container offers it. A container states it once per need it may lack, in its constructor, with
// a message that names the need, its reason and the form that works (a string literal, as C++20
// requires; docs/writing-a-container.md, step 7):
//   static_assert(reclaim::meets<Scheme, hm_list>(reclaim::needs_restartable_read_phases),
//                 "hm_list cannot serve ... : <its why_not>. Use hm_list_restart ...");
template <class Scheme, class Container>
constexpr bool meets(needs n) {
  return (Scheme::needs & n) == 0 || Container::offers(n).yes;
}

// Whether Scheme's guard has the hazard slots one of Container's operations uses at once
// (Container::slots_used); only guards that validate reads count slots.
template <class Scheme, class Container>
constexpr bool has_slots() {
  if constexpr (Scheme::guard::validates)
    return Scheme::guard::slot_count >= Container::slots_used;
  else
    return true;
}

// Whether Scheme can protect Container, and if not, the container's reason.
template <class Scheme, class Container>
constexpr applicability applies() {
  for (needs n : all_needs)
    if (!meets<Scheme, Container>(n)) return {false, Container::offers(n).why_not};
  return {true};
}

// Scheme can protect Container: the container offers every need the scheme has (applies()).
template <class Scheme, class Container>
concept protects = applies<Scheme, Container>().ok;

// A reclamation scheme: the names listed at the top of this header, a domain whose stats() can be
// read, and a guard whose protect() reads a node pointer and which says whether it validates reads.
template <class S>
concept scheme = requires {
  typename S::domain;
  typename S::guard;
  typename S::node_base;
  { S::name } -> std::convertible_to<std::string_view>;
  { S::family } -> std::convertible_to<family>;
  { S::bounds_garbage } -> std::convertible_to<bool>;
  { S::needs } -> std::convertible_to<unsigned>;
  { S::default_domain() } -> std::same_as<typename S::domain&>;
} && requires(const typename S::domain& d, typename S::guard& g,
                       const core::atomic<typename S::node_base*>& src) {
  { d.stats() } -> std::same_as<stats>;
  { g.protect(src, 0u) } -> std::same_as<typename S::node_base*>;
  { S::guard::validates } -> std::convertible_to<bool>;
};

// A scheme whose domain offers synchronize() and barrier() with their try_ forms (every scheme but
// none, which tracks no operation and frees nothing while its domain lives). Every domain offers
// flush() and retire(node[, deleter]).
template <class S>
concept grace_periods = scheme<S> && S::domain::grace_periods;

}  // namespace reclaim

namespace reclaim {

// A guard whose scheme may neutralize a read phase (nbr): it declares
// `static constexpr bool neutralizable = true`, and RECLAIM_READ_PHASE (read_phase.hpp) puts a
// restart point there.
template <class Guard>
concept neutralizable_guard = requires {
  requires Guard::neutralizable;
};

}  // namespace reclaim
