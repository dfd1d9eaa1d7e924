// SPDX-License-Identifier: MIT
// The pointer family that the reference-counted containers (rc_stack.hpp, persistent_map.hpp) are
// written over: counted pointers, shared locations holding one, and protected reads of a location.
// rc_family<Scheme> is reclaim's (rc_ptr, atomic_rc_ptr and snapshot_ptr over Scheme); the lab
// writes a second family over std::shared_ptr and std::atomic<std::shared_ptr>, so that the same
// container code runs over both and the comparison measures the pointers alone.
//
// What a family F provides (N is a node type of the container):
//   F::domain_type                   what a location is made for (a scheme's domain); a family
//                                    without one gives an empty struct
//   F::default_domain()              the domain_type& a container uses unless given one
//   F::owner<N>                      counted, copyable and movable, any thread: get() -> N*, ->,
//                                    contextual bool, empty when default-constructed; copying
//                                    increments, destroying decrements and destroys N when the
//                                    count reaches zero (as std::shared_ptr)
//   F::location<N>                   a shared atomic holder of an owner<N>, constructible from
//                                    (domain_type&), neither copyable nor movable; empty at first
//   F::reader<N>                     a protected read of a location: get() -> N*, ->, contextual
//                                    bool; N stays alive while the reader lives (it may or may not
//                                    hold a count); movable; used only by the thread that made it
//                                    (the containers keep one per operation, on the stack)
//   F::make<N>(domain, args...)      a new owner<N>, N constructed from args
//   F::read(location)                a reader of what the location holds now (acquire: N's
//                                    contents written before the owner was put there are visible)
//   F::replace(location, expected, desired)
//                                    if the location holds expected's object, puts desired there
//                                    (release: desired's contents are published) and returns
//                                    true; otherwise returns false and leaves the location as it
//                                    is (expected may then hold another object: a container
//                                    reads again before it retries). desired is taken by value
//                                    either way (a retry passes a copy). The object it drops
//                                    stays alive for every reader that holds it
//   F::own(reader)                   a counted owner<N> of the reader's object
// A container keeps the links between its nodes as owner<N> members written before the node is
// published and never again, so a reader's node keeps everything reachable from it alive.
#pragma once
#include <atomic>
#include <utility>

#include "../../rc_ptr.hpp"

namespace reclaim::ds::detail {

// reclaim's family: rc_ptr, atomic_rc_ptr and snapshot_ptr over Scheme, for every scheme
// atomic_rc_ptr serves (a compile error names why for the others).
template <class Scheme>
struct rc_family {
  using domain_type = typename Scheme::domain;
  template <class N>
  using owner = rc_ptr<N>;
  template <class N>
  using location = atomic_rc_ptr<N, Scheme>;
  template <class N>
  using reader = snapshot_ptr<N, Scheme>;

  static domain_type& default_domain() { return Scheme::default_domain(); }

  template <class N, class... Args>
  static owner<N> make(domain_type& d, Args&&... args) {
    return make_rc_in<N, Scheme>(d, std::forward<Args>(args)...);
  }
  // A snapshot: no count is touched; acquire pairs with replace()'s release.
  template <class N>
  static reader<N> read(const location<N>& l) {
    return l.get_snapshot(std::memory_order_acquire);
  }
  // acq_rel: release publishes desired's node; acquire is what atomic_rc_ptr needs to drop the
  // node it takes out (it retires that block through the scheme).
  template <class N>
  static bool replace(location<N>& l, const reader<N>& expected, owner<N> desired) {
    return l.compare_and_swap(expected, std::move(desired), std::memory_order_acq_rel);
  }
  template <class N>
  static owner<N> own(const reader<N>& r) {
    return r;
  }
};

}  // namespace reclaim::ds::detail
