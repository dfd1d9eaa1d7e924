// SPDX-License-Identifier: MIT
// Retired nodes: the intrusive link every reclaimable node carries, the per-thread list of retired
// nodes, and the domain's orphanage of garbage left behind by exited threads.
#pragma once
#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>
#include "sync.hpp"

// Poison freed nodes in debug builds so that a use-after-free reads garbage pointers and crashes
// instead of silently reading the old contents. AddressSanitizer does better on its own.
#if !defined(NDEBUG) && !defined(__SANITIZE_ADDRESS__)
#define RECLAIM_POISON_FREED 1
#else
#define RECLAIM_POISON_FREED 0
#endif

namespace reclaim::core {

// The link a scheme keeps a retired node on, and how to destroy it. Schemes that defer frees make
// their node_base derive from this; `none` and pure epoch schemes pay the same 16 bytes a list would.
struct retired_hook {
  retired_hook* next_retired = nullptr;
  void (*destroy)(retired_hook*) = nullptr;
};

inline constexpr unsigned char poison_byte = 0xDB;

// What `delete node` does after the destructor: free the memory through T's own operator delete
// where it has one (lfrc keeps its nodes in type-stable memory that way), else the global one.
template <class T>
void deallocate_node(T* node) noexcept {
  void* p = static_cast<void*>(node);
  if constexpr (requires(void* q) { T::operator delete(q, sizeof(T)); })
    T::operator delete(p, sizeof(T));
  else if constexpr (requires(void* q) { T::operator delete(q); })
    T::operator delete(p);
  else if constexpr (alignof(T) > __STDCPP_DEFAULT_NEW_ALIGNMENT__)
    ::operator delete(p, std::align_val_t{alignof(T)});
  else
    ::operator delete(p);
}

// The default deleter: `delete` for nodes made with `new T(...)`, poisoned first where enabled.
template <class T>
void destroy_node(retired_hook* hook) noexcept {
  T* node = static_cast<T*>(hook);
#if RECLAIM_POISON_FREED
  node->~T();
  std::memset(static_cast<void*>(node), poison_byte, sizeof(T));
  deallocate_node(node);
#else
  delete node;
#endif
}

// A user-supplied deleter, chosen at compile time so the node still carries one function pointer.
template <class T, auto Deleter>
void destroy_with(retired_hook* hook) noexcept {
  Deleter(static_cast<T*>(hook));
}

// A singly linked list of retired nodes, owned by one thread (or by nobody, while orphaned).
class retired_list {
 public:
  retired_list() noexcept = default;
  retired_list(retired_list&& other) noexcept
      : head_(std::exchange(other.head_, nullptr)),
        tail_(std::exchange(other.tail_, nullptr)),
        size_(std::exchange(other.size_, 0)) {}
  retired_list& operator=(retired_list&& other) noexcept {
    head_ = std::exchange(other.head_, nullptr);
    tail_ = std::exchange(other.tail_, nullptr);
    size_ = std::exchange(other.size_, 0);
    return *this;
  }

  bool empty() const noexcept { return head_ == nullptr; }
  std::size_t size() const noexcept { return size_; }
  retired_hook* head() const noexcept { return head_; }
  retired_hook* tail() const noexcept { return tail_; }

  void push(retired_hook* node) noexcept {
    node->next_retired = head_;
    head_ = node;
    if (!tail_) tail_ = node;
    ++size_;
  }

  // Adds a chain from head to tail in front of the list (tail->next_retired is overwritten).
  void splice(retired_hook* head, retired_hook* tail, std::size_t count) noexcept {
    if (!head) return;
    tail->next_retired = head_;
    head_ = head;
    if (!tail_) tail_ = tail;
    size_ += count;
  }
  void splice(retired_list&& other) noexcept {
    splice(other.head_, other.tail_, other.size_);
    other.head_ = other.tail_ = nullptr;
    other.size_ = 0;
  }

  // Adds a node at the back (a list kept in age order, oldest first: Stamp-it's).
  void push_back(retired_hook* node) noexcept {
    node->next_retired = nullptr;
    if (tail_)
      tail_->next_retired = node;
    else
      head_ = node;
    tail_ = node;
    ++size_;
  }

  retired_hook* pop() noexcept {
    retired_hook* node = head_;
    if (!node) return nullptr;
    head_ = node->next_retired;
    if (!head_) tail_ = nullptr;
    --size_;
    return node;
  }

  // Moves the nodes for which `is_safe` holds into `safe`; keeps the others.
  template <class Pred>
  void partition_into(retired_list& safe, Pred is_safe) noexcept {
    retired_list kept;
    while (retired_hook* node = pop()) (is_safe(node) ? safe : kept).push(node);
    *this = std::move(kept);
  }

  // Destroys every node; returns how many.
  std::size_t destroy_all() noexcept {
    std::size_t n = 0;
    while (retired_hook* node = pop()) {
      node->destroy(node);
      ++n;
    }
    return n;
  }

