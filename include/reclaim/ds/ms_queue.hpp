// SPDX-License-Identifier: MIT
// ms_queue: the lock-free FIFO queue of Michael and Scott (PODC 1996), the queue that paper 003
// (Stamp-it, Pöter and Träff) measures its schemes on.
//
// What it is. A singly linked list from head_ to tail_ whose first node is a dummy: the values are
// in the nodes after it. push links a new node after the last one with a CAS on its `next` (the
// linearization point) and then swings tail_ to it; pop swings head_ from the dummy to its
// successor, which becomes the new dummy, and the thread whose head CAS succeeds owns the value
// stored in that successor: it alone moves it out (leaving the new dummy's storage empty) and
// retires the old dummy. tail_ may lag one node behind the last node: whoever sees it lag swings
// it forward before going on (helping), and pop swings it before moving head_ past it, so head_
// never passes tail_ and a node that tail_ points to is never retired. A node's `next` goes from
// nullptr to its successor once and never changes again.
//
// Reclamation, and why it is safe for each family.
// - Hazard pointers (two slots): push protects the tail (slot 0); protect() re-reads tail_, and a
//   node tail_ points to is not retired, so the tail is safe to dereference. pop protects the head
//   (slot 0, re-read by protect()) and then its successor (slot 1); re-reading a `next` proves
//   nothing, since it never changes, so pop re-reads head_: while the head is still the head its
//   successor has not been retired (only the pop that moves head_ past the successor retires it).
//   The successor must stay protected because, once our CAS has made it the dummy, another pop may
//   retire it while we are still moving its value out. Protected nodes cannot be reused, which
//   rules out ABA on every CAS (their expected values are the protected nodes or nullptr).
// - NBR: each attempt is a read phase from the root (tail_ or head_) that only loads; the write
//   phase reserves what it dereferences and what its CASes expect: the tail (push), the head and
//   its successor (pop). A CAS's new value that is not reserved (push's helping swing of tail_ to
//   the tail's successor) is never dereferenced: if the CAS succeeds the reserved node was still
//   in place, and so was what follows it. After helping, the operation starts a new read phase.
//   The value is moved out in the write phase, after the reservations.
// - Epoch schemes: the guard alone.
//
// Progress: lock-free. Values: T must be nothrow move constructible; each value is moved out
// exactly once, by the thread that won its node, and those left in the queue are destroyed with it.
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
class ms_queue : public detail::container_base<Scheme>,
                 public detail::blocking_pops<ms_queue<T, Scheme>, T> {
  using base = detail::container_base<Scheme>;
  using base::domain_, base::life_;

 public:
  // Its name in the lab and in messages, the type of its elements, the domain of Scheme it retires
  // into and the guard each operation holds, and the hazard slots it uses at once (head and next).
  static constexpr std::string_view name = "ms_queue";
  using value_type = T;
  using typename base::domain_type, typename base::guard_type;
  static constexpr unsigned slots_used = 2;

  // Its answer to each need a scheme may have (concepts.hpp): all of them.
  static constexpr support offers(needs n) {
    switch (n) {
      case needs_validated_reads: return {true};  // by re-reading head_ after protecting its next
      case needs_restartable_read_phases: return {true};
      case needs_allocated_nodes: return {true};  // the dummy too is allocated (new node)
      default: return {true};
    }
  }

  explicit ms_queue(domain_type& domain = Scheme::default_domain()) : base(domain) {
    static_assert(has_slots<Scheme, ms_queue>(),
                  "ms_queue protects 2 nodes at once (the head and its successor), and this "
                  "scheme's guard has fewer hazard slots: use hp<reclaim::slots<2>> or more");
    // Made without a guard: building a container registers no thread with the domain (under
    // qsbr a registered thread that then idles, such as a main thread that builds the queue and
    // waits for its workers, would hold every grace period). The first pop retires it as any node.
    node* dummy = new node;
    // relaxed: the queue reaches other threads through whatever shares it with them.
    head_.store(dummy, std::memory_order_relaxed);
    tail_.store(dummy, std::memory_order_relaxed);
  }
  // Quiescent: frees the dummy, destroys the values left and frees their nodes (popped nodes are
  // the domain's).
  ~ms_queue() {
    life_.before_destruction(domain_);
    node* dummy = head_.load(std::memory_order_relaxed);
    for (node* n = dummy->next.load(std::memory_order_relaxed); n;) {
      node* next = n->next.load(std::memory_order_relaxed);
      n->value.destroy();
      delete n;
      n = next;
    }
    delete dummy;  // its storage is empty
  }

  // Appends value at the tail.
  void push(T value) { emplace(std::move(value)); }

  // Appends a T constructed from args.
  template <class... Args>
  void emplace(Args&&... args) {
    detail::lifetime_check::operation op(life_);
    guard_type g(domain_);
    node* fresh = g.template create<node>(std::in_place, std::forward<Args>(args)...);
    for (;;) {
      RECLAIM_READ_PHASE(g);
      node* tail = g.protect(tail_, 0);  // acquire: pairs with the release CASes on tail_
      // acquire: pairs with the release link CAS below (of the push that appended next).
      node* next = tail->next.load(std::memory_order_acquire);
      g.write_phase(tail);
      if (next) {
        // tail_ lags: help it forward, then look again from the root. release: publishes next
        // (whose contents we acquired above) to whoever reads it from tail_.
        tail_.compare_exchange_strong(tail, next, std::memory_order_release,
                                      std::memory_order_relaxed);
        continue;
      }
      // The linearization point. release: publishes the new node's value and next to whoever
      // reads it from this link (pop's protect of the head's next, push's load above). seq_cst
      // (the same instruction on x86-64): with pushed()'s fence_after_rmw(), the full fence after
      // which a push looks for waiting consumers (detail/pop_waiting.hpp).
      if (tail->next.compare_exchange_strong(next, fresh, std::memory_order_seq_cst,
                                             std::memory_order_relaxed)) {
        this->waiting_.pushed();
        // release: publishes the new node to pushes that read it from tail_. Failure is fine:
        // someone helped already.
        tail_.compare_exchange_strong(tail, fresh, std::memory_order_release,
                                      std::memory_order_relaxed);
        return;
      }
    }
  }

  // Takes the value at the head, or nothing if the queue is empty; the node it leaves (the old
  // dummy) is retired.
  std::optional<T> pop() {
    detail::lifetime_check::operation op(life_);
    guard_type g(domain_);
    for (;;) {
      RECLAIM_READ_PHASE(g);
      node* head = g.protect(head_, 0);  // acquire: pairs with the release CAS on head_
      // acquire: pairs with the release link CAS in emplace(): the value in next is visible.
      node* next = g.protect(head->next, 1);
      if constexpr (guard_type::validates) {
        // next is safe only if it was not retired before its hazard was visible: the head was
        // still the head after that, so nobody had moved head_ past next.
        if (head_.load(std::memory_order_acquire) != head) continue;
      }
      // relaxed: only compared with head; never dereferenced here.
      node* tail = tail_.load(std::memory_order_relaxed);
      g.write_phase(head, next);
      if (!next) return std::nullopt;  // the dummy is the last node: empty
      if (head == tail) {
        // tail_ lags behind next: swing it before head_ may pass it. release: publishes next
        // (acquired above) to pushes that read it from tail_.
        tail_.compare_exchange_strong(tail, next, std::memory_order_release,
                                      std::memory_order_relaxed);
        continue;
      }
      // release: publishes the new dummy, whose contents we acquired above, to pops that read it
      // from head_. Winning makes next's value ours alone: nobody else reads it.
      if (head_.compare_exchange_strong(head, next, std::memory_order_release,
                                        std::memory_order_relaxed)) {
        std::optional<T> value = next->value.take();  // next is reserved: not freed under us
        g.retire(head);
        return value;
      }
    }
  }


  // A snapshot: whether the queue was empty at some moment during the call.
  bool empty() {
    detail::lifetime_check::operation op(life_);
    guard_type g(domain_);
    RECLAIM_READ_PHASE(g);
    node* head = g.protect(head_, 0);
    return head->next.load(std::memory_order_acquire) == nullptr;
  }

 private:
  struct node : Scheme::node_base {
    node() = default;  // a dummy: empty storage
    template <class... Args>
    explicit node(std::in_place_t, Args&&... args)
        : value(std::in_place, std::forward<Args>(args)...) {}
    detail::value_slot<T> value;  // holds a value until the pop that makes this node the dummy
    core::atomic<node*> next{nullptr};
  };
  static_assert(restart_safe<node*>);

  core::atomic<node*> head_{nullptr};
  core::atomic<node*> tail_{nullptr};
};

}  // namespace reclaim::ds
