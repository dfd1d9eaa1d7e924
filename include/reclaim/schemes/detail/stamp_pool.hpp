// SPDX-License-Identifier: MIT
// The Stamp Pool of Stamp-it (Pöter and Träff, section 3 and appendix A.1): the lock-free,
// doubly-linked list of the threads inside a critical region, in the order they entered, that
// gives Stamp-it its amortized constant-time reclamation. schemes/stamp_it.hpp uses it; it is a
// class of its own so that tests can drive it directly.
//
// What it offers. push(b) enters block b (one per thread record, reused) and gives it a stamp:
// stamps are handed out in strictly increasing order, a multiple of stamp_step apart.
// remove(b) takes b out again and says whether b was the block with the lowest stamp (its
// thread was "the last one"). head_stamp() is the next stamp to be handed out; tail_stamp() is a
// stamp that no block in the pool is below, now or later, and every thread that entered with a
// lower stamp has left (that is what lets Stamp-it free a node whose stamp is at most it).
// park(b) leaves b in the pool while its thread is between regions; resume(b) takes the stay up
// again, unless evict_oldest() (any thread) took a parked block out meanwhile.
//
// The list. Two dummy blocks, head and tail, and between them the blocks in the pool. The `prev`
// links run from head to tail, newest to oldest, and are always consistent: stamps strictly
// decrease along them (tail's stamp is the exception: it is the tail stamp above). The `next`
// links run from tail to head and are only hints (they point to a block with a higher stamp, or
// to a block being removed from whose `next` the right one can be found), as in Sundell and
// Tsigas's doubly-linked list with the roles of the two directions swapped. A block enters right
// after head only. It leaves from anywhere: it marks its own `prev` and `next` (the delete mark),
// then unlinks itself from the prev list by a CAS on its predecessor's `prev` (the block whose
// `prev` points to it), helping to unlink any marked predecessor first, then from the next list
// likewise. The two low bits of a stamp flag a block's state: pending_push (its stamp is taken but
// it may not be in the prev list yet) and not_in_list (fully removed); `remove_from_prev_list`,
// `remove_from_next_list`, `step_towards_tail` and `unlink_or_skip_marked` follow Listings 2, 6, 3
// and 8 of the paper, `mark_next` Listing 7 and `update_tail_stamp` Listing 9; the paper's section
// 3.3 argues lock-freedom: every retry of their loops follows some other thread's progress.
//
// ABA. Blocks are reused (a thread enters and leaves many times, and a record passes to later
// threads), so a link may leave a value and come back to it between another thread's read and its
// CAS. Every link therefore carries a version tag, incremented by every change of the link, in
// every bit the block address does not need: blocks are 4096-aligned (12 low bits) and user-space
// addresses fit in 48 bits on x86-64 and AArch64 (16 high bits), so a link is 1 delete mark, 36
// address bits and a 27-bit tag. A CAS can then succeed wrongly only if its link changed exactly
// a multiple of 2^27 (134 million) times between the read and the CAS, every change a push or
// remove of some thread (each a few hundred nanoseconds at least): the reading thread would have
// to be held up for tens of seconds between two adjacent instructions while one link changed 134
// million times and landed exactly on the value it read. The paper uses 17 tag bits. A block
// whose address needs more than 48 bits stops the program with a message (stamp_block()).
//
// Memory orders. Stamps are taken with a seq_cst fetch_add on head's stamp, the one total order
// of region entries, followed by a full fence (see push()). The links are published with release
// and read with acquire wherever a thread goes on to read the block they point to or concludes
// something from its stamp; the comments name the pairs. Beyond the paper's code, the CAS that makes the pool look empty to a
// pending push (update_tail_stamp()) and the loads it depends on are seq_cst: see there.
// Blocks are never freed while the pool is in use (they live in thread records, freed with the
// domain), so a block read from a stale link is always safe to dereference.
#pragma once
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include "../../core/padding.hpp"
#include "../../core/sync.hpp"

