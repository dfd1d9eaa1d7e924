// SPDX-License-Identifier: MIT
// What the lab knows about its own build.
#pragma once
#include <string_view>

namespace reclaim_bench {

// `git describe --always --dirty` of the checkout at build time, or "unknown". Defined in the
// generated git.cpp (bench/git_version.cmake).
std::string_view git_commit();

}  // namespace reclaim_bench
