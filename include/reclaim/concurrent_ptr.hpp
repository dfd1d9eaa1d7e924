// SPDX-License-Identifier: MIT
// Paper 003's smart-pointer interface (section 2), over every scheme that can serve it:
//
//   concurrent_ptr<T, MarkBits>     an atomic marked pointer: the links of a structure. A "weak"
//                                   pointer: what it loads may not be dereferenced.
//   guard_ptr<T, Scheme, MarkBits>  a snapshot of a concurrent_ptr that keeps its node from being
//                                   freed until it is reset, reassigned or destroyed; reclaim()
//                                   retires the node it holds.
//   region_guard<Scheme>            a scope that lends its protection to the guard_ptrs made
//                                   from it (see below).
//
// A guard_ptr made from a domain owns its protection, so such guard_ptrs are released in any
// order, nest, and live across container operations: there are no slot indices. What it owns
// depends on the scheme (Scheme::protection):
//   hp                                        one hazard slot from its thread's pool, taken on the
//                                             first acquire and given back when it is destroyed
//   debra, ebr, ner, qsbr, rcu, token_*       a share in the thread's current operation: while a
//                                             guard_ptr holds a node, the thread is inside an
//                                             operation (entering one if it was in none, else one
//                                             level deeper), so nothing retired since can be freed
//   none                                      nothing (nothing is freed while the domain lives)
//   nbr, nbr_plus                             cannot serve it: a compile error says why
// A guard_ptr belongs to the thread that made it, as a guard does, and is movable, not copyable: a
// copy under hp would need a new hazard published and fenced, as costly as a new acquire, so
// copying is spelled as one.
//
// region_guard<Scheme> enters an operation once for its scope (under hp it opens a guard and its
// block of hazard slots; under none it does nothing), and a guard_ptr made from it
// (`guard_ptr<T, Scheme> p(region)`) borrows from it instead of owning: the region's operation
// (acquire is then a plain load and letting go costs nothing) or one of its hazard slots (no pool
// traffic; once the region's slots are lent out, later guard_ptrs take from the pool). That is
// what a container's operation costs with explicit calls, and it is how the guarded containers
// are written. A borrowing guard_ptr must be destroyed before its region ends (debug builds stop
// otherwise); it moves freely to and from the others, what it borrowed going with it (a guard_ptr
// made from the domain that receives it then borrows too, and must also end first). Under
// qsbr a region is a stretch without quiescent states: the thread announces one only when its
// last region_guard, guard or holding guard_ptr is gone, so keep regions as short as operations.

// Memory orders. concurrent_ptr's operations take them as std::atomic's do (default seq_cst); a
// store or CAS that links a node must be release (or stronger) and the acquire that reads it
// acquire (or stronger), so that the node's contents are seen initialized: that pair is the
// container's. What each scheme adds (hp: the hazard's release store and fence before the
// re-read, pairing with a scan's fence and acquire loads; region schemes: the announcement at the
// start of the operation, pairing with the epoch's advance) is in the scheme's header, in the
// protection's comments.
//
// Writing a container with it: docs/writing-a-container.md, "With guard_ptr".
#pragma once
#include <atomic>
#include <cassert>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "concepts.hpp"
#include "read_phase.hpp"
#include "core/marked_ptr.hpp"
#include "core/retired.hpp"
#include "core/sync.hpp"

namespace reclaim {

template <class T, unsigned MarkBits = 0>
class concurrent_ptr {
 public:
  // What it holds, loads and compares with: a T* with MarkBits mark bits in its low bits.
  using pointer = marked_ptr<T, MarkBits>;

  constexpr concurrent_ptr() noexcept = default;
  // Holds p (with its mark) from the start; not atomic, as std::atomic's constructor is not.
  constexpr concurrent_ptr(pointer p) noexcept : value_(p) {}  // NOLINT: implicit, as std::atomic
  concurrent_ptr(const concurrent_ptr&) = delete;
  concurrent_ptr& operator=(const concurrent_ptr&) = delete;

