// SPDX-License-Identifier: MIT
// stamp_it: Stamp-it (Pöter and Träff, "Stamp-it: A more Thread-efficient, Concurrent Memory
// Reclamation Scheme in the C++ Memory Model", 2021).
//
// What it is. An epoch-like scheme without a global epoch and without scans of other threads.
// A thread entering a critical region (an operation, or a region_guard spanning many) enters the
// Stamp Pool (schemes/detail/stamp_pool.hpp), a lock-free doubly-linked list of the threads in a
// region in the order they entered, and takes a stamp from its head; leaving, it removes itself.
// A retired node is stamped with the head's stamp (the next one to be handed out) and appended to
// its thread's retire list, which is therefore ordered by stamp. The tail of the pool holds the
// lowest stamp of the threads still inside; a node whose stamp is at most that has no reader
// left. So on leaving a region a thread frees the front of its list up to the tail stamp: O(1)
// when nothing is ready, O(1) per node freed, never a look at other threads' announcements.
// Lists the owner cannot free yet go, when longer than 20 nodes, to the global retire list (the
// domain's orphanage, a list of such lists, each oldest first), and the thread whose removal
// reported it as the oldest of the pool ("the last one", section 4.3) frees from there what the
// tail stamp allows. Exiting threads hand their list over the same way.
//
// Staying in the pool. Entering and leaving the pool costs a few CASes on shared lines; paper 003
// spreads them over regions of 100 operations, but a user of a map calls one operation at a
// time. So a thread that ends its outermost region stays in the pool, parked: a plain store to
// its block's residence word (a line only it and evictors touch), and its next region resumes
// the same stamp with one uncontended CAS on that word. It leaves for real once it has ended 32
// regions or retired 16 nodes since it entered (so its own nodes get freed and the tail stamp
// moves on), and any thread may take a parked block out of the pool on its behalf (eviction, a
// CAS from parked to evicting on the residence word, then the removal): a thread that leaves
// while garbage waits for the tail stamp (a batch of its own, or a list handed over) takes out the
// parked thread holding it, and flush(), barrier() and synchronize() take out every one they
// meet. A parked thread holds nothing: it is outside every region, and the removal publishes its
// regions as its own would (the evictor's CAS acquires the release store that parked it). A
// resumed stamp is as good as a fresh one: the full fence after its fetch_add comes before every
// read of the new region, which is all the argument below needs; a thread that finds itself taken
// out waits for the evictor's removal to finish and pushes again, with a new stamp and fence
// (models_stamp_it.cpp, parked_model).
//
// When to use it. Like ner or debra, where operations are short; a region_guard spanning many
// still saves the resume CAS. Its reclamation cost per node does not grow with the number of
// threads, and it frees promptly: a node waits only for the threads that were in the pool when
// it was retired (a parked one until it leaves or is taken out), and the last of them frees it.
// Garbage is NOT bounded: a thread stalled inside a region keeps the tail stamp at its own, and
// nothing retired since can be freed (paper: "lock-less but reclamation-blocking").
//
// Needs from a container: only the start and end of each operation (the guard); nodes derive
// from stamp_it<>::node_base (the retire link and the stamp).
// Progress: entering and leaving are lock-free (section 3.3 of the paper), except that a thread
// whose parked block another thread is taking out waits for that one removal to finish; retire
// is wait-free.
// Out of memory: entering a region and retiring never throw once the thread is registered (its
// first use of the domain may throw std::bad_alloc, before a node is taken), and exit allocates
// nothing. A hand-over to the global list spends one of two headers the record keeps and takes a
// new one at the next region's entry; when that allocation fails, hand-overs wait (the list
// stays its owner's, freed as the tail stamp allows) and the header the exit needs stays at hand.
//
// Why "stamp <= tail stamp" is safe. X unlinks n, then, after a full fence, reads head's stamp h
// and stamps n with it. Let R hold n, inside a region whose push took stamp s with a fetch_add on
// head's stamp followed by a full fence. Store-buffering between the two fences: either X's read
// saw R's fetch_add, so h > s, or R's reads after its fence see the unlink, and R cannot hold n.
// So s < h, and the tail stamp reaches h only once R has left (the pool's invariant: no block in
// it, now or later, has a stamp below the tail stamp), and R's region happens before the frees
// that read it (the release and acquire chain of the removal, stamp_pool.hpp).
//
// Differences from the paper. The paper's retire reads head's stamp with a plain load; the
// fences make the argument hold in the C++ memory model (x86: a locked instruction each, at
// retire and at region entry). Version tags use 27 bits, every bit a link does not need
// (stamp_pool.hpp: why ABA is then out of reach). A list is handed over with the stamp of its
// oldest node, and the last thread frees each handed-over list up to the tail stamp and gives
// the rest back; if the tail stamp moved while it held them (another thread became the last one
// and found the list empty), it goes again, as the paper describes. A thread also enters and
// leaves once more when it exits, so that whichever thread leaves last frees what every exited
// thread handed over: at the end of a run nothing is left (paper, Figure 6). A thread looks at
// its own list when it leaves a region only once free_batch nodes are there (one free batch, one
// timer; paper: after every region). The free policy is a parameter for a thread's own nodes;
// the global list's are freed at once (reclaim_global()). A barrier borrows records through a
// claim word as hp does.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <new>
#include <string_view>
#include <utility>

