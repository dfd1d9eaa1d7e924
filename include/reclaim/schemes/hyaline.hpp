// SPDX-License-Identifier: MIT
// hyaline, hyaline_1, hyaline_s, hyaline_1s: Hyaline (Nikolaev and Ravindran, "Snapshot-free,
// transparent, and robust memory reclamation for lock-free data structures", PLDI 2021; arXiv
// 1905.07903). One algorithm, four variants chosen by two parameters: shared slots (k of them,
// a double-width CAS on each slot's head) or one slot per thread record (single-width CAS), and
// plain or robust (birth eras).
//
// What it is. Reference counting of batches, done only by the threads that may still read them.
// A thread inside an operation is counted in a slot (detail/hyaline_slots.hpp). A retiring thread
// gathers its nodes into a batch and, once the batch has more nodes than there are slots, pushes
// one node of the batch onto the list of every slot that has a thread inside (retire_batch()); a
// leaving thread drops one reference of each batch pushed since it entered (leave_slot()); whoever
// drops a batch's count to zero frees the batch. Only retiring threads and leaving threads touch
// shared state: no epoch to advance, no scan of other threads' announcements (snapshot-free), and
// the batches are freed by the threads that were still reading them (balanced reclamation: an
// idle or slow retirer does not hold its garbage). Each step carries its part of the proof below;
// detail/batch_domain.hpp holds what the domain shares with crystalline.
//
// The variants (named template parameters: slots<K> from hp.hpp, advance_every<N>,
// stall_threshold<N>, and a free policy; batch_free by default, amortized_free<K> for the lab's
// `_af` forms):
//   hyaline<>     k shared slots (slots<K>, default 32), a thread uses the slot of its record index
//                 modulo k; batches of at least k + 1 nodes. A thread stays counted in its slot
//                 between operations while nothing is pushed onto it (lazy leave: end()).
//   hyaline_1<>   one slot per thread record; batches of at least records + 1 nodes.
//   hyaline_s<>   hyaline with birth eras (protect_in_operation()), avoiding the slots of stalled
//                 threads (enter_slot()).
//   hyaline_1s<>  hyaline_1 with birth eras: each thread's slot has its own era.
//
// When to use it. hyaline and hyaline_1 where an epoch scheme would do (operation boundaries only),
// where reclamation should be spread over the threads that read rather than left to the retirer
// and where threads come and go (no epoch to hold back). hyaline_s and hyaline_1s where a stalled
// thread must not hold unbounded memory (the bound: join_batch()), at the cost of a protect() per
// read (as hazard eras). hyaline_1 suits few threads (its batches grow with the number of
// records); hyaline with k slots suits many (its batches are k + 1 nodes whatever the thread
// count, and k slots are contended by threads / k threads each).
//
// Needs from a container. hyaline, hyaline_1: the start and end of each operation
// (needs_nothing; protect() is an acquire load). hyaline_s, hyaline_1s: every dereferenced
// pointer read through protect() (needs_validated_reads, as hazard eras: a node read without it
// may belong to a batch that skipped the slot) and nodes made by create() (a node made with plain
// `new` keeps the oldest birth era: safe, only less robust). Nodes derive from node_base.
#pragma once
#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstdint>
#include <new>
#include <string_view>
#include <type_traits>
#include <utility>

#include "../concepts.hpp"
#include "../core/domain.hpp"
#include "../core/platform/dwcas.hpp"
#include "../core/guard_base.hpp"
#include "../core/policy.hpp"
#include "../core/region_guard.hpp"
#include "../free/batch.hpp"
#include "detail/batch_domain.hpp"
#include "detail/birth_sorted.hpp"
#include "detail/hyaline_slots.hpp"
#include "detail/eras.hpp"
#include "../policies.hpp"  // slots<K>
#include "../core/sync.hpp"

namespace reclaim {

// Hyaline in its four variants, used as hyaline, hyaline_1, hyaline_s and hyaline_1s (below), with
// its policies (policies.hpp) in any order.
template <detail::hyaline_slots Slots, bool Robust, class... Policies>
struct basic_hyaline : core::scheme_base<basic_hyaline<Slots, Robust, Policies...>> {
  // Its variant, shared slots or one per thread record, robust (birth eras) or plain; and its free
  // policy, as given in Policies... or batch_free.
  static constexpr bool shared_slots = Slots == detail::hyaline_slots::shared;
  static constexpr bool robust = Robust;
  using free_policy = core::find_policy_t<free_policy_kind, batch_free, Policies...>;
  // hyaline, hyaline_s: k slots. 32 by default: a batch is k + 1 nodes, so k bounds both the
  // partial batches each thread keeps and the work of a retire (k CASes per k + 1 nodes), while up
  // to 32 threads each get a slot to themselves (more share: threads / k per head).
  static constexpr unsigned slot_count = core::policy_value<slots<32>, Policies...>;
  static constexpr unsigned era_every = core::policy_value<advance_every<64>, Policies...>;
  static constexpr unsigned stall_owed = core::policy_value<stall_threshold<64>, Policies...>;
  static_assert((core::known_kinds<free_policy_kind, slots_kind, advance_kind,
                                   stall_threshold_kind>::template contains<Policies> &&
                 ...),
                "hyaline takes a free policy, slots<K> (hyaline, hyaline_s), advance_every<N> "
                "(hyaline_s, hyaline_1s) and stall_threshold<N> (hyaline_s)");
  static_assert(shared_slots ||
                    !(std::is_same_v<typename Policies::policy_kind, slots_kind> || ...),
                "hyaline_1 and hyaline_1s have one slot per thread: slots<K> is for hyaline and "
                "hyaline_s");
  static_assert(Robust ||
                    !(std::is_same_v<typename Policies::policy_kind, advance_kind> || ...),
                "advance_every<N> is for the robust variants, hyaline_s and hyaline_1s");
  static_assert((Robust && shared_slots) ||
                    !(std::is_same_v<typename Policies::policy_kind, stall_threshold_kind> || ...),
                "stall_threshold<N> is for hyaline_s");

