# SPDX-License-Identifier: MIT
# What the lab (RECLAIM_BUILD_BENCH) and the tests (RECLAIM_BUILD_TESTS) need beyond the library,
# which itself needs only a C++20 compiler and pthreads. Everything is looked for quietly first, so
# that a machine without the lab's packages gets one message naming all that is missing and the way
# to configure the library alone, instead of a find_package error from deep inside bench/ or tests/.
# We stop rather than skip the lab: a lab developer missing a package must not get a build without
# reclaim-bench or a ctest with no tests that passes. The targets found here are visible in bench/
# and tests/ (included from the top directory).
set(reclaim_missing "")

# reclaim_look_for(<what needs it> <package> <Debian package> [find_package arguments...])
macro(reclaim_look_for needed_by package debian)
  find_package(${package} ${ARGN} QUIET)
  if(NOT ${package}_FOUND)
    list(APPEND reclaim_missing "${package} (Debian: ${debian}), for ${needed_by}")
  endif()
endmacro()

if(RECLAIM_BUILD_BENCH)
  reclaim_look_for("the lab" CLI11 libcli11-dev CONFIG)
  reclaim_look_for("the lab" nlohmann_json nlohmann-json3-dev 3)
  reclaim_look_for("the lab" fmt libfmt-dev)
  reclaim_look_for("the lab" tomlplusplus libtomlplusplus-dev)  # experiment files (--experiment)
endif()
if(RECLAIM_BUILD_TESTS)
  reclaim_look_for("the tests" GTest libgtest-dev)
  reclaim_look_for("the tests" Python3 python3 COMPONENTS Interpreter)  # tests/cli, tests/tools
  reclaim_look_for("the tests" PkgConfig pkg-config)  # tests/packaging: the reclaim.pc consumer
endif()

if(reclaim_missing)
  list(JOIN reclaim_missing "\n  " missing_lines)
  message(FATAL_ERROR "reclaim: the lab and the tests need packages that were not found:\n"
    "  ${missing_lines}\n"
    "Install them (Debian/Ubuntu: scripts/deps.sh test), or configure the library alone "
    "(headers, install, find_package, pkg-config), which needs none of them: the default, "
    "with RECLAIM_BUILD_BENCH and RECLAIM_BUILD_TESTS off:\n"
    "  cmake -B build -DRECLAIM_BUILD_BENCH=OFF -DRECLAIM_BUILD_TESTS=OFF")
endif()
