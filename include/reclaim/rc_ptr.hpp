// SPDX-License-Identifier: MIT
// Concurrent reference counting over a reclamation scheme (the idea of Anderson, Blelloch and Wei,
// "Concurrent Deferred Reference Counting with Constant-Time Overhead", PLDI 2021): the scheme
// protects the short window between reading a pointer from a shared location and incrementing
// its count, and the decrement a location drops is deferred past a grace period.
//
//   rc_ptr<T>                  owning and counted, as std::shared_ptr without weak pointers or
//                              aliasing. make_rc<T, Scheme>(args...) allocates one block: the
//                              scheme's node base (so that the block can be retired), the count
//                              and T; allocate_rc takes an allocator for it, adopt_rc a pointer
//                              and a deleter. Copies increment (relaxed), destruction decrements
//                              (acq_rel) and disposes of T and the block at zero. Any thread.
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
// retire is in flight or a drop is pending. After 2^31 - 1 drops of one object within one grace
// period, a further drop waits for that grace period to end.
//
// Which schemes: those whose guard_ptr works and whose domain frees while it lives (grace
// periods). Not nbr and nbr_plus (a protection must not survive a read phase), not lfrc (its node
// memory is its own, and a block is freed directly when its count reaches zero), not none (it
// never frees, so deferred decrements would never be applied). Each is a compile error that says
// so. The default, default_rc_scheme, is the one that measured fastest (docs/rc_ptr.md).
//
// Domain lifetime: a block dropped from a location is retired into the atomic_rc_ptr's domain.
// When the domain is destroyed, the deleters it runs apply every drop at once (no protection can
// exist then). All atomic_rc_ptrs that hold one block must use the domain the block was made for
// (debug builds check).
//
// Cycles of rc_ptrs are never freed, as with std::shared_ptr.
#pragma once
#include <atomic>
#include <cassert>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

#include "concepts.hpp"
#include "concurrent_ptr.hpp"
#include "core/retired.hpp"
#include "core/sync.hpp"
#include "free/amortized.hpp"
#include "schemes/hp.hpp"

namespace reclaim {

// The scheme make_rc, atomic_rc_ptr and snapshot_ptr use unless given another: hazard pointers
// freeing one safe block per operation (amortized), the fastest on the lab's shared-config
// workload at 2 threads, loads, snapshots and stores alike, and with a bound on the replaced
// objects a stalled reader keeps (docs/rc_ptr.md, docs/results.md).
using default_rc_scheme = hp<amortized_free<1>>;

// Whether Scheme can serve atomic_rc_ptr and snapshot_ptr (see the top of this file), and if not,
// why in one line (the lab's matrix shows it; using them is a compile error with the fix).
template <class Scheme>
constexpr applicability rc_applies() {
  if constexpr (neutralizable_guard<typename Scheme::guard>)
    return {false, "atomic_rc_ptr cannot serve neutralization: a load protects a block until it "
                   "has counted it, and a snapshot_ptr outlives any read phase, while a "
                   "neutralized read phase restarts and loses its protections"};
  else if constexpr ((Scheme::needs & needs_allocated_nodes) != 0)
    return {false, "atomic_rc_ptr cannot serve lfrc: lfrc keeps its own count in node memory it "
                   "never gives back, while an rc_ptr block is freed when its count reaches zero"};
  else if constexpr (!grace_periods<Scheme>)
    return {false, "atomic_rc_ptr needs a scheme that frees while its domain lives: a dropped "
                   "reference is decremented when the scheme frees the retired block"};
  else
    return {true};
}

template <class T>
class rc_ptr;
template <class T, class Scheme = default_rc_scheme>
class atomic_rc_ptr;
template <class T, class Scheme = default_rc_scheme>
class snapshot_ptr;

namespace detail {

// The part of a block that rc_ptr<T> sees, whatever the scheme: the count, how to dispose of the
// block when it reaches zero, and the domain it was made for.
struct rc_control {
  // Counts rc_ptrs and locations (atomic_rc_ptrs) that hold the block; a location's reference
  // stays counted until its deferred decrement is applied.
  core::atomic<long> count{1};
  void (*const dispose)(rc_control*) noexcept;
  void* const domain;  // the Scheme::domain it is retired into