namespace reclaim::detail {

using stamp_t = std::uint64_t;

// The state flags in a stamp's two low bits, and the distance between two stamps.
inline constexpr stamp_t not_in_list = 1;   // removed from both lists: the thread left its region
inline constexpr stamp_t pending_push = 2;  // stamp taken, insertion into the prev list pending
inline constexpr stamp_t stamp_step = 4;

// A block's residence (stamp_block::residence): its owner's business (inside a region, or out of
// the pool), parked (in the pool while its thread is between regions, which any thread may end
// by taking it out), or being taken out by another thread (stamp_pool::evict_oldest()).
inline constexpr std::uint32_t owned = 0;
inline constexpr std::uint32_t parked = 1;
inline constexpr std::uint32_t evicting = 2;

struct stamp_block;

// A link between blocks: the delete mark in bit 0, the block address (divided by the alignment)
// in the next 36 bits, the version tag in the top 27.
class block_link {
 public:
  static constexpr unsigned address_bits = 48;
  static constexpr unsigned alignment_bits = 12;
  static constexpr unsigned pointer_bits = address_bits - alignment_bits;
  static constexpr unsigned tag_shift = 1 + pointer_bits;
  static constexpr unsigned tag_bits = 64 - tag_shift;
  static constexpr std::uint64_t delete_mark = 1;
  static constexpr std::uint64_t pointer_mask = ((std::uint64_t{1} << pointer_bits) - 1) << 1;
  static constexpr std::size_t alignment = std::size_t{1} << alignment_bits;

  constexpr block_link() noexcept = default;

  stamp_block* get() const noexcept {
    return reinterpret_cast<stamp_block*>((bits_ & pointer_mask) << (alignment_bits - 1));
  }
  stamp_block* operator->() const noexcept { return get(); }
  bool marked() const noexcept { return (bits_ & delete_mark) != 0; }
  std::uint64_t tag() const noexcept { return bits_ >> tag_shift; }

  // `to` with the tag of `old` plus one and old's delete mark: the value a CAS that expects `old`
  // installs to point elsewhere (or, with old.get(), to change only the tag).
  static block_link successor(stamp_block* to, block_link old) noexcept {
    return block_link(to, old.bits_ & ~pointer_mask);  // the tag wraps within its bits
  }
  // `to`, unmarked, with the tag of `old` plus one: a block's own link, rewritten when it enters.
  static block_link fresh(stamp_block* to, block_link old) noexcept {
    return block_link(to, old.bits_ & ~pointer_mask & ~delete_mark);
  }
  // The same link with the delete mark set (tag unchanged: the mark alone changes the value).
  block_link with_mark() const noexcept {
    block_link l;
    l.bits_ = bits_ | delete_mark;
    return l;
  }

  friend bool operator==(block_link, block_link) noexcept = default;

 private:
  static constexpr std::uint64_t tag_one = std::uint64_t{1} << tag_shift;

  // tag_and_mark: the old link's tag and mark bits; the new tag is one more.
  block_link(stamp_block* to, std::uint64_t tag_and_mark) noexcept
      : bits_((tag_and_mark + tag_one) |
              ((reinterpret_cast<std::uintptr_t>(to) >> (alignment_bits - 1)) & pointer_mask)) {}

  std::uint64_t bits_ = 0;
};

// A thread's entry in the pool (the paper's thread_control_block), or head or tail. Its links and
// stamp are read and changed by every thread that walks past it.
struct alignas(block_link::alignment) stamp_block {
  stamp_block() noexcept {
    const auto address = reinterpret_cast<std::uintptr_t>(this);
    if (address >> block_link::address_bits) {
      std::fputs("reclaim: stamp_it: a stamp block lies above 2^48, where its links cannot encode "
                 "it; this platform's address space is not supported\n",
                 stderr);
      std::abort();
    }
  }
  stamp_block(const stamp_block&) = delete;
  stamp_block& operator=(const stamp_block&) = delete;

