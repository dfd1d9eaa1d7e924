// SPDX-License-Identifier: MIT
// nm_bst: the lock-free external binary search tree of Natarajan and Mittal (PPoPP 2014), made
// safe for hazard pointers by validating the edge into the "dangerous zone" (Arovi and Nikolaev,
// SCOT, 2025).
//
// What it is. Keys live in leaves; an internal node (router) sends keys below its key left and the
// others right, and has two children. The algorithm marks edges, not nodes: a delete flags the edge
// to its leaf (one CAS: the key is being deleted), then tags the edge to the leaf's sibling (so
// that nothing changes below the parent) and swings the edge from the ancestor (the last node above
// the parent whose edge on the path is not tagged) to the sibling, which removes in one CAS the
// whole path between them: the successor (the ancestor's old child) down to the parent, and every
// flagged leaf hanging from it (other deletes' leaves whose parents lay on the same path). The
// thread whose CAS removed them retires them all, reading each node's children before retiring it.
// A flagged or tagged edge never changes again. A search (seek) records the ancestor, the
// successor, the parent and the leaf; an insert replaces the leaf by a new router over it and the
// new leaf with one CAS on the parent's edge, which fails if the edge is marked; an operation whose
// CAS failed on a marked edge helps the delete that marked it (the cleanup above) before it
// searches again. Sentinels without keys (three infinities, inf0 < inf1 < inf2, above every key)
// keep every real leaf at depth two or more: the root (inf2) and its left child (inf1) are never
// removed. A router made next to the inf0 leaf takes inf0 as its key (nodes carry a rank: 0 for a
// real key, 1-3 for the infinities), so that no key type needs a largest value.
// A delete takes effect when its leaf leaves the tree (whoever's CAS that is): until then the key
// is found by lookups and refused by inserts, and a second delete of it helps and then finds
// nothing.
//
// Keys and values. `nm_bst<Key, Scheme, Compare>` is a set, `nm_bst_map<Key, Value, Scheme,
// Compare>` a map (detail/container_api.hpp); only leaves hold values. Routers copy keys, and each
// insert attempt copies the key and the value into its new nodes (an attempt may fail).
//
// Phases (NBR). Each seek is a read phase from the root; the write phase reserves the ancestor, the
// successor, the parent and the leaf (the CASes touch or expect only these, and the kept sibling is
// only copied); the nodes the cleanup retires between the successor and the parent were removed by
// this thread's CAS, so no one else retires them and they are read safely before their retire.
//
// Reclamation, and why hazard pointers are safe here (SCOT's argument, in this tree's terms).
// Epoch schemes and NBR protect the tree as it is. Hazard pointers and eras need every read to be
// validated, which the plain algorithm cannot give: removed nodes keep their edges, and a seek
// walks through chains of nodes being removed (paper 000's Table 1 says "No"). Two facts make it
// possible:
//   (1) a removed router has both edges marked (the parent of a deleted leaf: a flagged and a
//       tagged edge; a node above it on the removed path: a tagged edge down the path and a
//       flagged one to its own leaf), and marks are permanent; so a node with an unmarked edge is
//       in the tree;
//   (2) marked edges never change, and a seek crosses unmarked edges everywhere but in the
//       "dangerous zone" below the successor, whose edges down to the parent are all tagged.
// So a child read through an unmarked edge is validated as in any list: hazard published, the edge
// re-read unchanged (still unmarked), hence its node was in the tree and the child reachable. A
// child read through a marked edge is validated at the zone's entry: after its hazard is published
// the ancestor's edge must still lead, unmarked, to the successor (which the seek keeps protected,
// so that an equal pointer is the same node); then the ancestor was in the tree, the successor
// reachable from it, and the child reachable from the successor through frozen edges: none of them
// was retired when the hazard became visible. If the check fails the seek starts again from the
// root. A seek holds four hazards (ancestor, successor, leaf, and the child being read; the parent
// takes the child's slot back after each step, since in the zone it is not needed again, and
// outside it is the successor), so hp<> with its default four slots serves it. Epoch schemes skip
// the check.
//
// Progress: lock-free; lookups are wait-free apart from the restarts of validation and NBR.
// Differences from the paper: the seek re-starts when the zone's entry edge moved (hazard pointers
// only); the inf0 router and the rank; deletes re-search by key (a pointer to their own leaf may
// dangle once someone else removed it).
#pragma once
#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

#include "../concepts.hpp"
#include "../read_phase.hpp"
#include "../core/marked_ptr.hpp"
#include "detail/lifetime_check.hpp"
#include "detail/lookup_api.hpp"
#include "../core/sync.hpp"

