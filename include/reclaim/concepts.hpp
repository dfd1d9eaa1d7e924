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

#include "core/stats.hpp"

namespace reclaim {

enum class family { none, epoch, pointer, era, neutralization, reference_counting };

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
};
inline constexpr needs all_needs[] = {needs_validated_reads, needs_restartable_read_phases};

constexpr std::string_view to_string(needs n) {
  switch (n) {
    case needs_validated_reads: return "validated reads";
    case needs_restartable_read_phases: return "restartable read phases";
    default: return "nothing";
  }
}

// A container's answer for one requirement.
struct support {
  bool yes;
  std::string_view why_not = {};
};

struct applicability {
  bool ok;
  std::string_view why_not = {};
};

// Whether Scheme can protect Container, and if not, the container's reason.
template <class Scheme, class Container>
constexpr applicability applies() {
  for (needs n : all_needs) {
    if ((Scheme::needs & n) == 0) continue;
    support s = Container::offers(n);
    if (!s.yes) return {false, s.why_not};
  }
  return {true};
}

template <class Scheme, class Container>
concept protects = applies<Scheme, Container>().ok;

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
                       const std::atomic<typename S::node_base*>& src) {
  { d.stats() } -> std::same_as<stats>;
  { g.protect(src, 0u) } -> std::same_as<typename S::node_base*>;
  { S::guard::validates } -> std::convertible_to<bool>;
};

}  // namespace reclaim

// Marks the start of a read phase in a container's operation. For neutralization-based schemes it is
// the restart point, which must be expanded in the container's own frame (hence a macro); for every
// other scheme it compiles to nothing. Anything alive across it must be trivially destructible.
#define RECLAIM_READ_PHASE(guard) (guard).begin_read_phase()
