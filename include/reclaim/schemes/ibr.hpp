// SPDX-License-Identifier: MIT
// ibr: 2GE-IBR, two-global-epoch interval-based reclamation (Wen, Izraelevitz, Cai, Beadle and
// Scott, "Interval-Based Memory Reclamation", PPoPP 2018).
//
// What it is. Eras as in hazard eras (he.hpp: a global clock advanced every F allocations of a
// thread, a birth era stamped into every node by create(), a retire era at retire), but each
// thread publishes one interval [lower, upper] instead of K eras. An operation's first protected
// read sets lower = upper = the clock (the paper sets them when the operation starts; an operation
// that protects nothing, such as a retire, then reserves nothing); each protected read loads the
// pointer, reads the clock, and if it differs from upper publishes the new upper and loads again
// (the store happens only when the era changed). A retired node is freed by a scan once no thread's interval
// intersects [birth, retire]. Nested guards share the interval; the outermost one's end clears it.
//
// When to use it. Where he would be used but a traversal may need an unbounded number of
// protections at once (the interval covers every node read in the operation, so slot indices do
// not matter: slot_count is 1 << 16 and protect() ignores the slot), or where the per-slot
// bookkeeping costs too much. The price: a stalled operation keeps everything born before its
// upper and retired after its lower, a coarser bound than he's.
//
// What it bounds. A thread stalled inside an operation keeps only the nodes born at or before its
// upper era that were retired at or after its lower era: nodes that existed when it last
// protected. Nodes born after it stalled are freed. Every thread holds at most that plus R retired
// nodes (R = scan_every N + 2 x records: it scans when R more nodes wait than its last scan
// kept). bounds_garbage follows the free policy (batch_free: yes).
//
// Needs from a container: validated reads (needs_validated_reads: the interval covers a node only
// if it was reached through a validated read, as with he); nodes derive from ibr<>::node_base and
// are made with create() (a plain new gives birth first_era: conservative, freed once no interval
// reaches back to its retire era). Owned protections (ibr::protection, what a reclaim::guard_ptr
// holds): a share in the thread's operation, as region schemes' (holding one keeps the interval
// open), whose protect() moves upper.
//
// Progress: protect() lock-free (retries while the clock moves); retire and scan wait-free apart
// from the free calls. Out of memory: as he (a retire never throws once it has the node; a scan
// that cannot grow its snapshot of the intervals reads them for each node instead).
//
// Memory model. As he's argument (he.hpp) with upper in place of a slot: the reader's seq_cst store
// of upper = e precedes its seq_cst load of the pointer, which reads-before the unlink, which
// precedes the retirer's fence, its clock read (retire >= e) and its scan's loads in S; birth <=
// e by the node's publication. And lower <= e <= retire: lower was read from the clock before
// the operation's first read of a source and stored (seq_cst, before upper) before it. A scan reads lower first, then
// upper, both seq_cst, because within an operation lower is fixed and upper only grows: the pair
// it reads then brackets every era the operation had published when lower was read, so any
// protection made before the scan's loads is inside. Read the other way round, the scan could
// pair an operation's upper with the next operation's lower, an interval that belongs to neither
// (then safe only through a further argument that the next operation's reads come after the
// scan's fence). An ended operation stores lower = no_interval (above every era) and upper =
// no_era with release stores: whichever the scan reads, the pair is empty, and the operation's
// reads happen before the frees.
//
// Differences from the paper: the clock advances every F allocations of a thread (the paper's
// epochf) and a thread scans every R retires beyond what its last scan kept (the paper's emptyf);
// the retire era is read after a seq_cst fence; guards nest and guard_ptrs share the interval.
#pragma once
#include <atomic>
#include <cassert>
#include <cstdint>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

#include "../concepts.hpp"
#include "../core/domain.hpp"
#include "../core/guard_base.hpp"
#include "../core/policy.hpp"
#include "../core/region_guard.hpp"
#include "../free/batch.hpp"
#include "../policies.hpp"
#include "detail/era_reclaim.hpp"
#include "detail/eras.hpp"
#include "../core/sync.hpp"

