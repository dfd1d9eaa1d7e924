// The Harris-Michael containers around their buckets (a bucket: a sorted list over one head): the
// same in hm_list (one head) and hm_hashmap (a table of them), and in their guarded_* forms, whose
// buckets are written with guard_ptr. Each public operation hands the key to the bucket it belongs
// in; the heads, their destruction and the quiescent walks are here too.
//
// Bucket is detail::hm_bucket or detail::guarded_hm_bucket: static lookup(domain, head, comp, key,
// f) (contains with f = nullptr, visit with f), emplace(...) and erase(...), each the whole
// operation, its guard included, with the comparison it takes (Bucket::compare_type); and the
// quiescent destroy_all, for_each_element and well_formed over one head. Hash is void for a list
// (one head: one_bucket) and the hash of a hash map's table (bucket_table). It is also the
// container's sorted_base (detail/container_base.hpp): its domain_, life_ and comp_, followed by
// heads_.
#pragma once
#include <cstddef>
#include <type_traits>
#include <utility>

#include "bucket_table.hpp"
#include "container_api.hpp"
#include "container_base.hpp"
#include "lifetime_check.hpp"

namespace reclaim::ds::detail {

template <class Derived, class Key, class Value, class Scheme, class Compare, class Bucket,
          class Hash = void>
class bucket_api : public container_api<Derived, Key, Value>,
                   public sorted_base<Scheme, Compare, typename Bucket::compare_type> {
  using state = sorted_base<Scheme, Compare, typename Bucket::compare_type>;
  using head_type = typename Bucket::head_type;

 public:
  using container = container_api<Derived, Key, Value>;

  bool contains(const Key& key) {
    lifetime_check::operation op(this->life_);
    return Bucket::lookup(this->domain_, heads_.head_of(key), this->comp_, key, nullptr);
  }
  bool erase(const Key& key) {
    lifetime_check::operation op(this->life_);
    return Bucket::erase(this->domain_, heads_.head_of(key), this->comp_, key);
  }
  // Map: calls f(const Value&) with the key's value, if present, while the node is protected (held
  // by a guard_ptr in the guarded_* forms); the reference must not escape f. Returns whether the
  // key was present.
  template <class F>
    requires container::is_map
  bool visit(const Key& key, F&& f) {
    lifetime_check::operation op(this->life_);
    return Bucket::lookup(this->domain_, heads_.head_of(key), this->comp_, key,
                          std::forward<F>(f));
  }

  // Quiescent (size(), for_each() and key_sum() come from container_api): in every bucket keys
  // strictly increasing and no marked node reachable, and in a hash map every key in the bucket it
  // hashes to.
  bool well_formed() const { return heads_.template well_formed<Bucket>(this->comp_); }

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