  // An unprotected snapshot: compare it, store it, CAS with it; dereference it only through a
  // guard_ptr (or where nothing can retire the node).
  pointer load(std::memory_order order = std::memory_order_seq_cst) const noexcept {
    return value_.load(order);
  }
  void store(pointer p, std::memory_order order = std::memory_order_seq_cst) noexcept {
    value_.store(p, order);
  }
  bool compare_exchange_weak(pointer& expected, pointer desired, std::memory_order success,
                             std::memory_order failure) noexcept {
    return value_.compare_exchange_weak(expected, desired, success, failure);
  }
  bool compare_exchange_weak(pointer& expected, pointer desired,
                             std::memory_order order = std::memory_order_seq_cst) noexcept {
    return value_.compare_exchange_weak(expected, desired, order);
  }
  bool compare_exchange_strong(pointer& expected, pointer desired, std::memory_order success,
                               std::memory_order failure) noexcept {
    return value_.compare_exchange_strong(expected, desired, success, failure);
  }
  bool compare_exchange_strong(pointer& expected, pointer desired,
                               std::memory_order order = std::memory_order_seq_cst) noexcept {
    return value_.compare_exchange_strong(expected, desired, order);
  }

 private:
  template <class, class, unsigned>
  friend class guard_ptr;

  core::atomic<pointer> value_;
};

namespace detail {

// The scheme's owned protection, or the reason it has none.
template <class Scheme, bool Serves = !neutralizable_guard<typename Scheme::guard>>
struct protection_of {
  using type = typename Scheme::protection;
};
template <class Scheme>
struct protection_of<Scheme, false> {
  static_assert(
      !std::is_same_v<Scheme, Scheme>,
      "reclaim::guard_ptr and reclaim::region_guard cannot serve nbr or nbr_plus: a guard_ptr "
      "outlives any read phase, and neutralization restarts a read phase from the root, so no "
      "protection may survive it. Use the containers' calls, which open their own read phases: "
      "map.find(key) (a copy of the value) or map.visit(key, f) instead of holding a found node "
      "in a guard_ptr, set.contains(key), queue.pop() and stack.pop(); guarded_hm_hashmap, "
      "guarded_hm_list and guarded_ms_queue are hm_hashmap, hm_list and ms_queue. A structure "
      "of your own takes the scheme's guard, RECLAIM_READ_PHASE(g) and g.write_phase(nodes...) "
      "(docs/writing-a-container.md).");
  // Only so that the message above is the one error: every call guard_ptr and region_guard make
  // compiles, and none runs (the program does not build).
  struct type {
    struct region {
      template <class Domain>
      explicit region(Domain&) noexcept {}
    };
    template <class Domain>
    explicit type(Domain&) noexcept {}
    explicit type(region&) noexcept {}
    template <class P>
    P protect(const core::atomic<P>& src, std::memory_order order) {
      return src.load(order);
    }
    template <class P>
    bool try_protect(P&, const core::atomic<P>&, std::memory_order) {
      return false;
    }
    void reset_protection() noexcept {}
    void retire(core::retired_hook*) {}
  };
};

}  // namespace detail

template <class Scheme>
class region_guard;

// Spelled guard_ptr<node, Scheme, MarkBits>, beside concurrent_ptr<node, MarkBits>: a container
// names both once, e.g. `using guard = reclaim::guard_ptr<node, Scheme, 1>;`.
template <class T, class Scheme, unsigned MarkBits = 0>
class guard_ptr {
  using protection = typename detail::protection_of<Scheme>::type;

 public:
  // The pointer it holds (a T* with MarkBits mark bits), the concurrent_ptr it acquires from, and
  // the domain whose protection it holds.
  using pointer = marked_ptr<T, MarkBits>;
  using source = concurrent_ptr<T, MarkBits>;
  using domain_type = typename Scheme::domain;

  // Empty, for the scheme's default domain or for `d`.
  guard_ptr() : guard_ptr(Scheme::default_domain()) {}
  explicit guard_ptr(domain_type& d) noexcept : protection_(d) { check_node_type(); }
  // Empty, for region's domain, borrowing from the region: under the region schemes its
  // operation (acquire is a plain load, and there is nothing to let go), under hp one of its
  // hazard slots while it has one left. It must be destroyed before the region ends (debug builds
  // check): make guard_ptrs that outlive it from the domain.
  explicit guard_ptr(region_guard<Scheme>& region) noexcept : protection_(region.region_) {
    check_node_type();
  }
  // Moves the protection: `other` is left empty (under hp it keeps a slot for its next acquire).
  guard_ptr(guard_ptr&& other) noexcept
      : protection_(std::move(other.protection_)), ptr_(std::exchange(other.ptr_, pointer{})) {}
  guard_ptr& operator=(guard_ptr&& other) noexcept {
    if (this != &other) {
      protection_ = std::move(other.protection_);
      ptr_ = std::exchange(other.ptr_, pointer{});
    }
    return *this;
  }
  guard_ptr(const guard_ptr&) = delete;
  guard_ptr& operator=(const guard_ptr&) = delete;
  // The protection lets go. Always inlined, and so are the protections' destructors: a call that
  // may throw inside a guard_ptr's scope gets a landing pad that destroys the guard_ptr, and
  // the compiler does not inline on that cold path, so it would call the destructor with the
  // guard_ptr's address; an object whose address is taken lives in memory, and every acquire
  // would then test its state from the stack instead of having it folded away (12% more
  // instructions per guarded_ms_queue operation under debra and hp; docs/results.md).
  [[gnu::always_inline]] ~guard_ptr() {}


