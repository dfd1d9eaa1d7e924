// hp: hazard pointers (Michael, IEEE TPDS 2004).
//
// What it is. Each guard owns K hazard slots. Before dereferencing a node a reader publishes its
// address in a slot, fences, and re-reads the pointer it came from: if the source still holds it,
// the node was reachable after the hazard became visible, so no reclaimer can miss it. A thread
// keeps its retired nodes in a local list and, when the list outgrows a threshold proportional to
// the number of slots (R = 100 + 2H, H = K x records as in paper 003, plus K per nested block),
// scans: it snapshots every published hazard into a sorted array and frees each retired node it
// does not find there.
//
// When to use it. Garbage is bounded (at most R + H per thread, whatever other threads do) with the
// default batch_free policy, so it is the choice when a stalled or preempted thread must not hold
// memory hostage. With an amortized free policy the freeable list is bounded only while the retire
// rate stays within the policy's K, so bounds_garbage is false there. The price is a full fence on
// every protected read, which makes traversal-heavy structures (lists, trees) several times slower
// than under an epoch scheme.
//
// Needs from a container: every dereferenced pointer protected in a slot and validated (reads
// re-read from a source that a removal visibly changes); K >= the slots the container uses.
// Guards nest: each guard owns its K slots (a thread's first nested guard at a new depth
// allocates a block of K more, kept for reuse), so a container operation called while the caller
// holds protections in an outer guard leaves them alone, and each guard clears its own slots when
// it ends.
// Owned protections (hp::protection, what a reclaim::guard_ptr holds): one hazard slot each, taken
// from a per-thread pool of blocks of 8 (grown on demand, scanned like the guards' blocks) and
// given back in any order, in constant time; no slot index is visible to the user.
// Progress: protect() is lock-free (it retries while the source changes); retire and scan are
// wait-free apart from the free calls.
// Differences from the paper: the fence is a policy (core/fence.hpp) so that asymmetric variants
// reuse this header; slots belong to guards, not threads; exited threads' retired lists are
// adopted by the next scan of a live thread.
#pragma once
#include <algorithm>
#include <atomic>
#include <cassert>
#include <utility>
#include <vector>

#include "../concepts.hpp"
#include "../core/domain.hpp"
#include "../core/fence.hpp"
#include "../core/guard_base.hpp"
#include "../core/guard_slots.hpp"
#include "../core/marked_ptr.hpp"
#include "../core/policy.hpp"
#include "../free/batch.hpp"

namespace reclaim {

struct hp_slots_kind {};
template <unsigned K>
struct slots {
  static_assert(K > 0);
  using policy_kind = hp_slots_kind;
  static constexpr unsigned value = K;
};
struct fence_kind {};
template <class Fence>
struct fence_policy {
  using policy_kind = fence_kind;
  using type = Fence;
};

template <class... Policies>
struct hp : core::scheme_base<hp<Policies...>> {
  using free_policy = core::find_policy_t<free_policy_kind, batch_free, Policies...>;
  using fence = typename core::find_policy_t<fence_kind, fence_policy<core::symmetric_fence>,
                                             Policies...>::type;
  static constexpr unsigned slot_count =
      core::find_policy_t<hp_slots_kind, slots<4>, Policies...>::value;
  static_assert(
      (core::known_kinds<free_policy_kind, hp_slots_kind, fence_kind>::template contains<Policies> &&
       ...),
      "hp takes a free policy, slots<K> and fence_policy<F>");

  static constexpr std::string_view name = "hp";
  static constexpr reclaim::family family = reclaim::family::pointer;
  // R + H per thread bounds what waits for a scan; the free policy decides whether what a scan
  // proved safe is freed within a bound too (batch_free: yes; amortized: not at any retire rate).
  static constexpr bool bounds_garbage = free_policy::bounded;
  static constexpr unsigned needs = needs_validated_reads;

  class domain;
  class guard;
  class protection;
};

namespace detail {
template <class FreePolicy, unsigned K>
struct hp_record : core::thread_record<FreePolicy> {
  // Read by other threads' scans: the outermost guard's K slots, blocks for nested guards, and the
  // slots that protections own.
  alignas(core::cache_line) core::slot_block<const void*, K> hazards;
  core::slot_pool<const void*, 8> owned;
  // Written by the owner around each retire, read by a barrier (core::garbage_claim).
  alignas(core::cache_line) core::garbage_claim claim;
  // Owner only (or a barrier that borrowed the record).
  core::retired_list retired;
  std::vector<const void*> snapshot;  // reused across scans: no allocation in steady state

