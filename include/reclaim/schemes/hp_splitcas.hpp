// SPDX-License-Identifier: MIT
// hp_splitcas: hazard pointers whose readers fence nothing; the scanner forces a global barrier
// with a locked RMW on a word that straddles two cache lines (Dice, Herlihy, Kogan, ISMM 2016,
// section 5).
//
// What it is. hp (hp.hpp) with the asymmetric fence of core/fence.hpp whose heavy side is
// core::split_lock_barrier: `lock xadd` on 4 bytes that span a cache-line boundary. A processor
// cannot perform it in one locked cache line, so it locks the bus, which (on the processors the
// paper measured, Intel Haswell) waits until every other processor's store buffer has drained.
//
// The memory-model argument is hp_asym's (hp_asym.hpp), with the bus lock as every reader's
// barrier point: the reader's slot store is ordered before the scanner's slot load, or the
// scanner's unlink store before the reader's re-read load. It rests on that drain, which no
// architecture manual promises: newer processors may implement bus locks otherwise, and
// hypervisors may emulate them. Use it to measure paper 004's idea; ship hp_asym.
//
// When to use it. To measure. A scan costs one split lock (microseconds, and a stall of the
// whole machine's memory traffic meanwhile). Garbage and progress as hp's.
//
// Hardware and OS assumptions. x86 only: a compile-time error elsewhere. Kernels that trap split
// locks (the split_lock_detect or bus_lock_detect processor flags, unless the kernel command line
// says split_lock_detect=off) would trap, warn, and with split_lock_mitigate sleep 10 ms on every
// scan: the domain's constructor throws instead, saying so.
//
// Needs from a container, and the policies it takes: hp's. Differences from the paper: the
// split-locked word is a static buffer of its own rather than a field of the hazard table.
#pragma once
#if !defined(__x86_64__) && !defined(__i386__)
#error "reclaim::hp_splitcas needs x86 (its barrier is a split lock); use reclaim::hp_asym"
#endif
#include "../core/fence.hpp"
#include "../core/platform/process_barrier.hpp"
#include "hp.hpp"

namespace reclaim {

template <class... Policies>
using hp_splitcas =
    hp<fence_policy<core::asymmetric_fence<core::split_lock_barrier>>, Policies...>;

}  // namespace reclaim