  core::atomic<block_link> prev{};
  core::atomic<block_link> next{};
  core::atomic<stamp_t> stamp{not_in_list};
  // On a line of its own: its owner writes it at every region's end and start while parked.
  alignas(core::cache_line) core::atomic<std::uint32_t> residence{owned};
};
static_assert(std::atomic<block_link>::is_always_lock_free);

class stamp_pool {
 public:
  stamp_pool() {
    // relaxed: the pool reaches other threads through whatever shares its owner with them.
    tail_->next.store(block_link::fresh(head_.get(), {}), std::memory_order_relaxed);
    head_->prev.store(block_link::fresh(tail_.get(), {}), std::memory_order_relaxed);
    tail_->stamp.store(stamp_step, std::memory_order_relaxed);
    head_->stamp.store(stamp_step, std::memory_order_relaxed);
  }
  stamp_pool(const stamp_pool&) = delete;
  stamp_pool& operator=(const stamp_pool&) = delete;

  // The next stamp to be handed out: every stamp handed out so far is lower. (A retirer calls
  // it after a full fence: stamp_it.hpp.)
  stamp_t head_stamp() const noexcept { return head_->stamp.load(std::memory_order_seq_cst); }

  // acquire: pairs with the release CAS in update_tail_stamp(), so that the regions of the
  // threads whose leaving let the tail stamp rise happen before what the caller frees.
  stamp_t tail_stamp() const noexcept { return tail_->stamp.load(std::memory_order_acquire); }

  // For a child of fork(), single-threaded: takes b out of the pool on behalf of a thread that
  // may have stopped anywhere in push(b) or remove(b) (stamp_it.hpp). Every step of a removal is
  // one a helper may take too, so running remove(b) again finishes a half-done one. A push stopped
  // after taking its stamp is either in the prev list (its pending flag is cleared, as a helper
  // would, and it is removed) or not: then it never entered, and nothing waits for it.
  void forget(stamp_block& b) noexcept {
    b.residence.store(owned, std::memory_order_relaxed);  // nobody may take it out after us
    const stamp_t stamp = b.stamp.load(std::memory_order_relaxed);
    if (stamp & not_in_list) return;
    if (stamp & pending_push) {
      if (!in_prev_list(b)) return;
      b.stamp.store(stamp + (stamp_step - pending_push), std::memory_order_relaxed);
    }
    (void)remove(b);
  }

  // b, in the pool, stays there while its thread is between regions, keeping its stamp; another
  // thread may take it out meanwhile (evict_oldest()). release: pairs with the acquire CAS there,
  // so that the thread's regions happen before the removal and the frees that follow it.
  void park(stamp_block& b) noexcept { b.residence.store(parked, std::memory_order_release); }

  // b's thread enters a region again: true if b is still in the pool with its stamp (the full
  // fence after that stamp's fetch_add, in push(), orders the new region's reads as it did the
  // first's), false if another thread took it out (b is then out, to be pushed again).
  bool resume(stamp_block& b) noexcept {
    std::uint32_t expected = parked;
    // relaxed: only the word's modification order matters: of this CAS and an evictor's, the
    // first wins, and a block it leaves parked is never taken out.
    if (b.residence.compare_exchange_strong(expected, owned, std::memory_order_relaxed) ||
        RECLAIM_MUTATED(stamp_resume_ignores_eviction))
      return true;
    // acquire: pairs with the release store at the end of evict_oldest(): the removal's writes to
    // b happen before our push rewrites them. A removal is lock-free; this waits for one, once.
    while (b.residence.load(std::memory_order_acquire) != owned) core::yield_now();
    return false;
  }