  rc_control(void (*d)(rc_control*) noexcept, void* dom) noexcept : dispose(d), domain(dom) {}

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
    if (count.fetch_sub(n, RECLAIM_MUTATED(rc_decrement_release) ? std::memory_order_release
                                                                  : std::memory_order_acq_rel) == n)
      dispose(this);
  }
};

// What an atomic_rc_ptr<T, Scheme> holds: the scheme's node base first (what protect() and
// retire() see), the count, the drops word and where T is. The blocks below derive from it.
template <class T, class Scheme>
struct rc_node : Scheme::node_base, rc_control {
  using domain_type = typename Scheme::domain;

  static constexpr std::uint64_t in_flight = std::uint64_t{1} << 63;
  static constexpr std::uint64_t since_one = std::uint64_t{1} << 32;
  static constexpr std::uint64_t field = (std::uint64_t{1} << 31) - 1;

  rc_node(void (*d)(rc_control*) noexcept, domain_type& dom) noexcept : rc_control(d, &dom) {}

  domain_type& owner() const noexcept { return *static_cast<domain_type*>(domain); }

  // A location drops its reference to this block (after the atomic operation that removed it).
  void defer_decrement() {
    std::uint64_t w = drops.load(std::memory_order_relaxed);
    for (;;) {
      if (!(w & in_flight)) {
        // acquire: pairs with the release CAS of the deleter that cleared the word, so that the
        // scheme's last use of the retire hook (and the deleter's) happens before we retire the
        // block again and the scheme writes the hook.
        if (drops.compare_exchange_weak(w, in_flight | 1, std::memory_order_acquire,
                                        std::memory_order_relaxed)) {
          // The atomic operation that removed the block from the location is sequenced before
          // this retire: a protection that begins after it cannot find the block there.
          owner().retire(this, grace_deleter{});
          return;
        }
      } else if (((w >> 32) & field) == field) [[unlikely]] {
        // since is full: wait for the retire in flight to end (see the top of this file).
        core::yield_now();
        w = drops.load(std::memory_order_relaxed);
      } else if (drops.compare_exchange_weak(w, w + since_one,
                                             RECLAIM_MUTATED(rc_drop_relaxed)
                                                 ? std::memory_order_relaxed
                                                 : std::memory_order_release,
                                             std::memory_order_relaxed)) {
        // release: pairs with the deleter's acquire load / CAS that reads this drop, so that the
        // atomic operation that removed the block from our location happens before the
        // deleter's re-retire (which covers this drop).
        return;
      }
    }
  }

  // What the scheme calls once no protection that began before the retire can still hold us.
  struct grace_deleter {
    void operator()(rc_node* n) const noexcept { n->after_grace(); }
  };

