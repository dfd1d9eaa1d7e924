// SPDX-License-Identifier: MIT
// crystalline_w's wait-free protect() (schemes/crystalline.hpp): requests, helpers and holds.
//
// crystalline_l's era loop retries while the clock moves, so a reader can starve while others
// allocate. crystalline_w tries fast_path<N> times (default 16, as the paper) and then asks for
// help; threads about to advance the clock answer every pending request first (the paper's scheme,
// as wfe.hpp's), so the request is answered in O(threads) steps. What differs from the paper is how
// the two hand-offs are made safe without the "parent" (the node holding the source), which
// protect(src, slot) does not name; and each thread has one request (it is inside one protect() at
// a time) instead of one per index:
//  - The request reservation. The requester takes a fresh reservation q from its pool, activates it
//    with the current era, and publishes the request: source, loader, q, then the request word
//    {0, tag | 1} (pending). Requester and helpers then each try: raise q's era to the clock (a
//    DWCAS that keeps q's list: q is never detached while the request is pending, and its era only
//    grows), load the source, read the clock; if the clock is <= the era q held before the load,
//    the pointer is covered by q (crystalline.hpp's seal() argues it for "equals"; "<= the era q
//    held before the load" is the same argument) and the first CAS of the request word to
//    {pointer, tag} is the answer. The requester then makes q its slot's reservation and lets the
//    slot's old one go. No batch changes hands: the answer's cover is q itself.
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
// Memory model: the registration, the request word and the claims are DWCAS (seq_cst), which the
// Dekker-style argument above needs; the request's fields are released before the request word and
// acquired after it, and a helper that confirms the request still pending after reading them read
// this request's fields (a later request's are written after this one is answered).
//
// What it bounds beyond crystalline_l: a request reservation's era grows only to the clock while
// its request is pending (a bounded number of steps), and a stalled claimed helper keeps only the
// requester's reservations frozen when it was claimed, at their eras then (a stalled reader's
// share). Memory exhaustion degrades, never breaks: a request that cannot get a reservation or a
// hold retries lock-free; a publication that cannot replace a frozen reservation waits for its
// hold. Progress: helping adds O(threads) rounds to a clock advance while requests are pending.
#pragma once
#include <atomic>
#include <bit>
#include <cstdint>
#include <new>
#include <thread>
#include <utility>

#include "../../core/platform/dwcas.hpp"
#include "../../core/grace.hpp"
#include "../../core/padding.hpp"
#include "crystalline_reservations.hpp"
#include "eras.hpp"
#include "../../core/sync.hpp"

namespace reclaim::detail {

// The claimed helpers of one request, and the reservations frozen for them. holders counts them
// (with a bias while the requester is still claiming); abandoned is the stack of reservations the
// requester gave up on, or `closed` once the last helper is done.
struct crystalline_hold {
  static constexpr std::uintptr_t closed = 1;
  static constexpr std::int64_t bias = std::int64_t{1} << 40;
  core::atomic<std::int64_t> holders{0};
  core::atomic<std::uintptr_t> abandoned{closed};
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
  core::atomic<const void*> source{nullptr};
  core::atomic<source_loader> loader{nullptr};
  core::atomic<crystalline_reservation*> target{nullptr};
  // This thread as a helper: {requester's record, its pending word's hi} while it helps, {hold,
  // claimed} once the requester claimed it, {0, 0} otherwise.
  alignas(core::cache_line) core::atomic_pair registration{};
  // Odd while this thread helps (from before it reads any request until it is done with the
  // sources), bumped by seq_cst RMWs: what wait_for_source_readers() waits on.
  core::atomic<std::uint64_t> helping{0};
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

// The requests, helping and holds of a crystalline domain: a CRTP base of basic_crystalline's
// domain, which names it a friend. The domain provides:
// threads_ (its registry), clock_ (the era clock), requests_ (pending requests), helped_answers_
// and holds_made_ (counters), fence_once(r), take(r) (a reservation from r's pool, nullptr if none),
// protect<false>(r, s, src) (the lock-free era loop), release(r, s) and deactivate(r, x, era).
// Every function but the two counters and wait_for_source_readers() is for crystalline_w only.
template <bool WaitFree, class Domain, class Record>
class crystalline_helping {
  using reservation = crystalline_reservation;
  using hold = crystalline_hold;
  using slot = crystalline_slot;

 public:
  // crystalline_w: requests answered by a helper, and holds made for helpers still reading when
  // their request was answered (how often the slow path's two hand-offs happened).
  std::uint64_t helped_answers() const noexcept {
    return self().helped_answers_.load(std::memory_order_relaxed);
  }
  std::uint64_t holds_made() const noexcept {
    return self().holds_made_.load(std::memory_order_relaxed);
  }

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
    if constexpr (WaitFree) {
      // seq_cst fence: ordered before the fence of any owner of a record our walk misses.
      core::thread_fence(std::memory_order_seq_cst);
      for (const Record* o = self().threads_.head(); o; o = next_of(o)) {
        const auto& helping = o->request.helping;
        const std::uint64_t seen = helping.load(std::memory_order_seq_cst);
        if (seen % 2 == 0) continue;
        core::waiter w(core::no_deadline);
        while (helping.load(std::memory_order_acquire) == seen) (void)w.wait();
      }
    }
  }

