# Driver of the package_consumer test (cmake -P): install, configure, build, run.
# Inputs: SCANLAB_BUILD_DIR, CONSUMER_SOURCE_DIR, WORK_DIR, GENERATOR, CUDA_COMPILER, CXX_COMPILER.
cmake_minimum_required(VERSION 3.25)

foreach(var SCANLAB_BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR GENERATOR CUDA_COMPILER CXX_COMPILER)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_package_test.cmake: ${var} is not set")
  endif()
endforeach()

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
endfunction()

# Only the library's component: the consumer needs headers and the CMake package, and
# the apps need not be built for this test.
run_step("install into ${prefix}"
  ${CMAKE_COMMAND} --install ${SCANLAB_BUILD_DIR} --prefix ${prefix} --component scanlab_development)
run_step("configure the consumer"
  ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${build} -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER}
    -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    -DCMAKE_CUDA_ARCHITECTURES=90)
run_step("build the consumer" ${CMAKE_COMMAND} --build ${build})
run_step("run the consumer" ${build}/scanlab_consumer)
