// Kernel launches that report only their own status (launch(), launch_cooperative*()),
// and resident grids for the dispatchers that do a whole
// device-wide operation in one cooperative launch (reduce, scan, select, partition,
// linrec, norms).
#pragma once

#include <scanlab/arch.cuh>
#include <scanlab/error.hpp>

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <type_traits>
#include <vector>
#include <utility>

namespace scanlab::detail {

// cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes), made
// once per kernel and device. Besides raising the limit, that runtime call clears the
// runtime's last-error slot (CUDA 13.0, seen on the H100: a failure the caller had left there
// vanishes, see tests/gpu/test_launch_errors*), so a library call makes it the first time
// only; 48 KB or less needs no opt-in and makes no call.
template <class... Params>
[[nodiscard]] cudaError_t allow_dynamic_smem(void (*kernel)(Params...), std::size_t bytes) {
  if (bytes <= 48 * 1024) return cudaSuccess;
  int device = 0;
  SCANLAB_TRY(cudaGetDevice(&device));
  struct allowance {
    const void* kernel;
    int device;
    std::size_t bytes;
  };
  static std::mutex lock;
  static std::vector<allowance> allowed;
  const auto* key = reinterpret_cast<const void*>(kernel);
  {
    const std::lock_guard guard(lock);
    for (const allowance& a : allowed) {
      if (a.kernel == key && a.device == device && a.bytes >= bytes) return cudaSuccess;
    }
  }
  SCANLAB_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  const std::lock_guard guard(lock);
  allowed.push_back({key, device, bytes});
  return cudaSuccess;
}

// An int worked out once per device and kept for the process: compute(device, value) runs
// the first time only (for devices 0..63; others ask every time). One cache per Site type:
// a tag and the kernel it describes, so every kernel instantiation has its own.
template <class Site, class Compute>
[[nodiscard]] cudaError_t once_per_device(int& value, Compute&& compute) {
  constexpr int cached_devices = 64;
  static std::atomic<int> cache[cached_devices] = {};  // value + 1; 0: not computed yet
  int device = 0;
  SCANLAB_TRY(cudaGetDevice(&device));
  const bool cacheable = device >= 0 && device < cached_devices;
  if (cacheable) {
    if (const int known = cache[device].load(std::memory_order_relaxed); known != 0) {
      value = known - 1;
      return cudaSuccess;
    }
  }
  SCANLAB_TRY(compute(device, value));
  if (cacheable) cache[device].store(value + 1, std::memory_order_relaxed);
  return cudaSuccess;
}

template <auto Kernel>
struct resident_site {};
template <auto Kernel>
struct sm_site {};

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
  int packed = 0;  // max_blocks << 1 | cooperative
  SCANLAB_TRY(once_per_device<resident_site<Kernel>>(packed, [&](int device, int& answer) -> cudaError_t {
    SCANLAB_TRY(allow_dynamic_smem(Kernel, dynamic_smem));
    int sms = 0, coop = 0, per_sm = 0;
    SCANLAB_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    SCANLAB_TRY(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, device));
    SCANLAB_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, Kernel, block_threads, dynamic_smem));
    if (per_sm < 1 || sms < 1) return cudaErrorInvalidConfiguration;  // the kernel cannot run at all
    answer = (sms * (per_sm < max_blocks_per_sm ? per_sm : max_blocks_per_sm)) << 1 | (coop != 0 ? 1 : 0);
    return cudaSuccess;
  }));
  max_blocks = packed >> 1;
  cooperative = (packed & 1) != 0;
  return cudaSuccess;
}

// The architecture (x 10: 75, 80, 90, ...) of the code the driver runs for `Kernel` on the
// current device: the PTX version its image was compiled from (cudaFuncGetAttributes), which
// is what __CUDA_ARCH__ was in that code, also when the driver compiles older PTX for a newer
// GPU. Picks the host side of a per-architecture tuning (scanlab/arch.cuh). A binary without
// code for the device fails here with cudaErrorNoKernelImageForDevice. Cached per kernel and
// device (one runtime call per kernel and device in the process).
template <auto Kernel>
[[nodiscard]] cudaError_t kernel_sm(int& sm) {
  return once_per_device<sm_site<Kernel>>(sm, [](int, int& answer) -> cudaError_t {
    cudaFuncAttributes attributes{};
    SCANLAB_TRY(cudaFuncGetAttributes(&attributes, Kernel));
    answer = attributes.ptxVersion;
    return cudaSuccess;
  });
}

// Runs fn(std::type_identity<Policy>{}) with the policy of `Tuning` (scanlab/arch.cuh) that
// `Kernel` runs on the current device: a dispatcher's host side, written once as a generic
// lambda for any policy.
template <auto Kernel, class Tuning, class Fn>
[[nodiscard]] cudaError_t with_policy(Fn&& fn) {
  int sm = 0;
  SCANLAB_TRY(kernel_sm<Kernel>(sm));
  return arch::with_family(sm, [&](auto family) -> cudaError_t {
    return fn(std::type_identity<arch::policy_for<Tuning, decltype(family)::value>>{});
  });
}

// An empty kernel: stands for this translation unit's kernels when a policy is needed
// without a particular kernel (all of a translation unit's kernels are built for the same
// architectures), and probes whether the binary has code for a device at all
// (check_device_code: looking up its attributes loads it, which fails without such code).
// A template, so that every translation unit including this header may define it.
template <int = 0>
__global__ void arch_probe_kernel() {}

