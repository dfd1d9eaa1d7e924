// SPDX-License-Identifier: MIT
// Concurrent reference counting over a reclamation scheme (issue 30; the idea of Anderson,
// Blelloch and Wei, "Concurrent Deferred Reference Counting with Constant-Time Overhead", PLDI
// 2021): the scheme protects the short window between reading a pointer from a shared location and
// incrementing its count, and the decrement a location drops is deferred past a grace period.
//
//   rc_ptr<T>                  owning and counted, as std::shared_ptr without weak pointers or
//                              aliasing. make_rc<T, Scheme>(args...) allocates one block: the
//                              count, the scheme's node base (so that the block can be retired)
//                              and T. Copies increment (relaxed), destruction decrements (acq_rel)
//                              and destroys T and frees the block at zero. Any thread.
//   atomic_rc_ptr<T, Scheme>   a shared location holding an rc_ptr: load() protects the block as
//                              a guard_ptr does, increments its count while protected and returns
//                              an rc_ptr; store, exchange and compare_exchange_weak/strong have
//                              std::atomic<std::shared_ptr<T>>'s signatures. Lock-free as far as
//                              the scheme's protect() and retire() are.
//   snapshot_ptr<T, Scheme>    a protected read that does not touch the count: dereferenceable
//                              while it lives, and convertible to rc_ptr<T>. It belongs to the
//                              thread that made it, like a guard_ptr (under epoch schemes it
//                              holds the thread inside an operation: keep it short).
//
// Deferred decrements. A location that drops its reference (store, exchange, a successful CAS)
// must not decrement at once: a concurrent load may have read the pointer and not yet
// incremented. So the block itself is retired, and the decrement is applied by the deleter the
// scheme calls after the grace period (the block must be what is retired: hazard pointers protect
// its address, era schemes its birth era). A block can be dropped from several locations at once,
// but its retire hook can be in one retire list only, so each block has one word of drops:
//
//   bit 63        a retire of this block is in flight
//   bits 32..62   "since": drops that arrived while it was in flight
//   bits 0..30    "covered": drops that the retire in flight will apply
//
// A drop that finds no retire in flight sets the bit with covered = 1 and retires the block; one
// that finds a retire in flight adds 1 to since. The deleter (after the grace period) takes the
// word: if since > 0 it moves since to covered and retires the block again (every one of those
// drops happened before this second retire), else it clears the word; then it applies its covered
// decrements, destroying T and freeing the block at zero. The block's count includes every
// location's reference until its decrement is applied, so the count cannot reach zero while a
// retire is in flight or a drop is pending.
//
// Which schemes: those whose guard_ptr works and whose domain frees while it lives (grace
// periods). Not nbr and nbr_plus (a protection must not survive a read phase), not lfrc (its node
// memory is its own, and a block is freed directly when its count reaches zero), not none (it
// never frees, so deferred decrements would never be applied). Each is a compile error that says
// so. Tested under debra, hp, he, ebr, ibr, qsbr, hyaline and crystalline_l
// (tests/rc_ptr_test.cpp).
//
// Domain lifetime: a block dropped from a location is retired into the atomic_rc_ptr's domain and
// may be retired again from the scheme's deleter, so call domain.barrier() until the domain's
// pending count is zero before destroying the domain (a re-retire while the domain is shutting
// down is not supported). All atomic_rc_ptrs that hold one block must use the same domain (debug
// builds check).
#pragma once
#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "concepts.hpp"
#include "concurrent_ptr.hpp"
#include "core/retired.hpp"
#include "core/sync.hpp"

namespace reclaim {

template <class T>
class rc_ptr;
template <class T, class Scheme>
class atomic_rc_ptr;
template <class T, class Scheme>
class snapshot_ptr;

namespace detail {

// The part of a block that rc_ptr<T> sees, whatever the scheme: the count and how to dispose of
// the block when it reaches zero.
struct rc_control {
  // Counts rc_ptrs and locations (atomic_rc_ptrs) that hold the block; a location's reference
  // stays counted until its deferred decrement is applied.
  core::atomic<long> count{1};
  void (*dispose)(rc_control*) noexcept;

