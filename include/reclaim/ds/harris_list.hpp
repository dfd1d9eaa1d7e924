// SPDX-License-Identifier: MIT
// harris_list: Harris's lock-free sorted list (Harris, DISC 2001), in the read/write-phase form of
// paper 000 (NBR, Algorithm 3).
//
// What it is. A sorted singly linked list with head and tail sentinels. erase marks the node's next
// pointer (logical deletion) and then tries to unlink it with one CAS on the predecessor. A search
// walks through marked nodes without stopping; it returns the last unmarked node before the key
// (left), what left pointed to when read (left_next), and the first unmarked node at or after the
// key (right). When left_next != right, everything between them is a chain of marked nodes, which
// the operation unlinks with one CAS on left's link; on any failure it searches again from the head.
// The thread whose CAS unlinks a node (the chain CAS, or erase's own CAS) retires it, once: a marked
// node's link never changes again, so no other CAS can bypass it a second time.
//
// Phases (NBR). Each search is a read phase that starts at the head and keeps nothing from earlier
// phases; the write phase reserves left, left_next and right (at most three, as the paper says).
// The chain's other nodes are not reserved: after our CAS unlinked them nobody else can retire them,
// so they cannot be freed while we walk the chain to retire them. left_next must be reserved: if it
// were freed and its memory reused for a node inserted right after left, the chain CAS would succeed
// and unlink a live node (ABA).
//
// Reclamation. Epoch schemes and NBR protect it. Hazard pointers and eras cannot: a search reads
// pointers out of marked nodes, whose links never change, so re-reading the source cannot show
// that the node read is still reachable; its whole chain may already be unlinked and freed. The
// paper's Table 1 says "yes" for HP on HL01 because Michael's variant (hm_list) fixes exactly this
// by unlinking marked nodes one at a time; this container keeps Harris's search.
//
// Keys and values. `harris_list<Key, Scheme, Compare>` is a set, `harris_list_map<Key, Value,
// Scheme, Compare>` a map (detail/container_api.hpp). The sentinels hold no key: head and tail are
// link-only nodes inside the list object, and the search tests for the tail by identity (as it
// always did). A map's visit() calls f in a write phase that reserves the node it found.
//
// Progress: lock-free updates; contains() is a read-only search (it does not help unlink), so it is
// wait-free apart from the restarts NBR imposes. Differences from the paper: contains() does not
// unlink marked chains (Harris's Find does); erase's unlink CAS, when it fails, is followed by
// searches until the node is gone, as in the paper.
#pragma once
#include <atomic>
#include <functional>
#include <string_view>
#include <utility>

#include "../concepts.hpp"
#include "../read_phase.hpp"
#include "../core/marked_ptr.hpp"
#include "detail/lifetime_check.hpp"
#include "detail/lookup_api.hpp"
#include "../core/sync.hpp"

