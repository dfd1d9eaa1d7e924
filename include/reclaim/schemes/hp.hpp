// SPDX-License-Identifier: MIT
// hp: hazard pointers (Michael, IEEE TPDS 2004), and the family built on it.
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
// than under an epoch scheme; the asymmetric fences below move it to the scans.
//
// The family: one header (this one) and one policy per variation, each variant's header stating
// its assumptions and its argument:
//   fence_policy<F>   who pays for the store-load order (core/fence.hpp): the symmetric fence here
//                     (hp), a process-wide barrier in the scans (hp_asym: membarrier, hp_mprotect,
//                     hp_splitcas; core/platform/process_barrier.hpp), or a signal to each reader
//                     (hazard_pop: Publish-on-Ping; core/ping.hpp)
//   scan_policy<S>    how a scan finds a hazard: sorted_scan (the default: each hazard read once
//                     per scan, sorted, then a binary search per retired node) or naive_scan (every
//                     slot of every record read again for each retired node, paper 004's Figure 2;
//                     kept to measure the difference)
//   scan_threshold<B, P>  when a thread scans: once B + P x H nodes wait, H the domain's hazard
//                     slots (default <100, 2>)
//   a keeper          what a record keeps its garbage in between scans, and what its operations
//                     add to the slots (hp_keeper_kind): hp's retired list (hazard_list, the
//                     default), or epoch_pop's epochs (epochs_first, epoch_pop.hpp: operations also
//                     announce an epoch, garbage is freed by the epoch while it advances, and by a
//                     hazard scan only when it does not)
//   slots<K>, and a free policy
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
// wait-free apart from the free calls and the heavy side of the fence (hazard_pop's waits for
// each reader's answer).
// Differences from the paper: the fence and the scan are policies; slots belong to guards, not
// threads; exited threads' retired lists are adopted by the next scan of a live thread.
#pragma once
#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "../concepts.hpp"
#include "../core/domain.hpp"
#include "../core/fence.hpp"
#include "../core/guard_base.hpp"
#include "../core/guard_slots.hpp"
#include "../core/marked_ptr.hpp"
#include "../core/misuse.hpp"
#include "../core/policy.hpp"
#include "../core/platform/signals.hpp"
#include "../core/slot_guard.hpp"
#include "../core/sorted_snapshot.hpp"
#include "../free/batch.hpp"
#include "../policies.hpp"
#include "../core/sync.hpp"

namespace reclaim {

// Each hazard read once per scan into an array, sorted: O(H log H + R log H) per scan of R nodes
// among H hazards (core/sorted_snapshot.hpp, which also says what it does out of memory).
struct sorted_scan {
  static constexpr std::string_view name = "sorted";
  using snapshot = core::sorted_snapshot;
};

// No snapshot: each retired node is looked for in every slot of every record, as in paper 004's
// Figure 2: O(R x H) per scan, and every slot's cache line read again for each node.
struct naive_scan {
  static constexpr std::string_view name = "naive";
  struct snapshot {
    template <class Find>
    void take(Find&&) noexcept {}
    template <class Find>
    bool protects(const void* node, Find&& find) const noexcept {
      return find([node](const void* p) { return p == node; });
    }
  };
};

// The extension point of the family: what a record keeps its garbage in, and what a record's
// activity adds to the slots. A keeper G is a policy (of kind hp_keeper_kind) with static hooks
// that hp's domain calls (G is its friend):
//   G::name             the scheme's name, or empty for the fence's
//   G::fits<Fence>      whether it works with that fence
//   G::part             what each record keeps (in its `kept`): orphan_batches, destroy_all()
//   G::shared           what the domain keeps (in its `shared_`)
//   G::activate(d, r)   the record's first guard or holding protection begins (after the fence's
//                       activation, for the POP schemes only): it must end with a full fence
//   G::deactivate(r)    its last one ends
//   G::retire(d, r, node), G::retire_outside_guard(d, r, node): a retire inside a guard, or through
//                       a protection outside any
//   G::scan(d, r, safe) a scan over what r keeps and the orphans: what no hazard protects to safe
//   G::take_all(r, list), G::hand_over(d, r), G::forget(r), G::stamp(d): a barrier's borrow,
//                       thread exit, a forgotten thread, and the age of what a barrier leaves
struct hp_keeper_kind {};

// hp's own keeper: one retired list per record, scanned when it holds R nodes.
struct hazard_list {
  using policy_kind = hp_keeper_kind;
  static constexpr std::string_view name{};
  template <class Fence>
  static constexpr bool fits = true;
  struct part {
    static constexpr unsigned orphan_batches = 1;
    core::retired_list retired;
    void destroy_all() noexcept { retired.destroy_all(); }
  };
  struct shared {};

