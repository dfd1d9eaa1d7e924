// ebr: epoch-based reclamation (Fraser, PhD thesis 2004), and the machinery of ner (ner.hpp).
//
// What it is. A global epoch. A thread entering an operation (a critical region) announces the
// global epoch and is active until the operation ends. On region entries it tries to advance the
// epoch: it scans every record, and if every active thread announced the current epoch e, it CASes
// e -> e+1. Each thread has three limbo lists indexed by epoch mod 3; a node goes into the list of
// the epoch its retirer announced, and a list tagged e is freed once the thread sees the epoch at
// e+3 (see begin() for why three and not two). ebr tries to advance on every region entry; ner
// (Hart et al. 2007) is the same scheme trying every K entries (advance_every<K>, default 100).
//
// When to use it. Short operations, read-mostly or not; ner when the pass over all records on every
// entry (O(threads) remote reads) costs more than the garbage it saves. Prefer debra when there are
// many threads: it checks one record per K operations instead of all of them.
// Garbage is NOT bounded: a thread that stalls inside an operation stops the epoch, and every
// thread's lists grow until it resumes. A thread that exits (even inside an operation) blocks
// nothing: its record is idle, and its garbage goes to the orphanage.
//
// Needs from a container: only the start and end of each operation (the guard).
// Progress: lock-free operations; reclamation can be blocked by a stalled thread.
// Differences from the papers: Fraser's threads announce with a plain store after reading the
// epoch; ours re-read the epoch after announcing (one load) until the two agree, which makes the
// three-list argument hold in the C++ memory model (begin()). Limbo lists carry their epoch as a tag, so a
// thread that missed epochs frees all lists that are old enough at once. Exited threads' lists are
// adopted by live threads; the free policy is a parameter.
#pragma once
#include <atomic>
#include <cstdint>
#include <string_view>

#include "../concepts.hpp"
#include "../core/region_guard.hpp"
#include "../core/policy.hpp"
#include "../core/record.hpp"
#include "../free/batch.hpp"
#include "detail/epoch_bags.hpp"

namespace reclaim {

// Flavour: the name and the default advance interval. ebr and ner are the same template.
template <class Flavour, class... Policies>
struct basic_ebr {
  using free_policy = core::find_policy_t<free_policy_kind, batch_free, Policies...>;
  static constexpr unsigned advance_interval =
      core::find_policy_t<epoch_advance_kind, typename Flavour::default_interval,
                          Policies...>::value;
  static_assert(
      (core::known_kinds<free_policy_kind, epoch_advance_kind>::template contains<Policies> && ...),
      "ebr/ner take a free policy and advance_every<K>");

  static constexpr std::string_view name = Flavour::name;
  static constexpr reclaim::family family = reclaim::family::epoch;
  static constexpr bool bounds_garbage = false;
  static constexpr unsigned needs = needs_nothing;

  using node_base = core::retired_hook;
  class domain;
  class guard;
  static domain& default_domain() {
    static domain d;
    return d;
  }
};

namespace detail {
struct ebr_flavour {
  static constexpr std::string_view name = "ebr";
  using default_interval = advance_every<1>;  // Fraser: every region entry
};
}  // namespace detail

// ebr<advance_every<K>, FreePolicy>: try to advance on every entry by default.
template <class... Policies>
using ebr = basic_ebr<detail::ebr_flavour, Policies...>;

template <class Flavour, class... Policies>
class basic_ebr<Flavour, Policies...>::domain {
  // The announcement of a thread outside any operation. The epoch starts at 1 and only grows, so no
  // valid announcement is 0.
  static constexpr std::uint64_t idle = 0;

  struct record : core::thread_record<free_policy> {
    explicit record(domain&) {}
    // Read by other threads' advance attempts.
    alignas(core::cache_line) std::atomic<std::uint64_t> announce{idle};
    // Owner only.
    alignas(core::cache_line) std::uint64_t local_epoch = 0;  // announced by the current operation
    detail::epoch_bags bags;
    unsigned entries_since_attempt = 0;
  };

 public:
  domain() = default;
  domain(const domain&) = delete;
  domain& operator=(const domain&) = delete;
  ~domain() {
    threads_.close();
    threads_.for_each([](record& r) {
      r.freeing.drain(r);
      r.bags.destroy_all();
    });
  }

  reclaim::stats stats() const { return core::collect_stats(threads_, gauge_); }

 private:
  friend class core::region_guard<domain>;
  friend class core::thread_registry<record, domain>;