  // What it is (concepts.hpp): batch reference counting, whose garbage is bounded only in the
  // robust variants (with a bounded free policy), which alone need validated reads.
  static constexpr std::string_view name =
      shared_slots ? (Robust ? std::string_view("hyaline_s") : std::string_view("hyaline"))
                   : (Robust ? std::string_view("hyaline_1s") : std::string_view("hyaline_1"));
  static constexpr reclaim::family family = reclaim::family::reference_counting;
  static constexpr bool bounds_garbage = Robust && free_policy::bounded;
  static constexpr unsigned needs = Robust ? needs_validated_reads : needs_nothing;

  // Its node base (a birth era too under the robust variants), and its domain and guard (below).
  using node_base = std::conditional_t<Robust, detail::hyaline_era_node, detail::hyaline_node>;
  class domain;
  class guard;
  // What a reclaim::guard_ptr holds: a share in the thread's operation (core/region_guard.hpp:
  // while it holds a node the thread stays inside its slot, so no batch pushed since can be
  // freed), and under the robust variants the era loop on each acquire (protect_in_operation).
  using protection = core::region_hold<domain>;
};

template <class... Policies>
using hyaline = basic_hyaline<detail::hyaline_slots::shared, false, Policies...>;
// hyaline_1: one slot per thread record; hyaline_s: shared slots and robust (birth eras), so that
// a stalled thread holds a bounded amount of garbage; hyaline_1s: one slot per record, robust.
template <class... Policies>
using hyaline_1 = basic_hyaline<detail::hyaline_slots::per_thread, false, Policies...>;
template <class... Policies>
using hyaline_s = basic_hyaline<detail::hyaline_slots::shared, true, Policies...>;
template <class... Policies>
using hyaline_1s = basic_hyaline<detail::hyaline_slots::per_thread, true, Policies...>;

// One hyaline instance's shared state: its slots with their lists of batches, the thread records,
// and the garbage (core/domain.hpp). default_domain() is the one containers use unless given
// another.
template <detail::hyaline_slots Slots, bool Robust, class... Policies>
class basic_hyaline<Slots, Robust, Policies...>::domain
    : public detail::batch_domain<domain, detail::hyaline_record<free_policy>> {
  using record = detail::hyaline_record<free_policy>;
  using base = core::domain_base<domain, record>;
  using batch_base = detail::batch_domain<domain, record>;
  using claim = core::garbage_claim;
  using holding = claim::scope<record>;
  using node = detail::hyaline_node;
  using partial = detail::forming_batch;
  using era_t = detail::era_t;
  static constexpr era_t no_birth = partial::no_birth;

 public:
  // Its scheme's guard, and it offers synchronize() and barrier() (concepts.hpp's grace_periods).
  using guard_type = basic_hyaline::guard;
  static constexpr bool grace_periods = true;
  using base::retire;  // domain.retire(node[, deleter]) from any thread

  // Slot lists are empty once no thread is inside (the last one out detaches the list), so every
  // retired batch has been freed; partial batches and orphans are destroyed here. Threads between
  // operations that are still counted in their slots (kept, end()) leave first, each counted on
  // its own record (no operation can run any more).
  ~domain() {
    if constexpr (shared_slots)
      this->threads_.for_each([this](record& o) {
        if (!o.forgotten) (void)revoke(o, o);
      });
    this->shutdown();
  }

  // `new T(args...)`, stamped with its birth era under the robust variants.
  template <class T, class... Args>
  T* create(Args&&... args) {
    T* n = new T(std::forward<Args>(args)...);
    stamp(this->threads_.local(), n);
    return n;
  }

 private:
  friend class basic_hyaline::guard;
  friend class core::region_hold<domain>;
  friend base;
  friend batch_base;

  // A slot's contribution to each batch (retire_batch()): more than any number of references a
  // slot can owe a node.
  static constexpr std::uint64_t contribution = std::uint64_t{1} << 40;
  static constexpr std::uintptr_t inside_bit = 1;

  // A node of the scheme's own: pads a short batch (flush, barrier), and as a barrier's sentinel
  // says when its batch was freed. Never counted as retired or freed. The paper pads conceptually
  // by counting, but a slot that has a thread inside needs a node of its own to hold the
  // reference, so real padding is the honest form.
  struct pad_node final : node_base {
    pad_node() noexcept { this->destroy = &destroy_pad; }
    domain* owner = nullptr;
    std::uint64_t generation = 0;
  };
  static void destroy_pad(core::retired_hook* hook) noexcept {
    auto* p = static_cast<pad_node*>(static_cast<node_base*>(hook));
    if (p->owner) {
      auto& done = p->owner->barrier_freed_;
      std::uint64_t seen = done.load(std::memory_order_relaxed);
      // release: pairs with the acquire load in barrier_locked(). The batch's other nodes are
      // freed after this, by the same thread, still inside its operation (a leave or a retire),
      // which the barrier then waits for (wait_for_open_guards).
      while (seen < p->generation &&
             !done.compare_exchange_weak(seen, p->generation, std::memory_order_release,
                                         std::memory_order_relaxed)) {
      }
    }
    delete p;
  }

  static node* as_node(core::retired_hook* h) noexcept {
    return static_cast<node*>(static_cast<node_base*>(h));
  }
  static era_t birth_of(core::retired_hook* h) noexcept {
    if constexpr (Robust)
      return static_cast<node_base*>(h)->birth;
    else
      return no_birth;
  }
  static node* ptr_of(std::uint64_t word) noexcept {
    return reinterpret_cast<node*>(static_cast<std::uintptr_t>(word) & ~inside_bit);
  }
  static std::uint64_t word_of(node* n) noexcept {
    return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(n));
  }

  template <class T>
  void stamp(record& r, T* n) noexcept {
    if constexpr (Robust && std::is_base_of_v<node_base, T>) {
      static_cast<node_base*>(n)->birth = clock_.birth();
      clock_.template count_allocation<era_every>(r.since_advance);
    }
  }

  // ---- enter and leave (the outermost guard or hold of a thread)
  // Only the outermost guard (or guard_ptr hold) enters and leaves the slot; nested ones count
  // depth, so a container operation inside a user's guard keeps the user's protection.

