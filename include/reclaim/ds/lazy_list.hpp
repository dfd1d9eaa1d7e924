// SPDX-License-Identifier: MIT
// lazy_list: the lazy list of Heller, Herlihy, Luchangco, Moir, Scherer and Shavit (OPODIS 2005).
//
// A sorted singly linked list with head and tail sentinels. Searches take no locks; insert and
// erase lock the predecessor and the current node, validate that both are unmarked and still
// adjacent, and then link or unlink. A node is marked (logically deleted) before it is unlinked,
// and its next pointer never changes after that (but under the hp family, below).
//
// With pointer schemes (guard::validates) a search protects each node and then checks that its
// predecessor is unmarked: an unmarked node is in the list, so the protected node was reachable
// when the protection was confirmed. If the predecessor is marked the search restarts from the
// head, as Dice et al. (paper 004) do; contains() is then lock-free rather than wait-free.
// Under the hp family, whose protect() re-reads the link it protects from, erase() instead points
// the removed node's next at the tail, which fails such a protection, and a search checks only
// its last predecessor's mark (search()). Epoch schemes skip the check and keep the original
// wait-free search.
//
// Phases (NBR, paper 000 section 5.2): the search is the read phase; the write phase reserves the
// predecessor and the current node before taking their locks. A map's visit() (and find(), which
// copies the value inside it) reserves the node it found before calling f.
//
// Keys and values. `lazy_list<Key, Scheme, Compare>` is a set, `lazy_list_map<Key, Value, Scheme,
// Compare>` a map, one class template (Value = void for the set; detail/container_api.hpp). The
// sentinels hold no key: head and tail are link-only nodes inside the list object, and a search
// stops at the tail by identity. One exception keeps the int64 set's search loop as tight as it
// was: for an integral key in a set ordered by std::less, the tail is a node holding the greatest
// key, which no key sorts after, so the loop compares keys only; the tail is then told apart only
// where a key is found equal, since the greatest key is a valid key too.
#pragma once
#include <atomic>
#include <concepts>
#include <functional>
#include <limits>
#include <string_view>
#include <type_traits>
#include <utility>

#include "../concepts.hpp"
#include "../read_phase.hpp"
#include "detail/container_api.hpp"
#include "detail/lifetime_check.hpp"
#include "detail/lookup_api.hpp"
#include "detail/spinlock.hpp"
#include "../core/sync.hpp"

