// SPDX-License-Identifier: MIT
// token_ebr: Token-EBR, epochs defined by a token passed around a ring of threads (paper 001,
// section 4), in the paper's four variants:
//   token_naive<>       on receipt: free the oldest bag, rotate the bags, then pass the token;
//   token_pass_first<>  on receipt: rotate the bags, pass the token, then free the oldest bag;
//   token_periodic<>    pass first, and while freeing check every K frees (check_every<K>,
//                       default 100) whether the token came back, and if so pass it on at once;
//   token_af<>          pass first, and the oldest bag goes to the amortized free policy
//                       (token_pass_first<amortized_free<1>> is the same type).
//
// What it is. The ring is the domain's thread records in registry order (head to tail, then the
// head again). A thread keeps three bags: current (what it retires), previous and oldest. When the
// token reaches it, the token has been round the whole ring twice since the oldest bag was the
// current one, so every node in it is safe: it frees that bag, the bags move down one place, and
// the token moves on. stats().epochs counts completed rounds: passes of the token from the tail of
// the ring back to its head (not receipts).
//
// When to use it. Short operations and jemalloc/tcmalloc: token_af is the paper's fastest scheme.
// The three batch variants exist to reproduce the paper's Table 4 and Figures 6-8 (garbage pile-up:
// a thread that frees a large bag holds the token back), not for production use.
// Garbage is NOT bounded: a thread stalled inside an operation keeps the token (once a round has
// begun after its operation did) and every thread's bags grow until it resumes. A thread between
// operations (or exited) never holds the token and is skipped, so an idle thread stops nothing; so
// is a thread whose operation began in the current round, so a thread preempted in the middle of
// an operation holds the token only if it has not run since the round began (oversubscription).
//
// Needs from a container: only the start and end of each operation (the guard).
// Progress: lock-free operations. Reclamation can be blocked by a thread stalled in an operation.
// end() is lock-free, not wait-free: it serves the token again each time it comes back while the
// thread is still active (each time a real receipt whose bags shrink, so in practice once or twice).
//
// Differences from the paper.
//  - The paper's threads check the token at the start of each operation and must all run
//    operations for the token to move: one idle thread stops the ring. Ours announce themselves
//    active for the length of an operation, with the round count they read at its start (an
//    acq_rel exchange at the start, a release CAS at the end: two RMWs per operation where the
//    paper has a load and debra one RMW). The token skips a record that is not active, and one
//    that is active in an operation that began in the current round; it waits only at a record
//    whose operation began in an earlier round. A token that arrives during an operation is noticed
//    and served at that operation's end (the paper: at the start of the next one); a token with no
//    record to go to is parked in the domain, and a thread picks it up at the start of the
//    pick_up_every-th operation (32) that finds it parked. The paper's ring of busy threads moves
//    the token at every operation; ours, left to itself (a ring of one or two threads, or of
//    threads whose operations all began in the current round), would go round and park at every
//    operation too, and every start of an operation would then miss the line of the round count
//    and the parking (measured: token_af 0.34x none at 2 threads, where debra, which advances its
//    epoch after checking every thread over several operations, is 0.86x). Waiting at the parking
//    makes a round last at least pick_up_every operations of some thread, as debra's
//    check_every<20> does an epoch; between pick-ups an operation's start and end touch only a
//    read-mostly line and its own state. The wait delays frees only (three rounds of garbage,
//    about 3 x 32 retires per thread in a ring of one); synchronize(), barrier() and flush() pick
//    the token up at once.
//  - Three bags and two laps, where the paper has two bags and one lap: the price of skipping
//    operations of the current round (argument below). Without that skip, at 64 threads on 2
//    cores the token waited at nearly every hop for a preempted thread to be scheduled again, and
//    token_af freed about 1% of what it retired in a run; with it, a round lasts about one turn of
//    the scheduler, as an epoch of debra does.
//  - The periodic check really runs between frees (the published artifact never reaches it), and
//    the token is handed over with release/acquire RMWs, never plain stores.
//  - Exited threads' bags go to the orphanage stamped with the round count, and whoever receives
//    the token three rounds later frees them (orphan_safe()).
//
// Why a node in the oldest bag is safe (C++ memory model). A lap of X is the token's way from one
// pass of X to X's next receipt. Every lap visits every record (parking needs a whole loop of the
// ring, below) and contains a wrap (an RMW on rounds_ from the tail to the head; a loop contains
// one). Let X retire n (after its unlink) before its receipt k; n is in X's oldest bag from receipt
// k+2 on, where it is freed. Lap k (pass k to receipt k+1) contains a wrap W, after pass k. In lap
// k+1, after W, every record Z other than X was visited (every hop is a release RMW read by an
// acquire, so X's pass k happens before each later step) and either:
//  (a) handed the token while active, and passed it on at the end of that operation or later:
//      Z's reads before its pass happen before its release pass, hence before X's receipt k+2 and
//      the free; Z's reads after its receipt (an acquire) see the unlink of n (write-read
//      coherence), so they cannot reach n; or
//  (b) skipped while not active, by an acq_rel RMW (a CAS writing the value it read) on Z's state.
//      Z's operations are bracketed by RMWs on the same word (begin: acq_rel exchange; end:
//      release CAS), so in its modification order the skip falls between two of them: the
//      operation before it ended with a release that the skip reads (Z's reads happen before the
//      free), and the next one starts with an exchange that reads the skip or a later RMW of its
//      release sequence (all writes between are skips), so the unlink happens before Z's next
//      reads; or
//  (c) skipped while active in an operation that announced the round r current at the visit, read
//      by an acquire load of rounds_ at its start: that load read the wrap to r (or an RMW of its
//      release sequence), which is W or later, so the unlink happens before the operation's reads;
//      and the visit's acquire load read the release exchange that began it, so Z's earlier
//      operations happen before the free.
//  One lap is not enough: a visit (c) in lap k may see an operation that began in the round of
//  pass k, before it. Records pushed on the registry after a pass read the head are not visited
//  in that round. Every round passes the tail once, and that wrap is an RMW on rounds_; a new
//  record's first operation makes an RMW on rounds_ before its reads (join_ring()). If the join
//  comes first in rounds_'s order, the wrap reads it (acquire), the record's push happens before
//  the wrap and the pass's reading of the head, and it is visited; if the wrap comes first, the
//  join reads it, and the unlink (before X's pass, before the wrap) happens before the new
//  thread's reads.
//  A parked token is parked only by a thread whose pass went all the way round to itself: the whole
//  ring was covered (and a wrap made) after that thread's receipt, which came after every other
//  thread's last pass, so whoever picks it up may treat it as a receipt.
//
// Why there is exactly one token. It starts parked (parked_ == true). It is always in exactly one
// of three places: parked; the token bit of one record's state, set only while that record is
// active; or the hands of one thread (between taking it and passing it). Each move is made by the
// thread that has it in hand: pass() sets a bit with a CAS that succeeds only on an active record
// without a bit, or stores parked_; the thread whose bit is set is the only writer of its state
// while the bit is there (passers touch a state only while they hold the token, and skip-CASes
// expect an inactive state), so it takes the token by clearing its own bit; picking it up from the
// parking is an exchange, which only one thread wins. No step copies the token, so there is one.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "../concepts.hpp"
#include "../core/domain.hpp"
#include "../core/policy.hpp"
#include "../core/region_guard.hpp"
#include "../core/timeline.hpp"
#include "../free/amortized.hpp"
#include "../free/batch.hpp"
#include "../policies.hpp"
#include "../core/sync.hpp"

