// SPDX-License-Identifier: MIT
// include/reclaim/version.hpp against the version that CMake's project() read from it
// (PROJECT_MAJOR, PROJECT_MINOR, PROJECT_PATCH, PROJECT_VERSION_STRING, defined by
// tests/packaging/CMakeLists.txt): a header edited so that CMake cannot read it, or macros that
// disagree with one another, fail here. Through the umbrella header, which must include it.
#include <reclaim/reclaim.hpp>

#include <cstdio>
#include <string_view>

static_assert(RECLAIM_VERSION_MAJOR == PROJECT_MAJOR);
static_assert(RECLAIM_VERSION_MINOR == PROJECT_MINOR);
static_assert(RECLAIM_VERSION_PATCH == PROJECT_PATCH);
static_assert(std::string_view(RECLAIM_VERSION_STRING) == PROJECT_VERSION_STRING);
static_assert(RECLAIM_VERSION == PROJECT_MAJOR * 10000 + PROJECT_MINOR * 100 + PROJECT_PATCH);
// The integer orders versions only while minor and patch stay below 100.
static_assert(RECLAIM_VERSION_MINOR < 100 && RECLAIM_VERSION_PATCH < 100);

// The same in C++.
static_assert(reclaim::version.major == RECLAIM_VERSION_MAJOR);
static_assert(reclaim::version.minor == RECLAIM_VERSION_MINOR);
static_assert(reclaim::version.patch == RECLAIM_VERSION_PATCH);
static_assert(reclaim::version.string == RECLAIM_VERSION_STRING);
static_assert(reclaim::version.number() == RECLAIM_VERSION);

// What the macros are for: a test in the preprocessor.
#if RECLAIM_VERSION < 100
#error "RECLAIM_VERSION is below 0.1.0, the first version"
#endif

int main() {
  std::printf("reclaim %.*s: ok\n", static_cast<int>(reclaim::version.string.size()),
              reclaim::version.string.data());
}
