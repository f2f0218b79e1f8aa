// The kernels of scanlab/algorithms/quicksort.cuh besides the three-way partition (which
// lives in partition_kernels.cuh): pivot choice, moving the equal runs into place, and the
// block-level sort that finishes the small segments.
#pragma once

#include <scanlab/algorithms/partition_kernels.cuh>
#include <scanlab/detail/util.cuh>

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace scanlab::quicksort_detail {

using partition_detail::no_value;
using partition_detail::segment_desc;

// ---- pivots: the median of 128 samples ------------------------------------------------

inline constexpr int pivot_samples = 128;

__host__ __device__ constexpr std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

// One block of pivot_samples threads per segment. Sample t is drawn from the t-th of 128
// equal strata of the segment, at an offset hashed from (segment start, t): evenly spread
// (a sorted or reverse input gives the exact median) and not fooled by periodic patterns.
// Each thread ranks its sample among all 128 (ties broken by sample index); rank 63 is
// the (lower) median. The pivot is an element of the segment, so every partition puts at
// least one element (the pivot's equals) in its final place: the sort always progresses.
template <class K, class Comp>
__global__ void __launch_bounds__(pivot_samples)
    choose_pivots_kernel(const segment_desc* segments, const K* keys, K* pivots, Comp comp) {
  __shared__ K samples[pivot_samples];
  const segment_desc seg = segments[blockIdx.x];
  const std::int64_t t = threadIdx.x;
  const std::int64_t lo = t * seg.size / pivot_samples;
  const std::int64_t hi = (t + 1) * seg.size / pivot_samples;
  const std::int64_t span = hi > lo ? hi - lo : 1;
  const auto offset =
      static_cast<std::int64_t>(mix64(static_cast<std::uint64_t>(seg.begin) * pivot_samples + t) %
                                static_cast<std::uint64_t>(span));
  std::int64_t index = lo + offset;
  if (index >= seg.size) index = seg.size - 1;
  const K mine = keys[seg.begin + index];
  samples[t] = mine;
  __syncthreads();
  int rank = 0;
  for (int u = 0; u < pivot_samples; ++u) {
    const K other = samples[u];
    if (comp(other, mine) || (!comp(mine, other) && u < t)) ++rank;
  }
  if (rank == pivot_samples / 2 - 1) pivots[blockIdx.x] = mine;
}

// ---- moving equal runs from the side buffer to their place ----------------------------

struct run_copy {
  std::int64_t from;        // index in the side buffer
  std::int64_t to;          // index in the output
  std::int64_t count;
  std::int64_t first_tile;  // the run's first tile among all runs of the launch
};

inline constexpr int copy_tile_items = 4096;
inline constexpr int copy_threads = 256;

template <class K, class V>
__global__ void __launch_bounds__(copy_threads)
    copy_runs_kernel(const run_copy* runs, std::int64_t num_runs, std::int64_t total_tiles, const K* keys_from,
                     K* keys_to, const V* values_from, V* values_to) {
  constexpr bool has_values = !std::is_same_v<V, no_value>;
  for (std::int64_t tile = blockIdx.x; tile < total_tiles; tile += gridDim.x) {
    std::int64_t lo = 0, hi = num_runs - 1;  // the last run whose first tile <= tile
    while (lo < hi) {
      const std::int64_t mid = (lo + hi + 1) / 2;
      if (runs[mid].first_tile <= tile) lo = mid;
      else hi = mid - 1;
    }
    const run_copy run = runs[lo];
    const std::int64_t start = (tile - run.first_tile) * copy_tile_items;
    const std::int64_t end = start + copy_tile_items < run.count ? start + copy_tile_items : run.count;
    for (std::int64_t i = start + threadIdx.x; i < end; i += copy_threads) {
      keys_to[run.to + i] = keys_from[run.from + i];
      if constexpr (has_values) values_to[run.to + i] = values_from[run.from + i];
    }
  }
}

// ---- the block-level sort of small segments -------------------------------------------

struct leaf_desc {
  std::int64_t begin;
  std::int64_t size;    // 1 .. capacity of the launch
  std::int32_t source;  // which buffer holds it: 0 the input, 1 the ping-pong buffer, 2 the output
  std::int32_t pad;
};

template <class K, class V>
struct leaf_params {
  const leaf_desc* leaves;
  const K* key_sources[3];
  const V* value_sources[3];
  K* keys_out;
  V* values_out;
};

// Bytes of shared memory a leaf sort of `capacity` elements needs.
template <class K, class V>
constexpr std::size_t leaf_smem_bytes(int capacity) {
  constexpr bool has_values = !std::is_same_v<V, no_value>;
  const std::size_t keys = detail::align_up(static_cast<std::size_t>(capacity) * sizeof(K), 16);
  return has_values ? keys + static_cast<std::size_t>(capacity) * sizeof(V) : keys;
}

// One block per segment: the segment into shared memory, a bitonic sorting network, back to
// the output. The network is the form whose every comparator puts the smaller element at the
// lower index (each merge starts by comparing mirrored positions), so the segment can be
// padded to a power of two with "infinitely large" phantoms that never move: a comparator
// whose upper position is a phantom does nothing, and no real element is ever compared
// against a lower phantom. So no sentinel value is needed (floats with NaNs, any type).
template <class K, class V, class Comp>
__global__ void leaf_sort_kernel(const __grid_constant__ leaf_params<K, V> p, Comp comp) {
  constexpr bool has_values = !std::is_same_v<V, no_value>;
  extern __shared__ __align__(16) unsigned char smem[];
  const leaf_desc leaf = p.leaves[blockIdx.x];
  const int m = static_cast<int>(leaf.size);
  K* keys = reinterpret_cast<K*>(smem);
  [[maybe_unused]] V* values = nullptr;
  if constexpr (has_values) {
    values = reinterpret_cast<V*>(smem + detail::align_up(static_cast<std::size_t>(m) * sizeof(K), 16));
  }
  const K* key_source = p.key_sources[leaf.source] + leaf.begin;
  [[maybe_unused]] const V* value_source = nullptr;
  if constexpr (has_values) value_source = p.value_sources[leaf.source] + leaf.begin;
  const int threads = static_cast<int>(blockDim.x);
  for (int i = static_cast<int>(threadIdx.x); i < m; i += threads) {
    keys[i] = key_source[i];
    if constexpr (has_values) values[i] = value_source[i];
  }
  int log_padded = 0;
  while ((1 << log_padded) < m) ++log_padded;
  const int pairs = (1 << log_padded) / 2;
  // Comparator q of a step joins positions lo < hi; shifts and masks only (the strides are
  // powers of two: a division here would cost more than the comparison).
  const auto compare_exchange = [&](int lo, int hi) {
    if (hi < m && comp(keys[hi], keys[lo])) {
      const K k = keys[lo];
      keys[lo] = keys[hi];
      keys[hi] = k;
      if constexpr (has_values) {
        const V v = values[lo];
        values[lo] = values[hi];
        values[hi] = v;
      }
    }
  };
  for (int log_size = 1; log_size <= log_padded; ++log_size) {
    // Merge step 1: position `off` of each half-block against its mirror in the block.
    const int log_half = log_size - 1;
    const int half_mask = (1 << log_half) - 1;
    __syncthreads();
    for (int q = static_cast<int>(threadIdx.x); q < pairs; q += threads) {
      const int block_start = (q >> log_half) << log_size;
      const int off = q & half_mask;
      compare_exchange(block_start + off, block_start + (1 << log_size) - 1 - off);
    }
    // Then half-cleaners at strides size/4, ..., 1.
    for (int log_stride = log_half - 1; log_stride >= 0; --log_stride) {
      const int stride_mask = (1 << log_stride) - 1;
      __syncthreads();
      for (int q = static_cast<int>(threadIdx.x); q < pairs; q += threads) {
        const int lo = ((q >> log_stride) << (log_stride + 1)) + (q & stride_mask);
        compare_exchange(lo, lo + (1 << log_stride));
      }
    }
  }
  __syncthreads();
  for (int i = static_cast<int>(threadIdx.x); i < m; i += threads) {
    p.keys_out[leaf.begin + i] = keys[i];
    if constexpr (has_values) p.values_out[leaf.begin + i] = values[i];
  }
}

}  // namespace scanlab::quicksort_detail
