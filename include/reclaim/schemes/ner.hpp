// SPDX-License-Identifier: MIT
// ner: "new epoch-based reclamation" (Hart, McKenney, Demke Brown, Walpole, JPDC 2007).
//
// What it is. ebr (ebr.hpp; the machinery and its memory-ordering argument are the epoch engine's,
// detail/epoch_engine.hpp) with one change: a thread tries to advance the epoch, a pass over every
// record, only once every K region entries (advance_every<K>, default 100 as in paper 003's
// evaluation) instead of ebr's 64 (Fraser's original tries on every entry).
//
// When to use it. As ebr, when threads are many or operations short enough that the pass on every
// entry dominates; the price is up to 3 x K operations' garbage per thread even when no thread
// stalls. Garbage is NOT bounded: a thread stalled inside an operation stops the epoch.
// Needs from a container: only the start and end of each operation (the guard).
// Progress: lock-free operations; reclamation can be blocked by a stalled thread.
// Differences from the paper: those of ebr (re-read after announcing, tagged lists, orphans).
#pragma once
#include <string_view>

#include "ebr.hpp"

namespace reclaim {

namespace detail {
struct ner_flavour {
  static constexpr std::string_view name = "ner";
  using default_interval = advance_every<100>;
};
}  // namespace detail

// ner<advance_every<K>, FreePolicy>.
template <class... Policies>
using ner = basic_ebr<detail::ner_flavour, Policies...>;

}  // namespace reclaim
