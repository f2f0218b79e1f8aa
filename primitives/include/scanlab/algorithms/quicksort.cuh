// scanlab/algorithms/quicksort.cuh: quicksort on the GPU, built on the three-way partition.
//
//   std::size_t temp_bytes = 0;
//   SCANLAB_CHECK(scanlab::quicksort(nullptr, temp_bytes, d_keys_in, d_keys_out, n, stream));
//   ... allocate temp_bytes at d_temp ...
//   SCANLAB_CHECK(scanlab::quicksort(d_temp, temp_bytes, d_keys_in, d_keys_out, n, stream));
//   (quicksort_pairs: the same with values riding along with their keys)
//
// The algorithm, level by level (the host drives the recursion):
//   1. every segment longer than the leaf size gets a pivot: the median of 128 samples drawn
//      from 128 equal strata of the segment (choose_pivots_kernel);
//   2. ONE launch partitions all those segments three ways (partition3_tiles_kernel with a
//      segment table): less | equal | greater, single pass, each segment on its own tile state.
//      Keys move between two buffers (the output and a temp buffer) from level to level;
//   3. the host reads the counts, and plans the next level: the equal run of each segment is
//      in its final place once copied there from the side buffer (copy_runs_kernel); the
//      less and greater parts are the next level's segments, or, at most leaf-size long,
//      leaves;
//   4. leaves are sorted by one block each in shared memory (a bitonic network,
//      leaf_sort_kernel), many in one launch, straight into the output.
// Duplicates cannot degrade it: all keys equal to the pivot are finished by the partition
// that meets them (an all-equal input is one pass). The pivot is an element of its segment,
// so every level finishes at least one element per segment; with the sampled median a level
// roughly halves every segment, so a sort takes about log2(n / leaf size) levels.
//
// Contract:
//   * Keys: int32, uint32, int64, uint64, float, double (any type with operator< works;
//     floats are ordered with every NaN after every number: nan_last_less; -0.0 and +0.0
//     are equivalent and keep no particular order). Values: any trivially copyable type.
//   * Not stable (the order of equivalent keys, and so of their values, is unspecified), but
//     deterministic: the same input gives the same output on every run.
//   * In place allowed: d_keys_out == d_keys_in (and d_values_out == d_values_in).
//   * Two-phase temp storage (as CUB): about 2 n keys (+ 2 n values) plus a little. Any alignment.
//   * NOT asynchronous: the host plans each level from the previous level's counts, so the
//     call synchronises `stream` once per partition level (about log2(n / leaf size) times;
//     never for n <= the leaf size). Returns the first failing CUDA status; never throws.
//   * n is 64-bit; n = 0 and n = 1 work.
#pragma once

#include <scanlab/algorithms/partition_kernels.cuh>
#include <scanlab/algorithms/quicksort_kernels.cuh>
#include <scanlab/detail/launch.cuh>
#include <scanlab/detail/util.cuh>
#include <scanlab/device/tile_state.cuh>
#include <scanlab/error.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace scanlab {

// Test and tuning hooks; users never need them.
struct quicksort_options {
  std::int64_t leaf_items = 0;  // segments up to this size are sorted by one block (0: the largest that fits)
};

namespace quicksort_detail {

using partition_detail::three_counts;

// The largest leaf a block sorts: a power of two whose keys (and values) fit in 64 KB of
// shared memory (16384 four-byte keys, 8192 eight-byte keys or four-byte pairs).
template <class K, class V>
constexpr int leaf_capacity() {
  constexpr std::size_t item = sizeof(K) + (std::is_same_v<V, no_value> ? 0 : sizeof(V));
  int capacity = 1;
  while (static_cast<std::size_t>(capacity) * 2 * item <= 64 * 1024 && capacity < 16384) capacity *= 2;
  return capacity;
}
inline constexpr int small_leaf = 2048;     // leaves up to this size go to a launch with less shared memory
inline constexpr int leaf_threads = 512;
inline constexpr int small_leaf_threads = 256;

// Sizes of everything the driver keeps in temp storage, for n elements.
template <class K, class V>
struct plan_sizes {
  static constexpr bool has_values = !std::is_same_v<V, no_value>;
  using policy = partition_detail::default_partition_policy<K>;

