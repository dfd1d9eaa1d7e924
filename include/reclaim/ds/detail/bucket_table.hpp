// SPDX-License-Identifier: MIT
// The heads of the Harris-Michael containers (detail/bucket_api.hpp), with the quiescent walks over
// every bucket: the table of the hash maps (hm_hashmap, guarded_hm_hashmap), a fixed power-of-two
// array of bucket heads and the hash that picks one; and the one head of the lists (hm_list,
// guarded_hm_list), with the same interface.
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "container_api.hpp"

namespace reclaim::ds::detail {

// Head: a bucket's head link; Bucket (in the walks): the algorithm over one head, with static
// for_each_element(head, f) and well_formed(head, comp).
template <class Head, class Hash>
class bucket_table {
 public:
  // `buckets` is rounded up to a power of two (at least 1).
  bucket_table(std::size_t buckets, const Hash& hash)
      : hash_(hash),
        bits_(static_cast<unsigned>(std::countr_zero(std::bit_ceil(buckets ? buckets : 1)))),
        heads_(std::make_unique<Head[]>(count())) {}

  std::size_t count() const noexcept { return std::size_t{1} << bits_; }
  template <class Key>
  std::size_t bucket_of(const Key& key) const noexcept {
    return fibonacci_bucket(static_cast<std::uint64_t>(hash_(key)), bits_);
  }
  template <class Key>
  Head& head_of(const Key& key) noexcept {
    return heads_[bucket_of(key)];
  }

  // Quiescent: f(head) for every bucket, in order.
  template <class F>
  void for_each_head(F f) {
    for (std::size_t b = 0; b < count(); ++b) f(heads_[b]);
  }
  template <class Bucket, class F>
  void for_each_element(F f) const {
    for (std::size_t b = 0; b < count(); ++b) Bucket::for_each_element(heads_[b], f);
  }
  // Every bucket well formed, and every key in the bucket it hashes to.
  template <class Bucket, class Compare>
  bool well_formed(const Compare& comp) const {
    bool ok = true;
    for (std::size_t b = 0; b < count() && ok; ++b) {
      ok = Bucket::well_formed(heads_[b], comp);
      Bucket::for_each_element(heads_[b], [&](const auto& e) { ok = ok && bucket_of(e.key) == b; });
    }
    return ok;
  }

 private:
  [[no_unique_address]] Hash hash_;
  const unsigned bits_;  // log2 of the bucket count
  std::unique_ptr<Head[]> heads_;
};

template <class Head>
class one_bucket {
 public:
  template <class Key>
  Head& head_of(const Key&) noexcept {
    return head_;
  }

  template <class F>
  void for_each_head(F f) {
    f(head_);
  }
  template <class Bucket, class F>
  void for_each_element(F f) const {
    Bucket::for_each_element(head_, f);
  }
  template <class Bucket, class Compare>
  bool well_formed(const Compare& comp) const {
    return Bucket::well_formed(head_, comp);
  }

 private:
  Head head_{};
};

}  // namespace reclaim::ds::detail
