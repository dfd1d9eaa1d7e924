// SPDX-License-Identifier: MIT
// Crystalline's reservations (schemes/crystalline.hpp): what a reader publishes, where a thread
// keeps them, and the slots of its guards that point at them.
//
// A reservation is one 16-byte word pair changed only by a double-width CAS (core::atomic_pair):
// {list, era}. list is a singly linked list of retired nodes, one per batch that was inserted
// into this reservation (or `inactive`, 1, when the reservation protects nothing); era is what the
// reservation protects (no_era, 0, while inactive). The paper keeps list and era in separate
// words; one DWCAS word makes a retirer's check of the era and its insertion one atomic step, so
// the paper's "inactive after exchange, try to undo" path and the CAS on a node's next link are
// not needed, at the price of a retry loop (lock-free insertion and publication). A record's
// reservations live in its pool (blocks of 8 that seals walk); each slot of a guard (K per
// nesting level) and each owned protection points at one, with the era it published cached beside
// it.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>

#include "../../core/platform/dwcas.hpp"
#include "eras.hpp"
#include "../../core/sync.hpp"

namespace reclaim::detail {

struct crystalline_hold;

// One reservation: {list head | inactive, era}, changed only by DWCAS, and its owner's fields.
struct alignas(32) crystalline_reservation {
  static constexpr std::uint64_t inactive = 1;
  core::atomic_pair word{core::word_pair{inactive, no_era}};
  // Owner only (crystalline_w): the hold that froze it, and whether it was abandoned to one.
  crystalline_hold* frozen = nullptr;
  bool abandoned = false;
  // The pool's stacks, or a hold's abandoned stack.
  crystalline_reservation* next_free = nullptr;
};

// What a guard's slot or a protection holds: its reservation, and the era the owner published
// there (owner only: the fast path reads no shared line, where the paper's reads the reservation;
// under crystalline_w a lower bound of the reservation's era, which helpers of a request raise).
struct crystalline_slot {
  crystalline_reservation* res = nullptr;
  era_t era = no_era;
};

// A protection's slot, which it keeps itself (core::slot_protection's Hooks::owned): the domain
// changes a slot in place (crystalline_w replaces its reservation: a frozen one goes to its hold,
// a helped one takes over), so a protection cannot point at a slot in the pool. Empty while it
// has no reservation (before its first protect, or once a reset abandoned it to a hold).
struct crystalline_owned_slot {
  crystalline_slot slot;
  crystalline_owned_slot(std::nullptr_t = nullptr) noexcept {}
  explicit crystalline_owned_slot(crystalline_reservation& x) noexcept : slot{&x, no_era} {}
  explicit operator bool() const noexcept { return slot.res != nullptr; }
  crystalline_slot& operator*() noexcept { return slot; }
};

// Every reservation of a record, in blocks that seals walk. The owner takes and gives back through
// its own stack; under crystalline_w the closers of holds give abandoned ones back through
// `returned`, which the owner empties when its stack runs out.
//
// Records and blocks registered after a seal began. The registry pushes a record, and an owner
// links a pool block, with release stores; the first thing an owner does with a new record or
// block is a seq_cst fence (the domain's fence_once(), once per owner of a record, and the
// on_grow() of take(), after every new block). A seal's fence comes before its walk, so if the
// walk missed the record or the block, the seal's fence precedes the owner's in S, which precedes
// the owner's era publication and its read of src: that read sees the unlink. So a seal counts
// exactly the reservations it finds; the batch is sized for H + 1 (H read before sealing), and if
// the registry grew meanwhile the assignment pass runs out of nodes and the seal waits for more
// retires (flush, barrier and thread exit pad instead).
class crystalline_pool {
 public:
  using reservation = crystalline_reservation;
  static constexpr unsigned block_size = 8;

  crystalline_pool() = default;
  crystalline_pool(const crystalline_pool&) = delete;
  crystalline_pool& operator=(const crystalline_pool&) = delete;
  ~crystalline_pool() {
    for (block* b = first_.load(std::memory_order_relaxed); b;) delete std::exchange(b, b->next);
  }

  // A reservation (inactive, not frozen), or nullptr if a new block cannot be allocated; on_grow()
  // runs after a new block is linked.
  template <class OnGrow>
  reservation* take(OnGrow on_grow) noexcept {
    // acquire: pairs with give_back_remote(): the closer's release of the reservation came first.
    if (!free_) [[unlikely]] {
      free_ = returned_.exchange(nullptr, std::memory_order_acquire);
      if (!free_) {
        if (!grow()) return nullptr;
        on_grow();
      }
    }
    reservation* x = free_;
    free_ = x->next_free;
    x->frozen = nullptr;
    x->abandoned = false;
    return x;
  }
  void give_back(reservation* x) noexcept {
    x->next_free = free_;
    free_ = x;
  }
  // From a thread that closed a hold (crystalline_w).
  void give_back_remote(reservation* x) noexcept {
    reservation* head = returned_.load(std::memory_order_relaxed);
    do x->next_free = head;
    // release: the reservation's deactivation comes before the owner's next use of it.
    while (!returned_.compare_exchange_weak(head, x, std::memory_order_release,
                                            std::memory_order_relaxed));
  }

  template <class F>
  void for_each(F f) const {
    // acquire: pairs with the release store in grow(), so a seal sees a new block built.
    for (const block* b = first_.load(std::memory_order_acquire); b; b = b->next)
      for (const reservation& x : b->res) f(x);
  }
  template <class F>
  void for_each_owned(F f) {
    for (block* b = first_.load(std::memory_order_relaxed); b; b = b->next)
      for (reservation& x : b->res) f(x);
  }

 private:
  struct block {
    reservation res[block_size];
    block* next = nullptr;  // fixed before the block is published
  };
  [[gnu::noinline]] bool grow() noexcept {
    auto* b = new (std::nothrow) block;
    if (!b) return false;
    b->next = first_.load(std::memory_order_relaxed);
    for (reservation& x : b->res) give_back(&x);
    first_.store(b, std::memory_order_release);
    return true;
  }

  core::atomic<block*> first_{nullptr};
  reservation* free_ = nullptr;
  core::atomic<reservation*> returned_{nullptr};
};

// K slots of a guard nesting level. A nested guard gets its own level (allocated the first time a
// thread nests that deep, kept for reuse), as hp's guards do. Sharing the outer guard's
// reservations would not be safe here: publishing a newer era in a reservation detaches its list
// and releases the batches inserted for the older era, which may hold the outer guard's node (a
// newer era covers new insertions of the older nodes, but not the batches already released).
template <unsigned K>
struct crystalline_level {
  crystalline_slot slots[K];
  bool complete = false;  // every slot has a reservation
  std::unique_ptr<crystalline_level> next;
};

}  // namespace reclaim::detail
