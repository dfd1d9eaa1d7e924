// SPDX-License-Identifier: MIT
// What he, wfe (hazard eras, wait-free eras) and ibr (2GE-IBR) share: the node header with a birth
// and a retire era, the per-thread retired list, and a domain skeleton that stamps births, stamps
// retires, scans, hands garbage over at thread exit, and serves flush/synchronize/barrier. A scheme
// adds only its reservations: how a reader publishes them, how a scan snapshots them
// (Domain::take_snapshot(record&), into memory the record keeps; it throws std::bad_alloc when
// that memory must grow and cannot), which (birth, retire) pairs a snapshot covers
// (Domain::covers(const record&, birth, retire)) and the same rule read from the reservations
// themselves (Domain::covered_now(record&, birth, retire): no memory; the record counts what the
// reads cost), how a thread drops them all at exit (Domain::clear_reservations(record&)), and
// what it does before it advances the clock (Domain::before_advance(record&): wfe helps pending
// readers there).
//
// Out of memory. A retire takes its node and never throws (retire() is noexcept), and a scan
// never needs memory it cannot get: when the snapshot cannot grow, the scan reads every
// reservation for each node instead (O(H) per node rather than O(log H): the papers' own scan),
// so a retire, a flush and a thread's exit never fail or lose a node for want of memory. Thread
// exit allocates nothing it cannot do without (its orphan header was reserved at registration).
//
// The rule every era scheme frees by: a retired node n is freed by a scan once no reservation the
// scan reads covers [birth(n), retire(n)]. The retire stamp is read after the container's unlink
// and a full fence (retire()), the scan's reads come after that fence too (its own retires, or
// through the release/acquire of the orphanage and of a barrier's borrowing for others' nodes),
// which is what each scheme's header argument needs.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../core/domain.hpp"
#include "../../core/guard_base.hpp"
#include "../../core/misuse.hpp"
#include "../../core/record.hpp"
#include "../../core/retired.hpp"
#include "eras.hpp"
#include "../../core/sync.hpp"

namespace reclaim::detail {

// The header of a node protected by eras: the retire link, the era of its creation (stamped by a
// guard's or the domain's create(); first_era, the oldest, for a node made with a plain new, which
// every reservation covers: conservative, never unsafe) and the era of its retire.
struct era_node : core::retired_hook {
  era_t birth_era = first_era;
  era_t retire_era = no_era;
};

// The guards' base: retire() accepts only nodes that carry the eras (the scan reads them).
template <class Guard>
class era_guard_base : public core::guard_base<Guard> {
  using base = core::guard_base<Guard>;

 public:
  // A retire takes the node and never throws (era_domain::retire()); with a deleter object, only
  // the deleter's move may throw, before the node is taken (core::to_retired).
  template <class T>
  void retire(T* node) noexcept {
    check<T>();
    base::retire(node);
  }
  template <auto Deleter, class T>
  void retire(T* node) noexcept {
    check<T>();
    base::template retire<Deleter>(node);
  }
  template <class T, class D>
  void retire(T* node, D&& deleter) {
    check<T>();
    base::retire(node, std::forward<D>(deleter));
  }

 private:
  template <class T>
  static constexpr void check() noexcept {
    static_assert(std::is_base_of_v<era_node, T>,
                  "reclaim: he, ibr and wfe retire nodes derived from the scheme's node_base, "
                  "which carries the birth and retire eras a scan reads");
  }
};

// The owner's part of a record that the shared skeleton uses.
template <class FreePolicy>
struct era_record : core::thread_record<FreePolicy> {
  // Held around each retire and scan (core::garbage_claim): a barrier borrows the lists while free.
  alignas(core::cache_line) core::garbage_claim claim;
  // Owner only (or a barrier that borrowed the record).
  core::retired_list retired;
  std::size_t next_scan = 0;  // retired.size() at which the next scan runs (0: at the threshold)
  unsigned allocations = 0;   // create() calls since this thread last advanced the clock

  void destroy_garbage() noexcept { retired.destroy_all(); }
};

// Domain derives from era_domain<Domain, Record, EraFrequency, ScanBase> and provides
//   take_snapshot(r), covers(r, birth, retire), clear_reservations(r), before_advance(r),
//   reservation_count()  (the H of the scan threshold R = ScanBase + 2H).
template <class Domain, class Record, unsigned EraFrequency, unsigned ScanBase>
class era_domain : public core::domain_base<Domain, Record> {
 protected:
  using base = core::domain_base<Domain, Record>;
  using claim = core::garbage_claim;
  using holding = claim::scope<Record>;

 public:
  // It offers synchronize() and barrier() (concepts.hpp's grace_periods).
  static constexpr bool grace_periods = true;
  using base::retire;  // domain.retire(node[, deleter]) from any thread

  // A node stamped with its birth era (hides domain_base::create): for containers that make nodes
  // outside a guard. Counts towards this thread's clock advances as a guard's create() does.
  template <class T, class... Args>
  T* create(Args&&... args) {
    return create_on<T>(this->threads_.local(), std::forward<Args>(args)...);
  }

  // The clock, for tests and tools.
  era_t era() const noexcept { return clock_.now(); }

  // R: a thread scans once R nodes more than its last scan kept wait in its list. R = ScanBase +
  // 2H (H the reservations a scan reads), Michael's R = H + Omega(H) as hp's: a scan then frees
  // at least R - H of the nodes retired since the last one unless old reservations cover them, so
  // its O(H log H + list) cost is amortized over R retires.
  std::size_t scan_interval() const noexcept { return ScanBase + 2 * self().reservation_count(); }