  record& begin(record& r) {
    if (r.enter() != 0) return r;
    if constexpr (shared_slots) {
      if (!resume(r)) enter_slot(r);
      // resume()'s CAS as a full fence (enter_slot()'s DWCAS is one already): see resume().
      if (!RECLAIM_MUTATED(hyaline_resume_without_fence)) core::fence_after_rmw();
    } else {
      enter_slot(r);
    }
    claim::free_policy_step(r);
    return r;
  }
  // The slot is left before the depth closes: synchronize() and barrier() wait for the walk.
  // hyaline, hyaline_s keep it instead when they may (lazy leave, below).
  void end(record& r) noexcept {
    if constexpr (shared_slots) {
      if (r.level() == 1) {
        const bool keep = may_keep(r);
        if (!keep) leave_slot(r, r);
        (void)r.leave();
        // A release store: r.slot and r.handle as we left them, for revoke()'s acquire CAS.
        r.between.end(keep);
        return;
      }
    } else if (r.level() == 1) {
      leave_own(r);
    }
    (void)r.leave();
  }

  // ---- lazy leave (hyaline, hyaline_s)
  // The end of an outermost operation leaves the thread counted in its slot (kept) if nothing
  // was pushed onto the slot since the thread entered: the head's pointer is still its handle.
  // Its leave would only have decremented the count (no batch to pass), and its next operation
  // resumes with one single-width CAS on its own record (resume()) instead of the entering DWCAS:
  // a pair of DWCASes saved per operation while no retire reaches the slot. Safe as it stands: a
  // thread counted longer than it reads only keeps batches longer (a kept period is, for the
  // proofs of leave_slot() and retire_batch(), part of one long operation). The pointer is read
  // with a plain load, a hint: a push that it misses is passed when the thread leaves for real.
  // The cost would be garbage: a kept thread receives pushed batches like one inside. So every
  // retire first leaves the slots of the threads kept between operations on their behalf
  // (revoke_kept() from retire_batch()), and so does a barrier while it waits: a thread between
  // operations holds at most the batches of retires that had passed that step when it ended its
  // operation, one per retiring thread, until the next retire of any thread. flush(), barrier()
  // and thread exit leave for real (end_kept()). hyaline_s keeps only while its slot is not seen
  // overloaded (the stall detector, enter_slot()), so that a live thread does not stay beside a
  // stalled one; any push onto the slot (which raises its debt) ends the keeping anyway.
  // hyaline_1 and hyaline_1s do not keep: their enter and leave are single-width exchanges on the
  // thread's own record already, which a CAS on `between` would only replace, and every retire
  // would pay the revocations.
  bool may_keep(record& r) const noexcept {
    const detail::hyaline_slot& s = slots_[r.slot];
    if constexpr (Robust)
      if (s.owed.load(std::memory_order_relaxed) >= std::int64_t{stall_owed}) return false;
    return s.head.peek_hi() == word_of(r.handle);
  }
  // The start of an outermost operation: r.between.resume(), a seq_cst CAS; true if the thread
  // is still counted in its slot (it was kept), false if it must enter (idle). (1) With begin()'s
  // fence_after_rmw() (lock cmpxchg on x86-64 is a full fence) it is the fence at the start of an
  // operation that synchronize() relies on (core::domain_base::wait_for_open_guards(): the depth
  // store before the first load of a source), as a resumed operation makes no RMW on its slot
  // head. (2) If a revoker's CAS came first we wait until it has left our slot (its release store
  // of `idle`, which our CAS reads from: its writes to r.handle and r.counted happen before our
  // enter rewrites them) and enter again; if ours came first the revoker finds us inside and
  // leaves us counted.
  static bool resume(record& r) noexcept {
    // The fault: a record being revoked taken for a kept one (a count the revoker drops).
    const bool notice = !RECLAIM_MUTATED(hyaline_revoke_unnoticed);
    return r.between.resume(notice) != detail::lazy_leave::idle;
  }
  // Leaves o's slot on its behalf if o's owner is kept between operations (the walk counted on
  // me); false if it is not kept. The acquire CAS pairs with end()'s release store (o's slot and
  // handle, as its owner left them); our release store of idle with the owner's next resume()
  // (our writes to its handle and count).
  bool revoke(record& me, record& o) noexcept {
    return o.between.revoke([&] { leave_slot(me, o); });
  }
  // The owner's, outside any guard (flush, barrier, exit): leaves for real if kept.
  void end_kept(record& r) noexcept {
    if (resume(r)) leave_slot(r, r);  // resume(): not while a revoker leaves for us
    r.between.settle_idle();
  }

  // Lock-free: one CAS loop on the slot head (hyaline_1: one exchange).
  void enter_slot(record& r) noexcept {
    if constexpr (shared_slots) {
      unsigned i = r.index % slot_count;
      if constexpr (Robust) {
        // Past a slot whose threads owe too many decrements (a stalled thread sits there): the
        // next one that does not, or if every slot does, the one that owes least (a stalled
        // thread's slot owes more with every batch it holds, so it is chosen last). The paper's
        // stall detector, so that no live thread keeps raising the era of a slot a stalled
        // thread sits in. relaxed: a heuristic that affects only which slot a thread picks.
        std::int64_t least = slots_[i].owed.load(std::memory_order_relaxed);
        for (unsigned tried = 1; tried < slot_count && least >= std::int64_t{stall_owed};
             ++tried) {
          const unsigned j = (r.index + tried) % slot_count;
          const std::int64_t owed = slots_[j].owed.load(std::memory_order_relaxed);
          if (owed < least) {
            least = owed;
            i = j;
          }
        }
      }
      detail::hyaline_slot& s = slots_[i];
      core::word_pair seen{};  // a guess: the CAS corrects it
      while (!r.ctr.cas_wide(s.head, seen, core::word_pair{seen.lo + 1, seen.hi})) {
      }
      r.slot = i;
      r.handle = ptr_of(seen.hi);
      core::signal_fence(std::memory_order_seq_cst);  // after the CAS and the handle
      r.counted = true;
      // seq_cst: the era the protects compare with is read after our enter
      // (protect_in_operation()).
      if constexpr (Robust) r.era = s.access.load(std::memory_order_seq_cst);
    } else {
      // The first enter on a record after its thread registered: the fence the retirer's walk
      // relies on (F_r precedes it in S, see retire_batch()).
      if (!r.fenced) [[unlikely]] {
        core::thread_fence(std::memory_order_seq_cst);
        r.fenced = true;
      }
      // seq_cst RMW: ordered with every retirer's RMW on this head (see retire_batch()).
      [[maybe_unused]] const std::uintptr_t was = r.head.exchange(
          inside_bit, RECLAIM_MUTATED(hyaline_enter_relaxed) ? std::memory_order_relaxed
                                                             : std::memory_order_seq_cst);
      assert(was == 0);
      if constexpr (Robust) r.era = r.access.load(std::memory_order_relaxed);  // ours alone
    }
  }

