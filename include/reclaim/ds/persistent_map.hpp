// SPDX-License-Identifier: MIT
// persistent_map, persistent_set: a concurrent persistent ordered map (and set) written with
// counted pointers: every update makes a new immutable version by path copying and installs it
// with one compare-and-swap of the root, and any version stays readable, whole and unchanged, for
// as long as someone holds it.
//
// What it is. An immutable treap: a binary search tree by key that is also a heap by priority, the
// priority of a key being a hash of it (std::hash<Key>, mixed), so the tree's shape depends only on
// the set of keys, never on the order of updates, and its depth is O(log n) in expectation (for
// keys whose hashes are distinct and spread, which the mix gives any decent std::hash). Each node
// holds its element, its priority, the size of its subtree and counted pointers (owners) to its
// two children; all of it is written before the node is published and never again. The root is a
// location (an atomic_rc_ptr).
//
// Updates. A writer reads the root through a snapshot (no count touched), builds the new version
// beside it by copying the nodes on the key's path (and, for an insert, the nodes its split cuts;
// for an erase, those of the merge of the erased node's subtrees), each copy sharing the untouched
// subtrees by owner copies (one increment each), and replaces the root if it is still the one it
// read. Otherwise the new nodes are dropped and the writer starts again from the new root: lock-
// free, and a writer that loses wasted only its own allocations. An insert of a present key, and an
// erase of an absent one, change nothing and linearize at the read of the root.
//
// Reads. find, contains and size read the root through a snapshot and walk raw pointers: the root
// is alive while the snapshot holds it (its location's reference is dropped only after a grace
// period of the scheme), and each node keeps its children alive, so nothing on the walk is counted.
// snapshot() returns a version: an owner of the root, so that one increment keeps that whole
// version (every node reachable from its root) readable for as long as the version is held, from
// any thread, whatever writers do afterwards; size() is exact (kept in each node for its subtree),
// and for_each visits the elements in key order.
//
// Costs. An update makes O(log n) nodes in expectation, each one allocation holding a copy of an
// element (Key and Value must be copy constructible), and performs O(log n) increments; the
// version it replaces is freed, down to the nodes no other version shares, when its last holder
// lets go (after the scheme's grace period for the root's location). Holding a version costs
// nothing while no one updates; while others do, it keeps the nodes they replaced: at most the
// whole tree it was taken of, O(log n) more per later update until it is released. Reads touch no
// count and allocate nothing. Destroying a version recurses as deep as the tree (O(log n)).
//
// Which schemes: every one atomic_rc_ptr serves (rc_ptr.hpp), through the pointer family of
// detail/rc_family.hpp; the lab runs the same code over std::atomic<std::shared_ptr>.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "detail/container_api.hpp"
#include "detail/rc_family.hpp"

namespace reclaim::ds {

namespace detail {

// A key's treap priority: its hash through splitmix64's finalizer, so that keys whose std::hash
// is the identity (integers) get priorities spread over all 64 bits.
constexpr std::uint64_t treap_priority(std::uint64_t h) noexcept {
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
  return h ^ (h >> 31);
}

}  // namespace detail

// The map (Value not void) or set (Value = void) over a pointer family (detail/rc_family.hpp):
// persistent_map and persistent_set are the ones over reclaim's.
template <class Key, class Value, class Family, class Compare = std::less<>>
class basic_persistent_map {
  struct node;
  using owner = typename Family::template owner<node>;
  using element_type = detail::element<Key, Value>;
  static constexpr bool is_map = !std::is_void_v<Value>;
  // The argument list of an element's value: one for a map, none for a set.
  template <class... V>
  static constexpr bool value_args = sizeof...(V) == (is_map ? 1 : 0);

 public:
  // Its name in the lab and in messages, its types, and the domain its root location protects and
  // retires through.
  static constexpr std::string_view name = is_map ? "persistent_map" : "persistent_set";
  using key_type = Key;
  using mapped_type = Value;
  using key_compare = Compare;
  using domain_type = typename Family::domain_type;

  // An immutable version of the map: see the top of this file. Any thread may hold, copy, read and
  // drop it.
  class version {
   public:
    // An empty version: no elements.
    version() = default;

