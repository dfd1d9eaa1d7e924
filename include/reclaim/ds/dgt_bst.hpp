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
// Two sentinel leaves (keys max-1 and max) under a sentinel root keep every real leaf at depth two
// or more, so an erase always has a grandparent.
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
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "../concepts.hpp"
#include "detail/version_lock.hpp"

namespace reclaim::ds {

template <scheme Scheme>
class dgt_bst {
 public:
  static constexpr std::string_view name = "dgt_bst";
  using key_type = std::int64_t;
  using domain_type = typename Scheme::domain;
  using guard_type = typename Scheme::guard;
  static constexpr key_type min_key = std::numeric_limits<key_type>::min();
  static constexpr key_type max_key = std::numeric_limits<key_type>::max() - 2;  // below the sentinels
  static constexpr unsigned slots_used = 0;  // no validating scheme can protect it (offers())

  static constexpr support offers(needs n) {
    switch (n) {
      case needs_validated_reads:
        return {false,
                "removed nodes keep their child pointers, so re-reading the parent cannot validate "
                "a read"};
      case needs_restartable_read_phases: return {true};
      default: return {true};
    }
  }

  explicit dgt_bst(domain_type& domain = Scheme::default_domain()) : domain_(domain) {
    static_assert(protects<Scheme, dgt_bst>);
    root_ = new node(infinity2, new node(infinity1), new node(infinity2));
  }
  ~dgt_bst() {
    std::vector<node*> todo{root_};
    while (!todo.empty()) {
      node* n = todo.back();
      todo.pop_back();
      if (!n->is_leaf)
        for (auto& c : n->child) todo.push_back(c.load(std::memory_order_relaxed));
      delete n;
    }
  }
  dgt_bst(const dgt_bst&) = delete;
  dgt_bst& operator=(const dgt_bst&) = delete;

  bool contains(key_type key) {
    guard_type g(domain_);
    RECLAIM_READ_PHASE(g);
    return search(g, key).leaf->key == key;
  }

  bool insert(key_type key) {
    guard_type g(domain_);
    for (;;) {
      RECLAIM_READ_PHASE(g);
      path p = search(g, key);
      if (p.leaf->key == key) return false;
      g.write_phase(p.parent, p.leaf);
      detail::version_lock& edge = p.parent->lock[p.parent_dir];
      if (!edge.try_lock_at(p.parent_version)) continue;
      // The edge still leads to p.leaf: replace the leaf with a router over it and the new leaf.
      node* fresh = g.template create<node>(key);
      node* router = key < p.leaf->key ? g.template create<node>(p.leaf->key, fresh, p.leaf)
                                       : g.template create<node>(key, p.leaf, fresh);
      // release: publishes both new nodes; pairs with the acquire loads in search().
      p.parent->child[p.parent_dir].store(router, std::memory_order_release);
      edge.unlock();
      return true;
    }
  }

  bool erase(key_type key) {
    guard_type g(domain_);
    for (;;) {
      RECLAIM_READ_PHASE(g);
      path p = search(g, key);
      if (p.leaf->key != key) return false;
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
      g.retire(p.leaf);
      g.retire(p.parent);
      return true;
    }
  }

  // Quiescent traversals for validation: call only while no operation runs.
  std::size_t size() const {
    std::size_t n = 0;
    for_each_key([&](key_type) { ++n; });
    return n;
  }
  std::int64_t key_sum() const {
    std::int64_t s = 0;
    for_each_key([&](key_type k) { s += k; });
    return s;
  }
  // Every router has two children and no held lock; every key lies on the side its routers send
  // it to (left of a router: below its key; right: at or above it).
  bool well_formed() const {
    struct frame {
      const node* n;
      key_type low;   // keys here are >= low
      key_type high;  // ... and < high, unless unbounded
      bool unbounded;
    };
    std::vector<frame> todo{{root_, min_key, 0, true}};
    while (!todo.empty()) {
      frame f = todo.back();
      todo.pop_back();
      if (f.n->key < f.low || (!f.unbounded && f.n->key >= f.high)) return false;
      if (f.n->is_leaf) continue;
      node* l = f.n->child[left].load(std::memory_order_acquire);
      node* r = f.n->child[right].load(std::memory_order_acquire);
      if (!l || !r) return false;
      for (const auto& lock : f.n->lock)
        if (!detail::version_lock::is_free(lock.read())) return false;
      todo.push_back({l, f.low, f.n->key, false});
      todo.push_back({r, f.n->key, f.high, f.unbounded});
    }
    return true;
  }

  // The tree's shape, for tests and curious users (quiescent).
  struct tree_shape {
    std::size_t keys = 0;     // leaves that hold a key (the two sentinel leaves not counted)
    std::size_t routers = 0;  // internal nodes, the sentinel root included
    std::size_t height = 0;   // edges on the longest path from the root to a leaf
  };
  tree_shape shape() const {
    tree_shape s;
    std::vector<std::pair<const node*, std::size_t>> todo{{root_, 0}};
    while (!todo.empty()) {
      auto [n, depth] = todo.back();
      todo.pop_back();
      s.height = std::max(s.height, depth);
      if (n->is_leaf) {
        s.keys += n->key < infinity1;
        continue;
      }
      ++s.routers;
      for (const auto& c : n->child) todo.push_back({c.load(std::memory_order_acquire), depth + 1});
    }
    return s;
  }

 private:
  static constexpr key_type infinity1 = std::numeric_limits<key_type>::max() - 1;
  static constexpr key_type infinity2 = std::numeric_limits<key_type>::max();
  static constexpr unsigned left = 0, right = 1;

  struct node : Scheme::node_base {
    explicit node(key_type k) : key(k), is_leaf(true) {}
    node(key_type k, node* l, node* r) : key(k), is_leaf(false), child{l, r} {}
    const key_type key;
    const bool is_leaf;
    std::atomic<node*> child[2] = {};  // routers only
    detail::version_lock lock[2];      // lock[d] guards child[d]
  };

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

  // The read phase of every operation: from the root down to a leaf, without locks.
  path search(guard_type& g, key_type key) const {
    path p;
    node* curr = root_;
    do {
      p.grandparent = p.parent;
      p.grandparent_version = p.parent_version;
      p.grandparent_dir = p.parent_dir;
      p.parent = curr;
      p.parent_dir = key < curr->key ? left : right;
      // The version before the child: a lock at this version later proves the child unchanged.
      p.parent_version = curr->lock[p.parent_dir].read();
      // acquire: pairs with the release store that linked the child (insert or erase).
      curr = g.protect(curr->child[p.parent_dir], 0);
    } while (!curr->is_leaf);
    p.leaf = curr;
    return p;
  }

  template <class F>
  void for_each_key(F f) const {
    std::vector<const node*> todo{root_};
    while (!todo.empty()) {
      const node* n = todo.back();
      todo.pop_back();
      if (n->is_leaf) {
        if (n->key < infinity1) f(n->key);
      } else {
        for (const auto& c : n->child) todo.push_back(c.load(std::memory_order_acquire));
      }
    }
  }

  domain_type& domain_;
  node* root_;
};

}  // namespace reclaim::ds
