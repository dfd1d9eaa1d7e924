// SPDX-License-Identifier: MIT
// hm_hashmap: Michael's lock-free hash table (Michael, SPAA 2002): a fixed array of buckets, each
// a Harris-Michael list (detail/hm_bucket.hpp, the algorithm hm_list runs on its one head).
//
// What it is. `hm_hashmap<Key, Value, Scheme, Hash, Compare>` maps keys to values fixed at
// insertion; `hm_hashset<Key, Scheme, Hash, Compare>` is its set form (container_api.hpp). A key's
// bucket is a multiplicative (Fibonacci) hash of Hash's value: the top bits of hash(key) x
// 2^64/phi, which spreads consecutive integers (std::hash of an integer is the integer) over all
// buckets; each bucket keeps its keys sorted by Compare. The bucket count is a power of two fixed
// at construction (the paper's table does not resize either); the default, 2^14, keeps the lab's
// 20K-key range near a load factor of one, so an operation visits about one node. A one-bucket
// table is an hm_list. The table never grows (a growing table is another algorithm: split-ordered
// lists, or cuckoo_map's table that doubles): size it for the keys expected.
//
// Beyond insert / erase / find: insert_or_assign and update replace a key's node in one step, and
// with the defaults (key_defaults.hpp) a std::string-keyed map looks up string_views as they are
// (detail/bucket_api.hpp).
//
// Reclamation. Exactly hm_list's: every read is validated by re-reading the predecessor's link, so
// hazard pointers need three slots. Searches resume from the predecessor after helping, which NBR
// cannot protect, so under nbr and nbr_plus the table picks by itself the buckets of
// hm_hashmap_restart (hm_hashmap_restart.hpp), which restart from their head after helping: every
// scheme serves hm_hashmap<Key, Value, Scheme>, and every scheme but those two runs Michael's Find
// (detail::hm_search_for). Each operation is one guard over one bucket.
//
// Progress: lock-free, as the lists. Differences from the paper: none in the algorithm; the table
// is allocated once and freed with the container (the bucket heads are never reclaimed).
#pragma once
#include <atomic>
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
#include "detail/hm_bucket.hpp"

namespace reclaim::ds {

// Michael's hash table of Harris-Michael lists, its buckets fixed at construction, a set (Value =
// void) or a map: used as hm_hashset and hm_hashmap (below). Search picks how a search goes on
// after unlinking a marked node; the default restarts under the schemes that need it (nbr).
template <class Key, class Value, scheme Scheme, class Hash = ds::hash<Key>,
          class Compare = default_compare<Key>,
          detail::hm_search Search = detail::hm_search_for<Scheme>>
class basic_hm_hashmap
    : public detail::bucket_api<basic_hm_hashmap<Key, Value, Scheme, Hash, Compare, Search>, Key,
                                Value, Scheme, Compare,
                                detail::hm_read_phase_bucket<Key, Value, Scheme, Compare, Search>,
                                Hash> {
  using bucket = detail::hm_read_phase_bucket<Key, Value, Scheme, Compare, Search>;
  using api = detail::bucket_api<basic_hm_hashmap, Key, Value, Scheme, Compare, bucket, Hash>;
  using api::heads_;
  static constexpr bool restarts = Search == detail::hm_search::restart_after_helping;

 public:
  // Its name in the lab and in messages (_restart where its searches restart), the domain of
  // Scheme it retires into, its hash, the hazard slots an operation uses at once, and the number of
  // buckets it makes by default.
  static constexpr std::string_view name =
      restarts ? (api::is_map ? "hm_hashmap_restart" : "hm_hashset_restart")
               : (api::is_map ? "hm_hashmap" : "hm_hashset");
  using typename api::domain_type;
  using hasher = Hash;
  static constexpr unsigned slots_used = bucket::slots_used;
  static constexpr std::size_t default_buckets = std::size_t{1} << 14;

  // Validated reads: the predecessor's link is re-read. Allocated nodes: the heads are links.
  static constexpr support offers(needs n) {
    if (n == needs_restartable_read_phases && !restarts)
      return {false,
              "searches resume from the predecessor after unlinking a marked node instead of "
              "restarting from the bucket head (hm_hashmap and hm_hashmap_restart restart under "
              "such a scheme)"};
    return {true};
  }

  // `buckets` is rounded up to a power of two (at least 1).
  explicit basic_hm_hashmap(domain_type& domain = Scheme::default_domain(),
                            std::size_t buckets = default_buckets, const Hash& hash = Hash(),
                            const Compare& comp = Compare())
      : api(domain, comp, buckets, hash) {
    // offers()'s reason, repeated: a static_assert message must be a string literal.
    // Only an explicit hm_search::resume_after_helping fails it: the aliases pick the restart.
    static_assert(meets<Scheme, basic_hm_hashmap>(needs_restartable_read_phases),
                  "basic_hm_hashmap with hm_search::resume_after_helping cannot serve a scheme "
                  "that needs restartable read phases (nbr, nbr_plus): searches resume from the "
                  "predecessor after unlinking a marked node instead of restarting from the bucket "
                  "head. Use hm_hashmap / hm_hashset, which restart under such a scheme by "
                  "themselves, or hm_hashmap_restart / hm_hashset_restart");
    static_assert(has_slots<Scheme, basic_hm_hashmap>(),
                  "hm_hashmap, hm_hashmap_restart and their sets protect 3 nodes at once (the "
                  "predecessor, the node and its successor), and this scheme's guard has fewer "
                  "hazard slots: use hp<reclaim::slots<3>> or more");
  }

  // The number of buckets (fixed at construction), and the bucket that `key` hashes to.
  std::size_t bucket_count() const noexcept { return heads_.count(); }
  std::size_t bucket_of(const Key& key) const noexcept { return heads_.bucket_of(key); }
};

// A map from keys to values fixed at insertion, hashed by Hash, each bucket ordered by Compare;
// under nbr and nbr_plus it is hm_hashmap_restart.
template <class Key, class Value, scheme Scheme, class Hash = ds::hash<Key>,
          class Compare = default_compare<Key>>
using hm_hashmap = basic_hm_hashmap<Key, Value, Scheme, Hash, Compare>;
// A set of keys, hashed by Hash, each bucket ordered by Compare; under nbr and nbr_plus it is
// hm_hashset_restart.
template <class Key, scheme Scheme, class Hash = ds::hash<Key>, class Compare = default_compare<Key>>
using hm_hashset = basic_hm_hashmap<Key, void, Scheme, Hash, Compare>;

}  // namespace reclaim::ds
