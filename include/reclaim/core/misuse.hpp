// SPDX-License-Identifier: MIT
// Misuse that would otherwise hang or corrupt silently, named and stopped in every build: a
// barrier() or synchronize() that would wait for the calling thread's own protection, a signal
// handler the application replaced under a scheme that needs it. (Misuse that only debug builds
// can afford to look for is an assert at its place.)
#pragma once
#include <cstdio>
#include <cstdlib>

namespace reclaim::core {

[[noreturn]] inline void stop_on_misuse(const char* what) noexcept {
  std::fprintf(stderr, "reclaim: %s\n", what);
  std::abort();
}

}  // namespace reclaim::core