namespace reclaim {

// In which order a thread that receives the token frees its oldest bag and passes the token.
namespace token_order {
struct free_then_pass {
  static constexpr bool passes_first = false;
};
struct pass_then_free {
  static constexpr bool passes_first = true;
};
}  // namespace token_order

namespace detail {
using token_no_check = core::value_policy<check_kind, unsigned, 0>;
}  // namespace detail

template <class Order, class... Policies>
struct token_ebr : core::scheme_base<token_ebr<Order, Policies...>> {
  // Its free policy, as given in Policies... or batch_free (an amortized one makes token_af).
  using free_policy = core::find_policy_t<free_policy_kind, batch_free, Policies...>;
  // Frees between two looks for the token while a bag is freed; 0: no look.
  static constexpr unsigned frees_per_check =
      core::policy_value<detail::token_no_check, Policies...>;
  // A parked token is picked up at the start of the pick_up_every-th operation of a thread that
  // finds it parked (domain::begin(); "Differences from the paper" above).
  static constexpr unsigned pick_up_every = 32;
  static constexpr bool frees_in_batches = std::is_same_v<free_policy, batch_free>;
  static_assert((core::known_kinds<free_policy_kind, check_kind>::template contains<Policies> &&
                 ...),
                "token_ebr takes a free policy and check_every<K>");
  static_assert(Order::passes_first || frees_in_batches,
                "with an amortized free policy nothing is freed on receipt: use token_af");
  static_assert(frees_per_check == 0 || (Order::passes_first && frees_in_batches),
                "check_every applies to a batch freed after passing (token_periodic)");

