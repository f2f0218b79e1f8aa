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
//   * Launches: one kernel, the same agent for two and three ways (a cooperative grid;
//     where cooperative launch is unavailable or refused, a memset of the tile states and
//     a regular grid). The stable forms one more small kernel; the three-way forms one
//     more (the equal run from temp storage to its place).
//   * Optional tuning (scanlab/tuning.hpp): a tile shape as first template argument
//     (partition_policy below) and single_pass_options as last argument.
#pragma once

#include <scanlab/algorithms/partition_kernels.cuh>
#include <scanlab/detail/launch.cuh>
#include <scanlab/detail/util.cuh>
#include <scanlab/device/tile_state.cuh>
#include <scanlab/error.hpp>
#include <scanlab/tuning.hpp>

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

// Temp storage: [slack][tile states], then for the three-way partition the side buffer of
// the equal elements (n of them at most). Counts up to 2^32 - 1 ride in 32 bits (the
// two-way count and its status in one 64-bit word); beyond, in 64 bits.
template <class Count>
constexpr std::size_t one_state_bytes(std::int64_t num_tiles) {
  return detail::align_up(device::tile_state<typename Count::value_type>::storage_bytes(num_tiles));
}
template <class Count>
constexpr std::size_t state_bytes(std::int64_t num_tiles) {
  return 256 + Count::size * one_state_bytes<Count>(num_tiles);
}

// Test and benchmark hooks (users never need them): force a launch mode, cap the grid (so
// that small inputs give each block several tiles and take the deferred look-back).
struct two_way_options {
  two_way_mode mode = two_way_mode::automatic;
  int max_blocks = 0;  // 0: as many as can be resident
};

// Temp storage for the tile states of every architecture's tiles (no need to ask the device).
template <class Tuning, class Count>
constexpr std::size_t state_bytes_for(std::int64_t n) {
  return arch::max_over_policies<Tuning>([&](auto policy) {
    return state_bytes<Count>(detail::ceil_div<std::int64_t>(n, decltype(policy)::type::tile_items));
  });
}

// One launch of the agent, with the policy of `Tuning` the device runs. Count:
// class_counts<U, classes - 1>.
template <class Tuning, class Count, class InputIt, class OutputIt, class Classify>
[[nodiscard]] cudaError_t launch_partition(void* d_temp, InputIt d_in, OutputIt d_out, OutputIt d_rejected,
                                           OutputIt d_equal, bool separate, std::int64_t* d_counts, std::int64_t n,
                                           Classify classify, two_way_options options, cudaStream_t stream) {
  using T = value_of<InputIt>;
  static_assert(arch::table_fits<Tuning>([](auto policy) {
                  return partition_agent<typename decltype(policy)::type, InputIt, OutputIt, Count, Classify>::smem_bytes;
                }),
                "a partition tuning entry does not fit its architecture (limits: scanlab/arch.cuh)");
  auto* base = reinterpret_cast<unsigned char*>(detail::align_up(reinterpret_cast<std::uintptr_t>(d_temp)));
  constexpr auto kernel = partition_tiles_kernel<Tuning, InputIt, OutputIt, Count, Classify>;
  return detail::with_policy<kernel, Tuning>([&](auto policy) -> cudaError_t {
    using Policy = typename decltype(policy)::type;
    const std::int64_t num_tiles = detail::ceil_div<std::int64_t>(n, Policy::tile_items);
    bool vector_loads = false;
    if constexpr (std::is_pointer_v<InputIt> && detail::vector_items<T> > 1) {
      vector_loads = reinterpret_cast<std::uintptr_t>(d_in) % detail::vector_bytes == 0;
    }
    partition_params<InputIt, OutputIt, Count, Classify> params{
        d_in, d_out, d_rejected, d_equal, separate, vector_loads, d_counts, n, classify, {}};
    for (int k = 0; k < Count::size; ++k) {
      params.schedule.state[k] = device::tile_state<typename Count::value_type>(
          base + k * one_state_bytes<Count>(num_tiles), num_tiles);
    }
    params.schedule.num_tiles = num_tiles;
    return device::launch_single_pass<kernel>(params, Policy::block_threads, 0, options.mode, options.max_blocks,
                                              stream);
  });
}

enum class two_way_layout { reversed_rest, stable, two_outputs };