  // Decrements the slot's count and walks its list from the top down to the handle, dropping one
  // reference of each batch it passes (hyaline_1: leave_own() below). Lock-free: one CAS loop on
  // the head; the walk is bounded by the nodes pushed since the thread entered. What it frees is
  // counted in `on` (r itself, or the revoker that leaves for r's kept thread: revoke()), through
  // on's free policy (amortized_free: on its freeable list), so retired == freed + pending. The
  // proof below names T the thread counted: a revoker walks for it, from its handle, with T
  // between operations (reading nothing).
  // Why the walk cannot stop early or walk freed memory. The walk compares addresses with the
  // handle, the node on top when the thread entered; if that node could be freed and its memory
  // reused by a node pushed later, the walk would stop at the impostor. It cannot: while T is
  // inside, the handle's batch lacks either the slot's contribution (the handle is still on top: a
  // push-over counts T, a detach needs T gone) or T's own decrement (the handle was pushed over
  // while T was inside, so T was counted), and T subtracts from the handle last, after reading its
  // link. Every other node the walk reaches is strictly between the top and the handle, pushed over
  // while T was inside, so T's decrement is owed and its batch alive until T subtracts; T reads a
  // node's link before subtracting from it. The top node itself is read (its link) before the leave
  // CAS, while its slot contribution is still missing. So every node T touches is alive, and its
  // address unique.
  void leave_slot(record& on, record& r) noexcept
    requires shared_slots
  {
    core::retired_list freed;
    detail::hyaline_slot& s = slots_[r.slot];
    node* const handle = r.handle;
    r.counted = false;
    core::signal_fence(std::memory_order_seq_cst);  // before the leaving CAS
    core::word_pair seen{1, word_of(handle)};  // the usual case: alone, nothing pushed
    node* first;
    node* next = nullptr;
    for (;;) {
      first = ptr_of(seen.hi);
      // The top's link, read while its slot contribution is missing (it is alive).
      if (first != handle) next = first->slot_next;
      const core::word_pair desired =
          seen.lo == 1 ? core::word_pair{0, 0} : core::word_pair{seen.lo - 1, seen.hi};
      if (on.ctr.cas_wide(s.head, seen, desired)) break;
    }
    // The last one out detached the list: the top's contribution for this slot.
    if (seen.lo == 1 && first) adjust(first, contribution, freed);
    if (first != handle) {
      std::int64_t passed = 0;
      node* c;
      do {
        c = next;
        if (!c) break;
        next = c->slot_next;  // before our decrement, which may free c
        adjust(c, ~std::uint64_t{0}, freed);
        ++passed;
      } while (c != handle);
      if constexpr (Robust) s.owed.fetch_sub(passed, std::memory_order_relaxed);
    }
    r.handle = nullptr;
    release_freed(on, freed);  // nested in a retire's or a barrier's hold when on revokes
  }
  // hyaline_1: the owner takes its slot's whole list, alone in its slot (a function of its own,
  // over one record: the shared form's two made GCC inline less of the containers).
  void leave_own(record& r) noexcept
    requires(!shared_slots)
  {
    core::retired_list freed;
    // acq_rel: takes the list (every push before is visible), and leaves the slot idle. The
    // owner, alone in its slot, gives each node its slot contribution here instead of at the
    // push-over (the paper's): no one else walks the list.
    std::uintptr_t v = r.head.exchange(0, RECLAIM_MUTATED(hyaline_leave_without_acquire)
                                              ? std::memory_order_release
                                              : std::memory_order_acq_rel);
    for (node* c = ptr_of(v); c;) {
      node* next = c->slot_next;
      adjust(c, contribution, freed);  // its contribution for our slot, given at leave
      c = next;
    }
    release_freed(r, freed);
  }
  // What a leave freed, counted on `on` through its free policy. Inlined: as a call it made GCC
  // stop inlining hm_hashmap's bucket search under hyaline_1 (15 instructions per operation).
  [[gnu::always_inline]] void release_freed(record& on, core::retired_list& freed) noexcept {
    if (freed.empty()) return;
    holding garbage(on);
    on.release_safe(std::move(freed), this->gauge_);
  }

  // Adds `delta` to n's batch count; the one who reaches zero frees the batch (into `freed`).
  static void adjust(node* n, std::uint64_t delta, core::retired_list& freed) noexcept {
    node* ref = n->batch_ref;
    // acq_rel: each thread's subtraction comes after its reads of the batch's nodes (release),
    // and the thread that reaches zero frees after all of them (acquire).
    const std::uint64_t now =
        core::atomic_ref(ref->refs).fetch_add(delta, RECLAIM_MUTATED(batch_refs_relaxed)
                                                         ? std::memory_order_relaxed
                                                         : std::memory_order_acq_rel) +
        delta;
    if (now == 0 || (RECLAIM_MUTATED(batch_free_at_one) && now == 1)) collect(ref, freed);
  }
  // The batch whose reference node is `ref`: its nodes, the pads destroyed at once.
  static void collect(node* ref, core::retired_list& freed) noexcept {
    for (core::retired_hook* h = ref; h;) {
      core::retired_hook* next = h->next_retired;
      if (h->destroy == &destroy_pad)
        destroy_pad(h);
      else
        freed.push(h);
      h = next;
    }
  }

