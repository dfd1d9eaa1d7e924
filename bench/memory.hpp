// SPDX-License-Identifier: MIT
// The process's memory and the machine's, from /proc (Linux).
#pragma once
#include <cstdint>

namespace reclaim_bench {

// Resets the peak that peak_rss_bytes() reports to the current RSS (writes "5" to
// /proc/self/clear_refs). Best effort: kernels or sandboxes that refuse leave the peak as it was.
void reset_peak_rss() noexcept;

// VmHWM, VmRSS and VmSize (the address space in use) of /proc/self/status in bytes; 0 when they
// cannot be read.
std::uint64_t peak_rss_bytes() noexcept;
std::uint64_t rss_bytes() noexcept;
std::uint64_t address_space_bytes() noexcept;

// MemAvailable of /proc/meminfo in bytes: what can be allocated without swapping; 0 if unknown.
std::uint64_t available_memory_bytes() noexcept;

}  // namespace reclaim_bench
