// Finding and selecting the GPU, for apps: a missing GPU is one clear line, not a crash.
#pragma once

#include <cstdint>
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

// Empty when at least one CUDA device is usable, otherwise the reason. Where the CUDA runtime
// finds no device, the reason tells a machine without an NVIDIA driver (libcuda.so.1 cannot be
// loaded) from a driver too old for the runtime (both versions named) and from the rest (the
// runtime's words): the runtime itself says "CUDA driver version is insufficient for CUDA
// runtime version" in the first two cases alike.
std::string gpu_unavailable_reason();

// What the runtime and the driver library said, for no_gpu_reason().
struct cuda_probe {
  int status = 0;                    // cudaGetDeviceCount's cudaError_t (0: success)
  std::string status_text;           // cudaGetErrorString of it
  bool insufficient_driver = false;  // status is cudaErrorInsufficientDriver
  bool driver_loaded = true;         // whether libcuda.so.1 could be loaded
  std::string load_error;            // why not (dlerror)
  int driver_version = 0;            // cudaDriverGetVersion: 12040 is CUDA 12.4; 0: no driver
  int runtime_version = 0;           // cudaRuntimeGetVersion
  int device_count = 0;
};

// The reason gpu_unavailable_reason() gives for `probe` (empty: a GPU is usable).
std::string no_gpu_reason(const cuda_probe& probe);

// "12.4" for 12040.
std::string cuda_version_text(int version);

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

// The free memory of the current device (cudaMemGetInfo) in bytes; cuda_error where the
// runtime cannot say.
[[nodiscard]] std::uint64_t free_device_memory();

}  // namespace scanlab