  // ---- retire

  void retire(record& r, core::retired_hook* hook) {
    holding garbage(r);
    r.count_retired(this->gauge_);
    partial& b = join_batch(r, hook);
    this->adopt(r);  // a relaxed load while the orphanage is empty
    if (b.nodes.size() >= batch_target()) [[unlikely]] retire_own(r, b);
  }

  // Adds `hook` to the partial batch of its birth (robust; the plain variants keep one) and returns
  // that batch.
  // What it bounds. hyaline, hyaline_1: nothing (bounds_garbage = false): a thread stalled inside an
  // operation keeps a reference to every batch inserted into its slot after it entered, so all
  // garbage retired since stays. The robust variants: a thread stalled with era s keeps the batches
  // whose minimum birth era is at most s, and each thread sorts its batches so that these hold the
  // nodes born by s, not younger ones beside them. It fills two (detail/birth_sorted.hpp): one for
  // the nodes born at or before the oldest era that a slot with a thread inside held when it last
  // inserted a batch (s, once it has seen the stalled slot: no live slot stays older), and one for
  // the younger nodes, whose batches then skip the stalled slot. So a stalled thread keeps (1) the
  // nodes born by s and retired since (hazard eras' bound: the nodes alive at its era, at most the
  // structure's size then plus the advance_every<N> allocations a thread makes while the clock
  // read s); (2) per retiring thread, two batches sorted before it saw the stall (the young batch
  // it was filling, and an old batch sorted by a threshold read from the live slots alone, before a young batch's
  // insertion looked at the stalled slot); (3) hyaline_s: the batches inserted into its slot before
  // the slot is seen overloaded (its threads owe stall_threshold decrements: about stall_threshold
  // batches, plus one per thread entering it then; until then they raise its era). Each batch is
  // k + 1 nodes, or records + 1 (more if it adopted an exited thread's partial batch). The sort
  // separates one stalled era: with threads stalled at several, a node born between the oldest and
  // the newest of their eras can keep a young batch whole (for those nodes the bound is one batch
  // each, as before the sort). hyaline_s's bound needs a slot that is not overloaded to go to. A
  // thread preempted inside an operation also makes its slot owe decrements for a while; when every
  // slot looks overloaded a thread enters the one that owes least, and a stalled thread's slot owes
  // more with every batch it holds, so it is chosen last, but the bound then also depends on how long
  // the others are descheduled; with k = 1, or a stalled thread in every slot, nothing is bounded. So
  // choose k well above the number of threads that may stall or be descheduled at once (the
  // default 32). Beside what a stalled thread holds, each thread keeps two partial batches (fewer
  // than k + 1, or records + 1, nodes each; the plain variants one).
  // With an amortized free policy the freeable list is bounded only while the retire rate stays
  // within the policy's K, so bounds_garbage = robust && free_policy::bounded.
  // The paper fills one batch per thread: a batch that holds one node born before a stall is kept
  // whole, so with a long-lived population almost every batch was (3-4x what hazard eras keep
  // beside the same stall at 200K keys, docs/results.md).
  static partial& join_batch(record& r, core::retired_hook* hook) noexcept {
    partial& b = Robust ? r.batches.for_birth(birth_of(hook)) : r.batches.young;
    b.add(hook, birth_of(hook));
    return b;
  }

  // The nodes a batch needs now: one per slot it may be pushed onto, and the reference node (the
  // batch's first node, never pushed: hence the paper's minimum of slots + 1 nodes).
  std::size_t batch_target() const noexcept {
    if constexpr (shared_slots)
      return std::size_t{slot_count} + 1;
    else
      return this->threads_.size() + 1;
  }

  // A partial batch is full: retire it, unless records were added since (it waits for more nodes,
  // where the paper's batch size is fixed).
  void retire_own(record& r, partial& full) {
    partial b = std::exchange(full, partial{});
    if (!retire_batch(r, b.nodes, b.min_birth)) full = std::move(b);
  }