  // Takes the block that looks oldest out of the pool on its thread's behalf, if that thread is
  // between regions (parked): true if it did. `was_last` says whether the block had the lowest
  // stamp of the pool (as remove()'s result: the tail stamp was raised past it). `taking` holds
  // the block while its removal runs, for forget_eviction().
  bool evict_oldest(bool& was_last, stamp_block*& taking) noexcept {
    // tail's next, the oldest block unless it is being removed (then its residence is not
    // parked, and any parked block may be taken out anyway: it holds nothing). Read by an RMW that
    // changes nothing: a load may return an older link, an empty pool where a block has entered
    // since, and a flush would leave that block parked. acquire: pairs with the release stores
    // and CASes of next links.
    block_link last = tail_->next.load(std::memory_order_relaxed);
    while (!tail_->next.compare_exchange_weak(last, last, std::memory_order_acquire,
                                              std::memory_order_relaxed)) {
    }
    if (last.get() == head()) return false;
    std::uint32_t expected = parked;
    // acquire: pairs with the release store in park() (see there).
    if (!last->residence.compare_exchange_strong(expected, evicting, std::memory_order_acquire,
                                                 std::memory_order_relaxed))
      return false;
    taking = last.get();
    was_last = remove(*taking);
    // release: pairs with the acquire load in resume().
    last->residence.store(owned, std::memory_order_release);
    taking = nullptr;
    return true;
  }

  // For a child of fork(), as forget(): finishes the removal of b that a thread of the parent
  // was making on b's owner's behalf when it stopped (evict_oldest()'s `taking`).
  void forget_eviction(stamp_block& b) noexcept {
    if (b.residence.load(std::memory_order_relaxed) == evicting) forget(b);
  }

  // Whether no block is in the prev list (a snapshot).
  bool looks_empty() const noexcept {
    return head_->prev.load(std::memory_order_acquire).get() == tail_.get();
  }

  // Enters b, which is not in the pool, and gives it the next stamp, returned.
  stamp_t push(stamp_block& b) noexcept {
    stamp_block* const me = &b;
    // release: pairs with the acquire loads of a next link; whoever follows ours sees it whole.
    b.next.store(block_link::fresh(head(), b.next.load(std::memory_order_relaxed)),
                 std::memory_order_release);
    block_link head_prev = head_->prev.load(std::memory_order_relaxed);
    block_link my_prev;
    stamp_t stamp;
    for (;;) {
      const block_link again = head_->prev.load(std::memory_order_relaxed);
      if (again != head_prev) {
        head_prev = again;
        continue;
      }
      // seq_cst: the total order of entries, and in the order S with update_tail_stamp()'s
      // reads of head (see there).
      stamp = head_->stamp.fetch_add(stamp_step, std::memory_order_seq_cst);
      // Below our stamp, above every older one, flagged: our stamp is taken but we may not be in
      // the prev list yet. release: pairs with the acquire loads of stamps in the removals.
      b.stamp.store(stamp - stamp_step + pending_push, std::memory_order_release);
      if (head_->prev.load(std::memory_order_relaxed) != head_prev) continue;
      my_prev = block_link::fresh(head_prev.get(), b.prev.load(std::memory_order_relaxed));
      // release: pairs with the acquire loads of prev links; our prev is set before we are seen.
      b.prev.store(my_prev, std::memory_order_release);
      // seq_cst: publishes our block (release, for whoever follows head's prev to us); and if
      // update_tail_stamp() bumped head's tag after reading head's stamp, we fail, and the
      // failed read follows that bump in S, so our next fetch_add reads a stamp above what it
      // read (see there).
      if (head_->prev.compare_exchange_weak(head_prev, block_link::successor(me, head_prev),
                                            std::memory_order_seq_cst,
                                            std::memory_order_seq_cst))
        break;
    }
    // We are in the prev list: clear pending_push. release: as above.
    b.stamp.store(stamp, std::memory_order_release);
    // Full fence: pairs with the fence before a retirer reads head's stamp (stamp_it.hpp):
    // store-buffering, so that either that read sees our fetch_add (the node's stamp is above
    // ours and waits for us) or our region's reads see the retirer's unlink. A seq_cst RMW alone
    // does not order the region's later, weaker loads in the C++ memory model.
    core::thread_fence(std::memory_order_seq_cst);
    // Point our successor's next (a hint) at us, unless it is being removed or moved on already.
    // acquire: pairs with the release stores and CASes of next links.
    block_link link = my_prev->next.load(std::memory_order_acquire);
    for (;;) {
      if (link.get() == me || link.marked() || b.prev.load(std::memory_order_relaxed) != my_prev)
        break;
      // release: pairs with the acquire loads of next links. acquire on failure: as the load.
      if (my_prev->next.compare_exchange_weak(link, block_link::successor(me, link),
                                              std::memory_order_release,
                                              std::memory_order_acquire))
        break;
    }
    return stamp;
  }