  void destroy_garbage() noexcept { retired.destroy_all(); }
};
}  // namespace detail

template <class... Policies>
class hp<Policies...>::domain
    : public core::domain_base<domain, detail::hp_record<free_policy, slot_count>> {
  using record = detail::hp_record<free_policy, slot_count>;
  using block = core::slot_block<const void*, slot_count>;
  using base = core::domain_base<domain, record>;
  using claim = core::garbage_claim;
  using holding = claim::scope<record>;

 public:
  using guard_type = hp::guard;
  static constexpr bool grace_periods = true;
  using base::retire;  // domain.retire(node[, deleter]) from any thread

  domain() = default;
  ~domain() {
#ifndef NDEBUG
    this->threads_.for_each([](const record& r) {
      assert(r.owned.all_free() && "reclaim: domain destroyed while a guard_ptr on it is alive");
    });
#endif
    this->shutdown();
  }

  // The scan threshold R: proportional to the number of hazard slots H (a block of K per record,
  // and per nesting level that a thread ever used, and the slots of protections), so that each
  // scan frees at least R - H nodes and its O(H log H) cost is amortized over them.
  std::size_t scan_threshold() const noexcept {
    const std::size_t slots = slot_count * this->threads_.size() +
                              extra_slots_.load(std::memory_order_relaxed);
    return 100 + 2 * slots;
  }

 private:
  friend class hp::guard;
  friend class hp::protection;
  friend base;
  using slot = std::atomic<const void*>;

  template <class P>
  static const core::retired_hook* address_of(P p) noexcept {
    if constexpr (std::is_pointer_v<P>)
      return p;
    else
      return p.get();  // a marked_ptr: the hazard covers the node, whatever the mark
  }

  // Publishes the pointer read from src in `hazard` and returns it once a re-read of src confirms
  // it (guard::protect(), protection::protect()). The hazard is the node's retired_hook address,
  // the same address retire() records.
  template <class P>
  static P publish_validated(slot& hazard, const std::atomic<P>& src, std::memory_order order) {
    // `order` (acquire for guards): pairs with the release store or CAS that published the node.
    P p = src.load(order);
    for (;;) {
      // The hazard is visible before the re-read (core/fence.hpp); pairs with fence::heavy().
      fence::publish(hazard, address_of(p));
      P again = src.load(fence::reread(order));
      if (again == p) return p;
      p = again;
    }
  }

  // A slot of r's pool for a protection, until give_back(). Throws std::bad_alloc.
  slot& take(record& r) {
    return r.owned.take([&] {
      extra_slots_.fetch_add(decltype(r.owned)::block_size, std::memory_order_relaxed);
    });
  }
  // Out of line: a protection's destructor then inlines into the operation that made it.
  [[gnu::noinline]] static void give_back(record& r, slot& hazard) noexcept {
    clear_slot(hazard);
    r.owned.give_back(hazard);
  }

  // A guard opens on r: it gives the free policy its turn (nested ones too, so that a thread
  // that holds a long guard or region_guard still frees what its scans proved safe) and uses the
  // record's slots, or when nested the block of its level. Small, so that it inlines into every
  // operation.
  block& open(record& r) {
    const unsigned level = r.enter();
    core::garbage_claim::free_policy_step(r);
    if (level == 0) [[likely]]
      return r.hazards;
    return nested_block(r, level);
  }

  // The block of nesting level `level`, allocated the first time a thread nests that deep (a
  // failed allocation leaves the nesting as it was).
  [[gnu::noinline]] block& nested_block(record& r, unsigned level) {
    try {
      return r.hazards.at(level,
                          [&] { extra_slots_.fetch_add(slot_count, std::memory_order_relaxed); });
    } catch (...) {
      r.leave();
      throw;
    }
  }

  static void clear_slot(slot& hazard) noexcept {
    // release: our reads of the protected node happen before a scan that sees the slot empty
    // (acquire in scan()) frees it.
    hazard.store(nullptr, std::memory_order_release);
  }
  template <class Block>
  static void clear(Block& b) noexcept {
    for (auto& hazard : b.slots) clear_slot(hazard);
  }

  void retire(record& r, core::retired_hook* node) {
    holding garbage(r);
    r.retired.push(node);
    r.count_retired(this->gauge_);
    if (r.retired.size() >= scan_threshold()) [[unlikely]] scan(r);
  }

  void scan(record& r) {
    r.retired.splice(this->adopt_orphans());
    core::retired_list safe;
    take_unprotected(r, r.retired, safe);
    core::counters::add(r.ctr.scans, 1);
    r.release_safe(std::move(safe), this->gauge_);
  }

  // Moves the nodes of `list` that no hazard protects now into `safe`.
  void take_unprotected(record& r, core::retired_list& list, core::retired_list& safe) {
    core::scan_timer timer(r.ctr);
    fence::heavy();  // pairs with fence::publish() and light(): see core/fence.hpp
    r.snapshot.clear();
    auto collect = [&](const auto& b) {
      for (const auto& hazard : b.slots) {
        // acquire: pairs with the release in clear_slot(), so a node whose slot we see cleared
        // was no longer being read.
        if (const void* p = hazard.load(std::memory_order_acquire)) r.snapshot.push_back(p);
      }
    };
    this->threads_.for_each([&](const record& other) {
      other.hazards.for_each(collect);
      other.owned.for_each(collect);
    });
    std::sort(r.snapshot.begin(), r.snapshot.end());
    list.partition_into(safe, [&](core::retired_hook* node) {
      return !std::binary_search(r.snapshot.begin(), r.snapshot.end(),
                                 static_cast<const void*>(node));
    });
  }

  // An operation here is an outermost guard: see core::domain_base::wait_for_open_guards.
  bool wait_for_grace_period(record&, core::deadline d) const {
    return this->wait_for_open_guards(d);
  }

  static void take_garbage(record& r, typename base::gathered& into) noexcept {
    into.unsafe.splice(std::move(r.retired));
    into.safe.splice(r.freeing.take());
  }

  // Our garbage, then every other record's (borrowed between its retires, even while its thread
  // stalls inside a guard) and the orphans; then scans until no hazard protects any of it.
  bool barrier_locked(record& me, core::deadline d) {
    typename base::gathered g;
    bool done = this->gather(me, g, d, [](record& r, typename base::gathered& into) {
      return base::borrow_if_idle(r, r.claim.word, claim::free, claim::lent, into);
    });
    core::waiter w(d);
    for (;;) {
      take_unprotected(me, g.unsafe, g.safe);
      core::counters::add(me.ctr.scans, 1);
      if (g.unsafe.empty() || !w.wait()) break;
    }
    // Only what no one protects any more is safe: the rest waits in the orphanage.
    return this->finish_barrier(me, g, done && g.unsafe.empty(), 0);
  }

  // A scan, and the free policy's safe garbage.
  void flush_local(record& r) {
    holding garbage(r);
    scan(r);
    r.freeing.drain(r);
  }

  // Thread exit (possibly inside guards): every hazard goes, and we scan once more, so that what
  // goes to the orphanage is only what other threads still protect (at most H nodes); without it,
  // threads that retire fewer than R nodes each and exit would pile up unbounded garbage that no
  // scan ever looks at. A protection still owning a slot now was leaked (its guard_ptr's
  // thread_local or stack lifetime has ended): its slot is cleared and stays taken.
  void on_thread_exit(record& r) noexcept {
    holding garbage(r);
    r.hazards.for_each_owned(clear<block>);
    r.owned.for_each_owned(clear<typename decltype(r.owned)::block>);
    scan(r);
    this->orphan(r, std::move(r.retired));
    r.freeing.drain(r);
  }

  // Hazard slots beyond each record's first block: nested guards' blocks and protections' pools.
  std::atomic<std::size_t> extra_slots_{0};
};

template <class... Policies>
class hp<Policies...>::guard : public core::guard_base<guard> {
  friend class hp::protection;  // a region's guard lends its slots

