// crystalline_l: Crystalline-L (Nikolaev and Ravindran, "Crystalline: Fast and Memory Efficient
// Wait-Free Reclamation", DISC 2021; full version "A Family of Fast and Memory Efficient Lock- and
// Wait-Free Reclamation", PLDI 2024, arXiv 2108.02763): batch reference counting (Hyaline's idea)
// driven by per-index era reservations (hazard eras'), so that a stalled thread holds a bounded
// amount of garbage and reclamation never scans retired nodes against reservations.
//
// What it is. Every guard owns K reservations; each is one 16-byte word pair changed only by a
// double-width CAS (core::atomic_pair): {list, era}. list is a singly linked list of retired nodes,
// one per batch that was inserted into this reservation (or `inactive`, 1, when the reservation
// protects nothing); era is what the reservation protects (no_era, 0, while inactive).
//   protect(src, i): load src (seq_cst), read the era clock; if it equals the era reservation i
//     already holds, the pointer is protected; otherwise publish the clock's era in reservation i
//     with one DWCAS that also detaches its list ({list, old} -> {empty, new}), traverse the
//     detached list (below), and try again.
//   retire: nodes gather in the thread's batch; once it has max(N, H + 1) nodes (H: every
//     reservation of the domain; scan_frequency<N>, default 64) the thread seals it: after a full
//     fence it walks every reservation of every record, and gives each one whose era is >= the
//     batch's minimum birth era one node of the batch (the assignment pass; if the batch has too
//     few nodes the seal waits for more, or flush() pads it with filler nodes). The batch's oldest
//     node is its reference node: its counter starts at a bias (2^62). Then each assigned node is
//     inserted at the head of its reservation's list by a DWCAS that also checks that the
//     reservation is still active with an era >= the minimum ({head, e} -> {node, e}; the node's
//     link to the old head is written before the CAS publishes it). Finally the counter gets
//     (insertions - bias) in one fetch_add.
//   leaving (a guard's end, a protection's reset, or publishing a new era in protect): the owner
//     detaches the list by the DWCAS above and traverses it, decrementing the counter of each
//     node's batch; whoever takes a counter to zero (a traverser, or the sealer's final fetch_add)
//     frees the whole batch through its own record's free policy (it counts the frees; stats add
//     up: retired == freed + pending).
// Why the last decrement may free. The counter is bias + inserted - traversed until the sealer's
// final add, so no traverser can see zero before every insertion is counted; after it, it counts
// the reservations whose lists still hold a node of the batch. Zero means every reservation the
// batch was inserted into has been detached by its owner, and each owner's reads of the batch's
// nodes happen before its decrement (acq_rel), which happens before the free (the last decrement
// acquires every earlier one through the counter's release sequence).
// Why nothing is freed while a reservation covers it. A reader R holds node n through reservation
// i: it published era E with its DWCAS (seq_cst), then loaded n from src (seq_cst), then read the
// clock and found E; n's birth (the clock read when it was created, before it was linked) is <= E,
// by coherence through the release store that linked n and R's load. The retirer unlinked n, then
// fenced (seq_cst) and read i's pair. R's load of src read a value before the unlink, so it
// precedes the fence in S ([atomics.order]: a seq_cst read coherence-ordered before a write that
// happens before a seq_cst fence), and so does R's DWCAS; the retirer's read of i after the fence
// therefore sees R's DWCAS or a later value. While R holds n, only insertions change i's pair, so
// the retirer sees era E >= birth(n) >= the batch's minimum and assigns the reservation a node;
// the insertion's DWCAS, which checks the era again, succeeds on that same era; the batch is then
// counted in i until R detaches i (a new era or the guard's end), after its last read of n. A
// reservation that was inactive, or held an era below the minimum, when the retirer looked after
// its fence was published later than R's unlink became visible: its reads cannot reach n.
// Records and blocks registered after a seal began. The registry pushes a record, and an owner
// links a nested block or a pool block, with release stores; the first thing an owner does with a
// new record or block is a seq_cst fence (`fenced`, once per owner of a record, and after every new
// block). A seal's fence comes before its walk, so if the walk missed the record, the seal's fence
// precedes the owner's in S, which precedes the owner's era publication and its read of src: that
// read sees the unlink. So a seal counts exactly the reservations it finds; the batch is sized for
// H + 1 (H read before sealing), and if the registry grew meanwhile the assignment pass runs out of
// nodes and the seal waits for more retires (flush, barrier and thread exit pad instead).
//
// When to use it. Where hazard pointers' fence per read is too slow and an epoch scheme's unbounded
// garbage under a stalled thread is not acceptable: protect costs a seq_cst load and a load of the
// clock, and publishes (one DWCAS) only when the era moved. Reclamation cost is O(H) per batch of
// at least H + 1 nodes, nothing per node.
//
// Garbage bound. A thread's unsealed batch holds at most max(N, H + 1) nodes (more only while the
// registry grows faster than it retires). A stalled thread holding reservations with era E keeps
// only batches whose minimum birth era is <= E: each such batch contains a node born at or before
// E, so it keeps at most B x (nodes born by era E and retired since) nodes, B = max(N, H + 1) the
// batch size; the nodes born later (everything allocated after the clock passed E) are freed as
// usual. In a structure of S nodes where the clock advances every era_frequency<F> (default 64)
// allocations of each of T threads: at most B x (S + F x T) nodes, whatever the others retire.
// With amortized_free<K> the safe nodes wait on the freer's freeable list, bounded only while the
// retire rate stays within K, so bounds_garbage is the free policy's.
//
// Needs from a container: needs_validated_reads (as hp: an era protects only nodes reached through
// validated reads, and a walk through removed nodes may reach a node born after every era it
// reserved); nodes derive from crystalline_l<>::node_base and are made with the guard's or the
// domain's create<T>(), which stamps the birth era (a node made with a plain `new` keeps first_era,
// the oldest: every reservation covers it, safe but it keeps its batch as long as any reservation
// is active). K >= the container's slots_used (slots<K>, default 4; sized_for gives the skiplist
// its 14). Stricter than hp in one way: a protect must never return a node that was already
// retired (reached through a stale link, or protected again "by copy" in another slot), even if
// another reservation of the thread still holds it. A batch goes only into the reservations
// active when it is sealed, so moving a retired node's protection to a new reservation protects
// nothing, and the old reservation's next era frees it at once (under hp a hazard moved the same
// way keeps the node until the next scan).
//
// Nesting. A nested guard gets its own block of K reservations (allocated the first time a thread
// nests that deep, kept for reuse), as hp's guards do. Sharing the outer guard's reservations
// would not be safe here: publishing a newer era in index i detaches i's list and releases the
// batches inserted for the older era, which may hold the outer guard's node (a newer era covers
// new insertions of the older nodes, but not the batches already released).
// Owned protections (crystalline_l<>::protection, what a reclaim::guard_ptr holds): one
// reservation each, from a per-thread pool of blocks of 8, walked by seals like the guards' blocks.
//
// flush() seals the thread's partial batch (padded) and drains its free policy; synchronize()
// waits for the guards open at the call (core::domain_base::wait_for_open_guards); barrier()
// gathers every unsealed node (each record's batch, borrowed between its retires through a
// garbage_claim, and the orphans), seals it, then waits until every batch sealed before it is
// freed (sealed batches count in one of two phases; a barrier flips the phase and waits for the
// old one to drain) and frees what the freers left on their free policies. Thread exit (possibly
// inside guards) releases every reservation of the record and seals the partial batch, padded; a
// batch belongs to no thread once sealed, so nothing waits for an exited thread. Domain
// destruction destroys the unsealed batches; sealed ones are all freed by then (no guard or
// guard_ptr may outlive the domain, so every reservation has been released).
//
// Progress: protect() is lock-free (it retries while the clock moves; each retry publishes, one
// DWCAS that fails only when an insertion changed the list); retire is lock-free (an insertion's
// DWCAS fails only when the owner or another retirer changed the reservation); leaving is
// lock-free likewise, and its traversal is wait-free.
//
// Memory model. The seq_cst DWCAS of a publication, the seq_cst load of src and the clock's
// seq_cst load are in S in program order; the seal's fence and its DWCAS reads pair with them as
// argued above. Insertions publish a node's link and batch pointer with the DWCAS (seq_cst, a
// release), and the detaching DWCAS (an acquire) makes them visible to the traverser. The
// counter's fetch_sub and fetch_add are acq_rel (see "why the last decrement may free").
//
// Differences from the paper. One DWCAS word per reservation ({list, era}) instead of separate
// list and era words: a retirer's check of the era and its insertion are one atomic step, so the
// paper's "inactive after exchange, try to undo" path and the CAS on a node's next link are not
// needed, at the price of a retry loop (lock-free, not wait-free, insertion). Batches are sized
// from the domain's reservation count at run time (threads come and go), and the thread's flush,
// barrier and exit pad a short batch with filler nodes (not counted in the stats) instead of
// waiting for more retires. The owner caches the era it published, so the fast path reads no
// shared reservation. Orphans (a failed padding at thread exit) are adopted by the next seal.
// A node_base is 48 bytes (the retire hook's 16, the birth era, the list link, the batch pointer
// and the counter; the paper's unions fold some of these).
// crystalline_w, the wait-free variant, is not written yet: its helpers read the requester's
// source, which lives in a node (the "parent") that protect(src, slot) does not name, and a
// batch is inserted once, at its seal, so the parent's batch must be handed from the requester's
// reservations to each helper (the paper's handoff); docs/schemes.md says more.
#pragma once
#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <string_view>
#include <type_traits>
#include <utility>