  void after_grace() noexcept {
    // The scheme is done with the hook (it called us); a later retire of this block tags it
    // anew (tag_retired() checks that a node is not retired while its deleter is set). These
    // writes happen before that retire: ours directly, or through our release CAS on the word
    // and the acquire CAS of the drop that retires next.
    core::retired_hook& hook = *this;
    hook.destroy = nullptr;
    hook.next_retired = nullptr;
    // The destroying thread runs the last deleters, with no protection left anywhere: every
    // drop can be applied now.
    const bool final = owner().shutting_down();
    // acquire: pairs with the release CASes of the drops that added to since (see above).
    std::uint64_t w = drops.load(std::memory_order_acquire);
    assert((w & in_flight) && (w & field) > 0);
    // The common end of a replaced object: nothing but our drops holds it. No location holds it
    // (each would be counted), no rc_ptr does, and no load can count it again (a load that read
    // it from a location was protected, and the scheme calls us only after every such protection
    // ended, which orders the load's increment before this read). So it is freed without giving
    // the word back. acquire: pairs with the release decrements of the holders that let go, so
    // that their uses of T happen before the destruction.
    if (count.load(RECLAIM_MUTATED(rc_shortcut_relaxed) ? std::memory_order_relaxed
                                                         : std::memory_order_acquire) ==
        static_cast<long>(w & field)) {
      dispose(this);
      return;
    }
    long apply = 0;
    for (;;) {
      const std::uint64_t since = RECLAIM_MUTATED(rc_since_dropped) ? 0 : (w >> 32) & field;
      // Only this deleter changes covered while the bit is set; drops only add to since.
      const std::uint64_t next =
          since && !final && !RECLAIM_MUTATED(rc_since_applied_at_once) ? (in_flight | since) : 0;
      // acq_rel: acquire as above for drops that arrived since our load; release when clearing,
      // pairing with the acquire CAS of the next drop that sets the bit and retires again.
      if (drops.compare_exchange_weak(w, next, std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
        apply = static_cast<long>(w & field);
        // Those `since` locations' references are still counted, so the block lives through
        // this retire (count >= covered + since).
        if (next) owner().retire(this, grace_deleter{});
        else apply += static_cast<long>(since);
        break;
      }
    }
    // After the word is given up: a block whose count reaches zero is freed at once, and the
    // word is part of it.
    decrement(apply);
  }

  core::atomic<std::uint64_t> drops{0};
  T* object = nullptr;  // set by the block once T exists
};

// make_rc's block: T inside.
template <class T, class Scheme>
struct rc_inline_block final : rc_node<T, Scheme> {
  template <class... Args>
  explicit rc_inline_block(typename Scheme::domain& d, Args&&... args)
      : rc_node<T, Scheme>(&dispose_block, d), value(std::forward<Args>(args)...) {
    this->object = &value;
  }
  static void dispose_block(rc_control* c) noexcept {
    delete static_cast<rc_inline_block*>(static_cast<rc_node<T, Scheme>*>(c));
  }
  T value;
};

// adopt_rc's block: a pointer to T made elsewhere, and the deleter to call on it.
template <class T, class Scheme, class Deleter>
struct rc_adopted_block final : rc_node<T, Scheme> {
  rc_adopted_block(typename Scheme::domain& d, T* p, Deleter del)
      : rc_node<T, Scheme>(&dispose_block, d), deleter(std::move(del)) {
    this->object = p;
  }
  static void dispose_block(rc_control* c) noexcept {
    auto* b = static_cast<rc_adopted_block*>(static_cast<rc_node<T, Scheme>*>(c));
    b->deleter(b->object);
    delete b;
  }
  Deleter deleter;
};

// allocate_rc's block: T inside, the block's memory from a copy of the caller's allocator kept in
// it. The scheme's create() makes nodes with `new` (era schemes stamp a birth era there), so the
// block's operator new takes the allocator that allocate_rc lends it on this thread.
template <class T, class Scheme, class Alloc>
struct rc_allocated_block final : rc_node<T, Scheme> {
  using allocator =
      typename std::allocator_traits<Alloc>::template rebind_alloc<rc_allocated_block>;
  using traits = std::allocator_traits<allocator>;

  template <class... Args>
  rc_allocated_block(typename Scheme::domain& d, const allocator& a, Args&&... args)
      : rc_node<T, Scheme>(&dispose_block, d), alloc(a) {
    // Constructed in place with the allocator, as std::allocate_shared does.
    traits::construct(alloc, &storage.value, std::forward<Args>(args)...);
    this->object = &storage.value;
  }
  static void dispose_block(rc_control* c) noexcept {
    auto* b = static_cast<rc_allocated_block*>(static_cast<rc_node<T, Scheme>*>(c));
    allocator a = std::move(b->alloc);
    traits::destroy(a, &b->storage.value);
    b->~rc_allocated_block();
    traits::deallocate(a, b, 1);
  }