  explicit rc_control(void (*d)(rc_control*) noexcept) noexcept : dispose(d) {}

  void increment() noexcept {
    // relaxed: the caller already holds a reference (or a protection of a location's), as a
    // shared_ptr copy; nothing is published through the count.
    count.fetch_add(1, std::memory_order_relaxed);
  }
  // Applies n decrements now; disposes of the block at zero.
  void decrement(long n = 1) noexcept {
    // acq_rel: release so that this holder's uses of T happen before the destruction; acquire
    // on the last one, so that everyone's uses (their release decrements, in the count's
    // modification order) happen before it disposes of the block.
    if (count.fetch_sub(n, std::memory_order_acq_rel) == n) dispose(this);
  }
};

// The block: the scheme's node base first (what protect() and retire() see), then the count,
// the drops word and the domain it is retired into, then T.
template <class T, class Scheme>
struct rc_block : Scheme::node_base, rc_control {
  using domain_type = typename Scheme::domain;

  static constexpr std::uint64_t in_flight = std::uint64_t{1} << 63;
  static constexpr std::uint64_t since_one = std::uint64_t{1} << 32;
  static constexpr std::uint64_t field = (std::uint64_t{1} << 31) - 1;

  template <class... Args>
  explicit rc_block(domain_type& d, Args&&... args)
      : rc_control(&dispose_block), domain(&d), value(std::forward<Args>(args)...) {}

  static void dispose_block(rc_control* c) noexcept { delete static_cast<rc_block*>(c); }

  // A location drops its reference to b (after the atomic operation that removed b from it).
  static void defer_decrement(rc_block* b) {
    std::uint64_t w = b->drops.load(std::memory_order_relaxed);
    for (;;) {
      if (!(w & in_flight)) {
        // acquire: pairs with the release CAS of the deleter that cleared the word, so that the
        // scheme's last use of the retire hook (and the deleter's) happens before we retire the
        // block again and the scheme writes the hook.
        if (b->drops.compare_exchange_weak(w, in_flight | 1, std::memory_order_acquire,
                                           std::memory_order_relaxed)) {
          // The atomic operation that removed b from the location is sequenced before this
          // retire: a protection that begins after it cannot find b there.
          b->domain->retire(b, grace_deleter{});
          return;
        }
      } else {
        assert(((w >> 32) & field) < field && "reclaim: rc_ptr drops overflow");
        // release: pairs with the deleter's acquire load / CAS that reads this drop, so that the
        // atomic operation that removed b from our location happens before the deleter's
        // re-retire (which covers this drop).
        if (b->drops.compare_exchange_weak(w, w + since_one, std::memory_order_release,
                                           std::memory_order_relaxed))
          return;
      }
    }
  }

  // What the scheme calls once no protection that began before the retire can still hold b.
  struct grace_deleter {
    void operator()(rc_block* b) const noexcept { b->after_grace(); }
  };

  void after_grace() noexcept {
    // The scheme is done with the hook (it called us); a later retire of this block tags it
    // anew (tag_retired() checks that a node is not retired while its deleter is set). These
    // writes happen before that retire: ours directly, or through our release CAS on the word
    // and the acquire CAS of the drop that retires next.
    core::retired_hook& hook = *this;
    hook.destroy = nullptr;
    hook.next_retired = nullptr;
    // acquire: pairs with the release CASes of the drops that added to since (see above).
    std::uint64_t w = drops.load(std::memory_order_acquire);
    const long covered = static_cast<long>(w & field);
    assert((w & in_flight) && covered > 0);
    for (;;) {
      const std::uint64_t since = (w >> 32) & field;
      // Only this deleter changes covered while the bit is set; drops only add to since.
      const std::uint64_t next = since ? (in_flight | since) : 0;
      // acq_rel: acquire as above for drops that arrived since our load; release when clearing,
      // pairing with the acquire CAS of the next drop that sets the bit and retires again.
      if (drops.compare_exchange_weak(w, next, std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
        // Those `since` locations' references are still counted, so the block lives through
        // this retire (count >= covered + since).
        if (since) domain->retire(this, grace_deleter{});
        break;
      }
    }
    // After the word is given up: a block whose count reaches zero is freed at once, and the
    // word is part of it.
    decrement(covered);
  }

  core::atomic<std::uint64_t> drops{0};
  domain_type* domain;
  T value;
};

}  // namespace detail

// Owning and counted (see the top of this file); made by make_rc / make_rc_in, or loaded from an
// atomic_rc_ptr. Any thread.
template <class T>
class rc_ptr {
 public:
  // The pointee's type.
  using element_type = T;

