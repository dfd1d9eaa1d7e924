// SPDX-License-Identifier: MIT
// The guard, the owned protection and the region lender of the slot family: the schemes whose
// reader protects each pointer in a slot of its own (hp and its variants: hazard pointers; lfrc:
// counted references; he and wfe: era reservations; crystalline_l and crystalline_w: the guards'
// reservations). Written once here, as the region family's is in region_guard.hpp; what differs is
// what a slot holds and how it is published, which each scheme gives as static hooks of a struct
// Hooks (befriended by its domain; slot_hooks_base below gives the common ones):
//
//   types     scheme, domain, record, block (a guard's K slots: `slots[K]`), slot, slot_count, and
//             `template <class G> using guard_base` (core::guard_base<G>, or a base of it)
//   local(d) -> record&                  the calling thread's record
//   begin(d, r) -> block&                a guard begins: the block of its nesting level
//   end(d, r, block&)                    it ends: its slots let go, the level closes
//   protect(d, r, slot&, src, order) -> P   publish and validate: the pointer src holds, once the
//                                        slot protects it
//   retire(d, r, node)                   a guard's retire
//   create<T>(d, r, args...) -> T*       (optional) a node stamped by the scheme
// and for the owned protection (slots taken from the record's pool, one per protection):
//   take(d, r) -> slot&, give_back(d, r, slot&), clear(d, r, slot&)
//   owned                                (optional) what a protection keeps of its slot, for a
//                                        scheme whose protection holds the slot itself rather than
//                                        a pointer into a pool: a type that behaves as a slot*
//                                        (empty from nullptr, tests as bool, `*` gives the slot),
//                                        and take(d, r) -> owned. By default a slot*
//   holds                                whether a protection holds its record while it protects
//                                        (slot_hold below), with activate(d, r) / deactivate(r)
//   lends_slots, clears_lent_slot        whether a region lends its guard's slots, and whether a
//                                        protection that borrowed one lets it go when it ends
//   try_protect(d, r, slot&, expected, src, order) -> P   (optional) protects `expected` once and
//                                        returns what src holds: the protection holds `expected`
//                                        if that is it (otherwise try_protect() is protect())
//   publish(d, r, slot&, p)              (optional) protects p unvalidated (P2530)
//   retire_outside_guard(d, r, node)     (optional) a protection's retire, by default the free
//                                        policy's turn and then retire(): guard_ptr users may never
//                                        open a guard
// Each hook states the memory orders it uses and why; this file's own accesses are the owner's.
#pragma once
#include <atomic>
#include <cassert>
#include <type_traits>
#include <utility>

#include "guard_base.hpp"
#include "record.hpp"
#include "sync.hpp"

namespace reclaim::core {

template <class Hooks>
class slot_protection;

// What a protection keeps of its slot (Hooks::owned, by default a pointer to it).
template <class Hooks>
struct owned_slot {
  using type = typename Hooks::slot*;
};
template <class Hooks>
  requires requires { typename Hooks::owned; }
struct owned_slot<Hooks> {
  using type = typename Hooks::owned;
};

// When an owned protection holds its record (counts in it as an operation, or keeps it active):
// never; from before its first publication until it protects nothing (hp under the POP schemes:
// the record is pinged by scans while a protection may publish); or exactly while its slot holds a
// node (lfrc: synchronize() and barrier() wait for a guard_ptr that counts a node).
enum class slot_hold { never, while_protecting, while_counting };

// The hooks most slot schemes share; a scheme's Hooks derives from it and declares what differs.
// Its domain befriends it (`template <class, class, class> friend struct
// core::slot_hooks_base;`), since local(), begin() and end() reach the domain's private parts:
// the registry and the domain's open(r) and close(r, block) of a nesting level.
template <class Scheme, class Block, class Slot>
struct slot_hooks_base {
  using scheme = Scheme;
  using domain = typename Scheme::domain;
  using record = typename domain::hooks::record;
  using block = Block;
  using slot = Slot;
  template <class G>
  using guard_base = core::guard_base<G>;
  static constexpr unsigned slot_count = Scheme::slot_count;
  static constexpr slot_hold holds = slot_hold::never;
  static constexpr bool lends_slots = true;
  static constexpr bool clears_lent_slot = false;
  static constexpr bool rereads_source = false;

