// SPDX-License-Identifier: MIT
// dgt_bst: the external binary search tree of David, Guerraoui and Trigonakis (ASPLOS 2015; BST-TK
// in ASCYLIB), in the read/write-phase form of paper 000 (NBR).
//
// What it is. Keys live in leaves; internal nodes (routers) only direct searches: a key below a
// router's key goes left, any other right, and every router has two children. Each child edge of a
// router has a versioned try-lock (detail/version_lock.hpp). A search takes no locks: it remembers,
// for the last two routers it passed, the version of the edge it followed, read before the child.
// insert locks the parent's edge at that version and replaces the leaf with a new router over the
// old leaf and a new one. erase locks the grandparent's edge and both edges of the parent (the one
// to the leaf at its version), then links the leaf's sibling to the grandparent. A lock at an
// outdated version fails, and the operation searches again from the root. The removed parent keeps
// both edges locked forever, so every operation that found it on its path fails its lock and
// restarts. The removed leaf and its parent are retired by the eraser.
// Sentinels without keys keep every real leaf at depth two or more, so that an erase always has a
// grandparent: a sentinel root, which sends every search left (it has no right child), and a
// sentinel leaf that sorts before every key. The sentinel leaf is the tree's leftmost leaf forever
// (nothing sorts before it, and it is never erased), so a router is only ever made over two real
// leaves or over the sentinel leaf and a real key, and always takes a real key: the search loop
// compares keys only, and the sentinel leaf is told apart by identity once per operation.
// (ASCYLIB's tree puts two leaves with the largest keys on the right instead, which a key type
// without a greatest value, such as std::string, cannot have.)
//
// Keys and values. `dgt_bst<Key, Scheme, Compare>` is a set, `dgt_bst_map<Key, Value, Scheme,
// Compare>` a map (detail/container_api.hpp). Routers hold a copy of a key, made in the write phase
// of the insert that creates them; only leaves hold values. A map's visit() calls f in a write
// phase that reserves the leaf. An insert whose key copy or value construction throws changes
// nothing and leaves no lock held (the strong guarantee); erase and contains copy nothing.
//
// Phases (NBR). Each search is a read phase from the root; the write phase reserves the nodes it
// touches: parent and leaf for insert, grandparent, parent and leaf for erase. The sibling is only
// copied, never dereferenced.
//
// Reclamation. Epoch schemes and NBR protect it; hazard pointers and eras cannot: a removed router
// keeps its child pointers and nothing marks it, so re-reading the parent's pointer after publishing
// a protection cannot show that the child is still in the tree (paper 000, Table 1: "no marks,
// cannot validate HP").
//
// Progress: searches (contains) are wait-free apart from NBR's restarts; updates are lock-based and
// retry optimistically. The tree is not balanced. Differences from BST-TK: a router's two edges have
// separate lock words, so erase locks the parent's edges one after the other (reverting on failure)
// instead of with one 64-bit CAS, and the edge away from the leaf is locked at its current version
// (its child is read under the lock); versions are 31 bits instead of 16.
#pragma once
#include <algorithm>
#include <atomic>
#include <cassert>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

#include "../concepts.hpp"
#include "../read_phase.hpp"
#include "detail/container_api.hpp"
#include "detail/lifetime_check.hpp"
#include "detail/lookup_api.hpp"
#include "detail/version_lock.hpp"
#include "../core/sync.hpp"

