// SPDX-License-Identifier: MIT
// epoch_pop: EpochPOP (Singh and Brown, PPoPP 2025): epochs while they advance, hazard pointers
// published on ping when a stalled thread holds the epoch.
//
// What it is. hp (hp.hpp) with Publish-on-Ping's fence (hazard_pop.hpp, core/ping.hpp) and the
// epochs_first keeper (below: hp's extension point for what a record keeps its garbage in). Every
// operation announces the global epoch as debra does, and every read is protected as under
// hazard_pop (a release store into a slot, a compiler barrier, a re-read), so that either mechanism
// alone can prove a node safe. A thread keeps its garbage in three bags tagged with the epoch it
// was retired in. When it holds R/4 nodes (R = 100 + 2H, hp's threshold) it tries to advance the
// epoch (a pass over every record's announcement) and frees the bags three epochs old, trying again
// every R/16 retires; only when its garbage reaches R, which happens when some thread stays inside
// an operation of an old epoch, does it scan as hazard_pop does: it pings every thread, and frees
// every node no hazard protects, whatever its tag.
//
// Why a node tagged e is safe at e + 3 (the epoch engine's argument, detail/epoch_engine.hpp, whose
// announcement this is): an operation re-reads the epoch after announcing it until the two agree,
// so a pass that missed the announcement precedes it in the single order S, and while the operation
// runs the epoch stays at most its announcement + 1; a reader that holds a node tagged e announced
// at most e + 1, so the epoch reaches e + 3 only after it left. Protections outside a guard
// (guard_ptr) hold the thread inside an operation as long as they protect something, so the epoch
// cannot pass them either. Why a scan is safe: hazard_pop's argument, which needs no epoch; the
// nodes a scan keeps are tagged again with the epoch read after it, no older than any tag they had.
// The memory-model argument of each part is at its place (detail/epoch_engine.hpp: announce(),
// all_allow(), move_on(); scan() below; core/ping.hpp): the announcement's seq_cst exchange orders
// the reader's announcement store before its first read of the structure, and the pass's seq_cst
// loads the retirer's unlinks before its reads of the announcements; the ping orders the reader's
// slot store before the scanner's slot load, or the scanner's unlink store before the reader's
// re-read load.
//
// When to use it. Where hp would do and operations are short: a read costs what it costs under
// hazard_pop (no fence), an operation adds one RMW (the announcement), and while no thread stalls
// no signal is sent at all. Garbage is bounded as under hp (R + H per thread with batch_free),
// whatever other threads do: a stalled thread makes the epoch stop, and then the pings free
// everything it does not protect. The price against hazard_pop: the RMW per operation; against
// debra: the release store per read, and signals while a thread stalls.
//
// Hardware and OS assumptions, and what it takes: hazard_pop's (signals, rt_signal<K> default
// K = 5). Needs from a container: hp's (validated reads).
//
// Differences from the paper. The epoch part is the epoch engine's protocol (debra's: announce and
// re-read, tags +3); the fallback threshold is hp's R, and epoch advances are tried every R/16
// retires once the garbage passes R/4, instead of the paper's fixed thresholds; an exiting thread
// scans (it may ping) and hands the rest over with its tags.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "detail/epoch_engine.hpp"
#include "hazard_pop.hpp"

namespace reclaim {

namespace detail {
// epoch_pop's part of a record: the engine's announcement and tagged bags, and the pacing of its
// attempts on the epoch.
struct epoch_pop_part : epoch_state {
  static constexpr unsigned orphan_batches = epoch_bags::count;  // each bag with its tag
  std::size_t next_attempt = 0;  // bags.size() at which the next retire tries the epoch
  // An attempt that finds the epoch unchanged since this one: it is stuck.
  std::uint64_t epoch_at_last_attempt = 0;

  void destroy_all() noexcept { bags.destroy_all(); }
};
}  // namespace detail

// epoch_pop's keeper (hp.hpp's extension point): the outermost guard announces the epoch, garbage
// waits in bags tagged with it and is freed by the epoch while it advances, and by a scan only
// when it does not. Only with Publish-on-Ping's fence, whose scans it falls back to.
struct epochs_first {
  using policy_kind = hp_keeper_kind;
  static constexpr std::string_view name = "epoch_pop";
  template <class Fence>
  static constexpr bool fits = Fence::scheme_name == "hazard_pop";
  using part = detail::epoch_pop_part;
  using shared = detail::epoch_clock;

  // The record becomes active: its announcement's exchange is the full fence hp needs here.
  template <class Domain, class Record>
  static void activate(Domain& d, Record& r) noexcept {
    std::uint64_t was;  // nothing lends the announcement: barriers borrow through hp's claim
    const std::uint64_t e = d.shared_.announce(r.kept.announce, was);
    // The exchange is the full fence hp's protection needs before its re-reads: it orders the
    // activity store before them (a compiler barrier on x86-64, whose xchg is one).
    core::fence_after_rmw();
    if (e != r.kept.seen_epoch) [[unlikely]] on_new_epoch(d, r, e);
  }
  template <class Record>
  static void deactivate(Record& r) noexcept {
    // release: our reads of nodes in this operation happen before a pass that sees us idle
    // (epoch_clock::all_allow()) lets the epoch advance towards freeing them.
    r.kept.announce.store(detail::epoch_state::idle, std::memory_order_release);
  }