  // Empty.
  constexpr rc_ptr() noexcept = default;
  constexpr rc_ptr(std::nullptr_t) noexcept {}  // NOLINT: implicit, as shared_ptr
  rc_ptr(const rc_ptr& other) noexcept : ptr_(other.ptr_), ctl_(other.ctl_) {
    if (ctl_) ctl_->increment();
  }
  rc_ptr(rc_ptr&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), ctl_(std::exchange(other.ctl_, nullptr)) {}
  // Copy or move assignment (copy and swap).
  rc_ptr& operator=(rc_ptr other) noexcept {
    swap(other);
    return *this;
  }
  ~rc_ptr() {
    if (ctl_) ctl_->decrement();
  }

  // Drops the reference (empty from now on), and exchanges two rc_ptrs.
  void reset() noexcept { rc_ptr().swap(*this); }
  void swap(rc_ptr& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(ctl_, other.ctl_);
  }

  // The object (nullptr when empty); * and -> assert that it is not empty.
  T* get() const noexcept { return ptr_; }
  T& operator*() const noexcept {
    assert(ptr_ && "reclaim: empty rc_ptr dereferenced");
    return *ptr_;
  }
  T* operator->() const noexcept {
    assert(ptr_ && "reclaim: empty rc_ptr dereferenced");
    return ptr_;
  }
  explicit operator bool() const noexcept { return ptr_ != nullptr; }
  // The count: rc_ptrs and locations holding the block, including locations whose deferred
  // decrement is not applied yet (so it may exceed what is visible). Relaxed: a hint, as
  // shared_ptr::use_count.
  long use_count() const noexcept {
    return ctl_ ? ctl_->count.load(std::memory_order_relaxed) : 0;
  }

  friend bool operator==(const rc_ptr& a, const rc_ptr& b) noexcept { return a.ctl_ == b.ctl_; }
  friend bool operator==(const rc_ptr& a, std::nullptr_t) noexcept { return !a.ctl_; }

 private:
  template <class, class>
  friend class atomic_rc_ptr;
  template <class, class>
  friend class snapshot_ptr;
  template <class U, class S, class... Args>
  friend rc_ptr<U> make_rc_in(typename S::domain&, Args&&...);

  // Takes over a reference already counted.
  rc_ptr(T* p, detail::rc_control* c) noexcept : ptr_(p), ctl_(c) {}