namespace reclaim::ds {

// The external BST of David, Guerraoui and Trigonakis, a set (Value = void) or a map ordered by
// Compare: used as dgt_bst and dgt_bst_map (below).
template <class Key, class Value, scheme Scheme, class Compare = std::less<Key>>
class basic_dgt_bst
    : public detail::lookup_api<basic_dgt_bst<Key, Value, Scheme, Compare>, Key, Value,
                                Scheme, Compare> {
  using api = detail::lookup_api<basic_dgt_bst, Key, Value, Scheme, Compare>;
  friend api;
  friend typename api::container;
  using api::domain_, api::life_, api::comp_;

 public:
  // Its name in the lab and in messages, the domain of Scheme it retires into and the guard each
  // operation holds, and the hazard slots it needs (none).
  static constexpr std::string_view name = api::is_map ? "dgt_bst_map" : "dgt_bst";
  using typename api::domain_type, typename api::guard_type;
  static constexpr unsigned slots_used = 0;  // no validating scheme can protect it (offers())

  // Its answer to each need a scheme may have (concepts.hpp): restartable read phases only.
  static constexpr support offers(needs n) {
    switch (n) {
      case needs_validated_reads:
        return {false,
                "removed nodes keep their child pointers, so re-reading the parent cannot validate "
                "a read"};
      case needs_restartable_read_phases: return {true};
      case needs_allocated_nodes:
        return {false, "its sentinel root and leaf are members of the tree object"};
      default: return {true};
    }
  }

  explicit basic_dgt_bst(domain_type& domain = Scheme::default_domain(),
                         const Compare& comp = Compare())
      : api(domain, comp) {
    // offers()'s reason, repeated: a static_assert message must be a string literal.
    static_assert(meets<Scheme, basic_dgt_bst>(needs_validated_reads),
                  "dgt_bst and dgt_bst_map cannot serve a scheme that needs validated reads (hp): "
                  "removed nodes keep their child pointers, so re-reading the parent cannot "
                  "validate a read. No form of dgt_bst can; under hp use lazy_list, hm_list or "
                  "hm_hashmap, or keep dgt_bst under any other scheme (debra, nbr_plus, ...)");
  }
  ~basic_dgt_bst() {
    life_.before_destruction(domain_);
    std::vector<node*> todo{root_.child[left].load(std::memory_order_relaxed)};
    while (!todo.empty()) {
      node* n = todo.back();
      todo.pop_back();
      if (n == &sentinel_) continue;
      if (n->is_leaf) {
        delete as_leaf(n);
      } else {
        for (auto& c : n->child) todo.push_back(c.load(std::memory_order_relaxed));
        delete as_router(n);
      }
    }
  }

  // Removes key (and its value); returns whether it was present. The leaf and the router node it
  // unlinks are retired.
  bool erase(const Key& key) {
    detail::lifetime_check::operation op(life_);
    guard_type g(domain_);
    for (;;) {
      RECLAIM_READ_PHASE(g);
      path p = search(g, key);
      if (!holds(p.leaf, key)) return false;
      assert(p.grandparent);  // a real key's leaf lies at depth two or more
      g.write_phase(p.grandparent, p.parent, p.leaf);
      detail::version_lock& up = p.grandparent->lock[p.grandparent_dir];
      if (!up.try_lock_at(p.grandparent_version)) continue;
      detail::version_lock& down = p.parent->lock[p.parent_dir];
      if (!down.try_lock_at(p.parent_version)) {
        up.revert();
        continue;
      }
      const unsigned other = 1 - p.parent_dir;
      detail::version_lock& across = p.parent->lock[other];
      if (!across.try_lock()) {
        down.revert();
        up.revert();
        continue;
      }
      // Stable while we hold its edge; the lock's acquire made the last writer's store visible.
      node* sibling = p.parent->child[other].load(std::memory_order_relaxed);
      // release: a search that reads the sibling through the grandparent sees its fields (pairs
      // with the acquire loads in search()).
      p.grandparent->child[p.grandparent_dir].store(sibling, std::memory_order_release);
      up.unlock();
      // The parent's two edges stay locked: whoever still holds it on a path fails and restarts.
      // Retired as what they are, so that their deleters destroy their keys and values.
      g.retire(as_leaf(p.leaf));
      g.retire(as_router(p.parent));
      return this->erased();
    }
  }

  // Quiescent (unsafe_size(), unsafe_for_each() and unsafe_key_sum() come from container_api):
  // every router has two children and no held lock; every key lies on the side its routers send it
  // to (left of a router: below its key; right: at or above it), and the sentinel leaf is the
  // leftmost leaf.
  bool unsafe_well_formed() const {
    struct frame {
      const node* n;
      const Key* low;   // keys here are >= *low (nullptr: unbounded)
      const Key* high;  // ... and < *high (nullptr: unbounded)
    };
    const node* top = root_.child[left].load(std::memory_order_acquire);
    if (!top || root_.child[right].load(std::memory_order_acquire)) return false;
    std::vector<frame> todo{{top, nullptr, nullptr}};
    while (!todo.empty()) {
      frame f = todo.back();
      todo.pop_back();
      if (f.n == &sentinel_) {
        if (f.low) return false;  // something sorts before the sentinel leaf
        continue;
      }
      const Key& key = f.n->is_leaf ? as_leaf(f.n)->key : as_router(f.n)->key;
      if ((f.low && comp_(key, *f.low)) || (f.high && !comp_(key, *f.high))) return false;
      if (f.n->is_leaf) continue;
      node* l = f.n->child[left].load(std::memory_order_acquire);
      node* r = f.n->child[right].load(std::memory_order_acquire);
      if (!l || !r) return false;
      for (const auto& lock : f.n->lock)
        if (!detail::version_lock::is_free(lock.read())) return false;
      todo.push_back({l, f.low, &key});
      todo.push_back({r, &key, f.high});
    }
    return true;
  }

  // The tree's shape, for tests and curious users (quiescent).
  struct tree_shape {
    std::size_t keys = 0;     // leaves that hold a key (the sentinel leaf not counted)
    std::size_t routers = 0;  // internal nodes, the sentinel root included
    std::size_t height = 0;   // edges on the longest path from the root to a leaf
  };
  tree_shape unsafe_shape() const {
    tree_shape s;
    s.routers = 1;  // the root
    std::vector<std::pair<const node*, std::size_t>> todo{
        {root_.child[left].load(std::memory_order_acquire), 1}};
    while (!todo.empty()) {
      auto [n, depth] = todo.back();
      todo.pop_back();
      s.height = std::max(s.height, depth);
      if (n->is_leaf) {
        s.keys += n != &sentinel_;
        continue;
      }
      ++s.routers;
      for (const auto& c : n->child) todo.push_back({c.load(std::memory_order_acquire), depth + 1});
    }
    return s;
  }

 private:
  static constexpr unsigned left = 0, right = 1;

  // What every node has: the root and the sentinel leaf are only this. Leaves keep the (unused)
  // edges too, as in ASCYLIB, so that a set's leaf and router have one size.
  struct node : Scheme::node_base {
    explicit node(bool leaf, node* l = nullptr, node* r = nullptr) : is_leaf(leaf), child{l, r} {}
    const bool is_leaf;
    core::atomic<node*> child[2] = {};  // routers only
    detail::version_lock lock[2];      // lock[d] guards child[d]
  };
  struct router : node, detail::element<Key, void> {
    template <class K>
    router(K&& k, node* l, node* r)
        : node(false, l, r), detail::element<Key, void>(std::forward<K>(k)) {}
  };
  struct leaf : node, detail::element<Key, Value> {
    template <class... KV>
    explicit leaf(KV&&... kv) : node(true), detail::element<Key, Value>(std::forward<KV>(kv)...) {}
  };
  static router* as_router(node* n) noexcept { return static_cast<router*>(n); }
  static const router* as_router(const node* n) noexcept { return static_cast<const router*>(n); }
  static leaf* as_leaf(node* n) noexcept { return static_cast<leaf*>(n); }
  static const leaf* as_leaf(const node* n) noexcept { return static_cast<const leaf*>(n); }

  // Whether the leaf a search for key ended at holds key.
  bool holds(const node* l, const Key& key) const {
    return l != &sentinel_ && !comp_(key, as_leaf(l)->key) && !comp_(as_leaf(l)->key, key);
  }
  // lookup_api's hooks: the leaf holding key, found in the read phase g holds, or nullptr.
  [[gnu::always_inline]] node* lookup(guard_type& g, const Key& key) {
    node* found = search(g, key).leaf;
    return holds(found, key) ? found : nullptr;
  }
  static const auto& value_of(const node* n) noexcept { return as_leaf(n)->value; }

  template <class K, class... V>
  bool emplace(K&& key, V&&... value) {
    detail::lifetime_check::operation op(life_);
    guard_type g(domain_);
    for (;;) {
      RECLAIM_READ_PHASE(g);
      path p = search(g, key);
      if (holds(p.leaf, key)) return false;
      g.write_phase(p.parent, p.leaf);
      detail::version_lock& edge = p.parent->lock[p.parent_dir];
      if (!edge.try_lock_at(p.parent_version)) continue;
      // The edge still leads to p.leaf: replace the leaf with a router over it and the new leaf,
      // keyed by the larger of the two keys (the new one beside the sentinel leaf). The keys are
      // copied here, in the write phase, once: we return next. A copy (or the value's
      // construction) that throws leaves the tree as it was: the edge goes back to the version
      // we locked it at (nothing changed under it) and the leaf made so far, never published, is
      // deleted.
      leaf* fresh = nullptr;
      node* new_router;
      try {
        fresh = g.template create<leaf>(std::forward<K>(key), std::forward<V>(value)...);
        const bool fresh_first = p.leaf != &sentinel_ && comp_(fresh->key, as_leaf(p.leaf)->key);
        new_router = fresh_first ? g.template create<router>(as_leaf(p.leaf)->key, fresh, p.leaf)
                                 : g.template create<router>(fresh->key, p.leaf, fresh);
      } catch (...) {
        delete fresh;
        edge.revert();
        throw;
      }
      // release: publishes both new nodes; pairs with the acquire loads in search().
      p.parent->child[p.parent_dir].store(new_router, std::memory_order_release);
      edge.unlock();
      return true;
    }
  }

  // Where a search ended, with what erase and insert need to lock; plain values only (trivially
  // destructible, as the read phase requires).
  struct path {
    node* grandparent = nullptr;
    node* parent = nullptr;
    node* leaf = nullptr;
    detail::version_lock::version grandparent_version = 0;  // of the edge grandparent -> parent
    detail::version_lock::version parent_version = 0;       // of the edge parent -> leaf
    unsigned grandparent_dir = left;
    unsigned parent_dir = left;
  };
  static_assert(restart_safe<path>);

  // The read phase of every operation: from the root down to a leaf, without locks. Keys are
  // compared by reference: a read phase copies nothing.
  path search(guard_type& g, detail::search_key<Key> key) {
    path p;
    node* curr = &root_;
    unsigned dir = left;  // the root sends every key left
    for (;;) {
      p.grandparent = p.parent;
      p.grandparent_version = p.parent_version;
      p.grandparent_dir = p.parent_dir;
      p.parent = curr;
      p.parent_dir = dir;
      // The version before the child: a lock at this version later proves the child unchanged.
      p.parent_version = curr->lock[dir].read();
      // acquire: pairs with the release store that linked the child (insert or erase).
      curr = g.protect(curr->child[dir], 0);
      if (curr->is_leaf) break;
      dir = comp_(key, as_router(curr)->key) ? left : right;
    }
    p.leaf = curr;
    return p;
  }

  // In key order: the left subtree before the right one.
  template <class F>
  void for_each_element(F f) const {
    std::vector<const node*> todo{root_.child[left].load(std::memory_order_acquire)};
    while (!todo.empty()) {
      const node* n = todo.back();
      todo.pop_back();
      if (n->is_leaf) {
        if (n != &sentinel_) f(*as_leaf(n));
      } else {
        todo.push_back(n->child[right].load(std::memory_order_acquire));
        todo.push_back(n->child[left].load(std::memory_order_acquire));
      }
    }
  }

  node sentinel_{true};
  node root_{false, &sentinel_};
};

// A set of keys ordered by Compare.
template <class Key, scheme Scheme, class Compare = std::less<Key>>
using dgt_bst = basic_dgt_bst<Key, void, Scheme, Compare>;
// A map from keys ordered by Compare to values fixed at insertion.
template <class Key, class Value, scheme Scheme, class Compare = std::less<Key>>
using dgt_bst_map = basic_dgt_bst<Key, Value, Scheme, Compare>;

}  // namespace reclaim::ds
