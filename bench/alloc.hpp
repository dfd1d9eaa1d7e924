// Which malloc is in effect in this process, found by asking the allocators themselves: each one
// that can be loaded exports a function of its own, and whichever answers is the one malloc
// resolves to (it was linked in or preloaded ahead of libc).
#pragma once
#include <string>
#include <string_view>

namespace reclaim_bench {

// The allocators the lab knows, in the order they are probed; glibc is what answers when no other
// does.
inline constexpr std::string_view known_allocators[] = {"jemalloc", "tcmalloc", "mimalloc",
                                                        "glibc"};

struct allocator_info {
  std::string_view name;  // one of known_allocators, or "unknown"
  std::string version;    // as the allocator reports it; empty when it does not say
};

allocator_info detect_allocator();

}  // namespace reclaim_bench
