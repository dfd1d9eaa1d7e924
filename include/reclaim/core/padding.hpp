// SPDX-License-Identifier: MIT
// Cache-line size and padding for per-thread records.
#pragma once
#include <cstddef>

namespace reclaim::core {

// 128 rather than 64: Intel's adjacent-line prefetcher pulls cache lines in pairs, so two records
// 64 bytes apart still interfere. This is the "destructive interference" size that matters in
// practice on x86-64; std::hardware_destructive_interference_size is 64 in GCC and warns when used.
inline constexpr std::size_t cache_line = 128;

}  // namespace reclaim::core
