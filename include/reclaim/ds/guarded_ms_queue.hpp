// SPDX-License-Identifier: MIT
// guarded_ms_queue: the Michael-Scott lock-free FIFO queue (PODC 1996) written with paper 003's
// smart pointers (Stamp-it, Pöter and Träff, section 2): links are concurrent_ptrs, every node the
// queue dereferences is held by a guard_ptr, and each operation opens a region_guard.
//
// The algorithm, its linearization points and the memory-ordering argument are those of
// ds/ms_queue.hpp, the explicit-call form (a guard, protect(src, slot), retire, and the read and
// write phases that nbr needs). What differs here:
// - No slot indices: pop holds the head and its successor in two guard_ptrs, push the tail in one,
//   made once per operation from its region_guard and re-acquired on each retry.
// - The region_guard enters the operation once, and its guard_ptrs borrow from it: the operation
//   under the region schemes (an acquire is a plain load), one of the slots of the guard it opens
//   under hp; so the operation costs what the explicit guard's does.
// - The old dummy is retired by head.reclaim() on the guard_ptr that holds it.
// - nbr and nbr_plus cannot serve it: a guard_ptr outlives any read phase, and neutralization
//   restarts a read phase from the root (offers() says so, so the container's static_assert does
//   too). The lab runs both forms to measure what the interface costs (docs/results.md).
//
// Progress: lock-free. Values: T must be nothrow move constructible; each value is moved out
// exactly once, by the thread that won its node, and those left in the queue are destroyed with it.
#pragma once
#include <atomic>
#include <optional>
#include <string_view>
#include <utility>

#include "../concepts.hpp"
#include "../concurrent_ptr.hpp"
#include "detail/container_base.hpp"
#include "detail/lifetime_check.hpp"
#include "detail/value_slot.hpp"

namespace reclaim::ds {

template <class T, scheme Scheme>
class guarded_ms_queue : public detail::container_base<Scheme> {
  using base = detail::container_base<Scheme>;
  using base::domain_, base::life_;
  struct node;
  using link = concurrent_ptr<node>;
  using guard = guard_ptr<node, Scheme>;
  using pointer = typename link::pointer;

 public:
  // Its name in the lab and in messages, the type of its elements, and the domain of Scheme it
  // retires into.
  static constexpr std::string_view name = "guarded_ms_queue";
  using value_type = T;
  using typename base::domain_type;

  // Its answer to each need a scheme may have (concepts.hpp): all but restartable read phases.
  static constexpr support offers(needs n) {
    switch (n) {
      case needs_validated_reads: return {true};  // by re-reading head_ after acquiring its next
      case needs_restartable_read_phases:
        return {false, "written with guard_ptr, which neutralization cannot serve"};
      case needs_allocated_nodes: return {true};  // the dummy too is allocated (new node)
      default: return {true};
    }
  }

  explicit guarded_ms_queue(domain_type& domain = Scheme::default_domain()) : base(domain) {
    // Under nbr, guard_ptr's static_assert is the one error (it names the calls to use).
    static_assert(meets<Scheme, guarded_ms_queue>(needs_validated_reads) &&
                  meets<Scheme, guarded_ms_queue>(needs_allocated_nodes));
    node* dummy = new node;
    // relaxed: the queue reaches other threads through whatever shares it with them.
    head_.store(dummy, std::memory_order_relaxed);
    tail_.store(dummy, std::memory_order_relaxed);
  }
  // Quiescent: frees the dummy, destroys the values left and frees their nodes (popped nodes are
  // the domain's).
  ~guarded_ms_queue() {
    life_.before_destruction(domain_);
    node* dummy = head_.load(std::memory_order_relaxed).get();
    for (node* n = dummy->next.load(std::memory_order_relaxed).get(); n;) {
      node* next = n->next.load(std::memory_order_relaxed).get();
      n->value.destroy();
      delete n;
      n = next;
    }
    delete dummy;  // its storage is empty
  }

