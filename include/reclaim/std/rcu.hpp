// SPDX-License-Identifier: MIT
// C++26's read-copy update (P2545, [saferecl.rcu]) over an epoch scheme of the user's choice:
//
//   basic_rcu_domain<Scheme>, rcu_domain         lock(), try_lock(), unlock() (Cpp17Lockable:
//                                                std::scoped_lock works): a region of RCU
//                                                protection of the calling thread, nestable
//   rcu_obj_base<T, D, Scheme = debra<>>         the base of an rcu-protectable T;
//                                                retire(D d = D(), dom = rcu_default_domain())
//   rcu_default_domain<Scheme = debra<>>()       the domain over Scheme::default_domain()
//   rcu_synchronize(dom), rcu_barrier(dom)       dom defaults to rcu_default_domain()
//   rcu_retire(p, d = default_delete, dom)       any T*, any deleter
//
// Code written against the standard compiles unchanged with `using namespace reclaim::cxx26;`:
// `std::scoped_lock l(rcu_default_domain());`, `rcu_retire(old);`, `rcu_synchronize();`. Another
// scheme is one template argument: rcu_obj_base<T, D, qsbr<>>, rcu_default_domain<qsbr<>>(), and
// the functions deduce it from the domain they are given. The namespace is reclaim::cxx26, not
// reclaim::std: inside namespace reclaim every `std::` would then name it.
//
// A basic_rcu_domain<Scheme> is a view of a Scheme::domain (rcu_default_domain() of the scheme's
// default domain, which containers that use the default share; `basic_rcu_domain<S> dom(d)` of
// yours, which must outlive the view). What each piece is:
//   dom.lock() / unlock()    enter / leave an operation of the calling thread, counted in its
//                            nesting depth as guards and guard_ptrs are (core::region_hold): only
//                            the outermost lock begins an operation (the scheme's announcement)
//                            and only the matching unlock ends it. Per thread, although the domain
//                            object is shared: one thread's unlock never closes another's region.
//   rcu_synchronize(dom)     Scheme::domain::synchronize()
//   rcu_barrier(dom)         Scheme::domain::barrier(): every deleter scheduled before it has run
//   rcu_retire, obj.retire   Scheme::domain::retire(p, d): counted in its stats(); in place for an
//                            object that derives from rcu_obj_base<T, D, Scheme> (or from
//                            Scheme::node_base, with a stateless D or a deleter_slot<D> base);
//                            any other object is retired in a small node allocated for it (the
//                            standard's "may allocate"), whose destruction calls d(p)
//
// What lock() means under each scheme (docs/facades.md has the table):
//   debra, ebr, ner          the outermost lock announces the epoch (a seq_cst exchange and a
//                            re-read); a region keeps the epoch from moving two past it
//   rcu                      the outermost lock reserves the current epoch; objects retired later
//                            are stamped later and wait for it
//   token_*                  the thread is active; a token that reaches it waits for the unlock.
//                            rcu_synchronize() may therefore also wait for a region that began
//                            after the call, if the token reaches that region while it runs (never
//                            for longer than that region): weaker than the standard's promise
//   qsbr                     lock announces nothing; the thread announces a quiescent state only
//                            when its outermost region ends. A live thread that stops locking
//                            holds every grace period (rcu_synchronize, rcu_barrier) until it
//                            locks again, calls dom.scheme_domain().thread_offline() or exits:
//                            the standard has no such duty
// Differences from the standard common to all: lock(), try_lock() and rcu_obj_base::retire() are
// noexcept as specified, so a thread's first use of a domain that finds no memory to register
// terminates; a thread stalled inside a region stops rcu_synchronize and rcu_barrier (as in any
// RCU); rcu_synchronize and rcu_barrier inside a region of the same domain stop the program with
// a message in every build (they would wait for the caller); domains are objects a user may make
// (the standard offers the default domain only). A Scheme that cannot serve these (hp, the era
// schemes) is one static_assert naming those that can.
#pragma once
#include <memory>
#include <type_traits>
#include <utility>

#include "../concepts.hpp"
#include "../core/region_guard.hpp"
#include "../schemes/debra.hpp"
#include "detail/obj_base.hpp"

namespace reclaim::cxx26 {

// A scheme that can serve rcu_domain: grace periods and barriers, a protection that is a share in
// the thread's operation, and nothing more needed of a read than being inside it (debra, ebr, ner,
// qsbr, rcu, token_*, stamp_it, hyaline, hyaline_1; not ibr or the robust Hyaline variants, whose
// reads must reserve an era).
template <class Scheme>
concept rcu_scheme =
    grace_periods<Scheme> && Scheme::needs == needs_nothing &&
    std::is_same_v<typename Scheme::protection, core::region_hold<typename Scheme::domain>>;

namespace detail {
// Scheme where it serves rcu_domain. Otherwise one message naming the schemes that do (a
// constrained parameter would print the concept's every clause instead), and debra<> in its place
// so that the message is the one error.
template <class Scheme>
struct rcu_scheme_check {
  static constexpr bool serves = rcu_scheme<Scheme>;
  static_assert(serves,
                "reclaim::cxx26::rcu_domain, rcu_obj_base and rcu_retire are served by the "
                "schemes whose reads need only a region: debra<>, ebr<>, ner<>, qsbr<>, rcu<>, "
                "token_*<>, stamp_it<>, hyaline<>, hyaline_1<>; for hp<> and its family use "
                "hazard_pointer (reclaim/std/hazard_pointer.hpp)");
  using type = std::conditional_t<serves, Scheme, debra<>>;
};
template <class Scheme>
using rcu_scheme_t = typename rcu_scheme_check<Scheme>::type;
}  // namespace detail

// P2545's rcu_domain over a domain of Scheme, a lockable view of it that does not own it (see
// the top of this header); rcu_domain is the one over debra<>.
template <class Scheme = debra<>>
class basic_rcu_domain {
  using hold = core::region_hold<typename detail::rcu_scheme_t<Scheme>::domain>;