  // This thread's record in the domain (registered on first use), and the opening and closing of a
  // guard's nesting level: its block of slots.
  static record& local(domain& d) { return d.threads_.local(); }
  static block& begin(domain& d, record& r) { return d.open(r); }
  static void end(domain& d, record& r, block& b) noexcept { d.close(r, b); }
};

// A guard: the block of K slots of its nesting level, from construction to destruction, so that
// guards nest and each clears only its own slots.
template <class Hooks>
class slot_guard : public Hooks::template guard_base<slot_guard<Hooks>> {
  using domain = typename Hooks::domain;
  using record = typename Hooks::record;
  using block = typename Hooks::block;
  using base = typename Hooks::template guard_base<slot_guard>;

 public:
  static constexpr bool validates = true;
  // Whether protect() returns only what src still held once the protection was visible, by
  // re-reading src (Hooks::rereads_source: the hp family; era schemes validate by the era): a
  // container may then make a removed node's link change to fail a reader's protect() there.
  static constexpr bool rereads_source = Hooks::rereads_source;
  static constexpr unsigned slot_count = Hooks::slot_count;

  // Always inlined, as its destructor: a guard made out of line has its address taken, and then
  // every protect() re-loads block_ from memory after its publication (a compiler barrier, or a
  // store that may alias the guard), inside the caller's traversal loop.
  [[gnu::always_inline]] explicit slot_guard(domain& d = Hooks::scheme::default_domain())
      : domain_(d), record_(Hooks::local(d)), block_(Hooks::begin(d, record_)) {}
  [[gnu::always_inline]] ~slot_guard() {
    this->check_owner();
    Hooks::end(domain_, record_, block_);
  }

  // The pointer src holds, protected by slot `slot` until the slot protects another or the guard
  // ends; the container still checks its own validity condition (the mark). acquire (at least;
  // each scheme's hook says what it uses): pairs with the release store or CAS that published
  // the node.
  template <class P>
  P protect(const core::atomic<P>& src, unsigned slot) noexcept(
      noexcept(Hooks::protect(std::declval<domain&>(), std::declval<record&>(),
                              std::declval<typename Hooks::slot&>(), src,
                              std::memory_order_acquire))) {
    assert(slot < slot_count);
    this->check_owner();
    return Hooks::protect(domain_, record_, block_.slots[slot], src, std::memory_order_acquire);
  }

  // A node stamped by the scheme, where it stamps one (hides guard_base::create).
  template <class T, class... Args>
  T* create(Args&&... args) const {
    if constexpr (requires {
                    Hooks::template create<T>(domain_, record_, std::forward<Args>(args)...);
                  }) {
      this->check_owner();
      return Hooks::template create<T>(domain_, record_, std::forward<Args>(args)...);
    } else {
      return base::template create<T>(std::forward<Args>(args)...);
    }
  }

 private:
  friend class core::guard_base<slot_guard>;
  friend class slot_protection<Hooks>;  // a region's guard lends its slots
  void retire_hook(retired_hook* node) noexcept(
      noexcept(Hooks::retire(std::declval<domain&>(), std::declval<record&>(), node))) {
    Hooks::retire(domain_, record_, node);
  }

  domain& domain_;
  record& record_;
  block& block_;
};

// One slot, owned: what a reclaim::guard_ptr holds (and the primitive of a P2530-style
// hazard_pointer: a movable owner of one slot with protect, try_protect, reset_protection and
// swap). The slot is taken from the thread's pool on the first protection and given back, in any
// order, when the owner is destroyed; resetting only lets its protection go, so that a protection
// used in a loop takes its slot once. It belongs to its thread, as a guard does.
template <class Hooks>
class slot_protection : thread_bound {
  using domain = typename Hooks::domain;
  using record = typename Hooks::record;
  using slot = typename Hooks::slot;
  using owned = typename owned_slot<Hooks>::type;
  static constexpr slot_hold holds = Hooks::holds;