 protected:
  // A frozen reservation is not published in: it goes to its hold, and s gets a fresh one. If no
  // fresh one can be allocated, waits for the hold to close instead.
  void replace_frozen(Record& r, slot& s) noexcept
    requires WaitFree
  {
    hold& h = *s.res->frozen;
    if (reservation* fresh = self().take(r)) {
      if (h.abandon(*s.res)) {
        s.res = fresh;
        s.era = no_era;
        return;
      }
      r.pool.give_back(fresh);
    } else {
      while (h.open()) core::yield_now();
    }
    s.res->frozen = nullptr;  // its hold closed: an ordinary reservation again
  }

  template <class P>
  [[gnu::noinline]] P slow_path(Record& r, slot& s, const core::atomic<P>& src)
    requires WaitFree
  {
    Domain& d = self();
    auto& rq = r.request;
    reservation* q = d.take(r);
    if (!q || !prepare_hold(r)) [[unlikely]] {
      if (q) r.pool.give_back(q);
      return d.template protect<false>(r, s, src);  // out of memory
    }
    r.ctr.store_wide(q->word, core::word_pair{0, d.clock_.now()});
    const std::uint64_t tag = rq.tag += 2;
    // release: a helper that acquires these and then finds the request pending read ours.
    rq.source.store(&src, std::memory_order_release);
    rq.loader.store(&load_source<P>, std::memory_order_release);
    rq.target.store(q, std::memory_order_release);
    // Counted before published: a clock advance that reads no request did not need to help us
    // (at most one such advance per thread: its next one sees us).
    d.requests_.fetch_add(1, std::memory_order_seq_cst);
    const core::word_pair pending{0, tag | 1};
    r.ctr.store_wide(rq.word, pending);
    core::word_pair answer;
    (void)read_for(r, rq, *q, pending, &load_source<P>, &src, answer);
    d.requests_.fetch_sub(1, std::memory_order_relaxed);
    claim_helpers(r, pending.hi);
    // q covers the answer: it becomes the slot's reservation, and the slot's old one goes.
    slot old = std::exchange(s, slot{q, r.ctr.load_wide(q->word).hi});
    if (old.era == no_era || d.release(r, old)) r.pool.give_back(old.res);
    return std::bit_cast<P>(answer.lo);
  }

  // Before this thread advances the clock: answer every pending request, marked as helping for
  // wait_for_source_readers() (see there) from before the first request it reads until it is done
  // with the last source.
  void help_requests(Record& me) noexcept
    requires WaitFree
  {
    Domain& d = self();
    if (d.requests_.load(std::memory_order_seq_cst) == 0) [[likely]]
      return;
    d.fence_once(me);  // a record registered after a waiter's walk: see wait_for_source_readers()
    // seq_cst RMW: odd before we read a request; in S before our loads of the request words.
    me.request.helping.fetch_add(1, std::memory_order_seq_cst);
    for (Record* o = d.threads_.head(); o; o = next_of(o))
      if (o != &me) help(me, *o);
    // seq_cst RMW (a release): our reads of the sources happen before a waiter that reads it.
    me.request.helping.fetch_add(1, std::memory_order_seq_cst);
  }

  // Ends the registration of `helper` (me, or a forgotten record released on its behalf): if the
  // requester claimed it meanwhile, its hold is let go, counted on me.
  void unregister(Record& me, Record& helper) noexcept
    requires WaitFree
  {
    core::word_pair mine = me.ctr.load_wide(helper.request.registration);
    while (!me.ctr.cas_wide(helper.request.registration, mine, core::word_pair{0, 0})) {
    }
    if (mine.hi == crystalline_request::claimed)
      release_hold(me, *reinterpret_cast<hold*>(mine.lo));
  }

  // In a child of fork(), for r, whose thread does not exist there (single-word steps only): its
  // helping round ends (a container's destruction would wait for it) and a pending request of its
  // is answered with nothing, so that no helper reads its source again.
  void forget_request(Record& r) noexcept
    requires WaitFree
  {
    auto& rq = r.request;
    const std::uint64_t h = rq.helping.load(std::memory_order_relaxed);
    rq.helping.store(h + (h & 1), std::memory_order_relaxed);
    core::word_pair pending = r.ctr.load_wide(rq.word);
    if ((pending.hi & 1) && r.ctr.cas_wide(rq.word, pending, core::word_pair{0, pending.hi - 1}))
      self().requests_.fetch_sub(1, std::memory_order_relaxed);
  }

 private:
  Domain& self() noexcept { return static_cast<Domain&>(*this); }
  const Domain& self() const noexcept { return static_cast<const Domain&>(*this); }
  static Record* next_of(const Record* o) noexcept {
    return decltype(std::declval<Domain&>().threads_)::next_of(o);
  }