  std::int64_t leaf = 0;           // the leaf size in use
  std::int64_t max_segments = 0;   // segments of one level (each longer than the leaf size)
  std::int64_t max_leaves = 0;     // leaves held before a sort launch
  std::size_t state_bytes = 0;     // tile states of one level
  std::size_t total = 0;
  // Offsets (from the aligned base).
  std::size_t keys_pingpong = 0, keys_side = 0, values_pingpong = 0, values_side = 0;
  std::size_t segments = 0, pivots = 0, counts = 0, runs = 0, leaves = 0, ticket = 0, states = 0;

  plan_sizes(std::int64_t n, std::int64_t leaf_items) {
    const std::int64_t cap = leaf_capacity<K, V>();
    leaf = leaf_items <= 0 || leaf_items > cap ? cap : (leaf_items < 2 ? 2 : leaf_items);
    max_segments = n / (leaf + 1) + 1;
    max_leaves = 4 * max_segments + 64;
    const std::int64_t max_tiles = n / policy::tile_items + max_segments + 1;
    state_bytes = static_cast<std::size_t>(24 * max_tiles + 512 * max_segments);
    std::size_t at = 0;
    const auto take = [&](std::size_t bytes) {
      const std::size_t here = at;
      at += detail::align_up(bytes);
      return here;
    };
    const auto un = static_cast<std::size_t>(n);
    keys_pingpong = take(un * sizeof(K));
    keys_side = take(un * sizeof(K));
    if constexpr (has_values) {
      values_pingpong = take(un * sizeof(V));
      values_side = take(un * sizeof(V));
    }
    const auto segs = static_cast<std::size_t>(max_segments);
    segments = take(segs * sizeof(segment_desc));
    pivots = take(segs * sizeof(K));
    counts = take(segs * 3 * sizeof(std::int64_t));
    runs = take(segs * sizeof(run_copy));
    leaves = take(static_cast<std::size_t>(max_leaves) * sizeof(leaf_desc));
    ticket = take(256);  // directly followed by the states: one memset clears both
    states = at;
    at += state_bytes;
    total = at + 256;  // + alignment slack of d_temp
  }
};

// The tile-state bytes of a segment of `size` elements (aligned for the next one).
template <class Policy>
inline std::size_t segment_state_bytes(std::int64_t size) {
  const std::int64_t tiles = detail::ceil_div<std::int64_t>(size, Policy::tile_items);
  return detail::align_up(device::tile_state<three_counts>::storage_bytes(tiles));
}

template <class K, class V, class Comp>
class driver {
  static constexpr bool has_values = !std::is_same_v<V, no_value>;
  using policy = partition_detail::default_partition_policy<K>;
  using sizes_t = plan_sizes<K, V>;
  using table_t = partition_detail::segment_table<K>;

 public:
  driver(unsigned char* base, const sizes_t& sizes, const K* keys_in, K* keys_out, const V* values_in, V* values_out,
         std::int64_t n, Comp comp, cudaStream_t stream)
      : base_(base), sizes_(sizes), n_(n), comp_(comp), stream_(stream) {
    key_buffers_[0] = keys_in;
    key_buffers_[1] = reinterpret_cast<K*>(base + sizes.keys_pingpong);
    key_buffers_[2] = keys_out;
    keys_out_ = keys_out;
    keys_side_ = reinterpret_cast<K*>(base + sizes.keys_side);
    if constexpr (has_values) {
      value_buffers_[0] = values_in;
      value_buffers_[1] = reinterpret_cast<V*>(base + sizes.values_pingpong);
      value_buffers_[2] = values_out;
      values_out_ = values_out;
      values_side_ = reinterpret_cast<V*>(base + sizes.values_side);
    }
  }