 public:
  static constexpr bool validates = true;
  static constexpr unsigned slot_count = hp::slot_count;

  // Takes the block of hazard slots of its nesting level (allocated the first time a thread
  // nests that deep), so that guards nest: each one's slots are its own.
  explicit guard(domain& d = hp::default_domain())
      : domain_(d), record_(d.threads_.local()), block_(d.open(record_)) {}
  ~guard() {
    this->check_owner();
    domain::clear(block_);
    record_.leave();
  }
  guard(const guard&) = delete;
  guard& operator=(const guard&) = delete;

  // Publishes the pointer read from src in the given slot and returns it once a re-read of src
  // confirms it; the container still checks its own validity condition (the mark).
  template <class P>
  P protect(const std::atomic<P>& src, unsigned slot) noexcept {
    assert(slot < slot_count);
    this->check_owner();
    return domain::publish_validated(block_.slots[slot], src, std::memory_order_acquire);
  }

 private:
  friend class core::guard_base<guard>;
  void retire_hook(core::retired_hook* node) { domain_.retire(record_, node); }

  domain& domain_;
  typename domain::record& record_;
  typename domain::block& block_;
};

// One hazard slot, owned: what a reclaim::guard_ptr holds (and the primitive of a P2530-style
// hazard_pointer object: a movable owner of one slot with protect, try_protect, reset_protection
// and swap). The slot is taken from the thread's pool on the first protection and given back, in
// any order, when the owner is destroyed; resetting only clears it, so that a protection used in
// a loop takes its slot once. It belongs to its thread, as a guard does.
template <class... Policies>
class hp<Policies...>::protection : core::thread_bound {
  using slot = typename domain::slot;

 public:
  // Whether holding a protection keeps the thread inside an operation.
  static constexpr bool holds_region = false;

