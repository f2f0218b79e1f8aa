// The kernels of scanlab/algorithms/quicksort.cuh: pivot choice, the partition level (every
// segment split three ways around each of its pivots, all segments in one launch), moving
// the equal runs into place, and the block-level sort that finishes the small segments.
#pragma once

#include <scanlab/algorithms/partition_kernels.cuh>
#include <scanlab/arch.cuh>
#include <scanlab/block/block_scan.cuh>
#include <scanlab/detail/util.cuh>
#include <scanlab/mix64.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace scanlab::quicksort_detail {

using partition_detail::no_value;
using partition_detail::raw_array;

// A block of `Threads` threads with `Smem` bytes of static shared memory runs on every
// architecture family (scanlab/arch.cuh), one block per SM at least. The partition-level
// kernels have one shape on every GPU (their static shared memory is at most about 40 KB),
// so each checks it for every family in every build: an H100 running older PTX has the
// larger limits and would not notice an overflow.
template <int Threads, std::size_t Smem>
inline constexpr bool fits_every_family =
    arch::all_families([](auto family) { return arch::fits(decltype(family)::value, Threads, 1, Smem); });

// One value written by the device, from a kernel argument: the first level's segment or
// the one leaf of a short input, without a copy from a variable on the host's stack (which
// stream capture would record by address, dead when the graph is replayed).
template <class T>
__global__ void store_kernel(T* target, T value) {
  *target = value;
}

// ---- pivots: evenly spaced order statistics of 512 samples ---------------------------

// Each segment of a level is split around pivot_count pivots at once, three ways around
// each: bucket 2j holds the keys strictly between pivots j-1 and j, bucket 2j+1 the keys
// equivalent to pivot j (finished: they are in their final place). A level divides the
// segments by about pivot_count + 1, so a sort of n keys takes about log32(n / leaf) levels
// (2^28 u32: 3) instead of log2(n / leaf) two-way levels.
inline constexpr int pivot_count = 31;  // 2^5 - 1: the bucket search is five steps
inline constexpr int buckets = 2 * pivot_count + 1;
// 16 samples per bucket: a bucket's size then varies by about 1/sqrt(16) = 25 % around its
// mean per level (8 samples: 35 %, and ~8 % of the last level's buckets of 2^28 keys came
// out larger than a leaf, costing a fourth level).
inline constexpr int pivot_samples = 512;
inline constexpr int samples_per_pivot = pivot_samples / (pivot_count + 1);

using scanlab::mix64;  // sample positions are hashed with splitmix64's finaliser

// A segment of one level: its tiles are [first_tile, first_tile + tiles) among the level's.
struct level_segment {
  std::int64_t begin;
  std::int64_t size;
  std::int64_t first_tile;
  std::int64_t tiles;
};

// Sample t of a segment [begin, begin + size): a position in the t-th of pivot_samples equal
// strata, at an offset hashed from (salt, segment start, t). Evenly spread (a sorted or reverse
// input gives exact quantiles) and not fooled by periodic patterns. With salt 0 this is the
// sampler of the first versions, a fixed function of (begin, size, t): an input can then be
// built that holds the smallest keys of every level's segment exactly at the sampled positions
// (apps/partition/quicksort_adversary.hpp: 2^20 uint32 keys take 2082 levels). The driver draws
// the salt from a per-call seed (quicksort_options::seed), so the positions are not known to
// whoever chose the keys; the level budget bounds the cost even when they are.
__host__ __device__ inline std::int64_t sample_index(std::int64_t begin, std::int64_t size, std::int64_t t,
                                                     std::uint64_t salt) {
  const std::int64_t lo = t * size / pivot_samples;
  const std::int64_t hi = (t + 1) * size / pivot_samples;
  const std::int64_t span = hi > lo ? hi - lo : 1;
  const auto offset = static_cast<std::int64_t>(
      mix64(salt ^ (static_cast<std::uint64_t>(begin) * pivot_samples + static_cast<std::uint64_t>(t))) %
      static_cast<std::uint64_t>(span));
  const std::int64_t index = lo + offset;
  return index < size ? index : size - 1;
}

// One block of pivot_samples threads per segment; sample t at sample_index(..., salt). Each
// thread ranks its sample among all 512 (ties broken by sample index); the samples
// of ranks 16j + 15 are the pivots, in order. Every pivot is an element of the segment, so
// each bucket between pivots is smaller than the segment: the sort always progresses.
// The block also writes the level's tile -> segment map for its tiles.
template <class K, class Comp>
__global__ void __launch_bounds__(pivot_samples)
    choose_pivots_kernel(const level_segment* segments, const K* keys, K* pivots, std::int32_t* tile_segment,
                         Comp comp, std::uint64_t salt) {
  __shared__ K samples[pivot_samples];
  const level_segment seg = segments[blockIdx.x];
  const std::int64_t t = threadIdx.x;
  for (std::int64_t i = t; i < seg.tiles; i += pivot_samples) {
    tile_segment[seg.first_tile + i] = static_cast<std::int32_t>(blockIdx.x);
  }
  const std::int64_t index = sample_index(seg.begin, seg.size, t, salt);
  const K mine = keys[seg.begin + index];
  samples[t] = mine;
  __syncthreads();
  int rank = 0;
  for (int u = 0; u < pivot_samples; ++u) {
    const K other = samples[u];
    if (comp(other, mine) || (!comp(mine, other) && u < t)) ++rank;
  }
  if (rank % samples_per_pivot == samples_per_pivot - 1 && rank / samples_per_pivot < pivot_count) {
    pivots[static_cast<std::int64_t>(blockIdx.x) * pivot_count + rank / samples_per_pivot] = mine;
  }
}