  // No RMW of our own at activation: a fence (pairs with the fence at the start of
  // fence::heavy()).
  template <class Domain, class Record>
  static void activate(Domain&, Record&) noexcept {
    core::thread_fence(std::memory_order_seq_cst);
  }
  template <class Record>
  static void deactivate(Record&) noexcept {}

  // A retire, in a guard or not, goes on the record's list, and a scan runs once the list holds
  // the domain's threshold R; a scan takes the orphans too, and moves to safe what no hazard holds.
  template <class Domain, class Record>
  static void retire(Domain& d, Record& r, core::retired_hook* node) {
    r.kept.retired.push(node);
    if (r.kept.retired.size() >= d.scan_threshold()) [[unlikely]] d.scan(r);
  }
  template <class Domain, class Record>
  static void retire_outside_guard(Domain& d, Record& r, core::retired_hook* node) {
    d.retire(r, node);
  }
  template <class Domain, class Record>
  static void scan(Domain& d, Record& r, core::retired_list& safe) {
    r.kept.retired.splice(d.adopt_orphans());
    d.take_unprotected(r, r.kept.retired, safe);
  }

  // A barrier takes the whole list, an exiting thread hands it to the domain's orphans, a forgotten
  // thread leaves nothing to undo, and what a barrier leaves has no age (stamp() is 0).
  template <class Record>
  static void take_all(Record& r, core::retired_list& into) noexcept {
    into.splice(std::move(r.kept.retired));
  }
  template <class Domain, class Record>
  static void hand_over(Domain& d, Record& r) noexcept {
    d.orphan(r, std::move(r.kept.retired));
  }
  template <class Record>
  static void forget(Record&) noexcept {}
  template <class Domain>
  static std::uint64_t stamp(const Domain&) noexcept {
    return 0;
  }
};

template <class... Policies>
struct hp : core::scheme_base<hp<Policies...>> {
  // Its policies, as given in Policies... or by default (the family's list at the top): the free
  // policy (batch_free), fence_policy<F> (the symmetric fence), scan_policy<S> (sorted_scan), the
  // keeper (hazard_list), slots<K> (4), and scan_threshold<Base, PerSlot> (<100, 2>).
  using free_policy = core::find_policy_t<free_policy_kind, batch_free, Policies...>;
  using fence = typename core::find_policy_t<fence_kind, fence_policy<core::symmetric_fence>,
                                             Policies...>::type;
  using scanner = typename core::find_policy_t<scan_policy_kind, scan_policy<sorted_scan>,
                                            Policies...>::type;
  using keeper = core::find_policy_t<hp_keeper_kind, hazard_list, Policies...>;
  static constexpr unsigned slot_count = core::policy_value<slots<4>, Policies...>;
  using threshold = core::find_policy_t<scan_threshold_kind, scan_threshold<100, 2>, Policies...>;
  static_assert(threshold::per_slot >= 1,
                "hp's scan_threshold<Base, PerSlot> needs PerSlot >= 1: R must exceed the "
                "number of hazards H for a scan to free anything");
  static_assert((core::known_kinds<free_policy_kind, slots_kind, fence_kind, scan_policy_kind,
                                   scan_threshold_kind, hp_keeper_kind,
                                   signal_kind>::template contains<Policies> &&
                 ...),
                "hp takes a free policy, slots<K>, fence_policy<F>, scan_policy<S>, "
                "scan_threshold<Base, PerSlot>, a keeper, and for hazard_pop and epoch_pop "
                "rt_signal<K> or signal_number<N>");
  // The signal is the ping's: hazard_pop<rt_signal<K>> builds its fence from it.
  static_assert(!(std::is_same_v<typename Policies::policy_kind, signal_kind> || ...) ||
                    fence::scheme_name == "hazard_pop",
                "a signal policy is for hazard_pop and epoch_pop, whose readers answer pings");
  static_assert(keeper::template fits<fence>,
                "the keeper does not work with this fence (epochs_first is epoch_pop's: it falls "
                "back to Publish-on-Ping's scans; use reclaim::epoch_pop<>)");