#include "../concepts.hpp"
#include "../core/domain.hpp"
#include "../core/policy.hpp"
#include "../core/region_guard.hpp"
#include "../free/batch.hpp"
#include "../policies.hpp"
#include "detail/stamp_pool.hpp"
#include "../core/sync.hpp"

namespace reclaim {

template <class... Policies>
struct stamp_it : core::scheme_base<stamp_it<Policies...>> {
  // Its one policy, the free policy, as given in Policies... or batch_free.
  using free_policy = core::find_policy_t<free_policy_kind, batch_free, Policies...>;
  static_assert((core::known_kinds<free_policy_kind>::template contains<Policies> && ...),
                "stamp_it takes a free policy");

  // What it is (concepts.hpp): an epoch scheme (stamps), whose garbage is unbounded, and which
  // needs nothing of a container.
  static constexpr std::string_view name = "stamp_it";
  static constexpr reclaim::family family = reclaim::family::epoch;
  static constexpr bool bounds_garbage = false;
  static constexpr unsigned needs = needs_nothing;

  // A list longer than this after its owner freed what it could goes to the global retire list
  // (the paper's empirical static threshold).
  static constexpr std::size_t handover_threshold = 20;
  // A thread looks at its own list when it leaves a region once this many nodes are there, and
  // inside a long region once twice as many are.
  static constexpr std::size_t free_batch = 16;
  // A thread stays in the pool between its regions (parked) until it has ended this many regions,
  // or retired free_batch nodes, since it entered: then it leaves, as the end of a region did in
  // the paper ("Staying in the pool" at the top of this file).
  static constexpr unsigned regions_per_stay = 32;

  // The retire link plus the stamp of the retire.
  struct node_base : core::retired_hook {
    detail::stamp_t retire_stamp = 0;
  };
  class domain;
  class guard;
  // What a reclaim::guard_ptr holds: a share in the thread's region (core/region_guard.hpp).
  using protection = core::region_hold<domain>;
};

namespace detail {
template <class FreePolicy>
struct stamp_it_record : core::thread_record<FreePolicy> {
  // Headers kept at hand: one for the list handed over when the thread exits, one for a hand-over
  // when it leaves a region (replenished when it enters the next).
  static constexpr unsigned orphan_batches = 2;

  // The thread's entry in the stamp pool: read and changed by every thread that walks past it.
  stamp_block block;
  // Held around each retire and each reclamation (core::garbage_claim): a barrier borrows the
  // lists while it is free.
  alignas(core::cache_line) core::garbage_claim claim;
  // Owner only (or a barrier that borrowed the record).
  alignas(core::cache_line) core::retired_list stamped;  // oldest first
  bool spent_header = false;                             // a hand-over used a header
  bool parked = false;           // block is in the pool between regions (stamp_pool::park())
  unsigned stay_regions = 0;     // regions ended since the block entered the pool
  std::size_t stay_retires = 0;  // nodes retired since then
  // The block this thread is taking out of the pool on its owner's behalf, if any (for fork()).
  stamp_block* taking = nullptr;

