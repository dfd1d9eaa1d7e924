// SPDX-License-Identifier: MIT
// wfe: wait-free eras (Nikolaev and Ravindran, "Universal Wait-Free Memory Reclamation",
// PPoPP 2020).
//
// What it is. Hazard eras (he.hpp: the same nodes, clock, slots, scans and bounds) with a
// wait-free protect(). he's protect retries while the clock advances, so a reader can starve if
// other threads allocate fast enough. wfe bounds the fast path (fast_path<N> tries, default 16, as
// the paper) and then asks for help: the threads that advance the clock answer every pending
// request before they advance it, so each advance after a request is published costs the
// requester at most one retry, and it finishes in O(threads) steps.
//
// The slow path, and why each piece is there.
//  - The request: the source's address, a loader for its pointer type, and a floor era (below),
//    written before the answer word {pending, tag} is published. Counters begun/ended around each
//    request tell clock advancers and scans whether any request may be pending (one load each on
//    the common path).
//  - The requester keeps trying itself: it reads the source and the clock, publishing each new
//    era in its slot; when an era holds across a read it claims its own answer by a double-width
//    CAS of {pending, tag} to {idle, tag}, so that no helper can answer afterwards.
//  - A helper (a thread about to advance the clock) publishes the floor in its help_floor slot,
//    confirms the request is still pending, then runs he's protocol on its own help_era slot and
//    installs {pointer, era} with a CAS expecting {pending, tag}. The tag makes a late helper's
//    CAS fail once the request is answered and the thread has moved on to a later request (ABA of
//    the answer word); the CAS on both words at once (core::atomic_pair: cmpxchg16b inline, no
//    libatomic; see core/platform/dwcas.hpp) makes the pointer and its era one answer.
//  - The requester takes a helper's answer: it publishes the answer's era in its slot, then
//    withdraws the answer (idle), then counts the request ended.
//  - The floor. The helper reads the source, a field of the node (the "parent") the requester
//    holds, so the parent must outlive the helper's reads, even if the request is answered by
//    someone else and the requester lets the parent go meanwhile. The paper passes the parent's
//    birth era; our protect(src, slot) has no parent, so the request carries the lowest era the
//    requester publishes in any slot (the parent is covered by one of them, e_j: birth <= e_j <=
//    retire, so floor <= e_j <= retire). The helper's floor protects every node retired at or
//    after it (an interval [floor, infinity), as an IBR reservation), which includes the parent.
//    Conservative: while a helper helps, every node retired since the requester's oldest
//    reservation waits; it lasts one read of one source.
//  - Only the requester writes its own slots (our answer word carries the helper's era to the
//    requester instead of a helper writing the requester's reservation with a CAS on {era, tag}
//    as the paper's code does), so the fast path's slot store stays a plain 64-bit store and a
//    late helper can never overwrite a newer reservation: there is none it may write.
// A scan reads, after its fence: the counters (ended, then begun); if they differ, every
// helper's help_era, then every answer word; then every slot; then every help_floor. Why this
// order covers each moment of a node's protection:
//  - helper's read: if the scan's load of help_era precedes the helper's store in S, the helper's
//    read of the source comes after the retirer's fence and sees the unlink; otherwise it reads the
//    era, or the cleared slot, which the helper wrote (release) after installing its answer, so
//    the scan's later load of the answer word reads the answer or its withdrawal, and a
//    withdrawal was written after the requester published the era in its slot, which the scan's
//    later slot loads read (or a later value, once the requester let the node go);
//  - no request pending when the counters were read (equal): every answer given before was taken
//    into its requester's slot before the end was counted, and requests begun later read the
//    source after our fence;
//  - the parent: the helper publishes its floor, then finds the request pending; the requester
//    lets the parent go only after the request ends, and the scan reads the requester's slots
//    before the floors, so it reads the parent's era in the requester's slot, or the helper's
//    floor (or the floor's later clearing, written after the helper's last read).
//
// What it bounds: as he, plus, while a helper helps, the nodes retired since the requester's
// oldest reservation. Needs: as he (validated reads, nodes from create(), K slots). A helper may
// read a source shortly after the reader's protect() returned (it read the request just before
// the reader answered it itself), so whoever frees a source's memory other than through retire (a
// container's destructor: its root, its remaining nodes) first calls
// domain.wait_for_source_readers(), which returns once no helper can still read a source of a
// protect() that has returned (every container of ds/ does; he_domain says why that suffices).
// A helper brackets its helping round with a sequence number made odd, then even; the wait reads
// each record's number and waits only for a round under way, never for one that begins later.
// Progress: protect() wait-free (bounded by the fast path tries plus O(threads) slow-path rounds);
// retire, scan and clock advances wait-free apart from the free calls (an advance helps each
// pending request for O(threads) rounds); wait_for_source_readers() waits for the helping rounds
// under way at the call (blocking: a helper descheduled mid-round delays it). Out of memory: as
// he (retire never throws; a scan that cannot grow its snapshot reads every slot for each node).
//
// Differences from the paper: one request per thread (a thread is in one protect at a time)
// instead of one per slot; the conservative floor above instead of the parent's birth era; the
// helper's era travels in the answer word instead of a CAS on the requester's reservation; the
// clock advances every F allocations of a thread (the paper: F x threads); he's differences too.
#pragma once
#include <string_view>

#include "../concepts.hpp"
#include "../core/domain.hpp"
#include "../core/policy.hpp"
#include "../free/batch.hpp"
#include "../policies.hpp"
#include "detail/eras.hpp"
#include "detail/hazard_eras.hpp"

namespace reclaim {

template <class... Policies>
struct wfe : core::scheme_base<wfe<Policies...>> {
  // Its policies, as given in Policies... or by default: the free policy (batch_free) and slots<K>
  // (4); advance_every<N>, scan_every<N> and fast_path<N> below.
  using free_policy = core::find_policy_t<free_policy_kind, batch_free, Policies...>;
  static_assert((core::known_kinds<free_policy_kind, slots_kind, advance_kind,
                                   scan_every_kind,
                                   fast_path_kind>::template contains<Policies> &&
                 ...),
                "wfe takes a free policy, slots<K>, advance_every<F>, scan_every<N> and "
                "fast_path<N>");
  static constexpr unsigned slot_count = core::policy_value<slots<4>, Policies...>;
  // Defaults as he's (he.hpp), and the paper's 16 fast-path tries.
  static constexpr unsigned era_every = core::policy_value<advance_every<64>, Policies...>;
  static constexpr unsigned scan_base = core::policy_value<scan_every<100>, Policies...>;
  static constexpr bool wait_free = true;
  static constexpr unsigned fast_tries = core::policy_value<fast_path<16>, Policies...>;

  // What it is (concepts.hpp): an era scheme whose garbage is bounded where its free policy is, and
  // which needs validated reads.
  static constexpr std::string_view name = "wfe";
  static constexpr reclaim::family family = reclaim::family::era;
  static constexpr bool bounds_garbage = free_policy::bounded;
  static constexpr unsigned needs = needs_validated_reads;

  // Its node base (the retire hook, the birth and retire eras), and the domain, guard and guard_ptr
  // protection of the hazard eras engine (detail/hazard_eras.hpp), with wfe's wait-free slow path.
  using node_base = detail::era_node;
  using domain = detail::he_domain<wfe>;
  using guard = core::slot_guard<detail::he_slot_hooks<wfe>>;
  using protection = core::slot_protection<detail::he_slot_hooks<wfe>>;
};

}  // namespace reclaim