    // The value of key in this version, or nothing (a map only).
    auto find(const Key& key) const
      requires is_map
    {
      return value_in(root_.get(), key, less_);
    }
    // Whether key is in this version.
    bool contains(const Key& key) const { return lookup(root_.get(), key, less_) != nullptr; }
    // The number of elements of this version (exact), and whether it has none.
    std::size_t size() const noexcept { return size_of(root_.get()); }
    bool empty() const noexcept { return !root_; }
    // Calls f(key) (a set) or f(key, value) (a map) for each element, in key order.
    template <class F>
    void for_each(F&& f) const {
      walk(root_.get(), f);
    }

   private:
    friend basic_persistent_map;
    version(owner root, const Compare& less) : root_(std::move(root)), less_(less) {}

    owner root_;
    [[no_unique_address]] Compare less_;
  };

  // An empty map for `domain` (default: the family's default domain), ordered by `less`.
  explicit basic_persistent_map(domain_type& domain = Family::default_domain(),
                                const Compare& less = Compare())
      : domain_(domain), less_(less), root_(domain) {}
  basic_persistent_map(const basic_persistent_map&) = delete;
  basic_persistent_map& operator=(const basic_persistent_map&) = delete;

  // Inserts key (with value, for a map) if it is absent; returns whether it did.
  template <class... V>
    requires value_args<V...>
  bool insert(const Key& key, const V&... value) {
    const std::uint64_t priority = priority_of(key);
    return commit([&](const node* root) -> std::optional<owner> {
      if (lookup(root, key, less_)) return std::nullopt;
      return with_new(root, key, priority, value...);
    });
  }

  // Inserts key with value, or gives a present key value (a map only); returns whether it
  // inserted.
  template <class V>
    requires is_map
  bool insert_or_assign(const Key& key, const V& value) {
    const std::uint64_t priority = priority_of(key);
    bool inserted = false;
    commit([&](const node* root) -> std::optional<owner> {
      inserted = !lookup(root, key, less_);
      return inserted ? with_new(root, key, priority, value) : with_value(root, key, value);
    });
    return inserted;
  }

  // Erases key if it is present; returns whether it did.
  bool erase(const Key& key) {
    return commit([&](const node* root) -> std::optional<owner> {
      if (!lookup(root, key, less_)) return std::nullopt;
      return without(root, key);
    });
  }

  // The value of key, or nothing (a map only).
  auto find(const Key& key) const
    requires is_map
  {
    auto root = Family::read(root_);
    return value_in(root.get(), key, less_);
  }
  // Whether key is present.
  bool contains(const Key& key) const {
    auto root = Family::read(root_);
    return lookup(root.get(), key, less_) != nullptr;
  }
  // The number of elements (exact: the size of the current version).
  std::size_t size() const {
    auto root = Family::read(root_);
    return size_of(root.get());
  }
  // The current version, readable for as long as it is held (one increment).
  version snapshot() const { return version(Family::own(Family::read(root_)), less_); }

 private:
  struct node {
    // A node of priority p over subtrees l and r; its element is constructed from args.
    template <class... Args>
    node(std::uint64_t p, owner l, owner r, Args&&... args)
        : item(std::forward<Args>(args)...),
          priority(p),
          size(1 + size_of(l.get()) + size_of(r.get())),
          left(std::move(l)),
          right(std::move(r)) {}

    const element_type item;
    const std::uint64_t priority;
    const std::size_t size;  // of the subtree
    const owner left, right;
  };

  static std::uint64_t priority_of(const Key& key) {
    return detail::treap_priority(std::hash<Key>{}(key));
  }
  static std::size_t size_of(const node* t) noexcept { return t ? t->size : 0; }
  static const node* lookup(const node* t, const Key& key, const Compare& less) {
    while (t) {
      if (less(key, t->item.key)) t = t->left.get();
      else if (less(t->item.key, key)) t = t->right.get();
      else return t;
    }
    return nullptr;
  }
  // A copy of key's value in the subtree t, or nothing.
  static auto value_in(const node* t, const Key& key, const Compare& less)
    requires is_map
  {
    const node* n = lookup(t, key, less);
    return n ? std::optional<Value>(n->item.value) : std::optional<Value>();
  }
  template <class F>
  static void walk(const node* t, F& f) {
    if (!t) return;
    walk(t->left.get(), f);
    if constexpr (is_map) f(t->item.key, t->item.value);
    else f(t->item.key);
    walk(t->right.get(), f);
  }

