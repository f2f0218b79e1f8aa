// The one fixture every GPU test derives from: skips, with the reason, where no CUDA device exists.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>

namespace scanlab::test {

// Empty when a CUDA device is usable; otherwise why not. Asked once per process.
inline const std::string& gpu_unavailable_reason() {
  static const std::string reason = [] {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
      return std::string("no CUDA device (cudaGetDeviceCount: ") + cudaGetErrorString(status) + ")";
    }
    if (count == 0) return std::string("no CUDA device");
    return std::string();
  }();
  return reason;
}

class gpu_test : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu_unavailable_reason().empty()) GTEST_SKIP() << gpu_unavailable_reason();
  }
};

}  // namespace scanlab::test
