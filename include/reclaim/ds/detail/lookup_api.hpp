// SPDX-License-Identifier: MIT
// The lookups of a container whose search is one read phase from its root: contains() and a map's
// visit(), the same in dgt_bst, harris_list, lazy_list, lazy_skiplist and nm_bst whatever the
// algorithm, from one hook that is the container's own.
//
// It is also the container's sorted_base (detail/container_base.hpp): its domain_, life_ and comp_.
// The container (Derived) provides, privately (friend lookup_api), besides container_api's hooks:
//   lookup(g, key)           in the read phase g holds: the node holding the key, present (not
//                            logically deleted), or nullptr; the pointer a write phase reserves
//   value_of(node)           static: a map's value in the node lookup() returned
//
// The guard and the restart point live in this frame, which calls lookup(): a restart (nbr) jumps
// back here from inside the search, whose locals it abandons (they must be restart_safe, as a read
// phase requires).
#pragma once
#include <utility>

#include "../../concepts.hpp"
#include "../../read_phase.hpp"
#include "container_api.hpp"
#include "container_base.hpp"
#include "lifetime_check.hpp"

namespace reclaim::ds::detail {

template <class Derived, class Key, class Value, class Scheme, class Compare>
class lookup_api : public container_api<Derived, Key, Value>, public sorted_base<Scheme, Compare> {
 public:
  // Its container_api base: insert(), find(), size() and the quiescent traversals.
  using container = container_api<Derived, Key, Value>;

  // Whether the key is present (one read phase: a search from the root).
  bool contains(const Key& key) {
    lifetime_check::operation op(this->life_);
    typename Scheme::guard g(this->domain_);
    RECLAIM_READ_PHASE(g);
    return self().lookup(g, key) != nullptr;
  }

  // Map: calls f(const Value&) with the key's value, if present, while the node is protected; the
  // reference must not escape f. Returns whether the key was present.
  template <class F>
    requires container::is_map
  bool visit(const Key& key, F&& f) {
    lifetime_check::operation op(this->life_);
    typename Scheme::guard g(this->domain_);
    RECLAIM_READ_PHASE(g);
    const auto found = self().lookup(g, key);
    if (!found) return false;
    g.write_phase(found);  // f may copy or allocate, which a read phase must not
    f(std::as_const(Derived::value_of(found)));
    return true;
  }

 protected:
  using sorted_base<Scheme, Compare>::sorted_base;

 private:
  Derived& self() noexcept { return static_cast<Derived&>(*this); }
};

}  // namespace reclaim::ds::detail
