// SPDX-License-Identifier: MIT
// What every container of ds/ holds and declares beside its algorithm: its scheme's types, the
// domain it was made with and its lifetime check (detail/lifetime_check.hpp), and, for the sorted
// containers, the comparison its searches call. They are a container's first members, where every
// container kept them when it declared them itself, so the object's layout is what it was.
//
// A container derives from container_base<Scheme> (the queues, the stack, cuckoo_map) or
// sorted_base<Scheme, Compare> (through lookup_api or bucket_api, or directly), and redeclares what
// its own code names, since a dependent base's members are not found by unqualified lookup:
//   using typename base::domain_type, typename base::guard_type;
//   using base::domain_, base::life_, base::comp_;
// Its destructor starts with life_.before_destruction(domain_), before it frees any node. No
// container is copyable (its nodes are the domain's).
#pragma once
#include "lifetime_check.hpp"
#include "read_phase_compare.hpp"

namespace reclaim::ds::detail {

template <class Scheme>
class container_base {
 public:
  // The scheme it runs on, the domain of it that the container retires into (the constructor's
  // argument), and the guard each operation holds.
  using scheme_type = Scheme;
  using domain_type = typename Scheme::domain;
  using guard_type = typename Scheme::guard;

  container_base(const container_base&) = delete;
  container_base& operator=(const container_base&) = delete;

 protected:
  explicit container_base(domain_type& domain) noexcept : domain_(domain) {}
  ~container_base() = default;

  domain_type& domain_;
  [[no_unique_address]] lifetime_check life_;
};

// Comp is what the searches call: Compare wrapped for read phases (read_phase_compare), or Compare
// itself where no read phase runs (the guarded_* containers).
template <class Scheme, class Compare, class Comp = read_phase_compare<Compare, Scheme>>
class sorted_base : public container_base<Scheme> {
 public:
  using key_compare = Compare;

 protected:
  sorted_base(typename Scheme::domain& domain, const Compare& comp)
      : container_base<Scheme>(domain), comp_(comp) {}
  ~sorted_base() = default;

  [[no_unique_address]] Comp comp_;
};

}  // namespace reclaim::ds::detail