  // Its name in the lab and in messages (the variant that Order and its policies make), and what it
  // is (concepts.hpp): an epoch scheme whose garbage is unbounded and which needs nothing of a
  // container.
  static constexpr std::string_view name = !Order::passes_first ? "token_naive"
                                           : !frees_in_batches  ? "token_af"
                                           : frees_per_check    ? "token_periodic"
                                                                : "token_pass_first";
  static constexpr reclaim::family family = reclaim::family::epoch;
  static constexpr bool bounds_garbage = false;
  static constexpr unsigned needs = needs_nothing;

  class domain;
  class guard;
  // What a reclaim::guard_ptr holds: a share in the thread's operation (core/region_guard.hpp).
  using protection = core::region_hold<domain>;
};

// The two orders: token_naive frees its oldest bag, then passes the token; token_pass_first
// passes the token first.
template <class... Policies>
using token_naive = token_ebr<token_order::free_then_pass, Policies...>;
template <class... Policies>
using token_pass_first = token_ebr<token_order::pass_then_free, Policies...>;
// Policies named by the user come first, so token_periodic<check_every<10>> checks every 10.
template <class... Policies>
using token_periodic = token_ebr<token_order::pass_then_free, Policies..., check_every<100>>;
template <class... Policies>
using token_af = token_ebr<token_order::pass_then_free, Policies..., amortized_free<1>>;

namespace detail {
template <class FreePolicy>
struct token_record : core::thread_record<FreePolicy> {
  // A record's state: active while its thread is inside an operation (or serving the token),
  // with the round count read at the operation's start above round_shift; token while the token
  // waits there (only ever on an active record); fresh until the record's first operation (see
  // join_ring()); lent while a barrier holds the garbage of the (inactive) record; exiting while
  // its thread hands its garbage over at exit. An inactive record's state has no round: 0 when
  // idle.
  static constexpr std::uint64_t active_bit = 1, token_bit = 2, fresh_bit = 4, lent_bit = 8,
                                 exiting_bit = 16;
  static constexpr unsigned round_shift = 5;
  static constexpr unsigned orphan_batches = 3;

  static constexpr std::uint64_t active_in(std::uint64_t round) noexcept {
    return active_bit | (round << round_shift);
  }
  static constexpr std::uint64_t round_of(std::uint64_t state) noexcept {
    return state >> round_shift;
  }

