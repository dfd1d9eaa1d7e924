# SPDX-License-Identifier: MIT
# cmake -P script behind the packaging tests: STEP is the test (tests/packaging/CMakeLists.txt says
# what each proves). Inputs: RECLAIM_SOURCE_DIR, CONSUMER_DIR, WORK_DIR (this step's scratch
# directory), PREFIX (the install prefix of library_only), GENERATOR, CXX, PKG_CONFIG, VERSION
# (the project's), and HIDDEN: the lab's packages, hidden from every find_package of the projects
# configured here, as on a machine without them (but for library_only, which proves that a plain
# configure does not look for them).
file(REMOVE_RECURSE ${WORK_DIR})

# run(<command...>): the command must succeed; its output is shown when it does not.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}")
  endif()
endfunction()

set(configure ${CMAKE_COMMAND} -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX})
foreach(package IN LISTS HIDDEN)
  list(APPEND configure -DCMAKE_DISABLE_FIND_PACKAGE_${package}=ON)
endforeach()

if(STEP STREQUAL "library_only")
  # The defaults, with the lab's packages in sight: a find_package of any of them would leave an
  # entry in the cache, found or not (<package>_DIR, _Python3_EXECUTABLE, PKG_CONFIG_EXECUTABLE).
  # Configured for another prefix than the one it is installed into: reclaim.pc must not care.
  run(${CMAKE_COMMAND} -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX} -S ${RECLAIM_SOURCE_DIR}
      -B ${WORK_DIR}/build -DCMAKE_INSTALL_PREFIX=${WORK_DIR}/configured-prefix-never-installed)
  list(JOIN HIDDEN "|" hidden_regex)
  file(STRINGS ${WORK_DIR}/build/CMakeCache.txt looked_for
       REGEX "^_?(${hidden_regex}|PKG_CONFIG)_[A-Za-z_]*:")
  if(looked_for)
    message(FATAL_ERROR "a configure with the defaults looked for the lab's packages:\n"
                        "${looked_for}")
  endif()
  run(${CMAKE_COMMAND} --install ${WORK_DIR}/build --prefix ${PREFIX})
  foreach(installed IN ITEMS include/reclaim/reclaim.hpp include/reclaim/version.hpp
                             */reclaimConfig.cmake */reclaimConfigVersion.cmake */reclaim.pc)
    file(GLOB_RECURSE found ${PREFIX}/${installed})
    if(NOT found)
      message(FATAL_ERROR "${installed} was not installed into ${PREFIX}")
    endif()
  endforeach()
  # The consumer chooses its standard (C++20 or later): flags appended after its own -std=c++23
  # must not take it back to C++20.
  file(GLOB_RECURSE pc_file ${PREFIX}/*/reclaim.pc)
  file(STRINGS ${pc_file} cflags REGEX "^Cflags:")
  if(cflags MATCHES "-std")
    message(FATAL_ERROR "reclaim.pc chooses the consumer's standard: ${cflags}")
  endif()

elseif(STEP STREQUAL "missing_packages")
  execute_process(COMMAND ${configure} -S ${RECLAIM_SOURCE_DIR} -B ${WORK_DIR}/build
                          -DRECLAIM_BUILD_BENCH=ON -DRECLAIM_BUILD_TESTS=ON
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  string(REGEX MATCHALL "CMake Error" errors "${out}")
  list(LENGTH errors error_count)
  if(rc EQUAL 0 OR NOT error_count EQUAL 1)
    message(FATAL_ERROR "expected one configure error, got ${error_count} (exit ${rc}):\n${out}")
  endif()
  foreach(expected IN LISTS HIDDEN ITEMS "-DRECLAIM_BUILD_BENCH=OFF -DRECLAIM_BUILD_TESTS=OFF")
    string(FIND "${out}" "${expected}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "the configure error does not name '${expected}':\n${out}")
    endif()
  endforeach()

elseif(STEP STREQUAL "pkg_config")
  # From a copy of the installed tree: the flags must name the copy (reclaim.pc is relocatable).
  file(COPY ${PREFIX}/ DESTINATION ${WORK_DIR}/moved)
  file(GLOB_RECURSE pc_file ${WORK_DIR}/moved/*/reclaim.pc)
  get_filename_component(pc_dir "${pc_file}" DIRECTORY)
  set(ENV{PKG_CONFIG_PATH} ${pc_dir})
  execute_process(COMMAND ${PKG_CONFIG} --cflags --libs reclaim RESULT_VARIABLE rc
                  OUTPUT_VARIABLE flags ERROR_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE)
  string(FIND "${flags}" "-I${WORK_DIR}/moved/" at)
  if(NOT rc EQUAL 0 OR at EQUAL -1)
    message(FATAL_ERROR "pkg-config --cflags --libs reclaim (exit ${rc}) gave '${flags}', "
                        "without -I${WORK_DIR}/moved/...")
  endif()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  run(${CXX} -std=c++20 ${CONSUMER_DIR}/main.cpp ${flags} -o ${WORK_DIR}/consumer)
  run(${WORK_DIR}/consumer)