 public:
  // The scheme whose domain it views.
  using scheme = Scheme;

  // A view of d, which must outlive it.
  explicit basic_rcu_domain(typename detail::rcu_scheme_t<Scheme>::domain& d) noexcept
      : domain_(d) {}
  basic_rcu_domain(const basic_rcu_domain&) = delete;
  basic_rcu_domain& operator=(const basic_rcu_domain&) = delete;

  // Opens a region of RCU protection of the calling thread: nothing retired into this domain from
  // now on is freed before the region's unlock().
  void lock() noexcept { hold::lock_thread(domain_); }
  bool try_lock() noexcept {
    lock();
    return true;
  }
  // Closes the calling thread's most recently opened region (the thread must have one).
  void unlock() noexcept { hold::unlock_thread(domain_); }

  // The scheme's domain: stats(), flush(), qsbr's thread_offline(), containers.
  typename detail::rcu_scheme_t<Scheme>::domain& scheme_domain() const noexcept {
    return domain_;
  }

 private:
  typename detail::rcu_scheme_t<Scheme>::domain& domain_;
};

// The standard's spelling: debra<>.
using rcu_domain = basic_rcu_domain<>;

// The domain over Scheme::default_domain(): the same object every time.
template <class Scheme = debra<>>
basic_rcu_domain<Scheme>& rcu_default_domain() noexcept {
  // (dom is trivially destructible: usable during exit)
  static basic_rcu_domain<Scheme> dom(detail::rcu_scheme_t<Scheme>::default_domain());
  return dom;
}

// The base of an rcu-protectable T (`struct config : rcu_obj_base<config> {...}`).
template <class T, class D = std::default_delete<T>, class Scheme = debra<>>
class rcu_obj_base : public detail::obj_base<T, D, detail::rcu_scheme_t<Scheme>> {
 public:
  // Retires the T this is the base of, once, after unlinking it: d(&t) runs once every region of
  // dom that may still read it has ended (on whichever thread frees it). A stateful d is kept in
  // the object.
  void retire(D d = D(), basic_rcu_domain<Scheme>& dom = rcu_default_domain<Scheme>()) noexcept {
    this->retire_into(dom.scheme_domain(), std::move(d));
  }

 protected:
  rcu_obj_base() = default;
  rcu_obj_base(const rcu_obj_base&) = default;
  rcu_obj_base(rcu_obj_base&&) = default;
  rcu_obj_base& operator=(const rcu_obj_base&) = default;
  rcu_obj_base& operator=(rcu_obj_base&&) = default;
  ~rcu_obj_base() = default;
};

// Returns once every region of dom that began before the call has ended.
template <class Scheme = debra<>>
void rcu_synchronize(basic_rcu_domain<Scheme>& dom = rcu_default_domain<Scheme>()) noexcept {
  dom.scheme_domain().synchronize();
}

// Returns once every deleter scheduled in dom before the call has run.
template <class Scheme = debra<>>
void rcu_barrier(basic_rcu_domain<Scheme>& dom = rcu_default_domain<Scheme>()) noexcept {
  dom.scheme_domain().barrier();
}

namespace detail {

// Whether p can be retired in place: the scheme's link is in the object, and so is D if it has
// state.
template <class T, class D, class Scheme>
inline constexpr bool retires_in_place =
    std::is_base_of_v<typename Scheme::node_base, T> &&
    (stateless_deleter<D> || std::is_base_of_v<deleter_slot<D>, T>);

// Any other object is retired in one of these: freeing the node calls d(p).
template <class T, class D, class Scheme>
struct retired_object : Scheme::node_base {
  retired_object(T* p, D&& d) : object(p), deleter(std::move(d)) {}
  retired_object(const retired_object&) = delete;
  retired_object& operator=(const retired_object&) = delete;
  ~retired_object() { deleter(object); }

  T* object;
  [[no_unique_address]] D deleter;
};

}  // namespace detail

// Schedules d(p) for once every region of dom that may still read *p has ended. p must already be
// unreachable for regions that begin now. Throws std::bad_alloc (where p is not retired in place)
// or what D's move throws; then nothing is scheduled and p is still the caller's.
template <class T, class D = std::default_delete<T>, class Scheme = debra<>>
void rcu_retire(T* p, D d = D(), basic_rcu_domain<Scheme>& dom = rcu_default_domain<Scheme>()) {
  static_assert(std::is_move_constructible_v<D> && std::is_invocable_v<D&, T*>,
                "rcu_retire(p, d): d must be movable and callable as d(p)");
  auto& domain = dom.scheme_domain();
  using checked = detail::rcu_scheme_t<Scheme>;
  if constexpr (detail::retires_in_place<T, D, checked>)
    domain.retire(p, std::move(d));
  else
    domain.retire(new detail::retired_object<T, D, checked>(p, std::move(d)));
}

}  // namespace reclaim::cxx26
