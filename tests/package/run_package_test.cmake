# Driver of the package_consumer test (cmake -P): install, configure, build, check, run.
# Inputs: SCANLAB_BUILD_DIR, CONSUMER_SOURCE_DIR, WORK_DIR, GENERATOR, CUDA_COMPILER, CXX_COMPILER;
# CONSUMER_ARCHITECTURE (default 80: not the 90 scanlab builds for, so that nothing of the
# package may force its own).
cmake_minimum_required(VERSION 3.25)

foreach(var SCANLAB_BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR GENERATOR CUDA_COMPILER CXX_COMPILER)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_package_test.cmake: ${var} is not set")
  endif()
endforeach()
if(NOT DEFINED CONSUMER_ARCHITECTURE)
  set(CONSUMER_ARCHITECTURE 80)
endif()

set(prefix ${WORK_DIR}/prefix)
set(build ${WORK_DIR}/build)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "package_consumer: ${what} failed (${status}):\n${out}\n${err}")
  endif()
  message(STATUS "package_consumer: ${what}: ok")
  if(out)
    message(STATUS "${out}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

function(fail what)
  message(FATAL_ERROR "package_consumer: ${what}")
endfunction()

# Only the library's component: the consumer needs headers and the CMake package, and
# the apps need not be built for this test.
run_step("install into ${prefix}"
  ${CMAKE_COMMAND} --install ${SCANLAB_BUILD_DIR} --prefix ${prefix} --component scanlab_development)
# The consumer sets its architecture and nothing else for scanlab: no C++20 flag for nvcc
# (CMake 3.25 lacks it; the package supplies it), no CUDA runtime.
run_step("configure the consumer for sm_${CONSUMER_ARCHITECTURE}"
  ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${build} -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER}
    -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    -DCMAKE_CUDA_ARCHITECTURES=${CONSUMER_ARCHITECTURE}
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)
run_step("build the consumer" ${CMAKE_COMMAND} --build ${build})

# How each source was compiled: .cpp by the C++ compiler, .cu by nvcc with C++20 and the
# consumer's architecture only.
file(READ ${build}/compile_commands.json commands)
string(JSON count LENGTH "${commands}")
math(EXPR last "${count} - 1")
set(seen "")
foreach(i RANGE ${last})
  string(JSON file GET "${commands}" ${i} file)
  string(JSON command GET "${commands}" ${i} command)
  get_filename_component(name ${file} NAME)
  list(APPEND seen ${name})
  if(name MATCHES "\\.cpp$")
    string(FIND "${command}" "${CXX_COMPILER}" at)
    if(at LESS 0 OR at GREATER 1 OR command MATCHES "nvcc")
      fail("${name} was not compiled by the C++ compiler ${CXX_COMPILER}: ${command}")
    endif()
  elseif(name MATCHES "\\.cu$")
    if(NOT command MATCHES "nvcc")
      fail("${name} was not compiled by nvcc: ${command}")
    endif()
    if(NOT command MATCHES "-std=c\\+\\+20")
      fail("${name} was not compiled as C++20 (the package's cuda_std_20): ${command}")
    endif()
    if(NOT command MATCHES "compute_${CONSUMER_ARCHITECTURE}" OR command MATCHES "compute_90")
      fail("${name} was not compiled for sm_${CONSUMER_ARCHITECTURE} alone: ${command}")
    endif()
  endif()
endforeach()
foreach(expected main.cu report.cpp host_only.cpp)
  if(NOT expected IN_LIST seen)
    fail("${expected} is missing from the consumer's compile commands (${seen})")
  endif()
endforeach()
message(STATUS "package_consumer: .cpp by ${CXX_COMPILER}, .cu by nvcc -std=c++20 for sm_${CONSUMER_ARCHITECTURE}: ok")

# The binary holds code for the consumer's architecture and no other.
get_filename_component(cuda_bin ${CUDA_COMPILER} DIRECTORY)
find_program(CUOBJDUMP cuobjdump HINTS ${cuda_bin} NO_DEFAULT_PATH)
if(CUOBJDUMP)
  run_step("list the consumer's device code" ${CUOBJDUMP} --list-elf ${build}/scanlab_consumer)
  if(NOT step_output MATCHES "sm_${CONSUMER_ARCHITECTURE}" OR step_output MATCHES "sm_90")
    fail("scanlab_consumer should hold sm_${CONSUMER_ARCHITECTURE} code only:\n${step_output}")
  endif()
else()
  message(STATUS "package_consumer: no cuobjdump beside ${CUDA_COMPILER}: the device code is not listed "
                 "(the compile commands were checked above)")
endif()

run_step("run the host-only consumer" ${build}/scanlab_consumer_host)
run_step("run the consumer" ${build}/scanlab_consumer)