  // Installs what step builds from the current root until the root has not changed meanwhile;
  // step returns the new root, or nothing when the update changes nothing (then so do we). Returns
  // whether a new version was installed.
  template <class Step>
  bool commit(Step step) {
    for (;;) {
      auto root = Family::read(root_);
      std::optional<owner> next = step(root.get());
      if (!next) return false;
      if (Family::replace(root_, root, std::move(*next))) return true;
    }
  }

  template <class... Args>
  owner make(std::uint64_t p, owner l, owner r, Args&&... args) {
    return Family::template make<node>(domain_, p, std::move(l), std::move(r),
                                       std::forward<Args>(args)...);
  }
  // A copy of t over new subtrees.
  owner copy(const node* t, owner l, owner r) {
    return make(t->priority, std::move(l), std::move(r), t->item);
  }

  // The subtree t with key (absent from it) inserted: the new node goes where its priority puts
  // it on the key's path, over the two halves of what was there.
  template <class... V>
  owner with_new(const node* t, const Key& key, std::uint64_t p, const V&... value) {
    if (!t || p > t->priority) {
      auto [l, r] = split(t, key);
      return make(p, std::move(l), std::move(r), key, value...);
    }
    if (less_(key, t->item.key))
      return copy(t, with_new(t->left.get(), key, p, value...), t->right);
    return copy(t, t->left, with_new(t->right.get(), key, p, value...));
  }
  // The subtree t cut into the keys below key and those above it (key is absent).
  std::pair<owner, owner> split(const node* t, const Key& key) {
    if (!t) return {};
    if (less_(t->item.key, key)) {
      auto [l, r] = split(t->right.get(), key);
      return {copy(t, t->left, std::move(l)), std::move(r)};
    }
    auto [l, r] = split(t->left.get(), key);
    return {std::move(l), copy(t, std::move(r), t->right)};
  }
  // The subtree t with the present key's value replaced.
  template <class V>
  owner with_value(const node* t, const Key& key, const V& value) {
    if (less_(key, t->item.key)) return copy(t, with_value(t->left.get(), key, value), t->right);
    if (less_(t->item.key, key)) return copy(t, t->left, with_value(t->right.get(), key, value));
    return make(t->priority, t->left, t->right, t->item.key, value);
  }
  // The subtree t without the present key: its node is replaced by the merge of its subtrees.
  owner without(const node* t, const Key& key) {
    if (less_(key, t->item.key)) return copy(t, without(t->left.get(), key), t->right);
    if (less_(t->item.key, key)) return copy(t, t->left, without(t->right.get(), key));
    return merge(t->left, t->right);
  }
  // The union of a and b, every key of a below every key of b: the higher priority of the two
  // roots stays on top.
  owner merge(const owner& a, const owner& b) {
    if (!a) return b;
    if (!b) return a;
    if (a->priority > b->priority) return copy(a.get(), a->left, merge(a->right, b));
    return copy(b.get(), merge(a, b->left), b->right);
  }

  domain_type& domain_;
  [[no_unique_address]] Compare less_;
  typename Family::template location<node> root_;
};

// The persistent map from Key to Value over reclaim's counted pointers under Scheme.
template <class Key, class Value, class Scheme = default_rc_scheme, class Compare = std::less<>>
using persistent_map = basic_persistent_map<Key, Value, detail::rc_family<Scheme>, Compare>;

// The persistent set of Key: the map's code with no value.
template <class Key, class Scheme = default_rc_scheme, class Compare = std::less<>>
using persistent_set = basic_persistent_map<Key, void, detail::rc_family<Scheme>, Compare>;

}  // namespace reclaim::ds