  // Why a list tagged e is safe at e+3 and not e+2. Let X retire node n while announcing e, and R
  // be a thread still holding n.
  //  (1) R announced at most e+1: if R had read e+2 or later, the epoch had passed e+1, so some
  //      scan saw X idle or in a later operation (X's release store in end(), that scan's acquire),
  //      after the unlink of n; the advancing CAS and R's load of the epoch carry that to R, whose
  //      reads then cannot reach n.
  //  (2) While R is active with announcement a, the epoch stays <= a+1: R re-read the epoch after
  //      its seq_cst exchange and found a, so every CAS to a+1 or beyond follows that load in the
  //      single order S, and so does every scan that could allow a+2; such a scan reads R's
  //      announcement (seq_cst load after the exchange in S) and stops at a != a+1.
  // Hence while R may hold n the epoch is <= e+2; a list tagged e is freed at e+3. Without the
  // re-read, R could announce a stale a while scans that missed its exchange move the epoch on.
  record& begin(record& r) {
    if (!r.enter()) return r;
    // seq_cst (both loads and the exchange): the argument (2) above is about the order S; the
    // loads pair with the seq_cst CAS in try_advance(), the exchange with the seq_cst load in
    // can_advance(). Acquire part of the load: what the advancer learned from its scan (that
    // retirers of old lists left their operations) happens before we free those lists.
    std::uint64_t e = epoch_.load(std::memory_order_seq_cst);
    for (;;) {
      // Full fence (seq_cst RMW): the announcement is visible before this operation's first read
      // of a shared pointer; a plain store could sit in x86's store buffer while we read a node.
      r.announce.exchange(e, std::memory_order_seq_cst);
      std::uint64_t now = epoch_.load(std::memory_order_seq_cst);
      if (now == e) [[likely]] break;
      e = now;
    }
    if (e != r.local_epoch) [[unlikely]] on_new_epoch(r, e);
    r.freeing.on_operation(r);
    if (++r.entries_since_attempt >= advance_interval) [[unlikely]] {
      r.entries_since_attempt = 0;
      try_advance(r, e);
    }
    return r;
  }

  void end(record& r) noexcept {
    if (!r.leave()) return;
    // release: our reads of nodes in this operation happen before a scan that sees us idle
    // (seq_cst load in can_advance()) lets the epoch move on towards freeing them.
    r.announce.store(idle, std::memory_order_release);
  }

  void retire(record& r, core::retired_hook* node) {
    r.bags.push(node, r.local_epoch, r, gauge_);
    r.count_retired(gauge_);
  }

  // Seen at entry: free every list three or more epochs old, then look at the orphans.
  void on_new_epoch(record& r, std::uint64_t e) {
    r.saw_new_epoch(r.bags.size());
    r.local_epoch = e;
    r.bags.collect(e, r, gauge_);
    adopt_orphans(r);
  }

  // Garbage of exited threads joins our list tagged with our announcement e. Every orphan was
  // tagged with an announcement of its thread, at most an epoch value that thread read before its
  // give() (release); take_all() acquires it, so our load below reads that value or a later one.
  // If the load still finds e, every orphan's tag is <= e and re-tagging it e only delays it.
  // If the epoch moved on, give the garbage back and take it at our next new epoch.
  void adopt_orphans(record& r) {
    if (orphans_.empty()) return;
    core::retired_list adopted = orphans_.take_all();
    if (epoch_.load(std::memory_order_acquire) == r.local_epoch)
      r.bags.splice(std::move(adopted), r.local_epoch, r, gauge_);
    else
      orphans_.give(std::move(adopted));
  }

  // Every active thread announced e: a full pass over the records.
  bool can_advance(std::uint64_t e) const noexcept {
    for (const record* other = threads_.head(); other; other = decltype(threads_)::next_of(other)) {
      // seq_cst: pairs with the exchange in begin() (argument (2)); acquire part: an idle
      // announcement carries the other thread's completed reads (release in end(), detach()).
      std::uint64_t a = other->announce.load(std::memory_order_seq_cst);
      if (a != idle && a != e) return false;
    }
    return true;
  }

  // Slow path, out of line: one pass and a CAS. Records registered during the pass read the epoch
  // after registering, so they announce e or later; missing them is safe.
  [[gnu::noinline]] void try_advance(record& r, std::uint64_t e) {
    if (!can_advance(e)) return;
    std::uint64_t expected = e;
    // seq_cst: in the order S of argument (2), and a release for whoever reads the new epoch
    // (the loads in begin()): what this scan saw (retirers gone) happens before their frees.
    if (epoch_.compare_exchange_strong(expected, e + 1, std::memory_order_seq_cst,
                                       std::memory_order_relaxed))
      r.count_epoch_advance(e + 1);
  }

  // Thread exit: the record goes idle (even if the thread left inside a guard), its garbage goes to
  // the orphanage, and it is left as a new thread should find it.
  void detach(record& r) noexcept {
    // release: pairs with the seq_cst load in can_advance(), as in end().
    r.announce.store(idle, std::memory_order_release);
    r.freeing.drain(r);
    r.bags.give_all(orphans_);
    r.pending.flush(gauge_);
    // entries_since_attempt is kept: short-lived threads that reuse this record still get to
    // advance the epoch.
    r.local_epoch = 0;
    r.depth = 0;
  }

  alignas(core::cache_line) std::atomic<std::uint64_t> epoch_{1};
  alignas(core::cache_line) core::thread_registry<record, domain> threads_{*this};
  core::orphanage orphans_;
  core::pending_gauge gauge_;
};

template <class Flavour, class... Policies>
class basic_ebr<Flavour, Policies...>::guard : public core::region_guard<domain> {
 public:
  explicit guard(domain& d = default_domain()) : core::region_guard<domain>(d) {}
};

}  // namespace reclaim
