// SPDX-License-Identifier: MIT
// he: hazard eras (Ramalhete and Correia, "Brief Announcement: Hazard Eras - Non-Blocking Memory
// Reclamation", SPAA 2017).
//
// What it is. Hazard pointers with eras in place of addresses. A global clock (the era) advances
// once every F allocations of a thread (advance_every<F>); every node records the era of its
// creation (stamped by the guard's or domain's create()) and, when retired, the era of its retire.
// Each guard owns K era slots: to protect a pointer read from a source, a reader loads it, reads
// the clock, and if the era differs from the one its slot publishes, publishes the new era and
// loads again; it returns once the era in the slot is the clock read after the load. A retired
// node is freed by a scan once no published era lies in [birth, retire]. The point of the scheme:
// the slot store (a full fence on x86) happens only when the era changed, not on every read as
// with hazard pointers, so traversals cost a plain load and a clock read per node.
//
// When to use it. Where hazard pointers would be used (bounded garbage with stalled readers) but
// their fence per read is too costly: lists and trees traversed with validated reads. The price:
// a 16-byte larger node header (birth and retire eras) and coarser protection (an era protects
// every node alive in it, not one address).
//
// What it bounds. A thread stalled with eras e1..eK published keeps only the nodes born at or
// before its highest era that were retired at or after its lowest, i.e. nodes that existed when it
// reserved: at most the nodes allocated before its last reservation (F x threads per era, and the
// structure's size when it stalled). Every other thread holds at most that plus R retired nodes
// (R = scan_every N + 2H, H the era slots of the domain: a thread scans when R nodes more than
// its last scan kept wait in its list, like hp's 100 + 2H). bounds_garbage follows the free policy
// (batch_free: yes).
//
// Needs from a container: validated reads, as hazard pointers (needs_validated_reads; the source
// re-read after publishing, removed nodes marked); nodes derive from he<>::node_base and are made
// with the guard's or the domain's create() (a node made with a plain new has birth first_era:
// protected conservatively, by any era, and freed once no era at or before its retire is
// published); K >= the slots an operation uses. Guards nest: each guard owns its K slots (a block
// per nesting level, as hp's), so a container operation inside a user's guard leaves the user's
// protections alone; each guard clears its own slots when it ends. Owned protections
// (he::protection, what a reclaim::guard_ptr holds): one era slot each from a per-thread pool.
//
// Progress: protect() is lock-free (it retries while the clock advances; use wfe for a wait-free
// protect); retire and scan are wait-free apart from the free calls.
//
// Out of memory: a retire takes its node and never throws (guard.retire() is noexcept;
// domain.retire() throws std::bad_alloc only before taking the node, when the calling thread
// registers or a nested guard needs its level's first block of slots). A scan whose snapshot
// cannot grow reads every slot for each node instead (detail/era_reclaim.hpp), so retire, flush
// and thread exit never fail or lose a node for want of memory.
//
// Memory model (why a node freed by a scan was not being read). Let a reader publish era e in a
// slot with a seq_cst store S, then load the node's pointer with a seq_cst load P, read the clock
// and find e again. Let a retirer unlink the node (U), then fence (F, seq_cst), read the clock (L,
// the retire era) and later scan, reading the slots with seq_cst loads after F. If P read the
// pointer, P reads-before U, so P precedes F in the single order S of seq_cst operations and
// fences; hence S precedes F and every scan load after F reads e (or a later value of the slot,
// written when the reader moved on). And L >= e: the reader read e from the clock before S; if L
// read an older value, L would precede in S the increment that made the clock e, which precedes
// the reader's read of e, which precedes S, which precedes F, which precedes L: a cycle. Finally
// birth <= e: the creator read the clock (birth) before publishing the node (release), the reader
// acquired the node at P and read e after it (coherence of the clock). So birth <= e <= retire: a
// scan that sees e keeps the node. Clearing a slot is a release store, read by the scan's loads:
// the reader's accesses to the node happen before the free.
// Retired nodes handed over by exiting threads (the orphanage) or borrowed by a barrier carry their
// own eras; a scan adopts them and applies the same rule.
//
// Differences from the paper: slots belong to guards (nesting), and guard_ptrs own slots from a
// pool; the scan snapshots every published era into a sorted array (O(H log H) per scan, O(log H)
// per node) instead of reading every slot for each node (which it still does when the array
// cannot have the memory it needs); the scan threshold grows with what the
// last scan kept (no rescanning of nodes an old reservation keeps at every retire); the retire era
// is read after a seq_cst fence (the paper's plain load does not order it after the unlink in the
// C++ memory model).
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
struct he : core::scheme_base<he<Policies...>> {
  // Its policies, as given in Policies... or by default: the free policy (batch_free) and slots<K>
  // (4); advance_every<N> and scan_every<N> below.
  using free_policy = core::find_policy_t<free_policy_kind, batch_free, Policies...>;
  static_assert((core::known_kinds<free_policy_kind, slots_kind, advance_kind,
                                   scan_every_kind>::template contains<Policies> &&
                 ...),
                "he takes a free policy, slots<K>, advance_every<F> and scan_every<N>");
  static constexpr unsigned slot_count = core::policy_value<slots<4>, Policies...>;
  // Defaults: the clock advances every 64 allocations of a thread (a stalled reservation keeps
  // at most 64 x threads nodes per era it covers, and readers republish rarely: most protects
  // find the era unchanged); a thread scans once 100 + 2H more nodes wait (hp's R).
  static constexpr unsigned era_every = core::policy_value<advance_every<64>, Policies...>;
  static constexpr unsigned scan_base = core::policy_value<scan_every<100>, Policies...>;
  static constexpr bool wait_free = false;
  static constexpr unsigned fast_tries = 0;  // unused: no slow path

  // What it is (concepts.hpp): an era scheme whose garbage is bounded where its free policy is, and
  // which needs validated reads.
  static constexpr std::string_view name = "he";
  static constexpr reclaim::family family = reclaim::family::era;
  static constexpr bool bounds_garbage = free_policy::bounded;
  static constexpr unsigned needs = needs_validated_reads;

  // Its node base (the retire hook, the birth and retire eras), and the domain, guard and guard_ptr
  // protection of the hazard eras engine (detail/hazard_eras.hpp), which wfe shares.
  using node_base = detail::era_node;
  using domain = detail::he_domain<he>;
  using guard = core::slot_guard<detail::he_slot_hooks<he>>;
  using protection = core::slot_protection<detail::he_slot_hooks<he>>;
};

}  // namespace reclaim
