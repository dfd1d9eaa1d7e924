// SPDX-License-Identifier: MIT
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
// read phases do not restart from the root, which NBR cannot protect: under nbr and nbr_plus the
// list picks by itself hm_list_restart's search (detail::hm_search_for), so every scheme serves
// hm_list<Key, Scheme>, and every other scheme runs Michael's Find.
//
// The algorithm and its memory-ordering argument live in detail/hm_bucket.hpp, shared with
// hm_hashmap, and the public operations in detail/bucket_api.hpp; this is the list with one head.
// `hm_list<Key, Scheme, Compare>` is a set, `hm_list_map<Key, Value, Scheme, Compare>` a map
// (detail/container_api.hpp); basic_hm_list is also hm_list_restart (hm_list_restart.hpp), whose
// searches restart from the head after helping under every scheme.
#pragma once
#include <atomic>
#include <functional>
#include <string_view>
#include <utility>

#include "../concepts.hpp"
#include "detail/bucket_api.hpp"
#include "key_defaults.hpp"
#include "detail/hm_bucket.hpp"

namespace reclaim::ds {

// The Harris-Michael list, a set (Value = void) or a map ordered by Compare: used as hm_list and
// hm_list_map (below). Search picks how a search goes on after unlinking a marked node; the
// default restarts from the head under the schemes that need it (nbr).
template <class Key, class Value, scheme Scheme, class Compare = default_compare<Key>,
          detail::hm_search Search = detail::hm_search_for<Scheme>>
class basic_hm_list
    : public detail::bucket_api<basic_hm_list<Key, Value, Scheme, Compare, Search>, Key, Value,
                                Scheme, Compare,
                                detail::hm_read_phase_bucket<Key, Value, Scheme, Compare, Search>> {
  using bucket = detail::hm_read_phase_bucket<Key, Value, Scheme, Compare, Search>;
  using api = detail::bucket_api<basic_hm_list, Key, Value, Scheme, Compare, bucket>;
  static constexpr bool restarts = Search == detail::hm_search::restart_after_helping;

 public:
  // Its name in the lab and in messages (hm_list_restart where its searches restart), the domain of
  // Scheme it retires into, and the hazard slots an operation uses at once.
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
              "restarting from the head (hm_list and hm_list_restart restart under such a "
              "scheme)"};
    return {true};
  }

  explicit basic_hm_list(domain_type& domain = Scheme::default_domain(),
                         const Compare& comp = Compare())
      : api(domain, comp) {
    // offers()'s reason, repeated: a static_assert message must be a string literal.
    // Only an explicit hm_search::resume_after_helping fails it: the aliases pick the restart.
    static_assert(meets<Scheme, basic_hm_list>(needs_restartable_read_phases),
                  "basic_hm_list with hm_search::resume_after_helping cannot serve a scheme that "
                  "needs restartable read phases (nbr, nbr_plus): searches resume from the "
                  "predecessor after unlinking a marked node instead of restarting from the head. "
                  "Use hm_list / hm_list_map, which restart under such a scheme by themselves, or "
                  "hm_list_restart / hm_list_restart_map");
    static_assert(has_slots<Scheme, basic_hm_list>(),
                  "hm_list, hm_list_restart and their maps protect 3 nodes at once (the "
                  "predecessor, the node and its successor), and this scheme's guard has fewer "
                  "hazard slots: use hp<reclaim::slots<3>> or more");
  }
};

// A set of keys ordered by Compare; under nbr and nbr_plus it is hm_list_restart.
template <class Key, scheme Scheme, class Compare = default_compare<Key>>
using hm_list = basic_hm_list<Key, void, Scheme, Compare>;
// A map from keys ordered by Compare to values fixed at insertion; under nbr and nbr_plus it is
// hm_list_restart_map.
template <class Key, class Value, scheme Scheme, class Compare = default_compare<Key>>
using hm_list_map = basic_hm_list<Key, Value, Scheme, Compare>;

}  // namespace reclaim::ds