  T* ptr_ = nullptr;
  detail::rc_control* ctl_ = nullptr;
};

namespace detail {

// Whether Scheme can serve atomic_rc_ptr and snapshot_ptr (see the top of this file).
template <class Scheme>
inline constexpr bool rc_serves = !neutralizable_guard<typename Scheme::guard> &&
                                  !(Scheme::needs & needs_allocated_nodes) &&
                                  grace_periods<Scheme>;

template <class Scheme>
constexpr void check_rc_scheme() {
  static_assert(!neutralizable_guard<typename Scheme::guard>,
                "reclaim::atomic_rc_ptr and snapshot_ptr cannot serve nbr or nbr_plus: a load "
                "protects the block until it has incremented its count, and a snapshot_ptr "
                "outlives any read phase, while neutralization restarts read phases and voids "
                "their protections. Use an epoch scheme (debra), hazard pointers (hp) or an era "
                "scheme (he).");
  static_assert(!(Scheme::needs & needs_allocated_nodes),
                "reclaim::atomic_rc_ptr and rc_ptr cannot serve lfrc: lfrc keeps its own count in "
                "node memory it never gives back, while an rc_ptr block is freed directly when "
                "its count reaches zero. Use an epoch scheme (debra), hazard pointers (hp) or an "
                "era scheme (he).");
  static_assert(grace_periods<Scheme>,
                "reclaim::atomic_rc_ptr cannot serve a scheme that frees nothing while its domain "
                "lives (none): a location's dropped reference is decremented only when the scheme "
                "frees the retired block. Use debra, hp or he.");
}

// The scheme's owned protection; for a scheme that cannot serve, a stand-in whose every call
// compiles, so that check_rc_scheme()'s message is the one error.
template <class Scheme, bool = rc_serves<Scheme>>
struct rc_protection {
  using type = typename protection_of<Scheme>::type;
};
template <class Scheme>
struct rc_protection<Scheme, false> {
  struct type {
    template <class Domain>
    explicit type(Domain&) noexcept {}
    template <class P>
    P protect(const core::atomic<P>& src, std::memory_order order) {
      return src.load(order);
    }
    void reset_protection() noexcept {}
  };
};

}  // namespace detail

// Makes T in a new block for Scheme's domain `d`; the returned rc_ptr holds the one reference.
template <class T, class Scheme, class... Args>
rc_ptr<T> make_rc_in(typename Scheme::domain& d, Args&&... args) {
  detail::check_rc_scheme<Scheme>();
  using block = detail::rc_block<T, Scheme>;
  // The domain's create(): schemes that stamp a birth era at allocation (he, ibr) do it there.
  block* b = d.template create<block>(d, std::forward<Args>(args)...);
  return rc_ptr<T>(&b->value, b);
}
// The same for Scheme's default domain.
template <class T, class Scheme, class... Args>
rc_ptr<T> make_rc(Args&&... args) {
  return make_rc_in<T, Scheme>(Scheme::default_domain(), std::forward<Args>(args)...);
}

// A protected, uncounted read of an atomic_rc_ptr (its get_snapshot()); see the top of this file.
template <class T, class Scheme>
class snapshot_ptr {
  static_assert((detail::check_rc_scheme<Scheme>(), true));
  using block = detail::rc_block<T, Scheme>;
  using protection = typename detail::rc_protection<Scheme>::type;

 public:
  // The domain whose protection it holds.
  using domain_type = typename Scheme::domain;

  // Empty, for Scheme's default domain or for d.
  snapshot_ptr() : snapshot_ptr(Scheme::default_domain()) {}
  explicit snapshot_ptr(domain_type& d) noexcept : protection_(d) {
    detail::check_rc_scheme<Scheme>();
  }
  snapshot_ptr(snapshot_ptr&& other) noexcept
      : protection_(std::move(other.protection_)), block_(std::exchange(other.block_, nullptr)) {}
  snapshot_ptr& operator=(snapshot_ptr&& other) noexcept {
    if (this != &other) {
      protection_ = std::move(other.protection_);
      block_ = std::exchange(other.block_, nullptr);
    }
    return *this;
  }
  snapshot_ptr(const snapshot_ptr&) = delete;
  snapshot_ptr& operator=(const snapshot_ptr&) = delete;

  // The object (nullptr when empty), valid while this lives and holds it; * and -> assert that it
  // is not empty.
  T* get() const noexcept { return block_ ? &block_->value : nullptr; }
  T& operator*() const noexcept { return *operator->(); }
  T* operator->() const noexcept {
    assert(block_ && "reclaim: empty snapshot_ptr dereferenced");
    return &block_->value;
  }
  explicit operator bool() const noexcept { return block_ != nullptr; }
  // Lets go of the protection.
  void reset() noexcept {
    protection_.reset_protection();
    block_ = nullptr;
  }
  // A counted reference to what it holds (incremented while protected: the location's reference
  // is still counted, its decrement deferred past our protection, so the count is at least 1).
  operator rc_ptr<T>() const noexcept {  // NOLINT: implicit by design
    if (!block_) return {};
    block_->increment();
    return rc_ptr<T>(&block_->value, block_);
  }

