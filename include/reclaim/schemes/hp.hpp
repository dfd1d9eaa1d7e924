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
// Progress: protect() is lock-free (it retries while the source changes); retire and scan are
// wait-free apart from the free calls.
// Differences from the paper: the fence is a policy (core/fence.hpp) so that asymmetric variants
// reuse this header; slots belong to guards, not threads; exited threads' retired lists are
// adopted by the next scan of a live thread.
#pragma once
#include <algorithm>
#include <atomic>
#include <cassert>
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
};

namespace detail {
template <class FreePolicy, unsigned K>
struct hp_record : core::thread_record<FreePolicy> {
  // Read by other threads' scans: the outermost guard's K slots, and blocks for nested guards.
  alignas(core::cache_line) core::slot_block<const void*, K> hazards;
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
  ~domain() { this->shutdown(); }

  // The scan threshold R: proportional to the number of hazard slots H (a block of K per record,
  // and per nesting level that a thread ever used), so that each scan frees at least R - H nodes
  // and its O(H log H) cost is amortized over them.
  std::size_t scan_threshold() const noexcept {
    const std::size_t blocks = this->threads_.size() + nested_blocks_.load(std::memory_order_relaxed);
    return 100 + 2 * slot_count * blocks;
  }

 private:
  friend class hp::guard;
  friend base;

  // A guard opens on r: the outermost one gives the free policy its turn and uses the record's
  // slots, a nested one the block of its level. Small, so that it inlines into every operation.
  block& open(record& r) {
    const unsigned level = r.enter();
    if (level == 0) [[likely]] {
      core::garbage_claim::free_policy_step(r);
      return r.hazards;
    }
    return nested_block(r, level);
  }

  // The block of nesting level `level`, allocated the first time a thread nests that deep (a
  // failed allocation leaves the nesting as it was).
  [[gnu::noinline]] block& nested_block(record& r, unsigned level) {
    try {
      return r.hazards.at(level, [&] { nested_blocks_.fetch_add(1, std::memory_order_relaxed); });
    } catch (...) {
      r.leave();
      throw;
    }
  }

  static void clear(block& b) noexcept {
    // release: our reads of the protected nodes happen before a scan that sees the slot empty
    // (acquire in scan()) frees them.
    for (auto& slot : b.slots) slot.store(nullptr, std::memory_order_release);
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
    fence::heavy();  // pairs with fence::light() in protect(): see core/fence.hpp
    r.snapshot.clear();
    this->threads_.for_each([&](const record& other) {
      other.hazards.for_each([&](const block& b) {
        for (const auto& slot : b.slots) {
          // acquire: pairs with the release in clear(), so a node whose slot we see cleared was
          // no longer being read.
          if (const void* p = slot.load(std::memory_order_acquire)) r.snapshot.push_back(p);
        }
      });
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
  // scan ever looks at.
  void on_thread_exit(record& r) noexcept {
    holding garbage(r);
    r.hazards.for_each_owned(clear);
    scan(r);
    this->orphan(r, std::move(r.retired));
    r.freeing.drain(r);
  }

  std::atomic<std::size_t> nested_blocks_{0};
};

template <class... Policies>
class hp<Policies...>::guard : public core::guard_base<guard> {
  template <class P>
  static const core::retired_hook* address_of(P p) noexcept {
    if constexpr (std::is_pointer_v<P>)
      return p;
    else
      return p.get();  // a marked_ptr: the hazard covers the node, whatever the mark
  }

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
  // confirms it; the container still checks its own validity condition (the mark). The hazard is
  // the node's retired_hook address, the same address retire() records.
  template <class P>
  P protect(const std::atomic<P>& src, unsigned slot) noexcept {
    assert(slot < slot_count);
    this->check_owner();
    // acquire: pairs with the release store or CAS that published the node.
    P p = src.load(std::memory_order_acquire);
    for (;;) {
      // release: this may overwrite the slot's previous hazard; our reads of that node must
      // happen before a scan that sees the new value (acquire in scan()) and frees it.
      block_.slots[slot].store(address_of(p), std::memory_order_release);
      fence::light();  // the hazard is visible before the re-read; pairs with fence::heavy()
      P again = src.load(std::memory_order_acquire);
      if (again == p) return p;
      p = again;
    }
  }

 private:
  friend class core::guard_base<guard>;
  void retire_hook(core::retired_hook* node) { domain_.retire(record_, node); }

  domain& domain_;
  typename domain::record& record_;
  typename domain::block& block_;
};

}  // namespace reclaim
