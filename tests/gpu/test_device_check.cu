// The device-code check on the GPU in use: this binary is built for it (the default
// build's architectures, or the portable list), so the check must find code, and the
// apps' check (select_gpu) must agree. Skips without a GPU.
#include "common/gpu.hpp"
#include "common/gpu_test.hpp"

#include <scanlab/device_check.cuh>
#include <scanlab/error.hpp>

#include <cuda_runtime.h>

namespace {

using scanlab::test::gpu_test;

TEST_F(gpu_test, DeviceCheckFindsCodeForTheDeviceInUse) {
  int device = -1;
  SCANLAB_CHECK(cudaGetDevice(&device));
  scanlab::device_code_report report;
  ASSERT_EQ(scanlab::check_device_code(device, report), cudaSuccess);
  EXPECT_TRUE(report.has_code()) << report.message;
  EXPECT_EQ(report.status, scanlab::device_code_status::present);
  EXPECT_TRUE(report.message.empty()) << report.message;
  EXPECT_EQ(report.device, device);
  EXPECT_FALSE(report.name.empty());
  EXPECT_GE(report.major, 7) << "CUDA 13 runs on Turing (sm_75) and later only";
  int current = -1;
  SCANLAB_CHECK(cudaGetDevice(&current));
  EXPECT_EQ(current, device);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST_F(gpu_test, DeviceCheckAgreesWithTheApps) {
  int device = -1;
  SCANLAB_CHECK(cudaGetDevice(&device));
  EXPECT_EQ(scanlab::missing_device_code_reason(device), "");
  EXPECT_FALSE(scanlab::select_gpu(device).empty());
  EXPECT_STRNE(scanlab::built_cuda_architectures(), "");
}

TEST_F(gpu_test, DeviceCheckEveryDevice) {
  int count = 0;
  SCANLAB_CHECK(cudaGetDeviceCount(&count));
  int before = -1;
  SCANLAB_CHECK(cudaGetDevice(&before));
  for (int device = 0; device < count; ++device) {
    scanlab::device_code_report report;
    ASSERT_EQ(scanlab::check_device_code(device, report), cudaSuccess) << "device " << device;
    // Every device: an answer, and a message exactly when there is no code.
    EXPECT_EQ(report.message.empty(), report.has_code()) << report.message;
  }
  int after = -1;
  SCANLAB_CHECK(cudaGetDevice(&after));
  EXPECT_EQ(after, before) << "the check leaves the current device as it was";
}

// Makes CUDA calls fail on purpose (left out of the sanitizer runs, which report them).
TEST_F(gpu_test, DeliberateApiErrorDeviceCheckBadOrdinals) {
  int count = 0;
  SCANLAB_CHECK(cudaGetDeviceCount(&count));
  scanlab::device_code_report report;
  EXPECT_EQ(scanlab::check_device_code(count, report), cudaErrorInvalidDevice);
  EXPECT_EQ(scanlab::check_device_code(-1, report), cudaErrorInvalidDevice);
  static_cast<void>(cudaGetLastError());  // the two refusals above
}

}  // namespace