  // Its name in the lab and in messages (the keeper's, else the fence's: hp, hp_asym, hazard_pop,
  // ...), and its family.
  static constexpr std::string_view name =
      keeper::name.empty() ? std::string_view(fence::scheme_name) : keeper::name;
  static constexpr reclaim::family family = reclaim::family::pointer;
  // R + H per thread bounds what waits for a scan; the free policy decides whether what a scan
  // proved safe is freed within a bound too (batch_free: yes; amortized: not at any retire rate).
  static constexpr bool bounds_garbage = free_policy::bounded;
  static constexpr unsigned needs = needs_validated_reads;

  // Its domain and the hooks of its slots (below), and the guard of an operation and the protection
  // of a guard_ptr: the shared slot guard's and protection's (core/slot_guard.hpp) over the hooks.
  struct slot_hooks;
  class domain;
  using guard = core::slot_guard<slot_hooks>;
  using protection = core::slot_protection<slot_hooks>;
};

namespace detail {

template <class FreePolicy, unsigned K, class Fence, class Scan, class Keeper>
struct hp_record : core::thread_record<FreePolicy> {
  // What an exited thread hands over (epoch_pop: its bags, each with its tag).
  static constexpr unsigned orphan_batches = Keeper::part::orphan_batches;

  // Read by other threads' scans: the outermost guard's K slots, blocks for nested guards, and the
  // slots that protections own; and what the fence keeps per record.
  alignas(core::cache_line) core::slot_block<const void*, K> hazards;
  core::slot_pool<const void*, 8> owned;
  [[no_unique_address]] typename Fence::record_state fence;
  // Written by the owner around each retire, read by a barrier (core::garbage_claim).
  alignas(core::cache_line) core::garbage_claim claim;
  // Owner only (or a barrier that borrowed the record).
  typename Keeper::part kept;  // the garbage (hp: a retired list; epoch_pop: tagged bags)
  typename Scan::snapshot snapshot;  // reused across scans: no allocation in steady state

