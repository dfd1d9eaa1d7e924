// SPDX-License-Identifier: MIT
// guarded_hm_hashmap: Michael's lock-free hash table (Michael, SPAA 2002), a fixed array of
// Harris-Michael lists, written with paper 003's smart pointers: the hash map of paper 003's
// HashMap benchmark (section 4.1), whose threads hold the values they looked up in long-lived
// guard_ptrs.
//
// What it is. hm_hashmap's table (a power-of-two array of bucket heads, Fibonacci hashing, keys
// sorted per bucket) over guarded_hm_list's algorithm (detail/guarded_hm_bucket.hpp). Besides
// hm_hashmap's interface, get(key) returns the key's value held in a value_ptr: the node cannot
// be freed while the caller holds it, across any number of operations, even once the key is
// erased; under hp each value_ptr takes a hazard slot from its thread's pool, which grows as
// needed (the "dynamic number of hazard pointers" the paper gives hp for this benchmark); under
// the region schemes holding one keeps the thread inside an operation. nbr cannot serve it.
//
// `guarded_hm_hashmap<Key, Value, Scheme, Hash, Compare>` is the map, `guarded_hm_hashset<Key,
// Scheme, Hash, Compare>` the set (container_api.hpp). Progress: lock-free, as the lists.
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <utility>

#include "../concepts.hpp"
#include "detail/bucket_api.hpp"
#include "key_defaults.hpp"
#include "detail/guarded_hm_bucket.hpp"
#include "detail/lifetime_check.hpp"

namespace reclaim::ds {

// hm_hashmap written with guard_ptr, a set (Value = void) or a map whose get() hands out held
// values: used as guarded_hm_hashset and guarded_hm_hashmap (below).
template <class Key, class Value, scheme Scheme, class Hash = ds::hash<Key>,
          class Compare = default_compare<Key>>
class basic_guarded_hm_hashmap
    : public detail::bucket_api<basic_guarded_hm_hashmap<Key, Value, Scheme, Hash, Compare>, Key,
                                Value, Scheme, Compare,
                                detail::guarded_hm_bucket<Key, Value, Scheme, Compare>, Hash> {
  using bucket = detail::guarded_hm_bucket<Key, Value, Scheme, Compare>;
  using api =
      detail::bucket_api<basic_guarded_hm_hashmap, Key, Value, Scheme, Compare, bucket, Hash>;
  using api::domain_, api::life_, api::comp_, api::heads_;

 public:
  // Its name in the lab and in messages, the domain of Scheme it retires into, its hash, what get()
  // returns (the value, held), and the number of buckets it makes by default.
  static constexpr std::string_view name =
      api::is_map ? "guarded_hm_hashmap" : "guarded_hm_hashset";
  using typename api::domain_type;
  using hasher = Hash;
  using value_ptr = typename bucket::value_ptr;
  static constexpr std::size_t default_buckets = std::size_t{1} << 14;

  // Its answer to each need a scheme may have (concepts.hpp): all but restartable read phases.
  static constexpr support offers(needs n) {
    switch (n) {
      case needs_restartable_read_phases:
        return {false, "written with guard_ptr, which neutralization cannot serve"};
      case needs_allocated_nodes: return {true};  // heads are links, not nodes
      default: return {true};  // validated reads: the predecessor's link is re-read
    }
  }

  // `buckets` is rounded up to a power of two (at least 1).
  explicit basic_guarded_hm_hashmap(domain_type& domain = Scheme::default_domain(),
                                    std::size_t buckets = default_buckets,
                                    const Hash& hash = Hash(), const Compare& comp = Compare())
      : api(domain, comp, buckets, hash) {
    // Under nbr, guard_ptr's static_assert is the one error (it names the calls to use).
    static_assert(meets<Scheme, basic_guarded_hm_hashmap>(needs_validated_reads) &&
                  meets<Scheme, basic_guarded_hm_hashmap>(needs_allocated_nodes));
  }

  // Map: the key's value, held until the value_ptr is reset or destroyed (empty if absent).
  value_ptr get(const Key& key)
    requires api::is_map
  {
    detail::lifetime_check::operation op(life_);
    return bucket::get(domain_, heads_.head_of(key), comp_, key);
  }

  // The number of buckets (fixed at construction), and the bucket that `key` hashes to.
  std::size_t bucket_count() const noexcept { return heads_.count(); }
  std::size_t bucket_of(const Key& key) const noexcept { return heads_.bucket_of(key); }
};

template <class Key, class Value, scheme Scheme, class Hash = ds::hash<Key>,
          class Compare = default_compare<Key>>
using guarded_hm_hashmap = basic_guarded_hm_hashmap<Key, Value, Scheme, Hash, Compare>;

// A set of keys, hashed by Hash, each bucket ordered by Compare.
template <class Key, scheme Scheme, class Hash = ds::hash<Key>, class Compare = default_compare<Key>>
using guarded_hm_hashset = basic_guarded_hm_hashmap<Key, void, Scheme, Hash, Compare>;

}  // namespace reclaim::ds