// The bucket of x among sorted pivots (in shared memory): j = the pivots less than x, by a
// branchless binary search; x is equivalent to pivot j when that pivot is not greater.
template <class K, class Comp>
__device__ __forceinline__ int bucket_of(const K& x, const K* pivots, const Comp& comp) {
  int j = 0;
#pragma unroll
  for (int step = (pivot_count + 1) / 2; step >= 1; step /= 2) {
    if (comp(pivots[j + step - 1], x)) j += step;
  }
  return j < pivot_count && !comp(x, pivots[j]) ? 2 * j + 1 : 2 * j;
}

// ---- one partition level: count, scan, scatter ----------------------------------------

// Bucket numbers fit in bucket_bits bits, with one more number (`buckets`) for the items
// past the end of a tile.
inline constexpr int bucket_bits = 6;
static_assert(buckets < (1 << bucket_bits), "a bucket number and the past-the-end mark fit bucket_bits");

// The lanes of the warp holding the same bucket number as this lane: one ballot per bit, a
// fixed cost whatever the data. The lowest lane of each group then advances a per-warp
// counter, so no shared-memory atomics are needed (same-address atomics serialise when a
// warp's keys share a bucket, as on sorted input).
__device__ __forceinline__ unsigned same_bucket_lanes(int b) {
  unsigned peers = detail::full_warp_mask;
#pragma unroll
  for (int bit = 0; bit < bucket_bits; ++bit) {
    const bool set = (b >> bit) & 1;
    const unsigned lanes = __ballot_sync(detail::full_warp_mask, set);
    peers &= set ? lanes : ~lanes;
  }
  return peers;
}

// Tiles of 256 threads x Items keys, warp-striped: warp w's item k of lane l is tile item
// w*32*Items + k*32 + l (every load instruction reads 32 consecutive keys: coalesced for
// any alignment, and segments start anywhere). The scatter stages the tile (keys, values
// and bucket numbers) in static shared memory: 16 items where that fits in 40 KB, else 8.
template <class K, class V>
struct level_tuning {
  static constexpr int threads = 256;
  static constexpr std::size_t item_bytes = sizeof(K) + (std::is_same_v<V, no_value> ? 0 : sizeof(V)) + 1;
  static constexpr int items = item_bytes * threads * 16 <= 40 * 1024 ? 16 : 8;
  static constexpr int tile_items = threads * items;
};

template <class K, class V, class Comp>
struct level_params {
  const K* keys_in;
  K* keys_out;
  const V* values_in;
  V* values_out;
  const level_segment* segments;
  const std::int32_t* tile_segment;  // the segment of each tile of the level
  const K* pivots;                   // pivot_count per segment, sorted
  std::int64_t* counts;              // counts[buckets * first_tile + b * tiles + t]; scanned in place
  std::int64_t* bucket_starts;       // per segment and bucket: the bucket's start in the segment
  Comp comp;
};

// Pass 1: each tile's count per bucket. The counts of a segment are laid out bucket-major
// (for bucket b, its tiles in order), segments one after another, so ONE exclusive scan of
// the whole array gives every (tile, bucket) its place: the scan at (s, b, t) minus the scan
// at the segment's first entry is where tile t's run of bucket b starts in segment s.
template <class Tuning, class K, class V, class Comp>
__global__ void __launch_bounds__(Tuning::threads)
    bucket_count_kernel(const __grid_constant__ level_params<K, V, Comp> p) {
  constexpr int items = Tuning::items;
  constexpr int warps = Tuning::threads / 32;
  __shared__ K pivots[pivot_count];
  __shared__ int histogram[warps][buckets + 1];  // per warp; column `buckets`: past the end
  static_assert(fits_every_family<Tuning::threads, sizeof(pivots) + sizeof(histogram) + 64>,
                "the bucket count kernel's shared memory does not fit some architecture");
  const std::int64_t tile = blockIdx.x;
  const std::int32_t s = p.tile_segment[tile];
  const level_segment seg = p.segments[s];
  if (threadIdx.x < pivot_count) pivots[threadIdx.x] = p.pivots[static_cast<std::int64_t>(s) * pivot_count + threadIdx.x];
  for (int e = static_cast<int>(threadIdx.x); e < warps * (buckets + 1); e += Tuning::threads) {
    histogram[e / (buckets + 1)][e % (buckets + 1)] = 0;
  }
  const std::int64_t t = tile - seg.first_tile;
  const std::int64_t base = seg.begin + t * Tuning::tile_items;
  const std::int64_t left = seg.size - t * Tuning::tile_items;
  const int valid = static_cast<int>(left < Tuning::tile_items ? left : Tuning::tile_items);
  const int warp_base = static_cast<int>(threadIdx.x / 32) * 32 * items + static_cast<int>(threadIdx.x % 32);
  K x[items];
#pragma unroll
  for (int k = 0; k < items; ++k) {
    const int i = warp_base + k * 32;
    if (i < valid) x[k] = p.keys_in[base + i];
  }
  __syncthreads();
  // Counting needs no ranks, so it needs no ballots (the scatter's six per item made this
  // kernel issue-bound): each lane adds itself with a shared-memory atomic to its warp's
  // counters (on random keys few lanes of a warp collide), except where the whole warp
  // holds one bucket (sorted runs, where 32 lanes on one address would serialise): then one
  // lane adds 32. Atomics add the same counts in any order: the result is deterministic.
  const int warp = static_cast<int>(threadIdx.x / 32);
  const bool leader = threadIdx.x % 32 == 0;
#pragma unroll
  for (int k = 0; k < items; ++k) {
    const int b = warp_base + k * 32 < valid ? bucket_of(x[k], pivots, p.comp) : buckets;
    if (__all_sync(detail::full_warp_mask, b == __shfl_sync(detail::full_warp_mask, b, 0))) {
      if (leader) atomicAdd(&histogram[warp][b], 32);
    } else {
      atomicAdd(&histogram[warp][b], 1);
    }
  }
  __syncthreads();
  if (threadIdx.x < buckets) {
    int count = 0;
#pragma unroll
    for (int w = 0; w < warps; ++w) count += histogram[w][threadIdx.x];
    p.counts[buckets * seg.first_tile + threadIdx.x * seg.tiles + t] = count;
  }
}

