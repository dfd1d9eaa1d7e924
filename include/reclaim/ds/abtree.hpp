// SPDX-License-Identifier: MIT
// abtree: Brown's lock-free relaxed (a,b)-tree (Brown, "Techniques for constructing efficient
// lock-free data structures", PhD thesis, 2017, chapter 8; the ABtree of papers 000 and 001),
// written on LLX and SCX (detail/llx_scx.hpp).
//
// What it is. A B-tree whose leaves hold up to b keys and whose internal nodes hold up to b
// children (b = B = 16 by default, a = max(b/4, 2) = 4), with keys in leaves only. Nodes are
// immutable apart from an internal node's child pointers, and large: with int64 keys a node is 288
// bytes (the 16-byte retire hook, the LLX/SCX words, 16 keys and 16 child pointers in every node,
// as the paper's nodes have; the paper quotes 240 bytes with 4-byte keys). Every insert and erase
// replaces a whole leaf by a new copy with one key more or less (SCX over the parent: V = {parent},
// the old leaf is retired); an insert into a full leaf replaces it by a new internal node over two
// half-full leaves. So one or two large nodes are allocated and one is freed per update, which is
// what stresses the allocator in paper 001.
// Balance is relaxed: an update may leave a violation, a tagged node (the new internal node of a
// split, one level too deep) or an underfull node (fewer than a keys or children, the root
// excepted), and the update then rebalances before it returns: it searches again for its key from
// the root, stops at the first violation on the path and fixes it with one SCX (a tagged node is
// absorbed into its parent, or the two split into a new tagged parent one level up; an underfull
// node is joined with a sibling, or the two share their keys), until the path has none. Every
// violation lies on the path of the key of an update that has not returned (the steps move a
// violation only to a new node whose key range holds the old one's), so when no update runs, the
// tree is a strict (a,b)-tree: all leaves at one depth, every node but the root between a and b,
// the root internal node with at least two children (unsafe_well_formed() checks all of it).
// Differences from the thesis' implementation: rebalancing is driven by the update's key (fix the
// first violation on the key's path, search again) rather than by recursion on the nodes a step
// created; an update that created no violation does not search again. Helping is a phase of its own
// (see "Phases"). The degree is a template parameter.
//
// Keys and values. `abtree<Key, Scheme, Compare>` is a set, `abtree_map<Key, Value, Scheme,
// Compare>` a map (detail/container_api.hpp); leaves hold elements (the key, and the map's value),
// internal nodes copies of keys as routers. A new leaf copies its elements, so keys and values are
// copied (not moved) and must be copyable. A map's visit() calls f in a write phase that reserves
// the leaf.
//
// Phases (NBR; paper 000 used this tree for experiment E3). Every search is a read phase from the
// root; LLXs only read, so they belong to it too. The write phase reserves what the SCX touches or
// expects (the parent and the leaf for an update; grandparent, parent and the one or two children
// for a rebalancing step) and allocates the new nodes. When an LLX finds another thread's SCX under
// way, the read phase copies that SCX's descriptor (never freed), the write phase reserves the
// nodes it names and its expected value, and the thread helps it if it is still under way, then
// searches again from the root. At most 5 reservations.
//
// Reclamation. Epoch schemes and NBR protect it; hazard pointers and eras cannot: a search may pass
// through nodes that an SCX already replaced (their child pointers stay) and nothing marks a
// replaced leaf, so re-reading the parent's pointer cannot show that a child is still in the tree
// (paper 000, Table 1: "No"). A node is retired by the thread whose SCX removed it, after the SCX
// committed; descriptors are reused, never retired.
//
// Progress: lock-free (helping); searches are wait-free apart from NBR's restarts.
#pragma once
#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <string_view>
#include <utility>
#include <vector>

#include "../concepts.hpp"
#include "../read_phase.hpp"
#include "detail/container_api.hpp"
#include "detail/container_base.hpp"
#include "detail/lifetime_check.hpp"
#include "detail/llx_scx.hpp"
#include "../core/sync.hpp"

