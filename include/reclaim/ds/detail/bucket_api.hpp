// The public operations of the Harris-Michael containers, which hand each operation to one bucket
// (a sorted list over one head): the same in hm_list (one head) and hm_hashmap (a table of them),
// and in their guarded_* forms, whose buckets are written with guard_ptr.
//
// Bucket is detail::hm_bucket or detail::guarded_hm_bucket: static lookup(domain, head, comp, key,
// f) (contains with f = nullptr, visit with f), emplace(...) and erase(...), each the whole
// operation, its guard included, with the comparison it takes (Bucket::compare_type). It is also the container's
// sorted_base (detail/container_base.hpp): its domain_, life_ and comp_. The container (Derived)
// provides, privately (friend bucket_api), besides container_api's for_each_element:
//   head_of(key)             the head of the key's bucket
#pragma once
#include <utility>

#include "container_api.hpp"
#include "container_base.hpp"
#include "lifetime_check.hpp"

namespace reclaim::ds::detail {

template <class Derived, class Key, class Value, class Scheme, class Compare, class Bucket>
class bucket_api : public container_api<Derived, Key, Value>,
                   public sorted_base<Scheme, Compare, typename Bucket::compare_type> {
 public:
  using container = container_api<Derived, Key, Value>;

  bool contains(const Key& key) {
    lifetime_check::operation op(this->life_);
    return Bucket::lookup(this->domain_, self().head_of(key), this->comp_, key, nullptr);
  }
  bool erase(const Key& key) {
    lifetime_check::operation op(this->life_);
    return Bucket::erase(this->domain_, self().head_of(key), this->comp_, key);
  }
  // Map: calls f(const Value&) with the key's value, if present, while the node is protected (held
  // by a guard_ptr in the guarded_* forms); the reference must not escape f. Returns whether the
  // key was present.
  template <class F>
    requires container::is_map
  bool visit(const Key& key, F&& f) {
    lifetime_check::operation op(this->life_);
    return Bucket::lookup(this->domain_, self().head_of(key), this->comp_, key, std::forward<F>(f));
  }

 protected:
  using sorted_base<Scheme, Compare, typename Bucket::compare_type>::sorted_base;

 private:
  friend container;

  Derived& self() noexcept { return static_cast<Derived&>(*this); }

  template <class K, class... V>
  bool emplace(K&& key, V&&... value) {
    lifetime_check::operation op(this->life_);
    return Bucket::emplace(this->domain_, self().head_of(key), this->comp_, std::forward<K>(key),
                           std::forward<V>(value)...);
  }
};

}  // namespace reclaim::ds::detail