#include "../concepts.hpp"
#include "../core/domain.hpp"
#include "../core/dwcas.hpp"
#include "../core/guard_base.hpp"
#include "../core/policy.hpp"
#include "../free/batch.hpp"
#include "detail/eras.hpp"
#include "hp.hpp"  // slots<K>, the slot-count policy shared with the pointer family

namespace reclaim {

namespace detail {

// One reservation: {list head | inactive, era}, changed only by DWCAS.
struct crystalline_reservation {
  static constexpr std::uint64_t inactive = 1;
  core::atomic_pair word{core::word_pair{inactive, no_era}};
};

// N reservations, the eras their owner published (owner only: the fast path reads no shared
// line), and the next block of the chain.
template <unsigned N>
struct crystalline_block {
  crystalline_block() = default;
  crystalline_block(const crystalline_block&) = delete;
  crystalline_block& operator=(const crystalline_block&) = delete;
  ~crystalline_block() { delete next.load(std::memory_order_relaxed); }

  alignas(core::cache_line) crystalline_reservation res[N];
  alignas(core::cache_line) era_t era[N] = {};  // owner only
  std::atomic<crystalline_block*> next{nullptr};

  template <class F>
  void for_each(F f) const {
    // acquire: pairs with the release store that linked a block, so it is seen built.
    for (const crystalline_block* b = this; b; b = b->next.load(std::memory_order_acquire)) f(*b);
  }
  template <class F>
  void for_each_owned(F f) {
    for (crystalline_block* b = this; b; b = b->next.load(std::memory_order_relaxed)) f(*b);
  }
};

// One reservation of a block, as protections own them.
template <unsigned N>
struct crystalline_handle {
  crystalline_block<N>* block = nullptr;
  unsigned index = 0;
};

// Reservations owned one by one (protections): a chain of blocks, and the owner's stack of free
// ones, with room for all so that giving back never allocates.
template <unsigned N>
class crystalline_pool {
 public:
  using block = crystalline_block<N>;
  using handle = crystalline_handle<N>;
  crystalline_pool() = default;
  crystalline_pool(const crystalline_pool&) = delete;
  crystalline_pool& operator=(const crystalline_pool&) = delete;
  ~crystalline_pool() { delete first_.load(std::memory_order_relaxed); }

