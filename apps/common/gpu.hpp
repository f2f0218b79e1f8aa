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

// Empty when at least one CUDA device is usable, otherwise the reason.
std::string gpu_unavailable_reason();

// Makes `ordinal` the current device; throws no_gpu_error when there is no GPU
// and std::invalid_argument when the ordinal does not exist. Returns the device's name.
std::string select_gpu(int ordinal);

}  // namespace scanlab
