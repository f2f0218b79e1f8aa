// scanlab/device_check.cuh: does this binary have code for a GPU?
//
// A CUDA binary carries SASS for the architectures it was built for (CMake's
// CMAKE_CUDA_ARCHITECTURES: "90" is SASS and PTX for sm_90, "80-real" SASS only) and
// runs on a GPU only if one of them fits it: SASS of the same major version and a minor
// version not above the GPU's, or PTX the driver compiles for it. Otherwise every launch
// fails with cudaErrorNoKernelImageForDevice, long after the program started. The check
// below asks the runtime once, at start, by looking up a kernel that does nothing:
//
//   scanlab::device_code_report report;
//   SCANLAB_CHECK(scanlab::check_device_code(device, report));
//   if (!report.has_code()) { std::fprintf(stderr, "%s\n", report.message.c_str()); return 3; }
//
// It answers for the code compiled in the translation unit that calls it, which is the
// whole binary's answer when all its CUDA sources are built for the same architectures
// (as CMake does for a target). Define SCANLAB_CUDA_ARCHITECTURES (a string: the
// CMAKE_CUDA_ARCHITECTURES value, with ',' or ';' between entries) when compiling that
// translation unit and the message names what the binary was built for; the header
// works without it. Needs only the CUDA runtime; compile it with nvcc (a .cu file).
#pragma once

#include <scanlab/detail/launch.cuh>
#include <scanlab/device_check.hpp>
#include <scanlab/error.hpp>

#include <cuda_runtime_api.h>

#include <string>
#include <string_view>

#ifdef SCANLAB_CUDA_ARCHITECTURES
#define SCANLAB_DETAIL_BUILT_FOR SCANLAB_CUDA_ARCHITECTURES
#else
#define SCANLAB_DETAIL_BUILT_FOR ""
#endif

namespace scanlab {

// What check_device_code found for one device.
struct device_code_report {
  int device = -1;
  std::string name;  // e.g. "NVIDIA H100 80GB HBM3"
  int major = 0;     // compute capability
  int minor = 0;
  device_code_status status = device_code_status::missing;
  std::string message;  // the one line to print when there is no code; empty when there is

  [[nodiscard]] bool has_code() const noexcept { return status == device_code_status::present; }
};

// Fills `report` for `device` (an ordinal): its name and compute capability, whether this
// translation unit's code can run on it, and where it cannot, the one-line message (see
// missing_device_code_message in scanlab/device_check.hpp). `built_for` names the
// architectures the binary was built for (default: SCANLAB_CUDA_ARCHITECTURES where the
// calling translation unit defines it, else unnamed).
//
// Returns cudaSuccess whenever the question was answered, whether or not there is code
// (a "no" is report.status, not an error); another status when it could not be asked:
// an invalid ordinal, no driver or GPU (e.g. cudaErrorNoDevice, cudaErrorInsufficientDriver).
// The current device is left as it was. A "no" of the runtime is taken out of its
// last-error slot (cudaGetLastError), which had overwritten any error left there before.
[[nodiscard]] inline cudaError_t check_device_code(int device, device_code_report& report,
                                                   std::string_view built_for = SCANLAB_DETAIL_BUILT_FOR) {
  report = device_code_report{};
  report.device = device;
  cudaDeviceProp prop{};
  SCANLAB_TRY(cudaGetDeviceProperties(&prop, device));
  report.name = prop.name;
  report.major = prop.major;
  report.minor = prop.minor;

  int current = 0;
  SCANLAB_TRY(cudaGetDevice(&current));
  if (current != device) SCANLAB_TRY(cudaSetDevice(device));
  cudaFuncAttributes attributes{};
  const cudaError_t probe =
      cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(&detail::arch_probe_kernel<>));
  const cudaError_t restore = current != device ? cudaSetDevice(current) : cudaSuccess;

  switch (probe) {
    case cudaSuccess:
      report.status = device_code_status::present;
      break;
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorInvalidDeviceFunction:
      report.status = device_code_status::missing;
      break;
    case cudaErrorUnsupportedPtxVersion:
      report.status = device_code_status::ptx_too_new;
      break;
    case cudaErrorJitCompilerNotFound:
      report.status = device_code_status::no_jit;
      break;
    default:
      return probe;  // not an answer about code: the caller sees the runtime's own error
  }
  if (probe != cudaSuccess) {
    static_cast<void>(cudaGetLastError());  // our own, expected refusal
    report.message =
        missing_device_code_message(device, report.name, report.major, report.minor, built_for, report.status);
  }
  return restore;
}

}  // namespace scanlab