  // Into the bag of the epoch this operation announced; once the bags hold the size of the next
  // attempt, the epoch is tried first, and a scan only where it does not advance.
  template <class Domain, class Record>
  static void retire(Domain& d, Record& r, core::retired_hook* node) {
    r.kept.bags.push_open(node);  // tagged with the epoch our operation announced (or later)
    if (r.kept.bags.size() >= r.kept.next_attempt) [[unlikely]] reclaim_epoch_first(d, r);
  }
  // In an operation of its own: its tag is the epoch announced.
  template <class Domain, class Record>
  static void retire_outside_guard(Domain& d, Record& r, core::retired_hook* node) {
    (void)d.enter(r);
    d.retire(r, node);
    Domain::close(r);
  }

  // The fallback: over the orphans and every bag, what no hazard holds goes to safe, and the rest
  // goes back into a bag tagged with the current epoch.
  template <class Domain, class Record>
  static void scan(Domain& d, Record& r, core::retired_list& safe) {
    core::retired_list all = d.adopt_orphans();
    r.kept.bags.take_all(all);
    d.take_unprotected(r, all, safe);
    // The kept nodes get a tag no older than any of theirs: every tag was at most the epoch when
    // its node was retired, and the epoch only grows.
    const std::uint64_t e = d.shared_.now();
    while (core::retired_hook* node = all.pop()) r.kept.bags.push(node, e, r, d.gauge_);
  }

  // A barrier takes every bag; an exiting thread hands its bags to the domain's orphans, with their
  // tags; a forgotten thread is made idle; what a barrier leaves is as old as the current epoch.
  template <class Record>
  static void take_all(Record& r, core::retired_list& into) noexcept {
    r.kept.bags.take_all(into);
  }
  template <class Domain, class Record>
  static void hand_over(Domain& d, Record& r) noexcept {
    r.kept.bags.hand_over([&](core::retired_list&& bag, std::uint64_t tag) {
      d.orphan(r, std::move(bag), tag);
    });
  }
  template <class Record>
  static void forget(Record& r) noexcept {
    r.kept.announce.store(detail::epoch_state::idle, std::memory_order_relaxed);
  }
  template <class Domain>
  static std::uint64_t stamp(const Domain& d) noexcept {
    return d.shared_.now();
  }

 private:
  // Frees every bag three epochs old, and the orphans by the same rule; retires from here on are
  // tagged e, those of the deleters run here included (e's bag is opened first: debra's reason).
  template <class Domain, class Record>
  [[gnu::noinline]] static void on_new_epoch(Domain& d, Record& r, std::uint64_t e) {
    typename Domain::holding garbage(r);
    r.saw_new_epoch(r.kept.bags.size());
    r.kept.seen_epoch = e;
    r.kept.bags.open(e, r, d.gauge_);
    r.kept.bags.collect(e, r, d.gauge_);
    d.free_safe_orphans(r, [e](std::uint64_t tag) { return detail::epoch_bags::safe(tag, e); });
  }

  // The garbage reached the next attempt: try to advance the epoch (a pass over every record) and
  // free what that makes safe. Scan instead only when we hold R and the epoch is stuck (it has not
  // moved since our last attempt, this one included: a thread stalls inside an operation of an old
  // epoch), or when we hold 2R whatever the epoch does. So while no thread stalls no scan runs and
  // no signal is sent, and the garbage stays below 2R + H per thread in any case (R + R/16 + H
  // while a thread stalls). Attempts begin at R/4 and come every R/16 retires (one falls on R): a
  // node is freed three epochs after its retire, so the epoch must move several times per R
  // retires for the garbage to stay below R without scans.
  template <class Domain, class Record>
  [[gnu::noinline]] static void reclaim_epoch_first(Domain& d, Record& r) {
    const std::size_t threshold = d.scan_threshold();
    if (r.kept.bags.size() < 2 * threshold) {
      const std::uint64_t e = d.shared_.now();
      if (detail::epoch_clock::all_allow(d.threads_, e, state_of<Record>)) d.shared_.move_on(r, e);
      // A later tag for later retires is only safer.
      const std::uint64_t now = d.shared_.now();
      if (now != r.kept.seen_epoch) on_new_epoch(d, r, now);
    }
    // relaxed: only compared with our own last reading, to see whether the epoch moved.
    const std::uint64_t now = d.shared_.now(std::memory_order_relaxed);
    const bool stuck = now == std::exchange(r.kept.epoch_at_last_attempt, now);
    const std::size_t held = r.kept.bags.size();
    if (held >= 2 * threshold || (stuck && held >= threshold)) d.scan(r);
    const std::size_t left = r.kept.bags.size(), step = std::max<std::size_t>(1, threshold / 16);
    std::size_t next = std::max(threshold / 4, left + step);
    if (left < threshold) next = std::min(next, threshold);
    r.kept.next_attempt = std::min(next, 2 * threshold);
  }

  template <class Record>
  static const detail::epoch_state& state_of(const Record& r) noexcept {
    return r.kept;
  }
};

template <class... Policies>
using epoch_pop = hp<fence_policy<core::ping_fence<pop_signal_t<Policies...>>>,
                     epochs_first, Policies...>;

}  // namespace reclaim
