// SPDX-License-Identifier: MIT
// The type-stable memory of lfrc (schemes/lfrc.hpp): every lfrc node lives in a block whose
// header, in front of the node, holds its reference count, and no block is ever given back to
// the system allocator. A thread that read a pointer to a node a moment ago may therefore always
// increment that node's count, even if the node has been reclaimed (and its block reused) since:
// the count it touches is still a count, and the validation that follows (re-reading where the
// pointer came from) tells it whether the node is still the one it read. That is what lock-free
// reference counting needs (Valois 1995; Michael and Scott 1995), and why, as paper 003 notes,
// LFRC is not a general-purpose scheme: its nodes' memory is recycled only as nodes.
//
// Where free blocks wait, by size (a size class: the node's size rounded up to 16 bytes):
//   - each thread record's cache (block_cache, owner only): where the thread's reclamations put
//     blocks and its create() takes them from;
//   - its domain's stacks (block_stacks): overflow of the records' caches and what exiting
//     threads leave, for the domain's other threads; caches and stacks are the domain's free list;
//   - the process's stacks (process_blocks()): where `delete` of a node outside a reclamation (a
//     container's destructor) and a destroyed domain's free list go, and where a domain's create()
//     looks when its own are empty (plain `new` takes fresh memory).
// A stack is only ever pushed to and taken whole (exchange), so it has no ABA problem.
//
// Out of memory. Freeing a block never allocates what it cannot do without: a set of stacks
// makes a stack for a size it has not seen with a nothrow allocation, and when that fails the
// blocks go to the process's stacks instead (push_blocks()), which have a stack for every size
// ever allocated (made by fresh_block(), on the allocation path, where a failure may throw). So
// reclaiming a node, a thread's exit and a domain's destruction never throw or lose a block.
#pragma once
#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <new>

#include "../../core/sync.hpp"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define RECLAIM_LFRC_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define RECLAIM_LFRC_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define RECLAIM_LFRC_POISON(p, n) ((void)(p), (void)(n))
#define RECLAIM_LFRC_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace reclaim::detail::lfrc {

// The reference count word: count x count_one, plus two flags. A node is reclaimed by whoever
// moves the word from `retired` with a zero count to `retired | claimed` (the CAS of Michael and
// Scott's correction of Valois: of the retirer and the last releaser, exactly one wins).
inline constexpr std::uint64_t retired = 1, claimed = 2, count_one = 4;

// In front of every node. `next` links a free block into a cache or stack; while the block holds
// a node it holds live_mark instead (debug builds check it where a node must be live).
struct alignas(16) block_header {
  core::atomic<std::uint64_t> refs{0};
  core::atomic<block_header*> next{nullptr};
};
// The node follows the header at a multiple of 16 bytes; 16 exactly in normal builds (the
// checker's atomics are larger).
static_assert(sizeof(block_header) % 16 == 0);
#if !defined(RECLAIM_VERIFY)
static_assert(sizeof(block_header) == 16);
#endif
inline block_header* const live_mark = reinterpret_cast<block_header*>(std::uintptr_t{0x11fe});

inline block_header* header_of(const void* node) noexcept {
  return reinterpret_cast<block_header*>(
      const_cast<char*>(static_cast<const char*>(node) - sizeof(block_header)));
}
inline void* node_of(block_header* h) noexcept {
  return reinterpret_cast<char*>(h) + sizeof(block_header);
}
constexpr std::size_t size_class(std::size_t node_size) noexcept { return (node_size + 15) / 16 * 16; }

// Free blocks of many sizes, each size a stack that is pushed to (a chain at a time) and taken
// whole. The sizes form a list that only grows (a handful per process).
class block_stacks {
  struct stack {
    std::size_t size;
    core::atomic<block_header*> top{nullptr};
    stack* next_size;
  };

 public:
  block_stacks() = default;
  block_stacks(const block_stacks&) = delete;
  block_stacks& operator=(const block_stacks&) = delete;
  ~block_stacks() {
    for (stack* s = sizes_.load(std::memory_order_relaxed); s;) {
      stack* next = s->next_size;
      delete s;
      s = next;
    }
  }

