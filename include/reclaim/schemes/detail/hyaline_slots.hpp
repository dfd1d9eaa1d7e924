// SPDX-License-Identifier: MIT
// Hyaline's slots, nodes and records (schemes/hyaline.hpp).
//
// A slot has a head {threads inside, first node of its list}. A thread entering an operation
// increments the count of its slot and remembers the first node as its handle; a retiring thread
// pushes one node of its batch onto the list of every slot that has a thread inside; a thread
// leaving decrements the count and walks the list from the top down to its handle. hyaline and
// hyaline_s share k slots (hyaline_slot: a double-width CAS on {count, pointer}); hyaline_1 and
// hyaline_1s give each thread record a slot of its own (hyaline_record::head: one word {pointer |
// inside bit}, that only its owner enters and leaves, changed by a single-width CAS or exchange).
// Every operation on a slot head is a seq_cst RMW: pushes publish the node's link and batch fields
// (release) to the leaving thread that reads the head (acquire), and RMWs continue the release
// sequence, so a leaver sees every node pushed before.
#pragma once
#include <atomic>
#include <cstdint>

#include "../../core/platform/dwcas.hpp"
#include "../../core/padding.hpp"
#include "../../core/record.hpp"
#include "../../core/retired.hpp"
#include "birth_sorted.hpp"
#include "eras.hpp"
#include "lazy_leave.hpp"
#include "../../core/sync.hpp"

namespace reclaim::detail {

enum class hyaline_slots { shared, per_thread };

// The words Hyaline keeps in every node beside the retire link and deleter. Plain fields: each is
// written before the node is published by the CAS that pushes it (or before the batch is
// retired), and `refs` is accessed through core::atomic_ref once the batch is in flight, so node
// types stay copyable. Separate fields for the slot link, the batch reference and the count
// instead of the paper's unions: nodes are 40 bytes, or 48 with the birth era.
struct hyaline_node : core::retired_hook {
  hyaline_node* slot_next = nullptr;  // the next node in the slot list it was pushed onto
  hyaline_node* batch_ref = nullptr;  // the batch's reference node (the batch list's head)
  // In the reference node: the batch's count. The model checker's build (core/sync.hpp) sees it
  // as the atomic it is used as, there without copies.
#if defined(RECLAIM_VERIFY)
  core::atomic<std::uint64_t> refs;
#else
  std::uint64_t refs = 0;
#endif
};
// Robust variants: the birth era, stamped by create().
struct hyaline_era_node : hyaline_node {
  era_t birth = first_era;
};

inline std::atomic<unsigned>& hyaline_record_counter() noexcept {
  static std::atomic<unsigned> counter{0};
  return counter;
}

// A shared slot (hyaline, hyaline_s).
struct alignas(core::cache_line) hyaline_slot {
  core::atomic_pair head;  // lo: threads inside; hi: the first node of the list
  alignas(core::cache_line) core::atomic<era_t> access{no_era};  // hyaline_s: the slot's era
  core::atomic<std::int64_t> owed{0};  // hyaline_s: decrements its threads owe (stall detector)
};

template <class FreePolicy>
struct hyaline_record : core::thread_record<FreePolicy> {
  // hyaline_1, hyaline_1s: this record's slot, {pointer | inside bit}, and its era.
  alignas(core::cache_line) core::atomic<std::uintptr_t> head{0};
  core::atomic<era_t> access{no_era};
  // hyaline, hyaline_s: where the thread stands towards its slot between operations (lazy leave,
  // detail/lazy_leave.hpp; the domain's end()): still counted (kept: nothing was pushed onto the
  // slot while it was inside) or not (idle). On the line of `head`, which the shared variants
  // leave unused.
  lazy_leave between;
  // Held around retires, frees and free-policy steps: a barrier borrows the garbage while free.
  alignas(core::cache_line) core::garbage_claim claim;
  // Owner only (or a barrier that borrowed the record).
  birth_sorted_batches<> batches;  // the partial batches (robust: sorted by birth era)
  hyaline_node* handle = nullptr;  // the node on top of the slot when the thread entered
  unsigned slot = 0;               // hyaline, hyaline_s: the slot entered
  // hyaline, hyaline_s: counted in `slot`'s head for certain (set after the entering CAS, cleared
  // before the leaving one, the owner's or a revoker's); read only in a child of fork()
  // (domain::recount_slots()).
  bool counted = false;
  era_t era = no_era;              // robust: the era the slot holds for this thread
  unsigned since_advance = 0;      // robust: allocations since the clock last advanced
  bool fenced = false;             // hyaline_1: ran its first-enter fence
  const unsigned index = hyaline_record_counter().fetch_add(1, std::memory_order_relaxed);

  void destroy_garbage() noexcept { batches.take_all().destroy_all(); }
};

}  // namespace reclaim::detail