  // Takes b, which is in the pool, out again; true if b had the lowest stamp of the pool (its
  // thread is the last one), in which case the tail stamp has been raised past b's.
  bool remove(stamp_block& b) noexcept {
    // acq_rel: the release publishes this thread's region (everything it read happens before a
    // thread that learns of the removal from a prev link, up to update_tail_stamp()'s CAS and the
    // reclaimers that read the tail stamp); the acquire pairs with the release CASes of the blocks
    // that unlinked themselves by changing our prev.
    block_link prev = mark_link<std::memory_order_acq_rel, std::memory_order_relaxed>(b.prev);
    // acquire (the marking CAS, and the load that finds a helper's mark): the removal starts
    // from the block `next` points to and reads its prev and stamp, so that block must be seen
    // whole. The read synchronizes with the release CAS that installed the link (the pointed
    // block's push, its final loop, or a remove_from_next_list() that swung our next to it); a
    // helper's marking CAS (mark_next()) is an RMW and continues that release sequence. Relaxed,
    // a block that entered for the first time after a new thread made its record could be read
    // before its construction (its atomics uninitialized: a data race), or a reused one with the
    // prev of an earlier stay.
    block_link next =
        RECLAIM_MUTATED(stamp_remove_next_relaxed)
            ? mark_link<std::memory_order_relaxed, std::memory_order_relaxed>(b.next)
            : mark_link<std::memory_order_acquire, std::memory_order_acquire>(b.next);
    if (!remove_from_prev_list(prev, b, next)) remove_from_next_list(prev, b, next);
    const stamp_t stamp = b.stamp.load(std::memory_order_relaxed);
    // release: a thread that reads the flag (acquire loads of stamps) sees b fully removed.
    b.stamp.store(stamp + not_in_list, std::memory_order_release);
    const bool was_last = b.prev.load(std::memory_order_relaxed).get() == tail_.get();
    // The blocks between tail and head have strictly increasing stamps: stamp + stamp_step is a
    // guess no higher than the stamp of any block left.
    if (was_last) update_tail_stamp(stamp + stamp_step);
    return was_last;
  }

 private:
  stamp_block* head() const noexcept { return head_.get(); }

  bool in_prev_list(const stamp_block& b) const noexcept {
    for (stamp_block* z = head_->prev.load(std::memory_order_acquire).get(); z != tail_.get();
         z = z->prev.load(std::memory_order_acquire).get())
      if (z == &b) return true;
    return false;
  }

  // Sets the delete mark of `link` and returns its value before (unmarked unless a helper
  // marked it first: helpers mark a block's next, never its prev). Success: the marking CAS's
  // order; Read: the load's and a failed CAS's, either of which may return a value a helper
  // marked. Template arguments, so that every order is a constant wherever the call is compiled.
  template <std::memory_order Success, std::memory_order Read>
  static block_link mark_link(core::atomic<block_link>& link) noexcept {
    block_link value = link.load(Read);
    for (;;) {
      if (value.marked() || link.compare_exchange_weak(value, value.with_mark(), Success, Read))
        return value;
    }
  }