  void destroy_garbage() noexcept { stamped.destroy_all(); }
};
}  // namespace detail

// One stamp_it instance's shared state: the pool of region stamps, the global retire list, the
// thread records with their retired lists, and the garbage (core/domain.hpp). default_domain()
// is the one containers use unless given another.
template <class... Policies>
class stamp_it<Policies...>::domain
    : public core::domain_base<domain, detail::stamp_it_record<free_policy>> {
  using record = detail::stamp_it_record<free_policy>;
  using base = core::domain_base<domain, record>;
  using claim = core::garbage_claim;
  using holding = claim::scope<record>;
  using stamp_t = detail::stamp_t;

 public:
  // Its scheme's guard, and it offers synchronize() and barrier() (concepts.hpp's grace_periods).
  using guard_type = stamp_it::guard;
  static constexpr bool grace_periods = true;
  using base::retire;  // domain.retire(node[, deleter]) from any thread

  ~domain() { this->shutdown(); }

 private:
  friend class core::region_hold<domain>;
  friend base;

  static stamp_t stamp_of(const core::retired_hook* node) noexcept {
    return static_cast<const node_base*>(node)->retire_stamp;
  }

  record& begin(record& r) noexcept {
    if (r.spent_header) [[unlikely]] replenish_header(r);
    if (r.enter() != 0) return r;
    // Parked, our stamp (and the fence after it) still covers this region, unless another thread
    // took the block out; then a new stamp, with the fence after its fetch_add (the argument at
    // the top: retire() and synchronize() rely on it).
    if (!std::exchange(r.parked, false) || !pool_.resume(r.block)) {
      pool_.push(r.block);
      r.stay_regions = 0;
      r.stay_retires = 0;
    }
    claim::free_policy_step(r);
    return r;
  }

  // Leaving the outermost region: we stay in the pool (parked, a plain store to our block's
  // residence line) until the stay is long enough to leave it.
  void end(record& r) noexcept {
    if (!r.leave()) return;
    if (++r.stay_regions < regions_per_stay && r.stay_retires < free_batch) {
      pool_.park(r.block);
      r.parked = true;
      return;
    }
    leave_pool(r, 4);
  }

  void retire(record& r, core::retired_hook* node) noexcept {
    // Full fence: pairs with the one at the end of push() (the argument at the top). The node
    // was unlinked before; a seq_cst load alone would not be ordered after the unlink.
    if (!RECLAIM_MUTATED(stamp_retire_without_fence))
      core::thread_fence(std::memory_order_seq_cst);
    static_cast<node_base*>(node)->retire_stamp = pool_.head_stamp();
    holding garbage(r);
    ++r.stay_retires;
    r.stamped.push_back(node);
    r.count_retired(this->gauge_);
    if (r.stamped.size() >= 2 * free_batch) [[unlikely]] reclaim_own(r, false);
  }

  // Leaving the pool at the end of a stay (r outside every region, its block in the pool and not
  // parked): free what the tail stamp allows (ours, and as the last one the global list's); while
  // garbage waits for the tail stamp (held_back()), take out up to `evictions` parked threads that
  // hold it; hand a long remainder over.
  [[gnu::noinline]] void leave_pool(record& r, unsigned evictions) noexcept {
    holding garbage(r);
    if (pool_.remove(r.block)) {
      r.count_epoch_advance(pool_.tail_stamp());
      reclaim_own(r, true);
      reclaim_global(r);
      return;
    }
    reclaim_own(r, false);
    while (evictions-- != 0 && held_back(r) && evict_parked(r)) reclaim_own(r, false);
    hand_over_if_long(r);
  }

  // Whether garbage waits for the tail stamp to rise: a batch of ours, or a list handed over (a
  // parked thread may hold it for ever: its owner may never run again).
  bool held_back(const record& r) const noexcept {
    return (r.stamped.size() >= free_batch && stamp_of(r.stamped.head()) > pool_.tail_stamp()) ||
           !this->orphans_.empty();
  }

  // Takes the oldest block out of the pool if its thread is parked: true if it did. If that was
  // the last one, we are: the global list is ours to free.
  bool evict_parked(record& r) noexcept {
    bool was_last = false;
    if (!pool_.evict_oldest(was_last, r.taking)) return false;
    if (was_last) {
      r.count_epoch_advance(pool_.tail_stamp());
      reclaim_global(r);
    }
    return true;
  }

  // Outside every region: ends our stay if we are parked, takes out the parked threads that hold
  // the tail stamp back (up to `evictions`), then an empty region of a fresh stamp (which frees
  // our ready nodes and, if we are the last one, raises the tail stamp past everything retired
  // before and frees the global list's): what a flush, a barrier and synchronize() need.
  void pass_through(record& r, unsigned evictions = 64) noexcept {
    if (r.parked) empty_region(r);
    {
      holding garbage(r);
      while (evictions-- != 0 && evict_parked(r)) {
      }
    }
    empty_region(r);
  }
  // A region that ends the stay at once (begin(), then leave_pool() rather than parking).
  void empty_region(record& r) noexcept {
    begin(r);
    r.leave();
    leave_pool(r, 0);
  }

  // Frees the front of our list up to the tail stamp, once free_batch nodes are there (or
  // always, with `all`): the list is ordered, so this touches only what it frees.
  void reclaim_own(record& r, bool all) noexcept {
    if (r.stamped.empty() || (!all && r.stamped.size() < free_batch)) return;
    const stamp_t tail =
        pool_.tail_stamp() + (RECLAIM_MUTATED(stamp_free_one_step_early) ? detail::stamp_step : 0);
    if (stamp_of(r.stamped.head()) > tail) return;
    core::retired_list safe;
    {
      core::scan_timer timer(r.ctr);
      while (!r.stamped.empty() && stamp_of(r.stamped.head()) <= tail)
        safe.push_back(r.stamped.pop());
    }
    r.freeing.release(std::move(safe), r);
  }

  // A hand-over spent one of our two headers: a new one, if memory can be had. If not, the next
  // hand-over waits (our list stays ours, freed as the tail stamp allows), and the header our
  // exit needs stays at hand either way, so neither a region's entry nor a retire ever fails.
  [[gnu::noinline]] static void replenish_header(record& r) noexcept {
    try {
      r.headers.reserve(record::orphan_batches);
      r.spent_header = false;
    } catch (const std::bad_alloc&) {
    }
  }

  // Not the last one, and our list is long: the last one frees it (the global retire list), if
  // we have a header to spare for it.
  void hand_over_if_long(record& r) noexcept {
    if (r.spent_header || r.stamped.size() <= handover_threshold) return;
    const stamp_t oldest = stamp_of(r.stamped.head());
    this->orphan(r, std::move(r.stamped), oldest);
    r.spent_header = true;
  }

  // The last one: frees, from every list handed over (each oldest first, its batch stamp the
  // stamp of its oldest node), the front up to the tail stamp, and gives the rest back. O(nodes
  // freed + lists). If the tail stamp moved while we held the lists and one we gave back is now
  // old enough, we go again: a thread that became the last one meanwhile found them gone.
  void reclaim_global(record& r) noexcept {
    core::retired_list safe;
    {
      core::scan_timer timer(r.ctr);
      core::counters::add(r.ctr.scans, 1);
      // Full fence: pairs with the one after give_back() below (of another last thread): of two
      // threads that become the last one while the other holds the lists, at least one sees the
      // other's tail stamp or returned lists (store-buffering). A seq_cst load alone would not
      // order our earlier tail CAS (in remove()) before the take.
      core::thread_fence(std::memory_order_seq_cst);
      for (;;) {
        const stamp_t tail = pool_.tail_stamp();
        core::orphan_batch* b = this->orphans_.take_batches();
        if (!b) break;
        core::orphan_batch *kept = nullptr, *kept_last = nullptr;
        stamp_t oldest_kept = std::numeric_limits<stamp_t>::max();
        while (b) {
          core::orphan_batch* next = b->next;
          if (b->stamp <= tail) {
            while (!b->garbage.empty() && stamp_of(b->garbage.head()) <= tail)
              safe.push_back(b->garbage.pop());
          }
          if (b->garbage.empty()) {
            delete b;
          } else {
            b->stamp = stamp_of(b->garbage.head());
            oldest_kept = std::min(oldest_kept, b->stamp);
            b->next = kept;
            kept = b;
            if (!kept_last) kept_last = b;
          }
          b = next;
        }
        this->orphans_.give_back(kept, kept_last);
        if (!kept) break;
        // Full fence: see above.
        core::thread_fence(std::memory_order_seq_cst);
        if (oldest_kept > pool_.tail_stamp()) break;
      }
    }
    // Freed at once, whatever the free policy: the last one may go idle right after, and an
    // amortized policy would keep other threads' garbage on its freeable list with no operation
    // to free it.
    batch_free::local{}.release(std::move(safe), r);
  }

  // synchronize(): as a retire, a stamp read after a full fence (the caller's unlink comes
  // before it), then waits until the tail stamp reaches it, taking parked threads out. A region's
  // depth is no sign (core::domain_base::wait_for_open_guards): resuming a parked stay has no
  // fence between the depth store and the region's reads.
  bool wait_for_grace_period(record& me, core::deadline d) {
    core::thread_fence(std::memory_order_seq_cst);
    const stamp_t h = pool_.head_stamp();
    core::waiter w(d);
    for (;;) {
      pass_through(me);
      if (pool_.tail_stamp() >= h) return true;
      if (!w.wait()) return false;
    }
  }

  static void take_garbage(record& r, typename base::gathered& into) noexcept {
    into.unsafe.splice(std::move(r.stamped));
    into.safe.splice(r.freeing.take());
  }

  // Our garbage, every other record's (borrowed between its retires and reclamations) and the
  // orphans: every stamp is at most h, head's stamp read after, so all of it is safe once the
  // tail stamp reaches h. While it has not, an empty region of our own raises it if no older
  // thread is inside.
  bool barrier_locked(record& me, core::deadline d) {
    typename base::gathered g;
    bool done = this->gather(me, g, d, [](record& r, typename base::gathered& into) {
      return base::borrow_if_idle(r, r.claim.word, claim::free, claim::lent, into);
    });
    const stamp_t h = pool_.head_stamp();
    // Stamped h (no younger than any of them), so that what the deadline leaves in the orphanage
    // is freed by the usual rule.
    for (core::retired_hook* n = g.unsafe.head(); n; n = n->next_retired)
      static_cast<node_base*>(n)->retire_stamp = h;
    core::waiter w(d);
    while (done && pool_.tail_stamp() < h) {
      pass_through(me);
      if (pool_.tail_stamp() >= h) break;
      if (!w.wait()) done = false;
    }
    return this->finish_barrier(me, g, done, h);
  }

  // Outside a region, an empty one of our own that ends our stay and takes parked threads out
  // (pass_through()); inside, what is ready of our own. Then the free policy's.
  void flush_local(record& me) {
    if (me.level() == 0) {
      pass_through(me);
    } else {
      holding garbage(me);
      reclaim_own(me, true);
    }
    holding garbage(me);
    me.freeing.drain(me);
  }

  // Thread exit (possibly inside a region, which it then leaves): it frees what it can, hands
  // the rest over with its age, drains its free policy, and enters and leaves an empty region, so
  // that the thread that leaves last frees what every exited thread handed over.
  void on_thread_exit(record& r) noexcept {
    holding garbage(r);
    const bool in_pool =
        r.level() != 0 || (std::exchange(r.parked, false) && pool_.resume(r.block));
    if (in_pool && pool_.remove(r.block)) reclaim_global(r);
    reclaim_own(r, true);
    if (!r.stamped.empty()) {
      const stamp_t oldest = stamp_of(r.stamped.head());
      this->orphan(r, std::move(r.stamped), oldest);
    }
    pool_.push(r.block);
    if (pool_.remove(r.block)) reclaim_global(r);
    r.freeing.drain(r);
    r.spent_header = false;  // registration reserves the headers again
  }

  // In a child of fork(): r's thread does not exist here (core/registry.hpp). If it was inside a
  // region, or entering or leaving one, its block leaves the pool on its behalf (stamp_pool::
  // forget()), so that the tail stamp can rise past it; the global list is then freed by the next
  // thread that leaves as the last one.
  // Likewise a block it was taking out on another thread's behalf (evict_oldest()).
  void forget_thread(record& r) noexcept {
    r.parked = false;
    pool_.forget(r.block);
    if (r.taking) pool_.forget_eviction(*r.taking);
  }

  detail::stamp_pool pool_;
};

// An operation in d, from construction to destruction: a region with its stamp; protect() is a
// plain load.
template <class... Policies>
class stamp_it<Policies...>::guard : public core::region_scheme_guard<domain> {
 public:
  explicit guard(domain& d = stamp_it::default_domain()) : core::region_scheme_guard<domain>(d) {}
};

}  // namespace reclaim
