// The classic multi-pass LSD radix sort, kept for teaching: three steps per 8-bit digit,
// each a plain kernel or a scanlab primitive, no inter-block communication.
//
//   1. multipass_histogram_kernel  each block counts the digits of its tile (shared-memory
//                                  atomics) and writes its 256 counts DIGIT-MAJOR:
//                                  counts[d * num_tiles + tile].
//   2. scanlab::exclusive_sum      over those radix x num_tiles counts, in place. Because of
//                                  the digit-major layout, the scan's output at
//                                  [d * num_tiles + tile] is exactly where the tile's first
//                                  key of digit d goes: all smaller digits of every tile,
//                                  then digit d of the earlier tiles. The whole ordering
//                                  problem becomes one device-wide scan.
//   3. multipass_scatter_kernel    each block sorts its tile by the digit in shared memory,
//                                  stably, with one split per digit bit (least significant
//                                  first): a block exclusive scan of the "bit is 0" flags
//                                  gives every key with a 0 its new place (zeros before it)
//                                  and every key with a 1 its place after all the zeros
//                                  (zeros total + ones before it). Eight splits sort the tile
//                                  by the 8-bit digit. Then the keys leave in tile order:
//                                  key at tile position j with digit d goes to
//                                  scanned[d * num_tiles + tile] + (j - first position of d).
// Values, when there are any, travel as their tile index through the splits and are
// gathered from the input at the end.
//
// What the production sort (radix_sort_onesweep.cuh) does better: it counts every pass's
// digits in one read up front (step 1 reads the keys once more per pass here), replaces
// the device-wide scan by a look-back between tiles (no counts array, one kernel per pass),
// and ranks a whole digit per step with warp multi-split instead of eight block scans.
#pragma once

#include <scanlab/algorithms/radix_sort_common.cuh>
#include <scanlab/block/block_scan.cuh>
#include <scanlab/detail/launch.cuh>
#include <scanlab/detail/util.cuh>
#include <scanlab/error.hpp>
#include <scanlab/functional.cuh>
#include <scanlab/scan.cuh>

#include <cuda_runtime.h>

#include <bit>
#include <cstddef>
#include <cstdint>