namespace reclaim {

template <class... Policies>
struct ibr : core::scheme_base<ibr<Policies...>> {
  // Its free policy, as given in Policies... or batch_free; advance_every<N> and scan_every<N>
  // below.
  using free_policy = core::find_policy_t<free_policy_kind, batch_free, Policies...>;
  static_assert((core::known_kinds<free_policy_kind, advance_kind,
                                   scan_every_kind>::template contains<Policies> &&
                 ...),
                "ibr takes a free policy, advance_every<F> and scan_every<N>");
  // Defaults as he's (he.hpp): the clock advances every 64 allocations of a thread; a thread scans
  // once 100 + 2 x records more nodes wait.
  static constexpr unsigned era_every = core::policy_value<advance_every<64>, Policies...>;
  static constexpr unsigned scan_base = core::policy_value<scan_every<100>, Policies...>;

  // What it is (concepts.hpp): an era scheme whose garbage is bounded where its free policy is, and
  // which needs validated reads.
  static constexpr std::string_view name = "ibr";
  static constexpr reclaim::family family = reclaim::family::era;
  static constexpr bool bounds_garbage = free_policy::bounded;
  static constexpr unsigned needs = needs_validated_reads;

  // Its node base (the retire hook, the birth and retire eras), and its domain and guard (below).
  using node_base = detail::era_node;
  class domain;
  class guard;
  // What a reclaim::guard_ptr holds: a share in the thread's operation (its interval), whose
  // protect() moves upper (core/region_guard.hpp).
  using protection = core::region_hold<domain>;
};

namespace detail {

template <class FreePolicy>
struct ibr_record : era_record<FreePolicy> {
  static constexpr era_t no_interval = std::numeric_limits<era_t>::max();
  // Read by other threads' scans: the operation's interval (none: lower = no_interval, upper =
  // no_era).
  alignas(core::cache_line) core::atomic<era_t> lower{no_interval};
  core::atomic<era_t> upper{no_era};
  // Owner only: the scan's snapshot of the intervals.
  std::vector<std::pair<era_t, era_t>> snapshot;
};

}  // namespace detail

// One ibr instance's shared state: the era clock, the thread records with their intervals, and
// the garbage (core/domain.hpp). default_domain() is the one containers use unless given another.
template <class... Policies>
class ibr<Policies...>::domain
    : public detail::era_domain<domain, detail::ibr_record<free_policy>, era_every, scan_base> {
  using record = detail::ibr_record<free_policy>;
  using skeleton = detail::era_domain<domain, record, era_every, scan_base>;
  using era_t = detail::era_t;

 public:
  // Its scheme's guard.
  using guard_type = ibr::guard;

  ~domain() { this->shutdown(); }

 private:
  friend skeleton;
  friend typename skeleton::base;
  friend class ibr::guard;
  friend class core::region_hold<domain>;

  std::size_t reservation_count() const noexcept { return this->threads_.size(); }

  // A guard or holding protection opens a level; the interval begins at the operation's first
  // protect() (an operation that protects nothing, such as one that only retires, reserves
  // nothing, and cannot keep its own garbage).
  record& begin(record& r) {
    if (r.enter() == 0) core::garbage_claim::free_policy_step(r);
    return r;
  }
  static void end(record& r) noexcept {
    if (r.leave() && r.upper.load(std::memory_order_relaxed) != detail::no_era) clear_interval(r);
  }
  // release: the operation's reads happen before a scan that reads either word cleared.
  static void clear_interval(record& r) noexcept {
    r.lower.store(record::no_interval, RECLAIM_MUTATED(era_clear_relaxed)
                                           ? std::memory_order_relaxed
                                           : std::memory_order_release);
    r.upper.store(detail::no_era, RECLAIM_MUTATED(era_clear_relaxed) ? std::memory_order_relaxed
                                                                     : std::memory_order_release);
  }

  // he's protocol on upper (the guard's protect(), and core::region_hold's for guard_ptrs).
  template <class P>
  P protect_in_operation(record& r, const core::atomic<P>& src) {
    era_t prev = r.upper.load(std::memory_order_relaxed);  // our own
    if (prev == detail::no_era) [[unlikely]] {
      // The operation's first protect: lower, then upper, both seq_cst, before the load below.
      prev = this->clock_.now();
      r.lower.store(prev, RECLAIM_MUTATED(era_publish_relaxed) ? std::memory_order_relaxed
                                                               : std::memory_order_seq_cst);
      r.upper.store(prev, RECLAIM_MUTATED(era_publish_relaxed) ? std::memory_order_relaxed
                                                               : std::memory_order_seq_cst);
    }
    for (;;) {
      P p = src.load(std::memory_order_seq_cst);
      const era_t e = this->clock_.now();
      if (e == prev) [[likely]]
        return p;
      r.upper.store(e, RECLAIM_MUTATED(era_publish_relaxed) ? std::memory_order_relaxed
                                                            : std::memory_order_seq_cst);
      // p was loaded before upper reached e: it may be a node born after the interval it read
      // under, only the next round's load is covered.
      if (RECLAIM_MUTATED(era_no_validation)) return p;
      prev = e;
    }
  }

  // f(lower, upper) for every interval published now: lower first, then upper (see the top of
  // this file), both seq_cst (acquire: pair with clear_interval()'s release stores).
  template <class F>
  void for_each_interval(F f) const {
    this->threads_.for_each([&](const record& o) {
      const era_t lo = o.lower.load(std::memory_order_seq_cst);
      if (lo == record::no_interval) return;
      const era_t hi = o.upper.load(std::memory_order_seq_cst);
      if (hi >= lo) f(lo, hi);
    });
  }
  // In memory the record keeps from scan to scan; throws std::bad_alloc when it must grow and
  // cannot (the scan then reads the intervals for each node: covered_now()).
  void take_snapshot(record& r) {
    r.snapshot.clear();
    for_each_interval([&](era_t lo, era_t hi) { r.snapshot.emplace_back(lo, hi); });
  }
  static bool covers(const record& r, era_t birth, era_t retire) noexcept {
    for (const auto& [lo, hi] : r.snapshot)
      if (intersects(lo, hi, birth, retire)) return true;
    return false;
  }
  bool covered_now(record&, era_t birth, era_t retire) const noexcept {
    bool covered = false;
    for_each_interval(
        [&](era_t lo, era_t hi) { covered = covered || intersects(lo, hi, birth, retire); });
    return covered;
  }
  static bool intersects(era_t lo, era_t hi, era_t birth, era_t retire) noexcept {
    return birth <= hi && retire >= lo;
  }
  static void clear_reservations(record& r) noexcept { clear_interval(r); }
  static void forget_reservations(record& r) noexcept { clear_interval(r); }
  // A guard_ptr under ibr holds the thread's operation (region_hold): a barrier is refused before
  // it looks at any node, so none is covered by the caller's own interval here.
  static bool own_covers(const record&, era_t, era_t) noexcept { return false; }
  static void before_advance(record&) noexcept {}
};

// An operation in d, from construction to destruction: an interval of eras, from its first
// protect()'s era to the latest one a protect() saw; no scan frees a node whose life overlaps it.
template <class... Policies>
class ibr<Policies...>::guard : public detail::era_guard_base<guard> {

