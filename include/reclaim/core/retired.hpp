// Retired nodes: the intrusive link every reclaimable node carries, the per-thread list of retired
// nodes, and the domain's list of garbage left behind by exited threads.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstring>
#include <new>
#include <utility>

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

// The default deleter: `delete` for nodes made with `new T(...)`, poisoned first where enabled.
template <class T>
void destroy_node(retired_hook* hook) noexcept {
  T* node = static_cast<T*>(hook);
#if RECLAIM_POISON_FREED
  node->~T();
  std::memset(static_cast<void*>(node), poison_byte, sizeof(T));
  if constexpr (alignof(T) > __STDCPP_DEFAULT_NEW_ALIGNMENT__)
    ::operator delete(static_cast<void*>(node), std::align_val_t{alignof(T)});
  else
    ::operator delete(static_cast<void*>(node));
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

// Garbage that exited threads left behind, waiting for a live thread to adopt it. A Treiber stack of
// whole chains; take_all() swaps the head out, so there is no pop and no ABA.
class orphanage {
 public:
  orphanage() = default;
  orphanage(const orphanage&) = delete;
  orphanage& operator=(const orphanage&) = delete;
  ~orphanage() { take_all().destroy_all(); }

  void give(retired_list&& list) noexcept {
    if (list.empty()) return;
    retired_hook* head = list.head();
    retired_hook* tail = list.tail();
    list = retired_list{};
    tail->next_retired = head_.load(std::memory_order_relaxed);
    // release: publishes the chain's links; pairs with the acquire exchange in take_all().
    while (!head_.compare_exchange_weak(tail->next_retired, head, std::memory_order_release,
                                        std::memory_order_relaxed)) {
    }
  }

  bool empty() const noexcept { return head_.load(std::memory_order_relaxed) == nullptr; }

  retired_list take_all() noexcept {
    // acquire: pairs with the release CAS in give(), so the links we walk are the ones written.
    retired_hook* head = head_.exchange(nullptr, std::memory_order_acquire);
    retired_list list;
    std::size_t n = 0;
    retired_hook* tail = head;
    for (retired_hook* node = head; node; node = node->next_retired) {
      tail = node;
      ++n;
    }
    list.splice(head, tail, n);
    return list;
  }

 private:
  std::atomic<retired_hook*> head_{nullptr};
};

}  // namespace reclaim::core

namespace reclaim::core {

// Tags a node with how to destroy it and returns its link: the first step of every retire().
// Deleter is `void(T*)`; the default deletes a node made with `new T(...)`.
template <class T>
retired_hook* to_retired(T* node) noexcept {
  retired_hook* hook = node;
  hook->destroy = &destroy_node<T>;
  return hook;
}
template <auto Deleter, class T>
retired_hook* to_retired(T* node) noexcept {
  retired_hook* hook = node;
  hook->destroy = &destroy_with<T, Deleter>;
  return hook;
}

}  // namespace reclaim::core
