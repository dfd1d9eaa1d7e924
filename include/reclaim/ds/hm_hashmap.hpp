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
// table is an hm_list.
//
// Reclamation. Exactly hm_list's: every read is validated by re-reading the predecessor's link, so
// hazard pointers need three slots, and searches resume from the predecessor after helping, so NBR
// cannot protect it. Each operation is one guard over one bucket. basic_hm_hashmap is also
// hm_hashmap_restart (hm_hashmap_restart.hpp), whose buckets restart from their head after helping,
// the form NBR can protect.
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
#include "detail/hm_bucket.hpp"

namespace reclaim::ds {

template <class Key, class Value, scheme Scheme, class Hash = std::hash<Key>,
          class Compare = std::less<Key>,
          detail::hm_search Search = detail::hm_search::resume_after_helping>
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
              "restarting from the bucket head (use hm_hashmap_restart)"};
    return {true};
  }

  // `buckets` is rounded up to a power of two (at least 1).
  explicit basic_hm_hashmap(domain_type& domain = Scheme::default_domain(),
                            std::size_t buckets = default_buckets, const Hash& hash = Hash(),
                            const Compare& comp = Compare())
      : api(domain, comp, buckets, hash) {
    // offers()'s reason, repeated: a static_assert message must be a string literal.
    static_assert(meets<Scheme, basic_hm_hashmap>(needs_restartable_read_phases),
                  "hm_hashmap and hm_hashset cannot serve a scheme that needs restartable read "
                  "phases (nbr, nbr_plus): searches resume from the predecessor after unlinking a "
                  "marked node instead of restarting from the bucket head. Use hm_hashmap_restart "
                  "/ hm_hashset_restart (reclaim/ds/hm_hashmap_restart.hpp), which every scheme "
                  "can protect");
    static_assert(has_slots<Scheme, basic_hm_hashmap>(),
                  "hm_hashmap, hm_hashmap_restart and their sets protect 3 nodes at once (the "
                  "predecessor, the node and its successor), and this scheme's guard has fewer "
                  "hazard slots: use hp<reclaim::slots<3>> or more");
  }

  std::size_t bucket_count() const noexcept { return heads_.count(); }
  std::size_t bucket_of(const Key& key) const noexcept { return heads_.bucket_of(key); }
};

// A map from keys to values fixed at insertion, hashed by Hash, each bucket ordered by Compare.
template <class Key, class Value, scheme Scheme, class Hash = std::hash<Key>,
          class Compare = std::less<Key>>
using hm_hashmap = basic_hm_hashmap<Key, Value, Scheme, Hash, Compare>;
// A set of keys, hashed by Hash, each bucket ordered by Compare.
template <class Key, scheme Scheme, class Hash = std::hash<Key>, class Compare = std::less<Key>>
using hm_hashset = basic_hm_hashmap<Key, void, Scheme, Hash, Compare>;

}  // namespace reclaim::ds