  // Throws std::bad_alloc, and then nothing changed.
  template <class OnGrow>
  handle take(OnGrow on_grow) {
    if (free_count_ == 0) [[unlikely]] grow(on_grow);
    return free_[--free_count_];
  }
  void give_back(handle h) noexcept { free_[free_count_++] = h; }
  bool all_free() const noexcept { return free_count_ == blocks_ * N; }

  template <class F>
  void for_each(F f) const {
    // acquire: pairs with the release store in grow().
    if (const block* b = first_.load(std::memory_order_acquire)) b->for_each(f);
  }
  template <class F>
  void for_each_owned(F f) {
    if (block* b = first_.load(std::memory_order_relaxed)) b->for_each_owned(f);
  }

 private:
  template <class OnGrow>
  [[gnu::noinline]] void grow(OnGrow on_grow) {
    auto stack = std::make_unique<handle[]>((blocks_ + 1) * N);
    auto b = std::make_unique<block>();
    b->next.store(first_.load(std::memory_order_relaxed), std::memory_order_relaxed);
    for (unsigned i = 0; i < N; ++i) stack[free_count_++] = handle{b.get(), i};
    // release: a seal that reads the new head (acquire in for_each()) sees the block built.
    first_.store(b.release(), std::memory_order_release);
    free_ = std::move(stack);
    ++blocks_;
    on_grow();
  }