  // Written by passers (the token, skips) and the owner.
  alignas(core::cache_line) core::atomic<std::uint64_t> state{fresh_bit};
  // Owner only: the state its current operation announced, and the bags, newest first.
  alignas(core::cache_line) std::uint64_t announced = 0;
  // Owner only: the operations that may still find the token parked before this thread picks it
  // up (begin()); 1 for a thread's first.
  unsigned pick_up_countdown = 1;
  // Whether the token is in the owner's hand: holding (taken off the state or picked up, not yet
  // passed on), or moving (being picked up or passed on: in hand, or already elsewhere). Written
  // by the owner, read only in a child of fork(), where the owner may have stopped in between
  // (forget_thread()); compiler fences keep it in program order with the token's atomic moves.
  enum class hand : std::uint8_t { empty, holding, moving };
  hand token_hand = hand::empty;
  core::retired_list current, previous, oldest;

  void destroy_garbage() noexcept {
    current.destroy_all();
    previous.destroy_all();
    oldest.destroy_all();
  }
};
}  // namespace detail

// One Token-EBR instance's shared state: the token's round, the thread records with their bags,
// and the garbage (core/domain.hpp). default_domain() is the one containers use unless given
// another.
template <class Order, class... Policies>
class token_ebr<Order, Policies...>::domain
    : public core::domain_base<domain, detail::token_record<free_policy>> {
  using record = detail::token_record<free_policy>;
  using base = core::domain_base<domain, record>;
  static constexpr std::uint64_t active_bit = record::active_bit, token_bit = record::token_bit,
                                 fresh_bit = record::fresh_bit, lent_bit = record::lent_bit,
                                 exiting_bit = record::exiting_bit;

 public:
  // Its scheme's guard, and it offers synchronize() and barrier() (concepts.hpp's grace_periods).
  using guard_type = token_ebr::guard;
  static constexpr bool grace_periods = true;
  using base::retire;  // domain.retire(node[, deleter]) from any thread

  ~domain() { this->shutdown(); }

  // For tests: the places where the token rests (parked, or a record's token bit). While no thread
  // is inside an operation, this is exactly 1.
  std::size_t tokens_at_rest() const noexcept {
    std::size_t n = parked_.load(std::memory_order_acquire) ? 1 : 0;
    this->threads_.for_each([&](const record& r) {
      n += (r.state.load(std::memory_order_acquire) & token_bit) != 0;
    });
    return n;
  }

 private:
  friend class core::region_hold<domain>;
  friend base;

  // eager: pick up a parked token now (synchronize(), barrier(), flush()), not at the
  // pick_up_every-th operation that finds it parked.
  record& begin(record& r, bool eager = false) {
    if (r.enter() != 0) return r;
    // acquire: pairs with the wraps (RMWs on rounds_), so that a passer that skips us as active in
    // this round (argument (c)) knows our reads come after the wrap. Same line as parked_.
    r.announced = record::active_in(rounds_.load(RECLAIM_MUTATED(token_round_relaxed)
                                                     ? std::memory_order_relaxed
                                                     : std::memory_order_acquire));
    // acquire: pairs with the release part of a skip CAS in pass(), so what the passer knew (the
    // unlinks of nodes it is about to let be freed) happens before this operation's reads;
    // release: pairs with the acquire load in pass() of a passer that skips us as active in this
    // round, so our earlier operations' reads happen before its frees. An RMW, not a store: a skip
    // is ordered before or after it in the state's modification order, and so is a barrier's
    // borrowing CAS (thread_record::try_borrow).
    std::uint64_t was = r.state.exchange(r.announced, RECLAIM_MUTATED(token_begin_relaxed)
                                                          ? std::memory_order_relaxed
                                                          : std::memory_order_acq_rel);
    if (was & (fresh_bit | lent_bit)) [[unlikely]] first_or_lent(r, was);
    this->answer_handover(r);  // a barrier that could not borrow us asks
    if (parked_.load(std::memory_order_relaxed) && (eager || --r.pick_up_countdown == 0))
      [[unlikely]] pick_up(r);
    r.freeing.on_operation(r);
    return r;
  }

  void end(record& r) noexcept {
    if (!r.leave()) return;
    std::uint64_t expected = r.announced;
    // release: this operation's reads happen before a skip CAS (acquire) that finds us inactive.
    // acquire on failure: pairs with the release CAS in pass() that left the token here. A CAS, not
    // a store: a store could erase a token handed over at this moment.
    if (r.state.compare_exchange_strong(expected, 0,
                                        RECLAIM_MUTATED(token_end_relaxed)
                                            ? std::memory_order_relaxed
                                            : std::memory_order_release,
                                        std::memory_order_acquire)) [[likely]]
      return;
    end_holding_token(r);
  }

  void retire(record& r, core::retired_hook* node) {
    r.current.push(node);
    r.count_retired(this->gauge_);
  }

  // The token arrived during the operation: serve it while still active, and again each time it
  // returns before we manage to go inactive.
  [[gnu::noinline]] void end_holding_token(record& r) noexcept {
    std::uint64_t expected;
    do {
      take(r);
      // Served inside the operation's depth again: a guard that a deleter opens meanwhile (a
      // retire into this domain: rc_ptr.hpp's deferred decrements) nests in it, instead of
      // beginning and ending an operation of its own, which would announce anew under us and, at
      // its end, serve the token a second time (the bags would turn twice in one receipt and free
      // a round early).
      (void)r.enter();
      serve(r);
      (void)r.leave();
      expected = r.announced;
      // release / acquire: as in end().
    } while (!r.state.compare_exchange_strong(expected, 0, std::memory_order_release,
                                              std::memory_order_acquire));
  }

  // The token waits on our (active) record: take it in hand. Only we write our state while its token
  // bit is set, so a plain store clears it. (In hand before the bit goes: a fork in between leaves
  // a child that passes it once, never twice.)
  static void take(record& r) noexcept {
    set_hand(r, record::hand::holding);
    r.state.store(r.announced, std::memory_order_relaxed);
  }

  // At the start of an operation, before any of its reads.
  [[gnu::noinline]] void pick_up(record& r) noexcept {
    r.pick_up_countdown = pick_up_every;
    set_hand(r, record::hand::moving);
    // acquire: pairs with the release store in park(). Only one thread reads true.
    const bool picked = parked_.exchange(false, std::memory_order_acquire);
    set_hand(r, picked ? record::hand::holding : record::hand::empty);
    if (!picked) return;
    serve(r);
    reannounce(r);
  }

  // For a child of fork() (forget_thread()): the compiler keeps the hand in program order with the
  // token's atomic moves around it, as a thread stopped by the fork left them.
  static void set_hand(record& r, typename record::hand h) noexcept {
    core::signal_fence(std::memory_order_seq_cst);
    r.token_hand = h;
    core::signal_fence(std::memory_order_seq_cst);
  }

  // Our pass may have completed a round: the operation, which has read nothing yet, announces the
  // round it begins in now, or the token would wait for it in the round it just started. A CAS
  // that keeps a token bit set meanwhile. acq_rel: as the exchange in begin().
  void reannounce(record& r) noexcept {
    const std::uint64_t now = record::active_in(rounds_.load(std::memory_order_acquire));
    std::uint64_t s = r.announced;
    while (!r.state.compare_exchange_weak(s, now | (s & token_bit), std::memory_order_acq_rel,
                                          std::memory_order_acquire)) {
    }
    r.announced = now;
  }

  // A receipt: r is active and has the token in hand. Garbage of exited threads that is three
  // rounds old (orphan_safe()) is freed with our oldest bag.
  void serve(record& r) noexcept {
    timeline::record_instant(timeline::event::token_receipt, garbage_held(r));
    core::retired_list safe = std::move(r.oldest);
    if (RECLAIM_MUTATED(token_free_one_round_early)) safe.splice(std::move(r.previous));
    safe.splice(this->take_safe_orphans([this](std::uint64_t n) { return orphan_safe(n); }));
    r.oldest = std::move(r.previous);
    r.previous = std::move(r.current);
    if constexpr (Order::passes_first) {
      pass(r);
      free_safe(r, safe);
    } else {
      free_safe(r, safe);
      pass(r);
    }
  }

  void free_safe(record& r, core::retired_list& safe) noexcept {
    if constexpr (frees_per_check == 0)
      r.release_safe(std::move(safe), this->gauge_);
    else
      free_checking(r, safe);
  }

  // token_periodic: free the bag one node at a time, looking for the token every K frees.
  [[gnu::noinline]] void free_checking(record& r, core::retired_list& safe) noexcept {
    if (safe.empty()) return;
    core::free_timer timer(r.ctr);
    timeline::batch_scope batch;
    std::size_t n = 0;
    while (core::retired_hook* node = safe.pop()) {
      timeline::free_one(node);
      if (++n % frees_per_check == 0) pass_if_returned(r);
    }
    batch.done(n);
    r.count_freed(n);
    r.pending.flush(this->gauge_);
  }

  // The token came back while we free: pass it on at once. The bags do not rotate (the bag being
  // freed is out of them already); skipping a rotation only delays our own garbage.
  void pass_if_returned(record& r) noexcept {
    // acquire: pairs with the release CAS in pass() that left the token here.
    if ((r.state.load(std::memory_order_acquire) & token_bit) == 0) return;
    take(r);
    timeline::record_instant(timeline::event::token_receipt, garbage_held(r));
    pass(r);
  }

  // r has the token in hand: give it to the next record in ring order that is active in an
  // operation of an earlier round, skipping the others (arguments (b) and (c) above); if it comes
  // round to r, park it.
  [[gnu::noinline]] void pass(record& r) noexcept {
    // Moving before it may be handed on: a fork from here on leaves a child that never passes it
    // twice, and parks it again if it is nowhere else (forget_thread()).
    set_hand(r, record::hand::moving);
    pass_on(r);
    set_hand(r, record::hand::empty);
  }

  void pass_on(record& r) noexcept {
    core::scan_timer timer(r.ctr);
    // Only the token's holder changes rounds_ (the others' RMWs write the value they read), and
    // what its holders did happens before we hold it: relaxed reads the current round.
    std::uint64_t round = rounds_.load(std::memory_order_relaxed);
    for (record* z = next_in_ring(r, &r, round); z != &r; z = next_in_ring(r, z, round)) {
      // acquire (load and CAS failures): for a skip (c), pairs with the release exchange in z's
      // begin() that announced the round.
      std::uint64_t s = z->state.load(std::memory_order_acquire);
      for (;;) {
        if (s & active_bit) {
          // the skip (c): began in this round
          if (record::round_of(s) == round || RECLAIM_MUTATED(token_skip_active)) break;
          // release: pairs with the acquire CAS failure in end() / load in pass_if_returned():
          // everything before this pass happens before the receiver's frees.
          if (z->state.compare_exchange_weak(s, s | token_bit, std::memory_order_release,
                                             std::memory_order_acquire))
            return;
        } else if (z->state.compare_exchange_weak(s, s, std::memory_order_acq_rel,
                                                  std::memory_order_acquire)) {
          // The skip (b). acquire: pairs with the release CAS in end() or exchange in
          // on_thread_exit() that made z inactive; release: pairs with the acquire part of the
          // exchange in z's next begin().
          break;
        }
      }
    }
    park();
  }

  // The record after z in the ring; a wrap from the tail to the head completes a round, and
  // `round` follows it.
  record* next_in_ring(record& r, record* z, std::uint64_t& round) noexcept {
    if (record* next = decltype(this->threads_)::next_of(z)) return next;
    round = complete_round(r);
    return this->threads_.head();  // acquire: after the wrap, sees records that joined before it
  }

  [[gnu::noinline]] std::uint64_t complete_round(record& r) noexcept {
    // acq_rel: the wrap of the argument above; pairs with the CAS in join_ring() and with the
    // acquire load in begin().
    const std::uint64_t round = rounds_.fetch_add(1, std::memory_order_acq_rel) + 1;
    r.count_epoch_advance(round);
    return round;
  }

  // release: pairs with the acquire exchange in pick_up().
  void park() noexcept { parked_.store(true, std::memory_order_release); }

  [[gnu::noinline]] void first_or_lent(record& r, std::uint64_t was) noexcept {
    if (was & lent_bit) r.wait_until_given_back();
    if (was & fresh_bit) join_ring();
  }

  // A new record's first operation: an RMW on rounds_ (a CAS writing the value it read; a
  // fetch_add(0) may be compiled as a fence and a load). acq_rel: pairs with complete_round().
  [[gnu::noinline]] void join_ring() noexcept { (void)touch_rounds(); }

  // An RMW on rounds_ that changes nothing; returns the value. acq_rel: every later wrap reads it or
  // a later RMW of its release sequence (all writes to rounds_ are RMWs).
  std::uint64_t touch_rounds() noexcept {
    std::uint64_t n = rounds_.load(std::memory_order_relaxed);
    while (!rounds_.compare_exchange_weak(n, n, std::memory_order_acq_rel,
                                          std::memory_order_relaxed)) {
    }
    return n;
  }

  // Why orphans stamped n are safe at round n + 3. The wrap to n + 1 reads the exiting thread's RMW
  // (or a later RMW of its release sequence), so the unlinks happen before that wrap and before
  // every step of the token after it. Between two wraps the token covers the ring from the head to
  // the tail, except that a thread whose pass went all the way round parks the token, and whoever
  // picks it up passes on from its own place: a lap may then skip the records after the parker up
  // to the picker. A park needs a full loop, which contains a wrap, so a lap has at most one such
  // gap, right after its first wrap, and the gap of the next lap begins where the picker stands:
  // no record is in two consecutive gaps. So every record is visited (handed the token, or
  // skipped while inactive: argument (a) and (b) at the top) between the wraps to n + 1 and n + 3,
  // after the unlinks; a record that joins later sees them (join_ring()).
  bool orphan_safe(std::uint64_t stamp) const noexcept {
    // acquire: pairs with the wraps (RMWs) on rounds_, which carry the visits of the rounds.
    return rounds_.load(std::memory_order_acquire) >= stamp + 3;
  }

  static std::uint64_t garbage_held(const record& r) noexcept {
    return r.current.size() + r.previous.size() + r.oldest.size() + r.freeing.held();
  }

  // Waits until rounds_ reaches target, running empty operations of our own: one picks up a parked
  // token (an idle ring moves only when someone begins an operation) and serves a token that
  // arrives during it. False at the deadline (a thread stalled inside an operation keeps the
  // token).
  bool drive_rounds(record& me, std::uint64_t target, core::deadline d) {
    core::waiter w(d);
    for (;;) {
      // acquire: pairs with the wraps (RMWs), which carry the visits of their rounds.
      const std::uint64_t before = rounds_.load(std::memory_order_acquire);
      if (before >= target) return true;
      end(begin(me, true));
      if (rounds_.load(std::memory_order_relaxed) == before && !w.wait()) return false;
    }
  }

  // orphan_safe()'s argument for a stamp read by our RMW at the call: every record is visited
  // between the wraps to n+1 and n+3, and one inside an operation that began before the call
  // passes the token on only when it ends (that operation read a round count no later than n, by
  // coherence with our RMW, so no visit after the wrap to n+1 skips it as current); so when
  // rounds_ reads n+3 those operations have ended.
  bool wait_for_grace_period(record& me, core::deadline d) {
    return drive_rounds(me, touch_rounds() + 3, d);
  }

  static void take_garbage(record& r, typename base::gathered& into) noexcept {
    into.unsafe.splice(std::move(r.current));
    into.unsafe.splice(std::move(r.previous));
    into.unsafe.splice(std::move(r.oldest));
    into.safe.splice(r.freeing.take());
  }

  // Our garbage, then every other record's (borrowed while inactive) and the orphans, stamped with
  // the round count read by an RMW after all of it was unlinked: safe three rounds later, as an
  // orphan (orphan_safe()).
  bool barrier_locked(record& me, core::deadline d) {
    typename base::gathered g;
    bool done = this->gather(me, g, d, [](record& r, typename base::gathered& into) {
      return base::borrow_if_idle(r, r.state, std::uint64_t{0}, lent_bit, into);
    });
    const std::uint64_t stamp = touch_rounds();
    done = done && drive_rounds(me, stamp + 3, d);
    return this->finish_barrier(me, g, done, stamp);
  }

  // One empty operation of our own: it picks up a parked token (a receipt frees the oldest bag
  // and the orphans three rounds old), and holds our garbage against a barrier while the free
  // policy's safe garbage is freed.
  void flush_local(record& me) {
    record& r = begin(me, true);
    r.freeing.drain(r);
    end(r);
  }

  // Thread exit, possibly inside an operation: the record goes inactive but holds its garbage
  // (exiting), a token it holds moves on, and its bags go to the orphanage stamped with the round
  // count n read by an RMW after every unlink of their nodes. They are safe once rounds_ reads
  // n + 3 (orphan_safe()). Then the record is left inactive for a thread that reuses it.
  void on_thread_exit(record& r) noexcept {
    // release: pairs with a skip CAS (acquire), as in end(); acquire: pairs with the release CAS
    // in pass() if the token waited here, and with a barrier's give_back().
    set_hand(r, record::hand::moving);
    std::uint64_t was = r.state.exchange(exiting_bit, std::memory_order_acq_rel);
    set_hand(r, (was & token_bit) ? record::hand::holding : record::hand::empty);
    if (was & lent_bit) r.wait_until_given_back();
    const std::uint64_t stamp = touch_rounds();
    this->orphan(r, std::move(r.current), stamp);
    this->orphan(r, std::move(r.previous), stamp);
    this->orphan(r, std::move(r.oldest), stamp);
    r.freeing.drain(r);
    if (was & token_bit) pass(r);
    r.pick_up_countdown = 1;  // the next thread here picks a parked token up at once, as a new one
    // An RMW, not a store: it continues the release sequence of a skip made while we exited.
    r.state.exchange(0, std::memory_order_acq_rel);
  }

  // In a child of fork(): r's thread does not exist here (core/registry.hpp). Inactive, it is
  // skipped by the token, which moves on if it waited there or in r's hand (the pass runs on r's
  // behalf, as an exiting thread's does). If r's thread stopped while the token was moving, the
  // token is either elsewhere already or lost with that thread: lost if no place and no other hand
  // has it, and then it is parked again. (The child has one thread: whoever picks it up has no
  // reads in flight, and the records of the parent's threads are inactive.)
  void forget_thread(record& r) noexcept {
    const std::uint64_t was = r.state.exchange(exiting_bit, std::memory_order_relaxed);
    if ((was & token_bit) || r.token_hand == record::hand::holding)
      pass(r);
    else if (r.token_hand == record::hand::moving && !token_elsewhere_than(r))
      park();
    r.token_hand = record::hand::empty;
    r.pick_up_countdown = 1;
    r.state.store(0, std::memory_order_relaxed);
  }

  bool token_elsewhere_than(const record& r) const noexcept {
    bool found = parked_.load(std::memory_order_relaxed);
    this->threads_.for_each([&](const record& z) {
      if (&z != &r)
        found = found || (z.state.load(std::memory_order_relaxed) & token_bit) ||
                z.token_hand != record::hand::empty;
    });
    return found;
  }

  // Read by every begin(), written once a round and at parking: one line.
  alignas(core::cache_line) core::atomic<bool> parked_{true};
  core::atomic<std::uint64_t> rounds_{0};
};

// An operation in d, from construction to destruction; protect() is a plain load.
template <class Order, class... Policies>
class token_ebr<Order, Policies...>::guard : public core::region_scheme_guard<domain> {
 public:
  explicit guard(domain& d = token_ebr::default_domain())
      : core::region_scheme_guard<domain>(d) {}
};

}  // namespace reclaim
