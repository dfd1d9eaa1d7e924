// SPDX-License-Identifier: MIT
// What the era-based schemes share (he, ibr, wfe, the robust Hyaline variants, Crystalline): a
// global era clock, the birth era stamped into each node when a guard or domain creates it, and the
// policies that say how often the clock advances and how often a thread looks at its garbage.
//
// Eras start at first_era and only grow (64 bits do not wrap in the life of a program), so that
// no_era, 0, never equals a valid era: a reservation of 0 protects nothing, and a node whose birth
// era was never stamped (made with a plain `new`) keeps its default first_era, the oldest, which
// every reservation covers: conservative, never unsafe.
#pragma once
#include <atomic>
#include <bit>
#include <cstdint>
#include <type_traits>

#include "../../core/padding.hpp"
#include "../../core/sync.hpp"

namespace reclaim {

namespace detail {

// A helped read (wfe, crystalline_w) carries the pointer a helper read as one 64-bit word, and the
// request names its source type-erased, with a loader instantiated for the pointer type.
template <class P>
std::uint64_t pointer_bits(P p) noexcept {
  static_assert(sizeof(P) == sizeof(std::uint64_t) && std::is_trivially_copyable_v<P>,
                "helped reads carry pointers and marked pointers of one word");
  return std::bit_cast<std::uint64_t>(p);
}
using source_loader = std::uint64_t (*)(const void*);
template <class P>
std::uint64_t load_source(const void* src) noexcept {
  return pointer_bits(static_cast<const core::atomic<P>*>(src)->load(std::memory_order_seq_cst));
}

using era_t = std::uint64_t;
inline constexpr era_t no_era = 0;
inline constexpr era_t first_era = 1;

// The global era. Readers compare it with what they reserved; creators stamp births from it.
class era_clock {
 public:
  // seq_cst: the era a reader validates against, and the retire era a retirer reads after its
  // unlink and a full fence, take part in the single order S of the schemes' arguments.
  era_t now() const noexcept { return era_.load(std::memory_order_seq_cst); }

  // A node's birth era. acquire is enough: the creation happens before the node is published, so
  // any reader that reaches it reads the clock later in its modification order (read-read
  // coherence): the birth is at most every era a reader of the node can reserve.
  era_t birth() const noexcept { return era_.load(std::memory_order_acquire); }

  // Counts one allocation of a thread (its counter), advancing the clock every Every.
  template <unsigned Every>
  void count_allocation(unsigned& since_advance) noexcept {
    if (++since_advance < Every) return;
    since_advance = 0;
    advance();
  }
  // seq_cst: an advance is one of the writes in S.
  void advance() noexcept { era_.fetch_add(1, std::memory_order_seq_cst); }

 private:
  alignas(core::cache_line) core::atomic<era_t> era_{first_era};
};

}  // namespace detail
}  // namespace reclaim