  static void* operator new(std::size_t) { return traits::allocate(*lent, 1); }
  // Only if the constructor throws (create()'s new-expression), still on the lending thread.
  static void operator delete(void* p) noexcept {
    traits::deallocate(*lent, static_cast<rc_allocated_block*>(p), 1);
  }
  static inline thread_local allocator* lent = nullptr;

  allocator alloc;
  union holder {  // T's lifetime is the allocator's construct/destroy, not the block's
    holder() noexcept {}
    ~holder() {}
    T value;
  } storage;
};

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
template <class Scheme, bool = rc_applies<Scheme>().ok>
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

// Makes a block of type Block (for Scheme) through the domain's create(), which stamps a birth
// era where the scheme has them, and wraps it.
template <class T, class Scheme, class Block, class... Args>
rc_ptr<T> make_block(typename Scheme::domain& d, Args&&... args);

}  // namespace detail

// Owning and counted (see the top of this file); made by make_rc, make_rc_in, allocate_rc or
// adopt_rc, or loaded from an atomic_rc_ptr. Any thread.
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
  // Ownership order, as shared_ptr's: by block (the same as by object here, since rc_ptr has no
  // aliasing constructor).
  bool owner_before(const rc_ptr& other) const noexcept {
    return std::less<const detail::rc_control*>()(ctl_, other.ctl_);
  }

  // Comparisons of the objects' addresses, as shared_ptr's.
  friend bool operator==(const rc_ptr& a, const rc_ptr& b) noexcept { return a.ptr_ == b.ptr_; }
  friend std::strong_ordering operator<=>(const rc_ptr& a, const rc_ptr& b) noexcept {
    return std::compare_three_way()(a.ptr_, b.ptr_);
  }
  friend bool operator==(const rc_ptr& a, std::nullptr_t) noexcept { return !a.ptr_; }
  friend std::strong_ordering operator<=>(const rc_ptr& a, std::nullptr_t) noexcept {
    return std::compare_three_way()(a.ptr_, static_cast<T*>(nullptr));
  }

 private:
  template <class, class>
  friend class atomic_rc_ptr;
  template <class, class>
  friend class snapshot_ptr;
  template <class U, class S, class Block, class... Args>
  friend rc_ptr<U> detail::make_block(typename S::domain&, Args&&...);

  // Takes over a reference already counted.
  rc_ptr(T* p, detail::rc_control* c) noexcept : ptr_(p), ctl_(c) {}

  T* ptr_ = nullptr;
  detail::rc_control* ctl_ = nullptr;
};

namespace detail {
template <class T, class Scheme, class Block, class... Args>
rc_ptr<T> make_block(typename Scheme::domain& d, Args&&... args) {
  check_rc_scheme<Scheme>();
  Block* b = d.template create<Block>(d, std::forward<Args>(args)...);
  return rc_ptr<T>(b->object, b);
}
}  // namespace detail

// Makes T(args...) in a new block for Scheme's domain d; the rc_ptr holds the one reference.
template <class T, class Scheme = default_rc_scheme, class... Args>
rc_ptr<T> make_rc_in(typename Scheme::domain& d, Args&&... args) {
  return detail::make_block<T, Scheme, detail::rc_inline_block<T, Scheme>>(
      d, std::forward<Args>(args)...);
}
// The same for Scheme's default domain.
template <class T, class Scheme = default_rc_scheme, class... Args>
rc_ptr<T> make_rc(Args&&... args) {
  return make_rc_in<T, Scheme>(Scheme::default_domain(), std::forward<Args>(args)...);
}