  // Sets the delete mark of block's next as long as block's stamp is still `stamp` (then true);
  // false once block has been removed (and perhaps entered again).
  static bool mark_next(stamp_block* block, stamp_t stamp) noexcept {
    // acquire: pairs with the release store in push(), so that if block entered again since, the
    // stamp load below sees its new stamp (or a later one) and the loop ends.
    block_link link = block->next.load(std::memory_order_acquire);
    while (block->stamp.load(std::memory_order_relaxed) == stamp) {
      // acquire (on failure as the load above; on success only because a failure order may
      // not be stronger, which costs nothing where it matters: x86's CAS is a full barrier).
      if (link.marked() ||
          block->next.compare_exchange_weak(link, link.with_mark(), std::memory_order_acquire,
                                            std::memory_order_acquire))
        return true;
    }
    return false;
  }

  // `next` is marked for deletion (its prev link next_prev is): with a valid `last` (the block
  // whose prev is `next`), help unlink it from the prev list and step back to `last`; without,
  // step towards head along next's next link, from where the prev list leads back to it. True if
  // it did either (the caller starts its loop again).
  static bool unlink_or_skip_marked(block_link& next, block_link& last, block_link next_prev,
                                    stamp_t next_stamp) noexcept {
    if (!next_prev.marked()) return false;
    if (last.get() != nullptr && mark_next(next.get(), next_stamp) &&
        last->prev.load(std::memory_order_relaxed) == next) {
      // release: pairs with the acquire loads of prev links (the unlink is a removal step that
      // happens before whatever a reader of the new link concludes from it).
      block_link expected = next;
      last->prev.compare_exchange_strong(expected, block_link::successor(next_prev.get(), next),
                                         std::memory_order_release, std::memory_order_relaxed);
    }
    step_back(next, last);
    return true;
  }

  // next is not (or perhaps not yet) in the prev list: back to `last` (next's successor towards
  // head) if we have it, or along next's own next link.
  static void step_back(block_link& next, block_link& last) noexcept {
    if (last.get() != nullptr) {
      next = last;
      last = {};
    } else {
      // acquire: pairs with the release stores and CASes of next links.
      next = next->next.load(std::memory_order_acquire);
    }
  }

  // Moves `next` one block towards tail (to next_prev, the block its prev points to), keeping
  // the old one in `last`. If next_prev is in the prev list (we came to it through an unmarked
  // prev link) but still flags pending_push, its push has not cleared the flag yet: help clear it,
  // or the caller, which skips pending blocks, would step back and forth for ever.
  static void step_towards_tail(block_link next_prev, block_link& next, block_link& last) noexcept {
    // acquire: pairs with the release stores of stamps in push().
    const stamp_t next_prev_stamp = next_prev->stamp.load(std::memory_order_acquire);
    if ((next_prev_stamp & pending_push) &&
        next_prev == next->prev.load(std::memory_order_relaxed)) {
      stamp_t expected = next_prev_stamp;
      const stamp_t cleared = next_prev_stamp + (stamp_step - pending_push);
      // relaxed: the stamp only changes its flag; whoever reads it learns nothing more.
      if (!next_prev->stamp.compare_exchange_strong(expected, cleared, std::memory_order_relaxed) &&
          expected != cleared)
        return;  // next_prev was removed meanwhile (and perhaps entered again): stay where we are
    }
    last = next;
    next = next_prev;
  }