  std::atomic<block*> first_{nullptr};
  std::unique_ptr<handle[]> free_;
  std::size_t free_count_ = 0;
  std::size_t blocks_ = 0;
};

}  // namespace detail

template <class... Policies>
struct crystalline_l : core::scheme_base<crystalline_l<Policies...>> {
  using free_policy = core::find_policy_t<free_policy_kind, batch_free, Policies...>;
  static constexpr unsigned slot_count =
      core::find_policy_t<hp_slots_kind, slots<4>, Policies...>::value;
  static constexpr unsigned era_every =
      core::find_policy_t<era_frequency_kind, era_frequency<64>, Policies...>::value;
  static constexpr unsigned batch_min =
      core::find_policy_t<scan_frequency_kind, scan_frequency<64>, Policies...>::value;
  static_assert((core::known_kinds<free_policy_kind, hp_slots_kind, era_frequency_kind,
                                   scan_frequency_kind>::template contains<Policies> &&
                 ...),
                "crystalline_l takes a free policy, slots<K>, era_frequency<N> and "
                "scan_frequency<N> (the smallest batch)");

  static constexpr std::string_view name = "crystalline_l";
  // Batch reference counting (DESIGN.md's family table, as hyaline): a batch goes with the last
  // reservation that held it, so a protection's end frees at once what it alone kept.
  static constexpr reclaim::family family = reclaim::family::reference_counting;
  static constexpr bool bounds_garbage = free_policy::bounded;
  static constexpr unsigned needs = needs_validated_reads;

  // The retire link and deleter, the birth era, and the batch words. For a batch's reference node
  // (its oldest node, never inserted): `link` is the batch's first node, `refs` its counter, and
  // birth_era the barrier phase it counts in once sealed. For the others: `link` is the next node
  // of the reservation list it is in (during a seal: the reservation it goes to), `batch` the
  // reference node.
  struct node_base : core::retired_hook {
    detail::era_t birth_era = detail::first_era;
    union {
      node_base* link = nullptr;
      detail::crystalline_reservation* target;
    };
    node_base* batch = nullptr;
    std::atomic<std::int64_t> refs{0};
  };

  class domain;
  class guard;
  class protection;
};

namespace detail {

template <class FreePolicy, unsigned K>
struct crystalline_record : core::thread_record<FreePolicy> {
  using block = crystalline_block<K>;
  // Read by seals: the outermost guard's block (nested guards' blocks chained to it) and the pool
  // of protections' reservations.
  block levels;
  crystalline_pool<8> owned;
  // Held around each retire, seal and release of freed batches (core::garbage_claim).
  alignas(core::cache_line) core::garbage_claim claim;
  // Owner only (or a barrier that borrowed the record).
  core::retired_list batch;  // unsealed; its tail (the oldest) becomes the reference node
  era_t batch_min = std::numeric_limits<era_t>::max();
  std::size_t next_attempt = 0;  // batch size at which the next seal is tried (0: compute)
  unsigned since_advance = 0;    // allocations since this thread advanced the clock
  bool fenced = false;           // this owner fenced after taking the record (see the header)

