// crystalline_l and crystalline_w: Crystalline-L and Crystalline-W (Nikolaev and Ravindran,
// "Crystalline: Fast and Memory Efficient Wait-Free Reclamation", DISC 2021; full version "A Family
// of Fast and Memory Efficient Lock- and Wait-Free Reclamation", PLDI 2024, arXiv 2108.02763):
// batch reference counting (Hyaline's idea) driven by per-index era reservations (hazard eras'), so
// that a stalled thread holds a bounded amount of garbage and reclamation never scans retired nodes
// against reservations. One algorithm; crystalline_w adds a wait-free protect() (helping, below).
//
// What it is. Every reservation is one 16-byte word pair changed only by a double-width CAS
// (core::atomic_pair): {list, era}. list is a singly linked list of retired nodes, one per batch
// that was inserted into this reservation (or `inactive`, 1, when the reservation protects
// nothing); era is what the reservation protects (no_era, 0, while inactive). A record's
// reservations live in its pool (blocks of 8 that seals walk); each slot of a guard (K per nesting
// level) and each owned protection points at one, with the era it published cached beside it.
//   protect(src, i): load src (seq_cst), read the era clock; if it equals the era slot i already
//     holds, the pointer is protected; otherwise publish the clock's era in i's reservation with
//     one DWCAS that also detaches its list ({list, old} -> {empty, new}), traverse the detached
//     list (below), and try again.
//   retire: nodes gather in one of the thread's two batches, by birth era (see "Garbage
//     bound"); once one has max(N, H + 1) nodes (H: every reservation of the domain;
//     scan_frequency<N>, default 64) the thread seals it: after a full fence it walks every
//     reservation of every record, and gives each one whose era is >= the batch's minimum
//     birth era one node of the batch (the assignment pass; if the batch has too
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
// batch was inserted into has been detached, and each detacher's reads of the batch's nodes happen
// before its decrement (acq_rel), which happens before the free (the last decrement acquires every
// earlier one through the counter's release sequence).
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
// helped reads check.
// Records and blocks registered after a seal began. The registry pushes a record, and an owner
// links a pool block, with release stores; the first thing an owner does with a new record or
// block is a seq_cst fence (`fenced`, once per owner of a record, and after every new block). A
// seal's fence comes before its walk, so if the walk missed the record, the seal's fence precedes
// the owner's in S, which precedes the owner's era publication and its read of src: that read sees
// the unlink. So a seal counts exactly the reservations it finds; the batch is sized for H + 1 (H
// read before sealing), and if the registry grew meanwhile the assignment pass runs out of nodes
// and the seal waits for more retires (flush, barrier and thread exit pad instead).
//
// crystalline_w: a wait-free protect(). crystalline_l's era loop retries while the clock moves,
// so a reader can starve while others allocate. crystalline_w tries fast_path<N> times (default
// 16, as the paper) and then asks for help; threads about to advance the clock answer every
// pending request first (the paper's scheme, as wfe.hpp's), so the request is answered in
// O(threads) steps. What differs from the paper is how the two hand-offs are made safe without
// the "parent" (the node holding the source), which protect(src, slot) does not name:
//  - The request reservation. The requester takes a fresh reservation q from its pool, activates it
//    with the current era, and publishes the request: source, loader, q, then the request word
//    {0, tag | 1} (pending). Requester and helpers then each try: raise q's era to the clock (a
//    DWCAS that keeps q's list: q is never detached while the request is pending, and its era only
//    grows), load the source, read the clock; if the clock is <= the era q held before the load,
//    the pointer is covered by q (the argument above) and the first CAS of the request word to
//    {pointer, tag} is the answer. The requester then makes q its slot's reservation and lets
//    the slot's old one go. No batch changes hands: the answer's cover is q itself.
//  - The parent. A helper reads the source, inside a node that one of the requester's
//    reservations covers, and must not read it once that reservation lets go. A helper registers
//    ({requester, pending word}, seq_cst) before it confirms the request is pending (seq_cst), so
//    a registration the requester does not find when it looks, after the answer, belongs to a
//    helper that has finished or that saw the request answered. Each one it finds it claims (a
//    CAS to {hold, claimed}), and if there are any it freezes every reservation it has active
//    under a hold counting them: a frozen reservation keeps its list and its era until its hold
//    closes (the last claimed helper is done). The requester does not wait: when it would publish
//    in or release a frozen reservation it abandons it to the hold and takes a fresh one from its
//    pool; whoever closes the hold releases the abandoned ones and gives them back to the pool.
//    A new hold keeps the newest still-open older hold open (so reservations frozen by older
//    holds outlive it too).
//  - Why seals cannot slip between. A seal that read a reservation before the freeze inserts into
//    it later, or not at all only if it found it inactive or below its minimum; a frozen
//    reservation is neither until its hold closes, after the helpers' last reads.
// What crystalline_w bounds beyond crystalline_l: a request reservation's era grows only to the
// clock while its request is pending (a bounded number of steps), and a stalled claimed helper
// keeps only the requester's reservations frozen when it was claimed, at their eras then (a
// stalled reader's share). Memory exhaustion degrades, never breaks: a request that cannot get a
// reservation or a hold retries lock-free; a publication that cannot replace a frozen reservation
// waits for its hold.
//
// When to use it. Where hazard pointers' fence per read is too slow and an epoch scheme's unbounded
// garbage under a stalled thread is not acceptable: protect costs a seq_cst load and a load of the
// clock, and publishes (one DWCAS) only when the era moved. Reclamation cost is O(H) per batch of
// at least H + 1 nodes, nothing per node. crystalline_w where a reader must not starve.
//
// Garbage bound. A stalled thread holding reservations with era E keeps the batches whose minimum
// birth era is <= E. Each thread sorts its unsealed nodes into two batches
// (detail/birth_sorted.hpp): those born at or before the oldest era an active reservation held at
// its last seal (every seal reads every reservation anyway), and the younger ones. Once a thread
// has sealed after the stall, that oldest era is E, so its young batches skip the stalled
// reservation and its old batches hold only nodes born by E. A stalled thread therefore keeps (1)
// the nodes born by E and retired since (hazard eras' bound: the nodes alive at its era, at most
// S + F x T in a structure of S nodes whose clock advances every era_frequency<F> (default 64)
// allocations of each of T threads), and (2) per retiring thread, the one batch it sealed before
// it first saw the stall: at most
// S + F x T + R x B nodes for R retiring threads, B = max(N, H + 1) the batch size, whatever the
// others retire. Beside it each thread keeps two unsealed batches of fewer than B nodes each (more
// only while the registry grows faster than it retires). The sort separates one era: a stalled
// thread whose reservations hold different eras E1 < E2 (a reader stalled mid-traversal), or
// threads stalled at different eras, keep a young batch whole for each node born between E1 and E2
// that it holds (for those nodes the bound is B each, as before the sort; a traversal's eras
// differ by the clock's advances during one operation). With amortized_free<K> the safe nodes wait
// on the freer's freeable list, bounded only while the retire rate stays within K, so
// bounds_garbage is the free policy's.
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
// destructor (every container of ds/ does), which returns once no helper can still read a source
// of a returned protect(); and a source must never lie in a node the reader frees itself.
//
// Nesting. A nested guard gets its own level of K slots (allocated the first time a thread nests
// that deep, kept for reuse), as hp's guards do. Sharing the outer guard's reservations would not
// be safe here: publishing a newer era in a reservation detaches its list and releases the batches
// inserted for the older era, which may hold the outer guard's node (a newer era covers new
// insertions of the older nodes, but not the batches already released).
// Owned protections (what a reclaim::guard_ptr holds): one reservation each, from the pool.
//
// flush() seals the thread's partial batches (padded) and drains its free policy; synchronize()
// waits for the guards open at the call (core::domain_base::wait_for_open_guards); barrier()
// gathers every unsealed node (each record's batches, borrowed between its retires through a
// garbage_claim, and the orphans), seals it (sorted again, in two batches), then waits until every
// batch sealed before it is freed (sealed batches count in one of two phases; a barrier flips the
// phase and waits for the old one to drain) and frees what the freers left on their free policies.
// Thread exit (possibly inside guards) releases every reservation of the record (crystalline_w:
// abandons the frozen ones of its guards; a frozen one a live guard_ptr owns stays with it) and
// seals the partial batches, padded; a batch belongs to no thread once sealed, so nothing waits for
// an exited thread. Domain destruction destroys the unsealed batches; sealed ones are all freed by
// then (no guard or guard_ptr may outlive the domain, so every reservation has been released).
//
// Progress. crystalline_l: protect() is lock-free (it retries while the clock moves). Under
// crystalline_w it is wait-free apart from one thing both share: a publication is a DWCAS that
// fails only when an insertion into the same reservation landed in between (each failure is a
// completed insertion; the paper's separate list and era words make it an exchange). Retire is
// lock-free (an insertion's DWCAS fails only when the owner or another retirer changed the
// reservation); leaving is lock-free likewise, and its traversal is wait-free. crystalline_w's
// helping adds O(threads) rounds to a clock advance while requests are pending.
//
// Memory model. The seq_cst DWCAS of a publication (or of a raise), the seq_cst load of src and
// the clock's seq_cst load are in S in program order; the seal's fence and its DWCAS reads pair
// with them as argued above. Insertions publish a node's link and batch pointer with the DWCAS
// (seq_cst, a release), and the detaching DWCAS (an acquire) makes them visible to the traverser.
// The counter's fetch_sub and fetch_add are acq_rel (see "why the last decrement may free").
// crystalline_w: the registration, the request word and the claims are DWCAS (seq_cst), which the
// Dekker-style argument above needs; the request's fields are released before the request word and
// acquired after it, and a helper that confirms the request still pending after reading them read
// this request's fields (a later request's are written after this one is answered). A helper's
// `helping` number: seq_cst RMWs around its helping, against wait_for_source_readers()'s seq_cst
// fence and loads (the argument is there). The sort of retired nodes into two batches orders
// nothing: a batch goes by its own minimum birth era, whatever nodes it holds, and the threshold
// is the minimum of the eras the seal's DWCAS reads return.
//
// Differences from the paper. One DWCAS word per reservation ({list, era}) instead of separate
// list and era words: a retirer's check of the era and its insertion are one atomic step, so the
// paper's "inactive after exchange, try to undo" path and the CAS on a node's next link are not
// needed, at the price of a retry loop (lock-free insertion and publication). Batches are sized
// from the domain's reservation count at run time (threads come and go), and the thread's flush,
// barrier and exit pad a short batch with filler nodes (not counted in the stats) instead of
// waiting for more retires. The owner caches the era it published, so the fast path reads no
// shared reservation. Orphans (a failed padding at thread exit) are adopted by the next seal.
// Each thread fills two batches, sorted by birth era, where the paper fills one: a batch that holds
// one node born before a stall is kept whole, so with a long-lived population almost every batch
// was (4.4x what hazard eras keep beside the same stall at 200K keys, docs/results.md).
// crystalline_w: one request per thread (it is inside one protect() at a time) instead of one per
// index; the request reservation and the frozen reservations above instead of the paper's
// per-node hand-offs of the parent and of the answer (which need the parent node); the clock
// advances every F allocations of a thread (the paper: F x threads). A node_base is 48 bytes (the
// retire hook's 16, the birth era, the list link, the batch pointer and the counter; the paper's
// unions fold some of these).
#pragma once
#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstdint>
#include <memory>
#include <new>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>