// As std::allocate_shared: one block holding T and a copy of `alloc` (rebound), allocated and
// freed with it, T constructed and destroyed through it; for Scheme's domain d.
template <class T, class Scheme = default_rc_scheme, class Alloc, class... Args>
rc_ptr<T> allocate_rc_in(typename Scheme::domain& d, const Alloc& alloc, Args&&... args) {
  using block = detail::rc_allocated_block<T, Scheme, Alloc>;
  typename block::allocator a(alloc);
  // Lent to the block's operator new for the create() below, on this thread only; restored after,
  // since T's constructor may itself call allocate_rc for the same block type.
  struct lend {
    explicit lend(typename block::allocator* p) noexcept : before(std::exchange(block::lent, p)) {}
    ~lend() { block::lent = before; }
    typename block::allocator* before;
  } lent(&a);
  return detail::make_block<T, Scheme, block>(d, a, std::forward<Args>(args)...);
}
// The same for Scheme's default domain.
template <class T, class Scheme = default_rc_scheme, class Alloc, class... Args>
rc_ptr<T> allocate_rc(const Alloc& alloc, Args&&... args) {
  return allocate_rc_in<T, Scheme>(Scheme::default_domain(), alloc, std::forward<Args>(args)...);
}

// As shared_ptr's constructor from a pointer and a deleter: takes ownership of p, and calls
// deleter(p) when the count reaches zero (also if making the block throws); for Scheme's domain d.
// The block is a separate allocation.
template <class Scheme = default_rc_scheme, class T, class Deleter = std::default_delete<T>>
rc_ptr<T> adopt_rc_in(typename Scheme::domain& d, T* p, Deleter deleter = {}) {
  using block = detail::rc_adopted_block<T, Scheme, Deleter>;
  if (!p) return {};
  try {
    return detail::make_block<T, Scheme, block>(d, p, deleter);
  } catch (...) {
    deleter(p);
    throw;
  }
}
// The same for Scheme's default domain.
template <class Scheme = default_rc_scheme, class T, class Deleter = std::default_delete<T>>
rc_ptr<T> adopt_rc(T* p, Deleter deleter = {}) {
  return adopt_rc_in<Scheme>(Scheme::default_domain(), p, std::move(deleter));
}

// A protected, uncounted read of an atomic_rc_ptr (its get_snapshot()); see the top of this file.
template <class T, class Scheme>
class snapshot_ptr {
  static_assert((detail::check_rc_scheme<Scheme>(), true));
  using node = detail::rc_node<T, Scheme>;
  using protection = typename detail::rc_protection<Scheme>::type;

 public:
  // The domain whose protection it holds.
  using domain_type = typename Scheme::domain;

  // Empty, for Scheme's default domain or for d.
  snapshot_ptr() : snapshot_ptr(Scheme::default_domain()) {}
  explicit snapshot_ptr(domain_type& d) noexcept : protection_(d) {}
  snapshot_ptr(snapshot_ptr&& other) noexcept
      : protection_(std::move(other.protection_)), node_(std::exchange(other.node_, nullptr)) {}
  snapshot_ptr& operator=(snapshot_ptr&& other) noexcept {
    if (this != &other) {
      protection_ = std::move(other.protection_);
      node_ = std::exchange(other.node_, nullptr);
    }
    return *this;
  }
  snapshot_ptr(const snapshot_ptr&) = delete;
  snapshot_ptr& operator=(const snapshot_ptr&) = delete;

  // The object (nullptr when empty), valid while this lives and holds it; * and -> assert that it
  // is not empty.
  T* get() const noexcept { return node_ ? node_->object : nullptr; }
  T& operator*() const noexcept { return *operator->(); }
  T* operator->() const noexcept {
    assert(node_ && "reclaim: empty snapshot_ptr dereferenced");
    return node_->object;
  }
  explicit operator bool() const noexcept { return node_ != nullptr; }
  // Lets go of the protection.
  void reset() noexcept {
    protection_.reset_protection();
    node_ = nullptr;
  }
  // A counted reference to what it holds (incremented while protected: the location's reference
  // is still counted, its decrement deferred past our protection, so the count is at least 1).
  operator rc_ptr<T>() const noexcept {  // NOLINT: implicit by design
    if (!node_) return {};
    node_->increment();
    return rc_ptr<T>(node_->object, node_);
  }