  void destroy_garbage() noexcept { kept.destroy_all(); }
};

}  // namespace detail

// One instance's shared state: the thread records with their hazard slots and what their keeper
// holds, and the garbage (core/domain.hpp). default_domain() is the one containers use unless
// given another.
template <class... Policies>
class hp<Policies...>::domain
    : public core::domain_base<domain,
                               detail::hp_record<free_policy, slot_count, fence, scanner, keeper>> {
  using record = detail::hp_record<free_policy, slot_count, fence, scanner, keeper>;
  using block = core::slot_block<const void*, slot_count>;
  using base = core::domain_base<domain, record>;
  using claim = core::garbage_claim;
  using holding = claim::scope<record>;

 public:
  // Its scheme's guard, and it offers synchronize() and barrier() (concepts.hpp's grace_periods).
  using guard_type = hp::guard;
  static constexpr bool grace_periods = true;
  using base::retire;  // domain.retire(node[, deleter]) from any thread

  // The fence's heavy side gets what it needs from the process first (a registration, a signal
  // handler); where it cannot work here, this throws std::runtime_error saying why.
  domain() { fence::prepare(); }
  ~domain() {
#ifndef NDEBUG
    this->threads_.for_each([](const record& r) {
      assert((r.forgotten || r.owned.all_free()) &&
             "reclaim: domain destroyed while a guard_ptr on it is alive");
    });
#endif
    this->shutdown();
  }

  // The scan threshold R: proportional to the number of hazard slots H (a block of K per record,
  // and per nesting level that a thread ever used, and the slots of protections), so that each
  // scan frees at least R - H nodes and its O(H log H) cost is amortized over them. Under
  // epoch_pop, the garbage at which a retire gives up on the epoch and scans.
  std::size_t scan_threshold() const noexcept {
    const std::size_t slots = slot_count * this->threads_.size() +
                              extra_slots_.load(std::memory_order_relaxed);
    return threshold::base + threshold::per_slot * slots;
  }

 private:
  friend struct hp::slot_hooks;
  template <class, class, class>
  friend struct core::slot_hooks_base;
  friend base;
  friend keeper;
  using slot = core::atomic<const void*>;

  template <class P>
  static const core::retired_hook* address_of(P p) noexcept {
    if constexpr (std::is_pointer_v<P>)
      return p;
    else
      return p.get();  // a marked_ptr: the hazard covers the node, whatever the mark
  }

  // Publishes the pointer read from src in `hazard` and returns it once a re-read of src confirms
  // it (guard::protect(), protection::protect()). The hazard is the node's retired_hook address,
  // the same address retire() records. Always inlined, the first try apart and marked likely: it
  // is the whole per-node cost of a traversal (a load, the store, the re-read, a compare), and
  // the retry loop's register moves stay off that path.
  template <class P>
  [[gnu::always_inline]] static P publish_validated(slot& hazard, const core::atomic<P>& src,
                                                    std::memory_order order) {
    // `order` (acquire for guards): pairs with the release store or CAS that published the node.
    P p = src.load(order);
    if (confirmed(hazard, src, order, p)) [[likely]]
      return p;
    while (!confirmed(hazard, src, order, p)) {
    }
    return p;
  }
  // Publishes p and re-reads src: whether src still holds p; if not, p becomes what it holds.
  template <class P>
  [[gnu::always_inline]] static bool confirmed(slot& hazard, const core::atomic<P>& src,
                                               std::memory_order order, P& p) {
    // The hazard is visible before the re-read (core/fence.hpp); pairs with fence::heavy().
    fence::publish(hazard, address_of(p));
    const P again = src.load(fence::reread(order));
    if (again == p || RECLAIM_MUTATED(hp_no_validation)) return true;
    p = again;
    return false;
  }

  // A slot of r's pool for a protection, until give_back(). Throws std::bad_alloc.
  slot& take(record& r) {
    fence::enter(r.fence);
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
  // record's slots, or when nested the block of its level. Under epoch_pop the outermost guard
  // announces the epoch. Small, so that it inlines into every operation.
  block& open(record& r) {
    fence::enter(r.fence);  // first: if it throws, nothing has changed
    const unsigned level = enter(r);
    core::garbage_claim::free_policy_step(r);
    if (level == 0) [[likely]]
      return r.hazards;
    return nested_block(r, level);
  }
  // A guard closes on r: the operation ends with the outermost.
  static void close(record& r) noexcept {
    if (r.leave()) deactivate(r);
  }
  // Opens a level on r (an operation: what synchronize() waits for); the outermost makes the
  // record active. Returns the level.
  unsigned enter(record& r) {
    const unsigned level = r.enter();
    if (level == 0) activate(r);
    return level;
  }

  // The record's first guard or holding protection begins. Under the POP schemes it becomes active
  // (pinged by scans from here on, core/ping.hpp), fenced before any re-read by the keeper's
  // activation (a fence, or epoch_pop's announcement, whose exchange is one). The other strategies
  // keep no activity.
  void activate(record& r) noexcept {
    if (!fence::activate(r.fence)) return;
    keeper::activate(*this, r);
  }
  // Its last one ends, every slot it used cleared.
  static void deactivate(record& r) noexcept {
    if (!fence::deactivate(r.fence)) return;
    keeper::deactivate(r);
  }

  // The block of nesting level `level`, allocated the first time a thread nests that deep (a
  // failed allocation leaves the nesting as it was).
  [[gnu::noinline]] block& nested_block(record& r, unsigned level) {
    try {
      return r.hazards.at(level,
                          [&] { extra_slots_.fetch_add(slot_count, std::memory_order_relaxed); });
    } catch (...) {
      close(r);
      throw;
    }
  }

  static void clear_slot(slot& hazard) noexcept {
    // release: our reads of the protected node happen before a scan that sees the slot empty
    // (acquire in scan()) frees it.
    hazard.store(nullptr, RECLAIM_MUTATED(hp_clear_relaxed) ? std::memory_order_relaxed
                                                            : std::memory_order_release);
  }
  template <class Block>
  static void clear(Block& b) noexcept {
    for (auto& hazard : b.slots) clear_slot(hazard);
  }

  void retire(record& r, core::retired_hook* node) {
    holding garbage(r);
    r.count_retired(this->gauge_);
    keeper::retire(*this, r, node);
  }
  // A retire through a protection, outside any guard (epoch_pop's runs in an operation).
  void retire_outside_guard(record& r, core::retired_hook* node) {
    keeper::retire_outside_guard(*this, r, node);
  }

  // A scan: the free policy gets every node of ours (and of exited threads) that no hazard
  // protects now.
  void scan(record& r) {
    core::retired_list safe;
    keeper::scan(*this, r, safe);
    core::counters::add(r.ctr.scans, 1);
    r.release_safe(std::move(safe), this->gauge_);
  }

  // f(hazard) for every hazard published in the domain (acquire loads: pair with the release in
  // clear_slot() and the fence's publish(), so a node whose slot we see cleared or moved on was no
  // longer being read) until f returns true; whether it did.
  template <class F>
  bool find_hazard(F&& f) const {
    bool found = false;
    auto in_block = [&](const auto& b) {
      for (const auto& hazard : b.slots) {
        if (found) return;
        if (const void* p = hazard.load(std::memory_order_acquire)) found = f(p);
      }
    };
    for (const record* r = this->threads_.head(); r && !found;
         r = decltype(this->threads_)::next_of(r)) {
      r->hazards.for_each(in_block);
      r->owned.for_each(in_block);
    }
    return found;
  }

  // The heavy side of the fence (core/fence.hpp), before a reclaimer reads other threads' slots or
  // guard depths: pairs with fence::publish() and light(), and under the POP schemes pings the
  // active threads (counted as signals).
  void run_heavy_side(record& r) const noexcept {
    fence::heavy(
        r.fence,
        [&](auto&& f) { this->threads_.for_each([&](const record& other) { f(other.fence); }); },
        r.ctr);
  }

  // Moves the nodes of `list` that no hazard protects now into `safe`.
  void take_unprotected(record& r, core::retired_list& list, core::retired_list& safe) noexcept {
    core::scan_timer timer(r.ctr);
    if (!RECLAIM_MUTATED(hp_scan_without_heavy_side)) run_heavy_side(r);
    const auto find = [&](auto&& f) { return find_hazard(f); };
    r.snapshot.take(find);
    list.partition_into(safe, [&](core::retired_hook* node) {
      return !r.snapshot.protects(static_cast<const void*>(node), find);
    });
  }

  // An operation here is an outermost guard: see core::domain_base::wait_for_open_guards. Under
  // the asymmetric strategies a reader's guard depth is published as its slots are, without a
  // fence, so the heavy side runs first, as before a scan: either a reader's depth is visible, or
  // its reads come after our earlier writes.
  bool wait_for_grace_period(record& me, core::deadline d) const {
    if (!RECLAIM_MUTATED(hp_synchronize_without_heavy_side)) run_heavy_side(me);
    return this->wait_for_open_guards(d);
  }

  static void take_garbage(record& r, typename base::gathered& into) noexcept {
    keeper::take_all(r, into.unsafe);
    into.safe.splice(r.freeing.take());
  }

  // Scans until no hazard protects what it gathered (core::domain_base::scan_barrier). What is
  // still protected is stamped by the keeper (epoch_pop: with the epoch now, no older than any of
  // its nodes' tags).
  bool barrier_locked(record& me, core::deadline d) {
    return this->scan_barrier(me, d, [this] { return keeper::stamp(*this); });
  }

  // A barrier waits for the nodes a scan found protected. Those that the calling thread's own slots
  // protect (its guard_ptrs or hazard_pointers outside any guard; inside a guard the barrier is
  // refused before) would be waited for for ever: named and stopped instead.
  static void refuse_own_protection(const record& me, const core::retired_list& left) noexcept {
    bool own = false;
    const auto in_block = [&](const auto& b) {
      for (const auto& hazard : b.slots) {
        const void* p = hazard.load(std::memory_order_relaxed);  // our own: program order
        for (const core::retired_hook* n = left.head(); p && n && !own; n = n->next_retired)
          own = p == n;
      }
    };
    me.hazards.for_each(in_block);
    me.owned.for_each(in_block);
    if (own)
      core::stop_on_misuse(
          "barrier() would wait for ever: a guard_ptr or hazard_pointer of the calling thread "
          "protects a node retired before the call; reset it before the barrier "
          "(guard_ptr::reset(), hazard_pointer::reset_protection())");
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
  // thread_local or stack lifetime has ended): its slot is cleared and stays taken. The keeper
  // hands the rest over (epoch_pop: the bags with their tags) and then lets the record go idle
  // (epoch_pop: it leaves any operation it was in).
  void on_thread_exit(record& r) noexcept {
    holding garbage(r);
    r.hazards.for_each_owned(clear<block>);
    r.owned.for_each_owned(clear<typename decltype(r.owned)::block>);
    scan(r);
    keeper::hand_over(*this, r);
    r.freeing.drain(r);
    keeper::deactivate(r);
    fence::leave(r.fence);
  }

  // In a child of fork(): r's thread does not exist here (core/registry.hpp) and reads nothing any
  // more: its hazards go (single stores); under the POP schemes it is no longer pinged, and under
  // epoch_pop it holds the epoch back no more.
  void forget_thread(record& r) noexcept {
    r.hazards.for_each_owned(clear<block>);
    r.owned.for_each_owned(clear<typename decltype(r.owned)::block>);
    fence::forget(r.fence);
    keeper::forget(r);
  }

  // Hazard slots beyond each record's first block: nested guards' blocks and protections' pools.
  core::atomic<std::size_t> extra_slots_{0};
  [[no_unique_address]] typename keeper::shared shared_;  // epoch_pop: the global epoch
};

// hp's part of its guard and of its owned protection (hp::protection, what a reclaim::guard_ptr
// holds; core/slot_guard.hpp): a slot holds a hazard, the address of the node's retired_hook.
// Guards take the block of hazard slots of their nesting level (allocated the first time a
// thread nests that deep); protections take one slot each from the record's pool. A region's
// guard lends its block's slots to the protections made from it, and a lent slot's last hazard
// stays published until the region's guard clears its block, even if the protection was
// destroyed (as a guard's slots do).
//
// Under the POP schemes a protection that protects something also keeps its thread active, from
// its protect() to its reset or destruction (pinged by scans; under epoch_pop also announcing an
// epoch, the epoch's protection), unless it borrows a region's slot (the region's guard holds the
// thread active then). It is not an operation: synchronize() does not wait for it.
template <class... Policies>
struct hp<Policies...>::slot_hooks
    : core::slot_hooks_base<hp, typename domain::block, typename domain::slot> {
  using base = typename slot_hooks::slot_hooks_base;
  using typename base::record, typename base::block, typename base::slot;
  static constexpr core::slot_hold holds =
      fence::tracks_activity ? core::slot_hold::while_protecting : core::slot_hold::never;
  static constexpr bool rereads_source = true;  // publish_validated()

  // A guard's end: the hazards of its block are cleared, then its nesting level closes.
  static void end(domain&, record& r, block& b) noexcept {
    domain::clear(b);
    domain::close(r);
  }

  // Publishes the node src holds in the hazard and re-reads src until it still holds it
  // (publish_validated()): from then on no scan frees the node while the hazard holds it.
  template <class P>
  static P protect(domain&, record&, slot& hazard, const core::atomic<P>& src,
                   std::memory_order order) noexcept {
    return domain::publish_validated(hazard, src, order);
  }
  // As publish_validated(), once.
  template <class P>
  static P try_protect(domain&, record&, slot& hazard, const P& expected,
                       const core::atomic<P>& src, std::memory_order order) noexcept {
    fence::publish(hazard, domain::address_of(expected));
    return src.load(fence::reread(order));
  }
  template <class P>
  static void publish(domain&, record&, slot& hazard, P p) noexcept {
    // release, then the fence's light side: as in publish_validated().
    hazard.store(domain::address_of(p), std::memory_order_release);
    fence::light();
  }

  // A protection's own slot: taken from the record's pool, given back to it, and cleared (its
  // hazard withdrawn).
  static slot& take(domain& d, record& r) { return d.take(r); }
  static void give_back(domain&, record& r, slot& hazard) noexcept {
    domain::give_back(r, hazard);
  }
  static void clear(domain&, record&, slot& hazard) noexcept { domain::clear_slot(hazard); }
  // The POP schemes: before the hazard is published, so that a scan pings us, and under
  // epoch_pop the epoch cannot pass the node either.
  static void activate(domain& d, record& r) noexcept { d.activate(r); }
  static void deactivate(record& r) noexcept { domain::deactivate(r); }

  // A retire inside a guard: to the keeper, which scans once enough waits.
  static void retire(domain& d, record& r, core::retired_hook* node) { d.retire(r, node); }
  // hp's retire needs no operation around it, but the free policy gets its turn first, as when a
  // guard opens (guard_ptr users may never open a guard; an amortized policy would then never
  // free what scans found); the keeper says what else it needs (epoch_pop: an operation, whose
  // announced epoch tags the node). Never throws: the scan it may run needs no memory it cannot
  // get.
  static void retire_outside_guard(domain& d, record& r, core::retired_hook* node) noexcept {
    core::garbage_claim::free_policy_step(r);
    d.retire_outside_guard(r, node);
  }
};

}  // namespace reclaim
