// SPDX-License-Identifier: MIT
// Allocators: which malloc is in effect in this process, found by asking the allocators themselves
// (each one that can be loaded exports a function of its own, and whichever answers is the one
// malloc resolves to: it was linked in or preloaded ahead of libc), and where the distribution's
// shared object of each one lies, for a child process to preload (child.hpp).
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace reclaim_bench {

// The allocators --alloc accepts, in the order `list` and the help show them.
inline constexpr std::string_view allocator_names[] = {"glibc", "jemalloc", "tcmalloc",
                                                       "mimalloc"};

struct allocator_info {
  std::string_view name;  // one of allocator_names, or "unknown"
  std::string version;    // as the allocator reports it; empty when it does not say
  std::string library;    // the shared object whose function answered; empty if unknown
};

allocator_info detect_allocator();

// Where the shared object to preload for `name` (not glibc) lies, or why it cannot be used.
struct allocator_library {
  std::string path;     // empty when unavailable
  std::string why_not;  // "not installed (apt-get install libjemalloc2)" and the like
};

// Looks for the distribution's shared object (by soname; for tcmalloc the minimal one, without the
// profiler, first) in the directory libc was loaded from and its /usr twin, or only in
// $RECLAIM_BENCH_ALLOC_DIR when that is set (for tests). Nothing is loaded into this process.
// glibc is always available, with the path of libc.
allocator_library find_allocator_library(std::string_view name);

// True in an AddressSanitizer or ThreadSanitizer build: the sanitizer owns malloc, and its runtime
// must come first in the library list, so no other allocator can be preloaded.
bool sanitizer_build();

}  // namespace reclaim_bench
