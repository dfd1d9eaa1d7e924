// SPDX-License-Identifier: MIT
// The Harris-Michael containers around their buckets (a bucket: a sorted list over one head): the
// same in hm_list (one head) and hm_hashmap (a table of them), and in their guarded_* forms, whose
// buckets are written with guard_ptr. Each public operation hands the key to the bucket it belongs
// in; the heads, their destruction and the quiescent walks are here too.
//
// Bucket is detail::hm_bucket or detail::guarded_hm_bucket: static lookup(domain, head, comp, key,
// f) (contains with f = nullptr, visit with f), emplace(...) and erase(...), each the whole
// operation, its guard included, with the comparison it takes (Bucket::compare_type); the quiescent
// destroy_all, for_each_element and well_formed over one head; and, where the bucket offers it
// (concurrent_walk), walk(), the concurrent walk behind for_each(). Hash is void for a list (one
// head: one_bucket) and the hash of a hash map's table (bucket_table). It is also the container's
// sorted_base (detail/container_base.hpp): its domain_, life_ and comp_, followed by heads_.
#pragma once
#include <cstddef>
#include <functional>
#include <type_traits>
#include <utility>

#include "bucket_table.hpp"
#include "container_api.hpp"
#include "container_base.hpp"
#include "lifetime_check.hpp"

