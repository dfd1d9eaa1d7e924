// debra: distributed epoch-based reclamation (Brown, PODC 2015).
//
// What it is. A global epoch; each thread announces the epoch it saw at the start of an operation,
// with a quiescent bit that is set between operations. Every k operations a thread checks one other
// thread's announcement; once it has seen every thread quiescent or caught up with the current
// epoch, it tries to advance the epoch. A thread retires into one of three limbo bags and rotates
// bags whenever it sees the epoch change; the bag it rotates into is freed, because it was filled
// three epoch changes ago (see on_new_epoch() for why three and not two).
//
// When to use it. Operations are cheap (one fenced RMW per operation, no per-read cost), so it is a
// good default for any structure whose operations are short. Garbage is NOT bounded: one thread that
// stalls inside an operation stops the epoch, and every thread's bags grow until it resumes.
//
// Needs from a container: only the start and end of each operation (the guard).
// Progress: lock-free operations; reclamation can be blocked by a stalled thread.
// Differences from the paper: none in the algorithm (DEBRA+ neutralization is not included; see
// nbr for a neutralizing scheme). Exited threads' bags are adopted by live threads.
#pragma once
#include <atomic>
#include <cstdint>

#include "../concepts.hpp"
#include "../core/region_guard.hpp"
#include "../core/policy.hpp"
#include "../core/record.hpp"
#include "../free/batch.hpp"

namespace reclaim {

// debra<check_every<K>>: check one other thread every K operations (paper 003 uses 20).
struct debra_check_kind {};
template <unsigned K>
struct check_every {
  static_assert(K > 0);
  using policy_kind = debra_check_kind;
  static constexpr unsigned value = K;
};

template <class... Policies>
struct debra {
  using free_policy = core::find_policy_t<free_policy_kind, batch_free, Policies...>;
  static constexpr unsigned check_interval =
      core::find_policy_t<debra_check_kind, check_every<20>, Policies...>::value;
  static_assert((core::known_kinds<free_policy_kind, debra_check_kind>::template contains<Policies> &&
                 ...),
                "debra takes a free policy and check_every<K>");

  static constexpr std::string_view name = "debra";
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

template <class... Policies>
class debra<Policies...>::domain {
  // An announcement is (epoch << 1) | quiescent.
  static constexpr std::uint64_t quiescent_bit = 1;
  static constexpr unsigned bag_count = 3;

  struct record : core::thread_record<free_policy> {
    explicit record(domain&) {}
    // Read by other threads' checks.
    alignas(core::cache_line) std::atomic<std::uint64_t> announce{quiescent_bit};
    // Owner only.
    alignas(core::cache_line) std::uint64_t seen_epoch = 0;
    core::retired_list bags[bag_count];
    unsigned current_bag = 0;
    unsigned ops_since_check = 0;
    record* check_cursor = nullptr;  // next record to check; nullptr: start a pass at the head
  };

 public:
  domain() = default;
  domain(const domain&) = delete;
  domain& operator=(const domain&) = delete;
  ~domain() {
    threads_.close();
    threads_.for_each([](record& r) {
      r.freeing.drain(r);
      for (auto& bag : r.bags) bag.destroy_all();
    });
  }

  reclaim::stats stats() const { return core::collect_stats(threads_, gauge_); }

 private:
  friend class core::region_guard<domain>;
  friend class core::thread_registry<record, domain>;

  record& begin(record& r) {
    if (!r.enter()) return r;
    // acquire: pairs with the release CAS in try_advance(): everything the threads we checked did
    // before they announced happens before we free a bag on seeing the new epoch.
    std::uint64_t e = epoch_.load(std::memory_order_acquire);
    if (e != r.seen_epoch) [[unlikely]] on_new_epoch(r, e);
    // Full fence (seq_cst RMW): the announcement must be visible before this operation's first
    // read of a shared pointer. With a plain store, x86 may hold it in the store buffer while we read
    // a node, a checker would still see us quiescent, and the epoch could advance past us. Pairs
    // with the seq_cst load in check_one().
    r.announce.exchange(e << 1, std::memory_order_seq_cst);
    r.freeing.on_operation(r);
    if (++r.ops_since_check >= check_interval) [[unlikely]] {
      r.ops_since_check = 0;
      check_one(r, e);
    }
    return r;
  }