 public:
  // Whether the thread's operation is what keeps a protected node: no, the slot is.
  static constexpr bool holds_region = false;

  // What a reclaim::region_guard holds: a guard, whose block of slots it lends one by one to the
  // protections made from it where the scheme lends (Hooks::lends_slots), so that they take no
  // slot from the pool (once the block is lent out, they take from the pool as others do). A lent
  // slot is the guard's again when the region ends, which lets it go: the protection must end
  // first (debug builds check).
  class region {
   public:
    explicit region(domain& d) : guard_(d) {}

   private:
    friend slot_protection;
    owned lend() noexcept {
      if constexpr (Hooks::lends_slots)
        return next_ < Hooks::slot_count ? &guard_.block_.slots[next_++] : nullptr;
      else
        return nullptr;
    }

    slot_guard<Hooks> guard_;
    unsigned next_ = 0;
    lender lender_;
  };

  slot_protection() noexcept = default;
  explicit slot_protection(domain& d) noexcept : domain_(&d) {}
  // A protection with one of r's slots, if it has one left (see region).
  explicit slot_protection(region& r) noexcept
      : domain_(&r.guard_.domain_), record_(&r.guard_.record_), slot_(r.lend()) {
    if (slot_) {
      lent_ = true;
      loan_ = r.lender_.lend();
    }
  }
  // The moved-from side owns nothing: no slot, no loan, no hold on its record, so not the
  // borrowed-slot flag either (it would take a slot from the pool on its next protect() and, still
  // flagged as borrowing, never give it back). It keeps its domain and record, so that it may
  // protect again (taking a slot then, and giving that one back when it ends).
  slot_protection(slot_protection&& other) noexcept
      : domain_(other.domain_),
        record_(other.record_),
        slot_(std::exchange(other.slot_, nullptr)),
        lent_(std::exchange(other.lent_, false)),
        holding_(std::exchange(other.holding_, false)),
        loan_(std::move(other.loan_)) {}
  // Our protection ends, and the two slots change owners: the moved-from side keeps a slot for its
  // next protect() (`save = std::move(cur)` in a traversal costs no pool traffic).
  slot_protection& operator=(slot_protection&& other) noexcept {
    reset_protection();
    swap(other);
    return *this;
  }
  // A lent slot is the region's guard's to clear when it ends (unless the scheme lets it go here:
  // Hooks::clears_lent_slot). Always inlined, as guard_ptr's destructor is (concurrent_ptr.hpp):
  // the hooks' give_back is out of line, so that this inlines into the operation that made it.
  [[gnu::always_inline]] ~slot_protection() {
    if (!slot_) return;
    if (Hooks::lends_slots && lent_) {
      if constexpr (Hooks::clears_lent_slot) Hooks::clear(*domain_, *record_, *slot_);
      return;
    }
    check_owner();
    Hooks::give_back(*domain_, *record_, *slot_);
    let_go();
  }

  void swap(slot_protection& other) noexcept {
    std::swap(domain_, other.domain_);
    std::swap(record_, other.record_);
    std::swap(slot_, other.slot_);
    std::swap(lent_, other.lent_);
    std::swap(holding_, other.holding_);
    std::swap(loan_, other.loan_);
    swap_owner(other);  // a default-made protection assigned on another thread is that thread's
  }

  // Protects the pointer src holds (the hook's publish and validate, with `order` or stronger) and
  // returns it. Throws std::bad_alloc only when it takes its first slot.
  template <class P>
  P protect(const core::atomic<P>& src, std::memory_order order) {
    slot& s = own_slot();
    hold();
    P p = Hooks::protect(*domain_, *record_, s, src, order);
    track();
    return p;
  }

