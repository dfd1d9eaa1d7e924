// SPDX-License-Identifier: MIT
// The library's version: the one place it is written. CMake's project() reads the three numbers
// from this file (CMakeLists.txt), and so do reclaimConfigVersion.cmake and reclaim.pc, which are
// generated from it; CHANGELOG.md has a section for each released version.
//
// The numbers follow semantic versioning. While the major version is 0, a new minor version may
// change the interface; a new patch version only fixes (reclaimConfigVersion.cmake accepts a
// request for the same major.minor only).
#pragma once
#include <string_view>

// The version's three numbers, major.minor.patch.
#define RECLAIM_VERSION_MAJOR 0
#define RECLAIM_VERSION_MINOR 1
#define RECLAIM_VERSION_PATCH 0

// One integer that orders versions, for the preprocessor: 0.1.0 is 100, 1.2.3 is 10203
// (#if RECLAIM_VERSION >= 200 ...). Minor and patch stay below 100.
#define RECLAIM_VERSION \
  (RECLAIM_VERSION_MAJOR * 10000 + RECLAIM_VERSION_MINOR * 100 + RECLAIM_VERSION_PATCH)

#define RECLAIM_DETAIL_STRINGIFY_(x) #x
#define RECLAIM_DETAIL_STRINGIFY(x) RECLAIM_DETAIL_STRINGIFY_(x)
// "0.1.0": made from the three numbers, so that it cannot disagree with them.
#define RECLAIM_VERSION_STRING                        \
  RECLAIM_DETAIL_STRINGIFY(RECLAIM_VERSION_MAJOR) "." \
  RECLAIM_DETAIL_STRINGIFY(RECLAIM_VERSION_MINOR) "." \
  RECLAIM_DETAIL_STRINGIFY(RECLAIM_VERSION_PATCH)

namespace reclaim {

// The same, for C++ code: reclaim::version.major, ... , reclaim::version.string.
struct version_info {
  int major;
  int minor;
  int patch;
  std::string_view string;
  // The same ordering integer as RECLAIM_VERSION.
  constexpr int number() const noexcept { return major * 10000 + minor * 100 + patch; }
};

// This copy of the library's version: the RECLAIM_VERSION_* macros above.
inline constexpr version_info version{RECLAIM_VERSION_MAJOR, RECLAIM_VERSION_MINOR,
                                      RECLAIM_VERSION_PATCH, RECLAIM_VERSION_STRING};

}  // namespace reclaim
