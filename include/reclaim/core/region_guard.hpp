// SPDX-License-Identifier: MIT
// The guard of every scheme whose only need from a container is the start and end of each operation
// (a region): debra, ebr, ner, qsbr, rcu, token_*, stamp_it; and the guard_ptr protection of the
// schemes whose operation is what holds a node (those, hyaline's and ibr's). The domain provides begin(record) -> record&,
// end(record) and retire(record, node), and befriends region_hold<Domain>, through which both the
// guard and a guard_ptr's protection reach them; protect() is a plain load.
//
// A region is the record's nesting depth: every guard and every holding protection counts once,
// only the first to enter begins the operation and only the last to leave ends it, so they may be
// released in any order. (The public reclaim::region_guard<Scheme>, concurrent_ptr.hpp, holds a
// region_hold::region, and lends its operation to the guard_ptrs made from it.)
#pragma once
#include <atomic>
#include <cassert>
#include <utility>

#include "guard_base.hpp"
#include "sync.hpp"

namespace reclaim::core {

template <class Domain>
class region_scheme_guard;

// A movable share in the thread's current operation: while it holds, the thread is inside an
// operation (entered by the first hold or guard, left by the last). The protection a guard_ptr
// holds under a region scheme: a guard_ptr that holds a node keeps the thread inside the operation
// that read it, so that nothing retired since can be freed.
//
// A hold made from a region (a guard_ptr made from a reclaim::region_guard) borrows the region's
// operation instead: it counts nothing, so acquiring is a plain load and letting go is nothing, as
// with a guard's protect(); it must end before the region does (debug builds check).
template <class Domain>
class region_hold : thread_bound {
  using record = typename Domain::record;

 public:
  // Whether holding keeps the thread inside an operation.
  static constexpr bool holds_region = true;

  // What a reclaim::region_guard holds: the scheme's guard (the thread inside an operation for its
  // scope, as a container's operation is), lent to the holds made from it.
  class region {
   public:
    explicit region(Domain& d) : guard_(d) {}

   private:
    friend region_hold;
    region_scheme_guard<Domain> guard_;
    lender lender_;
  };

  region_hold() noexcept = default;
  explicit region_hold(Domain& d) noexcept : domain_(&d) {}
  // Borrows r's operation (see above).
  explicit region_hold(region& r) noexcept
      : domain_(&r.guard_.domain_),
        record_(&r.guard_.record_),
        state_(lent),
        loan_(r.lender_.lend()) {}
  // The record stays known to both (it is the thread's, and a hold belongs to its thread).
  region_hold(region_hold&& other) noexcept
      : domain_(other.domain_),
        record_(other.record_),
        state_(std::exchange(other.state_, idle)),
        loan_(std::move(other.loan_)) {}
  region_hold& operator=(region_hold&& other) noexcept {
    if (this != &other) {
      leave();
      domain_ = other.domain_;
      record_ = other.record_;
      state_ = std::exchange(other.state_, idle);
      loan_ = std::move(other.loan_);
    }
    return *this;
  }
  [[gnu::always_inline]] ~region_hold() { leave(); }  // see guard_ptr's destructor

  bool holds() const noexcept { return state_ != idle; }

  // Holds the thread inside an operation, entering one if it is in none (the scheme's begin(), with
  // its fences); a no-op while this already holds or borrows.
  void enter() {
    if (state_ != idle) return;
    check_owner();
    record_ = &hold(*domain_, record_);
    state_ = holding;
  }
  // Lets go; the operation ends if nothing else holds it (the scheme's end(), with its release).
  // A borrowed operation stays the region's. Always inlined, as the destructor: an out-of-line
  // part of it would take the hold's address (see guard_ptr's destructor).
  [[gnu::always_inline]] void leave() noexcept {
    if (state_ != holding) return;
    check_owner();
    state_ = idle;
    end(*domain_, *record_);
  }