  friend bool operator==(const snapshot_ptr& a, const rc_ptr<T>& b) noexcept {
    return a.get() == b.get();
  }

 private:
  friend class atomic_rc_ptr<T, Scheme>;

  protection protection_;
  block* block_ = nullptr;
};

// A shared location holding an rc_ptr<T>, for Scheme's domain; see the top of this file.
template <class T, class Scheme>
class atomic_rc_ptr {
  static_assert((detail::check_rc_scheme<Scheme>(), true));
  using block = detail::rc_block<T, Scheme>;
  using protection = typename detail::rc_protection<Scheme>::type;

 public:
  // What it loads and stores, the domain it protects and retires through, and (as std::atomic)
  // whether it is lock-free.
  using value_type = rc_ptr<T>;
  using domain_type = typename Scheme::domain;
  static constexpr bool is_always_lock_free = true;

  // Empty (or holding `desired`), for Scheme's default domain or for d. Not atomic, as
  // std::atomic's constructors are not.
  atomic_rc_ptr() noexcept : atomic_rc_ptr(Scheme::default_domain()) {}
  explicit atomic_rc_ptr(domain_type& d) noexcept : domain_(&d) {
    detail::check_rc_scheme<Scheme>();
  }
  explicit atomic_rc_ptr(rc_ptr<T> desired, domain_type& d = Scheme::default_domain()) noexcept
      : atomic_rc_ptr(d) {
    loc_.store(take(desired), std::memory_order_relaxed);
  }
  atomic_rc_ptr(const atomic_rc_ptr&) = delete;
  atomic_rc_ptr& operator=(const atomic_rc_ptr&) = delete;
  // Every operation on it happens before its destruction, loads included, so no load can still
  // be about to increment: the reference is dropped at once.
  ~atomic_rc_ptr() {
    if (block* b = loc_.load(std::memory_order_relaxed)) b->decrement();
  }

  // True: as lock-free as the scheme's protect() and retire().
  bool is_lock_free() const noexcept { return true; }

  // A counted copy of what it holds. `order` is the protected read's (relaxed and release are
  // strengthened to acquire: the block's T is read through the result).
  rc_ptr<T> load(std::memory_order order = std::memory_order_seq_cst) const {
    protection p(*domain_);
    block* b = p.protect(loc_, read_order(order));
    if (!b) return {};
    // While p protects b, the location's reference cannot be decremented (its deferred decrement
    // waits for p), so the count is at least 1 and a relaxed increment suffices.
    b->increment();
    return rc_ptr<T>(&b->value, b);
  }
  // load(), as std::atomic's conversion.
  operator rc_ptr<T>() const { return load(); }  // NOLINT: as std::atomic

  // What it holds, protected but not counted.
  snapshot_ptr<T, Scheme> get_snapshot(std::memory_order order = std::memory_order_seq_cst) const {
    snapshot_ptr<T, Scheme> s(*domain_);
    s.block_ = s.protection_.protect(loc_, read_order(order));
    return s;
  }

  // Takes desired's reference; the reference it held is dropped after a grace period.
  void store(rc_ptr<T> desired, std::memory_order order = std::memory_order_seq_cst) {
    // The location takes desired's reference. At least acq_rel whatever `order` says (see
    // rmw_order()): the loader's acquire pairs with our release.
    block* old = loc_.exchange(take(desired), rmw_order(order));
    if (old) block::defer_decrement(old);
  }
  // store(desired).
  atomic_rc_ptr& operator=(rc_ptr<T> desired) {
    store(std::move(desired));
    return *this;
  }

  // Takes desired's reference and returns what it held, counted anew.
  rc_ptr<T> exchange(rc_ptr<T> desired, std::memory_order order = std::memory_order_seq_cst) {
    block* old = loc_.exchange(take(desired), rmw_order(order));
    if (!old) return {};
    // The location's reference cannot become the result's: a loader may have read old and not
    // yet incremented, and the caller may drop the result at once. So the result gets a new
    // reference (we hold the location's, so the count is at least 1) and the location's is
    // dropped through the grace period.
    old->increment();
    block::defer_decrement(old);
    return rc_ptr<T>(&old->value, old);
  }