namespace reclaim::ds {

// Brown's lock-free (a,b)-tree, nodes of up to B keys, a set (Value = void) or a map ordered by
// Compare: used as abtree and abtree_map (below).
template <class Key, class Value, scheme Scheme, class Compare = std::less<Key>, unsigned B = 16>
class basic_abtree
    : public detail::container_api<basic_abtree<Key, Value, Scheme, Compare, B>, Key, Value>,
      public detail::sorted_base<Scheme, Compare> {
  using api = detail::container_api<basic_abtree, Key, Value>;
  using base = detail::sorted_base<Scheme, Compare>;
  friend api;
  using base::domain_, base::life_, base::comp_;
  static_assert(B >= 4 && B <= 256, "abtree: the degree B must be between 4 and 256");

 public:
  // Its name in the lab and in messages, the domain of Scheme it retires into and the guard each
  // operation holds, and its degrees.
  static constexpr std::string_view name = api::is_map ? "abtree_map" : "abtree";
  using typename base::domain_type, typename base::guard_type;
  static constexpr unsigned max_degree = B;                          // b
  static constexpr unsigned min_degree = std::max(B / 4, 2u);        // a
  static constexpr unsigned slots_used = 0;  // no validating scheme can protect it (offers())
  // The most nodes one write phase reserves: a helper's four nodes and the expected value.
  static constexpr unsigned reservations_used = 5;

  // Its answer to each need a scheme may have (concepts.hpp): all but validated reads.
  static constexpr support offers(needs n) {
    switch (n) {
      case needs_validated_reads:
        return {false,
                "searches pass through nodes that an SCX already replaced, and nothing marks a "
                "replaced leaf, so re-reading the parent cannot validate a read"};
      case needs_restartable_read_phases: return {true};
      default: return {true};
    }
  }

  explicit basic_abtree(domain_type& domain = Scheme::default_domain(),
                        const Compare& comp = Compare())
      : base(domain, comp) {
    // offers()'s reason, repeated: a static_assert message must be a string literal.
    static_assert(meets<Scheme, basic_abtree>(needs_validated_reads),
                  "abtree and abtree_map cannot serve a scheme that needs validated reads (hp): "
                  "searches pass through nodes that an SCX already replaced, and nothing marks a "
                  "replaced leaf, so re-reading the parent cannot validate a read. Under hp use "
                  "nm_bst or occ_avl; keep abtree under any other scheme (debra, nbr_plus, ...)");
    if constexpr (requires { guard_type::reservation_count; })
      static_assert(guard_type::reservation_count >= reservations_used,
                    "abtree reserves up to 5 nodes in a write phase (a helper's four nodes and "
                    "the value its SCX expects): use slots<5> or more");
    entry_.ptrs[0].store(new node(true, false), std::memory_order_relaxed);
    entry_.size = 1;
  }
  ~basic_abtree() {
    life_.before_destruction(domain_);
    std::vector<node*> todo{entry_.ptrs[0].load(std::memory_order_relaxed)};
    while (!todo.empty()) {
      node* n = todo.back();
      todo.pop_back();
      if (!n->is_leaf)
        for (unsigned i = 0; i < n->size; ++i)
          todo.push_back(n->ptrs[i].load(std::memory_order_relaxed));
      delete n;
    }
  }

  // Whether key is in the tree.
  bool contains(const Key& key) {
    detail::lifetime_check::operation op(life_);
    guard_type g(domain_);
    RECLAIM_READ_PHASE(g);
    return locate(search(g, key).l, key).found;
  }

  // Map: calls f(const Value&) with the key's value, if present, while the leaf is protected; the
  // reference must not escape f. Returns whether the key was present.
  template <class F>
    requires api::is_map
  bool visit(const Key& key, F&& f) {
    detail::lifetime_check::operation op(life_);
    guard_type g(domain_);
    RECLAIM_READ_PHASE(g);
    node* l = search(g, key).l;
    const slot at = locate(l, key);
    if (!at.found) return false;
    g.write_phase(l);  // f may copy or allocate, which a read phase must not
    f(std::as_const(l->element(at.index).value));
    return true;
  }

  // Removes key (and its value); returns whether it was present. The nodes its SCX replaces are
  // retired.
  bool erase(const Key& key) {
    detail::lifetime_check::operation op(life_);
    guard_type g(domain_);
    for (;;) {
      RECLAIM_READ_PHASE(g);
      const path s = search(g, key);
      const slot at = locate(s.l, key);
      if (!at.found) return false;
      const llx_result r = scx_.llx(s.p);
      if (r.status != llx_status::snapshot) {
        if (r.status == llx_status::busy) help(g, r.tag);
        continue;
      }
      if (s.p->ptrs[s.ix_l].load(std::memory_order_acquire) != s.l) continue;
      g.write_phase(s.p, s.l);
      owned fresh(leaf_without(s.l, at.index));
      // Read before the SCX: once published, another thread may replace and retire it.
      const bool underfull = fresh->size < min_degree && s.p != &entry_;
      scx_args v;
      v.add(s.p, r.tag, false);  // the leaf is immutable: replaced, not frozen
      if (!scx_.scx(v, s.p->ptrs[s.ix_l], s.l, fresh.get())) continue;
      fresh.release();
      g.retire(s.l);
      if (underfull) rebalance(g, key);
      return this->erased();
    }
  }

  // Quiescent (unsafe_size(), unsafe_for_each() and unsafe_key_sum() come from container_api): a
  // strict (a,b)-tree (see the header) whose keys lie where the routers send them, with no tagged,
  // marked or frozen node left.
  bool unsafe_well_formed() const {
    struct frame {
      const node* n;
      const Key* low;   // keys here are >= *low (nullptr: unbounded)
      const Key* high;  // ... and < *high (nullptr: unbounded)
      std::size_t depth;
    };
    if (entry_.size != 1) return false;
    const node* root = entry_.ptrs[0].load(std::memory_order_acquire);
    std::size_t leaf_depth = 0;
    bool seen_leaf = false;
    std::vector<frame> todo{{root, nullptr, nullptr, 0}};
    auto in_range = [&](const Key& k, const frame& f) {
      return !(f.low && comp_(k, *f.low)) && !(f.high && !comp_(k, *f.high));
    };
    while (!todo.empty()) {
      const frame f = todo.back();
      todo.pop_back();
      const node* n = f.n;
      if (!n || n->tagged || n->marked.load(std::memory_order_acquire) ||
          scx_.under_way(n->info.load(std::memory_order_acquire)))
        return false;
      if (n->size > B || (n != root && n->size < min_degree)) return false;
      if (n->is_leaf) {
        if (seen_leaf && f.depth != leaf_depth) return false;
        seen_leaf = true;
        leaf_depth = f.depth;
        for (unsigned i = 0; i < n->size; ++i) {
          if (!in_range(n->element(i).key, f)) return false;
          if (i > 0 && !comp_(n->element(i - 1).key, n->element(i).key)) return false;
        }
        continue;
      }
      if (n == root && n->size < 2) return false;
      for (unsigned i = 0; i + 1 < n->size; ++i) {
        if (!in_range(n->router(i), f)) return false;
        if (i > 0 && !comp_(n->router(i - 1), n->router(i))) return false;
      }
      for (unsigned i = 0; i < n->size; ++i)
        todo.push_back({n->ptrs[i].load(std::memory_order_acquire),
                        i == 0 ? f.low : &n->router(i - 1),
                        i + 1 == n->size ? f.high : &n->router(i), f.depth + 1});
    }
    return true;
  }

  // The tree's shape, for tests and curious users (quiescent).
  struct tree_shape {
    std::size_t leaves = 0;
    std::size_t internal_nodes = 0;  // the entry sentinel not counted
    std::size_t height = 0;          // edges from the root to a leaf
  };
  tree_shape unsafe_shape() const {
    tree_shape s;
    std::vector<std::pair<const node*, std::size_t>> todo{
        {entry_.ptrs[0].load(std::memory_order_acquire), 0}};
    while (!todo.empty()) {
      auto [n, depth] = todo.back();
      todo.pop_back();
      s.height = std::max(s.height, depth);
      if (n->is_leaf) {
        ++s.leaves;
        continue;
      }
      ++s.internal_nodes;
      for (unsigned i = 0; i < n->size; ++i)
        todo.push_back({n->ptrs[i].load(std::memory_order_acquire), depth + 1});
    }
    return s;
  }

 private:
  using element_type = detail::element<Key, Value>;

  // One node type for leaves and internal nodes, as in the paper. A leaf holds `size` elements;
  // an internal node `size` children and size - 1 router keys (child i holds the keys k with
  // router(i - 1) <= k < router(i)). Only the child pointers change after the node is published.
  struct node : Scheme::node_base, detail::llx_scx_fields {
    node(bool leaf, bool tag) noexcept : is_leaf(leaf), tagged(tag) {}
    ~node() {
      if (is_leaf)
        for (unsigned i = 0; i < size; ++i) element(i).~element_type();
      else
        for (unsigned i = 0; i < routers_built; ++i) router(i).~Key();
    }
    node(const node&) = delete;
    node& operator=(const node&) = delete;

    element_type& element(unsigned i) noexcept {
      return *std::launder(reinterpret_cast<element_type*>(storage + i * sizeof(element_type)));
    }
    const element_type& element(unsigned i) const noexcept {
      return *std::launder(
          reinterpret_cast<const element_type*>(storage + i * sizeof(element_type)));
    }
    const Key& router(unsigned i) const noexcept {
      return *std::launder(reinterpret_cast<const Key*>(storage + i * sizeof(Key)));
    }
    Key& router(unsigned i) noexcept {
      return *std::launder(reinterpret_cast<Key*>(storage + i * sizeof(Key)));
    }

    // Building (before publication): each appends one; the counts say what the destructor frees.
    template <class... KV>
    void push_element(KV&&... kv) {
      ::new (storage + size * sizeof(element_type)) element_type(std::forward<KV>(kv)...);
      ++size;
    }
    void push_element_copy(const element_type& e) {
      if constexpr (api::is_map)
        push_element(e.key, e.value);
      else
        push_element(e.key);
    }
    void push_router(const Key& k) {
      ::new (storage + routers_built * sizeof(Key)) Key(k);
      ++routers_built;
    }
    // relaxed: the node is published by the SCX's release CAS.
    void push_child(node* c) noexcept { ptrs[size++].store(c, std::memory_order_relaxed); }

    const bool is_leaf;
    const bool tagged;               // an internal node one level too deep (made by a split)
    std::uint16_t size = 0;          // elements of a leaf, children of an internal node
    std::uint16_t routers_built = 0;
    core::atomic<node*> ptrs[B];      // internal nodes' children
    static constexpr std::size_t storage_bytes =
        std::max(B * sizeof(element_type), (B - 1) * sizeof(Key));
    alignas(std::max(alignof(element_type), alignof(Key))) std::byte storage[storage_bytes];
  };
  using scx_type = detail::llx_scx<node, 4>;
  using llx_result = typename scx_type::llx_result;
  using llx_status = typename scx_type::llx_status;
  using scx_args = typename scx_type::scx_args;
  using help_plan = typename scx_type::help_plan;

  // A node built in a write phase and not yet published: deleted if the SCX fails (or a copy
  // throws). Never alive across a restart point: write phases are not neutralized.
  using owned = std::unique_ptr<node>;

  // Where a search ended; plain values only (trivially destructible, as the read phase requires).
  struct path {
    node* gp;
    node* p;
    node* l;
    unsigned ix_p;  // p is gp's child ix_p
    unsigned ix_l;  // l is p's child ix_l
  };
  static_assert(restart_safe<path, help_plan>);
  struct slot {
    unsigned index;  // of the key in the leaf, or where it would go
    bool found;
  };

  // The child of internal node n that holds key: the number of routers <= key.
  unsigned child_index(const node* n, detail::search_key<Key> key) const {
    unsigned i = 0;
    const unsigned routers = n->size - 1u;
    while (i < routers && !comp_(key, n->router(i))) ++i;
    return i;
  }
  slot locate(const node* l, detail::search_key<Key> key) const {
    unsigned i = 0;
    while (i < l->size && comp_(l->element(i).key, key)) ++i;
    return {i, i < l->size && !comp_(key, l->element(i).key)};
  }

  // The read phase of updates and lookups: from the root down to the leaf for key.
  path search(guard_type& g, detail::search_key<Key> key) {
    path s{nullptr, &entry_, nullptr, 0, 0};
    // acquire (protect, all of them): pairs with the release CAS of the SCX that published the
    // child.
    s.l = g.protect(entry_.ptrs[0], 0);
    while (!s.l->is_leaf) {
      s.ix_p = s.ix_l;
      s.ix_l = child_index(s.l, key);
      s.gp = s.p;
      s.p = s.l;
      s.l = g.protect(s.p->ptrs[s.ix_l], 0);
    }
    return s;
  }

  // In a read phase: helps the SCX `tag` if it is under way (a write phase that reserves what it
  // touches; see detail/llx_scx.hpp), then the caller searches again from the root.
  void help(guard_type& g, typename scx_type::tag_type tag) {
    help_plan h;
    if (!scx_.plan(tag, h)) return;
    const auto& n = h.args.nodes;
    g.write_phase(n[0], n[1], n[2], n[3], h.expected);
    scx_.help_if_under_way(h);
  }

  template <class K, class... V>
  bool emplace(K&& key, V&&... value) {
    detail::lifetime_check::operation op(life_);
    guard_type g(domain_);
    for (;;) {
      RECLAIM_READ_PHASE(g);
      const path s = search(g, key);
      const slot at = locate(s.l, key);
      if (at.found) return false;
      const llx_result r = scx_.llx(s.p);
      if (r.status != llx_status::snapshot) {
        if (r.status == llx_status::busy) help(g, r.tag);
        continue;
      }
      if (s.p->ptrs[s.ix_l].load(std::memory_order_acquire) != s.l) continue;
      g.write_phase(s.p, s.l);
      // The key and the value are copied into each attempt's leaf (an attempt may fail).
      owned fresh, left, right;
      if (s.l->size < B) {
        fresh.reset(new node(true, false));
        for (unsigned i = 0; i < at.index; ++i) fresh->push_element_copy(s.l->element(i));
        fresh->push_element(std::as_const(key), std::as_const(value)...);
        for (unsigned i = at.index; i < s.l->size; ++i) fresh->push_element_copy(s.l->element(i));
      } else {
        // Overflow: a new internal node over two leaves that share the B + 1 keys; tagged (one
        // level too deep) unless it becomes the root.
        left.reset(new node(true, false));
        right.reset(new node(true, false));
        constexpr unsigned left_size = (B + 1) / 2;
        for (unsigned i = 0, from = 0; i <= B; ++i) {
          node* into = i < left_size ? left.get() : right.get();
          if (i == at.index)
            into->push_element(std::as_const(key), std::as_const(value)...);
          else
            into->push_element_copy(s.l->element(from++));
        }
        fresh.reset(new node(false, s.p != &entry_));
        fresh->push_router(right->element(0).key);
        fresh->push_child(left.get());
        fresh->push_child(right.get());
      }
      const bool tagged = fresh->tagged;  // read before publication (see erase)
      scx_args v;
      v.add(s.p, r.tag, false);  // the leaf is immutable: replaced, not frozen
      if (!scx_.scx(v, s.p->ptrs[s.ix_l], s.l, fresh.get())) continue;
      fresh.release();
      left.release();
      right.release();
      g.retire(s.l);
      if (tagged) rebalance(g, key);
      return true;
    }
  }

  // A copy of leaf l without its element `index`.
  static node* leaf_without(const node* l, unsigned index) {
    owned fresh(new node(true, false));
    for (unsigned i = 0; i < l->size; ++i)
      if (i != index) fresh->push_element_copy(l->element(i));
    return fresh.release();
  }

  // ---------------------------------------------------------------------------------------------
  // Rebalancing

  // Fixes the violations on key's path, top-down, one SCX at a time, until there are none. Called
  // from an update's write phase; each step is a read phase from the root and a write phase, and
  // the last read phase ends (with an empty write phase) before it returns.
  void rebalance(guard_type& g, detail::search_key<Key> key) {
    for (;;) {
      RECLAIM_READ_PHASE(g);
      const path v = find_violation(g, key);
      if (!v.l) {
        g.write_phase();
        return;
      }
      if (v.l->tagged)
        fix_tagged(g, v);
      else
        fix_underfull(g, v);
    }
  }

  // The first node on key's path that is tagged or underfull (v.l; nullptr if there is none), with
  // its parent and grandparent.
  path find_violation(guard_type& g, detail::search_key<Key> key) {
    path v{nullptr, &entry_, nullptr, 0, 0};
    node* const root = g.protect(entry_.ptrs[0], 0);
    v.l = root;
    for (;;) {
      if (v.l->tagged || (v.l != root && v.l->size < min_degree)) return v;
      if (v.l->is_leaf) return {nullptr, nullptr, nullptr, 0, 0};
      v.ix_p = v.ix_l;
      v.ix_l = child_index(v.l, key);
      v.gp = v.p;
      v.p = v.l;
      v.l = g.protect(v.p->ptrs[v.ix_l], 0);
    }
  }

  // LLX of n in a read phase: its tag, or false after helping or seeing n change (the caller then
  // returns to the rebalancing loop, which searches again).
  bool llx_into(guard_type& g, node* n, scx_args& v, bool finalize) {
    const llx_result r = scx_.llx(n);
    if (r.status == llx_status::snapshot) {
      v.add(n, r.tag, finalize);
      return true;
    }
    if (r.status == llx_status::busy) help(g, r.tag);
    return false;
  }

  // t (v.l) is tagged, its parent p is not (t is the first violation on the path) and p is not the
  // entry (the root is never tagged). Absorb t into p if they fit in one node; otherwise split
  // their children between two new nodes under a new parent, tagged unless it becomes the root.
  void fix_tagged(guard_type& g, const path& v) {
    node *gp = v.gp, *p = v.p, *t = v.l;
    assert(gp && "the root is never tagged");
    scx_args args;
    if (!llx_into(g, gp, args, false) ||
        gp->ptrs[v.ix_p].load(std::memory_order_acquire) != p ||
        !llx_into(g, p, args, true) || p->ptrs[v.ix_l].load(std::memory_order_acquire) != t ||
        !llx_into(g, t, args, true))
      return;
    g.write_phase(gp, p, t);
    // p's children with t replaced by its own, and the routers likewise.
    node* kids[2 * B];
    const Key* keys[2 * B];
    unsigned nk = 0, nr = 0;
    const unsigned ix = v.ix_l;
    for (unsigned i = 0; i < ix; ++i) kids[nk++] = p->ptrs[i].load(std::memory_order_relaxed);
    for (unsigned i = 0; i < t->size; ++i) kids[nk++] = t->ptrs[i].load(std::memory_order_relaxed);
    for (unsigned i = ix + 1; i < p->size; ++i)
      kids[nk++] = p->ptrs[i].load(std::memory_order_relaxed);
    for (unsigned i = 0; i < ix; ++i) keys[nr++] = &p->router(i);
    for (unsigned i = 0; i + 1 < t->size; ++i) keys[nr++] = &t->router(i);
    for (unsigned i = ix; i + 1 < p->size; ++i) keys[nr++] = &p->router(i);
    owned fresh, left, right;
    if (nk <= B) {
      fresh = internal_node(false, kids, keys, 0, nk);
    } else {
      const unsigned left_size = nk / 2;
      left = internal_node(false, kids, keys, 0, left_size);
      right = internal_node(false, kids, keys, left_size, nk);
      fresh.reset(new node(false, gp != &entry_));
      fresh->push_router(*keys[left_size - 1]);
      fresh->push_child(left.get());
      fresh->push_child(right.get());
    }
    if (!scx_.scx(args, gp->ptrs[v.ix_p], p, fresh.get())) return;
    fresh.release();
    left.release();
    right.release();
    g.retire(p);
    g.retire(t);
  }

  // An internal node over kids[from, to) with the routers between them, keys[from, to - 1).
  static owned internal_node(bool tagged, node* const* kids, const Key* const* keys, unsigned from,
                             unsigned to) {
    owned n(new node(false, tagged));
    for (unsigned i = from; i < to; ++i) {
      if (i > from) n->push_router(*keys[i - 1]);
      n->push_child(kids[i]);
    }
    return n;
  }

  // l (v.l) is underfull and not the root; nothing above it on the path has a violation. Join it
  // with a sibling if the two fit in fewer than 2a slots, otherwise share their contents evenly.
  void fix_underfull(guard_type& g, const path& v) {
    node *gp = v.gp, *p = v.p, *l = v.l;
    assert(gp && "the root is never underfull");
    scx_args args;
    if (!llx_into(g, gp, args, false) ||
        gp->ptrs[v.ix_p].load(std::memory_order_acquire) != p ||
        !llx_into(g, p, args, true) || p->ptrs[v.ix_l].load(std::memory_order_acquire) != l)
      return;
    if (p->size < 2) return;  // not reached: p is the root (two children or more) or not underfull
    const unsigned ix_s = v.ix_l > 0 ? v.ix_l - 1 : 1;
    node* s = g.protect(p->ptrs[ix_s], 0);
    if (s->tagged) {
      fix_tagged(g, {gp, p, s, v.ix_p, ix_s});  // the sibling's violation first
      return;
    }
    if (s->is_leaf != l->is_leaf) return;  // not reached while neither is tagged
    const unsigned left_ix = std::min(v.ix_l, ix_s);
    node* left = left_ix == v.ix_l ? l : s;
    node* right = left_ix == v.ix_l ? s : l;
    // Leaves are immutable: replaced, not frozen (as in updates).
    if (!l->is_leaf && (!llx_into(g, left, args, true) || !llx_into(g, right, args, true))) return;
    g.write_phase(gp, p, l, s);
    const unsigned total = left->size + right->size;
    owned merged, fresh_left, fresh_right, fresh_parent;
    node* desired;
    if (total < 2 * min_degree) {
      merged = join(left, right, p->router(left_ix));
      if (gp == &entry_ && p->size == 2) {
        desired = merged.get();  // p goes: the joined node is the new root
      } else {
        // p without the right one's slot and the router before it; the joined node in the left's.
        fresh_parent = parent_with(p, left_ix, merged.get(), nullptr, nullptr);
        desired = fresh_parent.get();
      }
    } else {
      const Key* pivot = distribute(left, right, p->router(left_ix), fresh_left, fresh_right);
      fresh_parent = parent_with(p, left_ix, fresh_left.get(), fresh_right.get(), pivot);
      desired = fresh_parent.get();
    }
    if (!scx_.scx(args, gp->ptrs[v.ix_p], p, desired)) return;
    merged.release();
    fresh_left.release();
    fresh_right.release();
    fresh_parent.release();
    g.retire(p);
    g.retire(l);
    g.retire(s);
  }

  // A copy of internal node p whose children left_ix and left_ix + 1 are replaced: by `left` alone
  // (right == nullptr: a join, the router between them goes), or by `left` and `right` with
  // `*pivot` between them (a distribution).
  static owned parent_with(const node* p, unsigned left_ix, node* left, node* right,
                           const Key* pivot) {
    owned n(new node(false, false));
    for (unsigned i = 0; i < p->size; ++i) {
      if (i == left_ix)
        n->push_child(left);
      else if (i != left_ix + 1)
        n->push_child(p->ptrs[i].load(std::memory_order_relaxed));
      else if (right)
        n->push_child(right);
    }
    for (unsigned i = 0; i + 1 < p->size; ++i) {
      if (i != left_ix)
        n->push_router(p->router(i));
      else if (right)
        n->push_router(*pivot);
    }
    return n;
  }

  // One node with the contents of two siblings (and, for internal nodes, the router between them).
  static owned join(const node* left, const node* right, const Key& between) {
    owned n(new node(left->is_leaf, false));
    if (left->is_leaf) {
      for (unsigned i = 0; i < left->size; ++i) n->push_element_copy(left->element(i));
      for (unsigned i = 0; i < right->size; ++i) n->push_element_copy(right->element(i));
      return n;
    }
    for (unsigned i = 0; i < left->size; ++i) {
      if (i > 0) n->push_router(left->router(i - 1));
      n->push_child(left->ptrs[i].load(std::memory_order_relaxed));
    }
    n->push_router(between);
    for (unsigned i = 0; i < right->size; ++i) {
      if (i > 0) n->push_router(right->router(i - 1));
      n->push_child(right->ptrs[i].load(std::memory_order_relaxed));
    }
    return n;
  }

  // Two nodes that share the contents of two siblings evenly; returns the new router between them
  // (a key of the new right node, or the old router, both of which outlive the SCX's write phase).
  static const Key* distribute(const node* left, const node* right, const Key& between,
                               owned& new_left, owned& new_right) {
    const unsigned total = left->size + right->size;
    const unsigned left_size = total / 2;
    new_left.reset(new node(left->is_leaf, false));
    new_right.reset(new node(left->is_leaf, false));
    if (left->is_leaf) {
      for (unsigned i = 0; i < total; ++i) {
        const element_type& e = i < left->size ? left->element(i) : right->element(i - left->size);
        (i < left_size ? new_left : new_right)->push_element_copy(e);
      }
      return &new_right->element(0).key;
    }
    node* kids[2 * B];
    const Key* keys[2 * B];
    unsigned nk = 0, nr = 0;
    for (unsigned i = 0; i < left->size; ++i) {
      if (i > 0) keys[nr++] = &left->router(i - 1);
      kids[nk++] = left->ptrs[i].load(std::memory_order_relaxed);
    }
    keys[nr++] = &between;
    for (unsigned i = 0; i < right->size; ++i) {
      if (i > 0) keys[nr++] = &right->router(i - 1);
      kids[nk++] = right->ptrs[i].load(std::memory_order_relaxed);
    }
    new_left = internal_node(false, kids, keys, 0, left_size);
    new_right = internal_node(false, kids, keys, left_size, total);
    return keys[left_size - 1];
  }

  // In key order: children left to right.
  template <class F>
  void for_each_element(F f) const {
    std::vector<const node*> todo{entry_.ptrs[0].load(std::memory_order_acquire)};
    while (!todo.empty()) {
      const node* n = todo.back();
      todo.pop_back();
      if (n->is_leaf) {
        for (unsigned i = 0; i < n->size; ++i) f(n->element(i));
        continue;
      }
      for (unsigned i = n->size; i-- > 0;)
        todo.push_back(n->ptrs[i].load(std::memory_order_acquire));
    }
  }

  scx_type scx_;
  // The entry: an internal node with one child, the root (Brown's sentinel); never replaced.
  node entry_{false, false};
};

// A set of keys ordered by Compare.
template <class Key, scheme Scheme, class Compare = std::less<Key>>
using abtree = basic_abtree<Key, void, Scheme, Compare>;
// A map from keys ordered by Compare to values fixed at insertion.
template <class Key, class Value, scheme Scheme, class Compare = std::less<Key>>
using abtree_map = basic_abtree<Key, Value, Scheme, Compare>;

}  // namespace reclaim::ds