namespace reclaim::ds::detail {

// A bucket whose walk() any thread may run while others update it (detail/hm_bucket.hpp).
template <class Bucket>
concept concurrent_walk = Bucket::walks_concurrently;

template <class Derived, class Key, class Value, class Scheme, class Compare, class Bucket,
          class Hash = void>
class bucket_api : public container_api<Derived, Key, Value>,
                   public sorted_base<Scheme, Compare, typename Bucket::compare_type> {
  using state = sorted_base<Scheme, Compare, typename Bucket::compare_type>;
  using head_type = typename Bucket::head_type;

 public:
  // Its container_api base: insert(), find(), size() and the quiescent traversals.
  using container = container_api<Derived, Key, Value>;

  // Heterogeneous lookup: contains, erase, visit, find and update also take a key of another type
  // K when Compare (and the hash of a hash map) is transparent (declares is_transparent, as
  // std::less<> does, and ds::hash and ds::default_compare for strings, key_defaults.hpp): K is
  // then compared with the stored keys (and hashed) as it is, never converted to Key.
  template <class K>
  static constexpr bool transparent_for =
      !std::is_same_v<std::remove_cvref_t<K>, Key> && transparent<Compare> &&
      (std::is_void_v<Hash> || transparent<Hash>);

  // Whether the key is present; with a transparent Compare (and Hash), any key type they accept.
  bool contains(const Key& key) { return contains<Key>(key); }
  template <class K>
    requires transparent_for<K> || std::is_same_v<K, Key>
  bool contains(const K& key) {
    lifetime_check::operation op(this->life_);
    return Bucket::lookup(this->domain_, heads_.head_of(key), this->comp_, key, nullptr);
  }
  // Removes the key; false if it was absent. The node is retired, freed when the scheme allows.
  bool erase(const Key& key) { return erase<Key>(key); }
  template <class K>
    requires transparent_for<K> || std::is_same_v<K, Key>
  bool erase(const K& key) {
    lifetime_check::operation op(this->life_);
    return Bucket::erase(this->domain_, heads_.head_of(key), this->comp_, key) && this->erased();
  }
  // Map: calls f(const Value&) with the key's value, if present, while the node is protected (held
  // by a guard_ptr in the guarded_* forms); the reference must not escape f. Returns whether the
  // key was present.
  template <class F>
    requires container::is_map
  bool visit(const Key& key, F&& f) {
    return visit<Key>(key, std::forward<F>(f));
  }
  template <class K, class F>
    requires container::is_map && (transparent_for<K> || std::is_same_v<K, Key>)
  bool visit(const K& key, F&& f) {
    lifetime_check::operation op(this->life_);
    return Bucket::lookup(this->domain_, heads_.head_of(key), this->comp_, key,
                          std::forward<F>(f));
  }

  // Map (hm_list_map, hm_hashmap and their restart forms): inserts (key, value) if the key is
  // absent, or else replaces its value; returns true if it inserted, false if it assigned. Keys and
  // values never change in their nodes, so an assignment replaces the key's node by a new one, in
  // one step (detail/hm_bucket.hpp, replace()): a concurrent lookup finds the old value or the new
  // one, never no value. Key must be copyable (the node takes a copy).
  template <class V = Value>
    requires container::is_map && Bucket::replaces
  bool insert_or_assign(Key key, std::type_identity_t<V> value) {
    lifetime_check::operation op(this->life_);
    return this->count_inserted(
        Bucket::assign(this->domain_, heads_.head_of(key), this->comp_, key, std::move(value)));
  }
  // Map: replaces the value of a present key by f(const Value&) (a Value), atomically with respect
  // to every other operation on the key: f is called again, on the value found then, if another
  // update, insert_or_assign or erase changed the key's node first, so f must be free of side
  // effects that may not repeat. Returns whether the key was present (f is not called otherwise).
  // f runs while the node is protected, outside any read phase (it may allocate).
  template <class F>
    requires container::is_map && Bucket::replaces
  bool update(const Key& key, F&& f) {
    return update<Key>(key, std::forward<F>(f));
  }
  template <class K, class F>
    requires container::is_map && Bucket::replaces && (transparent_for<K> || std::is_same_v<K, Key>)
  bool update(const K& key, F&& f) {
    static_assert(std::is_convertible_v<std::invoke_result_t<F&, const Value&>, Value>,
                  "update(key, f): f(const Value&) must return the new Value");
    lifetime_check::operation op(this->life_);
    return Bucket::update(this->domain_, heads_.head_of(key), this->comp_, key, f);
  }

  // Quiescent (unsafe_size(), unsafe_for_each() and unsafe_key_sum() come from container_api): in
  // every bucket keys strictly increasing and no marked node reachable, and in a hash map every key
  // in the bucket it hashes to.
  bool unsafe_well_formed() const { return heads_.template well_formed<Bucket>(this->comp_); }

  // Any thread, at any time, while others insert and erase (hm_list, hm_hashmap and their restart
  // forms; the guarded_* forms have only unsafe_for_each()): f(key) for a set, f(key, value) for a
  // map, on each element, in key order (a hash map: bucket by bucket, each in key order), while
  // the element's node is protected; the references must not escape f. Weakly consistent: every
  // element present for the whole call is visited exactly once; one inserted or erased during the
  // call at most once (hm_bucket.hpp, walk()). f runs outside any read phase: it may allocate.
  template <class F>
    requires concurrent_walk<Bucket>
  void for_each(F f) {
    lifetime_check::operation op(this->life_);
    auto visit_element = [&f](const element<Key, Value>& e) {
      if constexpr (container::is_map)
        f(e.key, e.value);
      else
        f(e.key);
    };
    heads_.for_each_head([&](head_type& head) {
      Bucket::walk(this->domain_, head, this->comp_, visit_element);
    });
  }

 protected:
  // `heads` makes the table (bucket count and hash) of a hash map; nothing, the list's one head.
  template <class... Heads>
  bucket_api(typename Scheme::domain& domain, const Compare& comp, Heads&&... heads)
      : state(domain, comp), heads_(std::forward<Heads>(heads)...) {}
  ~bucket_api() {
    this->life_.before_destruction(this->domain_);
    heads_.for_each_head(Bucket::destroy_all);
  }

  std::conditional_t<std::is_void_v<Hash>, one_bucket<head_type>, bucket_table<head_type, Hash>>
      heads_;

 private:
  friend container;

  template <class K, class... V>
  bool emplace(K&& key, V&&... value) {
    lifetime_check::operation op(this->life_);
    return Bucket::emplace(this->domain_, heads_.head_of(key), this->comp_, std::forward<K>(key),
                           std::forward<V>(value)...);
  }
  // In a hash map bucket by bucket, each in key order.
  template <class F>
  void for_each_element(F f) const {
    heads_.template for_each_element<Bucket>(f);
  }
};

}  // namespace reclaim::ds::detail