  // Pushes the chain first..last (linked through next) of blocks of `size`; false, pushing
  // nothing, if there is no stack for `size` and no memory to make one.
  bool try_push(std::size_t size, block_header* first, block_header* last) noexcept {
    stack* s = stack_of(size);
    if (!s) return false;
    block_header* old = s->top.load(std::memory_order_relaxed);
    do {
      last->next.store(old, std::memory_order_relaxed);
      // release: the chain's links (and the blocks' last contents) are seen by the taker;
      // pairs with the acquire exchange in take().
    } while (!s->top.compare_exchange_weak(old, first, std::memory_order_release,
                                           std::memory_order_relaxed));
    return true;
  }
  // Every block of `size`, as a chain (null if none).
  block_header* take(std::size_t size) noexcept {
    stack* s = find(size);
    if (!s || !s->top.load(std::memory_order_relaxed)) return nullptr;
    return s->top.exchange(nullptr, std::memory_order_acquire);  // pairs with try_push()
  }
  // Makes sure there is a stack for `size`. Throws std::bad_alloc.
  void add_size(std::size_t size) {
    if (!stack_of(size)) throw std::bad_alloc();
  }
  // f(size, chain) for every size's blocks, taken.
  template <class F>
  void take_all(F f) noexcept {
    for (stack* s = sizes_.load(std::memory_order_acquire); s; s = s->next_size)
      if (block_header* chain = s->top.exchange(nullptr, std::memory_order_acquire))
        f(s->size, chain);
  }

 private:
  // acquire: pairs with the release CAS in stack_of(), so a size found is seen built.
  stack* find(std::size_t size) const noexcept {
    for (stack* s = sizes_.load(std::memory_order_acquire); s; s = s->next_size)
      if (s->size == size) return s;
    return nullptr;
  }
  // The stack of `size`, made if missing; null if there is no memory for it.
  stack* stack_of(std::size_t size) noexcept {
    stack* first = sizes_.load(std::memory_order_acquire);
    for (stack* s = first; s; s = s->next_size)
      if (s->size == size) return s;
    auto* added = new (std::nothrow) stack{size, {}, first};
    if (!added) return nullptr;
    // release: the new size is seen built; acquire on failure: the sizes pushed meanwhile.
    while (!sizes_.compare_exchange_weak(added->next_size, added, std::memory_order_acq_rel,
                                         std::memory_order_acquire)) {
      for (stack* s = added->next_size; s != first && s; s = s->next_size)
        if (s->size == size) {
          delete added;
          return s;
        }
      first = added->next_size;
    }
    return added;
  }

  core::atomic<stack*> sizes_{nullptr};
};

// Where memory goes when it leaves every domain. Never destroyed: a block's header must stay a
// header for as long as any thread may hold a pointer read from a link, which outlives domains.
#if defined(RECLAIM_VERIFY)
// Under the model checker each simulated run has its own heap and atomics, which must all be gone
// at its end: a process-wide set made on first use would outlive the run. A model makes one for
// each run before its domain and frees it, with every block, after (tests/verify/models_lfrc.cpp).
inline block_stacks* verify_process_blocks = nullptr;
inline block_stacks& process_blocks() { return *verify_process_blocks; }
#else
inline block_stacks& process_blocks() {
  static auto* blocks = new block_stacks;
  return *blocks;
}
#endif

// Pushes the chain to `stacks`, or, if that set has no stack for the size and no memory to make
// one, to the process's stacks, which have a stack for every size (fresh_block() made it before
// the size's first block): so giving blocks back never fails.
inline void push_blocks(block_stacks& stacks, std::size_t size, block_header* first,
                        block_header* last) noexcept {
  if (stacks.try_push(size, first, last)) return;
  [[maybe_unused]] const bool pushed = process_blocks().try_push(size, first, last);
  assert(pushed && "reclaim: lfrc: a block whose size has no process stack");
}

