// SPDX-License-Identifier: MIT
// crystalline_l and crystalline_w: Crystalline-L and Crystalline-W (Nikolaev and Ravindran,
// "Crystalline: Fast and Memory Efficient Wait-Free Reclamation", DISC 2021; full version "A Family
// of Fast and Memory Efficient Lock- and Wait-Free Reclamation", PLDI 2024, arXiv 2108.02763):
// batch reference counting (Hyaline's idea) driven by per-index era reservations (hazard eras'), so
// that a stalled thread holds a bounded amount of garbage and reclamation never scans retired nodes
// against reservations. One algorithm; crystalline_w adds a wait-free protect() (helping).
//
// Where things are. Here: the policies, the node and the algorithm (the domain's protect, seal,
// traversal, flush, barrier, exit and fork), each step with the part of the proof it carries, and
// the hooks of the shared guard and protection (core/slot_guard.hpp).
// detail/crystalline_reservations.hpp: the reservation word, the pool of a record that seals walk,
// a guard's slots and a protection's. detail/crystalline_helping.hpp: crystalline_w's requests, helpers and holds.
// detail/batch_domain.hpp: what the domain shares with hyaline. detail/birth_sorted.hpp: the two
// batches a thread fills, sorted by birth era (the garbage bound: see join_batch()).
//
// When to use it. Where hazard pointers' fence per read is too slow and an epoch scheme's unbounded
// garbage under a stalled thread is not acceptable: protect costs a seq_cst load and a load of the
// clock, and publishes (one DWCAS) only when the era moved. Reclamation cost is O(H) per batch of
// at least H + 1 nodes, nothing per node. crystalline_w where a reader must not starve.
//
// Needs from a container: needs_validated_reads (as hp: an era protects only nodes reached through
// validated reads, and a walk through removed nodes may reach a node born after every era it
// reserved); nodes derive from node_base and are made with the guard's or the domain's
// create<T>(), which stamps the birth era (a node made with a plain `new` keeps first_era, the
// oldest: every reservation covers it, safe but it keeps its batch as long as any reservation is
// active). K >= the container's slots_used (slots<K>, default 4; sized_for gives the skiplist its
// 14). Stricter than hp in one way: a protect must never return a node that was already retired
// (reached through a stale link, or protected again "by copy" in another slot), even if another
// reservation of the thread still holds it. A batch goes only into the reservations active when it
// is sealed, so moving a retired node's protection to a new reservation protects nothing, and the
// old reservation's next era frees it at once (under hp a hazard moved the same way keeps the node
// until the next scan). crystalline_w, as wfe: a helper may read the source shortly after the
// reader's protect() returned, so a container calls domain.wait_for_source_readers() first in its
// destructor (every container of ds/ does), and a source must never lie in a node the reader
// frees itself. Owned protections (what a reclaim::guard_ptr holds): one reservation each.
//
// Progress. crystalline_l: protect() is lock-free (it retries while the clock moves); under
// crystalline_w it is wait-free apart from the publication's DWCAS (publish()). Retire is
// lock-free (insert()); leaving is lock-free likewise, and its traversal is wait-free.
#pragma once
#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstdint>
#include <memory>
#include <new>
#include <string_view>
#include <type_traits>
#include <utility>

#include "../concepts.hpp"
#include "../core/domain.hpp"
#include "../core/platform/dwcas.hpp"
#include "../core/guard_base.hpp"
#include "../core/misuse.hpp"
#include "../core/policy.hpp"
#include "../core/slot_guard.hpp"
#include "../free/batch.hpp"
#include "detail/batch_domain.hpp"
#include "detail/birth_sorted.hpp"
#include "detail/crystalline_helping.hpp"
#include "detail/crystalline_reservations.hpp"
#include "detail/eras.hpp"
#include "detail/lazy_leave.hpp"
#include "../policies.hpp"  // slots<K>
#include "../core/sync.hpp"

namespace reclaim {

struct crystalline_test_peer;  // tests/crystalline_test.cpp

// Crystalline, lock-free or wait-free (WaitFree): used as crystalline_l and crystalline_w (below),
// with its policies (policies.hpp) in any order.
template <bool WaitFree, class... Policies>
struct basic_crystalline : core::scheme_base<basic_crystalline<WaitFree, Policies...>> {
  // Its policies, as given in Policies... or by default: the free policy (batch_free), slots<K>
  // (4), advance_every<N> (64), scan_every<N> (64, the smallest batch), fast_path<N> (16, used by
  // crystalline_w only).
  using free_policy = core::find_policy_t<free_policy_kind, batch_free, Policies...>;
  static constexpr unsigned slot_count = core::policy_value<slots<4>, Policies...>;
  static constexpr unsigned era_every = core::policy_value<advance_every<64>, Policies...>;
  static constexpr unsigned batch_min = core::policy_value<scan_every<64>, Policies...>;
  static constexpr bool wait_free = WaitFree;
  static constexpr unsigned fast_tries = core::policy_value<fast_path<16>, Policies...>;
  static_assert((core::known_kinds<free_policy_kind, slots_kind, advance_kind,
                                   scan_every_kind,
                                   fast_path_kind>::template contains<Policies> &&
                 ...),
                "crystalline takes a free policy, slots<K>, advance_every<N>, scan_every<N> "
                "(the smallest batch) and, crystalline_w only, fast_path<N>");
  static_assert(WaitFree ||
                    !(std::is_same_v<typename Policies::policy_kind, fast_path_kind> || ...),
                "fast_path<N> is for crystalline_w");