namespace reclaim::ds {

// White-box access for tests (tests/container_test.cpp); the library never defines it.
struct harris_list_test_peer;

// Harris's lock-free list, a set (Value = void) or a map ordered by Compare: used as harris_list
// and harris_list_map (below).
template <class Key, class Value, scheme Scheme, class Compare = std::less<Key>>
class basic_harris_list
    : public detail::lookup_api<basic_harris_list<Key, Value, Scheme, Compare>, Key, Value,
                                Scheme, Compare> {
  using api = detail::lookup_api<basic_harris_list, Key, Value, Scheme, Compare>;
  friend api;
  friend typename api::container;
  using api::domain_, api::life_, api::comp_;

 public:
  // Its name in the lab and in messages, the domain of Scheme it retires into and the guard each
  // operation holds, and the hazard slots it needs (none).
  static constexpr std::string_view name = api::is_map ? "harris_list_map" : "harris_list";
  using typename api::domain_type, typename api::guard_type;
  static constexpr unsigned slots_used = 0;  // no validating scheme can protect it (offers())

  // Its answer to each need a scheme may have (concepts.hpp): restartable read phases only.
  static constexpr support offers(needs n) {
    switch (n) {
      case needs_validated_reads:
        return {false,
                "searches read links out of marked nodes, which never change: re-reading one cannot "
                "prove the node it points to is still reachable (use hm_list)"};
      case needs_restartable_read_phases: return {true};
      case needs_allocated_nodes:
        return {false, "its head and tail sentinels are members of the list object"};
      default: return {true};
    }
  }

  explicit basic_harris_list(domain_type& domain = Scheme::default_domain(),
                             const Compare& comp = Compare())
      : api(domain, comp) {
    // offers()'s reason, repeated: a static_assert message must be a string literal.
    static_assert(meets<Scheme, basic_harris_list>(needs_validated_reads),
                  "harris_list and harris_list_map cannot serve a scheme that needs validated "
                  "reads (hp): searches read links out of marked nodes, which never change: "
                  "re-reading one cannot prove the node it points to is still reachable. Use "
                  "hm_list / hm_list_map (reclaim/ds/hm_list.hpp), which unlinks marked nodes one "
                  "at a time and validates every read");
  }
  ~basic_harris_list() {
    life_.before_destruction(domain_);
    for (link_node* n = first(); n != &tail_;) {
      link_node* next = n->next.load(std::memory_order_relaxed).get();
      delete as_node(n);
      n = next;
    }
  }

  // Removes key (and its value); returns whether it was present. The nodes it unlinks are retired.
  bool erase(const Key& key) {
    detail::lifetime_check::operation op(life_);
    guard_type g(domain_);
    for (;;) {
      RECLAIM_READ_PHASE(g);
      window w = search(g, key);
      g.write_phase(w.left, w.left_next, w.right);
      if (!settle(g, w)) continue;
      if (!holds(w.right, key)) return false;
      link right_next = w.right->next.load(std::memory_order_acquire);
      if (right_next.mark()) continue;  // erased by someone else since the search: look again
      // Logical deletion, the erase's linearization point. acq_rel: orders the mark after our
      // reads of right and makes it visible to whoever unlinks right.
      if (!w.right->next.compare_exchange_strong(right_next, link(right_next.get(), 1),
                                                 std::memory_order_acq_rel,
                                                 std::memory_order_relaxed))
        continue;
      link expected(w.right);
      // release: a search that reads the new link sees right_next's fields (pairs with the
      // acquire loads in search()).
      if (w.left->next.compare_exchange_strong(expected, link(right_next.get()),
                                               std::memory_order_release,
                                               std::memory_order_relaxed)) {
        g.retire(as_node(w.right));
        return this->erased();
      }
      break;  // someone changed left's link: searches unlink (and retire) our node
    }
    // Harris: search for the key until no marked chain lies before it, so that the node this erase
    // marked is unlinked before it returns.
    for (;;) {
      RECLAIM_READ_PHASE(g);
      window w = search(g, key);
      g.write_phase(w.left, w.left_next, w.right);
      if (settle(g, w)) return this->erased();
    }
  }

  // Quiescent (unsafe_size(), unsafe_for_each() and unsafe_key_sum() come from container_api): keys
  // strictly increasing, no marked node reachable, and the list ends at the tail.
  bool unsafe_well_formed() const {
    const node* last = nullptr;
    link_node* n = first();
    for (; n && n != &tail_;) {
      link next = n->next.load(std::memory_order_acquire);
      if ((last && !comp_(last->key, as_node(n)->key)) || next.mark()) return false;
      last = as_node(n);
      n = next.get();
    }
    return n == &tail_ && !head_.next.load(std::memory_order_acquire).mark();
  }

 private:
  friend struct harris_list_test_peer;

  struct link_node;
  using link = marked_ptr<link_node, 1>;
  // What every node has, the sentinels included.
  struct link_node : Scheme::node_base {
    explicit link_node(link_node* n) : next(link(n)) {}
    core::atomic<link> next;  // marked: this node is logically deleted, and the link is frozen
  };
  struct node : link_node, detail::element<Key, Value> {
    template <class... KV>
    explicit node(link_node* n, KV&&... kv)
        : link_node(n), detail::element<Key, Value>(std::forward<KV>(kv)...) {}
  };

  static node* as_node(link_node* n) noexcept { return static_cast<node*>(n); }
  static const node* as_node(const link_node* n) noexcept { return static_cast<const node*>(n); }
  // Whether right, where a search for key stopped, holds key.
  bool holds(const link_node* right, const Key& key) const {
    return right != &tail_ && !comp_(key, as_node(right)->key);
  }
  // lookup_api's hooks: the node holding key, found in the read phase g holds, or nullptr.
  [[gnu::always_inline]] link_node* lookup(guard_type& g, const Key& key) {
    link_node* found = search(g, key).right;
    return holds(found, key) ? found : nullptr;
  }
  static const auto& value_of(const link_node* n) noexcept { return as_node(n)->value; }
  link_node* first() const { return head_.next.load(std::memory_order_acquire).get(); }

  template <class K, class... V>
  bool emplace(K&& key, V&&... value) {
    detail::lifetime_check::operation op(life_);
    guard_type g(domain_);
    node* fresh = nullptr;  // set only in write phases, before the next restart point
    for (;;) {
      RECLAIM_READ_PHASE(g);
      // Once fresh exists it holds the key (perhaps moved from the caller's): search for it.
      const Key& wanted = fresh ? fresh->key : static_cast<const Key&>(key);
      window w = search(g, wanted);
      g.write_phase(w.left, w.left_next, w.right);
      if (!settle(g, w)) continue;
      if (holds(w.right, wanted)) {
        delete fresh;  // never published
        return false;
      }
      if (!fresh)
        fresh = g.template create<node>(w.right, std::forward<K>(key), std::forward<V>(value)...);
      fresh->next.store(link(w.right), std::memory_order_relaxed);
      link expected(w.right);
      // release: publishes the new node's fields; pairs with the acquire loads in search().
      if (w.left->next.compare_exchange_strong(expected, link(fresh), std::memory_order_release,
                                               std::memory_order_relaxed))
        return true;
    }
  }

  // What a search saw; every field is a plain pointer (trivially destructible, as the read phase
  // requires).
  struct window {
    link_node* left;       // the last unmarked node before the key (the head at least)
    link_node* left_next;  // left's link when it was read: right, or the first node of a marked
                           // chain
    link_node* right;      // the first unmarked node with a key >= the key searched, or the tail
  };
  static_assert(restart_safe<window>);

  // Harris's search, read-only: the read phase of every operation.
  // Keys are compared by reference: a read phase copies nothing.
  window search(guard_type& g, detail::search_key<Key> key) {
    window w{&head_, nullptr, nullptr};
    link_node* t = &head_;
    link t_next = g.protect(head_.next, 0);
    do {
      if (!t_next.mark()) {
        w.left = t;
        w.left_next = t_next.get();
      }
      t = t_next.get();
      if (t == &tail_) break;
      // acquire: pairs with the release CAS that linked t's successor (insert, or an unlink).
      t_next = g.protect(t->next, 0);
    } while (t_next.mark() || comp_(as_node(t)->key, key));
    w.right = t;
    return w;
  }

  // Write phase, on the reserved window: makes left and right adjacent by unlinking the marked
  // chain between them, if any, and retiring its nodes. Returns false if the operation must search
  // again: the chain CAS failed, or right has been marked since the search.
  bool settle(guard_type& g, const window& w) {
    if (w.left_next != w.right) {
      link expected(w.left_next);
      // acq_rel: the release publishes right to searches that read the new link; the acquire
      // orders our walk of the chain below after the CAS that made the chain ours.
      if (!w.left->next.compare_exchange_strong(expected, link(w.right), std::memory_order_acq_rel,
                                                std::memory_order_relaxed))
        return false;
      // Read each successor before retiring its node: a retire may free what it is given.
      for (link_node* n = w.left_next; n != w.right;) {
        link_node* next = n->next.load(std::memory_order_relaxed).get();  // frozen by its mark
        g.retire(as_node(n));
        n = next;
      }
    }
    return w.right == &tail_ || !w.right->next.load(std::memory_order_acquire).mark();
  }

  template <class F>
  void for_each_element(F f) const {
    for (link_node* n = first(); n != &tail_; n = n->next.load(std::memory_order_acquire).get())
      f(*as_node(n));
  }

  link_node tail_{nullptr};
  link_node head_{&tail_};
};

// A set of keys ordered by Compare.
template <class Key, scheme Scheme, class Compare = std::less<Key>>
using harris_list = basic_harris_list<Key, void, Scheme, Compare>;
// A map from keys ordered by Compare to values fixed at insertion.
template <class Key, class Value, scheme Scheme, class Compare = std::less<Key>>
using harris_list_map = basic_harris_list<Key, Value, Scheme, Compare>;

}  // namespace reclaim::ds