  [[nodiscard]] cudaError_t run() {
    if (n_ <= sizes_.leaf) {
      leaves_.push_back({0, n_, 0, 0});
      return flush_leaves();
    }
    std::vector<partition_detail::segment_desc> segments{{0, n_, 0, 0}};
    int source = 0;  // buffer of this level's segments: 0 input, then 1, 2, 1, 2, ...
    std::vector<std::int64_t> counts;
    std::vector<run_copy> runs;
    std::vector<partition_detail::segment_desc> next;
    while (!segments.empty()) {
      const int target = source == 1 ? 2 : 1;
      // Tiles and tile states of this level's segments.
      std::int64_t tiles = 0;
      std::size_t state_bytes = 0;
      for (auto& s : segments) {
        s.first_tile = tiles;
        s.state_offset = static_cast<std::int64_t>(state_bytes);
        tiles += detail::ceil_div<std::int64_t>(s.size, policy::tile_items);
        state_bytes += segment_state_bytes<policy>(s.size);
      }
      if (state_bytes > sizes_.state_bytes || static_cast<std::int64_t>(segments.size()) > sizes_.max_segments) {
        return cudaErrorInvalidValue;  // cannot happen: the bounds of plan_sizes hold for every level
      }
      const auto num_segments = static_cast<std::int64_t>(segments.size());
      auto* d_segments = reinterpret_cast<partition_detail::segment_desc*>(base_ + sizes_.segments);
      auto* d_pivots = reinterpret_cast<K*>(base_ + sizes_.pivots);
      auto* d_counts = reinterpret_cast<std::int64_t*>(base_ + sizes_.counts);
      auto* d_ticket = reinterpret_cast<unsigned long long*>(base_ + sizes_.ticket);
      SCANLAB_TRY(cudaMemcpyAsync(d_segments, segments.data(), segments.size() * sizeof(segments[0]),
                                  cudaMemcpyHostToDevice, stream_));
      SCANLAB_TRY(cudaMemsetAsync(d_ticket, 0, sizes_.states - sizes_.ticket + state_bytes, stream_));
      choose_pivots_kernel<<<static_cast<unsigned>(num_segments), pivot_samples, 0, stream_>>>(
          d_segments, key_buffers_[source], d_pivots, comp_);
      SCANLAB_TRY_LAUNCH();
      SCANLAB_TRY(partition(d_segments, num_segments, d_pivots, d_counts, d_ticket, tiles, source, target));
      counts.resize(static_cast<std::size_t>(3 * num_segments));
      SCANLAB_TRY(cudaMemcpyAsync(counts.data(), d_counts, counts.size() * sizeof(std::int64_t),
                                  cudaMemcpyDeviceToHost, stream_));
      SCANLAB_TRY(cudaStreamSynchronize(stream_));

      // Plan: equal runs to their place, the two sides to the next level or to the leaves.
      runs.clear();
      next.clear();
      std::int64_t run_tiles = 0;
      for (std::size_t s = 0; s < segments.size(); ++s) {
        const std::int64_t begin = segments[s].begin;
        const std::int64_t less = counts[3 * s];
        const std::int64_t equal = counts[3 * s + 1];
        const std::int64_t greater = counts[3 * s + 2];
        if (equal > 0) {
          runs.push_back({begin, begin + less, equal, run_tiles});
          run_tiles += detail::ceil_div<std::int64_t>(equal, copy_tile_items);
        }
        for (const auto& [part_begin, part_size] : {std::pair{begin, less}, std::pair{begin + less + equal, greater}}) {
          if (part_size > sizes_.leaf) {
            next.push_back({part_begin, part_size, 0, 0});
          } else if (part_size > 0) {
            leaves_.push_back({part_begin, part_size, target, 0});
          }
        }
      }
      if (!runs.empty()) SCANLAB_TRY(copy_runs(runs, run_tiles));
      if (static_cast<std::int64_t>(leaves_.size()) + 2 * static_cast<std::int64_t>(next.size()) >
          sizes_.max_leaves - 2) {
        SCANLAB_TRY(flush_leaves());
      }
      segments.swap(next);
      source = target;
    }
    return flush_leaves();
  }

