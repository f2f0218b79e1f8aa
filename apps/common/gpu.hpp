// Finding and selecting the GPU, for apps: a missing GPU is one clear line, not a crash.
#pragma once

#include <stdexcept>
#include <string>

namespace scanlab {

// Thrown when no usable CUDA device exists (apps exit with code 3).
class no_gpu_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thrown when a GPU exists but this binary has no code for it (built for other CUDA
// architectures); a no_gpu_error, so apps exit with code 3 and print its one line.
class no_device_code_error : public no_gpu_error {
 public:
  using no_gpu_error::no_gpu_error;
};

// Empty when at least one CUDA device is usable, otherwise the reason.
std::string gpu_unavailable_reason();

// The CUDA architectures the apps were built for: CMAKE_CUDA_ARCHITECTURES, entries
// separated by ',' ("90", "75-real,80-real,...,120-virtual", "native" resolved to the
// build machine's GPU where CMake knows it).
const char* built_cuda_architectures();

// Empty when this binary has code for device `ordinal`; otherwise the one line saying
// which GPU it is, its sm_XY, what the binary was built for and the CMake flag that adds
// code for it (scanlab/device_check.cuh). Throws cuda_error when the runtime cannot be
// asked (e.g. no such device).
std::string missing_device_code_reason(int ordinal);

// Makes `ordinal` the current device; throws no_gpu_error when there is no GPU,
// no_device_code_error when this binary has no code for it, and std::invalid_argument
// when the ordinal does not exist. Returns the device's name.
std::string select_gpu(int ordinal);

}  // namespace scanlab