 private:
  retired_hook* head_ = nullptr;
  retired_hook* tail_ = nullptr;
  std::size_t size_ = 0;
};

// A batch of garbage that an exited thread handed over, with its age. `stamp` says when the batch
// becomes safe, in the scheme's own terms (epoch schemes: the epoch its nodes were retired in;
// Token-EBR: the token round count read after they were unlinked); schemes whose reclaimers check
// every node themselves (hazard pointers, neutralization, per-node stamps) ignore it; Stamp-it,
// whose nodes carry their own stamps, keeps the oldest node's there. A batch is never made
// younger: whoever takes it either frees it, splices it into lists that keep each node's age,
// gives it back unchanged, or (Stamp-it) frees its oldest nodes and gives the rest back with the
// stamp of its new oldest; so a run of short-lived threads cannot keep garbage young.
struct orphan_batch {
  orphan_batch* next = nullptr;
  retired_list garbage;
  std::uint64_t stamp = 0;
};

// The headers a thread needs to hand its garbage over at exit, allocated when it registers (where
// an allocation may fail with an exception) so that thread exit allocates nothing. Owner only.
class orphan_headers {
 public:
  orphan_headers() = default;
  orphan_headers(const orphan_headers&) = delete;
  orphan_headers& operator=(const orphan_headers&) = delete;
  ~orphan_headers() {
    while (orphan_batch* b = take()) delete b;
  }

  // Makes sure `n` headers are at hand; throws std::bad_alloc.
  void reserve(unsigned n) {
    for (; count_ < n; ++count_) spares_ = new orphan_batch{spares_, {}, 0};
  }
  orphan_batch* take() noexcept {
    orphan_batch* b = spares_;
    if (b) {
      spares_ = b->next;
      --count_;
    }
    return b;
  }

 private:
  orphan_batch* spares_ = nullptr;
  unsigned count_ = 0;
};

// Garbage that exited threads left behind, as stamped batches: a Treiber stack of batches that is
// only pushed to and swapped out whole (exchange), so there is no pop and no ABA. Handing a batch
// over is one CAS; taking them is O(batches), never O(nodes).
class orphanage {
 public:
  orphanage() = default;
  orphanage(const orphanage&) = delete;
  orphanage& operator=(const orphanage&) = delete;
  ~orphanage() { take_all().destroy_all(); }

  // Hands `list` over with `stamp`, in a header from `headers` (reserved at registration).
  void give(retired_list&& list, std::uint64_t stamp, orphan_headers& headers) noexcept {
    if (list.empty()) return;
    orphan_batch* b = headers.take();
    assert(b && "reserve the orphan headers a record hands over at exit when it registers");
    b->garbage = std::move(list);
    b->stamp = stamp;
    push(b, b);
  }

  bool empty() const noexcept { return head_.load(std::memory_order_relaxed) == nullptr; }

  // Every batch, as one list.
  retired_list take_all() noexcept {
    return take_if([](std::uint64_t) { return true; });
  }

  // The batches themselves, for a scheme that frees part of a batch (Stamp-it frees a batch's
  // oldest nodes and keeps the rest with the stamp of its new oldest). The caller owns them until
  // it hands back what is left with give_back(); an emptied batch is the caller's to delete.
  orphan_batch* take_batches() noexcept {
    if (empty()) [[likely]] return nullptr;
    // acquire: as in take_if().
    return head_.exchange(nullptr, std::memory_order_acquire);
  }
  // Hands back the chain first..last (linked through next), taken with take_batches().
  void give_back(orphan_batch* first, orphan_batch* last) noexcept {
    if (first) push(first, last);
  }

  // The batches whose stamp satisfies `is_safe`, as one list; the others go back as they were.
  template <class Pred>
  retired_list take_if(Pred is_safe) noexcept {
    // acquire: pairs with the release CAS in push(), so the batches and their lists are the ones
    // written by their givers.
    orphan_batch* b = head_.exchange(nullptr, std::memory_order_acquire);
    retired_list taken;
    orphan_batch *kept = nullptr, *kept_tail = nullptr;
    while (b) {
      orphan_batch* next = b->next;
      if (is_safe(b->stamp)) {
        taken.splice(std::move(b->garbage));
        delete b;
      } else {
        b->next = kept;
        kept = b;
        if (!kept_tail) kept_tail = b;
      }
      b = next;
    }
    if (kept) push(kept, kept_tail);
    return taken;
  }

 private:
  // Pushes the chain first..last (linked through next) in one CAS.
  void push(orphan_batch* first, orphan_batch* last) noexcept {
    last->next = head_.load(std::memory_order_relaxed);
    // release: publishes the batches (and the lists they carry); pairs with the acquire exchange
    // in take_if().
    while (!head_.compare_exchange_weak(last->next, first, std::memory_order_release,
                                        std::memory_order_relaxed)) {
    }
  }

  core::atomic<orphan_batch*> head_{nullptr};
};

}  // namespace reclaim::core

