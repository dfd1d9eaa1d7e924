// SPDX-License-Identifier: MIT
// treiber_stack: Treiber's lock-free stack (Treiber, IBM research report RJ 5118, 1986).
//
// What it is. A singly linked list whose first node is the top. push links a new node in front of
// the top with one CAS on top_; pop reads the top and its successor and swings top_ from the one to
// the other with one CAS. The thread whose pop CAS succeeds owns the node: it alone moves the value
// out and retires the node. A node's `next` is written before the node is published and never
// again, and a node never returns to the stack (a push always makes a new one).
//
// Reclamation, and why it is safe for each family. pop dereferences the top to read its `next` and,
// after winning it, to move the value out. push dereferences nothing shared (it only loads top_ and
// CASes it), so it needs no protection and no read phase; its guard is there for create().
// - Hazard pointers: pop protects the top in slot 0; protect() re-reads top_ after the hazard is
//   visible, and a node leaves top_ before it is retired, so a confirmed top was not yet retired
//   when the hazard became visible. The same protection rules out ABA on the pop CAS: while the
//   hazard holds, the node cannot be freed and its address reused for a new top.
// - NBR: each pop attempt is a read phase from the root (top_) that only loads; the write phase
//   reserves the top, which is both the node dereferenced afterwards and the expected value of the
//   CAS (an unreserved top could be freed and its address pushed again: ABA). The successor is
//   the CAS's new value, never dereferenced: if the CAS succeeds the top never left, so neither did
//   the node below it.
// - Epoch schemes: the guard alone.
//
// Progress: lock-free. Values: T must be nothrow move constructible; each value is moved out
// exactly once, by the thread that won its node, and those left in the stack are destroyed with it.
#pragma once
#include <atomic>
#include <optional>
#include <string_view>
#include <utility>

#include "../concepts.hpp"
#include "../read_phase.hpp"
#include "detail/container_base.hpp"
#include "detail/lifetime_check.hpp"
#include "detail/pop_waiting.hpp"
#include "detail/value_slot.hpp"
#include "../core/sync.hpp"

namespace reclaim::ds {

template <class T, scheme Scheme>
class treiber_stack : public detail::container_base<Scheme>,
                      public detail::blocking_pops<treiber_stack<T, Scheme>, T> {
  using base = detail::container_base<Scheme>;
  using base::domain_, base::life_;

 public:
  // Its name in the lab and in messages, the type of its elements, the domain of Scheme it retires
  // into and the guard each operation holds, and the hazard slots it uses at once (the top).
  static constexpr std::string_view name = "treiber_stack";
  using value_type = T;
  using typename base::domain_type, typename base::guard_type;
  static constexpr unsigned slots_used = 1;

  // Its answer to each need a scheme may have (concepts.hpp): all of them.
  static constexpr support offers(needs n) {
    switch (n) {
      case needs_validated_reads: return {true};  // top_ is re-read; a popped node never returns
      case needs_restartable_read_phases: return {true};
      case needs_allocated_nodes: return {true};  // every node is created by push
      default: return {true};
    }
  }

  explicit treiber_stack(domain_type& domain = Scheme::default_domain()) : base(domain) {
    static_assert(has_slots<Scheme, treiber_stack>(),
                  "treiber_stack protects 1 node (the top), and this scheme's guard has no "
                  "hazard slot: use hp<reclaim::slots<1>> or more");
  }
  // Quiescent: destroys the values left and frees their nodes (popped nodes are the domain's).
  ~treiber_stack() {
    life_.before_destruction(domain_);
    for (node* n = top_.load(std::memory_order_relaxed); n;) {
      node* next = n->next;
      n->value.destroy();
      delete n;
      n = next;
    }
  }

  // Pushes value on top.
  void push(T value) { emplace(std::move(value)); }

  // Pushes a T constructed from args on top.
  template <class... Args>
  void emplace(Args&&... args) {
    detail::lifetime_check::operation op(life_);
    guard_type g(domain_);
    node* fresh = g.template create<node>(std::forward<Args>(args)...);
    node* top = top_.load(std::memory_order_relaxed);
    do {
      fresh->next = top;  // ours until the CAS publishes it
      // release: publishes the new node's value and next; pairs with the acquire in pop's
      // protect(). Every write to top_ is a CAS, so each one continues the release sequence.
      // seq_cst (the same instruction on x86-64): with pushed()'s fence_after_rmw(), the full
      // fence after which a push looks for waiting consumers (detail/pop_waiting.hpp).
    } while (!top_.compare_exchange_weak(top, fresh, std::memory_order_seq_cst,
                                         std::memory_order_relaxed));
    this->waiting_.pushed();
  }

  // Takes the value on top, or nothing if the stack is empty; its node is retired.
  std::optional<T> pop() {
    detail::lifetime_check::operation op(life_);
    guard_type g(domain_);
    for (;;) {
      RECLAIM_READ_PHASE(g);
      node* top = g.protect(top_, 0);  // acquire: pairs with the push that published it
      node* next = top ? top->next : nullptr;
      g.write_phase(top);  // nullptr too: ends the read phase before the result is built
      if (!top) return std::nullopt;
      // relaxed: the value we move out was published to us by the acquire load above.
      if (top_.compare_exchange_strong(top, next, std::memory_order_relaxed)) {
        std::optional<T> value = top->value.take();  // the node is ours alone
        g.retire(top);
        return value;
      }
    }
  }


  // A snapshot: whether the stack was empty at some moment during the call.
  bool empty() const { return top_.load(std::memory_order_acquire) == nullptr; }

 private:
  struct node : Scheme::node_base {
    template <class... Args>
    explicit node(Args&&... args) : value(std::in_place, std::forward<Args>(args)...) {}
    detail::value_slot<T> value;  // emptied by the pop that wins the node
    node* next = nullptr;         // set before the node is published, never after
  };
  static_assert(restart_safe<node*>);

  core::atomic<node*> top_{nullptr};
};

}  // namespace reclaim::ds