namespace reclaim::ds {

struct nm_bst_test_peer;

// The lock-free external BST of Natarajan and Mittal, a set (Value = void) or a map ordered by
// Compare: used as nm_bst and nm_bst_map (below).
template <class Key, class Value, scheme Scheme, class Compare = std::less<Key>>
class basic_nm_bst
    : public detail::lookup_api<basic_nm_bst<Key, Value, Scheme, Compare>, Key, Value,
                                Scheme, Compare> {
  using api = detail::lookup_api<basic_nm_bst, Key, Value, Scheme, Compare>;
  friend api;
  friend typename api::container;
  using api::domain_, api::life_, api::comp_;
  friend struct nm_bst_test_peer;

 public:
  // Its name in the lab and in messages, the domain of Scheme it retires into and the guard each
  // operation holds.
  static constexpr std::string_view name = api::is_map ? "nm_bst_map" : "nm_bst";
  using typename api::domain_type, typename api::guard_type;
  // Ancestor, successor, leaf, and the child being read (see the header).
  static constexpr unsigned slots_used = 4;

  // Its answer to each need a scheme may have (concepts.hpp): all but allocated nodes.
  static constexpr support offers(needs n) {
    switch (n) {
      case needs_validated_reads: return {true};          // the zone's entry edge (header)
      case needs_restartable_read_phases: return {true};  // every seek starts at the root
      case needs_allocated_nodes:
        return {false,
                "its sentinel routers and leaves are members of the tree object, not nodes "
                "allocated on their own with a count in front of them"};
      default: return {true};
    }
  }

  explicit basic_nm_bst(domain_type& domain = Scheme::default_domain(),
                        const Compare& comp = Compare())
      : api(domain, comp) {
    // offers()'s reason, repeated: a static_assert message must be a string literal.
    static_assert(meets<Scheme, basic_nm_bst>(needs_allocated_nodes),
                  "nm_bst and nm_bst_map cannot serve a scheme that needs allocated nodes (lfrc, "
                  "which counts references in a header in front of each node): its sentinel "
                  "routers and leaves are members of the tree object. Under lfrc use hm_hashmap");
    static_assert(has_slots<Scheme, basic_nm_bst>(),
                  "nm_bst and nm_bst_map protect 4 nodes at once (ancestor, successor, leaf and "
                  "the child being read), and this scheme's guard has fewer hazard slots: use "
                  "hp<reclaim::slots<4>> or more");
  }
  ~basic_nm_bst() {
    life_.before_destruction(domain_);
    std::vector<node*> todo{inner_.child[left].load(std::memory_order_relaxed).get()};
    while (!todo.empty()) {
      node* n = todo.back();
      todo.pop_back();
      if (n->rank && n->is_leaf) continue;  // a sentinel leaf: a member
      if (!n->is_leaf)
        for (auto& c : n->child) todo.push_back(c.load(std::memory_order_relaxed).get());
      destroy(n);
    }
  }

  // Removes key (and its value): flags the edge to its leaf, then cuts the leaf and its parent out
  // of the tree (or finds that another operation's cleanup did); what is cut out is retired.
  // Returns whether it was present.
  bool erase(const Key& key) {
    detail::lifetime_check::operation op(life_);
    guard_type g(domain_);
    for (;;) {  // injection: flag the edge to the leaf
      RECLAIM_READ_PHASE(g);
      const seek_record r = seek(g, key);
      if (!holds(r.leaf, key)) return false;
      g.write_phase(r.ancestor, r.successor, r.parent, r.leaf);
      link expected(r.leaf);
      // acq_rel: the release orders our reads before the flag; the acquire, the cleanup after it.
      if (edge_to(r.parent, key).compare_exchange_strong(expected, link(r.leaf, flag),
                                                         std::memory_order_acq_rel,
                                                         std::memory_order_acquire)) {
        if (cleanup(g, key, r)) return this->erased();
        break;
      }
      if (expected.get() == r.leaf && expected.mark()) cleanup(g, key, r);  // help, then retry
    }
    for (;;) {  // cleanup: our leaf is flagged and stays in the tree until someone removes it
      RECLAIM_READ_PHASE(g);
      const seek_record r = seek(g, key);
      // A leaf with our key under a flagged edge is ours, or (if ours went and the key came back)
      // another delete's: helping it is harmless. Anything else: ours is gone.
      if (!holds(r.leaf, key) || !(r.leaf_edge.mark() & flag)) return this->erased();
      g.write_phase(r.ancestor, r.successor, r.parent, r.leaf);
      if (cleanup(g, key, r)) return this->erased();
    }
  }

  // Quiescent (unsafe_size(), unsafe_for_each() and unsafe_key_sum() come from container_api): no
  // marked edge, every router has two children, every key lies on the side its routers send it to,
  // and the sentinels are where they belong (the inf0 leaf the rightmost leaf below the inf1
  // router).
  bool unsafe_well_formed() const {
    struct frame {
      const node* n;
      const Key* low;   // keys here are >= *low (nullptr: unbounded)
      const Key* high;  // ... and < *high (nullptr: unbounded)
    };
    if (root_.child[left].load(std::memory_order_acquire).get() != &inner_ ||
        root_.child[right].load(std::memory_order_acquire).get() != &inf2_ ||
        inner_.child[right].load(std::memory_order_acquire).get() != &inf1_ ||
        root_.child[left].load(std::memory_order_acquire).mark() ||
        inner_.child[right].load(std::memory_order_acquire).mark())
      return false;
    std::size_t inf0_seen = 0;
    std::vector<frame> todo{{inner_.child[left].load(std::memory_order_acquire).get(), nullptr,
                             nullptr}};
    while (!todo.empty()) {
      const frame f = todo.back();
      todo.pop_back();
      const node* n = f.n;
      if (!n) return false;
      if (n->is_leaf) {
        if (n->rank) {
          inf0_seen += n == &inf0_;
          if (n != &inf0_ || f.high) return false;  // inf0 sorts after every key
          continue;
        }
        if ((f.low && comp_(key_of(n), *f.low)) || (f.high && !comp_(key_of(n), *f.high)))
          return false;
        continue;
      }
      const link l = n->child[left].load(std::memory_order_acquire);
      const link r = n->child[right].load(std::memory_order_acquire);
      if (l.mark() || r.mark() || !l || !r) return false;
      if (n->rank) {  // an inf0 router: every key left, the inf0 leaf right
        if (n->rank != inf0_.rank || r.get() != &inf0_ || f.high) return false;
        ++inf0_seen;
        todo.push_back({l.get(), f.low, nullptr});
        continue;
      }
      const Key& k = key_of(n);
      if ((f.low && comp_(k, *f.low)) || (f.high && !comp_(k, *f.high))) return false;
      todo.push_back({l.get(), f.low, &k});
      todo.push_back({r.get(), &k, f.high});
    }
    return inf0_seen == 1;
  }

  // The tree's shape, for tests and curious users (quiescent).
  struct tree_shape {
    std::size_t keys = 0;     // leaves that hold a key
    std::size_t routers = 0;  // internal nodes below the two sentinel routers
    std::size_t height = 0;   // edges on the longest path from the root to a leaf
  };
  tree_shape unsafe_shape() const {
    tree_shape s;
    std::vector<std::pair<const node*, std::size_t>> todo{
        {inner_.child[left].load(std::memory_order_acquire).get(), 2}};
    while (!todo.empty()) {
      auto [n, depth] = todo.back();
      todo.pop_back();
      s.height = std::max(s.height, depth);
      if (n->is_leaf) {
        s.keys += n->rank == 0;
        continue;
      }
      ++s.routers;
      for (const auto& c : n->child)
        todo.push_back({c.load(std::memory_order_acquire).get(), depth + 1});
    }
    return s;
  }

 private:
  static constexpr unsigned left = 0, right = 1;
  struct node;
  // An edge: bit 0 flags the edge to a leaf being deleted, bit 1 tags an edge that must not change.
  using link = marked_ptr<node, 2>;
  static constexpr std::uintptr_t flag = 1, tag = 2;

  // What every node has; the sentinels are only this (rank 1, 2, 3: inf0, inf1, inf2), as are the
  // routers made next to the inf0 leaf (rank 1). Leaves keep the unused edges, so that a set's leaf
  // and router have one size.
  struct node : Scheme::node_base {
    node(std::uint8_t r, bool leaf, node* l = nullptr, node* rt = nullptr) noexcept
        : rank(r), is_leaf(leaf), child{link(l), link(rt)} {}
    const std::uint8_t rank;  // 0: a real key
    const bool is_leaf;
    core::atomic<link> child[2];
  };
  struct router : node, detail::element<Key, void> {
    template <class K>
    router(K&& k, node* l, node* r)
        : node(0, false, l, r), detail::element<Key, void>(std::forward<K>(k)) {}
  };
  struct leaf : node, detail::element<Key, Value> {
    template <class... KV>
    explicit leaf(KV&&... kv)
        : node(0, true), detail::element<Key, Value>(std::forward<KV>(kv)...) {}
  };
  static const router* as_router(const node* n) noexcept { return static_cast<const router*>(n); }
  static leaf* as_leaf(node* n) noexcept { return static_cast<leaf*>(n); }
  static const leaf* as_leaf(const node* n) noexcept { return static_cast<const leaf*>(n); }
  static const Key& key_of(const node* n) noexcept {
    return n->is_leaf ? as_leaf(n)->key : as_router(n)->key;
  }

  // Deletes or retires a node as its most derived type, whose deleter destroys its key and value.
  static void destroy(node* n) {
    if (n->rank)
      delete n;
    else if (n->is_leaf)
      delete as_leaf(n);
    else
      delete static_cast<router*>(n);
  }
  static void retire(guard_type& g, node* n) {
    if (n->rank)
      g.retire(n);
    else if (n->is_leaf)
      g.retire(as_leaf(n));
    else
      g.retire(static_cast<router*>(n));
  }

  // The direction a search for key takes at router n: every key is below an infinity.
  unsigned dir(const node* n, detail::search_key<Key> key) const {
    return n->rank || comp_(key, as_router(n)->key) ? left : right;
  }
  core::atomic<link>& edge_to(node* n, detail::search_key<Key> key) const {
    return n->child[dir(n, key)];
  }
  bool holds(const node* l, const Key& key) const {
    return l->rank == 0 && !comp_(key, as_leaf(l)->key) && !comp_(as_leaf(l)->key, key);
  }
  // lookup_api's hooks: the leaf holding key, found in the read phase g holds, or nullptr.
  [[gnu::always_inline]] node* lookup(guard_type& g, const Key& key) {
    node* found = seek(g, key).leaf;
    return holds(found, key) ? found : nullptr;
  }
  static const auto& value_of(const node* n) noexcept { return as_leaf(n)->value; }

  // What a seek found: plain values only (trivially destructible, as the read phase requires).
  struct seek_record {
    node* ancestor;   // the last node whose edge on the path is not tagged ...
    node* successor;  // ... and its child there
    node* parent;
    node* leaf;
    link leaf_edge;   // the parent's edge to the leaf, as read
  };
  static_assert(restart_safe<seek_record>);

  // The first of the four slots that none of a, b, c holds.
  static constexpr unsigned spare_slot(unsigned a, unsigned b, unsigned c) noexcept {
    unsigned s = 0;
    while (s == a || s == b || s == c) ++s;
    return s;
  }

  // The read phase of every operation, from the root. Under validating schemes each child is
  // protected and validated as the header explains; the slots of the ancestor, the successor, the
  // parent and the leaf are tracked so that the child's slot is always a free one.
  seek_record seek(guard_type& g, detail::search_key<Key> key) {
    for (;;) {  // again from the root when a validation fails
      // The root and its left child are members, never removed: they need no protection.
      seek_record r{&root_, &inner_, &inner_, nullptr, {}};
      unsigned sa = 0, ss = 1, sp = 1, sl = 2;
      // acquire (protect, all of them): pairs with the release CASes that linked the child.
      r.leaf_edge = g.protect(inner_.child[left], sl);
      r.leaf = r.leaf_edge.get();
      while (!r.leaf->is_leaf) {
        if (!(r.leaf_edge.mark() & tag)) {  // the parent's edge is not tagged: a new zone entry
          r.ancestor = r.parent;
          sa = sp;
          r.successor = r.leaf;
          ss = sl;
        }
        // The parent is needed after this step only as the ancestor (then sa holds it).
        const unsigned sc = spare_slot(sa, ss, sl);
        node* const x = r.leaf;
        const link e = g.protect(edge_to(x, key), sc);
        if constexpr (guard_type::validates) {
          // x may be removed: the child is safe only if the zone's entry is still in place
          // (seq_cst: read after the hazard became visible, which protect() ordered with a seq_cst
          // store).
          if (e.mark() && edge_to(r.ancestor, key).load(std::memory_order_seq_cst) !=
                              link(r.successor))
            break;
        }
        r.parent = x;
        sp = sl;
        r.leaf = e.get();
        r.leaf_edge = e;
        sl = sc;
      }
      if (r.leaf->is_leaf) return r;
    }
  }

  template <class K, class... V>
  bool emplace(K&& key, V&&... value) {
    detail::lifetime_check::operation op(life_);
    guard_type g(domain_);
    for (;;) {
      RECLAIM_READ_PHASE(g);
      const seek_record r = seek(g, key);
      if (holds(r.leaf, key)) return false;
      g.write_phase(r.ancestor, r.successor, r.parent, r.leaf);
      // A router over the old leaf and the new one, keyed by the larger key (the rank of an
      // infinite leaf). Copies: the attempt may fail.
      leaf* fresh = g.template create<leaf>(std::as_const(key), std::as_const(value)...);
      node* fresh_router;
      try {
        if (r.leaf->rank)
          fresh_router = g.template create<node>(r.leaf->rank, false, fresh, r.leaf);
        else if (comp_(fresh->key, as_leaf(r.leaf)->key))
          fresh_router = g.template create<router>(as_leaf(r.leaf)->key, fresh, r.leaf);
        else
          fresh_router = g.template create<router>(fresh->key, r.leaf, fresh);
      } catch (...) {
        delete fresh;
        throw;
      }
      link expected(r.leaf);
      // release: publishes the new nodes; pairs with the acquire loads of seek(). acquire on
      // failure: the marked edge we may help with.
      if (edge_to(r.parent, key).compare_exchange_strong(expected, link(fresh_router),
                                                         std::memory_order_release,
                                                         std::memory_order_acquire))
        return true;
      delete fresh;  // never published
      destroy(fresh_router);
      if (expected.get() == r.leaf && expected.mark()) cleanup(g, key, r);  // help, then retry
    }
  }

  // In a write phase that reserved the seek record (a hazard pointer scheme: it protects them):
  // removes the flagged leaf below r.parent (on either side) with the path from the successor
  // down, and retires all of it if our CAS did. Returns whether it did.
  bool cleanup(guard_type& g, detail::search_key<Key> key, const seek_record& r) {
    node* const p = r.parent;
    const unsigned toward = dir(p, key);
    // The kept side: the sibling of the flagged leaf. If our side is not flagged, the other side
    // is (a tag goes only on the sibling of a flagged edge), and ours is kept.
    const unsigned kept =
        (p->child[toward].load(std::memory_order_acquire).mark() & flag) ? 1 - toward : toward;
    core::atomic<link>& kept_edge = p->child[kept];
    link sibling = kept_edge.load(std::memory_order_acquire);
    // acq_rel: the tag freezes the edge before the swing below (release), and we read the
    // sibling as it is frozen (acquire).
    while (!(sibling.mark() & tag) &&
           !kept_edge.compare_exchange_weak(sibling, link(sibling.get(), sibling.mark() | tag),
                                            std::memory_order_acq_rel, std::memory_order_acquire)) {
    }
    link expected(r.successor);
    // The sibling moves up keeping its flag (a leaf being deleted stays flagged), without the tag.
    // acq_rel: the release publishes the swing to seeks; the acquire orders the retires below
    // after it.
    if (!edge_to(r.ancestor, key).compare_exchange_strong(
            expected, link(sibling.get(), sibling.mark() & flag), std::memory_order_acq_rel,
            std::memory_order_relaxed))
      return false;
    // Ours: the path from the successor to the parent, each node with the flagged leaf on its
    // other side. Children are read before their node is retired (a retire may free).
    for (node* x = r.successor; x != p;) {
      const unsigned down = dir(x, key);
      node* next = x->child[down].load(std::memory_order_acquire).get();
      retire(g, x->child[1 - down].load(std::memory_order_acquire).get());
      retire(g, x);
      x = next;
    }
    retire(g, p->child[1 - kept].load(std::memory_order_acquire).get());
    retire(g, p);
    return true;
  }

  // In key order: the left subtree before the right one.
  template <class F>
  void for_each_element(F f) const {
    std::vector<const node*> todo{inner_.child[left].load(std::memory_order_acquire).get()};
    while (!todo.empty()) {
      const node* n = todo.back();
      todo.pop_back();
      if (n->is_leaf) {
        if (!n->rank) f(*as_leaf(n));
      } else {
        todo.push_back(n->child[right].load(std::memory_order_acquire).get());
        todo.push_back(n->child[left].load(std::memory_order_acquire).get());
      }
    }
  }

  node inf0_{1, true};
  node inf1_{2, true};
  node inf2_{3, true};
  node inner_{2, false, &inf0_, &inf1_};  // inf1: every key goes left
  node root_{3, false, &inner_, &inf2_};  // inf2
};

// A set of keys ordered by Compare.
template <class Key, scheme Scheme, class Compare = std::less<Key>>
using nm_bst = basic_nm_bst<Key, void, Scheme, Compare>;
// A map from keys ordered by Compare to values fixed at insertion.
template <class Key, class Value, scheme Scheme, class Compare = std::less<Key>>
using nm_bst_map = basic_nm_bst<Key, Value, Scheme, Compare>;

}  // namespace reclaim::ds