#include "../concepts.hpp"
#include "../core/domain.hpp"
#include "../core/dwcas.hpp"
#include "../core/guard_base.hpp"
#include "../core/misuse.hpp"
#include "../core/policy.hpp"
#include "../free/batch.hpp"
#include "detail/birth_sorted.hpp"
#include "detail/eras.hpp"
#include "../policies.hpp"  // slots<K>

namespace reclaim {

namespace detail {

struct crystalline_hold;

// One reservation: {list head | inactive, era}, changed only by DWCAS, and its owner's fields.
struct alignas(32) crystalline_reservation {
  static constexpr std::uint64_t inactive = 1;
  core::atomic_pair word{core::word_pair{inactive, no_era}};
  // Owner only (crystalline_w): the hold that froze it, and whether it was abandoned to one.
  crystalline_hold* frozen = nullptr;
  bool abandoned = false;
  // The pool's stacks, or a hold's abandoned stack.
  crystalline_reservation* next_free = nullptr;
};

// What a guard's slot or a protection holds: its reservation, and the era the owner published
// there (owner only: the fast path reads no shared line; under crystalline_w a lower bound of the
// reservation's era, which helpers of a request raise).
struct crystalline_slot {
  crystalline_reservation* res = nullptr;
  era_t era = no_era;
};

// Every reservation of a record, in blocks that seals walk. The owner takes and gives back through
// its own stack; under crystalline_w the closers of holds give abandoned ones back through
// `returned`, which the owner empties when its stack runs out.
class crystalline_pool {
 public:
  using reservation = crystalline_reservation;
  static constexpr unsigned block_size = 8;

