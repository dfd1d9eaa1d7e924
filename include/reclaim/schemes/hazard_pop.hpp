// SPDX-License-Identifier: MIT
// hazard_pop: HazardPOP, hazard pointers published on ping (Singh and Brown, "Publish on Ping: A
// Better Way to Publish Reservations in Memory Reclamation for Concurrent Data Structures",
// PPoPP 2025).
//
// What it is. hp (hp.hpp) whose readers keep their protections private: a release store into
// their slot and a compiler barrier, no fence. A scanner, after its unlinks and before it reads
// any slot, pings every thread bound to a record of its domain with a signal and waits until each
// has answered; the handler's answer is what publishes the thread's slots (core/ping.hpp).
//
// The memory-model argument (core/ping.hpp). The handler runs on the reader's own thread. If it
// runs after the reader stored p in its slot, that store precedes the handler's release store of
// its answer in the thread's order, and the scanner's acquire load of the answer then makes p
// visible to the scanner's read of the slot. If it runs before, the handler read the ping's
// number, which the scanner took by a seq_cst RMW after its unlink: the reader's re-read, after
// the handler, sees the unlink, and the reader gives p up. Which store the ping orders before
// which load: the reader's slot store before the scanner's slot load, or the scanner's unlink
// store before the reader's re-read load.
//
// When to use it. Where hp would do, in a program whose threads may be interrupted by a signal: a
// read costs what it costs under an epoch scheme (a plain store and load on x86), and a scan
// costs one signal per other thread of the domain and the wait for its handler (a few us each;
// a thread that is descheduled answers when it runs again, so a scan can take a time slice when
// threads outnumber cores). Garbage is bounded as under hp (R + H per thread with batch_free),
// also while a thread stalls: a stalled thread answers pings (its sleep is interrupted, SA_RESTART
// resumes most system calls; nanosleep returns EINTR). A thread stopped for good (SIGSTOP, a
// debugger) blocks the scanners that ping it, as under nbr.
//
// Hardware and OS assumptions. POSIX signals with tgkill (Linux). The ping's signal is a policy,
// rt_signal<K> (SIGRTMIN+K, default K = 5, beside nbr's 4) or signal_number<N>; the domain's
// constructor installs the handler once per process and throws if the signal already has a
// handler that is not ours. A thread that binds to a domain unblocks the signal; it must not
// block it again while it uses the domain. System calls of threads that use the domain may
// return EINTR (those SA_RESTART does not resume).
//
// Needs from a container: hp's (validated reads), and it takes hp's policies: hazard_pop<
// rt_signal<K>, slots<K>, FreePolicy, scan_policy<S>>.
//
// Differences from the paper. The handler copies nothing: the slots are already in the thread's
// record, where scanners read them after the answer (the answer's release store publishes them as
// a copy would), and the handler touches only this thread's mailbox, which is never freed, never
// a record of a domain that may have been destroyed. Only the threads bound to the domain are
// pinged, each answering any ping number at or past the scanner's, so that concurrent scanners
// share answers. Progress: the scanner waits for each pinged thread (blocking, as the paper's).
#pragma once
#include "../core/fence.hpp"
#include "../core/ping.hpp"
#include "../core/policy.hpp"
#include "../core/platform/signals.hpp"
#include "hp.hpp"

namespace reclaim {

// The ping's signal among a POP scheme's policies (default SIGRTMIN+5).
template <class... Policies>
using pop_signal_t = core::find_policy_t<signal_kind, rt_signal<5>, Policies...>;

template <class... Policies>
using hazard_pop =
    hp<fence_policy<core::ping_fence<pop_signal_t<Policies...>>>, Policies...>;

}  // namespace reclaim
