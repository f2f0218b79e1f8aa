# C++20 for nvcc with CMake versions that do not know it yet.
#
# CMake 3.25 knows nvcc's -std flags only up to C++17: a target that requires the
# cuda_std_20 compile feature (as scanlab::primitives does), or sets CUDA_STANDARD 20,
# fails at generation with 'The compiler feature "cuda_std_20" is not known to CUDA
# compiler "NVIDIA"'. nvcc has had -std=c++20 since 12.0. Where CUDA is enabled, nvcc is
# 12.0 or newer and CMake has no C++20 flag for it, this teaches CMake the flag and the
# feature, for the directory that includes it and those below. Included by scanlab's own
# build and by the installed package's config file (after enable_language(CUDA) or
# project(... CUDA), so that the CUDA compiler is known); a newer CMake that knows the
# flag is left alone. Sets SCANLAB_TAUGHT_CUDA20 where it did something.
if(CMAKE_CUDA_COMPILER_LOADED AND CMAKE_CUDA_COMPILER_ID STREQUAL "NVIDIA"
   AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0 AND NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")  # nvcc has no GNU dialect flag
  if(NOT "cuda_std_20" IN_LIST CMAKE_CUDA_COMPILE_FEATURES)
    list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
    list(APPEND CMAKE_CUDA20_COMPILE_FEATURES cuda_std_20)
  endif()
  set(SCANLAB_TAUGHT_CUDA20 TRUE)
endif()
