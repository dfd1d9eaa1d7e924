// SPDX-License-Identifier: MIT
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
//
// It is basic_hm_list (hm_list.hpp) with the restart policy: `hm_list_restart<Key, Scheme,
// Compare>` is the set, `hm_list_restart_map<Key, Value, Scheme, Compare>` the map. Under nbr and
// nbr_plus hm_list is this same type (it picks the restart by itself); the name chooses the
// restart under every other scheme too, as experiment E4 compares it there.
#pragma once
#include <functional>

#include "../concepts.hpp"
#include "detail/hm_bucket.hpp"
#include "hm_list.hpp"

namespace reclaim::ds {

// A set of keys ordered by Compare.
template <class Key, scheme Scheme, class Compare = default_compare<Key>>
using hm_list_restart =
    basic_hm_list<Key, void, Scheme, Compare, detail::hm_search::restart_after_helping>;
// A map from keys ordered by Compare to values fixed at insertion.
template <class Key, class Value, scheme Scheme, class Compare = default_compare<Key>>
using hm_list_restart_map =
    basic_hm_list<Key, Value, Scheme, Compare, detail::hm_search::restart_after_helping>;

}  // namespace reclaim::ds
