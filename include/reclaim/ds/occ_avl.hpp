// SPDX-License-Identifier: MIT
// occ_avl: the optimistic relaxed AVL tree of Bronson, Casper, Chafi and Olukotun ("A practical
// concurrent binary search tree", PPoPP 2010; the OCCtree of paper 001's Figure 1).
//
// What it is. A partially external AVL tree: every node holds a key, and a node whose key was
// erased while it had two children stays as a routing node (erase only clears its presence: the
// delete that frees nothing in the common case). Nodes with at most one child are unlinked when
// their key goes, and routing nodes when they come down to one child. Updates lock the nodes they
// change (parent before child); lookups take no lock. Each node has a version: a rotation that
// moves keys out of a node's subtree marks the node shrinking, changes its links, and bumps the
// version; unlinking marks it unlinked for good. A search goes hand over hand: it reads a node's
// version, then the child, then the child's version, and checks that the node's version did not
// move (so that the child was its child, and the key could not have left the node's subtree, in
// between); a search that meets a shrinking node waits until the rotation ends. After an update the
// thread walks up through parent pointers, fixing heights and rotating where a node's children
// differ in height by more than one (single or double rotations, under the locks of the parent, the
// node, and the child or grandchild that move), until a node needs nothing; the balance is relaxed
// while updates run and strict when they stop: unsafe_well_formed() checks heights, balance, order
// and links. Node: 64 bytes with int64 keys (the retire hook, key, version, height, presence, lock,
// and three links), and one allocation per insert of a new key, none per erase: paper 001's
// contrast with the ABtree's 288-byte nodes, one or two per update.
//
// Keys and values. `occ_avl<Key, Scheme, Compare>` is a set, `occ_avl_map<Key, Value, Scheme,
// Compare>` a map (detail/container_api.hpp). The set's node holds its key and a presence flag. A
// map's node holds its key and a pointer to an entry (a copy of the key and the value, immutable),
// null in a routing node: the paper overwrites the value in place, which immutable values forbid,
// so an erase retires the entry and a later insert of the key makes a new one. visit() protects the
// entry; insert copies the key and the value.
//
// Reclamation. Epoch schemes protect it. Hazard pointers protect it too (paper 000's Table 1:
// "Yes"): each child is read, its hazard published and the parent's link re-read (hp's protect),
// and the parent's version checked unchanged afterwards: a version that did not move proves the
// parent was not unlinked, so the child was in the tree when its hazard became visible. Children
// read under their parent's lock need no hazard (unlinking a node takes its parent's lock); a
// parent read through a node's parent pointer is protected and the node checked not unlinked, since
// a linked node's parent pointer always names a node that has not yet been retired; a node the walk
// up will visit next is protected while the locks that keep it linked are held. Three hazards at
// once. NBR cannot protect it (Table 1: "No"): the walk up after an update reaches, through parent
// pointers and under locks, nodes its search never read, and its rotations cannot be cut into read
// phases that start at the root.
//
// Progress: lookups are optimistic and lock-free except that they wait for a rotation under way
// (blocking on its locks' holder); updates are lock-based. Differences from the paper: a search
// whose node changed under it starts again from the root instead of from the parent (the recursion
// would hold a hazard per level); sets keep a presence flag and maps an entry pointer instead of a
// mutable value; versions count shrinks only (growing changes never disturb searches); the walk up
// decides under a node's lock that the node needs nothing, and rotations and unlinks also lock the
// nodes they move to a new parent (without both, racing walks left a height stale for good, and the
// tree unbalanced after updates stopped, about once in a hundred 4-thread stress runs).
#pragma once
#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "../concepts.hpp"
#include "detail/container_api.hpp"
#include "detail/container_base.hpp"
#include "detail/lifetime_check.hpp"
#include "detail/spinlock.hpp"
#include "../core/sync.hpp"