  // Unlinks b from the prev list: finds the block whose prev is b (walking from b's next, the
  // hint, towards tail, unlinking marked blocks met on the way) and swings its prev to b's
  // predecessor `prev` (the first unmarked block towards tail). Returns true if b turned out to be
  // removed from both lists already (by helpers); false with `prev` and `next` where
  // remove_from_next_list() goes on.
  bool remove_from_prev_list(block_link& prev, stamp_block& b, block_link& next) noexcept {
    const stamp_t my_stamp = b.stamp.load(std::memory_order_relaxed);
    block_link last{};
    for (;;) {
      if (next.get() == prev.get()) {  // nothing between: b is out of the prev list
        next = b.next.load(std::memory_order_relaxed);
        return false;
      }
      // acquire: pairs with the acq_rel CAS by which prev's owner marked its prev (remove()).
      // Its push cleared pending_push before that, so if we see the mark, the stamp read next is
      // the cleared stamp of the stay being ended, or later. Relaxed, it could be the pending one
      // (prev's prev read from the mark, its stamp from before the clearing): mark_next() below
      // would then see the stamp change, conclude that prev was removed, and b would leave with
      // its predecessor's prev still pointing to it (NotInList set, still in the prev list),
      // where every later removal steps back and forth between head and b for ever.
      const block_link prev_prev = prev->prev.load(
          RECLAIM_MUTATED(stamp_prev_mark_relaxed) ? std::memory_order_relaxed
                                                   : std::memory_order_acquire);
      const stamp_t prev_stamp = prev->stamp.load(std::memory_order_relaxed);
      // prev was removed (and perhaps entered again, with a higher stamp): b went with it.
      if (prev_stamp > my_stamp || (prev_stamp & not_in_list)) return true;
      if (prev_prev.marked()) {
        // prev is being removed: help mark its next, then skip it.
        if (!mark_next(prev.get(), prev_stamp)) return true;  // it was removed: b went with it
        // acquire: pairs with the release stores and CASes of prev links: the removal steps of
        // the blocks we skip happen before the reclamation that follows ours.
        prev = prev->prev.load(std::memory_order_acquire);
        continue;
      }
      // A consistent pair of next's prev and stamp: a prev read after a change of stamp could
      // belong to a later stay of next in the list. acquire (both): pairs with the release
      // stores and CASes of prev links and of stamps.
      const block_link next_prev = next->prev.load(std::memory_order_acquire);
      const stamp_t next_stamp = next->stamp.load(std::memory_order_acquire);
      if (next_prev != next->prev.load(std::memory_order_relaxed)) continue;
      if (next_stamp < my_stamp) {  // next is older than b: b is out of the prev list
        next = b.next.load(std::memory_order_relaxed);
        return false;
      }
      if (next_stamp & (not_in_list | pending_push)) {
        step_back(next, last);  // next is not (or perhaps not yet) in the prev list
        continue;
      }
      if (unlink_or_skip_marked(next, last, next_prev, next_stamp)) continue;
      if (next_prev.get() != &b) {
        step_towards_tail(next_prev, next, last);
        continue;
      }
      // next is b's predecessor: unlink b. release: pairs with the acquire loads of prev links
      // (b's region happens before whoever walks over the new link and frees what it allows).
      block_link expected = next_prev;
      if (next->prev.compare_exchange_strong(expected, block_link::successor(prev.get(), next_prev),
                                             std::memory_order_release, std::memory_order_relaxed))
        return false;
    }
  }