  crystalline_pool() = default;
  crystalline_pool(const crystalline_pool&) = delete;
  crystalline_pool& operator=(const crystalline_pool&) = delete;
  ~crystalline_pool() {
    for (block* b = first_.load(std::memory_order_relaxed); b;) delete std::exchange(b, b->next);
  }

  // A reservation (inactive, not frozen), or nullptr if a new block cannot be allocated; on_grow()
  // runs after a new block is linked.
  template <class OnGrow>
  reservation* take(OnGrow on_grow) noexcept {
    // acquire: pairs with give_back_remote(): the closer's release of the reservation came first.
    if (!free_) [[unlikely]] {
      free_ = returned_.exchange(nullptr, std::memory_order_acquire);
      if (!free_) {
        if (!grow()) return nullptr;
        on_grow();
      }
    }
    reservation* x = free_;
    free_ = x->next_free;
    x->frozen = nullptr;
    x->abandoned = false;
    return x;
  }
  void give_back(reservation* x) noexcept {
    x->next_free = free_;
    free_ = x;
  }
  // From a thread that closed a hold (crystalline_w).
  void give_back_remote(reservation* x) noexcept {
    reservation* head = returned_.load(std::memory_order_relaxed);
    do x->next_free = head;
    // release: the reservation's deactivation comes before the owner's next use of it.
    while (!returned_.compare_exchange_weak(head, x, std::memory_order_release,
                                            std::memory_order_relaxed));
  }

  template <class F>
  void for_each(F f) const {
    // acquire: pairs with the release store in grow(), so a seal sees a new block built.
    for (const block* b = first_.load(std::memory_order_acquire); b; b = b->next)
      for (const reservation& x : b->res) f(x);
  }
  template <class F>
  void for_each_owned(F f) {
    for (block* b = first_.load(std::memory_order_relaxed); b; b = b->next)
      for (reservation& x : b->res) f(x);
  }

 private:
  struct block {
    reservation res[block_size];
    block* next = nullptr;  // fixed before the block is published
  };
  [[gnu::noinline]] bool grow() noexcept {
    auto* b = new (std::nothrow) block;
    if (!b) return false;
    b->next = first_.load(std::memory_order_relaxed);
    for (reservation& x : b->res) give_back(&x);
    first_.store(b, std::memory_order_release);
    return true;
  }

  std::atomic<block*> first_{nullptr};
  reservation* free_ = nullptr;
  std::atomic<reservation*> returned_{nullptr};
};

// crystalline_w: the claimed helpers of one request, and the reservations frozen for them (see
// the top). holders counts them (with a bias while the requester is still claiming); abandoned is
// the stack of reservations the requester gave up on, or `closed` once the last helper is done.
struct crystalline_hold {
  static constexpr std::uintptr_t closed = 1;
  static constexpr std::int64_t bias = std::int64_t{1} << 40;
  std::atomic<std::int64_t> holders{0};
  std::atomic<std::uintptr_t> abandoned{closed};
  // Read by the closer before it closes (the owner may reuse the hold once it is closed).
  crystalline_hold* older = nullptr;  // the older open hold this one keeps open
  crystalline_pool* pool = nullptr;   // where abandoned reservations go back
  // Owner only.
  std::uint64_t seq = 0;  // creation order
  crystalline_hold* next = nullptr;

  bool open() const noexcept { return abandoned.load(std::memory_order_acquire) != closed; }
  // One more holder, unless the hold is closing (holders reached 0).
  bool join() noexcept {
    std::int64_t h = holders.load(std::memory_order_relaxed);
    while (h > 0)
      if (holders.compare_exchange_weak(h, h + 1, std::memory_order_relaxed)) return true;
    return false;
  }
  // The requester gives x up to this hold; false if it closed meanwhile (x is then not frozen).
  bool abandon(crystalline_reservation& x) noexcept {
    x.abandoned = true;  // before the push: once pushed, x may come back to the pool at any time
    std::uintptr_t head = abandoned.load(std::memory_order_relaxed);
    do {
      if (head == closed) {
        x.abandoned = false;
        return false;
      }
      x.next_free = reinterpret_cast<crystalline_reservation*>(head);
      // release: the closer that takes the stack reads next_free.
    } while (!abandoned.compare_exchange_weak(head, reinterpret_cast<std::uintptr_t>(&x),
                                              std::memory_order_release,
                                              std::memory_order_relaxed));
    return true;
  }
};

// crystalline_w's part of a record.
struct crystalline_request {
  static constexpr std::uint64_t claimed = ~std::uint64_t{0};
  // The request word: {0, tag | 1} while pending, {pointer bits, tag} once answered (the first CAS
  // wins, the requester's own or a helper's); tags are even and grow by 2.
  alignas(core::cache_line) core::atomic_pair word{};
  // The request, released before the word is published.
  std::atomic<const void*> source{nullptr};
  std::atomic<source_loader> loader{nullptr};
  std::atomic<crystalline_reservation*> target{nullptr};
  // This thread as a helper: {requester's record, its pending word's hi} while it helps, {hold,
  // claimed} once the requester claimed it, {0, 0} otherwise.
  alignas(core::cache_line) core::atomic_pair registration{};
  // Odd while this thread helps (from before it reads any request until it is done with the
  // sources), bumped by seq_cst RMWs: what wait_for_source_readers() waits on.
  std::atomic<std::uint64_t> helping{0};
  // Owner only.
  std::uint64_t tag = 0;
  crystalline_hold* holds = nullptr;  // used ones, newest first
  crystalline_hold* spare = nullptr;  // prepared for the next request
  std::uint64_t hold_seq = 0;

