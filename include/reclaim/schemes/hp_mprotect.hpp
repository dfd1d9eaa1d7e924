// SPDX-License-Identifier: MIT
// hp_mprotect: hazard pointers whose readers fence nothing; the scanner forces a barrier on every
// processor by changing the protection of a page (Dice, Herlihy, Kogan, ISMM 2016, section 4).
//
// What it is. hp (hp.hpp) with the asymmetric fence of core/fence.hpp whose heavy side is
// core::mprotect_barrier: the scanner writes a page of its own, then makes it read-only and
// writable again. Taking write access from a page that is mapped writable and dirty obliges the
// kernel to invalidate its TLB entries on every processor that may hold them, which Linux on x86
// does by an inter-processor interrupt to every processor running a thread of the process, and
// waits for; the interrupt drains that processor's store buffer, as a fence would.
//
// The memory-model argument is hp_asym's (hp_asym.hpp), with the interrupt as each reader's
// barrier point: the reader's slot store is ordered before the scanner's slot load, or the
// scanner's unlink store before the reader's re-read load.
//
// When to use it. To measure paper 004's section 4, or where membarrier is missing (hp_asym falls
// back to this barrier on its own). A scan costs two mprotect calls and the interrupts (several
// times hp_asym's membarrier), under a process-wide lock. Garbage and progress as hp's.
//
// Hardware and OS assumptions. x86 (a compile-time error elsewhere: Arm and others invalidate
// remote TLBs by broadcast instructions that order only the accesses to that page). A processor
// that invalidates remote TLBs without interrupts (AMD's INVLPGB, which Linux 6.15 and later use)
// drains no store buffer: the domain's constructor then throws, naming the processor flag.
//
// Needs from a container, and the policies it takes: hp's.
// Differences from the paper. The page is one of our own, not the page that holds the hazards:
// readers never write it, so none traps and no SIGSEGV handler is installed, and hazard slots stay
// in their records (cache-line aligned, any number of threads). The interrupt that drains the
// readers' store buffers is the same: it goes to every processor running the process, whatever
// page changed.
#pragma once
#include "../core/fence.hpp"
#include "../core/platform/process_barrier.hpp"
#include "hp.hpp"

static_assert(reclaim::core::x86,
              "reclaim::hp_mprotect needs x86: its barrier is the TLB shootdown by interrupt that "
              "Linux sends to every processor running the process; use reclaim::hp_asym");

namespace reclaim {

template <class... Policies>
using hp_mprotect =
    hp<fence_policy<core::asymmetric_fence<core::mprotect_barrier>>, Policies...>;

}  // namespace reclaim
