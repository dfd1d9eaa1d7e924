// hm_list: the Harris-Michael lock-free list (Michael, SPAA 2002).
//
// A sorted list whose nodes are deleted in two steps: erase marks the node's next pointer (logical
// deletion), then unlinks it with a CAS on the predecessor. Searches help: a marked node met on
// the way is unlinked and retired by whoever unlinks it, and the search goes on from the same
// predecessor. A search restarts from the head only when the predecessor changed under it.
//
// Every read is validated by re-reading the predecessor's link (the algorithm does that for its own
// correctness), which is exactly what hazard pointers need: three slots, for the predecessor, the
// current node and its successor. Because searches resume from the predecessor after helping, its
// read phases do not restart from the root: NBR cannot protect it (see hm_list_restart).
//
// The algorithm and its memory-ordering argument live in detail/hm_bucket.hpp, shared with
// hm_hashmap; this is the list with one head.
#pragma once
#include <atomic>
#include <cstdint>
#include <limits>
#include <string_view>

#include "../concepts.hpp"
#include "detail/hm_bucket.hpp"

namespace reclaim::ds {

template <scheme Scheme>
class hm_list {
  using bucket = detail::hm_bucket<Scheme>;

 public:
  static constexpr std::string_view name = "hm_list";
  using key_type = typename bucket::key_type;
  using domain_type = typename Scheme::domain;
  using guard_type = typename Scheme::guard;
  static constexpr key_type min_key = std::numeric_limits<key_type>::min();
  static constexpr key_type max_key = std::numeric_limits<key_type>::max();
  static constexpr unsigned slots_used = bucket::slots_used;

  static constexpr support offers(needs n) { return bucket::offers(n); }

  explicit hm_list(domain_type& domain = Scheme::default_domain()) : domain_(domain) {
    static_assert(protects<Scheme, hm_list>);
    if constexpr (guard_type::validates) static_assert(guard_type::slot_count >= slots_used);
  }
  ~hm_list() { bucket::destroy_all(head_); }
  hm_list(const hm_list&) = delete;
  hm_list& operator=(const hm_list&) = delete;

  bool contains(key_type key) {
    return bucket::contains(domain_, head_, key);
  }
  bool insert(key_type key) {
    return bucket::insert(domain_, head_, key);
  }
  bool erase(key_type key) {
    return bucket::erase(domain_, head_, key);
  }

  // Quiescent traversals for validation: call only while no operation runs.
  std::size_t size() const {
    std::size_t n = 0;
    bucket::for_each_key(head_, [&](key_type) { ++n; });
    return n;
  }
  std::int64_t key_sum() const {
    std::int64_t s = 0;
    bucket::for_each_key(head_, [&](key_type k) { s += k; });
    return s;
  }
  // Keys strictly increasing and no marked node reachable.
  bool well_formed() const { return bucket::well_formed(head_); }

 private:
  domain_type& domain_;
  typename bucket::head_type head_{};
};

}  // namespace reclaim::ds