  crystalline_request() = default;
  crystalline_request(const crystalline_request&) = delete;
  crystalline_request& operator=(const crystalline_request&) = delete;
  ~crystalline_request() {
    delete spare;
    for (crystalline_hold* h = holds; h;) delete std::exchange(h, h->next);
  }
};
struct no_crystalline_request {};

// K slots of a guard nesting level.
template <unsigned K>
struct crystalline_level {
  crystalline_slot slots[K];
  bool complete = false;  // every slot has a reservation
  std::unique_ptr<crystalline_level> next;
};

}  // namespace detail

template <bool WaitFree, class... Policies>
struct basic_crystalline : core::scheme_base<basic_crystalline<WaitFree, Policies...>> {
  using free_policy = core::find_policy_t<free_policy_kind, batch_free, Policies...>;
  static constexpr unsigned slot_count =
      core::find_policy_t<hp_slots_kind, slots<4>, Policies...>::value;
  static constexpr unsigned era_every =
      core::find_policy_t<era_frequency_kind, era_frequency<64>, Policies...>::value;
  static constexpr unsigned batch_min =
      core::find_policy_t<scan_frequency_kind, scan_frequency<64>, Policies...>::value;
  static constexpr bool wait_free = WaitFree;
  static constexpr unsigned fast_tries =
      core::find_policy_t<wfe_fast_path_kind, fast_path<16>, Policies...>::value;
  static_assert((core::known_kinds<free_policy_kind, hp_slots_kind, era_frequency_kind,
                                   scan_frequency_kind,
                                   wfe_fast_path_kind>::template contains<Policies> &&
                 ...),
                "crystalline takes a free policy, slots<K>, era_frequency<N>, scan_frequency<N> "
                "(the smallest batch) and, crystalline_w only, fast_path<N>");
  static_assert(WaitFree ||
                    !(std::is_same_v<typename Policies::policy_kind, wfe_fast_path_kind> || ...),
                "fast_path<N> is for crystalline_w");

  static constexpr std::string_view name =
      WaitFree ? std::string_view("crystalline_w") : std::string_view("crystalline_l");
  // Batch reference counting (DESIGN.md's family table, as hyaline): a batch goes with the last
  // reservation that held it, so a protection's end frees at once what it alone kept.
  static constexpr reclaim::family family = reclaim::family::reference_counting;
  static constexpr bool bounds_garbage = free_policy::bounded;
  static constexpr unsigned needs = needs_validated_reads;

  // The retire link and deleter, the birth era, and the batch words. For a batch's reference node
  // (its oldest node, never inserted): `link` is the batch's first node, `refs` its counter, and
  // birth_era the barrier phase it counts in once sealed (above the phase bit: the fork generation,
  // forget_thread()). For the others: `link` is the next node of the reservation list it is in
  // (during a seal: the reservation it goes to), `batch` the reference node.
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
  // Owner only (or a barrier that borrowed the record).
  guard_level levels;        // the outermost guard's slots; nested levels chained to it
  std::size_t protections = 0;  // reservations owned by live protections
  // Unsealed, sorted by birth era; a batch's tail (its oldest node) becomes its reference node.
  birth_sorted_batches<crystalline_batch> batches;
  unsigned since_advance = 0;  // allocations since this thread advanced the clock
  bool fenced = false;         // this owner fenced after taking the record (see the header)

  void destroy_garbage() noexcept { batches.take_all().destroy_all(); }
};

}  // namespace detail