  // As std::atomic<std::shared_ptr<T>>: equal means the same block. On success the location
  // takes desired's reference and drops expected's (after a grace period); on failure expected
  // becomes a counted copy of what it holds. weak may fail spuriously.
  bool compare_exchange_weak(rc_ptr<T>& expected, rc_ptr<T> desired, std::memory_order success,
                             std::memory_order failure) {
    return cas(expected, desired, success, failure, false);
  }
  bool compare_exchange_weak(rc_ptr<T>& expected, rc_ptr<T> desired,
                             std::memory_order order = std::memory_order_seq_cst) {
    return cas(expected, desired, order, failure_order(order), false);
  }
  bool compare_exchange_strong(rc_ptr<T>& expected, rc_ptr<T> desired,
                               std::memory_order success, std::memory_order failure) {
    return cas(expected, desired, success, failure, true);
  }
  bool compare_exchange_strong(rc_ptr<T>& expected, rc_ptr<T> desired,
                               std::memory_order order = std::memory_order_seq_cst) {
    return cas(expected, desired, order, failure_order(order), true);
  }

 private:
  static constexpr std::memory_order read_order(std::memory_order o) noexcept {
    return o == std::memory_order_relaxed || o == std::memory_order_release
               ? std::memory_order_acquire
           : o == std::memory_order_acq_rel ? std::memory_order_acquire
                                            : o;
  }
  // Every RMW on the location is at least acq_rel: release publishes desired's T to loaders, and
  // acquire makes the block we take out (its T, its domain field) visible to us.
  static constexpr std::memory_order rmw_order(std::memory_order o) noexcept {
    return o == std::memory_order_seq_cst ? o : std::memory_order_acq_rel;
  }
  static constexpr std::memory_order failure_order(std::memory_order o) noexcept {
    return o == std::memory_order_acq_rel   ? std::memory_order_acquire
           : o == std::memory_order_release ? std::memory_order_relaxed
                                            : o;
  }

  // The block of p, whose reference the caller keeps (p unchanged).
  block* block_of(const rc_ptr<T>& p) const noexcept {
    if (!p.ctl_) return nullptr;
    assert(p.ctl_->dispose == &block::dispose_block &&
           "reclaim: an rc_ptr made for another scheme stored in an atomic_rc_ptr");
    block* b = static_cast<block*>(p.ctl_);
    assert(b->domain == domain_ && "reclaim: an rc_ptr made for another domain");
    return b;
  }
  // The block of p, whose reference is taken over (p left empty).
  block* take(rc_ptr<T>& p) const noexcept {
    block* b = block_of(p);
    p.ptr_ = nullptr;
    p.ctl_ = nullptr;
    return b;
  }

  bool cas(rc_ptr<T>& expected, rc_ptr<T>& desired, std::memory_order success,
           std::memory_order failure, bool strong) {
    block* const want = block_of(expected);
    block* const give = block_of(desired);
    for (;;) {
      block* seen = want;
      if (loc_.compare_exchange_strong(seen, give, rmw_order(success), read_order(failure))) {
        // The location took desired's reference and dropped want's (deferred, as store()).
        if (give) {
          desired.ptr_ = nullptr;
          desired.ctl_ = nullptr;
        }
        if (want) block::defer_decrement(want);
        return true;
      }
      // expected becomes a counted copy of what the location holds now (as a load(failure)).
      // The CAS saw `seen`; what we protect may be newer. If it is `want` again, a strong CAS
      // tries again (it may fail only when the values differ); a weak one reports a spurious
      // failure with expected unchanged.
      protection p(*domain_);
      block* now = p.protect(loc_, read_order(failure));
      if (now == want) {
        if (strong) continue;
        return false;
      }
      if (now) now->increment();
      expected = now ? rc_ptr<T>(&now->value, now) : rc_ptr<T>();
      return false;
    }
  }

  domain_type* domain_;
  core::atomic<block*> loc_{nullptr};
};

}  // namespace reclaim