 private:
  [[nodiscard]] cudaError_t partition(const partition_detail::segment_desc* d_segments, std::int64_t num_segments,
                                      const K* d_pivots, std::int64_t* d_counts, unsigned long long* d_ticket,
                                      std::int64_t tiles, int source, int target) {
    using params_t = partition_detail::partition3_params<K, V, Comp, table_t>;
    const table_t table{d_segments, num_segments, d_pivots, base_ + sizes_.states, d_counts, policy::tile_items};
    params_t params{};
    params.keys_in = key_buffers_[source];
    params.keys_out = const_cast<K*>(key_buffers_[target]);  // targets are 1 and 2: writable buffers
    params.keys_equal = keys_side_;
    if constexpr (has_values) {
      params.values_in = value_buffers_[source];
      params.values_out = const_cast<V*>(value_buffers_[target]);
      params.values_equal = values_side_;
    }
    params.comp = comp_;
    params.segments = table;
    params.total_tiles = tiles;
    params.ticket = d_ticket;
    const auto kernel = partition_detail::partition3_tiles_kernel<policy, K, V, Comp, table_t>;
    int capacity = 0;
    bool cooperative = false;
    SCANLAB_TRY((detail::resident_grid<partition_detail::partition3_tiles_kernel<policy, K, V, Comp, table_t>>(
        policy::block_threads, INT_MAX, capacity, cooperative)));
    const std::int64_t grid = tiles < capacity ? tiles : capacity;
    kernel<<<static_cast<unsigned>(grid), policy::block_threads, 0, stream_>>>(params);
    SCANLAB_TRY_LAUNCH();
    return cudaSuccess;
  }

  [[nodiscard]] cudaError_t copy_runs(const std::vector<run_copy>& runs, std::int64_t tiles) {
    auto* d_runs = reinterpret_cast<run_copy*>(base_ + sizes_.runs);
    SCANLAB_TRY(
        cudaMemcpyAsync(d_runs, runs.data(), runs.size() * sizeof(run_copy), cudaMemcpyHostToDevice, stream_));
    const std::int64_t grid = tiles < 4096 ? tiles : 4096;
    [[maybe_unused]] const V* values_from = nullptr;
    [[maybe_unused]] V* values_to = nullptr;
    if constexpr (has_values) {
      values_from = values_side_;
      values_to = values_out_;
    }
    copy_runs_kernel<K, V><<<static_cast<unsigned>(grid), copy_threads, 0, stream_>>>(
        d_runs, static_cast<std::int64_t>(runs.size()), tiles, keys_side_, keys_out_, values_from, values_to);
    SCANLAB_TRY_LAUNCH();
    return cudaSuccess;
  }

