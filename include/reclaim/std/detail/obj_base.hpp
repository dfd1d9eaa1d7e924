// SPDX-License-Identifier: MIT
// What hazard_pointer_obj_base<T, D, Scheme> and rcu_obj_base<T, D, Scheme> share: an object that
// a scheme's domain can retire in place, with its deleter D kept in the object (as the standard's
// bases keep a D member), so that a retire allocates nothing.
#pragma once
#include <type_traits>
#include <utility>

#include "../../core/retired.hpp"

namespace reclaim::cxx26::detail {

// T derives from obj_base<T, D, Scheme>: the scheme's node base (the retire link) and the room for
// D (none for a stateless D, see core::deleter_slot). Copying or assigning an object copies none
// of this: the copy is a new object, not retired, whatever the original is.
template <class T, class D, class Scheme>
class obj_base : public Scheme::node_base, public deleter_slot<D> {
 protected:
  obj_base() = default;
  obj_base(const obj_base&) noexcept : obj_base() {}
  obj_base(obj_base&&) noexcept : obj_base() {}
  obj_base& operator=(const obj_base&) noexcept { return *this; }
  obj_base& operator=(obj_base&&) noexcept { return *this; }
  ~obj_base() = default;

  // Hands the object to `domain` with its deleter. noexcept, as the standard's retire(): the only
  // failure, a thread's first use of the domain finding no memory to register, terminates.
  template <class Domain>
  void retire_into(Domain& domain, D&& d) noexcept {
    static_assert(std::is_base_of_v<obj_base, T>,
                  "the T of hazard_pointer_obj_base<T, D> or rcu_obj_base<T, D> is the class that "
                  "derives from it");
    domain.retire(static_cast<T*>(this), std::move(d));
  }
};

}  // namespace reclaim::cxx26::detail
