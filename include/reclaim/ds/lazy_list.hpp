// lazy_list: the lazy list of Heller, Herlihy, Luchangco, Moir, Scherer and Shavit (OPODIS 2005).
//
// A sorted singly linked list with head and tail sentinels. Searches take no locks; insert and
// erase lock the predecessor and the current node, validate that both are unmarked and still
// adjacent, and then link or unlink. A node is marked (logically deleted) before it is unlinked,
// and its next pointer never changes after that.
//
// With pointer schemes (guard::validates) a search protects each node and then checks that its
// predecessor is unmarked: an unmarked node is in the list, so the protected node was reachable
// when the protection was confirmed. If the predecessor is marked the search restarts from the
// head, as Dice et al. (paper 004) do; contains() is then lock-free rather than wait-free.
// Epoch schemes skip that check and keep the original wait-free search.
//
// Phases (NBR, paper 000 section 5.2): the search is the read phase; the write phase reserves the
// predecessor and the current node before taking their locks.
#pragma once
#include <atomic>
#include <cstdint>
#include <limits>
#include <string_view>
#include <utility>

#include "../concepts.hpp"
#include "detail/spinlock.hpp"

namespace reclaim::ds {

template <scheme Scheme>
class lazy_list {
 public:
  static constexpr std::string_view name = "lazy_list";
  using key_type = std::int64_t;
  using domain_type = typename Scheme::domain;
  using guard_type = typename Scheme::guard;
  static constexpr key_type min_key = std::numeric_limits<key_type>::min() + 1;
  static constexpr key_type max_key = std::numeric_limits<key_type>::max() - 1;
  static constexpr unsigned slots_used = 2;

  static constexpr support offers(needs n) {
    switch (n) {
      case needs_validated_reads: return {true};  // by restarting when the predecessor is marked
      case needs_restartable_read_phases: return {true};
      default: return {true};
    }
  }

  explicit lazy_list(domain_type& domain = Scheme::default_domain()) : domain_(domain) {
    static_assert(protects<Scheme, lazy_list>);
    if constexpr (guard_type::validates) static_assert(guard_type::slot_count >= slots_used);
    tail_ = new node(std::numeric_limits<key_type>::max(), nullptr);
    head_ = new node(std::numeric_limits<key_type>::min(), tail_);
  }
  ~lazy_list() {
    for (node* n = head_; n;) {
      node* next = n->next.load(std::memory_order_relaxed);
      delete n;
      n = next;
    }
  }
  lazy_list(const lazy_list&) = delete;
  lazy_list& operator=(const lazy_list&) = delete;

  bool contains(key_type key) {
    guard_type g(domain_);
    RECLAIM_READ_PHASE(g);
    auto [pred, curr] = search(g, key);
    return curr->key == key && !curr->marked.load(std::memory_order_acquire);
  }

  bool insert(key_type key) {
    guard_type g(domain_);
    for (;;) {
      RECLAIM_READ_PHASE(g);
      auto [pred, curr] = search(g, key);
      g.write_phase(pred, curr);
      detail::ordered_lock_pair locks(pred->lock, curr->lock);
      if (!adjacent(pred, curr)) continue;
      if (curr->key == key) return false;
      node* fresh = g.template create<node>(key, curr);
      // release: publishes the new node's fields; pairs with the acquire in protect().
      pred->next.store(fresh, std::memory_order_release);
      return true;
    }
  }

  bool erase(key_type key) {
    guard_type g(domain_);
    for (;;) {
      RECLAIM_READ_PHASE(g);
      auto [pred, curr] = search(g, key);
      g.write_phase(pred, curr);
      {
        detail::ordered_lock_pair locks(pred->lock, curr->lock);
        if (!adjacent(pred, curr)) continue;
        if (curr->key != key) return false;
        // Mark first: a search that reaches curr from here on sees it deleted.
        curr->marked.store(true, std::memory_order_release);
        pred->next.store(curr->next.load(std::memory_order_relaxed), std::memory_order_release);
      }
      g.retire(curr);
      return true;
    }
  }

  // Quiescent traversals for validation: call only while no operation runs.
  std::size_t size() const { return fold(std::size_t{0}, [](std::size_t n, key_type) { return n + 1; }); }
  std::int64_t key_sum() const { return fold(std::int64_t{0}, [](std::int64_t s, key_type k) { return s + k; }); }
  // Keys strictly increasing and no marked node reachable.
  bool well_formed() const {
    key_type last = std::numeric_limits<key_type>::min();
    for (node* n = first(); n != tail_; n = n->next.load(std::memory_order_acquire)) {
      if (n->key <= last || n->marked.load(std::memory_order_relaxed)) return false;
      last = n->key;
    }
    return true;
  }

 private:
  struct node : Scheme::node_base {
    node(key_type k, node* n) : key(k), next(n) {}
    const key_type key;
    std::atomic<node*> next;
    std::atomic<bool> marked{false};
    detail::spinlock lock;
  };

  static bool adjacent(node* pred, node* curr) {
    return !pred->marked.load(std::memory_order_relaxed) &&
           !curr->marked.load(std::memory_order_relaxed) &&
           pred->next.load(std::memory_order_relaxed) == curr;
  }

  // Returns the last node with a key below `key` and its successor, both protected.
  std::pair<node*, node*> search(guard_type& g, key_type key) {
    unsigned pred_slot = 0, curr_slot = 1;
    for (;;) {
      node* pred = head_;
      node* curr = g.protect(pred->next, curr_slot);
      bool confirmed = true;
      while (curr->key < key) {
        std::swap(pred_slot, curr_slot);
        pred = curr;
        curr = g.protect(pred->next, curr_slot);
        if constexpr (guard_type::validates) {
          if (pred->marked.load(std::memory_order_acquire)) {
            confirmed = false;  // curr may already be unlinked: start over from the head
            break;
          }
        }
      }
      if (confirmed) return {pred, curr};
    }
  }

  node* first() const { return head_->next.load(std::memory_order_acquire); }

  template <class T, class F>
  T fold(T init, F f) const {
    for (node* n = first(); n != tail_; n = n->next.load(std::memory_order_acquire))
      init = f(init, n->key);
    return init;
  }

  domain_type& domain_;
  node* head_;
  node* tail_;
};

}  // namespace reclaim::ds
