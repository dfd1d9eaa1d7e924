// SPDX-License-Identifier: MIT
// hm_hashmap_restart: Michael's hash table (hm_hashmap.hpp) whose buckets are hm_list_restart
// lists: every read phase starts at the head of the key's bucket, the form NBR can protect.
//
// What changes from hm_hashmap. Only the bucket search (detail/hm_bucket.hpp with
// hm_search::restart_after_helping, exactly hm_list_restart's): a search that meets a marked node
// stops; the operation reserves the predecessor, the node and its successor (write phase), unlinks
// and retires the node if it can, and searches again from the bucket's head in a new read phase.
// The table, the hashing, the two-step erase, validated reads and three hazard slots are
// hm_hashmap's, from the same code. At a load factor near one a bucket holds about one node, so a
// restart costs little more than the resume it replaces.
//
// Reclamation: every scheme, hazard pointers (validated reads, three slots) and NBR (restartable
// read phases, three reservations) included. Progress: lock-free.
//
// `hm_hashmap_restart<Key, Value, Scheme, Hash, Compare>` is the map,
// `hm_hashset_restart<Key, Scheme, Hash, Compare>` the set. Under nbr and nbr_plus hm_hashmap is
// this same type (it picks the restart by itself); the name chooses the restart under every other
// scheme too, where the lab compares both forms.
#pragma once
#include <functional>

#include "../concepts.hpp"
#include "detail/hm_bucket.hpp"
#include "hm_hashmap.hpp"

namespace reclaim::ds {

// A map from keys to values fixed at insertion, hashed by Hash, each bucket ordered by Compare.
template <class Key, class Value, scheme Scheme, class Hash = ds::hash<Key>,
          class Compare = default_compare<Key>>
using hm_hashmap_restart =
    basic_hm_hashmap<Key, Value, Scheme, Hash, Compare, detail::hm_search::restart_after_helping>;
// A set of keys, hashed by Hash, each bucket ordered by Compare.
template <class Key, scheme Scheme, class Hash = ds::hash<Key>, class Compare = default_compare<Key>>
using hm_hashset_restart =
    basic_hm_hashmap<Key, void, Scheme, Hash, Compare, detail::hm_search::restart_after_helping>;

}  // namespace reclaim::ds
