// Stream compaction the classic way, in three phases on scanlab's scan: the teaching
// version of scanlab/algorithms/select.cuh (same entry points, namespace
// scanlab::three_phase, same results).
//
//   phase 1  flags      flags[i] = 1 if item i is kept, else 0          (reads n items)
//   phase 2  scan       positions = exclusive prefix sum of the flags   (scanlab::exclusive_scan,
//                       in 64-bit: positions past 2^32 are exact)
//   phase 3  scatter    out[positions[i]] = in[i] where flags[i];
//                       the count = positions[n-1] + flags[n-1]        (reads the items again)
//
// Simple and obviously right, but it moves much more memory than the answer needs: the
// items are read twice, and flags (1 byte) and positions (8 bytes) are written and read
// back for every item: about 2*sizeof(T) + 19 bytes per item against sizeof(T) plus the
// output for the one-pass version, which does all three phases inside one tile while the
// tile is in registers, with only a tile's count crossing between blocks.
//
// Temp storage: n bytes of flags, 8n bytes of positions and the scan's own, so the
// caller must provide about 9 bytes per item (the production path needs ~8 bytes per
// 4096 items). Launches: 3 (plus the scan's one). Grid-stride loops, 64-bit indices.
#pragma once

#include <scanlab/algorithms/select_kernels.cuh>
#include <scanlab/detail/launch.cuh>
#include <scanlab/detail/util.cuh>
#include <scanlab/error.hpp>
#include <scanlab/functional.cuh>
#include <scanlab/iterator.cuh>
#include <scanlab/scan.cuh>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace scanlab::three_phase {

namespace detail3 {

inline constexpr int threads = 256;
inline constexpr int max_blocks = 132 * 16;  // enough to cover any GPU of today with a grid-stride loop

inline unsigned grid_for(std::int64_t n) {
  const std::int64_t blocks = scanlab::detail::ceil_div<std::int64_t>(n, threads);
  return static_cast<unsigned>(blocks < max_blocks ? blocks : max_blocks);
}

// Phase 1: one flag per item.
template <class KeyIt, class FlagIt, class Selector>
__global__ void __launch_bounds__(threads) flag_kernel(KeyIt keys, FlagIt flags_in, std::uint8_t* flags,
                                                       std::int64_t n, Selector selector) {
  using select_detail::select_kind;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
    bool keep;
    if constexpr (Selector::kind == select_kind::predicate) {
      keep = selector(keys[i]);
    } else if constexpr (Selector::kind == select_kind::flags) {
      keep = static_cast<bool>(flags_in[i]);
    } else {
      keep = i == 0 || !selector.eq(keys[i - 1], keys[i]);
    }
    flags[i] = keep ? 1 : 0;
  }
}

// Phase 2 reads the flags as 64-bit numbers.
struct widen {
  __host__ __device__ std::int64_t operator()(std::uint8_t flag) const { return flag; }
};

// Phase 3: kept items to their positions; the last item's thread writes the count.
template <class KeyIt, class ValueIt, class KeyOut, class ValueOut>
__global__ void __launch_bounds__(threads) scatter_kernel(KeyIt keys, ValueIt values, const std::uint8_t* flags,
                                                          const std::int64_t* positions, KeyOut keys_out,
                                                          ValueOut values_out, std::int64_t* num_selected,
                                                          std::int64_t n) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
    if (flags[i] != 0) {
      keys_out[positions[i]] = keys[i];
      if constexpr (!select_detail::is_none<ValueIt>) values_out[positions[i]] = values[i];
    }
    if (i == n - 1) *num_selected = positions[i] + flags[i];
  }
}

template <class KeyIt, class ValueIt, class FlagIt, class KeyOut, class ValueOut, class Selector>
[[nodiscard]] cudaError_t dispatch(void* d_temp, std::size_t& temp_bytes, KeyIt keys_in, ValueIt values_in,
                                   FlagIt flags_in, KeyOut keys_out, ValueOut values_out,
                                   std::int64_t* d_num_selected, std::int64_t n, Selector selector,
                                   cudaStream_t stream) {
  using scanlab::detail::align_up;
  if (n < 0) return cudaErrorInvalidValue;
  using widened = transform_iterator<const std::uint8_t*, widen>;
  const widened flags_as_counts(nullptr, widen{});
  std::size_t scan_bytes = 0;
  SCANLAB_TRY(exclusive_scan(nullptr, scan_bytes, flags_as_counts, static_cast<std::int64_t*>(nullptr), n,
                             std::int64_t{0}, plus{}, stream));
  // [slack][flags: n bytes][positions: 8n bytes][scan temp]
  const std::size_t flag_bytes = align_up(static_cast<std::size_t>(n));
  const std::size_t position_bytes = align_up(static_cast<std::size_t>(n) * sizeof(std::int64_t));
  const std::size_t required = 256 + flag_bytes + position_bytes + scan_bytes;
  if (const auto answer = detail::temp_storage_query(d_temp, temp_bytes, required, d_num_selected != nullptr)) return *answer;
  if (n == 0) return cudaMemsetAsync(d_num_selected, 0, sizeof(std::int64_t), stream);

  auto* base = reinterpret_cast<unsigned char*>(align_up(reinterpret_cast<std::uintptr_t>(d_temp)));
  auto* flags = reinterpret_cast<std::uint8_t*>(base);
  auto* positions = reinterpret_cast<std::int64_t*>(base + flag_bytes);
  void* scan_temp = base + flag_bytes + position_bytes;

  const unsigned grid = grid_for(n);
  SCANLAB_TRY(scanlab::detail::launch(flag_kernel<KeyIt, FlagIt, Selector>, grid, threads, 0, stream, keys_in,
                                      flags_in, flags, n, selector));
  SCANLAB_TRY(exclusive_scan(scan_temp, scan_bytes, widened(flags, widen{}), positions, n, std::int64_t{0}, plus{},
                             stream));
  return scanlab::detail::launch(scatter_kernel<KeyIt, ValueIt, KeyOut, ValueOut>, grid, threads, 0, stream, keys_in,
                                 values_in, flags, positions, keys_out, values_out, d_num_selected, n);
}

}  // namespace detail3