  // Retires `b` (unlinked nodes) as one batch whose minimum birth era is `min_birth`; false, with
  // nothing changed, if b is short of the slots it would meet. Claim held. Lock-free: one CAS loop
  // per slot.
  // Why no batch is freed while a thread that entered before its retire is still inside. A batch
  // of a retire over n slots starts its count at -(n x A), A = 2^40 (`contribution`: more than any
  // number of references a slot can owe; the paper's addends sum to 2^64 instead, which needs k a
  // power of two and n fixed, where hyaline_1's n is the number of records a retire walks, which
  // grows at run time). Each slot contributes A exactly once: when the batch skips it
  // (nobody inside, or era too old: added at the end of the retire), when the node pushed onto it
  // is pushed over by a later batch (the pusher adds A + r, r the threads inside at that CAS, who
  // all entered before the push-over and will all pass the node when they leave), or when the last
  // thread out detaches the list while the node is on top (it adds A; hyaline_1: the owner, alone
  // in its slot, adds A to every node of its list when it leaves). A leaving thread subtracts 1
  // from each node strictly below the top, down to its handle inclusive (the handle is the node
  // that was on top when it entered): these are exactly the nodes that were pushed over while it
  // was inside, i.e. exactly those for which it was counted in an r. So the count is zero exactly
  // when all n contributions are in and every counted thread has passed. A thread T
  // inside slot s when the batch's node x is pushed onto s keeps it nonzero: x is either on top
  // (s's contribution is missing: it needs a push-over, which counts T, or a detach, which needs T
  // to leave) or was pushed over while T was inside (T was counted and has not passed). A slot
  // skipped because its count was zero had nobody inside at the retirer's RMW on its head; a thread
  // entering later makes its entering RMW on that head after the retirer's in its modification
  // order, which synchronizes (seq_cst RMWs: release and acquire) so the unlinks before the retire
  // happen before its reads. hyaline_1 checks an idle slot with a CAS that writes the same value, an
  // RMW for the same reason; and the records a retire walks are those in the registry after a
  // seq_cst fence F_r: a record pushed after the walk's read of the registry head is entered by a
  // thread that runs a seq_cst fence on its first enter of that record, after its registration, so
  // F_r precedes that fence in S and the thread's later reads see every unlink before F_r.
  // Which nodes share a batch changes nothing in this argument: a batch goes by the minimum birth
  // of its own nodes. The threshold that sorts them (detail/birth_sorted.hpp) is taken from the
  // slot eras the retire reads anyway, and for a slot skipped for its era from a look at its head
  // (a DWCAS read under hyaline_s, a relaxed load under hyaline_1s); it orders nothing.
  bool retire_batch(record& me, core::retired_list& b, era_t min_birth) {
    // F_r: every unlink of b's nodes comes before the slot checks below.
    if (!RECLAIM_MUTATED(batch_retire_without_fence)) core::thread_fence(std::memory_order_seq_cst);
    [[maybe_unused]] record* const first_record = this->threads_.head();
    std::size_t n = slot_count;
    if constexpr (!shared_slots) {
      n = 0;
      for (record* o = first_record; o; o = decltype(this->threads_)::next_of(o)) ++n;
    }
    if (b.size() < n + 1) return false;
    if constexpr (shared_slots) this->revoke_kept(me);  // lazy leave's bound (end())
    node* const ref = as_node(b.head());
    for (core::retired_hook* h = b.head(); h; h = h->next_retired) as_node(h)->batch_ref = ref;
    // Plain: the batch is not published yet (the pushes below release it).
    ref->refs = std::uint64_t{0} - n * contribution;
    b = core::retired_list{};  // the batch list lives on in the nodes' links
    core::retired_list freed;
    node* cur = as_node(ref->next_retired);
    std::uint64_t skipped = 0;
    auto push_or_skip = [&](auto&& insert) {
      node* after = as_node(cur->next_retired);  // read before cur is published
      if (insert(cur))
        cur = after;
      else
        skipped += contribution;
    };
    detail::oldest_reserved oldest(me.batches.old_up_to);
    if constexpr (shared_slots) {
      for (auto& s : slots_)
        push_or_skip([&](node* x) { return push_shared(me, s, x, min_birth, freed, oldest); });
    } else {
      for (record* o = first_record; o; o = decltype(this->threads_)::next_of(o))
        push_or_skip([&](node* x) { return push_own(*o, x, min_birth, oldest); });
    }
    if constexpr (Robust) me.batches.old_up_to = oldest.oldest();
    // Pushed onto every slot: the batch may be freed already; don't touch it. Otherwise the
    // skipped slots' contributions are still missing, so it is alive until this adds them.
    if (skipped != 0) adjust(ref, skipped, freed);
    core::counters::add(me.ctr.scans, 1);
    if (!freed.empty()) me.release_safe(std::move(freed), this->gauge_);
    return true;
  }

  // Pushes x onto shared slot s if a thread is inside (and, robust, the slot's era covers the
  // batch); the node it covers gets its contribution and the references of the threads inside.
  // Robust: tells `oldest` the era of a slot found with a thread inside. Counted on me.
  bool push_shared(record& me, detail::hyaline_slot& s, node* x, era_t min_birth,
                   core::retired_list& freed,
                   [[maybe_unused]] detail::oldest_reserved& oldest) noexcept {
    [[maybe_unused]] era_t era = detail::no_era;
    if constexpr (Robust) {
      era = s.access.load(std::memory_order_seq_cst);
      if (era < min_birth) {
        // Only the sort of later nodes depends on this look (detail/birth_sorted.hpp).
        if (oldest.worth_checking(era) && me.ctr.load_wide(s.head).lo != 0) oldest.reserved(era);
        return false;
      }
    }
    core::word_pair seen = me.ctr.load_wide(s.head);  // an RMW (see retire_batch())
    for (;;) {
      if (seen.lo == 0) return false;
      x->slot_next = ptr_of(seen.hi);
      if (me.ctr.cas_wide(s.head, seen, core::word_pair{seen.lo, word_of(x)})) break;
    }
    if constexpr (Robust) oldest.reserved(era);
    if (node* prev = ptr_of(seen.hi)) {
      if constexpr (Robust)
        s.owed.fetch_add(static_cast<std::int64_t>(seen.lo), std::memory_order_relaxed);
      adjust(prev, contribution + seen.lo, freed);
    }
    return true;
  }

  // hyaline_1: pushes x onto o's slot if its owner is inside (era permitting). An idle slot is
  // confirmed by a CAS that writes the value it read: an RMW (see retire_batch()). Robust: tells
  // `oldest` the era of a slot found with its owner inside.
  bool push_own(record& o, node* x, era_t min_birth,
                [[maybe_unused]] detail::oldest_reserved& oldest) noexcept {
    [[maybe_unused]] era_t era = detail::no_era;
    if constexpr (Robust) {
      era = o.access.load(std::memory_order_seq_cst);
      if (era < min_birth) {
        // relaxed: only the sort of later nodes depends on it (detail/birth_sorted.hpp).
        if (oldest.worth_checking(era) && (o.head.load(std::memory_order_relaxed) & inside_bit))
          oldest.reserved(era);
        return false;
      }
    }
    std::uintptr_t v = 0;
    for (;;) {
      if ((v & inside_bit) == 0) {
        if (o.head.compare_exchange_strong(v, v, std::memory_order_seq_cst)) return false;
        continue;
      }
      x->slot_next = ptr_of(v);
      if (o.head.compare_exchange_strong(v, reinterpret_cast<std::uintptr_t>(x) | inside_bit,
                                         std::memory_order_seq_cst)) {
        if constexpr (Robust) oldest.reserved(era);
        return true;
      }
    }
  }