  // Sorts the pending leaves: small ones (a block of 256 threads, little shared memory, many
  // blocks per SM) and large ones (512 threads, shared memory for the leaf size) apart.
  [[nodiscard]] cudaError_t flush_leaves() {
    if (leaves_.empty()) return cudaSuccess;
    std::stable_partition(leaves_.begin(), leaves_.end(), [](const leaf_desc& l) { return l.size <= small_leaf; });
    const auto small = static_cast<std::int64_t>(
        std::count_if(leaves_.begin(), leaves_.end(), [](const leaf_desc& l) { return l.size <= small_leaf; }));
    auto* d_leaves = reinterpret_cast<leaf_desc*>(base_ + sizes_.leaves);
    SCANLAB_TRY(cudaMemcpyAsync(d_leaves, leaves_.data(), leaves_.size() * sizeof(leaf_desc), cudaMemcpyHostToDevice,
                                stream_));
    leaf_params<K, V> params{};
    for (int b = 0; b < 3; ++b) {
      params.key_sources[b] = key_buffers_[b];
      if constexpr (has_values) params.value_sources[b] = value_buffers_[b];
    }
    params.keys_out = keys_out_;
    if constexpr (has_values) params.values_out = values_out_;
    const auto kernel = leaf_sort_kernel<K, V, Comp>;
    const auto large = static_cast<std::int64_t>(leaves_.size()) - small;
    if (small > 0) {
      params.leaves = d_leaves;
      const std::size_t smem = leaf_smem_bytes<K, V>(small_leaf);
      kernel<<<static_cast<unsigned>(small), small_leaf_threads, smem, stream_>>>(params, comp_);
      SCANLAB_TRY_LAUNCH();
    }
    if (large > 0) {
      params.leaves = d_leaves + small;
      const std::size_t smem = leaf_smem_bytes<K, V>(static_cast<int>(sizes_.leaf));
      SCANLAB_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
      kernel<<<static_cast<unsigned>(large), leaf_threads, smem, stream_>>>(params, comp_);
      SCANLAB_TRY_LAUNCH();
    }
    // The host vector is reused only after the copy above has read it (pageable host-to-device
    // copies return once the data is staged).
    leaves_.clear();
    return cudaSuccess;
  }

  unsigned char* base_;
  const sizes_t& sizes_;
  std::int64_t n_;
  Comp comp_;
  cudaStream_t stream_;
  const K* key_buffers_[3] = {};
  const V* value_buffers_[3] = {};
  K* keys_out_ = nullptr;
  K* keys_side_ = nullptr;
  V* values_out_ = nullptr;
  V* values_side_ = nullptr;
  std::vector<leaf_desc> leaves_;
};

template <class K, class V, class Comp>
[[nodiscard]] cudaError_t dispatch(void* d_temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out,
                                   const V* values_in, V* values_out, std::int64_t n, Comp comp, cudaStream_t stream,
                                   quicksort_options options) {
  if (n < 0) return cudaErrorInvalidValue;
  const plan_sizes<K, V> sizes(n, options.leaf_items);
  if (d_temp == nullptr) {
    temp_bytes = sizes.total;
    return cudaSuccess;
  }
  if (temp_bytes < sizes.total) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  auto* base = reinterpret_cast<unsigned char*>(detail::align_up(reinterpret_cast<std::uintptr_t>(d_temp)));
  driver<K, V, Comp> d(base, sizes, keys_in, keys_out, values_in, values_out, n, comp, stream);
  return d.run();
}

}  // namespace quicksort_detail

// d_keys_out = d_keys_in sorted ascending (NaNs last). Synchronises `stream` (see above).
template <class K, class Comp = partition_detail::nan_last_less>
[[nodiscard]] cudaError_t quicksort(void* d_temp, std::size_t& temp_bytes, const K* d_keys_in, K* d_keys_out,
                                    std::int64_t n, cudaStream_t stream = nullptr, Comp comp = {},
                                    quicksort_options options = {}) {
  using quicksort_detail::no_value;
  return quicksort_detail::dispatch<K, no_value, Comp>(d_temp, temp_bytes, d_keys_in, d_keys_out,
                                                       static_cast<const no_value*>(nullptr),
                                                       static_cast<no_value*>(nullptr), n, comp, stream, options);
}

// Keys sorted as above, each value moved with its key. Synchronises `stream` (see above).
template <class K, class V, class Comp = partition_detail::nan_last_less>
[[nodiscard]] cudaError_t quicksort_pairs(void* d_temp, std::size_t& temp_bytes, const K* d_keys_in, K* d_keys_out,
                                          const V* d_values_in, V* d_values_out, std::int64_t n,
                                          cudaStream_t stream = nullptr, Comp comp = {},
                                          quicksort_options options = {}) {
  static_assert(std::is_trivially_copyable_v<V>, "values must be trivially copyable");
  return quicksort_detail::dispatch<K, V, Comp>(d_temp, temp_bytes, d_keys_in, d_keys_out, d_values_in, d_values_out,
                                                n, comp, stream, options);
}

}  // namespace scanlab