  void destroy_garbage() noexcept { batch.destroy_all(); }
};

}  // namespace detail

template <class... Policies>
class crystalline_l<Policies...>::domain
    : public core::domain_base<domain, detail::crystalline_record<free_policy, slot_count>> {
  using record = detail::crystalline_record<free_policy, slot_count>;
  using block = typename record::block;
  using pool_block = detail::crystalline_block<8>;
  using reservation = detail::crystalline_reservation;
  using base = core::domain_base<domain, record>;
  using claim = core::garbage_claim;
  using holding = claim::scope<record>;
  using era_t = detail::era_t;
  static constexpr std::uint64_t inactive = reservation::inactive;
  static constexpr std::int64_t bias = std::int64_t{1} << 62;

 public:
  using guard_type = crystalline_l::guard;
  static constexpr bool grace_periods = true;
  using base::retire;

  domain() = default;
  ~domain() {
#ifndef NDEBUG
    this->threads_.for_each([](const record& r) {
      assert(r.owned.all_free() && "reclaim: domain destroyed while a guard_ptr on it is alive");
    });
#endif
    this->shutdown();
  }

  // A node stamped with the current era (hides domain_base::create).
  template <class T, class... Args>
  T* create(Args&&... args) {
    return make<T>(this->threads_.local(), std::forward<Args>(args)...);
  }

  // Reservations in the domain (H): K per record, nested guards' blocks and protections' pools.
  std::size_t reservation_count() const noexcept {
    return slot_count * this->threads_.size() + extra_.load(std::memory_order_relaxed);
  }
  // The size at which a thread seals its batch: max(N, H + 1).
  std::size_t batch_size() const noexcept {
    return std::max<std::size_t>(batch_min, reservation_count() + 1);
  }

 private:
  friend class crystalline_l::guard;
  friend class crystalline_l::protection;
  friend base;

  static node_base* as_node(core::retired_hook* h) noexcept { return static_cast<node_base*>(h); }
  static node_base* next_in_batch(node_base* n) noexcept {
    return static_cast<node_base*>(n->next_retired);
  }

  // Filler nodes pad a short batch at flush, barrier and thread exit; never counted.
  struct filler final : node_base {};
  static void destroy_filler(core::retired_hook* h) noexcept { delete static_cast<filler*>(h); }

  template <class T, class... Args>
  T* make(record& r, Args&&... args) {
    static_assert(std::is_base_of_v<node_base, T>,
                  "crystalline: nodes derive from crystalline_l<>::node_base");
    if (++r.since_advance >= era_every) [[unlikely]] {
      r.since_advance = 0;
      clock_.advance();
      r.count_epoch_advance(0);
    }
    T* node = new T(std::forward<Args>(args)...);
    node->birth_era = clock_.birth();
    return node;
  }

  // ---- the owner's side

  void fence_once(record& r) noexcept {
    if (!r.fenced) [[unlikely]] {
      // See "Records and blocks registered after a seal began" at the top.
      std::atomic_thread_fence(std::memory_order_seq_cst);
      r.fenced = true;
    }
  }

  block& open(record& r) {
    fence_once(r);
    const unsigned level = r.enter();
    claim::free_policy_step(r);
    if (level == 0) [[likely]]
      return r.levels;
    return nested_block(r, level);
  }
  [[gnu::noinline]] block& nested_block(record& r, unsigned level) {
    try {
      block* b = &r.levels;
      for (; level > 0; --level) {
        block* next = b->next.load(std::memory_order_relaxed);
        if (!next) {
          next = new block;
          // release: a seal that reaches the block (acquire in for_each()) sees it built.
          b->next.store(next, std::memory_order_release);
          extra_.fetch_add(slot_count, std::memory_order_relaxed);
          std::atomic_thread_fence(std::memory_order_seq_cst);  // as fence_once()
        }
        b = next;
      }
      return *b;
    } catch (...) {
      (void)r.leave();
      throw;
    }
  }
  void close(record& r, block& b) noexcept {
    for (unsigned i = 0; i < slot_count; ++i)
      if (b.era[i] != detail::no_era) deactivate(r, b, i);
    (void)r.leave();
  }

  // The era loop: returns src's pointer once reservation i of b holds the era read after it.
  template <class B, class P>
  P protect(record& r, B& b, unsigned i, const std::atomic<P>& src) {
    era_t prev = b.era[i];
    for (;;) {
      // seq_cst (load and clock): in S after the publication, as the argument at the top needs;
      // the load is also the acquire that pairs with the store or CAS that linked the node.
      P p = src.load(std::memory_order_seq_cst);
      const era_t now = clock_.now();
      if (now == prev) [[likely]]
        return p;
      prev = publish(r, b, i, now);
    }
  }

  // Reservation i of b holds era e from now on; the list it held is detached and traversed.
  template <class B>
  [[gnu::noinline]] era_t publish(record& r, B& b, unsigned i, era_t e) {
    const era_t old = b.era[i];
    core::word_pair seen{old == detail::no_era ? inactive : 0, old};
    // seq_cst DWCAS: the publication in S (see the top); fails only when an insertion changed the
    // list, and then retries with what it read.
    while (!b.res[i].word.compare_exchange(seen, core::word_pair{0, e})) {
    }
    b.era[i] = e;
    traverse(r, seen.lo);
    return e;
  }
  template <class B>
  void deactivate(record& r, B& b, unsigned i) noexcept {
    core::word_pair seen{0, b.era[i]};
    // seq_cst DWCAS: our reads of what the reservation protected come before it, and the
    // traversal's decrements (acq_rel) carry them to whoever frees.
    while (!b.res[i].word.compare_exchange(seen, core::word_pair{inactive, detail::no_era})) {
    }
    b.era[i] = detail::no_era;
    traverse(r, seen.lo);
  }

  // Decrements the batch counter of each node of a detached list; frees the batches it empties.
  void traverse(record& r, std::uint64_t list) noexcept {
    if (list == 0 || list == inactive) return;
    node_base* emptied = nullptr;  // reference nodes, chained through `batch`
    for (node_base* n = reinterpret_cast<node_base*>(list); n;) {
      node_base* next = n->link;  // before the decrement: the batch may go at once
      node_base* ref = n->batch;
      // acq_rel: releases our reads of the batch's nodes; the last decrement acquires them all.
      if (ref->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
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
      ++done[ref->birth_era & 1];
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

  void retire(record& r, core::retired_hook* hook) {
    holding garbage(r);
    r.count_retired(this->gauge_);
    add_to_batch(r, as_node(hook));
    if (r.next_attempt == 0) r.next_attempt = batch_size();
    if (r.batch.size() >= r.next_attempt) [[unlikely]] {
      if (seal(r, false))
        r.next_attempt = 0;
    }
  }
  static void add_to_batch(record& r, node_base* n) noexcept {
    r.batch_min = std::min(r.batch_min, n->birth_era);
    r.batch.push(n);
  }

  // Seals r's batch and inserts it into the reservations that need it. Without `pad`, gives up
  // (returns false, nothing changed) when the batch has fewer nodes than those reservations, and
  // tries again once it has one more than it needed; with `pad`, allocates fillers, giving up only
  // if that fails. Run with r's claim held.
  bool seal(record& r, bool pad) noexcept {
    adopt(r);
    if (r.batch.empty()) return true;
    core::scan_timer timer(r.ctr);
    core::counters::add(r.ctr.scans, 1);
    node_base* const ref = as_node(r.batch.tail());
    const era_t min = r.batch_min;
    // See "Why nothing is freed while a reservation covers it" at the top.
    std::atomic_thread_fence(std::memory_order_seq_cst);

    // The assignment pass: one node per reservation that needs the batch.
    node_base* next = as_node(r.batch.head());
    core::retired_list pads;
    std::size_t needed = 0;
    bool short_of_nodes = false;
    auto assign = [&](reservation& x) {
      const core::word_pair w = x.word.load();
      if (w.lo == inactive || w.hi < min) return;
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
         other = decltype(this->threads_)::next_of(other)) {
      other->levels.for_each([&](const block& b) {
        for (auto& x : b.res) assign(const_cast<reservation&>(x));
      });
      other->owned.for_each([&](const pool_block& b) {
        for (auto& x : b.res) assign(const_cast<reservation&>(x));
      });
    }
    if (short_of_nodes) {
      while (core::retired_hook* f = pads.pop()) destroy_filler(f);
      r.next_attempt = std::max(r.batch.size() + 1, needed + 1);
      return false;
    }
    for (; next != ref; next = next_in_batch(next)) next->target = nullptr;
    r.batch.splice(std::move(pads));  // in front: ref stays the tail

    // The insertion pass. The counter holds the bias until every insertion is counted.
    ref->refs.store(bias, std::memory_order_relaxed);
    ref->link = as_node(r.batch.head());
    const unsigned phase = phase_.load(std::memory_order_acquire);
    ref->birth_era = phase;
    in_flight_[phase].fetch_add(1, std::memory_order_relaxed);
    std::int64_t inserted = 0;
    for (node_base* n = as_node(r.batch.head()); n != ref; n = next_in_batch(n)) {
      reservation* x = n->target;
      if (x && insert(*x, n, ref, min)) ++inserted;
    }
    r.batch = core::retired_list{};  // the batch belongs to its reservations now
    r.batch_min = std::numeric_limits<era_t>::max();
    // acq_rel: the sealer's own decrement of the bias; zero means no reservation kept a node.
    if (ref->refs.fetch_add(inserted - bias, std::memory_order_acq_rel) == bias - inserted) {
      ref->batch = nullptr;
      free_batches(r, ref);
    }
    return true;
  }

  // Inserts n at the head of x's list if x is still active with an era >= min.
  static bool insert(reservation& x, node_base* n, node_base* ref, era_t min) noexcept {
    core::word_pair w = x.word.load();
    for (;;) {
      if (w.lo == inactive || w.hi < min) return false;
      n->link = reinterpret_cast<node_base*>(w.lo);
      n->batch = ref;
      // seq_cst DWCAS (a release): publishes link and batch to the traverser that detaches it.
      if (x.word.compare_exchange(w, core::word_pair{reinterpret_cast<std::uint64_t>(n), w.hi}))
        return true;
    }
  }

  // Garbage that an exiting thread could not seal joins ours, with its birth eras.
  void adopt(record& r) noexcept {
    core::retired_list orphans = this->adopt_orphans();
    while (core::retired_hook* h = orphans.pop()) add_to_batch(r, as_node(h));
  }

  // ---- flush, grace periods, barrier, exit

  void flush_local(record& r) {
    holding garbage(r);
    if (seal(r, true)) r.next_attempt = 0;
    r.freeing.drain(r);
  }

  bool wait_for_grace_period(record&, core::deadline d) const {
    return this->wait_for_open_guards(d);
  }

  static void take_garbage(record& r, typename base::gathered& into) noexcept {
    into.unsafe.splice(std::move(r.batch));
    r.batch_min = std::numeric_limits<era_t>::max();
    r.next_attempt = 0;
    into.safe.splice(r.freeing.take());
  }

  // Everything unsealed (every record's batch, borrowed between its retires, and the orphans) is
  // sealed here, padded; then the barrier waits until every batch sealed before it is freed (two
  // phases of in-flight counts: batches sealed before the flip count in the old one), and frees
  // what the freers left on their free policies' lists.
  bool barrier_locked(record& me, core::deadline d) {
    typename base::gathered g;
    bool done = this->gather(me, g, d, [](record& r, typename base::gathered& into) {
      return base::borrow_if_idle(r, r.claim.word, claim::free, claim::lent, into);
    });
    {
      holding garbage(me);
      while (core::retired_hook* h = g.unsafe.pop()) add_to_batch(me, as_node(h));
      if (!seal(me, true)) done = false;  // out of memory: it stays in our batch
      else me.next_attempt = 0;
    }
    this->free_now(me, std::move(g.safe));
    core::waiter w(d);
    const unsigned p = phase_.load(std::memory_order_relaxed);  // only barriers change it
    // acquire: pairs with the release decrements in free_batches().
    while (done && in_flight_[p ^ 1].load(std::memory_order_acquire) != 0)
      if (!w.wait()) done = false;
    phase_.store(p ^ 1, std::memory_order_seq_cst);
    while (done && in_flight_[p].load(std::memory_order_acquire) != 0)
      if (!w.wait()) done = false;
    // What the freers put on their free policies' lists.
    typename base::gathered late;
    for (record* r = this->threads_.head(); r && done; r = decltype(this->threads_)::next_of(r)) {
      core::waiter wr(d);
      if (r == &me) {
        late.safe.splice(me.freeing.take());
        continue;
      }
      while (!r->try_borrow(r->claim.word, claim::free, claim::lent))
        if (!wr.wait()) {
          done = false;
          break;
        }
      if (!done) break;
      late.safe.splice(r->freeing.take());
      r->give_back(r->claim.word, claim::lent, claim::free);
    }
    this->free_now(me, std::move(late.safe));
    return done;
  }

  // Thread exit (possibly inside guards): every reservation is released, and the partial batch is
  // sealed (padded), so that nothing waits for this record again; only if the padding cannot be
  // allocated does the batch go to the orphanage, for the next seal to adopt.
  void on_thread_exit(record& r) noexcept {
    holding garbage(r);
    r.levels.for_each_owned([&](block& b) {
      for (unsigned i = 0; i < slot_count; ++i)
        if (b.era[i] != detail::no_era) deactivate(r, b, i);
    });
    r.owned.for_each_owned([&](pool_block& b) {
      for (unsigned i = 0; i < 8; ++i)
        if (b.era[i] != detail::no_era) deactivate(r, b, i);
    });
    if (!seal(r, true)) {
      this->orphan(r, std::move(r.batch));
      r.batch_min = std::numeric_limits<era_t>::max();
    }
    r.freeing.drain(r);
    r.next_attempt = 0;
    r.fenced = false;  // the next owner fences on its first use
    // since_advance is kept: short-lived threads that each allocate fewer than era_frequency
    // nodes still move the clock, through their records.
  }

  detail::era_clock clock_;
  std::atomic<std::size_t> extra_{0};  // reservations beyond K per record
  // Sealed batches not yet freed, by barrier phase.
  alignas(core::cache_line) std::atomic<std::int64_t> in_flight_[2] = {0, 0};
  std::atomic<unsigned> phase_{0};
};

template <class... Policies>
class crystalline_l<Policies...>::guard : public core::guard_base<guard> {
 public:
  static constexpr bool validates = true;
  static constexpr unsigned slot_count = crystalline_l::slot_count;

  explicit guard(domain& d = crystalline_l::default_domain())
      : domain_(d), record_(d.threads_.local()), block_(d.open(record_)) {}
  ~guard() {
    this->check_owner();
    domain_.close(record_, block_);
  }
  guard(const guard&) = delete;
  guard& operator=(const guard&) = delete;

  // A node stamped with the current era (hides guard_base::create).
  template <class T, class... Args>
  T* create(Args&&... args) const {
    return domain_.template make<T>(record_, std::forward<Args>(args)...);
  }

  // The era loop on reservation `slot`; the container still checks its own validity (the mark).
  template <class P>
  P protect(const std::atomic<P>& src, unsigned slot) {
    assert(slot < slot_count);
    this->check_owner();
    return domain_.protect(record_, block_, slot, src);
  }

 private:
  friend class core::guard_base<guard>;
  friend class crystalline_l::protection;
  void retire_hook(core::retired_hook* node) { domain_.retire(record_, node); }

  domain& domain_;
  typename domain::record& record_;
  typename domain::block& block_;
};

// One reservation, owned: what a reclaim::guard_ptr holds. Taken from the thread's pool on the
// first protection and given back when the owner is destroyed; reset releases the reservation
// (detaches and traverses its list) and keeps it for the next protect.
template <class... Policies>
class crystalline_l<Policies...>::protection : core::thread_bound {
  using handle = detail::crystalline_handle<8>;

 public:
  // A node is freed with its batch: when the last reservation that received the batch lets go,
  // not when the protection that held this node does (other protections whose eras cover a node
  // of the batch keep all of it).
  static constexpr bool holds_region = false;

  // A region_guard's state: a guard for its scope. Protections made from it take their own
  // reservations (they do not borrow), so they may also outlive it.
  class region {
   public:
    explicit region(domain& d) : guard_(d) {}

   private:
    friend protection;
    guard guard_;
  };

  protection() noexcept = default;
  explicit protection(domain& d) noexcept : domain_(&d) {}
  explicit protection(region& r) noexcept : domain_(&r.guard_.domain_) {}
  protection(protection&& other) noexcept
      : domain_(other.domain_),
        record_(other.record_),
        res_(std::exchange(other.res_, handle{})) {}
  protection& operator=(protection&& other) noexcept {
    reset_protection();
    swap(other);
    return *this;
  }
  [[gnu::always_inline]] ~protection() {
    if (!res_.block) return;
    check_owner();
    give_back(*domain_, *record_, res_);
  }

  void swap(protection& other) noexcept {
    std::swap(domain_, other.domain_);
    std::swap(record_, other.record_);
    std::swap(res_, other.res_);
  }

  template <class P>
  P protect(const std::atomic<P>& src, std::memory_order) {
    handle h = own();
    return domain_->protect(*record_, *h.block, h.index, src);
  }

  template <class P>
  bool try_protect(P& expected, const std::atomic<P>& src, std::memory_order order) {
    P p = protect(src, order);
    if (p == expected) return true;
    reset_protection();
    expected = p;
    return false;
  }

  // P2530's reset_protection(ptr): publishes the current era; p is protected only if the caller
  // then re-reads its source and finds p there (and the era has not moved: as protect()).
  template <class P>
  void publish(P) {
    handle h = own();
    const detail::era_t now = domain_->clock_.now();
    if (h.block->era[h.index] != now) domain_->publish(*record_, *h.block, h.index, now);
  }

  void reset_protection() noexcept {
    if (res_.block && res_.block->era[res_.index] != detail::no_era)
      domain_->deactivate(*record_, *res_.block, res_.index);
  }

  void take_slot() { (void)own(); }
  bool owns_slot() const noexcept { return res_.block != nullptr; }

  void retire(core::retired_hook* node) {
    assert(record_ && "reclaim: retire through a protection that never protected");
    check_owner();
    core::garbage_claim::free_policy_step(*record_);
    domain_->retire(*record_, node);
  }

 private:
  handle own() {
    check_owner();
    if (!res_.block) [[unlikely]]
      take();
    return res_;
  }
  [[gnu::noinline]] void take() {
    record_ = &domain_->threads_.local();
    domain_->fence_once(*record_);
    res_ = record_->owned.take([&] {
      domain_->extra_.fetch_add(8, std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_seq_cst);  // as fence_once()
    });
  }
  [[gnu::noinline]] static void give_back(domain& d, typename domain::record& r,
                                          handle h) noexcept {
    if (h.block->era[h.index] != detail::no_era) d.deactivate(r, *h.block, h.index);
    r.owned.give_back(h);
  }

  domain* domain_ = nullptr;
  typename domain::record* record_ = nullptr;
  handle res_{};
};

}  // namespace reclaim