  // Appends value at the tail.
  void push(T value) { emplace(std::move(value)); }

  // Appends a T constructed from args, in a node made before the operation begins.
  template <class... Args>
  void emplace(Args&&... args) {
    node* fresh = domain_.template create<node>(std::in_place, std::forward<Args>(args)...);
    detail::lifetime_check::operation op(life_);
    region_guard<Scheme> region(domain_);
    guard tail(region);
    for (;;) {
      // acquire: pairs with the release CASes on tail_. Under hp the re-read of tail_ validates
      // it: a node tail_ points to is not retired.
      tail.acquire(tail_, std::memory_order_acquire);
      // acquire: pairs with the release link CAS below (of the push that appended next).
      pointer next = tail->next.load(std::memory_order_acquire);
      pointer expected = tail;
      if (next) {
        // tail_ lags: help it forward, then look again. release: publishes next (whose contents
        // we acquired above) to whoever reads it from tail_.
        tail_.compare_exchange_strong(expected, next, std::memory_order_release,
                                      std::memory_order_relaxed);
        continue;
      }
      // The linearization point. release: publishes the new node's value and next to whoever
      // reads it from this link.
      if (tail->next.compare_exchange_strong(next, fresh, std::memory_order_release,
                                             std::memory_order_relaxed)) {
        // release: publishes the new node to pushes that read it from tail_. Failure is fine:
        // someone helped already.
        tail_.compare_exchange_strong(expected, fresh, std::memory_order_release,
                                      std::memory_order_relaxed);
        return;
      }
    }
  }

  // Takes the value at the head, or nothing if the queue is empty; the node it leaves (the old
  // dummy) is retired.
  std::optional<T> pop() {
    detail::lifetime_check::operation op(life_);
    region_guard<Scheme> region(domain_);
    guard head(region), next(region);
    for (;;) {
      head.acquire(head_, std::memory_order_acquire);  // pairs with the release CAS on head_
      // acquire: pairs with the release link CAS in emplace(): the value in next is visible.
      next.acquire(head->next, std::memory_order_acquire);
      if constexpr (Scheme::guard::validates) {
        // next is safe only if it was not retired before its hazard was visible: the head was
        // still the head after that, so nobody had moved head_ past next.
        if (head_.load(std::memory_order_acquire) != head) continue;
      }
      if (!next) return std::nullopt;  // the dummy is the last node: empty
      // relaxed: only compared with head; never dereferenced here.
      pointer tail = tail_.load(std::memory_order_relaxed);
      if (tail == head) {
        // tail_ lags behind next: swing it before head_ may pass it. release: publishes next
        // (acquired above) to pushes that read it from tail_.
        tail_.compare_exchange_strong(tail, next, std::memory_order_release,
                                      std::memory_order_relaxed);
        continue;
      }
      // release: publishes the new dummy, whose contents we acquired above, to pops that read it
      // from head_. Winning makes next's value ours alone: nobody else reads it.
      pointer expected = head;
      if (head_.compare_exchange_strong(expected, next, std::memory_order_release,
                                        std::memory_order_relaxed)) {
        std::optional<T> value = next->value.take();  // next is held: not freed under us
        head.reclaim();                                // the old dummy
        return value;
      }
    }
  }

  // A snapshot: whether the queue was empty at some moment during the call.
  bool empty() {
    detail::lifetime_check::operation op(life_);
    guard head(domain_);
    head.acquire(head_, std::memory_order_acquire);
    return !head->next.load(std::memory_order_acquire);
  }

 private:
  struct node : Scheme::node_base {
    node() = default;  // a dummy: empty storage
    template <class... Args>
    explicit node(std::in_place_t, Args&&... args)
        : value(std::in_place, std::forward<Args>(args)...) {}
    detail::value_slot<T> value;  // holds a value until the pop that makes this node the dummy
    link next;
  };

  link head_;
  link tail_;
};

}  // namespace reclaim::ds