// A fresh block from the system allocator, or a free one (its flags cleared, its count kept: a
// thread that read a stale pointer may have counted it and will uncount it), made live.
inline void* revive(block_header* h, std::size_t size) noexcept {
  // relaxed: a count is only a number; the node is published by the container's release store.
  h->refs.fetch_and(~(retired | claimed), std::memory_order_relaxed);
  h->next.store(live_mark, std::memory_order_relaxed);
  RECLAIM_LFRC_UNPOISON(node_of(h), size);
  return node_of(h);
}
// The process's stack for the size comes first, so that the block can always be given back.
inline void* fresh_block(std::size_t size) {
  process_blocks().add_size(size);
  auto* h = ::new (::operator new(sizeof(block_header) + size)) block_header;
  h->next.store(live_mark, std::memory_order_relaxed);
  return node_of(h);
}
// The block of a node whose memory is free now (destroyed, never to be read as a node again).
inline block_header* retire_block(void* node, std::size_t size) noexcept {
  block_header* h = header_of(node);
  assert(h->next.load(std::memory_order_relaxed) == live_mark &&
         "reclaim: lfrc: freeing memory that is not a live lfrc node");
  RECLAIM_LFRC_POISON(node, size);
  return h;
}

// A thread record's free blocks (owner only): a few sizes, each a chain, spilling half of a
// chain to the domain's stacks when it grows past `high`.
class block_cache {
 public:
  static constexpr std::size_t high = 256;
  static constexpr unsigned sizes = 4;

  void* pop(std::size_t size) noexcept {
    for (entry& e : entries_) {
      if (e.size != size || !e.first) continue;
      block_header* h = e.first;
      e.first = h->next.load(std::memory_order_relaxed);
      --e.count;
      return revive(h, size);
    }
    return nullptr;
  }
  // Takes the chain `chain` of blocks of `size` and returns one of them (null: no chain).
  void* adopt(std::size_t size, block_header* chain, block_stacks& overflow) noexcept {
    if (!chain) return nullptr;
    while (block_header* h = chain) {
      chain = h->next.load(std::memory_order_relaxed);
      push(size, h, overflow);
    }
    return pop(size);
  }
  void push(std::size_t size, block_header* h, block_stacks& overflow) noexcept {
    entry* free_entry = nullptr;
    for (entry& e : entries_) {
      if (e.size == size) {
        h->next.store(e.first, std::memory_order_relaxed);
        e.first = h;
        if (++e.count > high) spill(e, overflow);
        return;
      }
      if (!e.first && !free_entry) free_entry = &e;
    }
    if (free_entry) {
      *free_entry = {size, nullptr, 0};
      push(size, h, overflow);
      return;
    }
    push_blocks(overflow, size, h, h);  // a fifth size: straight to the stacks
  }
  // Everything, to `into` (thread exit, domain destruction).
  void spill_all(block_stacks& into) noexcept {
    for (entry& e : entries_) {
      if (!e.first) continue;
      block_header* last = e.first;
      while (block_header* n = last->next.load(std::memory_order_relaxed)) last = n;
      push_blocks(into, e.size, e.first, last);
      e = {};
    }
  }

 private:
  struct entry {
    std::size_t size = 0;
    block_header* first = nullptr;
    std::size_t count = 0;
  };
  // Half of e's blocks to the stacks (the other threads of the domain allocate from there).
  static void spill(entry& e, block_stacks& overflow) noexcept {
    block_header* first = e.first;
    block_header* last = first;
    for (std::size_t i = 1; i < high / 2; ++i) last = last->next.load(std::memory_order_relaxed);
    e.first = last->next.load(std::memory_order_relaxed);
    e.count -= high / 2;
    push_blocks(overflow, e.size, first, last);
  }

  entry entries_[sizes];
};

// Where the calling thread's reclamations put the memory they free: set while an lfrc domain
// destroys a node (the node's operator delete runs inside its deleter), empty otherwise.
struct reclaiming {
  block_cache* cache = nullptr;
  block_stacks* overflow = nullptr;
};
RECLAIM_THREAD_LOCAL(reclaiming, reclaiming_into);

// The allocation functions of every lfrc node (lfrc<>::node_base declares them). A node made
// with plain `new` (a container's sentinel; nodes of the domain's own come from its create())
// gets fresh memory; one deleted outside a reclamation (a container's destructor, a node never
// published) goes to the process's stacks, from which domains' create() take when theirs run dry.
inline void* allocate_node(std::size_t node_size) { return fresh_block(size_class(node_size)); }
inline void deallocate_node(void* node, std::size_t node_size) noexcept {
  const std::size_t size = size_class(node_size);
  block_header* h = retire_block(node, size);
  const reclaiming& into = reclaiming_into;
  if (into.cache)
    into.cache->push(size, h, *into.overflow);
  else
    push_blocks(process_blocks(), size, h, h);
}

}  // namespace reclaim::detail::lfrc
