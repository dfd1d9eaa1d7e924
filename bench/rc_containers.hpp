// SPDX-License-Identifier: MIT
// Issue 30's containers over counted pointers, in the lab's form: rc_stack
// (include/reclaim/ds/rc_stack.hpp) as a stack beside treiber_stack, and persistent_map's set form
// (include/reclaim/ds/persistent_map.hpp) as a set, each under our schemes (settled below) and
// over std::atomic<std::shared_ptr> (rc_peers.hpp: std_family), the same container code.
#pragma once
#include <cstdint>
#include <utility>

#include <reclaim/ds/persistent_map.hpp>
#include <reclaim/ds/rc_stack.hpp>

#include "config_workload.hpp"

namespace reclaim_bench {

// persistent_set<int64> over Family with the lab's validation: its size, key sum and order are
// those of one version (snapshot()), taken after the workers joined.
template <class Family>
class lab_persistent_set : public reclaim::ds::basic_persistent_map<std::int64_t, void, Family> {
  using base = reclaim::ds::basic_persistent_map<std::int64_t, void, Family>;

 public:
  using base::base;

  std::size_t unsafe_size() const { return this->size(); }
  std::int64_t unsafe_key_sum() const {
    std::int64_t sum = 0;
    this->snapshot().for_each([&](std::int64_t k) { sum += k; });
    return sum;
  }
  // Keys strictly ascending, as many as the size the nodes keep.
  bool unsafe_well_formed() const {
    const auto v = this->snapshot();
    std::size_t count = 0;
    bool ascending = true;
    std::int64_t last = 0;
    v.for_each([&](std::int64_t k) {
      ascending = ascending && (count == 0 || k > last);
      last = k;
      ++count;
    });
    return ascending && count == v.size();
  }
};

// A container Base over atomic_rc_ptr under Scheme, as the lab runs it: it names the scheme
// (scheme_type, which the lab's registration reads and the family-written containers do not
// have), and it settles the domain before it goes, so that the replaced versions are destroyed
// by barriers here rather than by the domain's destructor (which would also apply them: rc_ptr.hpp,
// shutting_down()); then Base drops what it holds directly.
template <class Base, class Scheme>
class settled : public Base {
 public:
  using scheme_type = Scheme;
  explicit settled(typename Scheme::domain& d) : Base(d), domain_(d) {}
  settled(const settled&) = delete;
  settled& operator=(const settled&) = delete;
  ~settled() { settle_domain(domain_); }

 private:
  typename Scheme::domain& domain_;
};

}  // namespace reclaim_bench
