// hm_list: the Harris-Michael lock-free list (Michael, SPAA 2002).
//
// A sorted list whose nodes are deleted in two steps: erase marks the node's next pointer (logical
// deletion), then unlinks it with a CAS on the predecessor. Searches help: a marked node met on
// the way is unlinked and retired by whoever unlinks it, and the search goes on from the same
// predecessor. A search restarts from the head only when the predecessor changed under it.
//
// Every read is validated by re-reading the predecessor's link (the algorithm does that for its own
// correctness), which is exactly what hazard pointers need: three slots, for the predecessor, the
// current node and its successor. Because searches resume from the predecessor after helping, its
// read phases do not restart from the root: NBR cannot protect it (see hm_list_restart).
#pragma once
#include <atomic>
#include <cstdint>
#include <limits>
#include <string_view>

#include "../concepts.hpp"
#include "../core/marked_ptr.hpp"

namespace reclaim::ds {

template <scheme Scheme>
class hm_list {
  struct node;
  using link = marked_ptr<node>;

 public:
  static constexpr std::string_view name = "hm_list";
  using key_type = std::int64_t;
  using domain_type = typename Scheme::domain;
  using guard_type = typename Scheme::guard;
  static constexpr key_type min_key = std::numeric_limits<key_type>::min();
  static constexpr key_type max_key = std::numeric_limits<key_type>::max();
  static constexpr unsigned slots_used = 3;

  static constexpr support offers(needs n) {
    switch (n) {
      case needs_restartable_read_phases:
        return {false,
                "searches resume from the predecessor after unlinking a marked node instead of "
                "restarting from the head (use hm_list_restart)"};
      default: return {true};
    }
  }

  explicit hm_list(domain_type& domain = Scheme::default_domain()) : domain_(domain) {
    static_assert(protects<Scheme, hm_list>);
    if constexpr (guard_type::validates) static_assert(guard_type::slot_count >= slots_used);
  }
  ~hm_list() {
    for (node* n = head_.load(std::memory_order_relaxed).get(); n;) {
      node* next = n->next.load(std::memory_order_relaxed).get();
      delete n;
      n = next;
    }
  }
  hm_list(const hm_list&) = delete;
  hm_list& operator=(const hm_list&) = delete;

  bool contains(key_type key) {
    guard_type g(domain_);
    return find(g, key).found;
  }

  bool insert(key_type key) {
    guard_type g(domain_);
    node* fresh = nullptr;
    for (;;) {
      position pos = find(g, key);
      if (pos.found) {
        delete fresh;  // never published
        return false;
      }
      if (!fresh) fresh = g.template create<node>(key);
      fresh->next.store(link(pos.curr), std::memory_order_relaxed);
      link expected(pos.curr);
      // release: publishes the new node's fields; pairs with the acquire in protect().
      if (pos.prev->compare_exchange_strong(expected, link(fresh), std::memory_order_release,
                                            std::memory_order_relaxed))
        return true;
    }
  }

  bool erase(key_type key) {
    guard_type g(domain_);
    for (;;) {
      position pos = find(g, key);
      if (!pos.found) return false;
      link expected(pos.next);
      // Logical deletion: mark curr's link. acq_rel: orders the mark after our reads of curr and
      // makes it visible to whoever unlinks curr.
      if (!pos.curr->next.compare_exchange_strong(expected, link(pos.next, 1),
                                                  std::memory_order_acq_rel,
                                                  std::memory_order_relaxed))
        continue;
      expected = link(pos.curr);
      if (pos.prev->compare_exchange_strong(expected, link(pos.next), std::memory_order_release,
                                            std::memory_order_relaxed))
        g.retire(pos.curr);
      else
        find(g, key);  // let a search unlink (and retire) it
      return true;
    }
  }

  // Quiescent traversals for validation: call only while no operation runs.
  std::size_t size() const { return fold(std::size_t{0}, [](std::size_t n, key_type) { return n + 1; }); }
  std::int64_t key_sum() const { return fold(std::int64_t{0}, [](std::int64_t s, key_type k) { return s + k; }); }
  // Keys strictly increasing and no marked node reachable.
  bool well_formed() const {
    bool first = true;
    key_type last = 0;
    for (node* n = head_.load(std::memory_order_acquire).get(); n;) {
      link next = n->next.load(std::memory_order_acquire);
      if ((!first && n->key <= last) || next.mark()) return false;
      first = false;
      last = n->key;
      n = next.get();
    }
    return true;
  }

 private:
  struct node : Scheme::node_base {
    explicit node(key_type k) : key(k) {}
    const key_type key;
    std::atomic<link> next{};
  };

  struct position {
    bool found;
    std::atomic<link>* prev;  // the link that points to curr
    node* curr;               // first node with key >= the key searched (or nullptr)
    node* next;
  };

  // Michael's Find: prev, curr and next are protected in rotating slots.
  position find(guard_type& g, key_type key) {
    unsigned prev_slot = 0, curr_slot = 1, next_slot = 2;
  try_again:
    std::atomic<link>* prev = &head_;
    node* curr = g.protect(*prev, curr_slot).get();
    for (;;) {
      if (!curr) return {false, prev, nullptr, nullptr};
      link next = g.protect(curr->next, next_slot);
      key_type ckey = curr->key;
      // curr is still reachable from prev, unmarked: what makes the reads above valid.
      if (prev->load(std::memory_order_acquire) != link(curr)) goto try_again;
      if (!next.mark()) {
        if (ckey >= key) return {ckey == key, prev, curr, next.get()};
        prev = &curr->next;
        // prev's node moves into the old curr slot, curr into the old next slot.
        unsigned freed_slot = prev_slot;
        prev_slot = curr_slot;
        curr_slot = next_slot;
        next_slot = freed_slot;
      } else {
        link expected(curr);
        if (!prev->compare_exchange_strong(expected, link(next.get()), std::memory_order_acq_rel,
                                           std::memory_order_relaxed))
          goto try_again;
        g.retire(curr);
        // next stays protected in next_slot and becomes curr: swap the two slots' roles.
        std::swap(curr_slot, next_slot);
      }
      curr = next.get();
    }
  }

  template <class T, class F>
  T fold(T init, F f) const {
    for (node* n = head_.load(std::memory_order_acquire).get(); n;
         n = n->next.load(std::memory_order_acquire).get())
      init = f(init, n->key);
    return init;
  }

  domain_type& domain_;
  std::atomic<link> head_{};
};

}  // namespace reclaim::ds
