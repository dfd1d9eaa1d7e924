// SPDX-License-Identifier: MIT
// C++26's hazard pointers (P2530, [saferecl.hp]) over reclaim's hazard-pointer schemes:
//
//   hazard_pointer_obj_base<T, D, Scheme = hp<>>   the base of a protectable T; retire(D d = D())
//   basic_hazard_pointer<Scheme>, hazard_pointer   one hazard pointer, owned: protect(src),
//                                                  try_protect(ptr, src), reset_protection(ptr),
//                                                  reset_protection(), swap, empty()
//   make_hazard_pointer<Scheme = hp<>>()           a hazard_pointer that owns a hazard pointer
//   swap(a, b)
//
// Code written against the standard compiles unchanged with `using namespace reclaim::cxx26;`
// (or the names qualified): `hazard_pointer h = make_hazard_pointer(); T* p = h.protect(src);`,
// `p->retire();`. The scheme is an extra trailing template parameter, defaulted to hp<>: any
// configuration of it (hp<amortized_free<1>>, the lab's hp_af; hp<slots<K>>; hp<fence_policy<F>>)
// and any later scheme of the pointer family that offers a movable owned protection. The object's
// base and the hazard pointer must name the same scheme (a mismatch does not compile).
//
// The namespace is reclaim::cxx26, not reclaim::std: inside namespace reclaim every `std::atomic`
// would then name reclaim::std::atomic.
//
// What each piece is under the scheme (schemes/hp.hpp):
//   hazard_pointer      Scheme::protection: one hazard slot from its thread's pool (blocks of 8,
//                       grown on demand; any number of hazard pointers may be alive at once),
//                       given back in constant time when it is destroyed
//   protect(src)        publish, fence, re-read src until two reads agree (acquire loads)
//   obj.retire(d)       Scheme::default_domain().retire(&obj, d): counted in its stats(), freed
//                       by its scans, flush() and barrier(); D lives in the object
//
// Differences from the standard:
// - The domain is the scheme's default domain (the standard has one domain too; containers that
//   use Scheme::default_domain() share it). Its barrier() waits until everything retired before it
//   was freed, which the standard cannot express.
// - A hazard_pointer belongs to the thread that made it (its slot comes from that thread's pool):
//   the standard lets ownership move between threads. Debug builds stop on use from another one,
//   naming hazard_pointer, wherever the object moved since.
// - barrier() while a hazard_pointer of the calling thread protects an object retired before it
//   would wait for ever: it stops in every build, naming the fix (folly's hazptr_cleanup returns,
//   leaving the object pending). A Scheme outside the pointer family is one static_assert.
// - make_hazard_pointer() takes its slot (it may throw std::bad_alloc, as the standard allows), so
//   that protect(), try_protect() and reset_protection() are noexcept as specified. retire() is
//   noexcept too: a thread's first use of the domain that finds no memory to register terminates.
// - protect() on an empty hazard_pointer (a precondition violation) stops debug builds.
#pragma once
#include <atomic>
#include <cassert>
#include <cstddef>
#include <memory>
#include <thread>
#include <type_traits>
#include <utility>

#include "../concepts.hpp"
#include "../schemes/hp.hpp"
#include "detail/obj_base.hpp"
#include "../core/sync.hpp"

namespace reclaim::cxx26 {

// A scheme that can serve hazard_pointer: the pointer family, with an owned protection.
template <class Scheme>
concept hazard_pointer_scheme = scheme<Scheme> && Scheme::family == family::pointer &&
                                requires { typename Scheme::protection; };

namespace detail {
// Scheme where it serves hazard_pointer. Otherwise one message naming the schemes that do (a
// constrained parameter would print the concept's every clause instead), and hp<> in its place so
// that the message is the one error.
template <class Scheme>
struct hazard_scheme {
  static constexpr bool serves = hazard_pointer_scheme<Scheme>;
  static_assert(serves,
                "reclaim::cxx26::hazard_pointer and hazard_pointer_obj_base are served by the "
                "pointer family only: hp<...>, hp_asym<>, hp_mprotect<>, hp_splitcas<>, "
                "hazard_pop<>, epoch_pop<>; for an epoch scheme use rcu_domain and rcu_obj_base "
                "(reclaim/std/rcu.hpp)");
  using type = std::conditional_t<serves, Scheme, hp<>>;
};
template <class Scheme>
using hazard_scheme_t = typename hazard_scheme<Scheme>::type;
}  // namespace detail

// The base of a hazard-protectable T (`struct config : hazard_pointer_obj_base<config> {...}`).
template <class T, class D = std::default_delete<T>, class Scheme = hp<>>
class hazard_pointer_obj_base : public detail::obj_base<T, D, detail::hazard_scheme_t<Scheme>> {
 public:
  // Retires the T this is the base of, once, after unlinking it: d(&t) runs once no hazard
  // pointer protects it (on whichever thread frees it). A stateful d is kept in the object.
  void retire(D d = D()) noexcept {
    this->retire_into(detail::hazard_scheme_t<Scheme>::default_domain(), std::move(d));
  }