  // Retires `b` now, padded to the slots' need; `sentinel` (a barrier's) joins it. Claim held.
  // Throws std::bad_alloc (a pad), leaving b with the pads so far (which the batch frees as any).
  void retire_padded(record& me, core::retired_list& b, era_t min_birth, pad_node* sentinel) {
    if (sentinel) b.push(sentinel);
    (void)fill_and_retire(me, b, min_birth, [] { return new pad_node; });
  }
  // The same without throwing (thread exit): false, with b still whole, if no memory is left.
  bool retire_padded_nothrow(record& me, core::retired_list& b, era_t min_birth) noexcept {
    return fill_and_retire(me, b, min_birth, [] { return new (std::nothrow) pad_node; });
  }
  template <class MakePad>
  bool fill_and_retire(record& me, core::retired_list& b, era_t min_birth, MakePad make_pad) {
    for (;;) {
      while (b.size() < batch_target()) {
        pad_node* pad = make_pad();
        if (!pad) return false;
        b.push(pad);
      }
      if (retire_batch(me, b, min_birth)) return true;
      pad_node* pad = make_pad();  // records were added meanwhile
      if (!pad) return false;
      b.push(pad);
    }
  }

  // ---- robust reads

  // The guard's protect() and core::region_hold's (guard_ptrs), robust variants only. Lock-free:
  // it loops while the era clock moves.
  // Why a node it returns is not freed while the thread is inside. protect(src) loads src
  // (seq_cst), reads the clock (seq_cst), and returns if the clock equals the era the thread's slot
  // holds for it; otherwise it publishes the clock's value into the slot (publish_era()) and goes
  // again. So the load that returned node n came after (in S) the write of an era e >= birth(n)
  // into the slot: e is the clock read after the load (the birth was stamped before n was
  // published, so it is at most that), and it was written by the thread, or (hyaline_s) read by
  // it from the slot, before the load. A retirer unlinks its nodes, runs the fence F_r, and loads
  // each slot's era (seq_cst): if it reads a value older than the write of e, F_r precedes that
  // write in S, hence the reader's load, which therefore sees the unlink and cannot return n;
  // otherwise the era it reads is >= e >= birth(n) >= the batch's minimum birth, and the batch goes
  // into the slot (if the reader is still inside: its enter RMW precedes its protect, so the
  // retirer's head CAS, which comes after it in the head's modification order as retire_batch()
  // shows, counts it). A stalled thread's slot era stops moving, so batches whose nodes were all
  // born later skip it.
  template <class P>
  P protect_in_operation(record& r, const core::atomic<P>& src)
    requires Robust
  {
    era_t mine = r.era;
    for (;;) {
      // seq_cst (the load and the clock): the argument above.
      P p = src.load(std::memory_order_seq_cst);
      const era_t now = clock_.now();
      if (now == mine) return p;
      mine = publish_era(r, now);
      // p was loaded before the era was published: only the next round's load is covered.
      if (RECLAIM_MUTATED(batch_era_no_validation)) return p;
    }
  }
  // hyaline_1s: a seq_cst exchange by the owner; hyaline_s: a seq_cst CAS that only raises the
  // slot's era, shared by its threads (called with r.era < now: at least one CAS runs). Then
  // fence_after_rmw(), which C++ does not need here (the argument above orders the reader's next
  // load after the retirer's fence by S alone) but the model checker does: Relacy makes a seq_cst
  // load see what precedes another thread's seq_cst fence only after a fence of its own. On
  // x86-64 it is the locked instruction itself (the exchange is what a seq_cst store compiles to).
  era_t publish_era(record& r, era_t now) noexcept {
    if constexpr (shared_slots) {
      core::atomic<era_t>& a = slots_[r.slot].access;
      era_t cur = r.era;
      // Only raises the slot's era (its other threads may rely on a later one).
      while (cur < now &&
             !a.compare_exchange_weak(cur, now, std::memory_order_seq_cst,
                                      std::memory_order_seq_cst)) {
      }
      r.era = std::max(cur, now);
    } else {
      (void)r.access.exchange(now, std::memory_order_seq_cst);
      r.era = now;
    }
    core::fence_after_rmw();
    return r.era;
  }

  // ---- flush, synchronize, barrier, exit

  // flush() retires the thread's partial batches (and the orphans) at once, padded with pad_nodes
  // up to the size the slots need.
  void flush_local(record& me) {
    if constexpr (shared_slots)
      if (me.level() == 0) end_kept(me);  // our slot would keep what we retire
    holding garbage(me);
    this->adopt(me);
    me.batches.for_each([&](partial& left) {
      if (left.nodes.empty()) return;
      partial b = std::exchange(left, partial{});
      (void)me.enter();  // a guard's depth: a barrier waits for what this retire adjusts
      try {
        retire_padded(me, b.nodes, b.min_birth, nullptr);
      } catch (...) {  // no memory for a pad: the batch stays partial (pads and all)
        (void)me.leave();
        left = std::move(b);
        throw;
      }
      (void)me.leave();
    });
    me.freeing.drain(me);
  }

  // synchronize(): every outermost guard open at the call has closed (detail/batch_domain.hpp; a
  // guard's depth closes after its leave walk). barrier(): gathers every record's partial batches
  // and freeable list (borrowed between the owner's retires, core::garbage_claim) and the orphans,
  // retires them as one padded batch holding a sentinel node, pushes an empty padded batch over it
  // (so that its nodes do not wait for their slots' next retire), waits for the sentinel to be
  // freed (every thread inside at the push has left), then waits for the guards open at that
  // point (leaves and retires in flight, which may still owe older batches their last reference),
  // and frees the freeable lists again.
  bool barrier_locked(record& me, core::deadline d) {
    if constexpr (shared_slots) end_kept(me);
    typename base::gathered g;
    const bool gathered = this->gather_batches(me, g, d);
    this->free_now(me, std::move(g.safe));
    const std::uint64_t generation = ++barrier_generation_;  // barriers are serialized
    {
      holding garbage(me);
      auto* sentinel = new pad_node;
      sentinel->owner = this;
      sentinel->generation = generation;
      (void)me.enter();
      // no_era: pushed onto every slot with a thread inside, whatever its era, so that every
      // earlier batch on a slot gets its contribution or waits for those threads (retire_batch()).
      core::retired_list over;
      try {
        retire_padded(me, g.unsafe, detail::no_era, sentinel);
        retire_padded(me, over, detail::no_era, nullptr);
      } catch (...) {  // no memory for a pad: what is left waits in the orphanage
        (void)me.leave();
        g.unsafe.splice(std::move(over));
        this->orphan(me, std::move(g.unsafe));
        throw;
      }
      (void)me.leave();
    }
    core::waiter w(d);
    // acquire: pairs with the release in destroy_pad().
    while (barrier_freed_.load(std::memory_order_acquire) < generation) {
      // A thread that kept its slot after the pushes (its peek missed them) holds the sentinel.
      if constexpr (shared_slots) this->revoke_kept(me);
      if (!w.wait()) return false;
    }
    // Leaves and retires in flight may still owe older batches their last reference.
    if (!this->wait_for_open_guards(d)) return false;
    if constexpr (free_policy::keeps_safe_garbage)
      if (!this->free_freeable(me, d)) return false;
    return gathered;
  }