namespace reclaim::ds {

// The optimistic relaxed AVL tree of Bronson et al., a set (Value = void) or a map ordered by
// Compare: used as occ_avl and occ_avl_map (below).
template <class Key, class Value, scheme Scheme, class Compare = std::less<Key>>
class basic_occ_avl
    : public detail::container_api<basic_occ_avl<Key, Value, Scheme, Compare>, Key, Value>,
      public detail::sorted_base<Scheme, Compare> {
  using api = detail::container_api<basic_occ_avl, Key, Value>;
  using base = detail::sorted_base<Scheme, Compare>;
  friend api;
  using base::domain_, base::life_, base::comp_;

 public:
  // Its name in the lab and in messages, the domain of Scheme it retires into and the guard each
  // operation holds.
  static constexpr std::string_view name = api::is_map ? "occ_avl_map" : "occ_avl";
  using typename base::domain_type, typename base::guard_type;
  // A search's parent, node and child; the walk up's node, its parent (or children) and the next.
  static constexpr unsigned slots_used = 3;

  // Its answer to each need a scheme may have (concepts.hpp): validated reads only.
  static constexpr support offers(needs n) {
    switch (n) {
      case needs_validated_reads: return {true};  // hand-over-hand versions (see the header)
      case needs_restartable_read_phases:
        return {false,
                "rebalancing walks up parent pointers to nodes its search never read and rotates "
                "them under locks, so its steps are not read phases that start at the root"};
      case needs_allocated_nodes:
        return {false,
                "its root holder is a member of the tree object, not a node allocated on its own "
                "with a count in front of it"};
      default: return {true};
    }
  }

  explicit basic_occ_avl(domain_type& domain = Scheme::default_domain(),
                         const Compare& comp = Compare())
      : base(domain, comp) {
    // offers()'s reason, repeated: a static_assert message must be a string literal.
    static_assert(meets<Scheme, basic_occ_avl>(needs_restartable_read_phases),
                  "occ_avl and occ_avl_map cannot serve a scheme that needs restartable read "
                  "phases (nbr, nbr_plus): rebalancing walks up parent pointers to nodes its "
                  "search never read and rotates them under locks, so its steps are not read "
                  "phases that start at the root. Under nbr use abtree or nm_bst");
    static_assert(meets<Scheme, basic_occ_avl>(needs_allocated_nodes),
                  "occ_avl and occ_avl_map cannot serve a scheme that needs allocated nodes (lfrc, "
                  "which counts references in a header in front of each node): its root holder "
                  "is a member of the tree object. Under lfrc use hm_hashmap");
    static_assert(has_slots<Scheme, basic_occ_avl>(),
                  "occ_avl and occ_avl_map protect 3 nodes at once, and this scheme's guard has "
                  "fewer hazard slots: use hp<reclaim::slots<3>> or more");
  }
  ~basic_occ_avl() {
    life_.before_destruction(domain_);
    std::vector<node*> todo{holder_.child[right].load(std::memory_order_relaxed)};
    while (!todo.empty()) {
      node* n = todo.back();
      todo.pop_back();
      if (!n) continue;
      for (auto& c : n->child) todo.push_back(c.load(std::memory_order_relaxed));
      if constexpr (api::is_map) delete n->entry.load(std::memory_order_relaxed);
      delete as_keyed(n);
    }
  }

  // Whether key is in the tree.
  bool contains(const Key& key) {
    detail::lifetime_check::operation op(life_);
    guard_type g(domain_);
    const position at = search(g, key);
    return at.found && present(at.n);
  }

  // Map: calls f(const Value&) with the key's value, if present, while its entry is protected; the
  // reference must not escape f. Returns whether the key was present.
  template <class F>
    requires api::is_map
  bool visit(const Key& key, F&& f) {
    detail::lifetime_check::operation op(life_);
    guard_type g(domain_);
    const position at = search(g, key);
    if (!at.found) return false;
    // The entry is retired only after the node's link to it changed: a re-read validates it.
    const entry* e = g.protect(at.n->entry, at.spare_slot);
    if (!e) return false;
    f(std::as_const(e->value));
    return true;
  }

  // Removes key (and its value); returns whether it was present. A node with at most one child is
  // unlinked and retired; one with two stays as a routing node, only its key (and value) removed.
  bool erase(const Key& key) {
    detail::lifetime_check::operation op(life_);
    guard_type g(domain_);
    for (;;) {
      const position at = search(g, key);
      if (!at.found || !present(at.n)) return false;
      node* const parent = at.parent;
      node* const n = at.n;
      if (!n->child[left].load(std::memory_order_acquire) ||
          !n->child[right].load(std::memory_order_acquire)) {
        // At most one child: unlink it.
        retired_entry gone;
        {
          std::scoped_lock parent_lock(parent->lock);
          if (unlinked(parent->version.load(std::memory_order_acquire)) ||
              n->parent.load(std::memory_order_acquire) != parent)
            continue;
          std::scoped_lock node_lock(n->lock);
          if (!present(n)) return false;
          if (!unlink_nl(parent, n)) continue;
          gone = clear(n);
        }
        fix_height_and_rebalance(g, parent, at.parent_slot);
        retire(g, gone);
        g.retire(as_keyed(n));
        return this->erased();
      }
      // Two children: the node stays as a routing node.
      std::scoped_lock node_lock(n->lock);
      if (unlinked(n->version.load(std::memory_order_acquire))) continue;
      if (!present(n)) return false;
      if (!n->child[left].load(std::memory_order_relaxed) ||
          !n->child[right].load(std::memory_order_relaxed))
        continue;  // lost a child meanwhile: unlink it instead
      retire(g, clear(n));
      return this->erased();
    }
  }

  // Quiescent (unsafe_size(), unsafe_for_each() and unsafe_key_sum() come from container_api): a
  // strict AVL tree (every height exact, children's heights within one), in key order, with
  // consistent parent links, no node shrinking or unlinked, and no routing node with fewer than two
  // children.
  bool unsafe_well_formed() const {
    struct frame {
      const node* n;
      const node* parent;
      const Key* low;   // keys here are > *low (nullptr: unbounded)
      const Key* high;  // ... and < *high
    };
    if (holder_.child[left].load(std::memory_order_acquire)) return false;
    std::vector<frame> todo;
    if (const node* root = holder_.child[right].load(std::memory_order_acquire))
      todo.push_back({root, &holder_, nullptr, nullptr});
    while (!todo.empty()) {
      const frame f = todo.back();
      todo.pop_back();
      const node* n = f.n;
      const node* l = n->child[left].load(std::memory_order_acquire);
      const node* r = n->child[right].load(std::memory_order_acquire);
      const Key& k = key_of(n);
      if (n->parent.load(std::memory_order_acquire) != f.parent ||
          (n->version.load(std::memory_order_acquire) & (unlinked_bit | shrinking_bit)) ||
          (f.low && !comp_(*f.low, k)) || (f.high && !comp_(k, *f.high)))
        return false;
      const int hl = height(l), hr = height(r);
      if (n->height.load(std::memory_order_relaxed) != 1 + std::max(hl, hr) || hl - hr > 1 ||
          hr - hl > 1)
        return false;
      if (!present(n) && (!l || !r)) return false;
      if (l) todo.push_back({l, n, f.low, &k});
      if (r) todo.push_back({r, n, &k, f.high});
    }
    return true;
  }

  // The tree's shape, for tests and curious users (quiescent).
  struct tree_shape {
    std::size_t nodes = 0;
    std::size_t routing_nodes = 0;  // erased keys whose nodes stay (two children)
    std::size_t height = 0;         // nodes on the longest path from the root
  };
  tree_shape unsafe_shape() const {
    tree_shape s;
    const node* root = holder_.child[right].load(std::memory_order_acquire);
    s.height = static_cast<std::size_t>(height(root));
    std::vector<const node*> todo;
    if (root) todo.push_back(root);
    while (!todo.empty()) {
      const node* n = todo.back();
      todo.pop_back();
      ++s.nodes;
      s.routing_nodes += !present(n);
      for (const auto& c : n->child)
        if (const node* x = c.load(std::memory_order_acquire)) todo.push_back(x);
    }
    return s;
  }

 private:
  static constexpr unsigned left = 0, right = 1;

  // Version bits: unlinked (for good), shrinking (a rotation under way); the rest counts shrinks.
  using version_type = std::uint64_t;
  static constexpr version_type unlinked_bit = 1, shrinking_bit = 2, shrink_count = 4;
  static constexpr bool unlinked(version_type v) noexcept { return v & unlinked_bit; }

  // A map's immutable (key, value): what a node with a present key points to.
  struct entry : Scheme::node_base, detail::element<Key, Value> {
    template <class... KV>
    explicit entry(KV&&... kv) : detail::element<Key, Value>(std::forward<KV>(kv)...) {}
  };
  struct no_entry {};
  using entry_link = std::conditional_t<api::is_map, core::atomic<entry*>, no_entry>;

  // The holder (the root's parent, Bronson's root holder) is only this; every other node is a
  // keyed node.
  struct node : Scheme::node_base {
    node() noexcept = default;
    explicit node(node* p) noexcept : parent(p) {}
    core::atomic<version_type> version{0};
    core::atomic<int> height{1};
    core::atomic<bool> is_present{true};  // sets: the key is in the set (false: a routing node)
    detail::spinlock lock;
    core::atomic<node*> parent{nullptr};
    core::atomic<node*> child[2] = {};
    [[no_unique_address]] entry_link entry{};  // maps: the key's entry (nullptr: routing node)
  };
  struct keyed : node, detail::element<Key, void> {
    template <class K>
    keyed(K&& k, node* p) : node(p), detail::element<Key, void>(std::forward<K>(k)) {}
  };
  static keyed* as_keyed(node* n) noexcept { return static_cast<keyed*>(n); }
  static const Key& key_of(const node* n) noexcept { return static_cast<const keyed*>(n)->key; }

  static int height(const node* n) noexcept {
    return n ? n->height.load(std::memory_order_relaxed) : 0;
  }

  // The key's presence. acquire: pairs with the release stores of revive() and clear() (a map's
  // entry is published by it).
  static bool present(const node* n) noexcept {
    if constexpr (api::is_map)
      return n->entry.load(std::memory_order_acquire) != nullptr;
    else
      return n->is_present.load(std::memory_order_acquire);
  }
  // Under n's lock: the key goes; returns what to retire after the unlock (a map's entry).
  using retired_entry = std::conditional_t<api::is_map, entry*, bool>;
  static retired_entry clear(node* n) noexcept {
    // release: pairs with the acquire in present().
    if constexpr (api::is_map)
      return n->entry.exchange(nullptr, std::memory_order_acq_rel);
    else
      return n->is_present.exchange(false, std::memory_order_acq_rel);
  }
  static void retire(guard_type& g, retired_entry e) {
    if constexpr (api::is_map)
      if (e) g.retire(e);
  }

  // Where a search ended: the node holding the key (found) or the node under which it would go.
  struct position {
    node* parent;       // of n (the holder's parent is nullptr)
    node* n;
    version_type n_version;
    unsigned dir;       // found: n is parent's child `dir`; not found: n's child `dir` is empty
    bool found;
    // The hazard slots holding parent and n, and the free one.
    unsigned parent_slot, n_slot, spare_slot;
  };

  // Waits until a rotation under way at n ends (it holds locks: on 2 cores, give it the processor).
  static version_type wait_until_not_shrinking(const node* n) noexcept {
    for (unsigned spins = 0;; ++spins) {
      // acquire: pairs with the release store that ends the shrink.
      const version_type v = n->version.load(std::memory_order_acquire);
      if (!(v & shrinking_bit)) return v;
      if (spins < 64)
        RECLAIM_CPU_RELAX();
      else
        core::yield_now();
    }
  }

  // Hand over hand from the holder: each child is protected (under hp: published, and the parent's
  // link re-read) and then valid only if the parent's version did not move. A failed check starts
  // again from the root.
  position search(guard_type& g, detail::search_key<Key> key) {
  restart:
    unsigned sp = 0, sn = 1, sc = 2;
    node* parent = nullptr;
    node* n = &holder_;
    version_type v = 0;  // the holder's version never moves
    unsigned dir = right;
    for (;;) {
      // acquire (protect): pairs with the release store that linked the child.
      node* c = g.protect(n->child[dir], sc);
      // acquire (all version loads): pair with the release stores of rotations and unlinks.
      if (n->version.load(std::memory_order_acquire) != v) goto restart;
      if (!c) return {parent, n, v, dir, false, sp, sn, sc};
      if (!comp_(key, key_of(c)) && !comp_(key_of(c), key)) return {n, c, 0, dir, true, sn, sc, sp};
      const unsigned next = comp_(key, key_of(c)) ? left : right;
      version_type cv = c->version.load(std::memory_order_acquire);
      if (cv & (shrinking_bit | unlinked_bit)) {
        wait_until_not_shrinking(c);
        if (n->version.load(std::memory_order_acquire) != v) goto restart;
        continue;  // read the child again
      }
      // c was n's child after we read its version, and n did not change: cv is c's version as
      // n's child, and c's subtree held the key's place then.
      if (n->child[dir].load(std::memory_order_acquire) != c) continue;
      if (n->version.load(std::memory_order_acquire) != v) goto restart;
      parent = n;
      n = c;
      v = cv;
      dir = next;
      const unsigned freed = sp;
      sp = sn;
      sn = sc;
      sc = freed;
    }
  }

  template <class K, class... V>
  bool emplace(K&& key, V&&... value) {
    detail::lifetime_check::operation op(life_);
    guard_type g(domain_);
    for (;;) {
      const position at = search(g, key);
      if (at.found) {
        node* const n = at.n;
        if (present(n)) return false;
        // A routing node: the key comes back to it.
        std::scoped_lock node_lock(n->lock);
        if (unlinked(n->version.load(std::memory_order_acquire))) continue;
        if (present(n)) return false;
        revive(g, n, std::as_const(key), std::as_const(value)...);
        return true;
      }
      node* const n = at.n;
      {
        std::scoped_lock node_lock(n->lock);
        if (n->version.load(std::memory_order_acquire) != at.n_version ||
            n->child[at.dir].load(std::memory_order_relaxed))
          continue;
        keyed* fresh = g.template create<keyed>(std::as_const(key), n);
        if constexpr (api::is_map) {
          try {
            entry* e = g.template create<entry>(std::as_const(key), std::as_const(value)...);
            fresh->entry.store(e, std::memory_order_relaxed);
          } catch (...) {
            delete fresh;
            throw;
          }
        }
        // release: publishes the new node; pairs with the acquire loads of searches.
        n->child[at.dir].store(fresh, std::memory_order_release);
      }
      fix_height_and_rebalance(g, n, at.n_slot);
      return true;
    }
  }

  template <class K, class... V>
  static void revive(guard_type& g, node* n, const K& key, const V&... value) {
    if constexpr (api::is_map)
      // release: publishes the entry; pairs with the acquire in present() and visit().
      n->entry.store(g.template create<entry>(key, value...), std::memory_order_release);
    else
      n->is_present.store(true, std::memory_order_release);
  }

  // A node that a rotation or an unlink moves to a new parent is locked while it moves, so that a
  // walk up that has just fixed its height (and read its parent, both under its lock) either went
  // before, and the mover reads the new height, or goes after, to the new parent. Otherwise the
  // walk could climb to the old parent, find nothing to do there, and leave the new parent's height
  // stale for good. Lock order stays parent before child.
  static std::unique_lock<detail::spinlock> lock_moving(node* x) noexcept {
    return x ? std::unique_lock(x->lock) : std::unique_lock<detail::spinlock>();
  }

  // Under the locks of parent and n: unlinks n (at most one child, no key) if it is still parent's
  // child; its single child, if any, takes its place.
  static bool unlink_nl(node* parent, node* n) noexcept {
    const unsigned side = parent->child[left].load(std::memory_order_relaxed) == n ? left : right;
    if (parent->child[side].load(std::memory_order_relaxed) != n) return false;
    node* l = n->child[left].load(std::memory_order_relaxed);
    node* r = n->child[right].load(std::memory_order_relaxed);
    if (l && r) return false;
    node* splice = l ? l : r;
    const auto splice_lock = lock_moving(splice);
    // release (all three): searches that read the new links see the nodes' fields; the version
    // is visible to a search that read the old link before it checks n again.
    n->version.store(n->version.load(std::memory_order_relaxed) | unlinked_bit,
                     std::memory_order_release);
    parent->child[side].store(splice, std::memory_order_release);
    if (splice) splice->parent.store(parent, std::memory_order_release);
    return true;
  }

  // ---------------------------------------------------------------------------------------------
  // The walk up after an update (Bronson's fixHeightAndRebalance)

  enum class need { nothing, rebalance, unlink, new_height };
  struct condition {
    need what;
    int height;  // for new_height
  };
  // What n needs, from its children as they are (read under n's lock, or protected by the caller).
  static condition condition_of(const node* n, const node* l, const node* r) noexcept {
    if ((!l || !r) && !present(n)) return {need::unlink, 0};
    const int hl = height(l), hr = height(r);
    const int repl = 1 + std::max(hl, hr);
    if (hl - hr > 1 || hr - hl > 1) return {need::rebalance, 0};
    return repl != n->height.load(std::memory_order_relaxed) ? condition{need::new_height, repl}
                                                             : condition{need::nothing, 0};
  }
  static condition condition_nl(const node* n) noexcept {
    return condition_of(n, n->child[left].load(std::memory_order_relaxed),
                        n->child[right].load(std::memory_order_relaxed));
  }

  // Where the walk goes next, decided under locks and protected before they are released (the
  // locks keep it linked, so not retired, until then): nowhere (nullptr), or a node whose hazard is
  // published in the walk's `next` slot. A node the step unlinked is retired by the caller once
  // the locks are released (a retire may run deleters).
  struct next_step {
    node* next = nullptr;
    node* unlinked = nullptr;
    bool below = false;  // next is below a node whose height the step may have left stale
    bool done = false;   // next needs nothing: the walk ends there, or climbs on from it
  };

  // Publishes a hazard for x, which the caller's locks keep linked: a protect of a local copy,
  // whose re-read cannot fail. Under epoch schemes a plain load.
  static node* hold(guard_type& g, node* x, unsigned slot) {
    core::atomic<node*> here{x};
    return g.protect(here, slot);
  }
  // x is locked and linked: its parent pointer names a node not yet retired (see the header).
  static node* parent_of(guard_type& g, node* x, unsigned slot) {
    return g.protect(x->parent, slot);
  }

  // From n (protected in slot `ns`) up to the root, until a node needs nothing; after a step
  // that left work below a node whose height it may have made stale, up to the root whatever the
  // nodes need (Bronson's walk stops at the first node that needs nothing, which can leave such a
  // height, and the balance above it, wrong for good).
  void fix_height_and_rebalance(guard_type& g, node* n, unsigned ns) {
    bool to_the_root = false;
    while (n != &holder_) {
      const unsigned s1 = (ns + 1) % 3, s2 = (ns + 2) % 3;
      // The children, protected and valid while n is linked (checked after the protects).
      node* l = g.protect(n->child[left], s1);
      node* r = g.protect(n->child[right], s2);
      if (unlinked(n->version.load(std::memory_order_acquire))) return;
      const condition c = condition_of(n, l, r);  // a guess, confirmed under locks
      next_step step;
      if (c.what == need::nothing || c.what == need::new_height) {
        // Under n's lock even when nothing seems needed (Bronson decides that without it): a
        // thread fixing n's height holds the lock and may have read a child's height from before
        // the change whose walk is here. Under the lock we see its height, or it sees ours.
        std::scoped_lock node_lock(n->lock);
        if (unlinked(n->version.load(std::memory_order_relaxed))) return;
        step = fix_height_nl(g, n, s2);
        if (step.done && to_the_root) step = {parent_of(g, n, s2), nullptr};
      } else {
        node* parent = g.protect(n->parent, s1);
        // A linked node's parent pointer names a node not yet retired (header). An unlinked n
        // is its unlinker's to follow up.
        if (unlinked(n->version.load(std::memory_order_acquire))) return;
        std::scoped_lock parent_lock(parent->lock);
        if (unlinked(parent->version.load(std::memory_order_relaxed)) ||
            n->parent.load(std::memory_order_relaxed) != parent)
          continue;  // n moved: look at it again (still protected in ns)
        std::scoped_lock node_lock(n->lock);
        // n may have been unlinked between the check above and the parent's lock (an unlink
        // leaves n's parent pointer as it was): its unlinker follows up, and a node unlinked
        // (perhaps retired) before this point must not be protected again.
        if (unlinked(n->version.load(std::memory_order_relaxed))) return;
        step = rebalance_nl(g, parent, n, s2);
      }
      if (step.unlinked) g.retire(as_keyed(step.unlinked));
      if (!step.next || (step.done && !to_the_root)) return;
      to_the_root |= step.below;
      n = step.next;
      ns = s2;
    }
  }

  // Under n's lock: sets n's height if that is all it needs; the walk goes on to its parent.
  static next_step fix_height_nl(guard_type& g, node* n, unsigned slot) {
    const condition c = condition_nl(n);
    switch (c.what) {
      case need::rebalance:
      case need::unlink: return {hold(g, n, slot), nullptr};
      case need::nothing: return {hold(g, n, slot), nullptr, false, true};
      case need::new_height: break;
    }
    n->height.store(c.height, std::memory_order_relaxed);
    return {parent_of(g, n, slot), nullptr};
  }

  // Under the locks of parent and n.
  next_step rebalance_nl(guard_type& g, node* parent, node* n, unsigned slot) {
    node* nl = n->child[left].load(std::memory_order_relaxed);
    node* nr = n->child[right].load(std::memory_order_relaxed);
    if ((!nl || !nr) && !present(n)) {
      if (!unlink_nl(parent, n)) return {hold(g, n, slot), nullptr};
      next_step step = fix_height_nl(g, parent, slot);
      step.unlinked = n;
      return step;
    }
    const int hn = n->height.load(std::memory_order_relaxed);
    const int hl = height(nl), hr = height(nr);
    const int repl = 1 + std::max(hl, hr);
    if (hl - hr > 1) return rebalance_toward(g, parent, n, left, nl, hr, slot);
    if (hr - hl > 1) return rebalance_toward(g, parent, n, right, nr, hl, slot);
    if (repl != hn) {
      n->height.store(repl, std::memory_order_relaxed);
      return fix_height_nl(g, parent, slot);
    }
    return {hold(g, n, slot), nullptr, false, true};
  }

  // n is too heavy on side s (its child c there; ho: the height of its other subtree): one
  // rotation or two, under c's lock and, if needed, its inner child's (Bronson's
  // rebalanceToRight_nl for s = left, rebalanceToLeft_nl for s = right).
  next_step rebalance_toward(guard_type& g, node* parent, node* n, unsigned s, node* c, int ho,
                             unsigned slot) {
    const unsigned o = 1 - s;
    std::scoped_lock child_lock(c->lock);
    const int hc = c->height.load(std::memory_order_relaxed);
    if (hc - ho <= 1) return {hold(g, n, slot), nullptr};  // changed meanwhile: look again
    node* cin = c->child[o].load(std::memory_order_relaxed);  // the inner grandchild
    const int hcc = height(c->child[s].load(std::memory_order_relaxed));
    {
      // cin moves under n in a single rotation, and is lifted in a double one: locked either way.
      const auto grandchild_lock = lock_moving(cin);
      const int hcin = height(cin);
      if (hcc >= hcin) return rotate(g, parent, n, s, c, ho, hcc, cin, hcin, slot);
      // The grandchild's child that would move under c: c is balanced after a double rotation
      // only if it is within one of c's outer child. (Bronson also skips the double rotation when
      // it would leave c a routing node with one child, which can leave n unbalanced for good;
      // here c is unlinked next instead.)
      const int hgin = height(cin->child[s].load(std::memory_order_relaxed));
      const int b = hcc - hgin;
      if (b >= -1 && b <= 1) return rotate_double(g, parent, n, s, c, ho, hcc, cin, slot);
    }
    // The grandchild is too heavy on its own: rotate c first (n, still locked, is its parent);
    // n is balanced later.
    return rebalance_toward(g, n, c, o, cin, hcc, slot);
  }

  // Shrinking a node: readers that see the bit wait; the end bumps the count.
  static version_type begin_shrink(node* n) noexcept {
    const version_type v = n->version.load(std::memory_order_relaxed);
    // relaxed store, then the release stores of the links: a search that reads a new link reads
    // the shrinking bit (or the end) when it checks n's version again.
    n->version.store(v | shrinking_bit, std::memory_order_relaxed);
    core::thread_fence(std::memory_order_release);
    return v;
  }
  static void end_shrink(node* n, version_type before) noexcept {
    // release: the new links and heights happen before a search that sees the new version.
    n->version.store(before + shrink_count, std::memory_order_release);
  }
  static void link_child(node* p, unsigned side, node* c) noexcept {
    // release: pairs with the acquire loads of searches.
    p->child[side].store(c, std::memory_order_release);
    if (c) c->parent.store(p, std::memory_order_release);
  }
  static void replace_child(node* parent, node* old_child, node* new_child) noexcept {
    const unsigned side = parent->child[left].load(std::memory_order_relaxed) == old_child ? left
                                                                                         : right;
    link_child(parent, side, new_child);
  }

  // A single rotation that lifts c (n's child on side s) above n (Bronson's rotateRight_nl for
  // s = left, mirrored for s = right). ho: the height of n's other subtree; hcc: c's outer
  // child's; cin: c's inner child (it moves to n), hcin its height. Returns where to look next:
  // n, then c, then the parent.
  static next_step rotate(guard_type& g, node* parent, node* n, unsigned s, node* c, int ho,
                          int hcc, node* cin, int hcin, unsigned slot) {
    const unsigned o = 1 - s;
    const version_type v = begin_shrink(n);
    link_child(n, s, cin);
    link_child(c, o, n);
    replace_child(parent, n, c);
    const int hn = 1 + std::max(hcin, ho);
    n->height.store(hn, std::memory_order_relaxed);
    c->height.store(1 + std::max(hcc, hn), std::memory_order_relaxed);
    end_shrink(n, v);
    const int bal_n = hcin - ho;
    if (bal_n < -1 || bal_n > 1) return {hold(g, n, slot), nullptr, true};
    if ((!cin || ho == 0) && !present(n)) return {hold(g, n, slot), nullptr, true};
    const int bal_c = hcc - hn;
    if (bal_c < -1 || bal_c > 1) return {hold(g, c, slot), nullptr, true};
    if (hcc == 0 && !present(c)) return {hold(g, c, slot), nullptr, true};
    return fix_height_nl(g, parent, slot);
  }

  // A double rotation that lifts x (c's inner child, c being n's child on side s, all three
  // locked) above both (Bronson's rotateRightOverLeft_nl for s = left). hcc: c's outer child's
  // height.
  static next_step rotate_double(guard_type& g, node* parent, node* n, unsigned s, node* c,
                                 int ho, int hcc, node* x, unsigned slot) {
    const unsigned o = 1 - s;
    node* x_in = x->child[s].load(std::memory_order_relaxed);   // goes to c
    node* x_out = x->child[o].load(std::memory_order_relaxed);  // goes to n
    const auto x_in_lock = lock_moving(x_in);
    const auto x_out_lock = lock_moving(x_out);
    const int hxin = height(x_in), hxout = height(x_out);
    const version_type vn = begin_shrink(n);
    const version_type vc = begin_shrink(c);
    link_child(n, s, x_out);
    link_child(c, o, x_in);
    link_child(x, s, c);
    link_child(x, o, n);
    replace_child(parent, n, x);
    const int hn = 1 + std::max(hxout, ho);
    n->height.store(hn, std::memory_order_relaxed);
    const int hc = 1 + std::max(hcc, hxin);
    c->height.store(hc, std::memory_order_relaxed);
    x->height.store(1 + std::max(hc, hn), std::memory_order_relaxed);
    end_shrink(n, vn);
    end_shrink(c, vc);
    const int bal_n = hxout - ho;
    if (bal_n < -1 || bal_n > 1) return {hold(g, n, slot), nullptr, true};
    if ((!x_out || ho == 0) && !present(n)) return {hold(g, n, slot), nullptr, true};
    if ((!x_in || hcc == 0) && !present(c)) return {hold(g, c, slot), nullptr, true};  // unlink
    const int bal_c = hcc - hxin;  // chosen within one, but x_in's height may have moved since
    if (bal_c < -1 || bal_c > 1) return {hold(g, c, slot), nullptr, true};
    const int bal_x = hc - hn;
    if (bal_x < -1 || bal_x > 1) return {hold(g, x, slot), nullptr, true};
    return fix_height_nl(g, parent, slot);
  }

  // In key order; nodes whose key is present.
  template <class F>
  void for_each_element(F f) const {
    std::vector<const node*> stack;
    const node* n = holder_.child[right].load(std::memory_order_acquire);
    while (n || !stack.empty()) {
      for (; n; n = n->child[left].load(std::memory_order_acquire)) stack.push_back(n);
      n = stack.back();
      stack.pop_back();
      if constexpr (api::is_map) {
        if (const entry* e = n->entry.load(std::memory_order_acquire)) f(*e);
      } else if (present(n)) {
        f(static_cast<const detail::element<Key, void>&>(*static_cast<const keyed*>(n)));
      }
      n = n->child[right].load(std::memory_order_acquire);
    }
  }

  node holder_;  // the root is its right child; its version never moves
};

// A set of keys ordered by Compare.
template <class Key, scheme Scheme, class Compare = std::less<Key>>
using occ_avl = basic_occ_avl<Key, void, Scheme, Compare>;
// A map from keys ordered by Compare to values fixed at insertion.
template <class Key, class Value, scheme Scheme, class Compare = std::less<Key>>
using occ_avl_map = basic_occ_avl<Key, Value, Scheme, Compare>;

}  // namespace reclaim::ds