  // Whether both hold the same object.
  friend bool operator==(const snapshot_ptr& a, const rc_ptr<T>& b) noexcept {
    return a.get() == b.get();
  }

 private:
  friend class atomic_rc_ptr<T, Scheme>;

  protection protection_;
  node* node_ = nullptr;
};

// A shared location holding an rc_ptr<T>, for Scheme's domain; see the top of this file.
template <class T, class Scheme>
class atomic_rc_ptr {
  static_assert((detail::check_rc_scheme<Scheme>(), true));
  using node = detail::rc_node<T, Scheme>;
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
  explicit atomic_rc_ptr(domain_type& d) noexcept : domain_(&d) {}
  explicit atomic_rc_ptr(rc_ptr<T> desired, domain_type& d = Scheme::default_domain()) noexcept
      : atomic_rc_ptr(d) {
    loc_.store(take(desired), std::memory_order_relaxed);
  }
  atomic_rc_ptr(const atomic_rc_ptr&) = delete;
  atomic_rc_ptr& operator=(const atomic_rc_ptr&) = delete;
  // Every operation on it happens before its destruction, loads included, so no load can still
  // be about to increment: the reference is dropped at once.
  ~atomic_rc_ptr() {
    if (node* n = loc_.load(std::memory_order_relaxed)) n->decrement();
  }

  // True: as lock-free as the scheme's protect() and retire().
  bool is_lock_free() const noexcept { return true; }

  // A counted copy of what it holds. `order` is the protected read's (relaxed and release are
  // strengthened to acquire: the block's T is read through the result).
  rc_ptr<T> load(std::memory_order order = std::memory_order_seq_cst) const {
    protection p(*domain_);
    node* n = p.protect(loc_, read_order(order));
    if (!n) return {};
    // While p protects n, the location's reference cannot be decremented (its deferred decrement
    // waits for p), so the count is at least 1 and a relaxed increment suffices.
    if (RECLAIM_MUTATED(rc_load_increment_unprotected)) p.reset_protection();
    n->increment();
    return rc_ptr<T>(n->object, n);
  }
  // load(), as std::atomic's conversion.
  operator rc_ptr<T>() const { return load(); }  // NOLINT: as std::atomic

  // What it holds, protected but not counted.
  snapshot_ptr<T, Scheme> get_snapshot(std::memory_order order = std::memory_order_seq_cst) const {
    snapshot_ptr<T, Scheme> s(*domain_);
    s.node_ = s.protection_.protect(loc_, read_order(order));
    return s;
  }

  // Takes desired's reference; the reference it held is dropped after a grace period.
  void store(rc_ptr<T> desired, std::memory_order order = std::memory_order_seq_cst) {
    // The location takes desired's reference. At least acq_rel whatever `order` says (see
    // rmw_order()): the loader's acquire pairs with our release.
    node* old = loc_.exchange(take(desired), rmw_order(order));
    if (old) old->defer_decrement();
  }
  // store(desired).
  atomic_rc_ptr& operator=(rc_ptr<T> desired) {
    store(std::move(desired));
    return *this;
  }

  // Takes desired's reference and returns what it held, counted anew.
  rc_ptr<T> exchange(rc_ptr<T> desired, std::memory_order order = std::memory_order_seq_cst) {
    node* old = loc_.exchange(take(desired), rmw_order(order));
    if (!old) return {};
    // The location's reference cannot become the result's: a loader may have read old and not
    // yet incremented, and the caller may drop the result at once. So the result gets a new
    // reference (we hold the location's, so the count is at least 1) and the location's is
    // dropped through the grace period.
    old->increment();
    old->defer_decrement();
    return rc_ptr<T>(old->object, old);
  }

  // As std::atomic<std::shared_ptr<T>>: equal means the same object. On success the location
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