 protected:
  hazard_pointer_obj_base() = default;
  hazard_pointer_obj_base(const hazard_pointer_obj_base&) = default;
  hazard_pointer_obj_base(hazard_pointer_obj_base&&) = default;
  hazard_pointer_obj_base& operator=(const hazard_pointer_obj_base&) = default;
  hazard_pointer_obj_base& operator=(hazard_pointer_obj_base&&) = default;
  ~hazard_pointer_obj_base() = default;
};

namespace detail {
// Deduces D from T's base hazard_pointer_obj_base<T, D, Scheme>; fails where T has none (or two).
template <class Scheme, class T, class D>
std::true_type is_hazard_base(const volatile hazard_pointer_obj_base<T, D, Scheme>*);
template <class Scheme, class T>
std::false_type is_hazard_base(...);
}  // namespace detail

// The standard's "hazard-protectable type", for Scheme.
template <class T, class Scheme>
concept hazard_protectable =
    decltype(detail::is_hazard_base<Scheme, std::remove_cv_t<T>>(static_cast<T*>(nullptr)))::value;

template <class Scheme = hp<>>
class basic_hazard_pointer;
template <class Scheme = hp<>>
basic_hazard_pointer<Scheme> make_hazard_pointer();

// Empty, or the owner of one hazard pointer (a slot), which is unassociated or protects one object.
template <class Scheme>
class basic_hazard_pointer {
  using protection = typename detail::hazard_scheme_t<Scheme>::protection;

 public:
  basic_hazard_pointer() noexcept = default;
  // `other` is left empty (its slot moves here).
  basic_hazard_pointer(basic_hazard_pointer&& other) noexcept = default;
  // Gives our slot back (ending its protection), then takes other's; `other` is left empty.
  basic_hazard_pointer& operator=(basic_hazard_pointer&& other) noexcept {
    if (this != &other) basic_hazard_pointer(std::move(other)).swap(*this);
    return *this;
  }
  // The protection ends, the slot goes back to its thread's pool.
  ~basic_hazard_pointer() { check_thread(); }

  // Whether it owns no hazard pointer (default-constructed or moved from).
  [[nodiscard]] bool empty() const noexcept { return !protection_.owns_slot(); }

  // Protects the object src points to and returns it (null: protects nothing). Loops while src
  // keeps changing (lock-free).
  template <class T>
  T* protect(const core::atomic<T*>& src) noexcept {
    check<T>();
    return protection_.protect(src, std::memory_order_acquire);
  }
  // If src still holds ptr, protects it and returns true; otherwise protects nothing, sets ptr to
  // what src holds now, and returns false.
  template <class T>
  bool try_protect(T*& ptr, const core::atomic<T*>& src) noexcept {
    check<T>();
    return protection_.try_protect(ptr, src, std::memory_order_acquire);
  }
  // Protects ptr from now on, without validating it: the caller re-reads ptr's source afterwards
  // and may rely on the protection only if it still holds ptr. A null ptr protects nothing.
  template <class T>
  void reset_protection(const T* ptr) noexcept {
    check<T>();
    if (ptr)
      protection_.publish(ptr);
    else
      protection_.reset_protection();
  }
  void reset_protection(std::nullptr_t = nullptr) noexcept {
    assert(!empty() && "reclaim: reset_protection() on an empty hazard_pointer");
    check_thread();
    protection_.reset_protection();
  }

  // Exchanges the two hazard pointers, and what each protects; both must be this thread's.
  void swap(basic_hazard_pointer& other) noexcept {
    check_thread();
    other.check_thread();
    protection_.swap(other.protection_);
#ifndef NDEBUG
    std::swap(owner_, other.owner_);
#endif
  }

 private:
  friend basic_hazard_pointer make_hazard_pointer<Scheme>();
  explicit basic_hazard_pointer(typename detail::hazard_scheme_t<Scheme>::domain& d)
      : protection_(d) {
    protection_.take_slot();
  }

  template <class T>
  void check() const noexcept {
    static_assert(hazard_protectable<T, Scheme>,
                  "reclaim::cxx26::hazard_pointer protects objects of a type T that derives from "
                  "hazard_pointer_obj_base<T, D, Scheme> with the hazard pointer's own Scheme");
    assert(!empty() && "reclaim: protection through an empty hazard_pointer");
    check_thread();
  }

  // Debug builds: a hazard_pointer is used only on the thread whose pool its slot came from (the
  // one that called make_hazard_pointer(), whichever object the slot has moved to since). Checked
  // here, before the protection's own check, so that the message names what the user holds.
  void check_thread() const noexcept {
#ifndef NDEBUG
    assert((empty() || owner_ == std::this_thread::get_id()) &&
           "reclaim: hazard_pointer used on another thread than the one that made it (its "
           "hazard slot is that thread's); call make_hazard_pointer() on each thread");
#endif
  }

  protection protection_;
#ifndef NDEBUG
  std::thread::id owner_ = std::this_thread::get_id();  // moves with the slot (swap)
#endif
};

// The standard's spelling: hp<>.
using hazard_pointer = basic_hazard_pointer<>;

// A hazard_pointer that owns a hazard pointer, unassociated. Throws std::bad_alloc.
template <class Scheme>
basic_hazard_pointer<Scheme> make_hazard_pointer() {
  return basic_hazard_pointer<Scheme>(detail::hazard_scheme_t<Scheme>::default_domain());
}

// a.swap(b), for the standard's swap(a, b).
template <class Scheme>
void swap(basic_hazard_pointer<Scheme>& a, basic_hazard_pointer<Scheme>& b) noexcept {
  a.swap(b);
}

}  // namespace reclaim::cxx26
