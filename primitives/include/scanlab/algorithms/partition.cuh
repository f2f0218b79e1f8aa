// scanlab/algorithms/partition.cuh: single-pass partitions on the decoupled look-back.
//
//   std::size_t temp_bytes = 0;
//   SCANLAB_CHECK(scanlab::partition(nullptr, temp_bytes, d_in, d_out, d_num_selected, n, is_even, stream));
//   ... allocate temp_bytes at d_temp ...
//   SCANLAB_CHECK(scanlab::partition(d_temp, temp_bytes, d_in, d_out, d_num_selected, n, is_even, stream));
//
// Two-way (pred(x) true: "selected"; *d_num_selected = their count, an int64 on the device):
//   partition         out = [selected, in input order | the rest, in REVERSE input order].
//                     One pass: reads n, writes n. The same layout as CUB's
//                     DevicePartition::If (the rest is written from the end of out).
//   stable_partition  out = [selected, in order | the rest, in order]: the one pass, then the
//                     rest reversed in place (reads and writes the rest a second time).
//   partition_copy    selected_out = the selected in order, rejected_out = the rest in order
//                     (rejected_out[0 .. n - count)): both stable, one pass.
// Three-way around a pivot, with a strict weak order comp (default operator<):
//   partition_three_way          out = [less | equal | greater]: x is less when comp(x, pivot),
//                                greater when comp(pivot, x), equal otherwise. less and equal
//                                keep their input order, greater is REVERSED. d_counts[0..2]
//                                = (less, equal, greater), int64 on the device. One pass over
//                                the data; the equal elements go through temp storage (their
//                                place in out is known only at the end of the pass), then to
//                                out: reads n + equal, writes n + 2 equal.
//   stable_partition_three_way   the same with greater in input order (greater reversed in place).
//
// Contract, for every function here:
//   * Two-phase temp storage (as CUB): with d_temp == nullptr only temp_bytes is set (>= 1;
//     it depends on n and the element type). Any alignment; no initialisation needed.
//     partition_three_way's temp storage holds n elements (the equal ones may be all).
//   * d_in: a pointer or random-access iterator (read as its value type T); outputs: T*.
//     out must not overlap the input (not in place). pred / comp: device callables, pure.
//   * Deterministic: the output is a fixed function of the input (the order inside each
//     part is the one stated above, whatever the timing).
//   * n is 64-bit; n = 0 writes zero counts. Asynchronous on `stream`; returns the first
//     failing CUDA status (cudaErrorInvalidValue for n < 0, too little temp storage or a
//     null count pointer). Never throws.
//   * Launches: two-way, one kernel (a cooperative grid; where cooperative launch is
//     unavailable, a memset of the tile states and a regular grid); three-way, a memset and
//     one kernel. The stable and three-way forms one more small kernel.
#pragma once

#include <scanlab/algorithms/partition_kernels.cuh>
#include <scanlab/detail/launch.cuh>
#include <scanlab/detail/util.cuh>
#include <scanlab/device/tile_state.cuh>
#include <scanlab/error.hpp>

#include <cuda_runtime.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <type_traits>

