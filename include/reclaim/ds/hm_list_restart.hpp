// hm_list_restart: the Harris-Michael list (Michael, SPAA 2002) changed so that every read phase
// starts at the head: the list paper 000 builds for its experiment E4 ("the cost of restarting from
// the root"), and the form NBR can protect.
//
// What changes from hm_list. A search that meets a marked node stops; the operation reserves the
// predecessor, the node and its successor (write phase), unlinks and retires the node if it can,
// and searches again from the head. Everything else (the two-step erase, validated reads, three
// hazard slots) is hm_list's, from the same code (detail/hm_bucket.hpp with
// hm_search::restart_after_helping). With k threads contending to unlink one marked node, k threads
// restart instead of k - 1: the list is then close to Harris's (harris_list), which unlinks whole
// marked chains.
//
// Reclamation: every scheme, hazard pointers (validated reads, three slots) and NBR (restartable
// read phases, three reservations) included. Progress: lock-free; the extra restarts cost a
// traversal from the head each, which the paper measures (E4).
#pragma once
#include <cstdint>
#include <limits>
#include <string_view>

#include "../concepts.hpp"
#include "detail/hm_bucket.hpp"

namespace reclaim::ds {

template <scheme Scheme>
class hm_list_restart {
  using bucket = detail::hm_bucket<Scheme, detail::hm_search::restart_after_helping>;

 public:
  static constexpr std::string_view name = "hm_list_restart";
  using key_type = typename bucket::key_type;
  using domain_type = typename Scheme::domain;
  using guard_type = typename Scheme::guard;
  static constexpr key_type min_key = std::numeric_limits<key_type>::min();
  static constexpr key_type max_key = std::numeric_limits<key_type>::max();
  static constexpr unsigned slots_used = bucket::slots_used;

  static constexpr support offers(needs n) { return bucket::offers(n); }

  explicit hm_list_restart(domain_type& domain = Scheme::default_domain()) : domain_(domain) {
    static_assert(protects<Scheme, hm_list_restart>);
    if constexpr (guard_type::validates) static_assert(guard_type::slot_count >= slots_used);
  }
  ~hm_list_restart() { bucket::destroy_all(head_); }
  hm_list_restart(const hm_list_restart&) = delete;
  hm_list_restart& operator=(const hm_list_restart&) = delete;

  bool contains(key_type key) { return bucket::contains(domain_, head_, key); }
  bool insert(key_type key) { return bucket::insert(domain_, head_, key); }
  bool erase(key_type key) { return bucket::erase(domain_, head_, key); }

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
