// SPDX-License-Identifier: MIT
// The protection slots of a guard (hazard pointers, nbr reservations), so that guards nest: a
// thread's outermost guard uses the block inside its record, and a guard nested inside another uses
// the next block of a chain that only grows, one block per nesting level the thread ever reached.
// A nested guard thus never overwrites a protection an outer guard still relies on. Blocks are
// added by the record's owner and read by reclaimers; they are freed with the record.
//
// Slots owned one at a time (slot_pool): a guard_ptr's hazard, taken when it first protects and
// given back when it is destroyed, in any order, in constant time.
#pragma once
#include <atomic>
#include <cstddef>
#include <memory>
#include "sync.hpp"

namespace reclaim::core {

struct no_owner_data {};

// OwnerData: what the owner keeps per block besides the slots (not read by reclaimers).
template <class T, unsigned N, class OwnerData = no_owner_data>
struct slot_block {
  slot_block() = default;
  slot_block(const slot_block&) = delete;
  slot_block& operator=(const slot_block&) = delete;
  ~slot_block() { delete next.load(std::memory_order_relaxed); }

  core::atomic<T> slots[N] = {};
  core::atomic<slot_block*> next{nullptr};
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

// Slots that owners take one by one and give back in any order: a chain of blocks of N slots that
// reclaimers walk as they walk a slot_block chain, grown by the record's owner when no slot is
// free, and the owner's free list (a stack of slot addresses). The stack's capacity covers every
// slot of the chain, so giving a slot back never allocates. Freed with the record.
template <class T, unsigned N>
class slot_pool {
 public:
  using block = slot_block<T, N>;
  static constexpr unsigned block_size = N;

  slot_pool() = default;
  slot_pool(const slot_pool&) = delete;
  slot_pool& operator=(const slot_pool&) = delete;
  ~slot_pool() { delete first_.load(std::memory_order_relaxed); }

  // A free slot, adding a block of N when none is left (then on_grow() is called). Owner only.
  // Throws std::bad_alloc, and then nothing changed.
  template <class OnGrow>
  core::atomic<T>& take(OnGrow on_grow) {
    if (free_count_ == 0) [[unlikely]] grow(on_grow);
    return *free_[--free_count_];
  }
  // Owner only; the slot is the caller's to clear first. The stack has room for every slot, so
  // this is one store, with nothing to grow.
  void give_back(core::atomic<T>& slot) noexcept { free_[free_count_++] = &slot; }

  // Whether no slot is taken (owner only, or once the owner is gone).
  bool all_free() const noexcept { return free_count_ == blocks_ * N; }

  // f(block) for every block, for reclaimers.
  template <class F>
  void for_each(F f) const {
    // acquire: pairs with the release store in grow(), so the newest block and those chained
    // behind it are seen built.
    if (const block* b = first_.load(std::memory_order_acquire)) b->for_each(f);
  }
  // The same for the owner, which may change the slots (thread exit clears them all).
  template <class F>
  void for_each_owned(F f) {
    if (block* b = first_.load(std::memory_order_relaxed)) b->for_each_owned(f);
  }

 private:
  // Called with no free slot: every slot is taken, so the new stack starts with the new block's.
  template <class OnGrow>
  [[gnu::noinline]] void grow(OnGrow on_grow) {
    // The allocations may throw; nothing changes before both have succeeded.
    auto stack = std::make_unique<core::atomic<T>*[]>((blocks_ + 1) * N);
    auto b = std::make_unique<block>();
    b->next.store(first_.load(std::memory_order_relaxed), std::memory_order_relaxed);
    for (auto& slot : b->slots) stack[free_count_++] = &slot;
    // release: a reclaimer that reads the new head (acquire in for_each()) sees the block built.
    first_.store(b.release(), std::memory_order_release);
    free_ = std::move(stack);
    ++blocks_;
    on_grow();
  }

  core::atomic<block*> first_{nullptr};
  // Owner only: a stack of the free slots, with room for every slot of the chain.
  std::unique_ptr<core::atomic<T>*[]> free_;
  std::size_t free_count_ = 0;
  std::size_t blocks_ = 0;
};

}  // namespace reclaim::core
