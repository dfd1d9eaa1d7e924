// SPDX-License-Identifier: MIT
// What the batch schemes with birth eras (hyaline_s, hyaline_1s, crystalline_l, crystalline_w)
// share to keep a stalled thread from holding young nodes: each thread fills two batches, one for
// the nodes born at or before the oldest era reserved when it last inserted a batch, and one for
// the younger nodes.
//
// Why. A batch is inserted whole into every reservation whose era is at least the batch's minimum
// birth era, and freed whole. A thread stalled with era s must keep every node born at or before s
// and retired since (it may still read them: the bound of hazard eras and IBR too), but with one
// batch per thread a single such node in a batch keeps all of it. In a structure whose live
// population is large, almost every batch retires one long-lived node, so the stalled thread kept
// almost everything: garbage grew with the population, not with what it can read. Sorted by birth,
// the young batch's minimum birth is above the oldest era reserved at the last insertion, which a
// stalled thread's era is (nothing lowers it once every other thread has published a later one),
// so young batches skip the stalled reservation and are freed as usual; the old batch holds only
// nodes the stalled thread may read.
//
// Safety does not depend on the sort: a batch is inserted by its own minimum birth era, whatever
// nodes it holds, so the threshold is a heuristic read with no ordering of its own.
#pragma once
#include <algorithm>
#include <cstddef>
#include <limits>
#include <utility>

#include "../../core/retired.hpp"
#include "eras.hpp"

namespace reclaim::detail {

// A batch being filled: its nodes and their minimum birth era.
struct forming_batch {
  static constexpr era_t no_birth = std::numeric_limits<era_t>::max();
  core::retired_list nodes;
  era_t min_birth = no_birth;

  void add(core::retired_hook* node, era_t birth) noexcept {
    min_birth = std::min(min_birth, birth);
    nodes.push(node);
  }
};

// A thread's two batches being filled. `old_up_to` is the oldest era a reservation held when the
// thread last inserted a batch (no_era before: every node is young then). hyaline and hyaline_1,
// which stamp no births, fill `young` only.
template <class Batch = forming_batch>
struct birth_sorted_batches {
  Batch young;
  Batch old;
  era_t old_up_to = no_era;

  Batch& for_birth(era_t birth) noexcept { return birth <= old_up_to ? old : young; }
  template <class F>
  void for_each(F f) {
    f(young);
    f(old);
  }
  // Both batches' nodes, as one list; both batches are empty after.
  core::retired_list take_all() noexcept {
    core::retired_list all;
    for_each([&](Batch& b) { all.splice(std::exchange(b, Batch{}).nodes); });
    return all;
  }
};

// The oldest era reserved, as one walk over the reservations finds it: the next old_up_to.
class oldest_reserved {
 public:
  explicit oldest_reserved(era_t last) noexcept : last_(last) {}

  void reserved(era_t e) noexcept {
    if (e != no_era) oldest_ = std::min(oldest_, e);
  }
  // Hyaline: whether a slot skipped for its era (below the batch's minimum birth) is worth the
  // look at its head that says whether a thread is inside (a slot's era outlives its threads):
  // only if it could be the oldest reserved, and no newer than the last threshold, which is
  // where a stalled thread's era sits. A slot whose era rose above the threshold is found as soon
  // as a batch goes into it.
  bool worth_checking(era_t e) const noexcept { return e != no_era && e <= last_ && e < oldest_; }
  era_t oldest() const noexcept { return oldest_ == forming_batch::no_birth ? no_era : oldest_; }

 private:
  era_t last_;
  era_t oldest_ = forming_batch::no_birth;
};

}  // namespace reclaim::detail