namespace scanlab::radix_sort_detail {

struct multipass_policy {
  static constexpr int block_threads = 256;
  static constexpr int items_per_thread = 8;
  static constexpr int tile_items = block_threads * items_per_thread;
};

// ---- 1. per-tile digit counts, digit-major ----

template <class Policy, class Bits, bool IsFloat>
__global__ void __launch_bounds__(Policy::block_threads)
    multipass_histogram_kernel(const Bits* keys, std::int64_t n, digit_extractor<Bits, IsFloat> digit,
                               std::uint64_t* counts, std::int64_t num_tiles) {
  __shared__ std::uint32_t tile_counts[radix];
  for (int d = static_cast<int>(threadIdx.x); d < radix; d += Policy::block_threads) tile_counts[d] = 0;
  __syncthreads();
  const std::int64_t tile = blockIdx.x;
  const std::int64_t base = tile * Policy::tile_items;
#pragma unroll
  for (int i = 0; i < Policy::items_per_thread; ++i) {
    const std::int64_t index = base + std::int64_t{i} * Policy::block_threads + threadIdx.x;
    if (index < n) atomicAdd(&tile_counts[digit(keys[index])], 1u);
  }
  __syncthreads();
  for (int d = static_cast<int>(threadIdx.x); d < radix; d += Policy::block_threads) {
    counts[static_cast<std::size_t>(d) * num_tiles + tile] = tile_counts[d];
  }
}

// ---- 3. stable tile sort by the digit, then scatter ----

template <class Bits, bool IsFloat, class Value>
struct multipass_scatter_params {
  const Bits* keys_in;
  Bits* keys_out;
  const Value* values_in;  // null: the values are the input positions (argsort's first pass)
  Value* values_out;
  std::int64_t n;
  digit_extractor<Bits, IsFloat> digit;
  int digit_width;                // bits in this pass's digit (0 to 8)
  const std::uint64_t* offsets;   // the scanned counts: [d * num_tiles + tile]
  std::int64_t num_tiles;
};

template <class Policy, class Bits, bool IsFloat, class Value>
__global__ void __launch_bounds__(Policy::block_threads)
    multipass_scatter_kernel(const multipass_scatter_params<Bits, IsFloat, Value> p) {
  constexpr int threads = Policy::block_threads;
  constexpr int items = Policy::items_per_thread;
  constexpr int tile_items = Policy::tile_items;
  using scan_t = block_scan<std::uint32_t, threads>;
  __shared__ Bits tile_keys[tile_items];
  __shared__ std::uint32_t tile_index[tile_items];  // each key's position in the input tile
  __shared__ std::uint32_t digit_first[radix];      // first tile position of each digit, once sorted
  __shared__ typename scan_t::temp_storage scan_storage;

  const int tid = static_cast<int>(threadIdx.x);
  const std::int64_t tile = blockIdx.x;
  const std::int64_t base = tile * tile_items;
  const std::int64_t left = p.n - base;
  const auto tile_n = static_cast<std::uint32_t>(left < tile_items ? left : tile_items);

  // Blocked: thread t holds tile positions t * items .. t * items + items - 1, so a block
  // scan in thread order is a scan in tile order. Positions past the end hold no key; they
  // count as "bit 1" in every split and so stay behind every real key.
  Bits keys[items];
  std::uint32_t index[items];
#pragma unroll
  for (int i = 0; i < items; ++i) {
    index[i] = static_cast<std::uint32_t>(tid * items + i);
    keys[i] = index[i] < tile_n ? p.keys_in[base + index[i]] : Bits{0};
  }

  for (int bit = 0; bit < p.digit_width; ++bit) {
    std::uint32_t is_zero[items];
    std::uint32_t zeros_before[items];
#pragma unroll
    for (int i = 0; i < items; ++i) {
      is_zero[i] = index[i] < tile_n && ((p.digit(keys[i]) >> bit) & 1u) == 0 ? 1u : 0u;
    }
    std::uint32_t zeros = 0;
    scan_t(scan_storage).exclusive_scan(is_zero, zeros_before, 0u, plus{}, zeros);
#pragma unroll
    for (int i = 0; i < items; ++i) {
      const std::uint32_t position = static_cast<std::uint32_t>(tid * items + i);
      const std::uint32_t target = is_zero[i] != 0 ? zeros_before[i] : zeros + (position - zeros_before[i]);
      tile_keys[target] = keys[i];
      tile_index[target] = index[i];
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < items; ++i) {
      keys[i] = tile_keys[tid * items + i];
      index[i] = tile_index[tid * items + i];
    }
    __syncthreads();  // everyone has read before the next split writes
  }
  // The sorted tile (also when the pass has no digit bits: then it is the input order).
#pragma unroll
  for (int i = 0; i < items; ++i) {
    tile_keys[tid * items + i] = keys[i];
    tile_index[tid * items + i] = index[i];
  }
  __syncthreads();
  // Where each digit's run starts in the sorted tile.
  for (std::uint32_t j = static_cast<std::uint32_t>(tid); j < tile_n; j += threads) {
    const unsigned d = p.digit(tile_keys[j]);
    if (j == 0 || p.digit(tile_keys[j - 1]) != d) digit_first[d] = j;
  }
  __syncthreads();
  // Out in tile order: a digit's run is contiguous in the output.
  for (std::uint32_t j = static_cast<std::uint32_t>(tid); j < tile_n; j += threads) {
    const Bits key = tile_keys[j];
    const unsigned d = p.digit(key);
    const std::uint64_t target = p.offsets[static_cast<std::size_t>(d) * p.num_tiles + tile] + (j - digit_first[d]);
    p.keys_out[target] = key;
    if constexpr (has_values_v<Value>) {
      const std::int64_t source = base + tile_index[j];
      p.values_out[target] = p.values_in != nullptr ? p.values_in[source] : static_cast<Value>(source);
    }
  }
}

// ---- host side ----

template <class Bits, bool IsFloat, class Value>
[[nodiscard]] cudaError_t multipass_sort(void* d_temp, std::size_t& temp_bytes,
                                         const sort_request<Bits, IsFloat, Value>& r, cudaStream_t stream) {
  using policy = multipass_policy;
  constexpr bool has_values = has_values_v<Value>;
  if (r.n < 0) return cudaErrorInvalidValue;
  const std::int64_t n = r.n;
  const int passes = r.plan.passes();
  const std::int64_t num_tiles = detail::ceil_div<std::int64_t>(n, policy::tile_items);
  const std::int64_t num_counts = num_tiles * radix;

  // Temp storage: [alternate keys][final keys, when the caller wants none][alternate values]
  // [digit-major counts][the scan's temp storage].
  temp_carver carve(d_temp);
  const auto count = static_cast<std::size_t>(n);
  Bits* alternate_keys = carve.take<Bits>(count);
  Bits* final_keys = r.keys_out != nullptr ? r.keys_out : carve.take<Bits>(count);
  Value* alternate_values = has_values ? carve.take<Value>(count) : nullptr;
  std::uint64_t* counts = carve.take<std::uint64_t>(static_cast<std::size_t>(num_counts));
  std::size_t scan_bytes = 0;
  SCANLAB_TRY(exclusive_sum(nullptr, scan_bytes, counts, counts, num_counts, stream));
  void* scan_temp = carve.take<unsigned char>(scan_bytes);
  if (const auto answer = detail::temp_storage_query(d_temp, temp_bytes, carve.bytes())) return *answer;
  if (n == 0) return cudaSuccess;

  const ping_pong<Bits> key_buffers{r.keys_in, final_keys, alternate_keys, passes};
  const ping_pong<Value> value_buffers{r.values_in, r.values_out, alternate_values, passes};
  const auto grid = static_cast<unsigned>(num_tiles);
  for (int pass = 0; pass < passes; ++pass) {
    const digit_extractor<Bits, IsFloat> digit{r.transform, r.plan.shift(pass), r.plan.mask(pass)};
    SCANLAB_TRY(detail::launch(multipass_histogram_kernel<policy, Bits, IsFloat>, grid, policy::block_threads, 0,
                               stream, key_buffers.source(pass), n, digit, counts, num_tiles));
    SCANLAB_TRY(exclusive_sum(scan_temp, scan_bytes, counts, counts, num_counts, stream));
    const multipass_scatter_params<Bits, IsFloat, Value> params{
        .keys_in = key_buffers.source(pass),
        .keys_out = key_buffers.destination(pass),
        .values_in = has_values ? value_buffers.source(pass) : nullptr,
        .values_out = has_values ? value_buffers.destination(pass) : nullptr,
        .n = n,
        .digit = digit,
        .digit_width = std::popcount(digit.mask),
        .offsets = counts,
        .num_tiles = num_tiles};
    SCANLAB_TRY(detail::launch(multipass_scatter_kernel<policy, Bits, IsFloat, Value>, grid, policy::block_threads,
                               0, stream, params));
  }
  return cudaSuccess;
}

}  // namespace scanlab::radix_sort_detail