  // Raises q's era to e (keeping its list); returns the era q holds, no_era if inactive. Counted
  // on me.
  static era_t raise(Record& me, reservation& q, era_t e) noexcept {
    core::word_pair w = me.ctr.load_wide(q.word);
    while (w.lo != reservation::inactive && w.hi < e)
      if (me.ctr.cas_wide(q.word, w, core::word_pair{w.lo, e})) return e;
    return w.lo == reservation::inactive ? no_era : w.hi;
  }

  // The requester's and its helpers' reads for a pending request: raise q's era to the clock,
  // read the source, and if the clock has not passed that era, CAS the answer in. Returns true if
  // this read answered; either way `answer` ends as the request's answer. Counted on me.
  bool read_for(Record& me, crystalline_request& rq, reservation& q, core::word_pair pending,
                source_loader load, const void* src, core::word_pair& answer) noexcept
    requires WaitFree
  {
    Domain& d = self();
    for (;;) {
      const era_t e = raise(me, q, d.clock_.now());
      const std::uint64_t p = load(src);
      if (d.clock_.now() <= e) {
        answer = pending;
        const core::word_pair mine{p, pending.hi - 1};
        if (me.ctr.cas_wide(rq.word, answer, mine)) {
          answer = mine;
          return true;
        }
        return false;  // answer holds the one that came first
      }
      answer = me.ctr.load_wide(rq.word);
      if (!(answer == pending)) return false;
    }
  }

  // Makes sure r has a hold ready for its next request (a closed one reused, or a new one).
  bool prepare_hold(Record& r) noexcept
    requires WaitFree
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
  void claim_helpers(Record& r, std::uint64_t pending_hi) noexcept
    requires WaitFree
  {
    Domain& d = self();
    auto& rq = r.request;
    hold& h = *rq.spare;
    const auto registered = core::word_pair{reinterpret_cast<std::uint64_t>(&r), pending_hi};
    const auto claim_word =
        core::word_pair{reinterpret_cast<std::uint64_t>(&h), crystalline_request::claimed};
    std::int64_t claimed = 0;
    for (Record* o = d.threads_.head(); o; o = next_of(o)) {
      core::word_pair w = registered;
      if (r.ctr.cas_wide(o->request.registration, w, claim_word)) ++claimed;
    }
    if (claimed == 0) return;
    d.holds_made_.fetch_add(1, std::memory_order_relaxed);
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
      if (x.abandoned || r.ctr.load_wide(x.word).lo == reservation::inactive) return;
      if (hold* g = x.frozen; g && g->seq <= kept_up_to && g->open()) return;
      if (!RECLAIM_MUTATED(crystalline_w_no_freeze)) x.frozen = &h;
    });
    // acq_rel: the last holder's decrement closes, whoever it is.
    if (h.holders.fetch_add(claimed - hold::bias, std::memory_order_acq_rel) ==
        hold::bias - claimed)
      close(r, h);
  }

  void help(Record& me, Record& o) noexcept
    requires WaitFree
  {
    auto& rq = o.request;
    const core::word_pair pending = me.ctr.load_wide(rq.word);
    if (!(pending.hi & 1)) return;
    // Registered before the request is confirmed pending: if it still is, the requester finds
    // our registration when it claims, after the answer.
    me.ctr.store_wide(me.request.registration,
                      core::word_pair{reinterpret_cast<std::uint64_t>(&o), pending.hi});
    const void* src = rq.source.load(std::memory_order_acquire);
    const source_loader loader = rq.loader.load(std::memory_order_acquire);
    reservation* q = rq.target.load(std::memory_order_acquire);
    core::word_pair answer;
    if (me.ctr.load_wide(rq.word) == pending && read_for(me, rq, *q, pending, loader, src, answer))
      self().helped_answers_.fetch_add(1, std::memory_order_relaxed);
    // Done with the source; if the requester claimed us meanwhile, we let its hold go.
    unregister(me, me);
  }

  void release_hold(Record& me, hold& h) noexcept
    requires WaitFree
  {
    // acq_rel: our reads of the source happen before the closer releases what h froze.
    if (h.holders.fetch_sub(1, std::memory_order_acq_rel) == 1) close(me, h);
  }
  // The last holder: releases what the requester abandoned, gives it back to its pool, and lets
  // the older hold go.
  void close(Record& me, hold& h) noexcept
    requires WaitFree
  {
    hold* older = h.older;
    crystalline_pool* pool = h.pool;
    // acquire: pairs with abandon()'s release; after this the owner may reuse h.
    auto* x = reinterpret_cast<reservation*>(
        h.abandoned.exchange(hold::closed, std::memory_order_acq_rel));
    while (x) {
      reservation* next = x->next_free;
      self().deactivate(me, *x, no_era);  // its era unknown here: the first CAS reads it
      pool->give_back_remote(x);
      x = next;
    }
    if (older) release_hold(me, *older);
  }
};

}  // namespace reclaim::detail