namespace reclaim::core {

// A node's deleter is null until it is retired (and after its memory is reused for a new node), so
// a deleter already set means the node was retired before: debug builds name that at once, instead
// of a crash when the node is destroyed twice.
inline retired_hook* tag_retired(retired_hook* hook, void (*destroy)(retired_hook*)) noexcept {
  assert(hook->destroy == nullptr && "reclaim: node retired twice");
  hook->destroy = destroy;
  return hook;
}

// Whether T can be retired at all: it carries the retire link, through its scheme's node_base.
// Every retire() checks it first, so that a node type without the base is one message naming the
// fix rather than a failed pointer conversion deep in the library (a deleter does not lift it: the
// deleter is kept beside the link). A scheme whose node_base carries more (eras, stamps, counts)
// checks its own base too.
template <class T>
constexpr bool retirable() noexcept {
  constexpr bool has_link = std::is_convertible_v<T*, retired_hook*>;
  static_assert(has_link,
                "reclaim: retire(node): the node's type must derive from the scheme's node_base "
                "(struct node : Scheme::node_base { ... }), which carries the link a retired node "
                "waits on; with a deleter too (retire(node, d), retire<&f>(node))");
  return has_link;
}

// Tags a node with how to destroy it and returns its link: the first step of every retire().
// Deleter is `void(T*)`; the default deletes a node made with `new T(...)`. A node type without
// the link is only retirable()'s message (the branch not taken is not compiled).
template <class T>
retired_hook* to_retired(T* node) noexcept {
  if constexpr (retirable<T>())
    return tag_retired(node, &destroy_node<T>);
  else
    return nullptr;
}
template <auto Deleter, class T>
retired_hook* to_retired(T* node) noexcept {
  if constexpr (retirable<T>())
    return tag_retired(node, &destroy_with<T, Deleter>);
  else
    return nullptr;
}

// A deleter object D, called as d(node) exactly once, on whichever thread frees the node (possibly
// at thread exit or domain destruction); it must not throw. A stateless one (an empty class that
// can be default-constructed, such as std::default_delete or a lambda without captures) costs
// nothing: it is made anew where the node is freed. A deleter with state lives in the node itself,
// which derives from deleter_slot<D> (as P2530's hazard_pointer_obj_base<T, D> keeps D in the
// object's base class): retire() moves it there, and the free moves it out before calling it. So a
// retire never allocates and cannot fail for want of memory; only D's move may throw, before the
// node is retired.
template <class D>
concept stateless_deleter = std::is_empty_v<D> && std::is_default_constructible_v<D>;

template <class D>
class deleter_slot {
 protected:
  deleter_slot() = default;
  ~deleter_slot() = default;

 private:
  template <class T, class Deleter>
  friend retired_hook* to_retired(T* node, Deleter&& d);
  template <class T, class Deleter>
  friend void destroy_with_stored(retired_hook* hook) noexcept;

  alignas(D) unsigned char bytes_[sizeof(D)];
};
// A stateless deleter needs no room: the slot is an empty base.
template <stateless_deleter D>
class deleter_slot<D> {
 protected:
  deleter_slot() = default;
  ~deleter_slot() = default;
};

template <class T, class D>
void destroy_with_stateless(retired_hook* hook) noexcept {
  D{}(static_cast<T*>(hook));
}
template <class T, class D>
void destroy_with_stored(retired_hook* hook) noexcept {
  T* node = static_cast<T*>(hook);
  auto* stored = std::launder(
      reinterpret_cast<D*>(static_cast<deleter_slot<D>*>(node)->bytes_));
  D d(std::move(*stored));  // out of the node first: d may free it
  stored->~D();
  d(node);
}

template <class T, class Deleter>
retired_hook* to_retired(T* node, Deleter&& d) {
  using D = std::decay_t<Deleter>;
  static_assert(std::is_invocable_v<D&, T*>, "reclaim: a deleter is called as d(node)");
  if constexpr (!retirable<T>()) {
    return nullptr;
  } else if constexpr (stateless_deleter<D>) {
    return tag_retired(node, &destroy_with_stateless<T, D>);
  } else {
    static_assert(std::is_base_of_v<deleter_slot<D>, T>,
                  "reclaim: a deleter with state is kept in the node it deletes: derive the node "
                  "from reclaim::deleter_slot<D> (no allocation per retire), or use a stateless "
                  "deleter or retire<&function>(node)");
    ::new (static_cast<void*>(static_cast<deleter_slot<D>*>(node)->bytes_))
        D(std::forward<Deleter>(d));
    return tag_retired(node, &destroy_with_stored<T, D>);
  }
}

}  // namespace reclaim::core

namespace reclaim {
// The two names a node type uses for a deleter object: derive the node from deleter_slot<D> to
// retire it with a D that has state; a stateless_deleter needs no slot.
using core::deleter_slot;
using core::stateless_deleter;
}  // namespace reclaim