  // The node src holds, read inside the operation: the scheme's begin() ordered this load after
  // the thread's announcement, and until leave() nothing retired after it may be freed. A null
  // pointer holds nothing, so it lets go. `order` (acquire at least, to read the node): pairs
  // with the release store or CAS that published the node. A scheme whose reads also reserve an
  // era (ibr, hyaline_s, hyaline_1s) reads through its Domain::protect_in_operation(record, src),
  // with its own orders.
  template <class P>
  P protect(const core::atomic<P>& src, std::memory_order order) {
    enter();
    P p;
    if constexpr (requires { domain_->protect_in_operation(*record_, src); })
      p = domain_->protect_in_operation(*record_, src);
    else
      p = src.load(order);
    if (!p) leave();
    return p;
  }
  // The same, if src still holds `expected` (true); otherwise holds nothing, sets `expected` to
  // what src holds, and returns false.
  template <class P>
  bool try_protect(P& expected, const core::atomic<P>& src, std::memory_order order) {
    P p = protect(src, order);
    if (p == expected) return true;
    leave();
    expected = p;
    return false;
  }
  void reset_protection() noexcept { leave(); }

  // The same share without an object to keep it: the calling thread enters an operation (or one
  // level deeper) and leaves it by a later call on the same thread, such as a mutex's lock() and
  // unlock() (reclaim::cxx26::rcu_domain). lock_thread() may throw std::bad_alloc on the
  // thread's first use of the domain (it registers); unlock_thread() without a lock_thread() of
  // its own thread stops debug builds.
  static void lock_thread(Domain& d) { (void)begin(d); }
  static void unlock_thread(Domain& d) noexcept {
    record& r = d.threads_.local();  // registered by its lock_thread(): a lookup, no allocation
    assert(r.level() > 0 && "reclaim: rcu_domain::unlock() without a lock() on this thread");
    end(d, r);
  }

  // Retires a node (tagged by core::to_retired) inside the operation this holds.
  void retire(retired_hook* node) {
    assert(state_ != idle && "reclaim: retire through a protection that holds no operation");
    check_owner();
    retire(*domain_, *record_, node);
  }

 private:
  // enter()'s work, out of line so that protect() stays small enough to inline (a guard_ptr made
  // from a region never comes here, one made from the domain once per hold), and static so that
  // the hold's address does not escape: the compiler may then keep guard_ptrs in registers.
  [[gnu::noinline]] static record& hold(Domain& d, record* known) {
    record& r = known ? *known : d.threads_.local();
    nest(d, r);
    return r;
  }

  // The guard always holds, from construction to destruction: it keeps the record itself and
  // calls these, so that its fast path tests nothing.
  friend class region_scheme_guard<Domain>;
  static record& begin(Domain& d) { return d.begin(d.threads_.local()); }
  // begin() for a hold, which usually nests in an operation the thread is in already (a
  // region_guard's, or another guard_ptr's): every scheme's begin() then only counts the depth,
  // so that is done here, inline, without the call to the scheme's begin().
  static void nest(Domain& d, record& r) {
    if (r.level() == 0) [[unlikely]]
      (void)d.begin(r);
    else
      r.enter();
  }
  static void end(Domain& d, record& r) noexcept { d.end(r); }
  static void retire(Domain& d, record& r, retired_hook* node) { d.retire(r, node); }

  enum state : unsigned char { idle, holding, lent };

  Domain* domain_ = nullptr;
  record* record_ = nullptr;  // this thread's, once known
  state state_ = idle;
  [[no_unique_address]] loan loan_;  // while lent: debug builds count it in the region
};

template <class Domain>
class region_scheme_guard : public guard_base<region_scheme_guard<Domain>> {
  friend class region_hold<Domain>;  // a region's guard lends its operation

 public:
  // protect() cannot fail and the container re-checks nothing: the operation holds every node it
  // reads, and no slot is counted.
  static constexpr bool validates = false;

  // Begins an operation in d (or nests in the one this thread is in) until the guard's destruction.
  explicit region_scheme_guard(Domain& d) : domain_(d), record_(hold::begin(d)) {}
  ~region_scheme_guard() {
    this->check_owner();
    hold::end(domain_, record_);
  }

  // acquire: pairs with the release store or CAS that published the node.
  template <class P>
  P protect(const core::atomic<P>& src, unsigned /*slot*/) const noexcept {
    this->check_owner();
    return src.load(std::memory_order_acquire);
  }

 private:
  using hold = region_hold<Domain>;
  friend class guard_base<region_scheme_guard>;
  void retire_hook(retired_hook* node) { hold::retire(domain_, record_, node); }

  Domain& domain_;
  typename hold::record& record_;
};

}  // namespace reclaim::core