template <class Policy = void, class InputIt, class OutputIt, class Pred>
[[nodiscard]] cudaError_t dispatch_two_way(void* d_temp, std::size_t& temp_bytes, InputIt d_in, OutputIt d_out,
                                           OutputIt d_rejected, std::int64_t* d_num_selected, std::int64_t n,
                                           Pred pred, two_way_layout layout, cudaStream_t stream,
                                           two_way_options options = {}) {
  using T = value_of<InputIt>;
  using policy = std::conditional_t<std::is_void_v<Policy>, default_partition_policy<T>, Policy>;
  using narrow_t = class_counts<std::uint32_t, 1>;
  using wide_t = class_counts<std::uint64_t, 1>;
  if (n < 0) return cudaErrorInvalidValue;
  const bool narrow = n <= static_cast<std::int64_t>(UINT32_MAX);
  const std::size_t required = narrow ? state_bytes_for<policy, narrow_t>(n) : state_bytes_for<policy, wide_t>(n);
  if (const auto answer = detail::temp_storage_query(d_temp, temp_bytes, required, d_num_selected != nullptr)) return *answer;
  if (n == 0) return cudaMemsetAsync(d_num_selected, 0, sizeof(std::int64_t), stream);
  const bool separate = layout == two_way_layout::two_outputs;
  const by_predicate<Pred> classify{pred};
  if (narrow) {
    SCANLAB_TRY((launch_partition<policy, narrow_t>(d_temp, d_in, d_out, d_rejected, d_out, separate, d_num_selected,
                                                    n, classify, options, stream)));
  } else {
    SCANLAB_TRY((launch_partition<policy, wide_t>(d_temp, d_in, d_out, d_rejected, d_out, separate, d_num_selected, n,
                                                  classify, options, stream)));
  }
  if (layout == two_way_layout::stable) {
    SCANLAB_TRY(detail::launch(reverse_tail_kernel<std::remove_pointer_t<OutputIt>>, fixup_grid(n), 256, 0, stream,
                               d_out, n, d_num_selected));
  }
  return cudaSuccess;
}

template <class Policy = void, class InputIt, class OutputIt, class Comp>
[[nodiscard]] cudaError_t dispatch_three_way(void* d_temp, std::size_t& temp_bytes, InputIt d_in, OutputIt d_out,
                                             std::int64_t* d_counts, std::int64_t n, value_of<InputIt> pivot,
                                             Comp comp, bool stable, cudaStream_t stream,
                                             two_way_options options = {}) {
  using T = value_of<InputIt>;
  using policy = std::conditional_t<std::is_void_v<Policy>, default_three_way_policy<T>, Policy>;
  using narrow_t = class_counts<std::uint32_t, 2>;
  using wide_t = class_counts<std::uint64_t, 2>;
  if (n < 0) return cudaErrorInvalidValue;
  const bool narrow = n <= static_cast<std::int64_t>(UINT32_MAX);
  const std::size_t states = narrow ? state_bytes_for<policy, narrow_t>(n) : state_bytes_for<policy, wide_t>(n);
  const std::size_t required = states + detail::align_up(static_cast<std::size_t>(n) * sizeof(T));
  if (const auto answer = detail::temp_storage_query(d_temp, temp_bytes, required, d_counts != nullptr)) return *answer;
  if (n == 0) return cudaMemsetAsync(d_counts, 0, 3 * sizeof(std::int64_t), stream);
  // The side buffer of the equal elements, after the states (aligned: states is a multiple
  // of 256 past an aligned base, the base at most 255 bytes past d_temp).
  auto* base = reinterpret_cast<unsigned char*>(detail::align_up(reinterpret_cast<std::uintptr_t>(d_temp)));
  T* equal_buffer = reinterpret_cast<T*>(base + (states - 256));
  const around_pivot<T, Comp> classify{pivot, comp};
  if (narrow) {
    SCANLAB_TRY((launch_partition<policy, narrow_t>(d_temp, d_in, d_out, d_out, equal_buffer, false, d_counts, n,
                                                    classify, options, stream)));
  } else {
    SCANLAB_TRY((launch_partition<policy, wide_t>(d_temp, d_in, d_out, d_out, equal_buffer, false, d_counts, n,
                                                  classify, options, stream)));
  }
  SCANLAB_TRY(detail::launch(place_equal_kernel<T>, fixup_grid(2 * n), 256, 0, stream, equal_buffer, d_out, d_counts));
  if (stable) SCANLAB_TRY(detail::launch(reverse_greater_kernel<T>, fixup_grid(n), 256, 0, stream, d_out, n, d_counts));
  return cudaSuccess;
}

// default_policy as the dispatchers' void (their own default for two and three ways).
template <class Policy>
using dispatch_policy = detail::resolve_policy_t<Policy, void>;

template <class Policy, class InputIt, class OutputIt, class Pred>
[[nodiscard]] cudaError_t two_way(void* d_temp, std::size_t& temp_bytes, InputIt d_in, OutputIt d_out,
                                  OutputIt d_rejected, std::int64_t* d_num_selected, std::int64_t n, Pred pred,
                                  two_way_layout layout, cudaStream_t stream, const single_pass_options& options) {
  if (!detail::valid_options(options)) return cudaErrorInvalidValue;
  return dispatch_two_way<dispatch_policy<Policy>>(d_temp, temp_bytes, d_in, d_out, d_rejected, d_num_selected, n,
                                                   pred, layout, stream,
                                                   detail::to_dispatch_options<two_way_options>(options));
}