// Pass 2 (after the scan): each tile again, ranked by bucket and written to its runs.
//   1. classify each key (as pass 1);
//   2. rank    per warp, in input order: the lanes holding the same bucket take
//              consecutive ranks after that bucket's earlier items of the warp (a per-warp
//              counter per bucket, advanced by the group's lowest lane);
//   3. stage   one block scan over the per-warp counts, bucket-major, gives each (bucket,
//              warp) its start in the tile sorted by bucket; keys (and values) go there in
//              shared memory, with their bucket numbers;
//   4. store   consecutive threads to consecutive staged items: each bucket's run of the
//              tile is contiguous in the output (at the scanned place of the tile's run).
// Deterministic and stable inside each bucket.
template <class Tuning, class K, class V, class Comp>
__global__ void __launch_bounds__(Tuning::threads)
    bucket_scatter_kernel(const __grid_constant__ level_params<K, V, Comp> p) {
  constexpr bool has_values = !std::is_same_v<V, no_value>;
  constexpr int items = Tuning::items;
  constexpr int threads = Tuning::threads;
  constexpr int warps = threads / 32;
  constexpr int entries = buckets * warps;  // (bucket, warp) counters, bucket-major
  constexpr int entries_per_thread = (entries + threads - 1) / threads;
  using scan_t = block_scan<int, threads>;
  __shared__ K pivots[pivot_count];
  __shared__ std::int64_t run_base[buckets];  // output index of the tile's run of bucket b, minus its staged start
  __shared__ int warp_counts[buckets + 1][warps];  // row `buckets`: items past the end
  __shared__ typename scan_t::temp_storage scan_storage;
  __shared__ raw_array<K, Tuning::tile_items> staged_keys;
  __shared__ raw_array<V, has_values ? Tuning::tile_items : 1> staged_values;
  __shared__ unsigned char staged_buckets[Tuning::tile_items];
  // + 64: alignment between the arrays.
  static_assert(fits_every_family<threads, sizeof(pivots) + sizeof(run_base) + sizeof(warp_counts) +
                                               sizeof(scan_storage) + sizeof(staged_keys) + sizeof(staged_values) +
                                               sizeof(staged_buckets) + 64>,
                "the bucket scatter kernel's shared memory does not fit some architecture");

  const std::int64_t tile = blockIdx.x;
  const std::int32_t s = p.tile_segment[tile];
  const level_segment seg = p.segments[s];
  const std::int64_t t = tile - seg.first_tile;
  const std::int64_t segment_counts = buckets * seg.first_tile;  // the segment's first count entry
  if (threadIdx.x < pivot_count) pivots[threadIdx.x] = p.pivots[static_cast<std::int64_t>(s) * pivot_count + threadIdx.x];
  for (int e = static_cast<int>(threadIdx.x); e < (buckets + 1) * warps; e += threads) {
    warp_counts[e / warps][e % warps] = 0;
  }
  const std::int64_t base = seg.begin + t * Tuning::tile_items;
  const std::int64_t left = seg.size - t * Tuning::tile_items;
  const int valid = static_cast<int>(left < Tuning::tile_items ? left : Tuning::tile_items);
  const int warp = static_cast<int>(threadIdx.x / 32);
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int warp_base = warp * 32 * items + lane;
  K x[items];
  [[maybe_unused]] V y[items];
#pragma unroll
  for (int k = 0; k < items; ++k) {
    const int i = warp_base + k * 32;
    if (i < valid) {
      x[k] = p.keys_in[base + i];
      if constexpr (has_values) y[k] = p.values_in[base + i];
    }
  }
  __syncthreads();  // pivots and zeroed counters
  const std::int64_t scan_origin = p.counts[segment_counts];
  if (threadIdx.x < buckets) {
    const std::int64_t entry = segment_counts + threadIdx.x * seg.tiles;
    const std::int64_t bucket_start = p.counts[entry] - scan_origin;  // the bucket's start in the segment
    run_base[threadIdx.x] = seg.begin + (p.counts[entry + t] - scan_origin);
    if (t == 0) p.bucket_starts[static_cast<std::int64_t>(s) * buckets + threadIdx.x] = bucket_start;
  }
  // 1.-2. classify and rank; code[k] = bucket << 16 | rank among the warp's items of that bucket.
  const unsigned below = (1u << lane) - 1u;
  int code[items];
#pragma unroll
  for (int k = 0; k < items; ++k) {
    const int b = warp_base + k * 32 < valid ? bucket_of(x[k], pivots, p.comp) : buckets;
    const unsigned peers = same_bucket_lanes(b);
    const int before = warp_counts[b][warp];
    code[k] = (b << 16) | (before + __popc(peers & below));
    __syncwarp();
    if ((peers & below) == 0) warp_counts[b][warp] = before + __popc(peers);
    __syncwarp();
  }
  __syncthreads();
  // 3. The (bucket, warp) starts: one exclusive block scan, entries_per_thread consecutive
  // entries per thread.
  int counts[entries_per_thread];
#pragma unroll
  for (int j = 0; j < entries_per_thread; ++j) {
    const int e = static_cast<int>(threadIdx.x) * entries_per_thread + j;
    counts[j] = e < entries ? warp_counts[e / warps][e % warps] : 0;
  }
  int starts[entries_per_thread];
  scan_t(scan_storage).exclusive_scan(counts, starts, 0, plus{});
  __syncthreads();  // every counter read before any is overwritten
#pragma unroll
  for (int j = 0; j < entries_per_thread; ++j) {
    const int e = static_cast<int>(threadIdx.x) * entries_per_thread + j;
    if (e < entries) warp_counts[e / warps][e % warps] = starts[j];
  }
  __syncthreads();
  if (threadIdx.x < buckets) run_base[threadIdx.x] -= warp_counts[threadIdx.x][0];
#pragma unroll
  for (int k = 0; k < items; ++k) {
    const int b = code[k] >> 16;
    if (b < buckets) {
      const int at = warp_counts[b][warp] + (code[k] & 0xffff);
      staged_keys.data()[at] = x[k];
      if constexpr (has_values) staged_values.data()[at] = y[k];
      staged_buckets[at] = static_cast<unsigned char>(b);
    }
  }
  __syncthreads();
  // 4. Store.
  for (int i = static_cast<int>(threadIdx.x); i < valid; i += threads) {
    const std::int64_t to = run_base[staged_buckets[i]] + i;
    p.keys_out[to] = staged_keys.data()[i];
    if constexpr (has_values) p.values_out[to] = staged_values.data()[i];
  }
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

// Shared-memory slots for m items with the merge sort's padding (one per 32 items).
__host__ __device__ constexpr int leaf_padded(int m) { return m + m / 32 + 1; }

// Bytes of shared memory a leaf sort of `capacity` elements needs (either sort).
template <class K, class V>
constexpr std::size_t leaf_smem_bytes(int capacity) {
  constexpr bool has_values = !std::is_same_v<V, no_value>;
  const std::size_t keys = detail::align_up(static_cast<std::size_t>(leaf_padded(capacity)) * sizeof(K), 16);
  return has_values ? keys + static_cast<std::size_t>(leaf_padded(capacity)) * sizeof(V) : keys;
}

// ---- the leaf capacity, per architecture family ----
//
// The largest leaf one block sorts. On Hopper (where it was measured): a power of two up to
// 16384 whose keys (and values) take at most 64 KB, i.e. 16384 four-byte keys, 8192
// eight-byte keys or four-byte pairs; with the merge sort's padding (one slot per 32 items)
// such a leaf needs about 66 KB of dynamic shared memory (67,600 bytes for 16384 uint32).
// That fits every family from 8.0 on (99 KB per block and more): they sort the same leaves.
// Turing allows 64 KB per block: there the capacity is halved until the padded leaf fits
// (8192 four-byte keys, 33 KB; 4096 eight-byte keys or pairs).
template <class K, class V, int Family>
constexpr int leaf_capacity_for() {
  constexpr std::size_t item = sizeof(K) + (std::is_same_v<V, no_value> ? 0 : sizeof(V));
  int capacity = 1;
  while (static_cast<std::size_t>(capacity) * 2 * item <= 64 * 1024 && capacity < 16384) capacity *= 2;
  while (capacity > 1 && leaf_smem_bytes<K, V>(capacity) > arch::limits_of(Family).smem_per_block) capacity /= 2;
  return capacity;
}

// One family's leaf shape: the capacity, the merge sort's block for it (merge_items per
// thread, whole warps: 1024 threads for 16384 keys), its dynamic shared memory, and the
// merge tile of the fallback merge sort (runs start as chunks of the capacity, a power of
// two, so a tile of at most that many keys never straddles two pairs of runs).
template <class K, class V, int Capacity>
struct leaf_policy {
  static constexpr int capacity = Capacity;
  static constexpr int block_threads = (Capacity + 16 * 32 - 1) / (16 * 32) * 32;  // 16 = merge_items
  static constexpr int min_blocks_per_sm = 1;
  static constexpr std::size_t smem_bytes = leaf_smem_bytes<K, V>(Capacity);
  static constexpr int merge_tile = Capacity < 1024 ? Capacity : 1024;
  static_assert(Capacity >= 256, "keys and values this large leave the merge tile less than a warp of threads");
};

// The leaf tuning table (scanlab/arch.cuh): the host takes the entry of the family whose
// code the driver runs for leaf_merge_sort_kernel (detail::with_policy); temp storage is
// sized for the smallest capacity over the families (the most segments and leaves).
template <class K, class V>
struct leaf_tuning {
  template <int Family>
  struct at {
    using type = leaf_policy<K, V, leaf_capacity_for<K, V, Family>()>;
  };
};

template <class K, class V>
inline constexpr bool leaf_tuning_fits =
    arch::table_fits<leaf_tuning<K, V>>([](auto policy) { return decltype(policy)::type::smem_bytes; });

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

// i = how many of the first d outputs of the merge of a[0, na) and b[0, nb) come from a (ties
// taken from a first: the merge is stable); a binary search along the cross diagonal d.
template <class Index, class AtA, class AtB, class Comp>
__device__ __forceinline__ Index merge_path(Index d, Index na, Index nb, const AtA& a, const AtB& b, const Comp& comp) {
  Index lo = d > nb ? d - nb : 0;
  Index hi = d < na ? d : na;
  while (lo < hi) {
    const Index mid = (lo + hi) / 2;
    if (!comp(b(d - mid - 1), a(mid))) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// The production leaf sort: a block merge sort in shared memory. Thread t owns the
// merge_items consecutive positions [t * merge_items, (t + 1) * merge_items) (the block
// has at least leaf size / merge_items threads):
//   1. each thread sorts its own items in registers (odd-even transposition: the indices
//      are constants after unrolling, so the items never leave registers);
//   2. runs of width w = merge_items, 2 merge_items, ... are merged pairwise: the thread
//      finds where its output range starts in the merge of its pair of runs (a binary
//      search along the cross diagonal: "merge path"), merges merge_items items into
//      registers, and after a barrier writes them back to its own positions.
// About 10 merge rounds for 16384 keys, each touching every key about once, instead of
// the bitonic network's 105 compare-exchange steps: several times fewer shared-memory
// accesses. Stable (ties taken from the left run first), so deterministic; positions at or
// past the leaf's size are never read or written, so no sentinel value is needed.
inline constexpr int merge_items = 16;

template <class K, class V, class Comp>
__global__ void __launch_bounds__(1024)
    leaf_merge_sort_kernel(const __grid_constant__ leaf_params<K, V> p, Comp comp) {
  constexpr bool has_values = !std::is_same_v<V, no_value>;
  constexpr int I = merge_items;
  static_assert(I == 16, "leaf_policy::block_threads assumes 16 items per thread");
  // The host never asks for more than the leaf of the family compiled here (leaf_tuning).
  static_assert(arch::fits_block(arch::compiled_family, arch::active_policy<leaf_tuning<K, V>>::block_threads,
                                 arch::active_policy<leaf_tuning<K, V>>::smem_bytes),
                "the leaf does not fit this architecture's shared memory");
  extern __shared__ __align__(16) unsigned char smem[];
  const leaf_desc leaf = p.leaves[blockIdx.x];
  const int m = static_cast<int>(leaf.size);
  // Shared-memory slot of item i: one pad slot per 32 items, so the stride-16 accesses of
  // a warp (each lane reading its own 16 items) fall in different banks.
  const auto at = [](int i) { return i + (i >> 5); };
  K* keys = reinterpret_cast<K*>(smem);
  [[maybe_unused]] V* values = nullptr;
  if constexpr (has_values) {
    values = reinterpret_cast<V*>(smem + detail::align_up(static_cast<std::size_t>(leaf_padded(m)) * sizeof(K), 16));
  }
  const K* key_source = p.key_sources[leaf.source] + leaf.begin;
  [[maybe_unused]] const V* value_source = nullptr;
  if constexpr (has_values) value_source = p.value_sources[leaf.source] + leaf.begin;
  const int threads = static_cast<int>(blockDim.x);
  for (int i = static_cast<int>(threadIdx.x); i < m; i += threads) {
    keys[at(i)] = key_source[i];
    if constexpr (has_values) values[at(i)] = value_source[i];
  }
  __syncthreads();

  const int first = static_cast<int>(threadIdx.x) * I;  // this thread's positions
  K k[I];
  [[maybe_unused]] V v[I];
  // 1. Sort the own items (the valid ones are a prefix of the range: compare only those).
#pragma unroll
  for (int j = 0; j < I; ++j) {
    if (first + j < m) {
      k[j] = keys[at(first + j)];
      if constexpr (has_values) v[j] = values[at(first + j)];
    }
  }
#pragma unroll
  for (int round = 0; round < I; ++round) {
#pragma unroll
    for (int j = round % 2; j + 1 < I; j += 2) {
      if (first + j + 1 < m && comp(k[j + 1], k[j])) {
        const K t = k[j];
        k[j] = k[j + 1];
        k[j + 1] = t;
        if constexpr (has_values) {
          const V u = v[j];
          v[j] = v[j + 1];
          v[j + 1] = u;
        }
      }
    }
  }
#pragma unroll
  for (int j = 0; j < I; ++j) {
    if (first + j < m) {
      keys[at(first + j)] = k[j];
      if constexpr (has_values) values[at(first + j)] = v[j];
    }
  }
  // 2. Merge rounds.
  for (int width = I; width < m; width *= 2) {
    __syncthreads();
    const bool active = first < m;
    if (active) {
      const int start = first / (2 * width) * (2 * width);
      const int a_begin = start;
      const int a_end = start + width < m ? start + width : m;
      const int b_end = start + 2 * width < m ? start + 2 * width : m;
      const int na = a_end - a_begin;
      const int nb = b_end - a_end;
      const int d = first - start;  // outputs of the pair before this thread's first
      // Merge path: how many of the first d outputs come from run A.
      const int from_a = merge_path(
          d, na, nb, [&](int i) { return keys[at(a_begin + i)]; }, [&](int i) { return keys[at(a_end + i)]; }, comp);
      int ia = a_begin + from_a;
      int ib = a_end + (d - from_a);
      K ka = ia < a_end ? keys[at(ia)] : K{};
      K kb = ib < b_end ? keys[at(ib)] : K{};
#pragma unroll
      for (int j = 0; j < I; ++j) {
        const bool take_b = ib < b_end && (ia >= a_end || comp(kb, ka));
        k[j] = take_b ? kb : ka;
        if constexpr (has_values) {
          if (first + j < m) v[j] = values[at(take_b ? ib : ia)];
        }
        if (take_b) {
          ++ib;
          if (ib < b_end) kb = keys[at(ib)];
        } else {
          ++ia;
          if (ia < a_end) ka = keys[at(ia)];
        }
      }
    }
    __syncthreads();
    if (active) {
#pragma unroll
      for (int j = 0; j < I; ++j) {
        if (first + j < m) {
          keys[at(first + j)] = k[j];
          if constexpr (has_values) values[at(first + j)] = v[j];
        }
      }
    }
  }
  __syncthreads();
  for (int i = static_cast<int>(threadIdx.x); i < m; i += threads) {
    p.keys_out[leaf.begin + i] = keys[at(i)];
    if constexpr (has_values) p.values_out[leaf.begin + i] = values[at(i)];
  }
}

// ---- past the level budget: a merge sort of the remaining segments ---------------------

// The segments left when the level budget runs out are sorted by a merge sort whose cost
// does not depend on the keys: chunks of the leaf capacity sorted by the leaf kernel, then
// passes that merge pairs of neighbouring sorted runs of width w = chunk, 2 chunk, ... (each
// pass reads and writes the segment once; a segment of s keys takes ceil(log2(s / chunk))
// passes). Keys move between the output and the ping-pong buffer; the driver starts each
// segment in whichever of the two makes its last pass end in the output.
struct merge_segment {
  std::int64_t begin;
  std::int64_t size;
  std::int64_t first_tile;  // its first merge tile among the pass's
  std::int64_t to_output;   // 1: this pass merges from the ping-pong buffer into the output; 0: back
};

template <class K, class V, class Comp>
struct merge_params {
  const merge_segment* segments;  // of this pass, in order of first_tile
  std::int64_t num_segments;
  std::int64_t tiles;             // all merge tiles of the pass
  std::int64_t width;             // runs of this many keys (a multiple of the tile) are merged pairwise
  K* keys_out;
  K* keys_pingpong;
  V* values_out;
  V* values_pingpong;
  Comp comp;
};

inline constexpr int merge_pass_items = 8;  // outputs per thread

// One merge pass. Tile t of a segment is its outputs [t * Tile, (t + 1) * Tile); runs are
// multiples of Tile wide, so a tile lies in one pair of runs A | B (B empty past the segment's
// end: the tile is copied). Two threads find by merge path where the tile's inputs start and
// end in A (in global memory); the block loads those parts of A and B into shared memory
// (coalesced), each thread merges its 8 outputs there (merge path again), the block writes
// the tile back, coalesced. Tiles of all segments of the pass in one launch (each block finds
// its segment by a binary search over first_tile), blocks striding over the tiles.
template <int Tile, class K, class V, class Comp>
__global__ void __launch_bounds__(Tile / merge_pass_items)
    merge_pass_kernel(const __grid_constant__ merge_params<K, V, Comp> p) {
  constexpr bool has_values = !std::is_same_v<V, no_value>;
  constexpr int threads = Tile / merge_pass_items;
  static_assert(threads % 32 == 0, "whole warps");
  __shared__ raw_array<K, Tile> keys;
  __shared__ raw_array<V, has_values ? Tile : 1> values;
  __shared__ std::int64_t a_bounds[2];  // A-items before the tile's first output and up to its end
  static_assert(fits_every_family<threads, sizeof(keys) + sizeof(values) + sizeof(a_bounds) + 64>,
                "the merge pass kernel's shared memory does not fit some architecture");
  for (std::int64_t tile = blockIdx.x; tile < p.tiles; tile += gridDim.x) {
    std::int64_t lo = 0, hi = p.num_segments - 1;  // the last segment whose first tile <= tile
    while (lo < hi) {
      const std::int64_t mid = (lo + hi + 1) / 2;
      if (p.segments[mid].first_tile <= tile) lo = mid;
      else hi = mid - 1;
    }
    const merge_segment seg = p.segments[lo];
    const K* from = (seg.to_output ? p.keys_pingpong : p.keys_out) + seg.begin;
    K* to = (seg.to_output ? p.keys_out : p.keys_pingpong) + seg.begin;
    [[maybe_unused]] const V* values_from = nullptr;
    [[maybe_unused]] V* values_to = nullptr;
    if constexpr (has_values) {
      values_from = (seg.to_output ? p.values_pingpong : p.values_out) + seg.begin;
      values_to = (seg.to_output ? p.values_out : p.values_pingpong) + seg.begin;
    }
    // Segment coordinates: the tile's outputs [first, first + count); its pair of runs
    // A = [pair, a_end), B = [a_end, b_end).
    const std::int64_t first = (tile - seg.first_tile) * Tile;
    const int count = static_cast<int>(seg.size - first < Tile ? seg.size - first : Tile);
    const std::int64_t pair = first / (2 * p.width) * (2 * p.width);
    const std::int64_t a_end = pair + p.width < seg.size ? pair + p.width : seg.size;
    const std::int64_t b_end = pair + 2 * p.width < seg.size ? pair + 2 * p.width : seg.size;
    if (threadIdx.x < 2) {
      const std::int64_t d = first - pair + (threadIdx.x == 0 ? 0 : count);
      a_bounds[threadIdx.x] = merge_path(
          d, a_end - pair, b_end - a_end, [&](std::int64_t i) { return from[pair + i]; },
          [&](std::int64_t i) { return from[a_end + i]; }, p.comp);
    }
    __syncthreads();
    const std::int64_t a_first = a_bounds[0];
    const int na = static_cast<int>(a_bounds[1] - a_first);  // the tile's A-items: smem [0, na)
    const int nb = count - na;                               // and B-items: smem [na, count)
    const std::int64_t b_first = first - pair - a_first;
    for (int i = static_cast<int>(threadIdx.x); i < count; i += threads) {
      const std::int64_t at = i < na ? pair + a_first + i : a_end + b_first + (i - na);
      keys.data()[i] = from[at];
      if constexpr (has_values) values.data()[i] = values_from[at];
    }
    __syncthreads();
    const int mine = static_cast<int>(threadIdx.x) * merge_pass_items;  // this thread's first output
    K k[merge_pass_items];
    [[maybe_unused]] V v[merge_pass_items];
    if (mine < count) {
      const K* a = keys.data();
      const K* b = keys.data() + na;
      int ia = merge_path(mine, na, nb, [&](int i) { return a[i]; }, [&](int i) { return b[i]; }, p.comp);
      int ib = mine - ia;
#pragma unroll
      for (int j = 0; j < merge_pass_items; ++j) {
        if (mine + j < count) {
          const bool take_b = ib < nb && (ia >= na || p.comp(b[ib], a[ia]));
          const int source = take_b ? na + ib : ia;
          k[j] = keys.data()[source];
          if constexpr (has_values) v[j] = values.data()[source];
          if (take_b) ++ib;
          else ++ia;
        }
      }
    }
    __syncthreads();  // every thread has read its inputs before any output overwrites them
    if (mine < count) {
#pragma unroll
      for (int j = 0; j < merge_pass_items; ++j) {
        if (mine + j < count) {
          keys.data()[mine + j] = k[j];
          if constexpr (has_values) values.data()[mine + j] = v[j];
        }
      }
    }
    __syncthreads();
    for (int i = static_cast<int>(threadIdx.x); i < count; i += threads) {
      to[first + i] = keys.data()[i];
      if constexpr (has_values) values_to[first + i] = values.data()[i];
    }
    __syncthreads();  // the tile's shared memory and bounds are read before the next tile's
  }
}

// ---- planning the next level on the device --------------------------------------------

// Leaves are sorted in three size classes (up to 2048 keys, up to 8192, up to the leaf
// size), each by one launch whose blocks fit its largest leaf (threads and shared memory),
// so small leaves do not hold the resources of the largest.
inline constexpr int leaf_classes = 3;

// The largest leaf of class c (c < 2; the last class goes up to the leaf size).
__host__ __device__ constexpr std::int64_t leaf_class_bound(int c) { return c == 0 ? 2048 : 8192; }

__host__ __device__ constexpr int leaf_class(std::int64_t size) {
  return size <= leaf_class_bound(0) ? 0 : (size <= leaf_class_bound(1) ? 1 : 2);
}

// What one (segment, bucket) entry of a level hands on: an exclusive scan of these over all
// entries of the level gives each entry its place in every list at once (the next level's
// segments and their first tiles, the leaves of each size class, the equal runs to copy and
// their first tiles), in segment and bucket order, so the plan is the same on every run. The
// scan's total is all the host reads back (one small copy per level).
struct plan_entry {
  std::int64_t segments;   // 1: the bucket is a segment of the next level
  std::int64_t tiles;      // that segment's partition tiles
  std::int64_t leaves[leaf_classes];  // 1 in the bucket's size class: the bucket is a leaf
  std::int64_t runs;       // 1: an equal bucket to copy to the output
  std::int64_t run_tiles;  // that run's copy tiles
  std::int64_t unused;     // pads the entry to 64 bytes
};

struct plan_add {
  __host__ __device__ plan_entry operator()(const plan_entry& a, const plan_entry& b) const {
    plan_entry c{};
    c.segments = a.segments + b.segments;
    c.tiles = a.tiles + b.tiles;
    for (int k = 0; k < leaf_classes; ++k) c.leaves[k] = a.leaves[k] + b.leaves[k];
    c.runs = a.runs + b.runs;
    c.run_tiles = a.run_tiles + b.run_tiles;
    return c;
  }
};

struct plan_params {
  const level_segment* segments;      // this level's
  const std::int64_t* bucket_starts;  // per segment and bucket (written by the scatter)
  std::int64_t entries;               // buckets * segments
  std::int64_t leaf;                  // the largest leaf
  std::int64_t tile_items;            // keys per partition tile
  std::int32_t target;                // the buffer the level wrote to
  bool copy_equal;                    // that is not the output: equal buckets are copied there
  plan_entry* offsets;                // the entries, then (scanned in place) their places
  level_segment* next_segments;
  leaf_desc* leaves;                  // grouped by class: class 0, then 1, then 2
  run_copy* runs;
  plan_entry* totals;                 // the whole level's sum
};

// Entry e: where its bucket lies in the keys, and what it becomes.
__device__ __forceinline__ plan_entry plan_of(const plan_params& p, std::int64_t e, std::int64_t& begin,
                                              std::int64_t& size) {
  const std::int64_t s = e / buckets;
  const int b = static_cast<int>(e % buckets);
  const level_segment seg = p.segments[s];
  const std::int64_t start = p.bucket_starts[e];
  const std::int64_t end = b + 1 < buckets ? p.bucket_starts[e + 1] : seg.size;
  begin = seg.begin + start;
  size = end - start;
  plan_entry entry{};
  if (size <= 0) return entry;
  if (b % 2 == 1) {
    if (p.copy_equal) {
      entry.runs = 1;
      entry.run_tiles = (size + copy_tile_items - 1) / copy_tile_items;
    }
  } else if (size > p.leaf) {
    entry.segments = 1;
    entry.tiles = (size + p.tile_items - 1) / p.tile_items;
  } else {
    entry.leaves[leaf_class(size)] = 1;
  }
  return entry;
}

inline constexpr int plan_threads = 256;

// (The planning kernels are templates only so that a header can define them: a plain
// __global__ function would be defined again by every translation unit that includes it.)

// 1. Each entry's contribution (then an exclusive scan of them, in place).
template <int Unused = 0>
__global__ void __launch_bounds__(plan_threads) plan_count_kernel(const __grid_constant__ plan_params p) {
  const std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * plan_threads + threadIdx.x;
  if (e >= p.entries) return;
  std::int64_t begin = 0, size = 0;
  p.offsets[e] = plan_of(p, e, begin, size);
}

// 2. Each entry writes itself at its place; the last one also writes the totals.
template <int Unused = 0>
__global__ void __launch_bounds__(plan_threads) plan_write_kernel(const __grid_constant__ plan_params p) {
  const std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * plan_threads + threadIdx.x;
  if (e >= p.entries) return;
  std::int64_t begin = 0, size = 0;
  const plan_entry mine = plan_of(p, e, begin, size);
  const plan_entry at = p.offsets[e];
  if (mine.segments != 0) {
    p.next_segments[at.segments] = {begin, size, at.tiles, mine.tiles};
  } else if (mine.runs != 0) {
    p.runs[at.runs] = {begin, begin, size, at.run_tiles};
  } else if (size > 0 && (e % buckets) % 2 == 0) {
    // Class c's leaves follow those of the classes before it.
    std::int64_t last_begin = 0, last_size = 0;
    const plan_entry totals = plan_add{}(p.offsets[p.entries - 1], plan_of(p, p.entries - 1, last_begin, last_size));
    const int c = leaf_class(size);
    std::int64_t place = at.leaves[c];
    for (int k = 0; k < c; ++k) place += totals.leaves[k];
    p.leaves[place] = {begin, size, p.target, 0};
  }
  if (e == p.entries - 1) *p.totals = plan_add{}(at, mine);
}

// ---- floats sorted as unsigned integers ------------------------------------------------

// A bijection from the bits of a float (or double) to an unsigned integer of the same width
// whose order is nan_last_less's: -inf < ... < -0.0 < +0.0 < ... < +inf < every NaN.
// Quicksort moves its keys (unlike the radix sort, which only reads ordered bits), so the
// map must be undone exactly: NaN payloads and signs survive. Steps:
//   1. the usual flip: negatives have every bit inverted, positives only the sign bit:
//      now unsigned order is numeric order, with the negative NaNs below -inf (flipped
//      to 0 .. m-1, m = the number of negative NaN patterns) and positive ones above +inf;
//   2. minus m (mod 2^width), a rotation: -inf becomes 0 and the negative NaNs wrap
//      around to the very top, above the positive ones. All NaNs are then last (in an
//      order of their bits: the sort leaves equivalent keys in no particular order anyway).
// Sorting the mapped keys with operator< and mapping back gives the float sort, without a
// NaN test in every comparison of the bucket searches and the leaf merges.
template <class F>
struct float_order {
  using U = std::conditional_t<sizeof(F) == 4, std::uint32_t, std::uint64_t>;
  static constexpr int bits = 8 * sizeof(F);
  static constexpr U sign = U{1} << (bits - 1);
  static constexpr U negative_nans = (U{1} << (sizeof(F) == 4 ? 23 : 52)) - 1;  // mantissa patterns but zero

  __host__ __device__ static U encode(U raw) {
    const U flipped = raw & sign ? ~raw : raw ^ sign;
    return flipped - negative_nans;
  }
  __host__ __device__ static U decode(U ordered) {
    const U flipped = ordered + negative_nans;
    return flipped & sign ? flipped ^ sign : ~flipped;
  }
};

inline constexpr int code_threads = 256;
inline constexpr int code_items = 4;  // per thread: four loads in flight before the stores

// out[i] = encode(in[i]) (Encode) or decode(in[i]); in place allowed.
template <class F, bool Encode>
__global__ void __launch_bounds__(code_threads)
    float_order_kernel(const typename float_order<F>::U* in, typename float_order<F>::U* out, std::int64_t n) {
  using U = typename float_order<F>::U;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * code_threads * code_items + threadIdx.x;
  U x[code_items];
#pragma unroll
  for (int k = 0; k < code_items; ++k) {
    if (first + k * code_threads < n) x[k] = in[first + k * code_threads];
  }
#pragma unroll
  for (int k = 0; k < code_items; ++k) {
    if (first + k * code_threads < n) {
      out[first + k * code_threads] = Encode ? float_order<F>::encode(x[k]) : float_order<F>::decode(x[k]);
    }
  }
}

}  // namespace scanlab::quicksort_detail