// The same entry points as scanlab:: (select.cuh), computed in three phases.

template <class InputIt, class OutputIt, class Pred>
[[nodiscard]] cudaError_t select_if(void* d_temp, std::size_t& temp_bytes, InputIt d_in, OutputIt d_out,
                                    std::int64_t* d_num_selected, std::int64_t n, Pred pred,
                                    cudaStream_t stream = nullptr) {
  using namespace select_detail;
  return detail3::dispatch(d_temp, temp_bytes, d_in, none_iterator{}, none_iterator{}, d_out, none_iterator{},
                           d_num_selected, n, predicate_selector<Pred, true>{pred}, stream);
}

template <class InputIt, class OutputIt, class Pred>
[[nodiscard]] cudaError_t remove_if(void* d_temp, std::size_t& temp_bytes, InputIt d_in, OutputIt d_out,
                                    std::int64_t* d_num_selected, std::int64_t n, Pred pred,
                                    cudaStream_t stream = nullptr) {
  using namespace select_detail;
  return detail3::dispatch(d_temp, temp_bytes, d_in, none_iterator{}, none_iterator{}, d_out, none_iterator{},
                           d_num_selected, n, predicate_selector<Pred, false>{pred}, stream);
}

template <class InputIt, class FlagIt, class OutputIt>
[[nodiscard]] cudaError_t select_flagged(void* d_temp, std::size_t& temp_bytes, InputIt d_in, FlagIt d_flags,
                                         OutputIt d_out, std::int64_t* d_num_selected, std::int64_t n,
                                         cudaStream_t stream = nullptr) {
  using namespace select_detail;
  return detail3::dispatch(d_temp, temp_bytes, d_in, none_iterator{}, d_flags, d_out, none_iterator{},
                           d_num_selected, n, flags_selector{}, stream);
}

template <class InputIt, class OutputIt, class EqualOp = select_detail::equal_to>
[[nodiscard]] cudaError_t unique(void* d_temp, std::size_t& temp_bytes, InputIt d_in, OutputIt d_out,
                                 std::int64_t* d_num_selected, std::int64_t n, cudaStream_t stream = nullptr,
                                 EqualOp eq = {}) {
  using namespace select_detail;
  return detail3::dispatch(d_temp, temp_bytes, d_in, none_iterator{}, none_iterator{}, d_out, none_iterator{},
                           d_num_selected, n, unique_selector<EqualOp>{eq}, stream);
}

template <class KeyIt, class ValueIt, class KeyOut, class ValueOut, class Pred>
[[nodiscard]] cudaError_t select_if_pairs(void* d_temp, std::size_t& temp_bytes, KeyIt d_keys_in, ValueIt d_values_in,
                                          KeyOut d_keys_out, ValueOut d_values_out, std::int64_t* d_num_selected,
                                          std::int64_t n, Pred pred, cudaStream_t stream = nullptr) {
  using namespace select_detail;
  return detail3::dispatch(d_temp, temp_bytes, d_keys_in, d_values_in, none_iterator{}, d_keys_out, d_values_out,
                           d_num_selected, n, predicate_selector<Pred, true>{pred}, stream);
}

template <class KeyIt, class ValueIt, class KeyOut, class ValueOut, class Pred>
[[nodiscard]] cudaError_t remove_if_pairs(void* d_temp, std::size_t& temp_bytes, KeyIt d_keys_in, ValueIt d_values_in,
                                          KeyOut d_keys_out, ValueOut d_values_out, std::int64_t* d_num_selected,
                                          std::int64_t n, Pred pred, cudaStream_t stream = nullptr) {
  using namespace select_detail;
  return detail3::dispatch(d_temp, temp_bytes, d_keys_in, d_values_in, none_iterator{}, d_keys_out, d_values_out,
                           d_num_selected, n, predicate_selector<Pred, false>{pred}, stream);
}

template <class KeyIt, class ValueIt, class FlagIt, class KeyOut, class ValueOut>
[[nodiscard]] cudaError_t select_flagged_pairs(void* d_temp, std::size_t& temp_bytes, KeyIt d_keys_in,
                                               ValueIt d_values_in, FlagIt d_flags, KeyOut d_keys_out,
                                               ValueOut d_values_out, std::int64_t* d_num_selected, std::int64_t n,
                                               cudaStream_t stream = nullptr) {
  using namespace select_detail;
  return detail3::dispatch(d_temp, temp_bytes, d_keys_in, d_values_in, d_flags, d_keys_out, d_values_out,
                           d_num_selected, n, flags_selector{}, stream);
}

template <class KeyIt, class ValueIt, class KeyOut, class ValueOut, class EqualOp = select_detail::equal_to>
[[nodiscard]] cudaError_t unique_by_key(void* d_temp, std::size_t& temp_bytes, KeyIt d_keys_in, ValueIt d_values_in,
                                        KeyOut d_keys_out, ValueOut d_values_out, std::int64_t* d_num_selected,
                                        std::int64_t n, cudaStream_t stream = nullptr, EqualOp eq = {}) {
  using namespace select_detail;
  return detail3::dispatch(d_temp, temp_bytes, d_keys_in, d_values_in, none_iterator{}, d_keys_out, d_values_out,
                           d_num_selected, n, unique_selector<EqualOp>{eq}, stream);
}

}  // namespace scanlab::three_phase
