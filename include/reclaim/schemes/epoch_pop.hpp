// epoch_pop: EpochPOP (Singh and Brown, PPoPP 2025): epochs while they advance, hazard pointers
// published on ping when a stalled thread holds the epoch.
//
// What it is. hp (hp.hpp) with Publish-on-Ping's fence (hazard_pop.hpp, core/ping.hpp) and the
// epochs_first policy. Every operation announces the global epoch as debra does, and every read
// is protected as under hazard_pop (a release store into a slot, a compiler barrier, a re-read),
// so that either mechanism alone can prove a node safe. A thread keeps its garbage in three bags
// tagged with the epoch it was retired in. When it holds R/2 nodes (R = 100 + 2H, hp's threshold)
// it tries to advance the epoch (a pass over every record's announcement) and frees the bags three
// epochs old, trying again every R/8 retires; only when its garbage reaches R, which happens when
// some thread stays inside an operation of an old epoch, does it scan as hazard_pop does: it pings
// every thread, and frees every node no hazard protects, whatever its tag.
//
// Why a node tagged e is safe at e + 3 (the argument of debra.hpp, whose announcement this is): an
// operation re-reads the epoch after announcing it until the two agree, so a pass that missed the
// announcement precedes it in the single order S, and while the operation runs the epoch stays at
// most its announcement + 1; a reader that holds a node tagged e announced at most e + 1, so the
// epoch reaches e + 3 only after it left. Protections outside a guard (guard_ptr) hold the
// thread inside an operation as long as they protect something, so the epoch cannot pass them
// either. Why a scan is safe: hazard_pop's argument, which needs no epoch; the nodes a scan keeps
// are tagged again with the epoch read after it, no older than any tag they had. The memory-model
// argument of each part is at its place (hp.hpp: announce_epoch(), try_advance(), scan();
// core/ping.hpp): the announcement's seq_cst exchange orders the reader's announcement store
// before its first read of the structure, and the pass's seq_cst loads the retirer's unlinks
// before its reads of the announcements; the ping orders the reader's slot store before the
// scanner's slot load, or the scanner's unlink store before the reader's re-read load.
//
// When to use it. Where hp would do and operations are short: a read costs what it costs under
// hazard_pop (no fence), an operation adds one RMW (the announcement), and while no thread stalls
// no signal is sent at all. Garbage is bounded as under hp (R + H per thread with batch_free),
// whatever other threads do: a stalled thread makes the epoch stop, and then the pings free
// everything it does not protect. The price against hazard_pop: the RMW per operation; against
// debra: the release store per read, and signals while a thread stalls.
//
// Hardware and OS assumptions, and what it takes: hazard_pop's (signals, rt_signal<K> default
// K = 5). Needs from a container: hp's (validated reads).
//
// Differences from the paper. The epoch part is debra's protocol (announce and re-read, tags +3);
// the fallback threshold is hp's R, and epoch advances are tried every R/8 retires once the
// garbage passes R/2, instead of the paper's fixed thresholds; an exiting thread scans (it may
// ping) and hands the rest over with its tags.
#pragma once
#include "hazard_pop.hpp"

namespace reclaim {

template <class... Policies>
using epoch_pop = hp<fence_policy<core::ping_fence<pop_signal_t<Policies...>>>, epochs_first,
                     Policies...>;

}  // namespace reclaim