template <class Policy, class T, class Comp>
[[nodiscard]] cudaError_t three_way(void* d_temp, std::size_t& temp_bytes, const T* d_in, T* d_out,
                                    std::int64_t* d_counts, std::int64_t n, T pivot, Comp comp, bool stable,
                                    cudaStream_t stream, const single_pass_options& options) {
  if (!detail::valid_options(options)) return cudaErrorInvalidValue;
  return dispatch_three_way<dispatch_policy<Policy>>(d_temp, temp_bytes, d_in, d_out, d_counts, n, pivot, comp,
                                                     stable, stream,
                                                     detail::to_dispatch_options<two_way_options>(options));
}

}  // namespace partition_detail

// ---- tuning (optional: scanlab/tuning.hpp) -------------------------------------------------

// A tile shape for every function below, given as their first template argument:
//   scanlab::partition<scanlab::partition_policy<256, 16, 3>>(d_temp, temp_bytes, ...)
// BlockThreads x ItemsPerThread items per tile (fewer than 65536), MinBlocksPerSm for
// __launch_bounds__, L2Ahead tiles asked of L2 beyond the one loaded ahead (0: none). Left
// out (default_policy), the tuned shape for the element type is used:
// default_partition_policy<T> for the two-way forms, default_three_way_partition_policy<T>
// for the three-way forms (the per-architecture tables in partition_kernels.cuh). Every function below
// also takes an optional last argument, single_pass_options (launch mode, grid cap:
// benchmark and test knobs).
template <int BlockThreads, int ItemsPerThread, int MinBlocksPerSm, int L2Ahead = 0>
using partition_policy = partition_detail::partition_policy<BlockThreads, ItemsPerThread, MinBlocksPerSm, 0, L2Ahead>;
template <class T>
using default_partition_policy = partition_detail::default_two_way_policy<T>;
template <class T>
using default_three_way_partition_policy = partition_detail::default_three_way_policy<T>;

// out = [selected in input order | rejected in reverse input order]; *d_num_selected = count.
template <class Policy = default_policy, class InputIt, class T, class Pred>
[[nodiscard]] cudaError_t partition(void* d_temp, std::size_t& temp_bytes, InputIt d_in, T* d_out,
                                    std::int64_t* d_num_selected, std::int64_t n, Pred pred,
                                    cudaStream_t stream = nullptr, const single_pass_options& options = {}) {
  return partition_detail::two_way<Policy>(d_temp, temp_bytes, d_in, d_out, d_out, d_num_selected, n, pred,
                                           partition_detail::two_way_layout::reversed_rest, stream, options);
}

// out = [selected in input order | rejected in input order]; *d_num_selected = count.
template <class Policy = default_policy, class InputIt, class T, class Pred>
[[nodiscard]] cudaError_t stable_partition(void* d_temp, std::size_t& temp_bytes, InputIt d_in, T* d_out,
                                           std::int64_t* d_num_selected, std::int64_t n, Pred pred,
                                           cudaStream_t stream = nullptr, const single_pass_options& options = {}) {
  return partition_detail::two_way<Policy>(d_temp, temp_bytes, d_in, d_out, d_out, d_num_selected, n, pred,
                                           partition_detail::two_way_layout::stable, stream, options);
}

// selected_out = the selected in order (*d_num_selected of them), rejected_out = the rest in order.
template <class Policy = default_policy, class InputIt, class T, class Pred>
[[nodiscard]] cudaError_t partition_copy(void* d_temp, std::size_t& temp_bytes, InputIt d_in, T* d_selected_out,
                                         T* d_rejected_out, std::int64_t* d_num_selected, std::int64_t n, Pred pred,
                                         cudaStream_t stream = nullptr, const single_pass_options& options = {}) {
  return partition_detail::two_way<Policy>(d_temp, temp_bytes, d_in, d_selected_out, d_rejected_out, d_num_selected,
                                           n, pred, partition_detail::two_way_layout::two_outputs, stream, options);
}

// out = [less in order | equal in order | greater in reverse order]; d_counts[0..2] = the counts.
template <class Policy = default_policy, class T, class Comp = partition_detail::nan_last_less>
[[nodiscard]] cudaError_t partition_three_way(void* d_temp, std::size_t& temp_bytes, const T* d_in, T* d_out,
                                              std::int64_t* d_counts, std::int64_t n, T pivot, Comp comp = {},
                                              cudaStream_t stream = nullptr, const single_pass_options& options = {}) {
  return partition_detail::three_way<Policy>(d_temp, temp_bytes, d_in, d_out, d_counts, n, pivot, comp, false, stream,
                                             options);
}

// out = [less | equal | greater], each in input order; d_counts[0..2] = the counts.
template <class Policy = default_policy, class T, class Comp = partition_detail::nan_last_less>
[[nodiscard]] cudaError_t stable_partition_three_way(void* d_temp, std::size_t& temp_bytes, const T* d_in, T* d_out,
                                                     std::int64_t* d_counts, std::int64_t n, T pivot,
                                                     Comp comp = {}, cudaStream_t stream = nullptr,
                                                     const single_pass_options& options = {}) {
  return partition_detail::three_way<Policy>(d_temp, temp_bytes, d_in, d_out, d_counts, n, pivot, comp, true, stream,
                                             options);
}

}  // namespace scanlab