 protected:
  era_domain() = default;

  template <class T, class... Args>
  T* create_on(Record& r, Args&&... args) {
    if (++r.allocations >= EraFrequency) [[unlikely]]
      advance(r);
    T* node = new T(std::forward<Args>(args)...);
    if constexpr (std::is_base_of_v<era_node, T>)
      // After the construction, before the node is published (by the container's release store
      // or CAS, which a reader's acquire reads): every era a reader of the node reads is >= this.
      static_cast<era_node*>(node)->birth_era =
          clock_.birth() + (RECLAIM_MUTATED(era_birth_one_too_young) ? 1 : 0);
    return node;
  }

  [[gnu::noinline]] void advance(Record& r) {
    r.allocations = 0;
    self().before_advance(r);
    clock_.advance();
    r.count_epoch_advance(clock_.now());
  }

  void retire(Record& r, core::retired_hook* node) noexcept {
    // Full fence: the container's unlink comes before it, the clock load after: the argument of
    // each scheme's header (a reader whose reservation we do not see read the unlinked source).
    if (!RECLAIM_MUTATED(era_retire_without_fence)) core::thread_fence(std::memory_order_seq_cst);
    static_cast<era_node*>(node)->retire_era = clock_.now();
    holding garbage(r);
    r.count_retired(this->gauge_);
    r.retired.push(node);
    if (r.retired.size() >= std::max(r.next_scan, scan_interval())) [[unlikely]]
      scan(r);
  }

  // The free policy gets every node of ours (and of exited threads) that no reservation covers
  // now; the next scan comes once R more nodes wait than this one kept, so that what an old
  // reservation keeps (bounded: nodes born before it) is not rescanned at every retire.
  void scan(Record& r) noexcept {
    r.retired.splice(this->adopt_orphans());
    core::retired_list safe;
    take_unprotected(r, r.retired, safe);
    core::counters::add(r.ctr.scans, 1);
    r.next_scan = r.retired.size() + scan_interval();
    r.release_safe(std::move(safe), this->gauge_);
  }

  // Moves the nodes of `list` that no reservation covers now into `safe`: through the snapshot,
  // or, if it cannot have the memory for one, by reading the reservations for each node (each
  // such read is a snapshot of its own, taken after the same fence, so the argument is the same).
  void take_unprotected(Record& r, core::retired_list& list, core::retired_list& safe) noexcept {
    core::scan_timer timer(r.ctr);
    // Orders the retires (and unlinks) that happen before this scan, ours or handed to us, before
    // the snapshot's loads in S, as retire()'s fence does for each of our retires.
    core::thread_fence(std::memory_order_seq_cst);
    bool snapshot = true;
    try {
      self().take_snapshot(r);
    } catch (const std::bad_alloc&) {
      snapshot = false;
    }
    list.partition_into(safe, [&](core::retired_hook* hook) {
      const auto* n = static_cast<const era_node*>(hook);
      return snapshot ? !self().covers(r, n->birth_era, n->retire_era)
                      : !self().covered_now(r, n->birth_era, n->retire_era);
    });
  }

  // An operation here is an outermost guard (core::domain_base::wait_for_open_guards).
  bool wait_for_grace_period(Record&, core::deadline d) const {
    return this->wait_for_open_guards(d);
  }

  static void take_garbage(Record& r, typename base::gathered& into) noexcept {
    into.unsafe.splice(std::move(r.retired));
    into.safe.splice(r.freeing.take());
  }

  // Scans until no reservation covers what it gathered (core::domain_base::scan_barrier); what a
  // reservation still covers waits in the orphanage (each node keeps its own eras).
  bool barrier_locked(Record& me, core::deadline d) {
    return this->scan_barrier(me, d, [] { return std::uint64_t{0}; });
  }

  // A barrier waits for the nodes a scan found covered. Those that the calling thread's own
  // reservations cover (its guard_ptrs outside any guard; inside one the barrier is refused
  // before) would be waited for for ever: named and stopped instead. Domain::own_covers(me, birth,
  // retire) reads the caller's own reservations.
  void refuse_own_protection(const Record& me, const core::retired_list& left) const noexcept {
    for (const core::retired_hook* n = left.head(); n; n = n->next_retired) {
      const auto* node = static_cast<const era_node*>(n);
      if (self().own_covers(me, node->birth_era, node->retire_era))
        core::stop_on_misuse(
            "barrier() would wait for ever: a guard_ptr of the calling thread protects a node "
            "retired before the call; reset it before the barrier");
    }
  }

  void flush_local(Record& r) noexcept {
    holding garbage(r);
    scan(r);
    r.freeing.drain(r);
  }

  // In a child of fork(): r's thread does not exist here (core/registry.hpp) and reads nothing any
  // more, so its reservations go (single stores), and keep no node.
  void forget_thread(Record& r) noexcept { self().forget_reservations(r); }

  // Thread exit (possibly inside guards): every reservation goes, and we scan once more, so that
  // what goes to the orphanage is only what other threads' reservations cover.
  void on_thread_exit(Record& r) noexcept {
    holding garbage(r);
    self().clear_reservations(r);
    scan(r);
    this->orphan(r, std::move(r.retired));
    r.freeing.drain(r);
  }

  friend base;
  era_clock clock_;

 private:
  Domain& self() noexcept { return static_cast<Domain&>(*this); }
  const Domain& self() const noexcept { return static_cast<const Domain&>(*this); }
};

}  // namespace reclaim::detail