  // Replaces what it holds by desired if that is expected's object; expected is left as it was
  // (no load, no count on failure: the cheap CAS of a read-copy-update loop). Expected holds its
  // object, so that object cannot be freed and its address reused meanwhile (no ABA).
  bool compare_and_swap(const snapshot_ptr<T, Scheme>& expected, rc_ptr<T> desired,
                        std::memory_order order = std::memory_order_seq_cst) {
    return replace(expected.node_, desired, order, std::memory_order_relaxed);
  }
  bool compare_and_swap(const rc_ptr<T>& expected, rc_ptr<T> desired,
                        std::memory_order order = std::memory_order_seq_cst) {
    return replace(node_of(expected), desired, order, std::memory_order_relaxed);
  }

 private:
  static constexpr std::memory_order read_order(std::memory_order o) noexcept {
    return o == std::memory_order_relaxed || o == std::memory_order_release ||
                   o == std::memory_order_acq_rel
               ? std::memory_order_acquire
               : o;
  }
  // Every RMW on the location is at least acq_rel: release publishes desired's T to loaders, and
  // acquire makes the block we take out (its T, its count) visible to us.
  static constexpr std::memory_order rmw_order(std::memory_order o) noexcept {
    return o == std::memory_order_seq_cst ? o : std::memory_order_acq_rel;
  }
  static constexpr std::memory_order failure_order(std::memory_order o) noexcept {
    return o == std::memory_order_acq_rel   ? std::memory_order_acquire
           : o == std::memory_order_release ? std::memory_order_relaxed
                                            : o;
  }

  // The block of p, whose reference the caller keeps (p unchanged).
  node* node_of(const rc_ptr<T>& p) const noexcept {
    if (!p.ctl_) return nullptr;
    // The domain is also how a block of another scheme would show: each scheme has its own.
    assert(p.ctl_->domain == domain_ &&
           "reclaim: an rc_ptr made for another domain or scheme used with an atomic_rc_ptr");
    return static_cast<node*>(p.ctl_);
  }
  // The block of p, whose reference is taken over (p left empty).
  node* take(rc_ptr<T>& p) const noexcept {
    node* n = node_of(p);
    p.ptr_ = nullptr;
    p.ctl_ = nullptr;
    return n;
  }

  // One CAS from want to desired's block; on success the location took desired's reference and
  // dropped want's (deferred, as store()).
  bool replace(node* want, rc_ptr<T>& desired, std::memory_order success,
               std::memory_order failure) {
    if (!loc_.compare_exchange_strong(want, node_of(desired), rmw_order(success),
                                      read_order(failure)))
      return false;
    // The location owns desired's reference now, and may already have dropped it (another
    // thread's store) so that the block is freed: let go without reading the block.
    desired.ptr_ = nullptr;
    desired.ctl_ = nullptr;
    if (want) want->defer_decrement();
    return true;
  }

  bool cas(rc_ptr<T>& expected, rc_ptr<T>& desired, std::memory_order success,
           std::memory_order failure, bool strong) {
    node* const want = node_of(expected);
    for (;;) {
      if (replace(want, desired, success, failure)) return true;
      // expected becomes a counted copy of what the location holds now (as a load(failure)).
      // The CAS saw another block; what we protect may be newer. If it is want again, a strong
      // CAS tries again (it may fail only when the values differ); a weak one reports a spurious
      // failure with expected unchanged.
      protection p(*domain_);
      node* now = p.protect(loc_, read_order(failure));
      if (now == want) {
        if (strong) continue;
        return false;
      }
      if (now) now->increment();
      expected = now ? rc_ptr<T>(now->object, now) : rc_ptr<T>();
      return false;
    }
  }

  domain_type* domain_;
  core::atomic<node*> loc_{nullptr};
};

}  // namespace reclaim

// Hashes the object's address, as std::hash<std::shared_ptr<T>>.
template <class T>
struct std::hash<reclaim::rc_ptr<T>> {
  std::size_t operator()(const reclaim::rc_ptr<T>& p) const noexcept {
    return std::hash<T*>()(p.get());
  }
};
