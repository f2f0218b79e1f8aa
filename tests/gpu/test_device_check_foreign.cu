// The device-code check where the binary has NO code for the GPU: this test alone is
// built for sm_75 only (SASS, no PTX: tests/gpu/CMakeLists.txt), which runs on Turing
// GPUs and nothing newer. On any later GPU the check must say so, in the one line the
// apps print, and a launch must indeed fail; on a Turing GPU it skips.
#include "common/gpu_test.hpp"

#include <scanlab/device_check.cuh>
#include <scanlab/error.hpp>

#include <cuda_runtime.h>

#include <string>

namespace {

using scanlab::test::gpu_test;

__global__ void write_one_kernel(int* out) { *out = 1; }

// The probe's lookup and the launch fail on purpose: named DeliberateApiError so that the
// sanitizer runs (scripts/gpu-check.sh), which report failing calls, leave it out.
TEST_F(gpu_test, DeliberateApiErrorDeviceCheckReportsMissingCode) {
  int device = -1;
  SCANLAB_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  SCANLAB_CHECK(cudaGetDeviceProperties(&prop, device));
  if (prop.major == 7 && prop.minor == 5) GTEST_SKIP() << "this GPU is sm_75, the one this test is built for";

  scanlab::device_code_report report;
  ASSERT_EQ(scanlab::check_device_code(device, report), cudaSuccess);
  EXPECT_FALSE(report.has_code());
  EXPECT_EQ(report.status, scanlab::device_code_status::missing);
  const std::string sm = "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
  EXPECT_EQ(report.message, scanlab::missing_device_code_message(device, prop.name, prop.major, prop.minor, "75-real",
                                                                 scanlab::device_code_status::missing));
  EXPECT_NE(report.message.find(" is " + sm + ", but this binary has no code for it (built for sm_75)"),
            std::string::npos)
      << report.message;
  EXPECT_NE(report.message.find("-DCMAKE_CUDA_ARCHITECTURES=" + std::to_string(prop.major) +
                                std::to_string(prop.minor)),
            std::string::npos)
      << report.message;
  // The check's own refusal is not left behind, and the context still works.
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  int* d_out = nullptr;
  ASSERT_EQ(cudaMalloc(&d_out, sizeof(int)), cudaSuccess);

  // What the check predicts: a launch from this binary fails the same way.
  write_one_kernel<<<1, 1>>>(d_out);
  EXPECT_EQ(cudaGetLastError(), cudaErrorNoKernelImageForDevice);
  EXPECT_EQ(cudaFree(d_out), cudaSuccess);
}

}  // namespace
