// Resident grids and cooperative launches, for the dispatchers that do a whole
// device-wide operation in one launch (reduce, scan, norms).
#pragma once

#include <scanlab/error.hpp>

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>

namespace scanlab::detail {

// How many blocks of `Kernel` (block_threads threads, dynamic_smem bytes of dynamic
// shared memory, the same on every call for a given kernel: it is cached) are
// resident on the current device at once, at most max_blocks_per_sm per SM, and
// whether the device launches cooperative grids. The queries cost host time that every
// small call would pay, so the answer is cached per kernel and device. A kernel asking for
// more than the default 48 KB of dynamic shared memory is allowed it here, once per device
// (every launch of it must then ask for the same dynamic_smem).
template <auto Kernel>
[[nodiscard]] cudaError_t resident_grid(int block_threads, int max_blocks_per_sm, int& max_blocks, bool& cooperative,
                                        std::size_t dynamic_smem = 0) {
  constexpr int cached_devices = 64;
  static std::atomic<int> cache[cached_devices] = {};  // (max_blocks << 1 | cooperative) + 1; 0: not asked yet
  int device = 0;
  SCANLAB_TRY(cudaGetDevice(&device));
  const bool cacheable = device >= 0 && device < cached_devices;
  if (cacheable) {
    if (const int packed = cache[device].load(std::memory_order_relaxed); packed != 0) {
      max_blocks = (packed - 1) >> 1;
      cooperative = ((packed - 1) & 1) != 0;
      return cudaSuccess;
    }
  }
  if (dynamic_smem > 48 * 1024) {
    SCANLAB_TRY(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(dynamic_smem)));
  }
  int sms = 0, coop = 0, per_sm = 0;
  SCANLAB_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  SCANLAB_TRY(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, device));
  SCANLAB_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, Kernel, block_threads, dynamic_smem));
  if (per_sm < 1 || sms < 1) return cudaErrorInvalidConfiguration;  // the kernel cannot run at all
  max_blocks = sms * (per_sm < max_blocks_per_sm ? per_sm : max_blocks_per_sm);
  cooperative = coop != 0;
  if (cacheable) cache[device].store(((max_blocks << 1) | (cooperative ? 1 : 0)) + 1, std::memory_order_relaxed);
  return cudaSuccess;
}

// kernel<<<grid, block_threads, dynamic_smem, stream>>>(args...) as a cooperative launch: every
// block resident at once, so cooperative_groups::this_grid().sync() is allowed. The
// grid must not exceed resident_grid's max_blocks.
template <class... Params, class... Args>
[[nodiscard]] cudaError_t launch_cooperative_smem(void (*kernel)(Params...), int grid, int block_threads,
                                                  std::size_t dynamic_smem, cudaStream_t stream, Args... args) {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeCooperative;
  attribute.val.cooperative = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(grid));
  config.blockDim = dim3(static_cast<unsigned>(block_threads));
  config.dynamicSmemBytes = dynamic_smem;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  return cudaLaunchKernelEx(&config, kernel, args...);
}

template <class... Params, class... Args>
[[nodiscard]] cudaError_t launch_cooperative(void (*kernel)(Params...), int grid, int block_threads,
                                             cudaStream_t stream, Args... args) {
  return launch_cooperative_smem(kernel, grid, block_threads, 0, stream, args...);
}

}  // namespace scanlab::detail
