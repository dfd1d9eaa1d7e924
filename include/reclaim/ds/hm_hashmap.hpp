// hm_hashmap: Michael's lock-free hash table (Michael, SPAA 2002): a fixed array of buckets, each
// a Harris-Michael list (detail/hm_bucket.hpp, the algorithm hm_list runs on its one head).
//
// What it is. A set of int64 keys. A key's bucket is a multiplicative (Fibonacci) hash of the key:
// the top bits of key x 2^64/phi, which spreads consecutive keys over all buckets. The bucket count
// is a power of two fixed at construction (the paper's table does not resize either); the default,
// 2^14, keeps the lab's 20K-key range near a load factor of one, so an operation visits about one
// node. A one-bucket table is an hm_list.
//
// Reclamation. Exactly hm_list's: every read is validated by re-reading the predecessor's link, so
// hazard pointers need three slots, and searches resume from the predecessor after helping, so NBR
// cannot protect it. Each operation is one guard over one bucket.
//
// Progress: lock-free, as the lists. Differences from the paper: none in the algorithm; the table
// is allocated once and freed with the container (the bucket heads are never reclaimed).
#pragma once
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string_view>

#include "../concepts.hpp"
#include "detail/hm_bucket.hpp"

namespace reclaim::ds {

template <scheme Scheme>
class hm_hashmap {
  using bucket = detail::hm_bucket<Scheme>;

 public:
  static constexpr std::string_view name = "hm_hashmap";
  using key_type = typename bucket::key_type;
  using domain_type = typename Scheme::domain;
  using guard_type = typename Scheme::guard;
  static constexpr key_type min_key = std::numeric_limits<key_type>::min();
  static constexpr key_type max_key = std::numeric_limits<key_type>::max();
  static constexpr unsigned slots_used = bucket::slots_used;
  static constexpr std::size_t default_buckets = std::size_t{1} << 14;

  static constexpr support offers(needs n) { return bucket::offers(n); }

  // `buckets` is rounded up to a power of two (at least 1).
  explicit hm_hashmap(domain_type& domain = Scheme::default_domain(),
                      std::size_t buckets = default_buckets)
      : domain_(domain),
        bits_(static_cast<unsigned>(std::countr_zero(std::bit_ceil(buckets ? buckets : 1)))),
        heads_(std::make_unique<typename bucket::head_type[]>(bucket_count())) {
    static_assert(protects<Scheme, hm_hashmap>);
    if constexpr (guard_type::validates) static_assert(guard_type::slot_count >= slots_used);
  }
  ~hm_hashmap() {
    for (std::size_t b = 0; b < bucket_count(); ++b) bucket::destroy_all(heads_[b]);
  }
  hm_hashmap(const hm_hashmap&) = delete;
  hm_hashmap& operator=(const hm_hashmap&) = delete;

  bool contains(key_type key) {
    return bucket::contains(domain_, head_of(key), key);
  }
  bool insert(key_type key) {
    return bucket::insert(domain_, head_of(key), key);
  }
  bool erase(key_type key) {
    return bucket::erase(domain_, head_of(key), key);
  }

  std::size_t bucket_count() const noexcept { return std::size_t{1} << bits_; }
  std::size_t bucket_of(key_type key) const noexcept {
    // Fibonacci hashing: the top bits_ bits of key x 2^64/phi (none for a single bucket).
    const std::uint64_t h = static_cast<std::uint64_t>(key) * 0x9E3779B97F4A7C15ull;
    return bits_ == 0 ? 0 : static_cast<std::size_t>(h >> (64 - bits_));
  }

  // Quiescent traversals for validation: call only while no operation runs.
  std::size_t size() const {
    std::size_t n = 0;
    for_each_key([&](std::size_t, key_type) { ++n; });
    return n;
  }
  std::int64_t key_sum() const {
    std::int64_t s = 0;
    for_each_key([&](std::size_t, key_type k) { s += k; });
    return s;
  }
  // Every bucket well formed (keys strictly increasing, no marked node reachable), and every key in
  // the bucket it hashes to.
  bool well_formed() const {
    bool ok = true;
    for (std::size_t b = 0; b < bucket_count() && ok; ++b) ok = bucket::well_formed(heads_[b]);
    for_each_key([&](std::size_t b, key_type k) { ok = ok && bucket_of(k) == b; });
    return ok;
  }

 private:
  typename bucket::head_type& head_of(key_type key) noexcept { return heads_[bucket_of(key)]; }

  template <class F>
  void for_each_key(F f) const {
    for (std::size_t b = 0; b < bucket_count(); ++b)
      bucket::for_each_key(heads_[b], [&](key_type k) { f(b, k); });
  }

  domain_type& domain_;
  const unsigned bits_;  // log2 of the bucket count
  std::unique_ptr<typename bucket::head_type[]> heads_;
};

}  // namespace reclaim::ds