namespace reclaim::ds {

// The lazy list of Heller et al. (optimistic, with a lock per node), a set (Value = void) or a map
// ordered by Compare: used as lazy_list and lazy_list_map (below).
template <class Key, class Value, scheme Scheme, class Compare = std::less<Key>>
class basic_lazy_list
    : public detail::lookup_api<basic_lazy_list<Key, Value, Scheme, Compare>, Key, Value,
                                Scheme, Compare> {
  using api = detail::lookup_api<basic_lazy_list, Key, Value, Scheme, Compare>;
  friend api;
  friend typename api::container;
  using api::domain_, api::life_, api::comp_;

 public:
  // Its name in the lab and in messages, the domain of Scheme it retires into and the guard each
  // operation holds, and the hazard slots it uses at once (the predecessor and the node).
  static constexpr std::string_view name = api::is_map ? "lazy_list_map" : "lazy_list";
  using typename api::domain_type, typename api::guard_type;
  static constexpr unsigned slots_used = 2;

  // Its answer to each need a scheme may have (concepts.hpp): all but allocated nodes.
  static constexpr support offers(needs n) {
    switch (n) {
      case needs_validated_reads: return {true};  // by restarting when the predecessor is marked
      case needs_restartable_read_phases: return {true};
      case needs_allocated_nodes:
        return {false,
                "its head and tail sentinels are members of the list object, and searches protect "
                "the tail like any node"};
      default: return {true};
    }
  }

  explicit basic_lazy_list(domain_type& domain = Scheme::default_domain(),
                           const Compare& comp = Compare())
      : api(domain, comp) {
    // offers()'s reason, repeated: a static_assert message must be a string literal.
    static_assert(meets<Scheme, basic_lazy_list>(needs_allocated_nodes),
                  "lazy_list and lazy_list_map cannot serve a scheme that needs allocated nodes "
                  "(lfrc, which counts references in a header in front of each node): its head and "
                  "tail sentinels are members of the list object, and searches protect the tail "
                  "like any node. Under lfrc use hm_list or hm_hashmap");
    static_assert(has_slots<Scheme, basic_lazy_list>(),
                  "lazy_list and lazy_list_map protect 2 nodes at once (the predecessor and the "
                  "node), and this scheme's guard has fewer hazard slots: use "
                  "hp<reclaim::slots<2>> or more");
  }
  ~basic_lazy_list() {
    life_.before_destruction(domain_);
    for (link_node* n = head_.next.load(std::memory_order_relaxed); n != &tail_;) {
      link_node* next = n->next.load(std::memory_order_relaxed);
      delete as_node(n);
      n = next;
    }
  }

  // Removes key (and its value) under the locks of the node and its predecessor; returns whether it
  // was present. The node it unlinks is retired.
  bool erase(const Key& key) {
    detail::lifetime_check::operation op(life_);
    guard_type g(domain_);
    for (;;) {
      RECLAIM_READ_PHASE(g);
      auto [pred, curr] = search(g, key);
      g.write_phase(pred, curr);
      {
        detail::ordered_lock_pair locks(pred->lock, curr->lock);
        if (!adjacent(pred, curr)) continue;
        if (!holds(curr, key)) return false;
        // Mark first: a search that reaches curr from here on sees it deleted.
        curr->marked.store(true, std::memory_order_release);
        pred->next.store(curr->next.load(std::memory_order_relaxed), std::memory_order_release);
        // A search standing on curr now reaches the tail and starts over (see search()). release:
        // pairs with the acquire re-read in protect(), so that a search that finds the tail here
        // also finds curr marked. (What orders this store before the unlink of curr's successor,
        // whose eraser locks pred or curr after us, is the release of our locks.)
        if constexpr (redirects_removed) curr->next.store(&tail_, std::memory_order_release);
      }
      g.retire(as_node(curr));  // as a node: its deleter destroys the key and value
      return this->erased();
    }
  }

  // Quiescent (unsafe_size(), unsafe_for_each() and unsafe_key_sum() come from container_api): keys
  // strictly increasing and no marked node reachable.
  bool unsafe_well_formed() const {
    const node* last = nullptr;
    for (link_node* n = first(); n != &tail_; n = n->next.load(std::memory_order_acquire)) {
      if ((last && !comp_(last->key, as_node(n)->key)) || n->marked.load(std::memory_order_relaxed))
        return false;
      last = as_node(n);
    }
    return true;
  }

 private:
  // What every node has, the sentinels included: the links and the lock.
  struct link_node : Scheme::node_base {
    explicit link_node(link_node* n) : next(n) {}
    core::atomic<link_node*> next;
    core::atomic<bool> marked{false};
    detail::spinlock lock;
  };
  struct node : link_node, detail::element<Key, Value> {
    template <class... KV>
    explicit node(link_node* n, KV&&... kv)
        : link_node(n), detail::element<Key, Value>(std::forward<KV>(kv)...) {}
  };

  // The tail holds the greatest key only for an integral set under std::less (see the top).
  static constexpr bool tail_holds_greatest_key =
      !api::is_map && std::integral<Key> &&
      (std::same_as<Compare, std::less<Key>> || std::same_as<Compare, std::less<>>);
  using tail_type = std::conditional_t<tail_holds_greatest_key, node, link_node>;
  static tail_type make_tail() {
    if constexpr (tail_holds_greatest_key)
      return tail_type(nullptr, std::numeric_limits<Key>::max());
    else
      return tail_type(nullptr);
  }

  static node* as_node(link_node* n) noexcept { return static_cast<node*>(n); }
  static const node* as_node(const link_node* n) noexcept { return static_cast<const node*>(n); }

  // Whether a search for key goes on past n.
  bool before(const link_node* n, detail::search_key<Key> key) const {
    if constexpr (!tail_holds_greatest_key)
      if (n == &tail_) return false;
    return comp_(as_node(n)->key, key);
  }
  // Whether curr, where a search for key stopped, holds key.
  bool holds(const link_node* curr, const Key& key) const {
    return curr != &tail_ && !comp_(key, as_node(curr)->key);
  }
  // lookup_api's hooks: the unmarked node holding key, found in the read phase g holds, or
  // nullptr.
  [[gnu::always_inline]] link_node* lookup(guard_type& g, const Key& key) {
    link_node* curr = search(g, key).second;
    return holds(curr, key) && !curr->marked.load(std::memory_order_acquire) ? curr : nullptr;
  }
  static const auto& value_of(const link_node* n) noexcept { return as_node(n)->value; }

  static bool adjacent(link_node* pred, link_node* curr) {
    return !pred->marked.load(std::memory_order_relaxed) &&
           !curr->marked.load(std::memory_order_relaxed) &&
           pred->next.load(std::memory_order_relaxed) == curr;
  }

  template <class K, class... V>
  bool emplace(K&& key, V&&... value) {
    detail::lifetime_check::operation op(life_);
    guard_type g(domain_);
    for (;;) {
      RECLAIM_READ_PHASE(g);
      auto [pred, curr] = search(g, key);
      g.write_phase(pred, curr);
      detail::ordered_lock_pair locks(pred->lock, curr->lock);
      if (!adjacent(pred, curr)) continue;
      if (holds(curr, key)) return false;
      // The key and value are copied (or moved) here, in the write phase, once: we return next.
      node* fresh = g.template create<node>(curr, std::forward<K>(key), std::forward<V>(value)...);
      // release: publishes the new node's fields; pairs with the acquire in protect().
      pred->next.store(fresh, std::memory_order_release);
      return true;
    }
  }

  // Where the guard's protect() re-reads its source (the hp family), erase() points a removed
  // node's next at the tail after unlinking it: a search standing on the node then either
  // protected its successor before that store (the re-read saw the old link, so the successor,
  // which cannot be unlinked before our locks are released, was still in the list once the
  // protection was visible) or reaches the tail, never freed; it checks its last predecessor's mark
  // once, at the end, rather than every predecessor's at every node. Other validating schemes
  // (eras) check each predecessor's mark: their protection holds whatever src held in the era.
  static constexpr bool redirects_removed = [] {
    if constexpr (requires { guard_type::rereads_source; })
      return guard_type::rereads_source;
    else
      return false;
  }();

  // Returns the last node with a key below `key` and its successor, both protected. Keys are
  // compared by reference: a read phase copies nothing.
  // The two slots alternate by writing the step twice, each naming its slot as a constant, rather
  // than by swapping slot indices: a protected node then costs what the scheme's protect costs.
  // Always inlined, so that the guard is the operation's local: out of line (GCC keeps it so when
  // three operations call it), the guard is reached through a reference and its block of slots is
  // re-loaded after every hazard store, which may alias it.
  [[gnu::always_inline]] std::pair<link_node*, link_node*> search(guard_type& g,
                                                                 detail::search_key<Key> key) {
    for (;;) {
      link_node* pred = &head_;
      link_node* curr = g.protect(pred->next, 1);
      for (;;) {
        if (!before(curr, key)) break;
        if (!step<0>(g, pred, curr)) break;
        if constexpr (guard_type::validates) {  // the other slot (no slots otherwise: one step)
          if (!before(curr, key)) break;
          if (!step<1>(g, pred, curr)) break;
        }
      }
      // A marked predecessor: curr may already be unlinked (or be the tail it was pointed at):
      // start over from the head.
      if constexpr (guard_type::validates)
        if (pred->marked.load(std::memory_order_acquire)) continue;
      return {pred, curr};
    }
  }
  // One step of a search: pred moves to curr (protected in the other slot) and curr to its
  // successor, protected in slot S. False where pred is marked (unless the search checks only the
  // last one, redirects_removed).
  template <unsigned S>
  [[gnu::always_inline]] static bool step(guard_type& g, link_node*& pred, link_node*& curr) {
    pred = curr;
    curr = g.protect(pred->next, S);
    if constexpr (guard_type::validates && !redirects_removed)
      return !pred->marked.load(std::memory_order_acquire);
    return true;
  }

  link_node* first() const { return head_.next.load(std::memory_order_acquire); }

  template <class F>
  void for_each_element(F f) const {
    for (link_node* n = first(); n != &tail_; n = n->next.load(std::memory_order_acquire))
      f(*as_node(n));
  }

  tail_type tail_ = make_tail();
  link_node head_{&tail_};
};

// A set of keys ordered by Compare.
template <class Key, scheme Scheme, class Compare = std::less<Key>>
using lazy_list = basic_lazy_list<Key, void, Scheme, Compare>;
// A map from keys ordered by Compare to values fixed at insertion.
template <class Key, class Value, scheme Scheme, class Compare = std::less<Key>>
using lazy_list_map = basic_lazy_list<Key, Value, Scheme, Compare>;

}  // namespace reclaim::ds
