// SPDX-License-Identifier: MIT
// rc_stack: a lock-free stack written with counted pointers (rc_ptr, atomic_rc_ptr, snapshot_ptr)
// instead of explicit protect and retire calls: Treiber's algorithm as Anderson, Blelloch and Wei
// write it over their atomic shared pointer (PLDI 2021).
//
// What it is. The top is a location (an atomic_rc_ptr); each node holds its value and a counted
// pointer to the node below, written before the node is published and never again. push makes a
// node whose `next` owns the current top and replaces the top with it if the top is still the one
// it read. pop reads the top through a snapshot (no count touched), copies the top's `next` (one
// increment) and replaces the top with it if the top is still the one it read; the one pop that
// wins a node moves its value out (readers of a node touch only `next`). A node leaves the stack
// when its pop wins and is destroyed when its last reference goes: the location's after a grace
// period of the scheme (a snapshot of it may still be read), a popped node's `next` when that node
// goes, and so on.
//
// Why it is safe. A snapshot keeps the top alive while it is read, so its `next` can be copied, and
// it rules out ABA: the node a pop expects cannot be freed and its address reused while the pop
// holds it, and a node never returns to the stack (push always makes a new one). Which schemes: all
// that atomic_rc_ptr serves (rc_ptr.hpp), through the pointer family of detail/rc_family.hpp; the
// lab runs the same code over std::atomic<std::shared_ptr> with a family of its own.
//
// Destruction without recursion. A popped node keeps its successor, so dropping one node can
// cascade down a chain as long as the stack was (the stack's own destructor drops the whole
// chain). The first node destructor on a thread drains that cascade in a loop: a node destroyed
// while it drains hands its successor to the loop instead of dropping it, so the thread's stack
// depth stays constant whatever the chain's length.
//
// Progress: lock-free. Costs per operation: push, one allocation, one increment (the new node's
// `next`) and one more while the new node is offered to the location; pop, one increment (the copy
// of `next`) and the deferred decrement of the node it takes off. Values: T must be nothrow move
// constructible (a value is moved out after its node has left the stack, with no way back); those
// left in the stack are destroyed with it.
#pragma once
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "detail/rc_family.hpp"

namespace reclaim::ds {

// The stack over a pointer family (detail/rc_family.hpp): rc_stack is the one over reclaim's.
template <class T, class Family>
class basic_rc_stack {
  static_assert(std::is_nothrow_move_constructible_v<T>,
                "rc_stack values must be nothrow move constructible: a pop moves its value out "
                "after the node has left the stack");
  struct node;
  using owner = typename Family::template owner<node>;

 public:
  // Its name in the lab and in messages, the type of its elements, and the domain its locations
  // protect and retire through.
  static constexpr std::string_view name = "rc_stack";
  using value_type = T;
  using domain_type = typename Family::domain_type;

  // An empty stack for `domain` (default: the family's default domain).
  explicit basic_rc_stack(domain_type& domain = Family::default_domain())
      : domain_(domain), top_(domain) {}
  basic_rc_stack(const basic_rc_stack&) = delete;
  basic_rc_stack& operator=(const basic_rc_stack&) = delete;
  // Quiescent: the location drops the top, and the nodes' destructors drain the chain below it.
  ~basic_rc_stack() = default;

  // Pushes value on top.
  void push(T value) { emplace(std::move(value)); }

  // Pushes a T constructed from args on top.
  template <class... Args>
  void emplace(Args&&... args) {
    owner fresh = Family::template make<node>(domain_, std::forward<Args>(args)...);
    for (;;) {
      auto top = Family::read(top_);
      fresh->next = Family::own(top);  // ours until published
      // replace() consumes what it is given, success or not: it gets a copy, and fresh keeps the
      // node for the next attempt.
      if (Family::replace(top_, top, fresh)) return;
    }
  }

  // Takes the value on top, or nothing if the stack is empty.
  std::optional<T> pop() {
    for (;;) {
      auto top = Family::read(top_);
      if (!top) return std::nullopt;
      if (Family::replace(top_, top, top->next)) {
        // The node has left the stack and we are the one that took it: its value is ours.
        std::optional<T> value(std::move(*top->value));
        top->value.reset();
        return value;
      }
    }
  }

  // A snapshot: whether the stack was empty at some moment during the call.
  bool empty() const { return !Family::read(top_); }

 private:
  struct node {
    template <class... Args>
    explicit node(Args&&... args) : value(std::in_place, std::forward<Args>(args)...) {}
    node(const node&) = delete;
    node& operator=(const node&) = delete;
    ~node() {
      // See "Destruction without recursion" above: inside a drain, hand the successor over.
      if (draining && !*draining) {
        *draining = std::move(next);
        return;
      }
      owner handed;
      owner* const outer = std::exchange(draining, &handed);
      for (owner n = std::move(next); n; n = std::move(handed)) n = owner();
      draining = outer;
    }

    std::optional<T> value;  // emptied by the pop that wins the node
    owner next;              // set before the node is published, never after
    // The slot of the drain running on this thread (nullptr when none); a destructor it causes
    // finds it empty and fills it, unless a value's destructor has started a drain of its own.
    static inline thread_local owner* draining = nullptr;
  };

  domain_type& domain_;
  typename Family::template location<node> top_;
};

// The lock-free stack over reclaim's counted pointers under Scheme.
template <class T, class Scheme = default_rc_scheme>
using rc_stack = basic_rc_stack<T, detail::rc_family<Scheme>>;

}  // namespace reclaim::ds