elseif(STEP STREQUAL "versions")
  # reclaimConfigVersion.cmake: the same major.minor with any patch is accepted, another minor or
  # major is not (SameMinorVersion, the rule for a 0.x library: CMakeLists.txt says why). One
  # project asks for each version quietly; a second asks for 99 as a consumer would, REQUIRED.
  string(REGEX MATCH "^([0-9]+)[.]([0-9]+)" _ "${VERSION}")
  set(major ${CMAKE_MATCH_1})
  set(minor ${CMAKE_MATCH_2})
  math(EXPR next_minor "${minor} + 1")
  set(accepted ${major}.${minor} ${VERSION})
  set(refused 99 ${major}.${next_minor})
  if(minor GREATER 0)
    math(EXPR previous_minor "${minor} - 1")
    list(APPEND refused ${major}.${previous_minor})
  endif()
  file(WRITE ${WORK_DIR}/quiet/CMakeLists.txt
    "cmake_minimum_required(VERSION 3.25)\n"
    "project(versions LANGUAGES CXX)\n"
    "foreach(version IN ITEMS ${accepted})\n"
    "  find_package(reclaim \${version} CONFIG QUIET)\n"
    "  if(NOT reclaim_FOUND)\n"
    "    message(FATAL_ERROR \"find_package(reclaim \${version}) refused \${reclaim_VERSION}\")\n"
    "  endif()\n"
    "endforeach()\n"
    "foreach(version IN ITEMS ${refused})\n"
    "  find_package(reclaim \${version} CONFIG QUIET)\n"
    "  if(reclaim_FOUND)\n"
    "    message(FATAL_ERROR \"find_package(reclaim \${version}) accepted \${reclaim_VERSION}\")\n"
    "  endif()\n"
    "endforeach()\n")
  run(${configure} -S ${WORK_DIR}/quiet -B ${WORK_DIR}/quiet/build -DCMAKE_PREFIX_PATH=${PREFIX}
      -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
  file(WRITE ${WORK_DIR}/required/CMakeLists.txt
    "cmake_minimum_required(VERSION 3.25)\n"
    "project(required LANGUAGES CXX)\n"
    "find_package(reclaim 99 CONFIG REQUIRED)\n")
  execute_process(COMMAND ${configure} -S ${WORK_DIR}/required -B ${WORK_DIR}/required/build
                          -DCMAKE_PREFIX_PATH=${PREFIX} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(rc EQUAL 0 OR NOT out MATCHES "version: ${VERSION}")
    message(FATAL_ERROR "find_package(reclaim 99 REQUIRED) did not fail naming the installed "
                        "version ${VERSION} (exit ${rc}):\n${out}")
  endif()
  # The version has its section in the changelog.
  file(STRINGS ${RECLAIM_SOURCE_DIR}/CHANGELOG.md section REGEX "^## \\[${VERSION}\\]")
  if(NOT section)
    message(FATAL_ERROR "CHANGELOG.md has no '## [${VERSION}]' section")
  endif()

elseif(STEP STREQUAL "all_headers")
  # One source that includes every public header of the installed tree: all but detail/ (the
  # internals of the header beside it), core/platform/ (included by core/ and the schemes, whose
  # users never name them) and core/verify/ (the model checker's build only). The headers that
  # need a processor are included where reclaim.hpp includes them.
  file(GLOB_RECURSE headers RELATIVE ${PREFIX}/include ${PREFIX}/include/reclaim/*.hpp)
  list(FILTER headers EXCLUDE REGEX "/(detail|platform|verify)/")
  list(SORT headers)
  set(source "// Generated by tests/packaging/consume.cmake: every public header.\n")
  foreach(header IN LISTS headers)
    set(processors "")
    if(header MATCHES "schemes/hp_(mprotect|splitcas)[.]hpp$")
      set(processors "defined(__x86_64__) || defined(__i386__)")
    elseif(header MATCHES "schemes/(crystalline|he|hyaline|wfe)[.]hpp$")
      set(processors "defined(__x86_64__) || defined(__aarch64__)")
    endif()
    if(processors)
      string(APPEND source "#if ${processors}\n#include <${header}>\n#endif\n")
    else()
      string(APPEND source "#include <${header}>\n")
    endif()
  endforeach()
  list(LENGTH headers count)
  if(count LESS 50)
    message(FATAL_ERROR "only ${count} public headers under ${PREFIX}/include: ${headers}")
  endif()
  file(WRITE ${WORK_DIR}/all_headers.cpp "${source}")
  run(${configure} -S ${CONSUMER_DIR}/../headers -B ${WORK_DIR}/build
      -DALL_HEADERS=${WORK_DIR}/all_headers.cpp -DCMAKE_PREFIX_PATH=${PREFIX}
      -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
  run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
  run(${WORK_DIR}/build/all_headers_cxx20)
  run(${WORK_DIR}/build/all_headers_cxx23)

else()  # find_package, add_subdirectory, FetchContent: the consumer project gets reclaim that way
  run(${configure} -S ${CONSUMER_DIR} -B ${WORK_DIR}/build -DRECLAIM_VIA=${STEP}
      -DRECLAIM_SOURCE_DIR=${RECLAIM_SOURCE_DIR} -DCMAKE_PREFIX_PATH=${PREFIX}
      -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_INSTALL_PREFIX=${WORK_DIR}/installed)
  run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
  run(${WORK_DIR}/build/consumer)
  # Installing the consumer installs the consumer alone: reclaim, pulled in as a subproject, is
  # not the top project and installs nothing (RECLAIM_INSTALL).
  run(${CMAKE_COMMAND} --install ${WORK_DIR}/build)
  file(GLOB_RECURSE installed RELATIVE ${WORK_DIR}/installed ${WORK_DIR}/installed/*)
  if(NOT installed STREQUAL "bin/consumer")
    message(FATAL_ERROR "installing the consumer installed more than bin/consumer: ${installed}")
  endif()
endif()