  // Protects `expected` if src still holds it, and returns true; otherwise protects nothing, sets
  // `expected` to what src holds, and returns false. Where the scheme can (Hooks::try_protect) it
  // gives up instead of retrying (lock-free algorithms that must not loop in protect, paper 003's
  // acquire_if_equal); otherwise it retries only as protect() does.
  template <class P>
  bool try_protect(P& expected, const core::atomic<P>& src, std::memory_order order) {
    P now;
    if constexpr (requires {
                    Hooks::try_protect(std::declval<domain&>(), std::declval<record&>(),
                                       std::declval<slot&>(), expected, src, order);
                  }) {
      slot& s = own_slot();
      hold();
      now = Hooks::try_protect(*domain_, *record_, s, expected, src, order);
    } else {
      now = protect(src, order);
    }
    if (now == expected) {
      track();
      return true;
    }
    reset_protection();
    expected = now;
    return false;
  }

  // Publishes p without validating it (P2530's reset_protection(ptr)): p is protected only if the
  // caller then re-reads the pointer's source and finds p still there. Throws std::bad_alloc only
  // when it takes its first slot.
  template <class P>
  void publish(P p)
    requires requires {
      Hooks::publish(std::declval<domain&>(), std::declval<record&>(), std::declval<slot&>(), p);
    }
  {
    slot& s = own_slot();
    hold();
    Hooks::publish(*domain_, *record_, s, p);
  }

  // Protects nothing; keeps the slot.
  void reset_protection() noexcept {
    if (!slot_) return;
    Hooks::clear(*domain_, *record_, *slot_);
    let_go();
  }

  // Takes the slot now, so that no later protect can fail (P2530's make_hazard_pointer(), which
  // may throw where hazard_pointer::protect() may not). Throws std::bad_alloc.
  void take_slot() { (void)own_slot(); }
  // Whether this owns a slot (a default-constructed or moved-from protection owns none).
  bool owns_slot() const noexcept { return static_cast<bool>(slot_); }

  // Retires a node (tagged by core::to_retired) on this thread's record. Never throws.
  void retire(retired_hook* node) noexcept {
    assert(record_ && "reclaim: retire through a protection that never protected");
    check_owner();
    if constexpr (requires {
                    Hooks::retire_outside_guard(std::declval<domain&>(), std::declval<record&>(),
                                                node);
                  }) {
      Hooks::retire_outside_guard(*domain_, *record_, node);
    } else {
      garbage_claim::free_policy_step(*record_);
      Hooks::retire(*domain_, *record_, node);
    }
  }

 private:
  slot& own_slot() {
    check_owner();
    if (!slot_) [[unlikely]] {
      record_ = &Hooks::local(*domain_);
      if constexpr (requires { typename Hooks::owned; })
        slot_ = Hooks::take(*domain_, *record_);
      else
        slot_ = &Hooks::take(*domain_, *record_);
    }
    return *slot_;
  }

  // slot_hold::while_protecting: the record is held before the slot is published (so that a scan
  // that reads the slot finds the record active), until the protection ends; a lent slot is held
  // by its region's guard.
  void hold() noexcept {
    if constexpr (holds == slot_hold::while_protecting) {
      if (holding_ || lent_) return;
      Hooks::activate(*domain_, *record_);
      holding_ = true;
    }
  }
  // slot_hold::while_counting: the record is held exactly while an owned slot holds a node,
  // which the hooks' protect and clear have just decided.
  void track() noexcept {
    if constexpr (holds == slot_hold::while_counting) {
      const bool counts = slot_->load(std::memory_order_relaxed) != nullptr;  // our own slot
      if (lent_ || counts == holding_) return;
      holding_ = counts;
      if (counts)
        Hooks::activate(*domain_, *record_);
      else
        Hooks::deactivate(*record_);
    }
  }
  void let_go() noexcept {
    if constexpr (holds == slot_hold::while_protecting) {
      if (!holding_) return;
      holding_ = false;
      Hooks::deactivate(*record_);
    } else {
      track();
    }
  }

  domain* domain_ = nullptr;
  record* record_ = nullptr;
  owned slot_ = nullptr;
  bool lent_ = false;           // slot_ is a region's, not the pool's
  bool holding_ = false;        // this protection holds its record (slot_hold)
  [[no_unique_address]] loan loan_;  // while lent: debug builds count it in the region
};

}  // namespace reclaim::core
