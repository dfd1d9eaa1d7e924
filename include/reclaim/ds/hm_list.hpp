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
// hm_hashmap, and the public operations in detail/bucket_api.hpp; this is the list with one head.
// `hm_list<Key, Scheme, Compare>` is a set, `hm_list_map<Key, Value, Scheme, Compare>` a map
// (detail/container_api.hpp); basic_hm_list is also hm_list_restart (hm_list_restart.hpp), whose
// searches restart from the head after helping.
#pragma once
#include <atomic>
#include <functional>
#include <string_view>
#include <utility>

#include "../concepts.hpp"
#include "detail/bucket_api.hpp"
#include "detail/hm_bucket.hpp"

namespace reclaim::ds {

template <class Key, class Value, scheme Scheme, class Compare = std::less<Key>,
          detail::hm_search Search = detail::hm_search::resume_after_helping>
class basic_hm_list
    : public detail::bucket_api<basic_hm_list<Key, Value, Scheme, Compare, Search>, Key, Value,
                                Scheme, Compare,
                                detail::hm_read_phase_bucket<Key, Value, Scheme, Compare, Search>> {
  using bucket = detail::hm_read_phase_bucket<Key, Value, Scheme, Compare, Search>;
  using api = detail::bucket_api<basic_hm_list, Key, Value, Scheme, Compare, bucket>;
  static constexpr bool restarts = Search == detail::hm_search::restart_after_helping;

 public:
  static constexpr std::string_view name = restarts ? (api::is_map ? "hm_list_restart_map"
                                                                   : "hm_list_restart")
                                                    : (api::is_map ? "hm_list_map" : "hm_list");
  using typename api::domain_type;
  static constexpr unsigned slots_used = bucket::slots_used;

  // Validated reads: the predecessor's link is re-read. Allocated nodes: the head is a link.
  static constexpr support offers(needs n) {
    if (n == needs_restartable_read_phases && !restarts)
      return {false,
              "searches resume from the predecessor after unlinking a marked node instead of "
              "restarting from the head (use hm_list_restart)"};
    return {true};
  }

  explicit basic_hm_list(domain_type& domain = Scheme::default_domain(),
                         const Compare& comp = Compare())
      : api(domain, comp) {
    // offers()'s reason, repeated: a static_assert message must be a string literal.
    static_assert(meets<Scheme, basic_hm_list>(needs_restartable_read_phases),
                  "hm_list and hm_list_map cannot serve a scheme that needs restartable read "
                  "phases (nbr, nbr_plus): searches resume from the predecessor after unlinking a "
                  "marked node instead of restarting from the head. Use hm_list_restart / "
                  "hm_list_restart_map (reclaim/ds/hm_list_restart.hpp), which every scheme can "
                  "protect");
    static_assert(has_slots<Scheme, basic_hm_list>(),
                  "hm_list, hm_list_restart and their maps protect 3 nodes at once (the "
                  "predecessor, the node and its successor), and this scheme's guard has fewer "
                  "hazard slots: use hp<reclaim::slots<3>> or more");
  }
};

// A set of keys ordered by Compare.
template <class Key, scheme Scheme, class Compare = std::less<Key>>
using hm_list = basic_hm_list<Key, void, Scheme, Compare>;
// A map from keys ordered by Compare to values fixed at insertion.
template <class Key, class Value, scheme Scheme, class Compare = std::less<Key>>
using hm_list_map = basic_hm_list<Key, Value, Scheme, Compare>;

}  // namespace reclaim::ds
