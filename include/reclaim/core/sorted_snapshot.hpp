// SPDX-License-Identifier: MIT
// A snapshot of the protections published in a domain (hazards, reservations), sorted, for a
// reclaimer that checks many retired nodes against them: each slot is read once per scan, then a
// binary search per node, O(H log H + R log H) for R nodes among H protections. The array keeps its
// capacity across scans (no allocation in steady state); when it cannot grow (out of memory), the
// scan looks each node up in every slot instead: a scan never fails for want of memory.
//
// find(f) calls f(p) for every published protection p until f returns true, and returns whether
// one did; the scheme supplies it (with the loads its memory-model argument needs).
#pragma once
#include <algorithm>
#include <new>
#include <vector>

namespace reclaim::core {

class sorted_snapshot {
 public:
  template <class Find>
  void take(Find&& find) noexcept {
    protections_.clear();
    complete_ = true;
    find([&](const void* p) {
      try {
        protections_.push_back(p);
        return false;
      } catch (const std::bad_alloc&) {
        complete_ = false;
        return true;  // stop: protects() searches the slots themselves
      }
    });
    std::sort(protections_.begin(), protections_.end());
  }

  template <class Find>
  bool protects(const void* node, Find&& find) const noexcept {
    if (!complete_) [[unlikely]]
      return find([node](const void* p) { return p == node; });
    return std::binary_search(protections_.begin(), protections_.end(), node);
  }

 private:
  std::vector<const void*> protections_;
  bool complete_ = true;
};

}  // namespace reclaim::core
