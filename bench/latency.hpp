// SPDX-License-Identifier: MIT
// Per-operation latency, sampled: a worker times one operation in about `mean_gap` (the gap drawn
// at random, so that the samples do not fall into step with a scheme's own period, such as debra's
// check every 20 operations) and adds it to a histogram of its own; the trial merges the workers'
// histograms and reports percentiles. The cost per operation is a decrement and a branch; a sampled
// operation costs two reads of the steady clock.
#pragma once
#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstdint>

#include "registry.hpp"
#include "rng.hpp"

namespace reclaim_bench {

// Log-linear buckets: exact below 2^sub_bits ns, then 2^sub_bits buckets per power of two, so that
// a percentile is known to within 1/2^sub_bits (3%) of its value.
class latency_histogram {
 public:
  static constexpr unsigned sub_bits = 5;
  static constexpr std::size_t sub_count = std::size_t{1} << sub_bits;
  static constexpr std::size_t bucket_count = (64 - sub_bits + 1) * sub_count;

  void add(std::uint64_t ns) noexcept {
    ++counts_[bucket_of(ns)];
    ++samples_;
    if (ns > max_) max_ = ns;
  }

  latency_histogram& operator+=(const latency_histogram& h) noexcept {
    for (std::size_t i = 0; i < bucket_count; ++i) counts_[i] += h.counts_[i];
    samples_ += h.samples_;
    if (h.max_ > max_) max_ = h.max_;
    return *this;
  }

  // The value below which a fraction q of the samples lie: the upper end of its bucket (the max
  // for the last one). 0 without samples.
  std::uint64_t percentile(double q) const noexcept {
    if (samples_ == 0) return 0;
    const auto rank = static_cast<std::uint64_t>(q * static_cast<double>(samples_ - 1)) + 1;
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < bucket_count; ++i) {
      seen += counts_[i];
      if (seen >= rank) return std::min(upper_end(i), max_);
    }
    return max_;
  }

  latency_summary summary() const noexcept {
    return {samples_, percentile(0.5), percentile(0.99), percentile(0.999), max_};
  }

 private:
  static std::size_t bucket_of(std::uint64_t ns) noexcept {
    if (ns < sub_count) return static_cast<std::size_t>(ns);
    const unsigned shift = static_cast<unsigned>(std::bit_width(ns)) - 1 - sub_bits;
    return (shift + 1) * sub_count + static_cast<std::size_t>((ns >> shift) & (sub_count - 1));
  }
  static std::uint64_t upper_end(std::size_t bucket) noexcept {
    if (bucket < sub_count) return bucket;
    const unsigned shift = static_cast<unsigned>(bucket / sub_count) - 1;
    const std::uint64_t low = (sub_count | (bucket % sub_count)) << shift;
    return low + ((std::uint64_t{1} << shift) - 1);
  }

  std::array<std::uint64_t, bucket_count> counts_{};
  std::uint64_t samples_ = 0;
  std::uint64_t max_ = 0;
};

// One worker's sampler: time(op) runs op, and times it when its turn comes.
class latency_sampler {
 public:
  static constexpr std::uint32_t mean_gap = 64;

  // Its own random stream, so that the workload's stream stays what it was without sampling.
  explicit latency_sampler(std::uint64_t seed) noexcept : rng_(seed) { countdown_ = next_gap(); }

  template <class Op>
  void time(Op&& op) {
    if (--countdown_ != 0) [[likely]] {
      op();
      return;
    }
    const auto start = std::chrono::steady_clock::now();
    op();
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::steady_clock::now() - start);
    histogram_.add(static_cast<std::uint64_t>(ns.count()));
    countdown_ = next_gap();
  }

  const latency_histogram& histogram() const noexcept { return histogram_; }

 private:
  // Uniform in [1, 2 x mean_gap - 1]: mean `mean_gap`.
  std::uint32_t next_gap() noexcept { return 1 + rng_.below(2 * mean_gap - 1); }

  xoshiro256 rng_;
  std::uint32_t countdown_;
  latency_histogram histogram_;
};

}  // namespace reclaim_bench