  void end(record& r) noexcept {
    if (!r.leave()) return;
    // release: our reads of nodes in this operation happen before a checker that sees us
    // quiescent (acquire in check_one()) lets the epoch advance towards freeing them.
    r.announce.store((r.seen_epoch << 1) | quiescent_bit, std::memory_order_release);
  }

  void retire(record& r, core::retired_hook* node) {
    r.bags[r.current_bag].push(node);
    r.count_retired(gauge_);
  }

  // Why three bags: a node retired while we announced e can still be held by a reader that
  // announced e+1 (it started after the epoch moved, before the node was unlinked), and that reader
  // lets the epoch reach e+2. Only when we have seen three changes (epoch >= e+3) is every such
  // reader gone. Each rotation follows at least one change, so the bag we rotate into, filled three
  // rotations ago, is safe.
  void on_new_epoch(record& r, std::uint64_t e) {
    r.saw_new_epoch(r.bags[0].size() + r.bags[1].size() + r.bags[2].size());
    r.seen_epoch = e;
    r.current_bag = (r.current_bag + 1) % bag_count;
    r.check_cursor = nullptr;
    r.release_safe(std::move(r.bags[r.current_bag]), gauge_);
    adopt_orphans(r);
  }

  // Garbage of exited threads joins our current bag, freed after three more changes. That is safe
  // only if the epoch we saw is no older than the one the garbage was retired in, so re-read it
  // after taking the garbage (acquire in take_all() orders the read after the give()): if it moved
  // on, give the garbage back and take it at our next rotation.
  void adopt_orphans(record& r) {
    if (orphans_.empty()) return;
    core::retired_list adopted = orphans_.take_all();
    if (epoch_.load(std::memory_order_acquire) == r.seen_epoch)
      r.bags[r.current_bag].splice(std::move(adopted));
    else
      orphans_.give(std::move(adopted));
  }

  void check_one(record& r, std::uint64_t e) {
    record* other = r.check_cursor ? r.check_cursor : threads_.head();
    // seq_cst: pairs with the exchange in begin(); acquire part: a quiescent announcement carries
    // the other thread's completed reads (release in end()).
    std::uint64_t a = other->announce.load(std::memory_order_seq_cst);
    if ((a & quiescent_bit) == 0 && (a >> 1) != e) return;  // it still runs in an older epoch
    r.check_cursor = decltype(threads_)::next_of(other);
    if (r.check_cursor == nullptr) try_advance(r, e);
  }

  // Every thread was quiescent or in epoch e when we looked. Threads registered after the pass began
  // read the epoch after their registration, so they announce e or later: skipping them is safe.
  void try_advance(record& r, std::uint64_t e) {
    std::uint64_t expected = e;
    // acq_rel: release publishes what we learned (the others' acquired reads) to whoever sees the
    // new epoch (acquire in begin()); acquire chains the checks of earlier advances.
    if (epoch_.compare_exchange_strong(expected, e + 1, std::memory_order_acq_rel,
                                       std::memory_order_relaxed))
      r.count_epoch_advance(e + 1);
  }

  // Thread exit: the record goes quiescent (even if the thread left inside a guard), its garbage
  // goes to the orphanage and it is left as a new thread should find it.
  void detach(record& r) noexcept {
    r.announce.store((r.seen_epoch << 1) | quiescent_bit, std::memory_order_release);
    r.freeing.drain(r);
    for (auto& bag : r.bags) orphans_.give(std::move(bag));
    r.pending.flush(gauge_);
    // ops_since_check is kept: a run of short-lived threads that reuse this record must still
    // get to check the others, or the epoch would never advance.
    r.seen_epoch = 0;
    r.depth = 0;
    r.current_bag = 0;
    r.check_cursor = nullptr;
  }

  alignas(core::cache_line) std::atomic<std::uint64_t> epoch_{1};
  alignas(core::cache_line) core::thread_registry<record, domain> threads_{*this};
  core::orphanage orphans_;
  core::pending_gauge gauge_;
};

template <class... Policies>
class debra<Policies...>::guard : public core::region_guard<domain> {
 public:
  explicit guard(domain& d = default_domain()) : core::region_guard<domain>(d) {}
};

}  // namespace reclaim
