// SPDX-License-Identifier: MIT
// Random numbers for the workload: xoshiro256** streams seeded through splitmix64 (Blackman and
// Vigna), cheap enough that the generator does not show in the throughput.
#pragma once
#include <cstdint>

namespace reclaim_bench {

inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
  z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
  return z ^ (z >> 31);
}

// The seed of one stream: every part goes through splitmix64, so that neighbouring seeds, trials
// and streams give unrelated sequences.
inline std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t trial, std::uint64_t stream) {
  std::uint64_t state = seed;
  state = splitmix64(state) + trial;
  state = splitmix64(state) + stream;
  return splitmix64(state);
}

class xoshiro256 {
 public:
  explicit xoshiro256(std::uint64_t seed) {
    for (auto& word : s_) word = splitmix64(seed);
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, n) by multiply-shift on the high 32 bits (Lemire): no division, and a bias of
  // at most n / 2^32, far below what a benchmark can see.
  std::uint32_t below(std::uint32_t n) {
    return static_cast<std::uint32_t>(((next() >> 32) * n) >> 32);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace reclaim_bench
