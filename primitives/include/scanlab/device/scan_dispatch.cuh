// The production scan's host side: temp-storage sizing, the choice of launch, the launch.
#pragma once

#include <scanlab/detail/launch.cuh>
#include <scanlab/detail/util.cuh>
#include <scanlab/device/scan_kernel.cuh>
#include <scanlab/device/scan_policy.cuh>
#include <scanlab/device/tile_state.cuh>
#include <scanlab/error.hpp>

#include <cuda_runtime.h>

#include <climits>
#include <cstddef>
#include <cstdint>

namespace scanlab::scan_detail {

// Test and benchmark hooks: force a launch mode, or cap the grid (to get many
// look-back rounds out of small inputs). Users never need these.
struct scan_options {
  scan_mode mode = scan_mode::automatic;
  int max_blocks = 0;  // 0: as many as can be resident
};

// The kernel of one instantiation (Tuning: a policy or a per-architecture table).
template <class Tuning, class InputIt, class OutputIt, class T, class Op>
inline constexpr auto scan_kernel = scan_tiles_kernel<Tuning, InputIt, OutputIt, T, Op>;

// Runs fn(std::type_identity<Policy>{}) with the policy the current device runs.
template <class Tuning, class InputIt, class OutputIt, class T, class Op, class Fn>
[[nodiscard]] cudaError_t with_scan_policy(Fn&& fn) {
  return detail::with_policy<scan_kernel<Tuning, InputIt, OutputIt, T, Op>, Tuning>(fn);
}

// How many blocks of the kernel fit on the current device at once (the first round of a
// cooperative launch), and whether it can launch cooperative grids: for tests.
template <class Tuning, class InputIt, class OutputIt, class T, class Op>
[[nodiscard]] cudaError_t resident_capacity(int& capacity, bool& cooperative) {
  return with_scan_policy<Tuning, InputIt, OutputIt, T, Op>([&](auto policy) {
    using Policy = typename decltype(policy)::type;
    return detail::resident_grid<scan_kernel<Tuning, InputIt, OutputIt, T, Op>>(
        Policy::block_threads, INT_MAX, capacity, cooperative,
        scan_agent<Policy, InputIt, OutputIt, T, Op>::parked_bytes);
  });
}

// Temp storage: [alignment slack][tile states].
template <class T>
constexpr std::size_t scan_temp_bytes(std::int64_t num_tiles) {
  return 256 + device::tile_state<T>::storage_bytes(num_tiles);
}

template <class Tuning, class InputIt, class OutputIt, class T, class Op>
[[nodiscard]] cudaError_t dispatch_scan(void* d_temp, std::size_t& temp_bytes, InputIt d_in, OutputIt d_out,
                                        std::int64_t n, scan_kind kind, T init, Op op, cudaStream_t stream,
                                        scan_options options = {}) {
  static_assert(arch::table_fits<Tuning>([](auto policy) {
                  return scan_agent<typename decltype(policy)::type, InputIt, OutputIt, T, Op>::smem_bytes;
                }),
                "a scan tuning entry does not fit its architecture (limits: scanlab/arch.cuh)");
  if (n < 0) return cudaErrorInvalidValue;
  // Sized for every architecture's tiles: no need to ask the device.
  const std::size_t required = arch::max_over_policies<Tuning>([&](auto policy) {
    return scan_temp_bytes<T>(detail::ceil_div<std::int64_t>(n, decltype(policy)::type::tile_items));
  });
  if (const auto answer = detail::temp_storage_query(d_temp, temp_bytes, required)) return *answer;
  if (n == 0) return cudaSuccess;
  return with_scan_policy<Tuning, InputIt, OutputIt, T, Op>([&](auto policy) -> cudaError_t {
    using Policy = typename decltype(policy)::type;
    const std::int64_t num_tiles = detail::ceil_div<std::int64_t>(n, Policy::tile_items);
    auto* base = reinterpret_cast<unsigned char*>(detail::align_up(reinterpret_cast<std::uintptr_t>(d_temp)));
    scan_params<InputIt, OutputIt, T, Op> params{.in = d_in,
                                                 .out = d_out,
                                                 .n = n,
                                                 .init = init,
                                                 .op = op,
                                                 .schedule = {{device::tile_state<T>(base, num_tiles)}, num_tiles, {}},
                                                 .exclusive = kind == scan_kind::exclusive,
                                                 .has_init = kind != scan_kind::inclusive,
                                                 .vector_load = false,
                                                 .vector_store = false};
    if constexpr (std::is_pointer_v<InputIt>) params.vector_load = reinterpret_cast<std::uintptr_t>(d_in) % 16 == 0;
    if constexpr (std::is_pointer_v<OutputIt>) params.vector_store = reinterpret_cast<std::uintptr_t>(d_out) % 16 == 0;
    return device::launch_single_pass<scan_kernel<Tuning, InputIt, OutputIt, T, Op>>(
        params, Policy::block_threads, scan_agent<Policy, InputIt, OutputIt, T, Op>::parked_bytes, options.mode,
        options.max_blocks, stream);
  });
}

}  // namespace scanlab::scan_detail