  // What a reclaim::region_guard holds under hp: a guard, whose block of slots it lends one by one
  // to the protections made from it, so that they take no slot from the pool (once the block is
  // lent out, they take from the pool as others do). A lent slot is the guard's again when the
  // region ends, which clears it: the protection must end first (debug builds check), and until
  // then its last hazard stays published even if it was destroyed (as a guard's slots do).
  class region {
   public:
    explicit region(domain& d) : guard_(d) {}

   private:
    friend protection;
    slot* lend() noexcept { return next_ < slot_count ? &guard_.block_.slots[next_++] : nullptr; }

    guard guard_;
    unsigned next_ = 0;
    core::lender lender_;
  };

  protection() noexcept = default;
  explicit protection(domain& d) noexcept : domain_(&d) {}
  // A protection with one of r's slots, if it has one left (see region).
  explicit protection(region& r) noexcept
      : domain_(&r.guard_.domain_), record_(&r.guard_.record_), hazard_(r.lend()) {
    if (hazard_) {
      lent_ = true;
      loan_ = r.lender_.lend();
    }
  }
  protection(protection&& other) noexcept
      : domain_(other.domain_),
        record_(other.record_),
        hazard_(std::exchange(other.hazard_, nullptr)),
        lent_(other.lent_),
        loan_(std::move(other.loan_)) {}
  // Our protection ends, and the two slots change owners: the moved-from side keeps a slot for its
  // next protect() (`save = std::move(cur)` in a traversal costs no pool traffic).
  protection& operator=(protection&& other) noexcept {
    reset_protection();
    swap(other);
    return *this;
  }
  // A lent slot is left as it is: the region's guard clears its block when it ends.
  ~protection() {
    if (!hazard_ || lent_) return;
    check_owner();
    domain::give_back(*record_, *hazard_);
  }

  void swap(protection& other) noexcept {
    std::swap(domain_, other.domain_);
    std::swap(record_, other.record_);
    std::swap(hazard_, other.hazard_);
    std::swap(lent_, other.lent_);
    std::swap(loan_, other.loan_);
  }


  // Protects the pointer src holds (published, then validated by a re-read of src; loads with
  // `order`) and returns it. Throws std::bad_alloc only when it takes its first slot.
  template <class P>
  P protect(const std::atomic<P>& src, std::memory_order order) {
    return domain::publish_validated(own_slot(), src, order);
  }

  // Protects `expected` if src still holds it, and returns true; otherwise protects nothing, sets
  // `expected` to what src holds, and returns false. Gives up instead of retrying (lock-free
  // algorithms that must not loop in protect, paper 003's acquire_if_equal).
  template <class P>
  bool try_protect(P& expected, const std::atomic<P>& src, std::memory_order order) {
    // As publish_validated(), once.
    fence::publish(own_slot(), domain::address_of(expected));
    P now = src.load(fence::reread(order));
    if (now == expected) return true;
    domain::clear_slot(*hazard_);
    expected = now;
    return false;
  }

  // Publishes p without validating it (P2530's reset_protection(ptr)): p is protected only if the
  // caller then re-reads the pointer's source and finds p still there, which the fence orders
  // after the publication. Throws std::bad_alloc only when it takes its first slot.
  template <class P>
  void publish(P p) {
    slot& hazard = own_slot();
    // release, then the fence: as in publish_validated().
    hazard.store(domain::address_of(p), std::memory_order_release);
    fence::light();
  }

  // Protects nothing; keeps the slot.
  void reset_protection() noexcept {
    if (hazard_) domain::clear_slot(*hazard_);
  }

  // Takes the slot now, so that no later protect can fail (P2530's make_hazard_pointer(), which
  // may throw where hazard_pointer::protect() may not). Throws std::bad_alloc.
  void take_slot() { (void)own_slot(); }
  // Whether this owns a slot (a default-constructed or moved-from protection owns none).
  bool owns_slot() const noexcept { return hazard_ != nullptr; }

  // Retires a node (tagged by core::to_retired) on this thread's record: hp's retire needs no
  // operation around it, but the free policy gets its turn first, as when a guard opens (guard_ptr
  // users may never open a guard; an amortized policy would then never free what scans found).
  void retire(core::retired_hook* node) {
    assert(record_ && "reclaim: retire through a protection that never protected");
    check_owner();
    core::garbage_claim::free_policy_step(*record_);
    domain_->retire(*record_, node);
  }

 private:
  slot& own_slot() {
    check_owner();
    if (!hazard_) [[unlikely]] {
      record_ = &domain_->threads_.local();
      hazard_ = &domain_->take(*record_);
    }
    return *hazard_;
  }

  domain* domain_ = nullptr;
  typename domain::record* record_ = nullptr;
  slot* hazard_ = nullptr;
  bool lent_ = false;                // hazard_ is a region's slot, not the pool's
  [[no_unique_address]] core::loan loan_;  // while lent: debug builds count it in the region
};

}  // namespace reclaim
