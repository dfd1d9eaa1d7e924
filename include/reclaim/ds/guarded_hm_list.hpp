// SPDX-License-Identifier: MIT
// guarded_hm_list: the Harris-Michael lock-free list (Michael, SPAA 2002) written with paper 003's
// smart pointers (Stamp-it, Pöter and Träff, section 2): links are concurrent_ptrs with one mark
// bit, the nodes a search dereferences are held by guard_ptrs, and each operation opens a
// region_guard.
//
// The algorithm, over one head, is detail/guarded_hm_bucket.hpp (shared with guarded_hm_hashmap,
// which has an array of heads): that of ds/hm_list.hpp written with three rotating guard_ptrs
// instead of a guard and three hazard slots, its validation the algorithm's own re-read of the
// predecessor's link, and the node a CAS unlinked retired with reclaim() on the guard_ptr that
// holds it. nbr and nbr_plus cannot serve it (offers() says why): a guard_ptr outlives any read
// phase.
//
// `guarded_hm_list<Key, Scheme, Compare>` is a set, `guarded_hm_list_map<Key, Value, Scheme,
// Compare>` a map, with hm_list's interface (detail/container_api.hpp); the map also hands out
// values held for as long as the caller keeps them (get(), value_ptr). The lab runs both forms to
// measure what the interface costs (docs/results.md).
#pragma once
#include <functional>
#include <string_view>
#include <utility>

#include "../concepts.hpp"
#include "detail/bucket_api.hpp"
#include "key_defaults.hpp"
#include "detail/guarded_hm_bucket.hpp"
#include "detail/lifetime_check.hpp"

namespace reclaim::ds {

// hm_list written with guard_ptr, a set (Value = void) or a map whose get() hands out held values:
// used as guarded_hm_list and guarded_hm_list_map (below).
template <class Key, class Value, scheme Scheme, class Compare = default_compare<Key>>
class basic_guarded_hm_list
    : public detail::bucket_api<basic_guarded_hm_list<Key, Value, Scheme, Compare>, Key, Value,
                                Scheme, Compare,
                                detail::guarded_hm_bucket<Key, Value, Scheme, Compare>> {
  using bucket = detail::guarded_hm_bucket<Key, Value, Scheme, Compare>;
  using api = detail::bucket_api<basic_guarded_hm_list, Key, Value, Scheme, Compare, bucket>;
  using api::domain_, api::life_, api::comp_, api::heads_;

 public:
  // Its name in the lab and in messages, the domain of Scheme it retires into, and what get()
  // returns (the value, held).
  static constexpr std::string_view name = api::is_map ? "guarded_hm_list_map" : "guarded_hm_list";
  using typename api::domain_type;
  using value_ptr = typename bucket::value_ptr;

  // Its answer to each need a scheme may have (concepts.hpp): all but restartable read phases.
  static constexpr support offers(needs n) {
    switch (n) {
      case needs_restartable_read_phases:
        return {false, "written with guard_ptr, which neutralization cannot serve"};
      case needs_allocated_nodes: return {true};  // heads are links, not nodes
      default: return {true};  // validated reads: the predecessor's link is re-read
    }
  }

  explicit basic_guarded_hm_list(domain_type& domain = Scheme::default_domain(),
                                 const Compare& comp = Compare())
      : api(domain, comp) {
    // Under nbr, guard_ptr's static_assert is the one error (it names the calls to use).
    static_assert(meets<Scheme, basic_guarded_hm_list>(needs_validated_reads) &&
                  meets<Scheme, basic_guarded_hm_list>(needs_allocated_nodes));
  }

  // Map: the key's value, held until the value_ptr is reset or destroyed (empty if absent).
  value_ptr get(const Key& key)
    requires api::is_map
  {
    detail::lifetime_check::operation op(life_);
    return bucket::get(domain_, heads_.head_of(key), comp_, key);
  }
};

// A set of keys ordered by Compare.
template <class Key, scheme Scheme, class Compare = default_compare<Key>>
using guarded_hm_list = basic_guarded_hm_list<Key, void, Scheme, Compare>;
// A map from keys ordered by Compare to values fixed at insertion.
template <class Key, class Value, scheme Scheme, class Compare = default_compare<Key>>
using guarded_hm_list_map = basic_guarded_hm_list<Key, Value, Scheme, Compare>;

}  // namespace reclaim::ds
