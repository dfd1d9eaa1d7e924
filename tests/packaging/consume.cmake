# cmake -P script behind the packaging tests: STEP is the test (tests/packaging/CMakeLists.txt says
# what each proves). Inputs: RECLAIM_SOURCE_DIR, CONSUMER_DIR, WORK_DIR (this step's scratch
# directory), PREFIX (the install prefix of library_only), GENERATOR, CXX, PKG_CONFIG, and HIDDEN:
# the lab's packages, hidden from every find_package of the projects configured here, as on a
# machine without them.
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
  # Configured for another prefix than the one it is installed into: reclaim.pc must not care.
  run(${configure} -S ${RECLAIM_SOURCE_DIR} -B ${WORK_DIR}/build
      -DRECLAIM_BUILD_BENCH=OFF -DRECLAIM_BUILD_TESTS=OFF
      -DCMAKE_INSTALL_PREFIX=${WORK_DIR}/configured-prefix-never-installed)
  run(${CMAKE_COMMAND} --install ${WORK_DIR}/build --prefix ${PREFIX})
  foreach(installed IN ITEMS include/reclaim/reclaim.hpp */reclaimConfig.cmake */reclaim.pc)
    file(GLOB_RECURSE found ${PREFIX}/${installed})
    if(NOT found)
      message(FATAL_ERROR "${installed} was not installed into ${PREFIX}")
    endif()
  endforeach()

elseif(STEP STREQUAL "missing_packages")
  execute_process(COMMAND ${configure} -S ${RECLAIM_SOURCE_DIR} -B ${WORK_DIR}/build
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
  run(${CXX} ${CONSUMER_DIR}/main.cpp ${flags} -o ${WORK_DIR}/consumer)
  run(${WORK_DIR}/consumer)

else()  # find_package, add_subdirectory, FetchContent: the consumer project gets reclaim that way
  run(${configure} -S ${CONSUMER_DIR} -B ${WORK_DIR}/build -DRECLAIM_VIA=${STEP}
      -DRECLAIM_SOURCE_DIR=${RECLAIM_SOURCE_DIR} -DCMAKE_PREFIX_PATH=${PREFIX}
      -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
  run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
  run(${WORK_DIR}/build/consumer)
endif()
