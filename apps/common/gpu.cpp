#include "common/gpu.hpp"

#include <scanlab/error.hpp>

#include <cuda_runtime_api.h>

#include <utility>

namespace scanlab {

std::string gpu_unavailable_reason() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();  // clear the error so later calls do not report it
    return std::string("no CUDA-capable GPU found (") + cudaGetErrorString(status) + ")";
  }
  if (count == 0) return "no CUDA-capable GPU found";
  return {};
}

std::string select_gpu(int ordinal) {
  if (const std::string reason = gpu_unavailable_reason(); !reason.empty()) throw no_gpu_error(reason);
  int count = 0;
  SCANLAB_CHECK(cudaGetDeviceCount(&count));
  if (ordinal < 0 || ordinal >= count) {
    throw std::invalid_argument("--device " + std::to_string(ordinal) + ": this machine has " +
                                std::to_string(count) + " GPU(s), numbered from 0");
  }
  SCANLAB_CHECK(cudaSetDevice(ordinal));
  // Before anything is launched: a binary without code for this GPU says so in one line
  // (exit code 3) instead of failing at its first kernel.
  if (std::string reason = missing_device_code_reason(ordinal); !reason.empty()) {
    throw no_device_code_error(std::move(reason));
  }
  cudaDeviceProp prop{};
  SCANLAB_CHECK(cudaGetDeviceProperties(&prop, ordinal));
  return prop.name;
}

}  // namespace scanlab