template <bool WaitFree, class... Policies>
class basic_crystalline<WaitFree, Policies...>::domain
    : public core::domain_base<
          domain, detail::crystalline_record<free_policy, slot_count, WaitFree>> {
  using record = detail::crystalline_record<free_policy, slot_count, WaitFree>;
  using level = typename record::guard_level;
  using slot = detail::crystalline_slot;
  using reservation = detail::crystalline_reservation;
  using hold = detail::crystalline_hold;
  using base = core::domain_base<domain, record>;
  using claim = core::garbage_claim;
  using holding = claim::scope<record>;
  using era_t = detail::era_t;
  using batch = detail::crystalline_batch;
  static constexpr std::uint64_t inactive = reservation::inactive;
  static constexpr std::int64_t bias = std::int64_t{1} << 62;

 public:
  using guard_type = basic_crystalline::guard;
  static constexpr bool grace_periods = true;
  using base::retire;

  domain() = default;
  ~domain() {
#ifndef NDEBUG
    this->threads_.for_each([](const record& r) {
      assert(r.protections == 0 && "reclaim: domain destroyed while a guard_ptr on it is alive");
    });
#endif
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

  // crystalline_w: requests answered by a helper, and holds made for helpers still reading when
  // their request was answered (how often the slow path's two hand-offs happened).
  std::uint64_t helped_answers() const noexcept {
    return helped_answers_.load(std::memory_order_relaxed);
  }
  std::uint64_t holds_made() const noexcept { return holds_made_.load(std::memory_order_relaxed); }

  // Returns once no helper can still read a source of a protect() that has returned: a container
  // calls it first in its destructor, since its sources (a queue's head and tail, a list's head)
  // live in it (hides core::domain_base's). crystalline_l has no helpers: nothing to wait for.
  // crystalline_w: a helper H may read a request's source after the requester's protect() took
  // its answer and returned (it confirmed the request pending, then was delayed), and only while
  // its `helping` number is odd: H makes it odd by a seq_cst RMW before it reads any request word,
  // and even after its last read of a source. For each record this reads the number (seq_cst)
  // and, if odd, waits until it changes (acquire: pairs with the even RMW, so H's reads of the
  // source happen before what the caller frees next). A round of helping that H begins after our
  // read of its number (its odd RMW later in the number's modification order, so later in S) is
  // later in S than the answer of every request of the container's operations (each answered by
  // a seq_cst CAS before its operation returned, which happens before this call), so H's seq_cst
  // loads of those request words see them answered and it reads no source of theirs. A record
  // registered after our walk read the registry: our fence precedes, in S, the fence its owner
  // runs before it first helps (fence_once), so the same holds. A round that begins after our
  // read is never waited for (no starvation): each record's wait ends at the first change.
  void wait_for_source_readers() const noexcept {
    if constexpr (wait_free) {
      // seq_cst fence: ordered before the fence of any owner of a record our walk misses.
      std::atomic_thread_fence(std::memory_order_seq_cst);
      for (const record* o = this->threads_.head(); o; o = decltype(this->threads_)::next_of(o)) {
        const auto& helping = o->request.helping;
        const std::uint64_t seen = helping.load(std::memory_order_seq_cst);
        if (seen % 2 == 0) continue;
        core::waiter w(core::no_deadline);
        while (helping.load(std::memory_order_acquire) == seen) (void)w.wait();
      }
    }
  }

 private:
  friend class basic_crystalline::guard;
  friend class basic_crystalline::protection;
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
                  "crystalline: nodes derive from crystalline_l<>::node_base (or "
                  "crystalline_w<>::node_base)");
    if (++r.since_advance >= era_every) [[unlikely]] {
      r.since_advance = 0;
      if constexpr (wait_free) help_requests(r);
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

  // A reservation from r's pool, nullptr if none can be allocated.
  reservation* take(record& r) noexcept {
    return r.pool.take([this] {
      reservations_.fetch_add(detail::crystalline_pool::block_size, std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_seq_cst);  // as fence_once()
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
      (void)r.leave();
      throw;
    }
  }
  void close(record& r, level& l) noexcept {
    for (slot& s : l.slots)
      if (s.era != detail::no_era && !release(r, s)) l.complete = false;
    (void)r.leave();
  }

  // The era loop: returns src's pointer once s's reservation holds the era read after it. Under
  // crystalline_w it asks for help after fast_tries tries (AskForHelp false: the lock-free loop).
  template <bool AskForHelp = wait_free, class P>
  P protect(record& r, slot& s, const std::atomic<P>& src) {
    era_t prev = s.era;
    [[maybe_unused]] unsigned tries = fast_tries;
    for (;;) {
      // seq_cst (load and clock): in S after the publication, as the argument at the top needs;
      // the load is also the acquire that pairs with the store or CAS that linked the node.
      P p = src.load(std::memory_order_seq_cst);
      const era_t now = clock_.now();
      if (now == prev) [[likely]]
        return p;
      if constexpr (AskForHelp) {
        if (tries == 0) [[unlikely]]
          return slow_path(r, s, src);
        --tries;
      }
      prev = publish(r, s, now);
    }
  }

  // s's reservation holds era e from now on; the list it held is detached and traversed.
  [[gnu::noinline]] era_t publish(record& r, slot& s, era_t e) {
    if constexpr (wait_free)
      if (s.res->frozen) replace_frozen(r, s);
    // seq_cst DWCAS: the publication in S (see the top); fails only when an insertion changed the
    // list, and then retries with what it read.
    core::word_pair seen{s.era == detail::no_era ? inactive : 0, s.era};
    while (!s.res->word.compare_exchange(seen, core::word_pair{0, e})) {
    }
    s.era = e;
    traverse(r, seen.lo);
    return e;
  }
  // Lets s's reservation go: true if it is released (inactive, still s's), false if it was
  // abandoned to a hold (crystalline_w: s then has none).
  bool release(record& r, slot& s) noexcept {
    const era_t era = std::exchange(s.era, detail::no_era);
    if constexpr (wait_free)
      if (s.res->frozen && s.res->frozen->abandon(*s.res)) {
        s.res = nullptr;
        return false;
      }
    deactivate(r, *s.res, era);
    return true;
  }
  // seq_cst DWCAS: our reads of what the reservation protected come before it, and the
  // traversal's decrements (acq_rel) carry them to whoever frees. `era` is a guess at the era it
  // holds (right unless helpers raised it): one DWCAS when its list is empty.
  void deactivate(record& r, reservation& x, era_t era) noexcept {
    core::word_pair seen{0, era};
    while (!x.word.compare_exchange(seen, core::word_pair{inactive, detail::no_era})) {
    }
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

  // ---- crystalline_w: the slow path, helping and holds (the top says why each step is there)

  // A frozen reservation is not published in: it goes to its hold, and s gets a fresh one. If no
  // fresh one can be allocated, waits for the hold to close instead.
  void replace_frozen(record& r, slot& s) noexcept
    requires wait_free
  {
    hold& h = *s.res->frozen;
    if (reservation* fresh = take(r)) {
      if (h.abandon(*s.res)) {
        s.res = fresh;
        s.era = detail::no_era;
        return;
      }
      r.pool.give_back(fresh);
    } else {
      while (h.open()) std::this_thread::yield();
    }
    s.res->frozen = nullptr;  // its hold closed: an ordinary reservation again
  }

  // Raises q's era to e (keeping its list); returns the era q holds, no_era if inactive.
  static era_t raise(reservation& q, era_t e) noexcept {
    core::word_pair w = q.word.load();
    while (w.lo != inactive && w.hi < e)
      if (q.word.compare_exchange(w, core::word_pair{w.lo, e})) return e;
    return w.lo == inactive ? detail::no_era : w.hi;
  }

  template <class P>
  [[gnu::noinline]] P slow_path(record& r, slot& s, const std::atomic<P>& src)
    requires wait_free
  {
    auto& rq = r.request;
    reservation* q = take(r);
    if (!q || !prepare_hold(r)) [[unlikely]] {
      if (q) r.pool.give_back(q);
      return protect<false>(r, s, src);  // out of memory
    }
    q->word.store(core::word_pair{0, clock_.now()});
    const std::uint64_t tag = rq.tag += 2;
    // release: a helper that acquires these and then finds the request pending read ours.
    rq.source.store(&src, std::memory_order_release);
    rq.loader.store(&detail::load_source<P>, std::memory_order_release);
    rq.target.store(q, std::memory_order_release);
    // Counted before published: a clock advance that reads no request did not need to help us
    // (at most one such advance per thread: its next one sees us).
    requests_.fetch_add(1, std::memory_order_seq_cst);
    const core::word_pair pending{0, tag | 1};
    rq.word.store(pending);
    core::word_pair answer;
    (void)read_for(rq, *q, pending, &detail::load_source<P>, &src, answer);
    requests_.fetch_sub(1, std::memory_order_relaxed);
    claim_helpers(r, pending.hi);
    // q covers the answer: it becomes the slot's reservation, and the slot's old one goes.
    slot old = std::exchange(s, slot{q, q->word.load().hi});
    if (old.era == detail::no_era || release(r, old)) r.pool.give_back(old.res);
    return std::bit_cast<P>(answer.lo);
  }

  // The requester's and its helpers' reads for a pending request: raise q's era to the clock,
  // read the source, and if the clock has not passed that era, CAS the answer in. Returns true if
  // this read answered; either way `answer` ends as the request's answer.
  bool read_for(detail::crystalline_request& rq, reservation& q, core::word_pair pending,
                detail::source_loader load, const void* src, core::word_pair& answer) noexcept
    requires wait_free
  {
    for (;;) {
      const era_t e = raise(q, clock_.now());
      const std::uint64_t p = load(src);
      if (clock_.now() <= e) {
        answer = pending;
        const core::word_pair mine{p, pending.hi - 1};
        if (rq.word.compare_exchange(answer, mine)) {
          answer = mine;
          return true;
        }
        return false;  // answer holds the one that came first
      }
      answer = rq.word.load();
      if (!(answer == pending)) return false;
    }
  }

  // Makes sure r has a hold ready for its next request (a closed one reused, or a new one).
  bool prepare_hold(record& r) noexcept
    requires wait_free
  {
    auto& rq = r.request;
    if (!rq.spare) {
      hold** link = &rq.holds;
      while (*link && (*link)->open()) link = &(*link)->next;
      if (hold* h = *link) {
        *link = h->next;
        r.pool.for_each_owned([h](reservation& x) {
          if (x.frozen == h) x.frozen = nullptr;
        });
        rq.spare = h;
      } else {
        rq.spare = new (std::nothrow) hold;
        if (!rq.spare) return false;
      }
    }
    // Relaxed: a claimed helper reads the hold after the claim's DWCAS (seq_cst).
    rq.spare->holders.store(hold::bias, std::memory_order_relaxed);
    rq.spare->abandoned.store(0, std::memory_order_relaxed);
    return true;
  }

  // After the answer: claims the helpers still registered for this request and, if there are
  // any, freezes every active reservation of r under a hold until they are done.
  void claim_helpers(record& r, std::uint64_t pending_hi) noexcept
    requires wait_free
  {
    auto& rq = r.request;
    hold& h = *rq.spare;
    const auto registered = core::word_pair{reinterpret_cast<std::uint64_t>(&r), pending_hi};
    const auto claim_word =
        core::word_pair{reinterpret_cast<std::uint64_t>(&h), detail::crystalline_request::claimed};
    std::int64_t claimed = 0;
    for (record* o = this->threads_.head(); o; o = decltype(this->threads_)::next_of(o)) {
      core::word_pair w = registered;
      if (o->request.registration.compare_exchange(w, claim_word)) ++claimed;
    }
    if (claimed == 0) return;
    holds_made_.fetch_add(1, std::memory_order_relaxed);
    rq.spare = nullptr;
    h.seq = ++rq.hold_seq;
    h.pool = &r.pool;
    h.older = nullptr;
    // h keeps open the newest older hold that is not closing; that one keeps the older ones.
    std::uint64_t kept_up_to = 0;
    for (hold* g = rq.holds; g; g = g->next)
      if (g->join()) {
        h.older = g;
        kept_up_to = g->seq;
        break;
      }
    h.next = rq.holds;
    rq.holds = &h;
    r.pool.for_each_owned([&](reservation& x) {
      if (x.abandoned || x.word.load().lo == inactive) return;
      if (hold* g = x.frozen; g && g->seq <= kept_up_to && g->open()) return;
      x.frozen = &h;
    });
    // acq_rel: the last holder's decrement closes, whoever it is.
    if (h.holders.fetch_add(claimed - hold::bias, std::memory_order_acq_rel) ==
        hold::bias - claimed)
      close(r, h);
  }

  // Before this thread advances the clock: answer every pending request, marked as helping for
  // wait_for_source_readers() (see there) from before the first request it reads until it is done
  // with the last source.
  void help_requests(record& me) noexcept
    requires wait_free
  {
    if (requests_.load(std::memory_order_seq_cst) == 0) [[likely]]
      return;
    fence_once(me);  // a record registered after a waiter's walk: see wait_for_source_readers()
    // seq_cst RMW: odd before we read a request; in S before our loads of the request words.
    me.request.helping.fetch_add(1, std::memory_order_seq_cst);
    for (record* o = this->threads_.head(); o; o = decltype(this->threads_)::next_of(o))
      if (o != &me) help(me, *o);
    // seq_cst RMW (a release): our reads of the sources happen before a waiter that reads it.
    me.request.helping.fetch_add(1, std::memory_order_seq_cst);
  }

  void help(record& me, record& o) noexcept
    requires wait_free
  {
    auto& rq = o.request;
    const core::word_pair pending = rq.word.load();
    if (!(pending.hi & 1)) return;
    // Registered before the request is confirmed pending: if it still is, the requester finds
    // our registration when it claims, after the answer.
    me.request.registration.store(
        core::word_pair{reinterpret_cast<std::uint64_t>(&o), pending.hi});
    const void* src = rq.source.load(std::memory_order_acquire);
    const detail::source_loader loader = rq.loader.load(std::memory_order_acquire);
    reservation* q = rq.target.load(std::memory_order_acquire);
    core::word_pair answer;
    if (rq.word.load() == pending && read_for(rq, *q, pending, loader, src, answer))
      helped_answers_.fetch_add(1, std::memory_order_relaxed);
    // Done with the source; if the requester claimed us meanwhile, we let its hold go.
    core::word_pair mine = me.request.registration.load();
    while (!me.request.registration.compare_exchange(mine, core::word_pair{0, 0})) {
    }
    if (mine.hi == detail::crystalline_request::claimed)
      release_hold(me, *reinterpret_cast<hold*>(mine.lo));
  }

  void release_hold(record& me, hold& h) noexcept
    requires wait_free
  {
    // acq_rel: our reads of the source happen before the closer releases what h froze.
    if (h.holders.fetch_sub(1, std::memory_order_acq_rel) == 1) close(me, h);
  }
  // The last holder: releases what the requester abandoned, gives it back to its pool, and lets
  // the older hold go.
  void close(record& me, hold& h) noexcept
    requires wait_free
  {
    hold* older = h.older;
    detail::crystalline_pool* pool = h.pool;
    // acquire: pairs with abandon()'s release; after this the owner may reuse h.
    auto* x = reinterpret_cast<reservation*>(
        h.abandoned.exchange(hold::closed, std::memory_order_acq_rel));
    while (x) {
      reservation* next = x->next_free;
      deactivate(me, *x, detail::no_era);  // its era unknown here: the first CAS reads it
      pool->give_back_remote(x);
      x = next;
    }
    if (older) release_hold(me, *older);
  }
  // ---- the retirer's side

  void retire(record& r, core::retired_hook* hook) {
    holding garbage(r);
    r.count_retired(this->gauge_);
    batch& b = add_to_batch(r, as_node(hook));
    if (b.next_attempt == 0) b.next_attempt = batch_size();
    if (b.nodes.size() >= b.next_attempt) [[unlikely]] {
      if (seal(r, b, false))
        b.next_attempt = 0;
    }
  }
  // Adds n to the partial batch of its birth (detail/birth_sorted.hpp) and returns that batch.
  static batch& add_to_batch(record& r, node_base* n) noexcept {
    batch& b = r.batches.for_birth(n->birth_era);
    b.add(n, n->birth_era);
    return b;
  }

  // Seals b, a partial batch of r, and inserts it into the reservations that need it. Without
  // `pad`, gives up (returns false, nothing changed) when the batch has fewer nodes than those
  // reservations, and tries again once it has one more than it needed; with `pad`, allocates
  // fillers, giving up only if that fails. Its walk over the reservations gives r its next
  // threshold, the oldest era reserved (detail/birth_sorted.hpp). Run with r's claim held.
  bool seal(record& r, batch& b, bool pad) noexcept {
    release_forgotten(r);
    adopt(r);
    if (b.nodes.empty()) return true;
    core::scan_timer timer(r.ctr);
    core::counters::add(r.ctr.scans, 1);
    node_base* const ref = as_node(b.nodes.tail());
    const era_t min = b.min_birth;
    // See "Why nothing is freed while a reservation covers it" at the top.
    std::atomic_thread_fence(std::memory_order_seq_cst);

    // The assignment pass: one node per reservation that needs the batch.
    node_base* next = as_node(b.nodes.head());
    core::retired_list pads;
    std::size_t needed = 0;
    bool short_of_nodes = false;
    detail::oldest_reserved oldest(r.batches.old_up_to);
    auto assign = [&](reservation& x) {
      const core::word_pair w = x.word.load();
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
      if (x && insert(*x, n, ref, min)) ++inserted;
    }
    b = batch{};  // the batch belongs to its reservations now
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
    while (core::retired_hook* h = orphans.pop()) (void)add_to_batch(r, as_node(h));
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

  void flush_local(record& r) {
    holding garbage(r);
    release_forgotten(r);
    (void)seal_padded(r);  // out of memory: what stays unsealed waits for the next retires
    r.freeing.drain(r);
  }

  bool wait_for_grace_period(record&, core::deadline d) const {
    return this->wait_for_open_guards(d);
  }

  static void take_garbage(record& r, typename base::gathered& into) noexcept {
    into.unsafe.splice(r.batches.take_all());
    into.safe.splice(r.freeing.take());
  }

  // Everything unsealed (every record's batch, borrowed between its retires, and the orphans) is
  // sealed here, padded; then the barrier waits until every batch sealed before it is freed (two
  // phases of in-flight counts: batches sealed before the flip count in the old one), and frees
  // what the freers left on their free policies' lists.
  bool barrier_locked(record& me, core::deadline d) {
    release_forgotten(me);
    typename base::gathered g;
    bool done = this->gather(me, g, d, [](record& r, typename base::gathered& into) {
      return base::borrow_if_idle(r, r.claim.word, claim::free, claim::lent, into);
    });
    {
      holding garbage(me);
      while (core::retired_hook* h = g.unsafe.pop()) (void)add_to_batch(me, as_node(h));
      if (!seal_padded(me)) done = false;  // out of memory: it stays in our batches
    }
    this->free_now(me, std::move(g.safe));
    refuse_own_protection(me);
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
      if (r->forgotten) continue;
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

  // A barrier waits until every sealed batch is freed. A reservation of the calling thread's own
  // (a guard_ptr outside any guard: inside one the barrier is refused before) with a batch in its
  // list keeps that batch until it is released: the barrier would wait for ever. Named and
  // stopped instead.
  static void refuse_own_protection(record& me) noexcept {
    bool holds = false;
    me.pool.for_each_owned([&](reservation& x) {
      if (x.abandoned) return;
      const std::uint64_t list = x.word.load().lo;
      holds = holds || (list != 0 && list != inactive);
    });
    if (holds)
      core::stop_on_misuse(
          "barrier() would wait for ever: a guard_ptr of the calling thread protects a node "
          "retired before the call; reset it before the barrier");
  }

  // In a child of fork(): r's thread does not exist here (core/registry.hpp). Single-word steps
  // only (that thread may have stopped in the middle of the scheme's own code): under
  // crystalline_w its helping round ends (a container's destruction would wait for it) and a
  // pending request of its is answered with nothing, so that no helper reads its source again.
  // Its reservations, which keep the batches inserted into them (and a barrier waits for every
  // sealed batch), are released later, in release_forgotten(), by the next thread of the child
  // that seals, flushes or runs a barrier: releasing one frees batches, which runs deleters, not
  // for a fork handler to do.
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
    if constexpr (wait_free) {
      auto& rq = r.request;
      const std::uint64_t h = rq.helping.load(std::memory_order_relaxed);
      rq.helping.store(h + (h & 1), std::memory_order_relaxed);
      core::word_pair pending = rq.word.load();
      if ((pending.hi & 1) && rq.word.compare_exchange(pending, core::word_pair{0, pending.hi - 1}))
        requests_.fetch_sub(1, std::memory_order_relaxed);
    }
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
        if (const core::word_pair w = x.word.load(); w.lo != inactive) deactivate(me, x, w.hi);
      });
      if constexpr (wait_free) {
        core::word_pair mine = f->request.registration.load();
        while (!f->request.registration.compare_exchange(mine, core::word_pair{0, 0})) {
        }
        if (mine.hi == detail::crystalline_request::claimed)
          release_hold(me, *reinterpret_cast<hold*>(mine.lo));
      }
    }
  }

  // Thread exit (possibly inside guards): every reservation is released, and the partial batch is
  // sealed (padded), so that nothing waits for this record again; only if the padding cannot be
  // allocated does the batch go to the orphanage, for the next seal to adopt.
  void on_thread_exit(record& r) noexcept {
    holding garbage(r);
    for (level* l = &r.levels; l; l = l->next.get())
      for (slot& s : l->slots)
        if (s.era != detail::no_era && !release(r, s)) l->complete = false;
    // What live guard_ptrs still own (crystalline_w: a frozen one stays with its guard_ptr).
    r.pool.for_each_owned([&](reservation& x) {
      if (x.abandoned || (x.frozen && x.frozen->open())) return;
      if (const core::word_pair w = x.word.load(); w.lo != inactive) deactivate(r, x, w.hi);
    });
    if (!seal_padded(r)) this->orphan(r, r.batches.take_all());
    r.freeing.drain(r);
    r.fenced = false;  // the next owner fences on its first use
    // since_advance is kept: short-lived threads that each allocate fewer than era_frequency
    // nodes still move the clock, through their records.
  }

  detail::era_clock clock_;
  std::atomic<std::size_t> reservations_{0};  // in every record's pool
  // Sealed batches not yet freed, by barrier phase.
  alignas(core::cache_line) std::atomic<std::int64_t> in_flight_[2] = {0, 0};
  std::atomic<unsigned> phase_{0};
  // crystalline_w: requests pending (counted before they are published), and the counters above.
  alignas(core::cache_line) std::atomic<std::int64_t> requests_{0};
  std::atomic<std::uint64_t> helped_answers_{0};
  std::atomic<std::uint64_t> holds_made_{0};
  // Set in a child of fork() that forgot records: their reservations wait for release_forgotten().
  std::atomic<bool> forgotten_pending_{false};
  // Changed only in a child of fork(), while it has one thread (forget_thread()).
  std::uint64_t fork_generation_ = 0;
};

template <bool WaitFree, class... Policies>
class basic_crystalline<WaitFree, Policies...>::guard : public core::guard_base<guard> {
 public:
  static constexpr bool validates = true;
  static constexpr unsigned slot_count = basic_crystalline::slot_count;

  explicit guard(domain& d = basic_crystalline::default_domain())
      : domain_(d), record_(d.threads_.local()), level_(d.open(record_)) {}
  ~guard() {
    this->check_owner();
    domain_.close(record_, level_);
  }
  guard(const guard&) = delete;
  guard& operator=(const guard&) = delete;

  // A node stamped with the current era (hides guard_base::create).
  template <class T, class... Args>
  T* create(Args&&... args) const {
    return domain_.template make<T>(record_, std::forward<Args>(args)...);
  }

  // The era loop on slot `slot`; the container still checks its own validity (the mark).
  template <class P>
  P protect(const std::atomic<P>& src, unsigned slot) {
    assert(slot < slot_count);
    this->check_owner();
    return domain_.protect(record_, level_.slots[slot], src);
  }

 private:
  friend class core::guard_base<guard>;
  friend class basic_crystalline::protection;
  void retire_hook(core::retired_hook* node) { domain_.retire(record_, node); }

  domain& domain_;
  typename domain::record& record_;
  typename domain::level& level_;
};

// One reservation, owned: what a reclaim::guard_ptr holds. Taken from the thread's pool on the
// first protection and given back when the owner is destroyed; reset releases the reservation
// (detaches and traverses its list) and keeps it for the next protect.
template <bool WaitFree, class... Policies>
class basic_crystalline<WaitFree, Policies...>::protection : core::thread_bound {
  using slot = detail::crystalline_slot;

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
        record_(std::exchange(other.record_, nullptr)),
        slot_(std::exchange(other.slot_, slot{})) {}
  protection& operator=(protection&& other) noexcept {
    reset_protection();
    swap(other);
    return *this;
  }
  [[gnu::always_inline]] ~protection() {
    if (!record_) return;
    check_owner();
    give_back(*domain_, *record_, slot_);
  }

  void swap(protection& other) noexcept {
    std::swap(domain_, other.domain_);
    std::swap(record_, other.record_);
    std::swap(slot_, other.slot_);
  }

  template <class P>
  P protect(const std::atomic<P>& src, std::memory_order) {
    own();
    return domain_->protect(*record_, slot_, src);
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
    own();
    const detail::era_t now = domain_->clock_.now();
    if (slot_.era != now) domain_->publish(*record_, slot_, now);
  }

  void reset_protection() noexcept {
    if (slot_.res && slot_.era != detail::no_era) (void)domain_->release(*record_, slot_);
  }

  void take_slot() { own(); }
  bool owns_slot() const noexcept { return slot_.res != nullptr; }

  void retire(core::retired_hook* node) {
    assert(record_ && "reclaim: retire through a protection that never protected");
    check_owner();
    core::garbage_claim::free_policy_step(*record_);
    domain_->retire(*record_, node);
  }

 private:
  void own() {
    check_owner();
    if (!slot_.res) [[unlikely]]
      take();
  }
  [[gnu::noinline]] void take() {
    if (!record_) {
      typename domain::record& r = domain_->threads_.local();
      domain_->fence_once(r);
      slot_.res = &domain_->take_or_throw(r);
      record_ = &r;
      ++r.protections;
    } else {
      slot_.res = &domain_->take_or_throw(*record_);  // the last one went to a hold
    }
  }
  [[gnu::noinline]] static void give_back(domain& d, typename domain::record& r,
                                          slot& s) noexcept {
    if (s.res && (s.era == detail::no_era || d.release(r, s))) r.pool.give_back(s.res);
    --r.protections;
  }

  domain* domain_ = nullptr;
  typename domain::record* record_ = nullptr;
  slot slot_{};
};

}  // namespace reclaim
