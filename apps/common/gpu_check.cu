// The apps' device-code check (scanlab/device_check.cuh), compiled by nvcc for the same
// architectures as every other CUDA source of the apps, so that its probe kernel answers
// for the whole binary. SCANLAB_CUDA_ARCHITECTURES comes from CMake (apps/common/CMakeLists.txt).
#include "common/gpu.hpp"

#include <scanlab/device_check.cuh>
#include <scanlab/error.hpp>

#ifndef SCANLAB_CUDA_ARCHITECTURES
#error "SCANLAB_CUDA_ARCHITECTURES (the CMAKE_CUDA_ARCHITECTURES the apps are built for) must be defined"
#endif

namespace scanlab {

const char* built_cuda_architectures() { return SCANLAB_CUDA_ARCHITECTURES; }

std::string missing_device_code_reason(int ordinal) {
  device_code_report report;
  SCANLAB_CHECK(check_device_code(ordinal, report, built_cuda_architectures()));
  return report.message;
}

}  // namespace scanlab