  // Its name in the lab and in messages.
  static constexpr std::string_view name =
      WaitFree ? std::string_view("crystalline_w") : std::string_view("crystalline_l");
  // Batch reference counting (DESIGN.md's family table, as hyaline): a batch goes with the last
  // reservation that held it, so a protection's end frees at once what it alone kept.
  static constexpr reclaim::family family = reclaim::family::reference_counting;
  // With amortized_free<K> the safe nodes wait on the freer's freeable list, bounded only while
  // the retire rate stays within K, so bounds_garbage is the free policy's.
  static constexpr bool bounds_garbage = free_policy::bounded;
  static constexpr unsigned needs = needs_validated_reads;

  // The retire link and deleter, the birth era, and the batch words. For a batch's reference node
  // (its oldest node, never inserted): `link` is the batch's first node, `refs` its counter, and
  // birth_era the barrier phase it counts in once sealed (above the phase bit: the fork generation,
  // forget_thread()). For the others: `link` is the next node of the reservation list it is in
  // (during a seal: the reservation it goes to), `batch` the reference node. 48 bytes (the
  // retire hook's 16, the birth era, the list link, the batch pointer and the counter); the
  // paper's unions fold some of these.
  struct node_base : core::retired_hook {
    detail::era_t birth_era = detail::first_era;
    union {
      node_base* link = nullptr;
      detail::crystalline_reservation* target;
    };
    node_base* batch = nullptr;
    core::atomic<std::int64_t> refs{0};
  };

  // Its domain and the hooks of its slots (below), and the guard of an operation and the protection
  // of a guard_ptr: the shared slot guard's and protection's (core/slot_guard.hpp) over the hooks.
  struct slot_hooks;
  class domain;
  using guard = core::slot_guard<slot_hooks>;
  using protection = core::slot_protection<slot_hooks>;
};

// Crystalline-L (lock-free), and Crystalline-W, whose protect() is wait-free (helping).
template <class... Policies>
using crystalline_l = basic_crystalline<false, Policies...>;
template <class... Policies>
using crystalline_w = basic_crystalline<true, Policies...>;

namespace detail {

// A partial batch of a thread, and the size at which its next seal is tried (0: compute).
struct crystalline_batch : forming_batch {
  std::size_t next_attempt = 0;
};

template <class FreePolicy, unsigned K, bool WaitFree>
struct crystalline_record : core::thread_record<FreePolicy> {
  using guard_level = crystalline_level<K>;
  // Read by seals: every reservation of the record.
  crystalline_pool pool;
  [[no_unique_address]] std::conditional_t<WaitFree, crystalline_request, no_crystalline_request>
      request;
  // Held around each retire, seal and release of freed batches (core::garbage_claim).
  alignas(core::cache_line) core::garbage_claim claim;
  // The outermost level's reservations between operations (detail/lazy_leave.hpp; the domain's
  // close()).
  lazy_leave between;
  // Owner only (or a barrier that borrowed the record).
  guard_level levels;        // the outermost guard's slots; nested levels chained to it
  std::size_t protections = 0;  // reservations owned by live protections
  // Unsealed, sorted by birth era; a batch's tail (its oldest node) becomes its reference node.
  birth_sorted_batches<crystalline_batch> batches;
  unsigned since_advance = 0;  // allocations since this thread advanced the clock
  bool fenced = false;         // this owner fenced after taking the record (fence_once())