namespace scanlab {

namespace partition_detail {

template <class InputIt>
using value_of = std::remove_cv_t<typename std::iterator_traits<InputIt>::value_type>;

// Grid for the small fix-up kernels (reverse, place equal): grid-stride loops, enough
// blocks to fill the GPU for large parts, one for small ones.
inline unsigned fixup_grid(std::int64_t n) {
  const std::int64_t blocks = detail::ceil_div<std::int64_t>(n / 2 + 1, 256);
  return static_cast<unsigned>(blocks < 2048 ? blocks : 2048);
}

// Temp storage of the two-way partition: [slack][tile states]. Counts up to 2^32 - 1 ride
// in 32 bits (status and count in one 64-bit word); beyond, in 64 bits.
template <class Count>
constexpr std::size_t two_way_temp_bytes(std::int64_t num_tiles) {
  return 256 + device::tile_state<Count>::storage_bytes(num_tiles);
}

// Test and benchmark hooks (users never need them): force a launch mode, cap the grid (so
// that small inputs give each block several tiles and take the deferred look-back).
struct two_way_options {
  two_way_mode mode = two_way_mode::automatic;
  int max_blocks = 0;  // 0: as many as can be resident
};

template <class Policy, class Count, class InputIt, class OutputIt, class Pred>
[[nodiscard]] cudaError_t launch_two_way(void* d_temp, InputIt d_in, OutputIt d_out, OutputIt d_rejected,
                                         bool separate, std::int64_t* d_num_selected, std::int64_t n,
                                         std::int64_t num_tiles, Pred pred, two_way_options options,
                                         cudaStream_t stream) {
  using T = value_of<InputIt>;
  auto* base = reinterpret_cast<unsigned char*>(detail::align_up(reinterpret_cast<std::uintptr_t>(d_temp)));
  const device::tile_state<Count> state(base, num_tiles);
  constexpr auto kernel = partition_tiles_kernel<Policy, InputIt, OutputIt, Count, Pred>;
  int capacity = 0;
  bool cooperative = false;
  SCANLAB_TRY(detail::resident_grid<kernel>(Policy::block_threads, INT_MAX, capacity, cooperative));
  if (options.max_blocks > 0 && options.max_blocks < capacity) capacity = options.max_blocks;
  two_way_mode mode = options.mode == two_way_mode::automatic ? two_way_mode::cooperative : options.mode;
  if (!cooperative) mode = two_way_mode::tickets;
  bool vector_loads = false;
  if constexpr (std::is_pointer_v<InputIt> && detail::vector_items<T> > 1) {
    vector_loads = reinterpret_cast<std::uintptr_t>(d_in) % detail::vector_bytes == 0;
  }
  const std::int64_t grid = num_tiles < capacity ? num_tiles : capacity;
  const partition_params<InputIt, OutputIt, Count, Pred> params{d_in,  d_out,     d_rejected, separate, vector_loads,
                                                                d_num_selected, n, num_tiles, pred,     state,
                                                                mode};
  if (mode == two_way_mode::cooperative) {
    // Every tile state is reset inside the kernel, before its grid-wide barrier.
    SCANLAB_TRY(detail::launch_cooperative(kernel, static_cast<int>(grid), Policy::block_threads, stream, params));
  } else {
    SCANLAB_TRY(state.reset(stream));
    kernel<<<static_cast<unsigned>(grid), Policy::block_threads, 0, stream>>>(params);
    SCANLAB_TRY_LAUNCH();
  }
  return cudaSuccess;
}

enum class two_way_layout { reversed_rest, stable, two_outputs };

template <class Policy = void, class InputIt, class OutputIt, class Pred>
[[nodiscard]] cudaError_t dispatch_two_way(void* d_temp, std::size_t& temp_bytes, InputIt d_in, OutputIt d_out,
                                           OutputIt d_rejected, std::int64_t* d_num_selected, std::int64_t n,
                                           Pred pred, two_way_layout layout, cudaStream_t stream,
                                           two_way_options options = {}) {
  using T = value_of<InputIt>;
  using policy = std::conditional_t<std::is_void_v<Policy>, default_two_way_policy<T>, Policy>;
  if (n < 0) return cudaErrorInvalidValue;
  const std::int64_t num_tiles = detail::ceil_div<std::int64_t>(n, policy::tile_items);
  const bool narrow = n <= static_cast<std::int64_t>(UINT32_MAX);
  const std::size_t required =
      narrow ? two_way_temp_bytes<std::uint32_t>(num_tiles) : two_way_temp_bytes<std::uint64_t>(num_tiles);
  if (d_temp == nullptr) {
    temp_bytes = required;
    return cudaSuccess;
  }
  if (temp_bytes < required || d_num_selected == nullptr) return cudaErrorInvalidValue;
  if (n == 0) return cudaMemsetAsync(d_num_selected, 0, sizeof(std::int64_t), stream);
  const bool separate = layout == two_way_layout::two_outputs;
  if (narrow) {
    SCANLAB_TRY((launch_two_way<policy, std::uint32_t>(d_temp, d_in, d_out, d_rejected, separate, d_num_selected, n,
                                                       num_tiles, pred, options, stream)));
  } else {
    SCANLAB_TRY((launch_two_way<policy, std::uint64_t>(d_temp, d_in, d_out, d_rejected, separate, d_num_selected, n,
                                                       num_tiles, pred, options, stream)));
  }
  if (layout == two_way_layout::stable) {
    reverse_tail_kernel<<<fixup_grid(n), 256, 0, stream>>>(d_out, n, d_num_selected);
    SCANLAB_TRY_LAUNCH();
  }
  return cudaSuccess;
}

template <class T>
struct three_way_layout_bytes {
  // [slack][ticket][tile states][equal side buffer: n elements]
  static constexpr std::size_t ticket = 256;
  static std::size_t states(std::int64_t num_tiles) {
    return detail::align_up(device::tile_state<three_counts>::storage_bytes(num_tiles));
  }
  static std::size_t total(std::int64_t n, std::int64_t num_tiles) {
    return 256 + ticket + states(num_tiles) + detail::align_up(static_cast<std::size_t>(n) * sizeof(T));
  }
};

template <class Policy = void, class InputIt, class OutputIt, class Comp>
[[nodiscard]] cudaError_t dispatch_three_way(void* d_temp, std::size_t& temp_bytes, InputIt d_in, OutputIt d_out,
                                             std::int64_t* d_counts, std::int64_t n, value_of<InputIt> pivot,
                                             Comp comp, bool stable, cudaStream_t stream) {
  using T = value_of<InputIt>;
  static_assert(std::is_pointer_v<InputIt>, "the three-way partition reads a plain device array");
  using policy = std::conditional_t<std::is_void_v<Policy>, default_partition_policy<T>, Policy>;
  using layout = three_way_layout_bytes<T>;
  if (n < 0) return cudaErrorInvalidValue;
  const std::int64_t num_tiles = detail::ceil_div<std::int64_t>(n, policy::tile_items);
  const std::size_t required = layout::total(n, num_tiles);
  if (d_temp == nullptr) {
    temp_bytes = required;
    return cudaSuccess;
  }
  if (temp_bytes < required || d_counts == nullptr) return cudaErrorInvalidValue;
  if (n == 0) return cudaMemsetAsync(d_counts, 0, 3 * sizeof(std::int64_t), stream);

  auto* base = reinterpret_cast<unsigned char*>(detail::align_up(reinterpret_cast<std::uintptr_t>(d_temp)));
  auto* ticket = reinterpret_cast<unsigned long long*>(base);
  unsigned char* states = base + layout::ticket;
  T* equal_buffer = reinterpret_cast<T*>(states + layout::states(num_tiles));
  const device::tile_state<three_counts> state(states, num_tiles);
  // One memset: the ticket and every tile status (they are contiguous).
  SCANLAB_TRY(cudaMemsetAsync(base, 0, layout::ticket + device::tile_state<three_counts>::reset_bytes(num_tiles),
                              stream));

  using segments = single_segment<T>;
  using params_t = partition3_params<T, no_value, Comp, segments>;
  const auto kernel = partition3_tiles_kernel<policy, T, no_value, Comp, segments>;
  int capacity = 0;
  bool cooperative = false;
  SCANLAB_TRY((detail::resident_grid<partition3_tiles_kernel<policy, T, no_value, Comp, segments>>(
      policy::block_threads, INT_MAX, capacity, cooperative)));
  const std::int64_t grid = num_tiles < capacity ? num_tiles : capacity;
  const params_t params{d_in,    d_out,   equal_buffer, nullptr, nullptr, nullptr,
                        comp,    segments{n, num_tiles, state, pivot, d_counts},
                        num_tiles, ticket};
  kernel<<<static_cast<unsigned>(grid), policy::block_threads, 0, stream>>>(params);
  SCANLAB_TRY_LAUNCH();
  place_equal_kernel<<<fixup_grid(2 * n), 256, 0, stream>>>(equal_buffer, d_out, d_counts);
  SCANLAB_TRY_LAUNCH();
  if (stable) {
    reverse_greater_kernel<<<fixup_grid(n), 256, 0, stream>>>(d_out, n, d_counts);
    SCANLAB_TRY_LAUNCH();
  }
  return cudaSuccess;
}

}  // namespace partition_detail

// out = [selected in input order | rejected in reverse input order]; *d_num_selected = count.
template <class InputIt, class T, class Pred>
[[nodiscard]] cudaError_t partition(void* d_temp, std::size_t& temp_bytes, InputIt d_in, T* d_out,
                                    std::int64_t* d_num_selected, std::int64_t n, Pred pred,
                                    cudaStream_t stream = nullptr) {
  return partition_detail::dispatch_two_way(d_temp, temp_bytes, d_in, d_out, d_out, d_num_selected, n, pred,
                                            partition_detail::two_way_layout::reversed_rest, stream);
}

// out = [selected in input order | rejected in input order]; *d_num_selected = count.
template <class InputIt, class T, class Pred>
[[nodiscard]] cudaError_t stable_partition(void* d_temp, std::size_t& temp_bytes, InputIt d_in, T* d_out,
                                           std::int64_t* d_num_selected, std::int64_t n, Pred pred,
                                           cudaStream_t stream = nullptr) {
  return partition_detail::dispatch_two_way(d_temp, temp_bytes, d_in, d_out, d_out, d_num_selected, n, pred,
                                            partition_detail::two_way_layout::stable, stream);
}

// selected_out = the selected in order (*d_num_selected of them), rejected_out = the rest in order.
template <class InputIt, class T, class Pred>
[[nodiscard]] cudaError_t partition_copy(void* d_temp, std::size_t& temp_bytes, InputIt d_in, T* d_selected_out,
                                         T* d_rejected_out, std::int64_t* d_num_selected, std::int64_t n, Pred pred,
                                         cudaStream_t stream = nullptr) {
  return partition_detail::dispatch_two_way(d_temp, temp_bytes, d_in, d_selected_out, d_rejected_out,
                                            d_num_selected, n, pred,
                                            partition_detail::two_way_layout::two_outputs, stream);
}

// out = [less in order | equal in order | greater in reverse order]; d_counts[0..2] = the counts.
template <class T, class Comp = partition_detail::nan_last_less>
[[nodiscard]] cudaError_t partition_three_way(void* d_temp, std::size_t& temp_bytes, const T* d_in, T* d_out,
                                              std::int64_t* d_counts, std::int64_t n, T pivot, Comp comp = {},
                                              cudaStream_t stream = nullptr) {
  return partition_detail::dispatch_three_way(d_temp, temp_bytes, d_in, d_out, d_counts, n, pivot, comp, false,
                                              stream);
}

// out = [less | equal | greater], each in input order; d_counts[0..2] = the counts.
template <class T, class Comp = partition_detail::nan_last_less>
[[nodiscard]] cudaError_t stable_partition_three_way(void* d_temp, std::size_t& temp_bytes, const T* d_in, T* d_out,
                                                     std::int64_t* d_counts, std::int64_t n, T pivot,
                                                     Comp comp = {}, cudaStream_t stream = nullptr) {
  return partition_detail::dispatch_three_way(d_temp, temp_bytes, d_in, d_out, d_counts, n, pivot, comp, true,
                                              stream);
}

}  // namespace scanlab
