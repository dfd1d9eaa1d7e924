// SPDX-License-Identifier: MIT
// hp_asym: hazard pointers whose readers fence nothing; the scanner issues a process-wide barrier
// with membarrier (Linux sys_membarrier, which paper 004, section 4, names as the system-call form
// of its mprotect barrier; folly's hazptr and liburcu's memb flavour work this way).
//
// What it is. hp (hp.hpp) with the asymmetric fence of core/fence.hpp: a reader publishes a
// protection with a release store and a compiler barrier, then re-reads its source; a scanner,
// after its unlinks and before it reads any slot, calls membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED),
// which returns once every processor running a thread of the process has executed a full barrier.
//
// The memory-model argument. The reader's barrier point (the kernel's interrupt) either follows
// its store of p: the store is then visible before membarrier returns, and the scanner's read of
// the slot sees p; or it precedes the store: the reader's re-read, after the store in program
// order (the compiler barrier keeps it there), then comes after the interrupt, after membarrier
// began, after the scanner's unlink: the re-read sees the unlink, and the reader gives p up.
// Which store the barrier orders before which load: the reader's slot store before the scanner's
// slot load, or the scanner's unlink store before the reader's re-read load.
//
// When to use it. Wherever hp would do, on Linux: a read costs what it costs under an epoch
// scheme (a plain store and load on x86), and a scan costs one system call (microseconds, more
// with many processors: it interrupts each one that runs a thread of the process). Garbage
// is bounded as under hp (R + H per thread with batch_free). Progress as hp's.
//
// Hardware and OS assumptions. Linux 4.14 or later with MEMBARRIER_CMD_PRIVATE_EXPEDITED (registered
// once per process, by the first domain). Where it is missing (older kernels, containers whose
// seccomp filter refuses the call), the first domain falls back to the mprotect barrier
// (hp_mprotect.hpp; x86 only) and says so once on stderr; where neither works the domain's
// constructor throws, saying why. RECLAIM_MEMBARRIER=0 in the environment forces the fallback.
//
// Needs from a container, and differences from hp: none; hp_asym<Policies...> is
// hp<fence_policy<asymmetric_fence<membarrier_barrier>>, Policies...> and takes hp's policies.
#pragma once
#include "../core/fence.hpp"
#include "../core/platform/process_barrier.hpp"
#include "hp.hpp"

namespace reclaim {

template <class... Policies>
using hp_asym =
    hp<fence_policy<core::asymmetric_fence<core::membarrier_barrier>>, Policies...>;

}  // namespace reclaim