  // Takes a protected snapshot of src (under hp: publishes it, then re-reads src until it is
  // stable, so it may loop while src keeps changing). What this held before is released. `order`
  // is the loads'; acquire or stronger to read the node.
  void acquire(const source& src, std::memory_order order = std::memory_order_seq_cst) {
    ptr_ = protection_.protect(src.value_, order);
  }
  // Takes src's node if src holds `expected` and returns true; otherwise becomes empty and returns
  // false. It never loops: for lock-free algorithms that already know what they expect to find.
  bool acquire_if_equal(const source& src, pointer expected,
                        std::memory_order order = std::memory_order_seq_cst) {
    if (protection_.try_protect(expected, src.value_, order)) {
      ptr_ = expected;
      return true;
    }
    ptr_ = pointer{};
    return false;
  }

  // Empty: the node may be freed from now on (under hp at the next scan that misses it; under a
  // region scheme once the thread's operation ends and the epoch moves on).
  void reset() noexcept {
    protection_.reset_protection();
    ptr_ = pointer{};
  }

  // Retires the node this holds (unlinked by this thread, once) and resets: it is freed when no
  // protection covers it any more. The retire runs through this guard_ptr's protection, inside the
  // operation it holds (region schemes) or on its thread's record (hp), as a guard's would.
  void reclaim() { retire_then_reset(core::to_retired(held())); }
  // The same with a deleter `void(T*)`, as guard.retire<Deleter>(node).
  template <auto Deleter>
  void reclaim() {
    retire_then_reset(core::to_retired<Deleter>(held()));
  }

  // The protected node (nullptr when empty), without the mark; valid until reset, reassignment or
  // destruction. -> and * assert that the guard_ptr is not empty; mark() is the snapshot's mark.
  T* get() const noexcept { return ptr_.get(); }
  T* operator->() const noexcept {
    assert(ptr_ && "reclaim: guard_ptr dereferenced while empty");
    return ptr_.get();
  }
  T& operator*() const noexcept { return *operator->(); }
  std::uintptr_t mark() const noexcept { return ptr_.mark(); }
  // The protected snapshot, mark included: to compare with a load or pass to a CAS.
  operator pointer() const noexcept { return ptr_; }  // NOLINT: implicit by design
  explicit operator bool() const noexcept { return static_cast<bool>(ptr_); }

 private:
  static constexpr void check_node_type() noexcept {
    static_assert(std::is_base_of_v<typename Scheme::node_base, T>,
                  "reclaim::guard_ptr<T, Scheme>: T must derive from Scheme::node_base");
  }
  T* held() const noexcept {
    assert(ptr_ && "reclaim: guard_ptr::reclaim() on an empty guard_ptr");
    return ptr_.get();
  }
  void retire_then_reset(core::retired_hook* node) {
    protection_.retire(node);
    reset();
  }

  protection protection_;
  pointer ptr_;
};

// Enters the thread into an operation for its scope (where the scheme has operations to enter),
// and lends it to the guard_ptrs made from it (see the top of this file). guard_ptrs made from the
// domain may outlive it.
template <class Scheme>
class region_guard {
  using region = typename detail::protection_of<Scheme>::type::region;

 public:
  explicit region_guard(typename Scheme::domain& d = Scheme::default_domain()) : region_(d) {}
  region_guard(const region_guard&) = delete;
  region_guard& operator=(const region_guard&) = delete;

 private:
  template <class, class, unsigned>
  friend class guard_ptr;

  region region_;
};

}  // namespace reclaim
