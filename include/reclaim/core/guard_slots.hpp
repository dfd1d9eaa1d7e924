// The protection slots of a guard (hazard pointers, nbr reservations), so that guards nest: a
// thread's outermost guard uses the block inside its record, and a guard nested inside another uses
// the next block of a chain that only grows, one block per nesting level the thread ever reached.
// A nested guard thus never overwrites a protection an outer guard still relies on. Blocks are
// added by the record's owner and read by reclaimers; they are freed with the record.
#pragma once
#include <atomic>

namespace reclaim::core {

struct no_owner_data {};

// OwnerData: what the owner keeps per block besides the slots (not read by reclaimers).
template <class T, unsigned N, class OwnerData = no_owner_data>
struct slot_block {
  slot_block() = default;
  slot_block(const slot_block&) = delete;
  slot_block& operator=(const slot_block&) = delete;
  ~slot_block() { delete next.load(std::memory_order_relaxed); }

  std::atomic<T> slots[N] = {};
  std::atomic<slot_block*> next{nullptr};
  [[no_unique_address]] OwnerData owner;

  // The block `level` links down the chain (0: this one), added where missing; on_new() is called
  // for each block added. Owner only. Throws std::bad_alloc.
  template <class OnNew>
  slot_block& at(unsigned level, OnNew on_new) {
    slot_block* b = this;
    for (; level > 0; --level) {
      slot_block* next_block = b->next.load(std::memory_order_relaxed);  // only the owner writes
      if (!next_block) {
        next_block = new slot_block;
        // release: a reclaimer that reaches the block (acquire in for_each()) sees it built.
        b->next.store(next_block, std::memory_order_release);
        on_new();
      }
      b = next_block;
    }
    return *b;
  }

  // f(block) for this block and every block chained to it, for reclaimers.
  template <class F>
  void for_each(F f) const {
    for (const slot_block* b = this; b; b = b->next.load(std::memory_order_acquire)) f(*b);
  }
  // The same for the owner, which may change the blocks (thread exit clears them all).
  template <class F>
  void for_each_owned(F f) {
    for (slot_block* b = this; b; b = b->next.load(std::memory_order_relaxed)) f(*b);
  }
};

}  // namespace reclaim::core