  // Unlinks b from the next list: finds `next`, the last unmarked block newer than b, and `prev`,
  // the first unmarked block at most as new as b (both along the prev list), so that next's prev
  // is prev, and swings prev's next from b to next. If prev was marked meanwhile, goes on to help
  // remove it, so that "my successor is fully removed" keeps implying "I am".
  void remove_from_next_list(block_link prev, stamp_block& removed, block_link next) noexcept {
    const stamp_t my_stamp = removed.stamp.load(std::memory_order_relaxed);
    block_link last{};
    for (;;) {
      // next first: it must be in the list before we take the link we are about to change.
      // acquire (both): as in remove_from_prev_list().
      const block_link next_prev = next->prev.load(std::memory_order_acquire);
      const stamp_t next_stamp = next->stamp.load(std::memory_order_acquire);
      if (next_prev != next->prev.load(std::memory_order_relaxed)) continue;
      if (next_stamp & (not_in_list | pending_push)) {
        step_back(next, last);
        continue;
      }
      // acquire: pairs with the release stores and CASes of next links.
      const block_link prev_next = prev->next.load(std::memory_order_acquire);
      const stamp_t prev_stamp = prev->stamp.load(std::memory_order_relaxed);
      // prev was removed (stamps are strictly ordered): `removed` went with it.
      if (prev_stamp > my_stamp || (prev_stamp & not_in_list)) return;
      if (prev_next.marked()) {
        // acquire: as in remove_from_prev_list(), the removals we step over happen before.
        prev = prev->prev.load(std::memory_order_acquire);
        continue;
      }
      if (next.get() == prev.get()) return;
      if (unlink_or_skip_marked(next, last, next_prev, next_stamp)) continue;
      if (next_prev.get() != prev.get()) {
        step_towards_tail(next_prev, next, last);
        continue;
      }
      if (next_stamp <= my_stamp || prev_next.get() == next.get()) return;
      block_link expected = prev_next;
      // release: pairs with the acquire loads of next links.
      if (next->prev.load(std::memory_order_relaxed) == next_prev &&
          prev->next.compare_exchange_weak(expected, block_link::successor(next.get(), prev_next),
                                           std::memory_order_release,
                                           std::memory_order_relaxed) &&
          !next->next.load(std::memory_order_relaxed).marked())
        return;
    }
  }

  // Raises the tail stamp to the stamp of the block now oldest, or to `guess` (the removed last
  // block's stamp + stamp_step, no higher than any block left) where that block is not plain to
  // see. If the pool looks empty, head's stamp would do, but a push that took its stamp before
  // we read head's and has not entered the prev list yet would then enter below the tail stamp:
  // bumping the tag of head's prev makes that push's CAS fail and take a new stamp. We do it only
  // when head's stamp is worth it (more than one step past the guess), since it disturbs pushes.
  void update_tail_stamp(stamp_t guess) noexcept {
    stamp_t stamp = guess;
    // acquire (both): pairs with the release stores and CASes of next and prev links.
    const block_link last = tail_->next.load(std::memory_order_acquire);
    block_link last_prev = last->prev.load(std::memory_order_acquire);
    // seq_cst: if `last` is head, this read precedes the tag CAS below in S, and a push whose CAS
    // then fails takes its new stamp (seq_cst fetch_add) after both: above what we read.
    const stamp_t last_stamp = last->stamp.load(std::memory_order_seq_cst);
    if (last_stamp > stamp && last_prev.get() == tail_.get() &&
        tail_->next.load(std::memory_order_relaxed) == last) {
      if (last.get() != head()) {
        stamp = last_stamp;
      } else if (stamp + stamp_step < last_stamp &&
                 // seq_cst: in S after our read of head's stamp, before the failing CAS of a
                 // pending push (coherence) and so before its new fetch_add.
                 head_->prev.compare_exchange_strong(last_prev,
                                                     block_link::successor(last_prev.get(),
                                                                           last_prev),
                                                     std::memory_order_seq_cst,
                                                     std::memory_order_relaxed)) {
        stamp = last_stamp;
      }
    }
    stamp_t tail_stamp = tail_->stamp.load(std::memory_order_relaxed);
    // release: pairs with the acquire load in tail_stamp(); the regions that left before (their
    // removals, acquired above) happen before the frees this allows.
    while (tail_stamp < stamp && !tail_->stamp.compare_exchange_weak(
                                     tail_stamp, stamp, std::memory_order_release,
                                     std::memory_order_relaxed)) {
    }
  }

  const std::unique_ptr<stamp_block> head_ = std::make_unique<stamp_block>();
  const std::unique_ptr<stamp_block> tail_ = std::make_unique<stamp_block>();
};

}  // namespace reclaim::detail