  // In a child of fork(): r's thread does not exist here (core/registry.hpp); it stops being
  // counted in its slot, so that the retires and barriers of the child do not wait for it to leave,
  // with single-word steps only (that thread may have stopped in the middle of an enter or a
  // leave). The batches pushed over while it was inside keep the decrement it owes them, and the
  // list of its own slot (hyaline_1, hyaline_1s) keeps its contributions: those batches are never
  // freed in the child, a leak of what was retired before the fork.
  void forget_thread(record& r) noexcept {
    if constexpr (shared_slots)
      recount_slots();
    else
      r.head.store(0, std::memory_order_relaxed);
  }

  // hyaline, hyaline_s, in a child of fork(): a thread stopped between its entering or leaving CAS
  // and `counted` may or may not be counted, and which slot it entered is not known yet, so every
  // slot's count is set to the threads counted there for certain that are not forgotten (the
  // forking thread, not inside an enter or a leave, and those forgotten later, each recounting
  // again). Lowering a count never frees early here: the threads it drops are gone, and a list
  // left on a slot counted zero is detached by the next thread that enters and leaves it.
  // In a child of fork(), r is the forking thread's record (core::domain_base::survive_fork()):
  // left `revoking` by a revoker that is gone, it becomes kept or idle as `counted` says (the
  // revoker clears it before its leaving CAS; the decrements its walk still owed stay owed).
  void fork_survivor(record& r) noexcept {
    if (r.between.revocation_cut()) r.between.settle_after_fork(r.counted);
  }
  void recount_slots() noexcept {
    std::uint64_t inside[slot_count] = {};
    this->threads_.for_each([&](const record& z) {
      if (!z.forgotten && z.counted) ++inside[z.slot];
    });
    for (unsigned i = 0; i < slot_count; ++i) {
      core::word_pair seen = slots_[i].head.load();
      while (!slots_[i].head.compare_exchange(seen, core::word_pair{inside[i], seen.hi})) {
      }
    }
  }

  // Thread exit (possibly inside guards): leave the slot, retire the partial batches (padded as
  // flush() does), or if no memory is left for the padding (exit must not throw) hand them over:
  // the next retire of any thread adopts them (safe: retiring later only counts more threads).
  void on_thread_exit(record& r) noexcept {
    if constexpr (shared_slots) {
      // resume(): counted if kept (and not while a revoker leaves for us).
      if (resume(r) || r.level() != 0) leave_slot(r, r);
      r.between.settle_idle();
    } else if (r.level() != 0) {
      leave_own(r);
    }
    holding garbage(r);
    this->adopt(r);
    core::retired_list unretired;  // one list: the record reserves one orphan header
    r.batches.for_each([&](partial& left) {
      if (left.nodes.empty()) return;
      partial b = std::exchange(left, partial{});
      (void)r.enter();  // a guard's depth: a barrier waits for what this retire adjusts
      const bool retired = retire_padded_nothrow(r, b.nodes, b.min_birth);
      (void)r.leave();
      if (!retired) unretired.splice(std::move(b.nodes));
    });
    this->orphan(r, std::move(unretired));
    r.freeing.drain(r);
  }

  std::conditional_t<shared_slots, detail::hyaline_slot[slot_count], char> slots_{};
  [[no_unique_address]] std::conditional_t<Robust, detail::era_clock, char> clock_{};
  std::uint64_t barrier_generation_ = 0;
  core::atomic<std::uint64_t> barrier_freed_{0};
};


// An operation in d, from construction to destruction: the thread is counted in its slot, so no
// batch retired meanwhile is freed before it leaves.
template <detail::hyaline_slots Slots, bool Robust, class... Policies>
class basic_hyaline<Slots, Robust, Policies...>::guard : public core::guard_base<guard> {

 public:
  // Only the robust variants validate: there, as under hp, a node protect() returns is safe only if
  // the container's own check then holds (its source re-read, its mark).
  static constexpr bool validates = Robust;
  // One era per thread (slot): the index is ignored, so every container fits.
  static constexpr unsigned slot_count = 1u << 16;

  explicit guard(domain& d = basic_hyaline::default_domain())
      : domain_(d), record_(d.begin(d.threads_.local())) {}
  ~guard() {
    this->check_owner();
    domain_.end(record_);
  }

  // Plain variants: an acquire load (pairs with the release that published the node). Robust:
  // the era loop (protect_in_operation()); the container validates what it read as with hazard
  // pointers.
  template <class P>
  P protect(const core::atomic<P>& src, unsigned /*slot*/) {
    this->check_owner();
    if constexpr (Robust)
      return domain_.protect_in_operation(record_, src);
    else
      return src.load(std::memory_order_acquire);
  }

  // `new T(args...)`, stamped with its birth era under the robust variants.
  template <class T, class... Args>
  T* create(Args&&... args) const {
    T* n = new T(std::forward<Args>(args)...);
    domain_.stamp(record_, n);
    return n;
  }

 private:
  friend class core::guard_base<guard>;
  void retire_hook(core::retired_hook* node) { domain_.retire(record_, node); }

  domain& domain_;
  typename domain::record& record_;
};

}  // namespace reclaim
