#include "common/gpu.hpp"

#include <scanlab/error.hpp>

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <utility>

namespace scanlab {

std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

std::string no_gpu_reason(const cuda_probe& probe) {
  if (probe.status == 0) return probe.device_count > 0 ? std::string() : "no CUDA-capable GPU found";
  if (!probe.driver_loaded) {
    return "no NVIDIA driver found (libcuda.so.1 could not be loaded" +
           (probe.load_error.empty() ? std::string() : ": " + probe.load_error) +
           "): install the NVIDIA driver to run the apps on a GPU";
  }
  if (probe.insufficient_driver && probe.driver_version > 0) {
    return "the NVIDIA driver is too old: it supports CUDA up to " + cuda_version_text(probe.driver_version) +
           ", and this binary's CUDA runtime is " + cuda_version_text(probe.runtime_version) +
           ": update the driver (or build with a CUDA toolkit no newer than the driver)";
  }
  return "no CUDA-capable GPU found (" + probe.status_text + ")";
}

namespace {

// Whether the driver library loads; dlerror's words if not, less the library's name.
bool driver_library_loads(std::string& error) {
  constexpr const char* library = "libcuda.so.1";
  if (void* handle = ::dlopen(library, RTLD_LAZY | RTLD_LOCAL)) {
    ::dlclose(handle);
    return true;
  }
  const char* text = ::dlerror();
  error = text != nullptr ? text : "";
  if (const std::string prefix = std::string(library) + ": "; error.starts_with(prefix)) error.erase(0, prefix.size());
  return false;
}

}  // namespace

std::string gpu_unavailable_reason() {
  cuda_probe probe;
  const cudaError_t status = cudaGetDeviceCount(&probe.device_count);
  probe.status = static_cast<int>(status);
  if (status != cudaSuccess) {
    cudaGetLastError();  // clear the error so later calls do not report it
    probe.status_text = cudaGetErrorString(status);
    probe.insufficient_driver = status == cudaErrorInsufficientDriver;
    probe.driver_loaded = driver_library_loads(probe.load_error);
    if (cudaDriverGetVersion(&probe.driver_version) != cudaSuccess) probe.driver_version = 0;
    if (cudaRuntimeGetVersion(&probe.runtime_version) != cudaSuccess) probe.runtime_version = 0;
    cudaGetLastError();
  }
  return no_gpu_reason(probe);
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

std::uint64_t free_device_memory() {
  std::size_t free = 0;
  std::size_t total = 0;
  SCANLAB_CHECK(cudaMemGetInfo(&free, &total));
  return free;
}

}  // namespace scanlab