 public:
  // As under hp, a node protect() returns is safe only if the container's own check then holds
  // (its source re-read, its mark): reads are validated (needs_validated_reads).
  static constexpr bool validates = true;
  // One interval per thread: the slot index is ignored, so every container fits.
  static constexpr unsigned slot_count = 1u << 16;

  explicit guard(domain& d = ibr::default_domain())
      : domain_(d), record_(d.begin(d.threads_.local())) {}
  ~guard() {
    this->check_owner();
    domain::end(record_);
  }

  // The pointer src holds, read once the interval's upper end is the current era (the loads are
  // seq_cst), so that the node stays covered until the operation ends.
  template <class P>
  P protect(const core::atomic<P>& src, unsigned /*slot*/) noexcept {
    this->check_owner();
    return domain_.protect_in_operation(record_, src);
  }

  // A node stamped with its birth era (hides guard_base::create).
  template <class T, class... Args>
  T* create(Args&&... args) {
    this->check_owner();
    return domain_.template create_on<T>(record_, std::forward<Args>(args)...);
  }

 private:
  friend class core::guard_base<guard>;
  void retire_hook(core::retired_hook* node) noexcept { domain_.retire(record_, node); }

  domain& domain_;
  typename domain::record& record_;
};

}  // namespace reclaim
