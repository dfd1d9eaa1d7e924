// SPDX-License-Identifier: MIT
// The machinery of he (hazard eras) and wfe (wait-free eras), which differ only in protect()'s slow
// path: the record (per-guard blocks of era slots, a pool of owned slots for guard_ptrs, and
// under wfe the help request and the helper's own reservations), the domain (protect, the scan's
// snapshot, wfe's helping), and the hooks of the guard and the owned protection
// (core/slot_guard.hpp). Scheme (he<...> or wfe<...>)
// supplies free_policy, slot_count, era_every, scan_base, wait_free and fast_tries; the headers
// he.hpp and wfe.hpp say what each scheme promises and why it is safe.
#pragma once
#include <algorithm>
#include <atomic>
#include <bit>
#include <cassert>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../core/platform/dwcas.hpp"
#include "../../core/guard_base.hpp"
#include "../../core/guard_slots.hpp"
#include "../../core/slot_guard.hpp"
#include "era_reclaim.hpp"
#include "../../core/sync.hpp"

namespace reclaim::detail {

// wfe's part of a record.
struct wfe_record_part {
  // The answer word of this thread's request (a thread makes at most one at a time: it is inside
  // one protect()). lo: pending (asked, unanswered), idle (no request), or the answer, the bits of
  // the pointer a helper read (never one of the two markers: both are odd and above every user
  // address); hi: the request's tag while pending or idle, the answer's era once answered. The tag
  // makes a late helper's compare-and-swap fail on a later request of the same thread.
  static constexpr std::uint64_t pending = ~std::uint64_t{0};
  static constexpr std::uint64_t idle = ~std::uint64_t{0} - 2;
  alignas(core::cache_line) core::atomic_pair answer{core::word_pair{idle, 0}};
  // The request: which source to read, how (a loader instantiated for its pointer type), and a
  // lower bound of the eras that keep the source's node alive (below). Written before the request
  // is published, read by helpers; seq_cst (see help()).
  core::atomic<const void*> source{nullptr};
  core::atomic<source_loader> loader{nullptr};
  core::atomic<era_t> parent_floor{no_era};
  // Published while this thread helps another: the era under which it reads the source, and the
  // floor that keeps the source's node alive meanwhile. Read by every scan.
  alignas(core::cache_line) core::atomic<era_t> help_era{no_era};
  core::atomic<era_t> help_floor{no_era};
  // Odd while this thread helps (from before it reads any request until it is done with their
  // sources), even otherwise; changed by the owner only, always with an RMW. A container's
  // destructor waits for an odd value it reads to change (he_domain::wait_for_source_readers()).
  core::atomic<std::uint64_t> helping{0};
  // Owner only.
  std::uint64_t tag = 0;           // requests made
  era_t floor_seen = no_era;       // the scan's: the lowest help_floor it read (no_era: none)
};
struct no_wfe_part {};

template <class Scheme>
struct he_slot_hooks;

template <class Scheme>
struct he_record : era_record<typename Scheme::free_policy> {
  static constexpr unsigned owned_block = 8;
  using block = core::slot_block<era_t, Scheme::slot_count>;
  // Read by other threads' scans: the outermost guard's K slots, blocks for nested guards, the
  // slots that protections own.
  alignas(core::cache_line) block eras;
  core::slot_pool<era_t, owned_block> owned;
  [[no_unique_address]] std::conditional_t<Scheme::wait_free, wfe_record_part, no_wfe_part> wf;
  // Owner only: the scan's sorted snapshot of the published eras (capacity kept across scans).
  std::vector<era_t> snapshot;
};

template <class Scheme>
class he_domain : public era_domain<he_domain<Scheme>, he_record<Scheme>, Scheme::era_every,
                                    Scheme::scan_base> {
  using record = he_record<Scheme>;
  using skeleton = era_domain<he_domain, record, Scheme::era_every, Scheme::scan_base>;
  using block = typename record::block;
  using slot = core::atomic<era_t>;
  static constexpr bool wait_free = Scheme::wait_free;
  static constexpr unsigned slot_count = Scheme::slot_count;

 public:
  using guard_type = typename Scheme::guard;

  he_domain() = default;
  ~he_domain() {
#ifndef NDEBUG
    this->threads_.for_each([](const record& r) {
      assert(r.owned.all_free() && "reclaim: domain destroyed while a guard_ptr on it is alive");
    });
#endif
    this->shutdown();
  }

  // R (scan_interval()): R = base + 2H, H the era slots of the domain (K per record, plus the
  // blocks of nested guards and protections), as hp's.
  std::size_t scan_threshold() const noexcept { return this->scan_interval(); }

  // wfe: returns once no helper can still read a source of a protect() that returned before the
  // call (a container's destructor calls it first: core::domain_base). A helper reads sources
  // only inside a helping round, which its `helping` number brackets (before_advance()). For
  // each record we read that number; if it is odd we wait until it changes, which ends that
  // round; a round we find ended, or one that begins after our read, reads nothing we care about:
  //  - ended: the release increment that ended it (or a later RMW of the owner, all in its
  //    release sequence) is what our acquire load read, so the round's reads happen before our
  //    return;
  //  - not begun: our load read a value older than the round's odd increment O (or, for a record
  //    pushed after we read the registry's head, our head load read a value older than its push
  //    P, which precedes all its rounds). The full fence F at our start happens before that load
  //    and O (or P) happens before the fence Y the helper runs after O, so F precedes Y in the
  //    single order S. Every protect() on the dying container returned before our call, after
  //    withdrawing its request from the answer word (slow_path(): a seq_cst RMW W); W happens
  //    before F, so W precedes F in S, and Y precedes the helper's first load of the answer word (a
  //    seq_cst RMW too, core/platform/dwcas.hpp). So that load comes after W in S and reads W's
  // value or a
  //    later one: the request is answered (its tag is never pending again), and the helper never
  //    calls its loader.
  // No allocation, no starvation: a round helps each pending request a bounded number of times,
  // and rounds that begin while we wait are not waited for. he: no helpers, nothing to wait for.
  void wait_for_source_readers() const noexcept {
    if constexpr (wait_free) {
      // Full fence F: pairs with the fence Y in before_advance() (the argument above).
      core::thread_fence(std::memory_order_seq_cst);
      const auto& threads = this->threads_;
      using registry = std::remove_cvref_t<decltype(threads)>;
      for (const record* o = threads.head(); o; o = registry::next_of(o)) {
        // acquire (both loads): pair with the release increment that ends a helping round.
        const std::uint64_t seen = o->wf.helping.load(std::memory_order_acquire);
        if (seen % 2 == 0) continue;
        core::waiter w(core::no_deadline);
        while (o->wf.helping.load(std::memory_order_acquire) == seen) (void)w.wait();
      }
    }
  }

 private:
  friend skeleton;
  friend typename skeleton::base;
  friend he_slot_hooks<Scheme>;
  template <class, class, class>
  friend struct core::slot_hooks_base;

  std::size_t reservation_count() const noexcept {
    return slot_count * this->threads_.size() + extra_slots_.load(std::memory_order_relaxed);
  }

  // ---- the guard's and protection's side

  // A guard opens on r: the free policy's turn, then the block of its nesting level.
  block& open(record& r) {
    const unsigned level = r.enter();
    core::garbage_claim::free_policy_step(r);
    if (level == 0) [[likely]]
      return r.eras;
    return nested_block(r, level);
  }
  static void close(record& r) noexcept { (void)r.leave(); }

  [[gnu::noinline]] block& nested_block(record& r, unsigned level) {
    try {
      return r.eras.at(level,
                       [&] { extra_slots_.fetch_add(slot_count, std::memory_order_relaxed); });
    } catch (...) {
      close(r);
      throw;
    }
  }

  slot& take(record& r) {
    return r.owned.take([&] {
      extra_slots_.fetch_add(record::owned_block, std::memory_order_relaxed);
    });
  }
  [[gnu::noinline]] static void give_back(record& r, slot& s) noexcept {
    clear_slot(s);
    r.owned.give_back(s);
  }

  // release: our reads of the nodes the era covered happen before a scan that reads the slot
  // cleared (seq_cst loads, which acquire) frees them.
  static void clear_slot(slot& s) noexcept {
    s.store(no_era, RECLAIM_MUTATED(era_clear_relaxed) ? std::memory_order_relaxed
                                                       : std::memory_order_release);
  }
  template <class Block>
  static void clear(Block& b) noexcept {
    for (auto& s : b.slots) clear_slot(s);
  }

  // The era protocol (he.hpp): returns the pointer src holds once the era published in s is the
  // clock's value read after loading it. The store happens only when the era changed. Under wfe,
  // after fast_tries tries the request goes to the slow path, which helpers answer.
  template <class P>
  P protect(record& r, slot& s, const core::atomic<P>& src) {
    era_t prev = s.load(std::memory_order_relaxed);  // our own slot
    for (unsigned tries = 0;; ++tries) {
      if constexpr (wait_free)
        if (tries == Scheme::fast_tries) [[unlikely]]
          return slow_path(r, s, src);
      // seq_cst load and clock read: the order S of the argument (he.hpp).
      P p = src.load(std::memory_order_seq_cst);
      const era_t e = this->clock_.now();
      if (e == prev) [[likely]]
        return p;
      // seq_cst: S precedes our next load of src, and a scan's loads that follow a retirer's
      // fence see it (a full fence on x86, the one the scheme pays only when the era changed).
      s.store(e, RECLAIM_MUTATED(era_publish_relaxed) ? std::memory_order_relaxed
                                                      : std::memory_order_seq_cst);
      // p was loaded before e was published: only the next round's load is covered by it.
      if (RECLAIM_MUTATED(era_no_validation)) return p;
      prev = e;
    }
  }

  // ---- wfe: the slow path and helping (wfe.hpp says why each step is there)

  // The lowest era this thread publishes in any slot (no_era if none): the source of a protect()
  // lies in a node that one of them covers (or in no node at all), so a helper that keeps every
  // node retired at or after this floor keeps that node.
  static era_t oldest_reservation(record& r) noexcept {
    era_t oldest = no_era;
    auto in_block = [&](auto& b) {
      for (auto& s : b.slots) {
        const era_t e = s.load(std::memory_order_relaxed);  // our own slots
        if (e != no_era && (oldest == no_era || e < oldest)) oldest = e;
      }
    };
    r.eras.for_each_owned(in_block);
    r.owned.for_each_owned(in_block);
    return oldest;
  }

  template <class P>
  [[gnu::noinline]] P slow_path(record& r, slot& s, const core::atomic<P>& src)
    requires wait_free
  {
    using part = wfe_record_part;
    auto& w = r.wf;
    const std::uint64_t tag = ++w.tag;
    // seq_cst: a helper that reads these then finds the request still pending read ours (help()).
    w.source.store(&src, std::memory_order_seq_cst);
    w.loader.store(&load_source<P>, std::memory_order_seq_cst);
    w.parent_floor.store(oldest_reservation(r), std::memory_order_seq_cst);
    // Begun before published: a clock advance that reads the counters equal did not need to help
    // us (at most one such advance per thread: the next one sees us begun).
    requests_begun_.fetch_add(1, std::memory_order_seq_cst);
    r.ctr.store_wide(w.answer, core::word_pair{part::pending, tag});
    core::word_pair seen{part::pending, tag};
    era_t prev = s.load(std::memory_order_relaxed);
    for (;;) {
      P p = src.load(std::memory_order_seq_cst);
      const era_t e = this->clock_.now();
      if (e == prev) {
        // Our own answer, unless a helper's came first: either way no helper installs one later.
        seen = {part::pending, tag};
        if (r.ctr.cas_wide(w.answer, seen, core::word_pair{part::idle, tag})) {
          requests_ended_.fetch_add(1, std::memory_order_seq_cst);
          return p;
        }
        break;  // seen is a helper's answer
      }
      s.store(e, std::memory_order_seq_cst);
      prev = e;
      seen = r.ctr.load_wide(w.answer);
      if (seen.lo != part::pending) break;
    }
    // A helper's answer {pointer, era}: the era goes into our slot before the answer is withdrawn,
    // and a scan reads answers before slots, so one of the two covers the node all along.
    s.store(seen.hi, std::memory_order_seq_cst);
    r.ctr.store_wide(w.answer, core::word_pair{part::idle, tag});
    requests_ended_.fetch_add(1, std::memory_order_seq_cst);
    return std::bit_cast<P>(seen.lo);
  }

  // Before this thread advances the clock: answer every pending request, so that each advance
  // after a request is published costs that request at most one retry.
  void before_advance(record& me) {
    if constexpr (wait_free) {
      // ended first: equal counters then mean no request was pending at the first load.
      const std::uint64_t ended = requests_ended_.load(std::memory_order_seq_cst);
      if (requests_begun_.load(std::memory_order_seq_cst) == ended) [[likely]]
        return;
      // A helping round (wait_for_source_readers()): odd from here, then the full fence Y, which
      // pairs with the waiter's fence F, before our first read of a request. relaxed: Y orders it.
      me.wf.helping.fetch_add(1, std::memory_order_relaxed);
      core::thread_fence(std::memory_order_seq_cst);
      for (record* o = this->threads_.head(); o; o = decltype(this->threads_)::next_of(o))
        if (o != &me) help(me, *o);
      // release: our reads of the sources happen before a waiter's acquire load that reads this
      // value or a later one (every later write is an RMW of ours: one release sequence).
      me.wf.helping.fetch_add(1, std::memory_order_release);
    }
  }

  void help(record& me, record& o)
    requires wait_free
  {
    using part = wfe_record_part;
    const core::word_pair seen = me.ctr.load_wide(o.wf.answer);
    if (seen.lo != part::pending) return;
    const void* src = o.wf.source.load(std::memory_order_seq_cst);
    auto* loader = o.wf.loader.load(std::memory_order_seq_cst);
    const era_t floor = o.wf.parent_floor.load(std::memory_order_seq_cst);
    // The floor first, then the request confirmed still pending: the requester held the source's
    // node (some era of its, >= floor, covers it) after our floor was published, so every scan
    // that could free the node reads our floor (wfe.hpp). If the answer word changed, the fields
    // we read may be a later request's: leave it.
    if (floor != no_era) me.wf.help_floor.store(floor, std::memory_order_seq_cst);
    if (me.ctr.load_wide(o.wf.answer) == seen) {
      era_t e = this->clock_.now();
      for (;;) {
        // As protect(): the era published before the read, confirmed by the clock after it.
        me.wf.help_era.store(e, std::memory_order_seq_cst);
        const std::uint64_t p = loader(src);
        const era_t now = this->clock_.now();
        if (now == e) {
          core::word_pair expected = seen;
          // Fails if answered already.
          (void)me.ctr.cas_wide(o.wf.answer, expected, core::word_pair{p, e});
          break;
        }
        e = now;
        if (!(me.ctr.load_wide(o.wf.answer) == seen)) break;
      }
    }
    // release: our reads of the source happen before a scan that reads these cleared.
    me.wf.help_era.store(no_era, std::memory_order_release);
    me.wf.help_floor.store(no_era, std::memory_order_release);
  }

  // ---- the scan's side

  // f(era) for every era published now, in this order (wfe.hpp): helpers' eras, answers, slots;
  // then returns the lowest helper's floor (no_era: none). Every load is seq_cst (acquire: pairs
  // with clear_slot()'s and help()'s release stores): in S after the scan's fence.
  // The answer words' snapshot reads are counted on `me`, the scanning thread.
  template <class F>
  era_t for_each_reservation(record& me, F f) const {
    const auto& threads = this->threads_;
    using registry = std::remove_cvref_t<decltype(threads)>;
    if constexpr (wait_free) {
      const std::uint64_t ended = requests_ended_.load(std::memory_order_seq_cst);
      if (requests_begun_.load(std::memory_order_seq_cst) != ended) {
        for (const record* o = threads.head(); o; o = registry::next_of(o))
          if (const era_t e = o->wf.help_era.load(std::memory_order_seq_cst); e != no_era) f(e);
        for (const record* o = threads.head(); o; o = registry::next_of(o)) {
          const core::word_pair a = me.ctr.load_wide(o->wf.answer);
          if (a.lo != wfe_record_part::pending && a.lo != wfe_record_part::idle &&
              a.hi != no_era)
            f(a.hi);
        }
      }
    }
    auto in_block = [&](const auto& b) {
      for (const auto& s : b.slots)
        if (const era_t e = s.load(std::memory_order_seq_cst); e != no_era) f(e);
    };
    for (const record* o = threads.head(); o; o = registry::next_of(o)) {
      o->eras.for_each(in_block);
      o->owned.for_each(in_block);
    }
    era_t floor = no_era;
    if constexpr (wait_free) {
      for (const record* o = threads.head(); o; o = registry::next_of(o)) {
        const era_t h = o->wf.help_floor.load(std::memory_order_seq_cst);
        if (h != no_era && (floor == no_era || h < floor)) floor = h;
      }
    }
    return floor;
  }

  // The snapshot, sorted, in memory the record keeps from scan to scan. Throws std::bad_alloc
  // when it must grow and cannot (the scan then reads the reservations for each node instead).
  void take_snapshot(record& r) {
    auto& snap = r.snapshot;
    snap.clear();
    const era_t floor = for_each_reservation(r, [&](era_t e) { snap.push_back(e); });
    if constexpr (wait_free) r.wf.floor_seen = floor;
    std::sort(snap.begin(), snap.end());
  }

  // Whether a published era lies in [birth, retire], or, under wfe, a helper's floor is at most
  // the retire era: from the snapshot, or (covered_now) from the reservations themselves.
  static bool covers(const record& r, era_t birth, era_t retire) noexcept {
    const auto it = std::lower_bound(r.snapshot.begin(), r.snapshot.end(), birth);
    if (it != r.snapshot.end() && *it <= retire) return true;
    if constexpr (wait_free) return floor_covers(r.wf.floor_seen, retire);
    return false;
  }
  bool covered_now(record& r, era_t birth, era_t retire) const noexcept {
    bool covered = false;
    const era_t floor = for_each_reservation(
        r, [&](era_t e) { covered = covered || (birth <= e && e <= retire); });
    return covered || floor_covers(floor, retire);
  }
  static bool floor_covers(era_t floor, era_t retire) noexcept {
    return floor != no_era && floor <= retire;
  }

  // Thread exit: every slot goes (a protection still owning one was leaked: cleared, stays taken).
  static void clear_reservations(record& r) noexcept {
    r.eras.for_each_owned(clear<block>);
    r.owned.for_each_owned(clear<typename decltype(r.owned)::block>);
  }

  // Whether an era the calling thread publishes lies in [birth, retire] (era_domain's barrier).
  static bool own_covers(const record& me, era_t birth, era_t retire) noexcept {
    bool covered = false;
    auto in_block = [&](const auto& b) {
      for (const auto& s : b.slots) {
        const era_t e = s.load(std::memory_order_relaxed);  // our own: program order
        covered = covered || (e != no_era && birth <= e && e <= retire);
      }
    };
    me.eras.for_each(in_block);
    me.owned.for_each(in_block);
    return covered;
  }

  // In a child of fork() (era_domain::forget_thread()): the slots go, and under wfe also what the
  // thread published as a helper, its helping round (a container's destruction would wait for it)
  // and its request, which no helper may read again (the request's source may belong to a
  // container the child destroys: its operation never returns). A request caught between its
  // count and its publication stays counted: helpers then look for requests more often than
  // needed, which costs time, not safety.
  void forget_reservations(record& r) noexcept {
    clear_reservations(r);
    if constexpr (wait_free) {
      using part = wfe_record_part;
      auto& w = r.wf;
      const std::uint64_t h = w.helping.load(std::memory_order_relaxed);
      w.helping.store(h + (h & 1), std::memory_order_relaxed);
      w.help_era.store(no_era, std::memory_order_relaxed);
      w.help_floor.store(no_era, std::memory_order_relaxed);
      const core::word_pair a = r.ctr.load_wide(w.answer);
      if (a.lo != part::idle) {
        r.ctr.store_wide(w.answer, core::word_pair{part::idle, a.hi});
        requests_ended_.fetch_add(1, std::memory_order_relaxed);
      }
    }
  }

  core::atomic<std::size_t> extra_slots_{0};
  // wfe: requests begun and ended (a difference: some request may be pending).
  alignas(core::cache_line) core::atomic<std::uint64_t> requests_begun_{0};
  core::atomic<std::uint64_t> requests_ended_{0};
};

// he's and wfe's part of their guard and owned protection (core/slot_guard.hpp): a slot holds an
// era. Guards take the block of era slots of their nesting level, protections (he::protection,
// what a reclaim::guard_ptr holds) one slot each from the record's pool, given back in any order;
// a region's guard lends its block's slots first. src's loads are seq_cst whatever `order` says
// (at least as strong: the era protocol's order S, he.hpp).
template <class Scheme>
struct he_slot_hooks : core::slot_hooks_base<Scheme, typename Scheme::domain::block,
                                               typename Scheme::domain::slot> {
  using base = typename he_slot_hooks::slot_hooks_base;
  using typename base::domain, typename base::record, typename base::block, typename base::slot;
  template <class G>
  using guard_base = era_guard_base<G>;

  static void end(domain&, record& r, block& b) noexcept {
    domain::clear(b);
    domain::close(r);
  }
  // The era protocol (he_domain::protect()); it retries only while the clock moves, never because
  // src changed.
  template <class P>
  static P protect(domain& d, record& r, slot& s, const core::atomic<P>& src,
                   std::memory_order /*order*/) noexcept {
    return d.protect(r, s, src);
  }
  // A node stamped with its birth era.
  template <class T, class... Args>
  static T* create(domain& d, record& r, Args&&... args) {
    return d.template create_on<T>(r, std::forward<Args>(args)...);
  }

  static slot& take(domain& d, record& r) { return d.take(r); }
  static void give_back(domain&, record& r, slot& s) noexcept { domain::give_back(r, s); }
  static void clear(domain&, record&, slot& s) noexcept { domain::clear_slot(s); }
  // Never throws (era_domain::retire()).
  static void retire(domain& d, record& r, core::retired_hook* node) noexcept {
    d.retire(r, node);
  }
};

}  // namespace reclaim::detail