  void destroy_garbage() noexcept { batches.take_all().destroy_all(); }
};

}  // namespace detail

// One crystalline instance's shared state: the thread records with their reservations, and the
// garbage (core/domain.hpp). default_domain() is the one the containers use unless given another.
template <bool WaitFree, class... Policies>
class basic_crystalline<WaitFree, Policies...>::domain
    : public detail::batch_domain<
          domain, detail::crystalline_record<free_policy, slot_count, WaitFree>>,
      public detail::crystalline_helping<
          WaitFree, domain, detail::crystalline_record<free_policy, slot_count, WaitFree>> {
  using record = detail::crystalline_record<free_policy, slot_count, WaitFree>;
  using level = typename record::guard_level;
  using slot = detail::crystalline_slot;
  using reservation = detail::crystalline_reservation;
  using base = core::domain_base<domain, record>;
  using batch_base = detail::batch_domain<domain, record>;
  using helping = detail::crystalline_helping<WaitFree, domain, record>;
  using claim = core::garbage_claim;
  using holding = claim::scope<record>;
  using era_t = detail::era_t;
  using batch = detail::crystalline_batch;
  static constexpr std::uint64_t inactive = reservation::inactive;
  static constexpr std::int64_t bias = std::int64_t{1} << 62;

 public:
  // Its scheme's guard; it offers synchronize() and barrier() (concepts.hpp's grace_periods); and
  // domain_base's retire(node[, deleter]), from any thread.
  using guard_type = basic_crystalline::guard;
  static constexpr bool grace_periods = true;
  using base::retire;
  // Returns once no helper can still read a source of a protect() that has returned
  // (detail/crystalline_helping.hpp; hides core::domain_base's).
  using helping::wait_for_source_readers;

  ~domain() {
#ifndef NDEBUG
    this->threads_.for_each([](const record& r) {
      assert(r.protections == 0 && "reclaim: domain destroyed while a guard_ptr on it is alive");
    });
#endif
    // What threads between operations kept (batches in their lists), released now that none
    // can run one (counted on each record).
    this->threads_.for_each([this](record& o) {
      if (!o.forgotten) release_kept(o, o);
    });
    this->shutdown();
  }

  // A node stamped with the current era (hides domain_base::create).
  template <class T, class... Args>
  T* create(Args&&... args) {
    return make<T>(this->threads_.local(), std::forward<Args>(args)...);
  }

  // Reservations in the domain (H): every record's pool.
  std::size_t reservation_count() const noexcept {
    return reservations_.load(std::memory_order_relaxed);
  }
  // The size at which a thread seals its batch: max(N, H + 1).
  std::size_t batch_size() const noexcept {
    return std::max<std::size_t>(batch_min, reservation_count() + 1);
  }

 private:
  friend struct basic_crystalline::slot_hooks;
  template <class, class, class>
  friend struct core::slot_hooks_base;
  friend base;
  friend batch_base;
  friend helping;
  friend struct crystalline_test_peer;  // a revocation cut by fork()

  static node_base* as_node(core::retired_hook* h) noexcept { return static_cast<node_base*>(h); }
  static node_base* next_in_batch(node_base* n) noexcept {
    return static_cast<node_base*>(n->next_retired);
  }

  // Filler nodes pad a short batch at flush, barrier and thread exit; never counted.
  struct filler final : node_base {};
  static void destroy_filler(core::retired_hook* h) noexcept { delete static_cast<filler*>(h); }

  // The clock advances every advance_every<F> allocations of a thread (the paper: F x threads);
  // under crystalline_w the thread about to advance it answers the pending requests first.
  template <class T, class... Args>
  T* make(record& r, Args&&... args) {
    static_assert(std::is_base_of_v<node_base, T>,
                  "crystalline: nodes derive from crystalline_l<>::node_base (or "
                  "crystalline_w<>::node_base)");
    if (++r.since_advance >= era_every) [[unlikely]] {
      r.since_advance = 0;
      if constexpr (wait_free) this->help_requests(r);
      clock_.advance();
      r.count_epoch_advance(0);
    }
    T* node = new T(std::forward<Args>(args)...);
    node->birth_era = clock_.birth();
    return node;
  }

  // ---- the owner's side

  // A record's first use by its owner: the fence that a seal which missed the record relies on
  // (detail/crystalline_reservations.hpp, "Records and blocks registered after a seal began").
  void fence_once(record& r) noexcept {
    if (!r.fenced) [[unlikely]] {
      core::thread_fence(std::memory_order_seq_cst);
      r.fenced = true;
    }
  }

  // A reservation from r's pool, nullptr if none can be allocated.
  reservation* take(record& r) noexcept {
    return r.pool.take([this] {
      reservations_.fetch_add(detail::crystalline_pool::block_size, std::memory_order_relaxed);
      core::thread_fence(std::memory_order_seq_cst);  // as fence_once()
    });
  }
  reservation& take_or_throw(record& r) {
    reservation* x = take(r);
    if (!x) throw std::bad_alloc();
    return *x;
  }

  level& open(record& r) {
    fence_once(r);
    const unsigned depth = r.enter();
    if (depth == 0) {
      (void)r.between.resume(!RECLAIM_MUTATED(crystalline_revoke_unnoticed));
      if (!RECLAIM_MUTATED(crystalline_begin_without_fence)) core::fence_after_rmw();
    }
    claim::free_policy_step(r);
    if (depth == 0 && r.levels.complete) [[likely]]
      return r.levels;
    return open_slow(r, depth);
  }
  [[gnu::noinline]] level& open_slow(record& r, unsigned depth) {
    try {
      level* l = &r.levels;
      for (; depth > 0; --depth) {
        if (!l->next) l->next = std::make_unique<level>();
        l = l->next.get();
      }
      if (!l->complete) {
        for (slot& s : l->slots)
          if (!s.res) s.res = &take_or_throw(r);
        l->complete = true;
      }
      return *l;
    } catch (...) {
      if (r.leave()) end_kept(r);  // a barrier can release them only once we are between
      throw;
    }
  }
  // The common end of an operation, inlined into the guard's: the outermost level, no barrier
  // running, and every published slot's list empty (under crystalline_w, none frozen), so all of
  // them are kept, as close_slow() would keep them, without its call, saved registers and
  // per-slot release path.
  [[gnu::always_inline]] void close(record& r, level& l) noexcept {
    if (&l != &r.levels || releasing_.load(std::memory_order_relaxed)) [[unlikely]]
      return close_slow(r, l);
    bool kept = false;
    for (slot& s : l.slots) {
      if (s.era == detail::no_era) continue;
      if (s.res->word.peek_lo() != 0 || (wait_free && s.res->frozen)) [[unlikely]]
        return close_slow(r, l);
      kept = true;
    }
    (void)r.leave();
    r.between.end(kept);  // as close_slow()'s
  }
  [[gnu::noinline]] void close_slow(record& r, level& l) noexcept {
    const bool outermost = &l == &r.levels;
    const bool may_keep = outermost && !releasing_.load(std::memory_order_relaxed);
    bool kept = false;
    for (slot& s : l.slots) {
      if (s.era == detail::no_era) continue;
      const std::uint64_t list = s.res->word.peek_lo();
      if (may_keep && list == 0 && !(wait_free && s.res->frozen)) {
        kept = true;
        continue;
      }
      if (!release(r, s, list)) l.complete = false;
    }
    (void)r.leave();
    // A release store: our slots' eras happen before a revoker's release of them (revoke()).
    if (outermost) r.between.end(kept);
  }

  // Lazy leave (close()). An operation's end keeps each outermost reservation whose list is empty
  // published, with its era, so that the next operation's protects find the era it holds (no
  // DWCAS to release it, none to publish the same era again): one release and one publication
  // per clock advance, per batch inserted and per revocation, where each operation paid both. Safe
  // as it stands: a reservation protects more than its owner reads, never less. The list is read
  // with a plain load, a hint: a batch inserted after it stays until the reservation is released.
  // The cost would be garbage, since a kept reservation receives batches like an active one. So
  // every seal first releases the reservations kept by threads between operations (revoke_kept():
  // as their owners would at their close; their next protects publish afresh), and so does a
  // barrier: a thread between operations holds at most the batches sealed by seals that had
  // passed that step when it left its operation, one per sealing thread. Nothing is kept while a
  // barrier runs (releasing_: it waits for those batches), nor past flush() or thread exit, nor
  // under crystalline_w a frozen reservation (its hold releases it).
  // The start of an outermost guard (and of the owner's release of what it kept) is
  // r.between.resume(), a seq_cst CAS. (1) With open()'s fence_after_rmw() (lock cmpxchg on
  // x86-64 is a full fence) it is the fence at the start of an operation that synchronize()
  // relies on (core::domain_base::wait_for_open_guards(): our depth store comes before our first
  // load of a source), as a kept reservation publishes nothing (the first protect's DWCAS was that
  // fence before lazy leave). (2) If a revoker's CAS came first we wait until it has released our
  // kept reservations and reset our slots (its release store of `idle`, which our CAS reads from),
  // so our first protect publishes again; if ours came first the revoker finds us inside and
  // leaves them.
  // Releases o's kept reservations on its behalf if its owner is between operations, keeping them;
  // counted on me. False if it keeps none (or is inside an operation). The acquire CAS pairs with
  // close()'s release store (o's slots, as its owner left them); our release store of idle with
  // the owner's next resume() (our changes to its slots).
  bool revoke(record& me, record& o) noexcept {
    return o.between.revoke([&] { release_kept(me, o); });
  }
  // o's kept reservations released, counted on `on` (o's owner, or a revoker, or the domain's
  // destructor); a kept one is never frozen (close()).
  void release_kept(record& on, record& o) noexcept {
    for (slot& s : o.levels.slots)
      if (s.era != detail::no_era) deactivate(on, *s.res, std::exchange(s.era, detail::no_era));
  }
  // The owner's, outside any guard (flush, barrier, exit; after open_slow() failed).
  void end_kept(record& r) noexcept {
    (void)r.between.resume();  // not while a revoker releases them
    release_kept(r, r);
    r.between.settle_idle();
  }
  // A seal and a barrier revoke the kept reservations of every other record whose owner is
  // between operations (batch_domain::revoke_kept(), counted on the caller). A record inside one
  // releases at its close what is not empty (all while releasing_).

  // The era loop: returns src's pointer once s's reservation holds the era read after it. Load
  // src (seq_cst), read the era clock; if it equals the era s already holds, the pointer is
  // protected (seal() says why); otherwise publish the clock's era in s's reservation with one
  // DWCAS that also detaches its list, traverse the detached list, and try again. Under
  // crystalline_w it asks for help after fast_tries tries (AskForHelp false: the lock-free loop).
  template <bool AskForHelp = wait_free, class P>
  P protect(record& r, slot& s, const core::atomic<P>& src) {
    era_t prev = s.era;
    [[maybe_unused]] unsigned tries = fast_tries;
    for (;;) {
      // seq_cst (load and clock): in S after the publication, in program order, as seal()'s
      // argument needs; the load is also the acquire that pairs with the store or CAS that
      // linked the node.
      P p = src.load(std::memory_order_seq_cst);
      const era_t now = clock_.now();
      if (now == prev) [[likely]]
        return p;
      if constexpr (AskForHelp) {
        if (tries == 0) [[unlikely]]
          return this->slow_path(r, s, src);
        --tries;
      }
      prev = publish(r, s, now);
      // p was loaded before the era was published: only the next round's load is covered.
      if (RECLAIM_MUTATED(batch_era_no_validation)) return p;
    }
  }

  // s's reservation holds era e from now on; the list it held is detached and traversed.
  [[gnu::noinline]] era_t publish(record& r, slot& s, era_t e) {
    if constexpr (wait_free)
      if (s.res->frozen) this->replace_frozen(r, s);
    // seq_cst DWCAS: the publication in S (see seal()), and the acquire that makes the detached
    // list's links visible (insert()). It fails only when an insertion changed the list, and then
    // retries with what it read: each failure is a completed insertion (the paper's separate list
    // and era words make it an exchange), so it is the one step of crystalline_w's protect()
    // that is not wait-free.
    core::word_pair seen{s.era == detail::no_era ? inactive : s.res->word.peek_lo(), s.era};
    while (!r.ctr.cas_wide(s.res->word, seen, core::word_pair{0, e})) {
    }
    s.era = e;
    traverse(r, seen.lo);
    return e;
  }
  // Lets s's reservation go: true if it is released (inactive, still s's), false if it was
  // abandoned to a hold (crystalline_w: s then has none).
  bool release(record& r, slot& s, std::uint64_t list = 0) noexcept {
    const era_t era = std::exchange(s.era, detail::no_era);
    if constexpr (wait_free)
      if (s.res->frozen && s.res->frozen->abandon(*s.res)) {
        s.res = nullptr;
        return false;
      }
    deactivate(r, *s.res, era, list);
    return true;
  }
  // seq_cst DWCAS: our reads of what the reservation protected come before it, and the
  // traversal's decrements (acq_rel) carry them to whoever frees; as publish()'s, it acquires the
  // detached list's links (insert()). `era` and `list` are a guess at what it holds (right unless
  // helpers raised the era or a retirer inserted meanwhile): one DWCAS when they are.
  void deactivate(record& r, reservation& x, era_t era, std::uint64_t list = 0) noexcept {
    core::word_pair seen{list, era};
    while (!r.ctr.cas_wide(x.word, seen, core::word_pair{inactive, detail::no_era})) {
    }
    traverse(r, seen.lo);
  }

  // Leaving (a guard's end, a protection's reset, or publishing a new era in protect): the owner
  // has detached the list and traverses it, decrementing the counter of each node's batch;
  // whoever takes a counter to zero (a traverser, or the sealer's final fetch_add) frees the whole
  // batch through its own record's free policy (it counts the frees; stats add up: retired ==
  // freed + pending).
  // Why the last decrement may free. The counter is bias + inserted - traversed until the sealer's
  // final add, so no traverser can see zero before every insertion is counted; after it, it counts
  // the reservations whose lists still hold a node of the batch. Zero means every reservation the
  // batch was inserted into has been detached, and each detacher's reads of the batch's nodes happen
  // before its decrement (acq_rel), which happens before the free (the last decrement acquires every
  // earlier one through the counter's release sequence).
  void traverse(record& r, std::uint64_t list) noexcept {
    if (list == 0 || list == inactive) return;
    node_base* emptied = nullptr;  // reference nodes, chained through `batch`
    for (node_base* n = reinterpret_cast<node_base*>(list); n;) {
      node_base* next = n->link;  // before the decrement: the batch may go at once
      node_base* ref = n->batch;
      // acq_rel: releases our reads of the batch's nodes; the last decrement acquires them all.
      const std::int64_t was = ref->refs.fetch_sub(
          1, RECLAIM_MUTATED(batch_refs_relaxed) ? std::memory_order_relaxed
                                                 : std::memory_order_acq_rel);
      if (was == 1 || (RECLAIM_MUTATED(batch_free_at_one) && was == 2)) {
        ref->batch = emptied;
        emptied = ref;
      }
      n = next;
    }
    if (emptied) free_batches(r, emptied);
  }

  // Frees the batches whose reference nodes are chained through `batch`, counted on r.
  void free_batches(record& r, node_base* refs) noexcept {
    core::retired_list safe;
    std::int64_t done[2] = {0, 0};
    while (refs) {
      node_base* ref = refs;
      refs = ref->batch;
      if ((ref->birth_era >> 1) == fork_generation_) ++done[ref->birth_era & 1];
      for (node_base* n = ref->link; n;) {
        node_base* next = next_in_batch(n);  // ref is the tail: the walk ends after it
        if (n->destroy == &destroy_filler)
          destroy_filler(n);
        else
          safe.push(n);
        n = next;
      }
    }
    {
      holding garbage(r);
      r.release_safe(std::move(safe), this->gauge_);
    }
    // release: the nodes are freed (or on r's freeable list) before a barrier sees the count drop.
    for (int p = 0; p < 2; ++p)
      if (done[p]) in_flight_[p].fetch_sub(done[p], std::memory_order_release);
  }

  // ---- the retirer's side

  // Nodes gather in one of the thread's two batches, by birth era (join_batch()); once one has
  // max(N, H + 1) nodes (H: every reservation of the domain; scan_every<N>, default 64) the
  // thread seals it.
  void retire(record& r, core::retired_hook* hook) {
    holding garbage(r);
    r.count_retired(this->gauge_);
    batch& b = join_batch(r, hook);
    if (b.next_attempt == 0) b.next_attempt = batch_size();
    if (b.nodes.size() >= b.next_attempt) [[unlikely]] {
      if (seal(r, b, false))
        b.next_attempt = 0;
    }
  }
  // Adds the node to the partial batch of its birth (detail/birth_sorted.hpp) and returns that
  // batch.
  // Garbage bound. A stalled thread holding reservations with era E keeps the batches whose
  // minimum birth era is <= E. Each thread sorts its unsealed nodes into two batches: those born at
  // or before the oldest era an active reservation held at its last seal (every seal reads every
  // reservation anyway), and the younger ones. Once a thread has sealed after the stall, that
  // oldest era is E, so its young batches skip the stalled reservation and its old batches hold
  // only nodes born by E. A stalled thread therefore keeps (1) the nodes born by E and retired
  // since (hazard eras' bound: the nodes alive at its era, at most S + F x T in a structure of S
  // nodes whose clock advances every advance_every<F> (default 64) allocations of each of T
  // threads), and (2) per retiring thread, the one batch it sealed before it first saw the stall:
  // at most S + F x T + R x B nodes for R retiring threads, B = max(N, H + 1) the batch size,
  // whatever the others retire. Beside it each thread keeps two unsealed batches of fewer than B
  // nodes each (more only while the registry grows faster than it retires). The sort separates one
  // era: a stalled thread whose reservations hold different eras E1 < E2 (a reader stalled
  // mid-traversal), or threads stalled at different eras, keep a young batch whole for each node
  // born between E1 and E2 that it holds (for those nodes the bound is B each, as before the sort;
  // a traversal's eras differ by the clock's advances during one operation). The paper fills one
  // batch per thread: a batch that holds one node born before a stall is kept whole, so with a
  // long-lived population almost every batch was (4.4x what hazard eras keep beside the same stall
  // at 200K keys, docs/results.md). crystalline_w adds a request reservation's and the frozen
  // reservations' share (detail/crystalline_helping.hpp).
  static batch& join_batch(record& r, core::retired_hook* hook) noexcept {
    node_base* n = as_node(hook);
    batch& b = r.batches.for_birth(n->birth_era);
    b.add(n, n->birth_era);
    return b;
  }

  // Seals b, a partial batch of r, and inserts it into the reservations that need it. Without
  // `pad`, gives up (returns false, nothing changed) when the batch has fewer nodes than those
  // reservations, and tries again once it has one more than it needed; with `pad`, allocates
  // fillers, giving up only if that fails (the paper sizes batches once and waits for more
  // retires; here threads come and go, so flush, barrier and exit pad instead of waiting). Its
  // walk over the reservations gives r its next threshold, the oldest era reserved
  // (detail/birth_sorted.hpp: a heuristic, it orders nothing: a batch goes by its own minimum
  // birth era, whatever nodes it holds). Run with r's claim held.
  //
  // After a full fence the seal walks every reservation of every record, and gives each one whose
  // era is >= the batch's minimum birth era one node of the batch (the assignment pass). The
  // batch's oldest node is its reference node: its counter starts at a bias (2^62). Then each
  // assigned node is inserted at the head of its reservation's list (insert()). Finally the
  // counter gets (insertions - bias) in one fetch_add (traverse() says why the last decrement
  // may free).
  // Why nothing is freed while a reservation covers it. A reader R holds node n through reservation
  // x: it published era E with its DWCAS (seq_cst), then loaded n from src (seq_cst), then read the
  // clock and found E; n's birth (the clock read when it was created, before it was linked) is <= E,
  // by coherence through the release store that linked n and R's load. The retirer unlinked n, then
  // fenced (seq_cst) and read x's pair. R's load of src read a value before the unlink, so it
  // precedes the fence in S ([atomics.order]: a seq_cst read coherence-ordered before a write that
  // happens before a seq_cst fence), and so does R's DWCAS; the retirer's read of x after the fence
  // therefore sees R's DWCAS or a later value. While R holds n, x's era does not go below E (only
  // insertions change x's pair, and under crystalline_w helpers that raise a request's era), so the
  // retirer sees an era >= birth(n) >= the batch's minimum and assigns x a node; the insertion's
  // DWCAS, which checks the era again, succeeds; the batch is then counted in x until x is detached
  // (a new era or the guard's end), after R's last read of n. A reservation that was inactive, or
  // held an era below the minimum, when the retirer looked after its fence was published later than
  // R's unlink became visible: its reads cannot reach n. The same holds with "the clock read after
  // the load is <= the era x held before it" in place of "equals": that is what crystalline_w's
  // helped reads check. Records and pool blocks the walk misses: detail/crystalline_reservations.hpp.
  bool seal(record& r, batch& b, bool pad) noexcept {
    release_forgotten(r);
    this->revoke_kept(r);  // lazy leave's bound (close())
    this->adopt(r);
    if (b.nodes.empty()) return true;
    core::scan_timer timer(r.ctr);
    core::counters::add(r.ctr.scans, 1);
    node_base* const ref = as_node(b.nodes.tail());
    const era_t min = b.min_birth;
    // The retirer's fence of the argument above.
    if (!RECLAIM_MUTATED(batch_retire_without_fence)) core::thread_fence(std::memory_order_seq_cst);

    // The assignment pass: one node per reservation that needs the batch.
    node_base* next = as_node(b.nodes.head());
    core::retired_list pads;
    std::size_t needed = 0;
    bool short_of_nodes = false;
    detail::oldest_reserved oldest(r.batches.old_up_to);
    auto assign = [&](reservation& x) {
      const core::word_pair w = r.ctr.load_wide(x.word);
      if (w.lo == inactive) return;
      oldest.reserved(w.hi);
      if (w.hi < min) return;
      ++needed;
      if (next != ref) {
        next->target = &x;
        next = next_in_batch(next);
      } else if (pad && !short_of_nodes) {
        auto* f = new (std::nothrow) filler;
        if (!f) {
          short_of_nodes = true;
          return;
        }
        f->destroy = &destroy_filler;
        f->target = &x;
        pads.push(f);
      } else {
        short_of_nodes = true;
      }
    };
    for (record* other = this->threads_.head(); other;
         other = decltype(this->threads_)::next_of(other))
      other->pool.for_each([&](const reservation& x) { assign(const_cast<reservation&>(x)); });
    r.batches.old_up_to = oldest.oldest();
    if (short_of_nodes) {
      while (core::retired_hook* f = pads.pop()) destroy_filler(f);
      b.next_attempt = std::max(b.nodes.size() + 1, needed + 1);
      return false;
    }
    for (; next != ref; next = next_in_batch(next)) next->target = nullptr;
    b.nodes.splice(std::move(pads));  // in front: ref stays the tail

    // The insertion pass. The counter holds the bias until every insertion is counted.
    ref->refs.store(bias, std::memory_order_relaxed);
    ref->link = as_node(b.nodes.head());
    const unsigned phase = phase_.load(std::memory_order_acquire);
    ref->birth_era = phase | (fork_generation_ << 1);
    in_flight_[phase].fetch_add(1, std::memory_order_relaxed);
    std::int64_t inserted = 0;
    for (node_base* n = as_node(b.nodes.head()); n != ref; n = next_in_batch(n)) {
      reservation* x = n->target;
      if (x && insert(r, *x, n, ref, min)) ++inserted;
    }
    b = batch{};  // the batch belongs to its reservations now
    // acq_rel: the sealer's own decrement of the bias; zero means no reservation kept a node.
    if (ref->refs.fetch_add(inserted - bias, std::memory_order_acq_rel) == bias - inserted) {
      ref->batch = nullptr;
      free_batches(r, ref);
    }
    return true;
  }

  // Inserts n at the head of x's list if x is still active with an era >= min: a DWCAS that also
  // checks the era ({head, e} -> {n, e}; n's link to the old head is written before the CAS
  // publishes it). Lock-free: it fails only when the owner or another retirer changed x.
  static bool insert(record& r, reservation& x, node_base* n, node_base* ref, era_t min) noexcept {
    core::word_pair w = r.ctr.load_wide(x.word);
    for (;;) {
      if (w.lo == inactive || w.hi < min) return false;
      n->link = reinterpret_cast<node_base*>(w.lo);
      n->batch = ref;
      // seq_cst DWCAS (a release): publishes link and batch to the traverser that detaches it.
      if (r.ctr.cas_wide(x.word, w, core::word_pair{reinterpret_cast<std::uint64_t>(n), w.hi}))
        return true;
    }
  }

  // Seals both of r's partial batches, padded; false if one stays unsealed (no memory for the
  // fillers). Claim held.
  bool seal_padded(record& r) noexcept {
    bool sealed = true;
    r.batches.for_each([&](batch& b) {
      if (seal(r, b, true))
        b.next_attempt = 0;
      else
        sealed = false;
    });
    return sealed;
  }

  // ---- flush, grace periods, barrier, exit

  // flush() seals the thread's partial batches (padded) and drains its free policy.
  void flush_local(record& r) {
    if (r.level() == 0) end_kept(r);
    holding garbage(r);
    release_forgotten(r);
    (void)seal_padded(r);  // out of memory: what stays unsealed waits for the next retires
    r.freeing.drain(r);
  }

  // synchronize() waits for the guards open at the call (detail/batch_domain.hpp). barrier():
  // everything unsealed (every record's batch, borrowed between its retires, and the orphans) is
  // sealed here, padded (sorted again, in two batches); then the barrier waits until every batch
  // sealed before it is freed (two phases of in-flight counts: batches sealed before the flip
  // count in the old one), and frees what the freers left on their free policies' lists.
  bool barrier_locked(record& me, core::deadline d) {
    // Relaxed: a close that misses it keeps, and revoke_kept() takes what it kept.
    releasing_.store(true, std::memory_order_relaxed);
    struct stop_releasing {
      core::atomic<bool>& flag;
      ~stop_releasing() { flag.store(false, std::memory_order_relaxed); }
    } stop{releasing_};
    end_kept(me);
    this->revoke_kept(me);
    release_forgotten(me);
    typename base::gathered g;
    bool done = this->gather_batches(me, g, d);
    {
      holding garbage(me);
      while (core::retired_hook* h = g.unsafe.pop()) (void)join_batch(me, h);
      if (!seal_padded(me)) done = false;  // out of memory: it stays in our batches
    }
    this->free_now(me, std::move(g.safe));
    refuse_own_protection(me);
    core::waiter w(d);
    const unsigned p = phase_.load(std::memory_order_relaxed);  // only barriers change it
    // acquire: pairs with the release decrements in free_batches().
    while (done && in_flight_[p ^ 1].load(std::memory_order_acquire) != 0) {
      this->revoke_kept(me);
      if (!w.wait()) done = false;
    }
    phase_.store(p ^ 1, std::memory_order_seq_cst);
    while (done && in_flight_[p].load(std::memory_order_acquire) != 0) {
      this->revoke_kept(me);
      if (!w.wait()) done = false;
    }
    return done && this->free_freeable(me, d);
  }

  // A barrier waits until every sealed batch is freed. A reservation of the calling thread's own
  // (a guard_ptr outside any guard: inside one the barrier is refused before) with a batch in its
  // list keeps that batch until it is released: the barrier would wait for ever. Named and
  // stopped instead.
  static void refuse_own_protection(record& me) noexcept {
    bool holds = false;
    me.pool.for_each_owned([&](reservation& x) {
      if (x.abandoned) return;
      const std::uint64_t list = me.ctr.load_wide(x.word).lo;
      holds = holds || (list != 0 && list != inactive);
    });
    if (holds)
      core::stop_on_misuse(
          "barrier() would wait for ever: a guard_ptr of the calling thread protects a node "
          "retired before the call; reset it before the barrier");
  }

  // In a child of fork(): r's thread does not exist here (core/registry.hpp). Single-word steps
  // only (that thread may have stopped in the middle of the scheme's own code): under
  // crystalline_w its request and helping end (forget_request()). Its reservations, which keep
  // the batches inserted into them (and a barrier waits for every sealed batch), are released
  // later, in release_forgotten(), by the next thread of the child that seals, flushes or runs a
  // barrier: releasing one frees batches, which runs deleters, not for a fork handler to do.
  //
  // A barrier waits for the batches sealed before it, counted by phase. Some sealed before the
  // fork may never be freed in the child (their sealer, or a thread that was releasing a
  // reservation holding them, stopped half-way); so the child starts a new fork generation of
  // those counts, and the batches of an earlier one are freed without being counted (a leak of the
  // parent's threads, like their garbage).
  void forget_thread(record& r) noexcept {
    ++fork_generation_;
    in_flight_[0].store(0, std::memory_order_relaxed);
    in_flight_[1].store(0, std::memory_order_relaxed);
    forgotten_pending_.store(true, std::memory_order_relaxed);
    if constexpr (wait_free) this->forget_request(r);
  }
  // In a child of fork(), r is the forking thread's record. If another thread of the parent was
  // revoking r's kept reservations (revoke()), it stopped half-way and left r `revoking` for
  // ever: r's next start would wait in resume() for a thread that does not exist here. Its
  // steps are made whole with single-word ones (nothing is released or freed here): a slot whose
  // reservation the revoker deactivated stays released; one whose era it had taken (exchange())
  // but whose reservation it had not yet deactivated gets the reservation's era back, so that r
  // keeps it as before the revocation began, and r is between operations again. A list the
  // revoker had detached but not traversed is a leak of the parent's threads, as their garbage
  // (its batches, sealed in an earlier fork generation, are not counted by barriers here).
  void fork_survivor(record& r) noexcept {
    if (!r.between.revocation_cut()) return;
    bool kept = false;
    for (slot& s : r.levels.slots) {
      if (!s.res) continue;
      if (s.res->word.peek_lo() == inactive) {  // a snapshot: no other thread runs here
        s.era = detail::no_era;
      } else {
        s.era = s.res->word.peek_hi();
        kept = true;
      }
    }
    r.between.settle_after_fork(kept);
  }
  // The reservations of forgotten records (forget_thread()), released on their behalf, as their
  // owners would at exit: a frozen one goes to its hold (whose closer releases it), the others are
  // deactivated here and their lists traversed, counted on `me`. Under crystalline_w a forgotten
  // helper that a requester had claimed lets the requester's hold go. Once per fork.
  void release_forgotten(record& me) noexcept {
    if (!forgotten_pending_.load(std::memory_order_relaxed)) [[likely]]
      return;
    // relaxed: the fork handler set it before any other thread of the child existed (a thread's
    // creation orders the rest); the exchange picks one thread to do it.
    if (!forgotten_pending_.exchange(false, std::memory_order_relaxed)) return;
    for (record* f = this->threads_.head(); f; f = decltype(this->threads_)::next_of(f)) {
      if (!f->forgotten) continue;
      f->pool.for_each_owned([&](reservation& x) {
        if (x.abandoned) return;
        if constexpr (wait_free)
          if (x.frozen && x.frozen->abandon(x)) return;
        if (const core::word_pair w = me.ctr.load_wide(x.word); w.lo != inactive)
          deactivate(me, x, w.hi);
      });
      if constexpr (wait_free) this->unregister(me, *f);
    }
  }

  // Thread exit (possibly inside guards): every reservation is released, and the partial batch is
  // sealed (padded), so that nothing waits for this record again (a batch belongs to no thread
  // once sealed); only if the padding cannot be allocated does the batch go to the orphanage, for
  // the next seal to adopt. Domain destruction destroys the unsealed batches; sealed ones are all
  // freed by then (no guard or guard_ptr may outlive the domain, so every reservation has been
  // released).
  void on_thread_exit(record& r) noexcept {
    (void)r.between.resume();  // not while a revoker releases the kept reservations
    holding garbage(r);
    for (level* l = &r.levels; l; l = l->next.get())
      for (slot& s : l->slots)
        if (s.era != detail::no_era && !release(r, s)) l->complete = false;
    // What live guard_ptrs still own (crystalline_w: a frozen one stays with its guard_ptr).
    r.pool.for_each_owned([&](reservation& x) {
      if (x.abandoned || (x.frozen && x.frozen->open())) return;
      if (const core::word_pair w = r.ctr.load_wide(x.word); w.lo != inactive)
        deactivate(r, x, w.hi);
    });
    if (!seal_padded(r)) this->orphan(r, r.batches.take_all());
    r.freeing.drain(r);
    r.between.settle_idle();
    r.fenced = false;  // the next owner fences on its first use
    // since_advance is kept: short-lived threads that each allocate fewer than advance_every
    // nodes still move the clock, through their records.
  }

  detail::era_clock clock_;
  core::atomic<std::size_t> reservations_{0};  // in every record's pool
  // Sealed batches not yet freed, by barrier phase.
  alignas(core::cache_line) core::atomic<std::int64_t> in_flight_[2] = {0, 0};
  core::atomic<unsigned> phase_{0};
  core::atomic<bool> releasing_{false};  // a barrier runs: closes keep nothing (close())
  // crystalline_w (detail/crystalline_helping.hpp): requests pending (counted before they are
  // published), requests answered by a helper, and holds made.
  alignas(core::cache_line) core::atomic<std::int64_t> requests_{0};
  core::atomic<std::uint64_t> helped_answers_{0};
  core::atomic<std::uint64_t> holds_made_{0};
  // Set in a child of fork() that forgot records: their reservations wait for release_forgotten().
  core::atomic<bool> forgotten_pending_{false};
  // Changed only in a child of fork(), while it has one thread (forget_thread()).
  std::uint64_t fork_generation_ = 0;
};

// The shared guard and owned protection (core/slot_guard.hpp) over crystalline's reservations. A
// guard's K slots are its nesting level's (the domain's open() and close()). An owned protection
// (what a reclaim::guard_ptr holds) keeps its slot itself (detail::crystalline_owned_slot): one
// reservation, taken from the thread's pool on its first protect and given back when it ends; a
// reset releases it (detaches and traverses its list) and keeps it for the next protect. A region
// lends no slots (a slot is not a place in a pool that a protection could point at), so its
// protections take their own reservations and may also outlive it. A node is freed with its batch:
// when the last reservation that received the batch lets go, not when the protection that held the
// node does.
template <bool WaitFree, class... Policies>
struct basic_crystalline<WaitFree, Policies...>::slot_hooks
    : core::slot_hooks_base<basic_crystalline, typename domain::level, detail::crystalline_slot> {
  using base = typename slot_hooks::slot_hooks_base;
  using typename base::record, typename base::slot;
  using owned = detail::crystalline_owned_slot;
  static constexpr bool lends_slots = false;
  // The era loop (domain::protect()), seq_cst whatever the order asked; the container still
  // checks its own validity (the mark).
  template <class P>
  static P protect(domain& d, record& r, slot& s, const core::atomic<P>& src,
                   std::memory_order /*order*/) {
    return d.protect(r, s, src);
  }
  // P2530's reset_protection(ptr): publishes the current era; p is protected only if the caller
  // then re-reads its source and finds p there (and the era has not moved: as protect()).
  template <class P>
  static void publish(domain& d, record& r, slot& s, P /*p*/) {
    const detail::era_t now = d.clock_.now();
    if (s.era != now) d.publish(r, s, now);
  }
  // A node stamped with the current era.
  template <class T, class... Args>
  static T* create(domain& d, record& r, Args&&... args) {
    return d.template make<T>(r, std::forward<Args>(args)...);
  }

  // r.protections counts the reservations that protections own, from their take until they are
  // given back or abandoned to a hold (the domain's destructor checks that none is left).
  [[gnu::noinline]] static owned take(domain& d, record& r) {
    d.fence_once(r);
    owned s(d.take_or_throw(r));
    ++r.protections;
    return s;
  }
  [[gnu::noinline]] static void give_back(domain& d, record& r, slot& s) noexcept {
    if (s.era == detail::no_era || d.release(r, s)) r.pool.give_back(s.res);
    --r.protections;
  }
  // The reservation is released and kept, unless it was abandoned to a hold (crystalline_w): the
  // protection then owns none until its next protect takes one.
  static void clear(domain& d, record& r, slot& s) noexcept {
    if (s.era != detail::no_era && !d.release(r, s)) --r.protections;
  }
  static void retire(domain& d, record& r, core::retired_hook* node) { d.retire(r, node); }
};

}  // namespace reclaim