// Items per tile of `Tuning` on the current device, for tests and tools that place data
// at tile boundaries.
template <class Tuning>
[[nodiscard]] cudaError_t device_tile_items(std::int64_t& tile_items) {
  return with_policy<arch_probe_kernel<>, Tuning>([&](auto policy) {
    tile_items = decltype(policy)::type::tile_items;
    return cudaSuccess;
  });
}

// ---- Launches -------------------------------------------------------------------------
//
// The library launches its kernels through launch() or launch_cooperative*(), not with
// <<<...>>> followed by cudaGetLastError(). The runtime keeps ONE last-error slot per
// host thread, which every failing runtime call overwrites and cudaGetLastError() reads and
// clears. Reading it after a launch would report (and wipe) an earlier, unrelated failure
// of the caller as ours, and call failed a launch that started. cudaLaunchKernelEx returns
// the status of this launch alone (a sticky error of the context included, as every call
// does), and our successful launches leave the slot as the caller left it.
//
// cudaLaunchKernelEx also checks the arguments: it converts each to the kernel's
// parameter type, so a wrong count or an unconvertible type does not compile. Kernel
// templates are named with all their arguments (kernel<Policy, InputIt, ...>): nothing is
// deduced from the call as with <<<...>>>.

// Test hook (users never need it): while true, every cooperative launch of the library is
// refused by the runtime with cudaErrorCooperativeLaunchTooLarge, as in a context that
// schedules on fewer SMs than the device has, so the tests can run each dispatcher's
// fall-back path on any GPU. The refusal is a real one (the launch asks for a grid no GPU
// holds at once), so the runtime also records it in the last-error slot, as it would in
// such a context.
inline std::atomic<bool> cooperative_refusal_for_testing{false};

// Blocks of the grid a forced refusal asks for: more than any GPU can hold at once
// (32 blocks per SM at most: it would take half a million SMs), within gridDim.x's limit.
inline constexpr unsigned refused_grid_for_testing = 1u << 24;

// The one cudaLaunchConfig_t builder. `attributes` (may be null) must outlive the launch call.
inline cudaLaunchConfig_t launch_config(dim3 grid, dim3 block, std::size_t dynamic_smem, cudaStream_t stream,
                                        cudaLaunchAttribute* attributes = nullptr, unsigned num_attributes = 0) {
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = dynamic_smem;
  config.stream = stream;
  config.attrs = attributes;
  config.numAttrs = num_attributes;
  return config;
}

// kernel<<<grid, block, dynamic_smem, stream>>>(args...), returning this launch's status.
template <class... Params, class... Args>
[[nodiscard]] cudaError_t launch(void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t dynamic_smem,
                                 cudaStream_t stream, Args&&... args) {
  const cudaLaunchConfig_t config = launch_config(grid, block, dynamic_smem, stream);
  return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

// launch() as a cooperative launch: every block resident at once, so
// cooperative_groups::this_grid().sync() is allowed. The grid must not exceed
// resident_grid's max_blocks.
//
// Refusal. The runtime may still refuse the grid (cudaErrorCooperativeLaunchTooLarge)
// although resident_grid sized it: a context limited to fewer SMs than the device has
// (MPS with an active-thread percentage, a green context) reports the device's SM count
// but holds fewer blocks at once. Every caller then runs its non-cooperative path (tickets
// or two launches: the same results), so a refusal is not a failure of the call:
//   if (cooperative) {
//     const cudaError_t status = launch_cooperative(...);
//     if (status != cudaErrorCooperativeLaunchTooLarge) return status;  // launched, or failed
//   }
//   ... the non-cooperative path ...
// The refused launch leaves its error in the runtime's last-error slot; it is removed here
// (only when the slot holds exactly that refusal), so that a call which succeeded through
// its fall-back leaves the caller no failure to find. The runtime wrote the refusal over
// whatever error the caller had left in the slot (one slot, overwritten by every failing
// call; there is no call to put an error back), so in a context that refuses cooperative
// launches such an earlier error of the caller is lost; everywhere else it stays.
template <class... Params, class... Args>
[[nodiscard]] cudaError_t launch_cooperative_smem(void (*kernel)(Params...), int grid, int block_threads,
                                                  std::size_t dynamic_smem, cudaStream_t stream, Args&&... args) {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeCooperative;
  attribute.val.cooperative = 1;
  const bool force_refusal = cooperative_refusal_for_testing.load(std::memory_order_relaxed);
  const dim3 grid_dim(force_refusal ? refused_grid_for_testing : static_cast<unsigned>(grid));
  const cudaLaunchConfig_t config =
      launch_config(grid_dim, dim3(static_cast<unsigned>(block_threads)), dynamic_smem, stream, &attribute, 1);
  const cudaError_t status = cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
  if (status == cudaErrorCooperativeLaunchTooLarge && cudaPeekAtLastError() == status) {
    static_cast<void>(cudaGetLastError());
  }
  return status;
}

template <class... Params, class... Args>
[[nodiscard]] cudaError_t launch_cooperative(void (*kernel)(Params...), int grid, int block_threads,
                                             cudaStream_t stream, Args&&... args) {
  return launch_cooperative_smem(kernel, grid, block_threads, 0, stream, std::forward<Args>(args)...);
}

}  // namespace scanlab::detail
