// scanlab/algorithms/merge.cuh: stable merges of sorted sequences. Two sorted arrays into
// one (keys, or key-value pairs), and k sorted runs stored back to back into one.
//
//   std::size_t temp_bytes = 0;
//   SCANLAB_CHECK(scanlab::merge_keys(nullptr, temp_bytes, d_a, na, d_b, nb, d_out));
//   (allocate temp_bytes bytes at d_temp)
//   SCANLAB_CHECK(scanlab::merge_keys(d_temp, temp_bytes, d_a, na, d_b, nb, d_out, stream));
//
//   const std::int64_t offsets[] = {0, 1000, 1000, 5000};   // 3 runs, the middle one empty
//   scanlab::merge_runs_pairs(d_temp, temp_bytes, d_keys, d_values, offsets, d_keys_out, d_values_out, stream);
//
// Contract, for every function below:
//   * Order: ascending by scanlab::radix_ordered_bits(key) (radix_sort.cuh), so keys order
//     exactly as scanlab's radix sort orders them: integers by value, floats with -0.0 equal
//     to +0.0 and every NaN equal to every other NaN and after every number. The inputs must
//     already be sorted in that order (std::sort with `<` on floats without NaN is). Keys
//     are compared by their ordered bits and moved as their bit patterns, never rewritten.
//   * Stable: among equal keys, a's come before b's (merge_runs: run r's before run r+1's),
//     each side in its own order; values move with their keys.
//   * Keys: uint8/16/32/64, int8/16/32/64, float, double. Values: any trivially copyable
//     type of 4 or 8 bytes (moved as raw bits).
//   * Two-phase temp storage: with d_temp == nullptr only temp_bytes is set (at least 1;
//     it depends on the sizes, the key and value sizes and, for merge_runs, the offsets:
//     size and run with the same arguments); nothing is launched. Otherwise d_temp holds
//     temp_bytes bytes (any alignment, uninitialised), left in an unspecified state. The
//     call only enqueues work on `stream` (kernels, device-to-device copies): no
//     synchronisation, no device allocation; capturable in a CUDA graph.
//   * Sizes are 64-bit (past 2^31 is fine); 0 does nothing. Inputs are only read; the
//     outputs must not overlap the inputs (checked: cudaErrorInvalidValue).
//   * Errors: cudaErrorInvalidValue for a negative size, a null pointer where items are to
//     be read or written (checked when d_temp is given), overlapping input and output, too
//     little temp storage, or run offsets that are not k + 1 >= 1 nondecreasing numbers
//     starting at 0; otherwise the first failing CUDA status.
//   * Deterministic: the output is a function of the input.
//
// The algorithm (merge path: Odeh, Green, Mwassi, Shmueli and Birk, "Merge Path - Parallel
// Merging Made Simple", 2012; Green, McColl and Bader, "GPU Merge Path", 2012; the tiling of
// ModernGPU's merge). Write the merged output as a path through the grid of a's (down) and
// b's (across): every output item is one step, down for an a, across for a b. Output
// position d lies on the cross diagonal i + j = d, and where the path crosses it is one
// number, the count i of a's among the first d outputs, found by a binary search along the
// diagonal: i is the first position where a[i] must come after b[d - 1 - i] (a[i] > b[d - 1
// - i] in ordered bits; ties go to a, which makes the merge stable). Each diagonal's
// search is independent of every other, so
//   1. merge_partition_kernel: one thread per tile boundary (every tile_items-th output
//      position) searches the global arrays and writes the split to temp storage (a
//      log2(n)-step binary search per tile, all in parallel: a few microseconds);
//   2. merge_tiles_kernel: block t reads its splits s[t], s[t+1]: its tile is a[s[t],
//      s[t+1]) and b[t*tile - s[t], (t+1)*tile - s[t+1]), at most tile_items keys. It loads
//      them, coalesced, into shared memory (a's part, then b's), searches again there, once
//      per thread, for its own diagonal (thread x starts at output x * items_per_thread of
//      the tile), and merges its items_per_thread outputs serially, comparing ordered bits.
//      The merged keys go back to shared memory in thread order, then out to global memory,
//      coalesced. Pairs remember where each output came from in the tile and gather their
//      values from a second shared array the same way.
// Every input item is read once and every output written once (plus the splits, 8 bytes per
// tile): the merge is bound by memory bandwidth, like a copy.
//
// merge_runs: pairwise merges in a balanced tree. Empty runs are dropped first; with r
// nonempty runs, pass p merges runs (2i, 2i+1) of the previous pass (an odd last run is
// copied), ceil(log2 r) passes in all, ping-ponging between d_out and a buffer of n keys (and
// values) in temp storage so that the last pass writes d_out; pass 0 reads d_in. One nonempty
// run is a copy. The merges of a pass are launched in batches of up to max_jobs (each
// batch: one partition and one merge launch).
#pragma once

#include <scanlab/algorithms/radix_sort_common.cuh>
#include <scanlab/arch.cuh>
#include <scanlab/detail/launch.cuh>
#include <scanlab/detail/util.cuh>
#include <scanlab/error.hpp>

#include <cuda_runtime.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace scanlab::merge_detail {

using radix_sort_detail::has_values_v;
using radix_sort_detail::key_bits_t;
using radix_sort_detail::key_transform;
using radix_sort_detail::keys_only;

// The tile shape: 128 threads, each merging items_per_thread outputs. Odd items per thread
// keep the thread-order writes to shared memory (stride items_per_thread) free of bank
// conflicts. Fewer items for wider items keep a tile's shared memory (keys and values) at
// 7.5-14 KB, so that many blocks share an SM and keep loads in flight. One shape for every
// architecture family (each holds at least one block: checked below).
template <int KeyBytes, int ValueBytes>
struct merge_policy {
  static constexpr int block_threads = 128;
  static constexpr int item_bytes = KeyBytes + ValueBytes;
  static constexpr int items_per_thread = item_bytes <= 4 ? 15 : item_bytes <= 8 ? 11 : item_bytes <= 12 ? 9 : 7;
  static constexpr int tile_items = block_threads * items_per_thread;
  static constexpr std::size_t smem_bytes = static_cast<std::size_t>(tile_items) * item_bytes;
};

// The blocks per SM the merge kernel's __launch_bounds__ promises on `family`: as many as
// its shared memory and threads hold, at most 8 (which caps a thread at 64 registers; left
// alone, nvcc gives the kernel 83-122 on sm_90, and only 4-6 blocks of 128 threads fit an
// SM; with 64, sm_90 spills 4 bytes in the 2- and 4-byte keys-only kernels, nothing
// elsewhere). Chosen for occupancy in a memory-bound kernel; not measured against the
// uncapped build.
template <class Policy>
constexpr int min_blocks_on(int family) {
  int blocks = 8;
  while (blocks > 1 && !arch::fits(family, Policy::block_threads, blocks, Policy::smem_bytes)) --blocks;
  return blocks;
}

template <class Policy>
constexpr bool fits_every_family() {
  for (const int family : arch::families) {
    if (!arch::fits(family, Policy::block_threads, min_blocks_on<Policy>(family), Policy::smem_bytes)) return false;
  }
  return true;
}
static_assert(fits_every_family<merge_policy<8, 8>>() && fits_every_family<merge_policy<8, 4>>() &&
              fits_every_family<merge_policy<4, 8>>() && fits_every_family<merge_policy<4, 4>>() &&
              fits_every_family<merge_policy<8, 0>>() && fits_every_family<merge_policy<4, 0>>() &&
              fits_every_family<merge_policy<1, 0>>());

template <class Key, class Value>
using policy_for =
    merge_policy<static_cast<int>(sizeof(Key)), has_values_v<Value> ? static_cast<int>(sizeof(Value)) : 0>;

inline constexpr int partition_threads = 256;

// Merges per launch: their descriptors travel in the kernel parameters (6 * 8 bytes each).
inline constexpr int max_jobs = 32;

// One merge of a launch, as offsets into the launch's base pointers (merge_buffers):
// a[a_begin, a_begin + na) and b[b_begin, b_begin + nb) into out[out_begin, ...).
struct merge_job {
  std::int64_t a_begin = 0;
  std::int64_t na = 0;
  std::int64_t b_begin = 0;
  std::int64_t nb = 0;
  std::int64_t out_begin = 0;
};

// The merges of one launch. Job j owns the tiles [first_tile[j], first_tile[j + 1]) of the
// merge grid and the tile boundaries (splits) [first_tile[j] + j, first_tile[j + 1] + j + 1)
// of the partition grid: a job of t tiles has t + 1 boundaries, its first at output 0 and
// its last at its end.
struct merge_jobs {
  int count = 0;
  std::int64_t a_begin[max_jobs] = {};
  std::int64_t na[max_jobs] = {};
  std::int64_t b_begin[max_jobs] = {};
  std::int64_t nb[max_jobs] = {};
  std::int64_t out_begin[max_jobs] = {};
  std::int64_t first_tile[max_jobs + 1] = {};

  // The job of merge tile `tile` (Splits = false) or of partition entry `tile` (Splits =
  // true): the last job whose first one is at or before it. Jobs are never empty.
  template <bool Splits>
  __device__ int job_of(std::int64_t tile) const {
    int lo = 0;
    int hi = count - 1;
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (first_tile[mid] + (Splits ? mid : 0) <= tile) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
};

// The base pointers of a launch (keys as their raw bits; values absent for keys_only).
template <class Bits, class ValueBits>
struct merge_buffers {
  const Bits* a_keys = nullptr;
  const Bits* b_keys = nullptr;
  Bits* out_keys = nullptr;
  const ValueBits* a_values = nullptr;
  const ValueBits* b_values = nullptr;
  ValueBits* out_values = nullptr;
};

// The number of a's among the first `diag` outputs of the stable merge of a[0, na) and
// b[0, nb): the first i (within the diagonal's bounds) where a[i] comes after
// b[diag - 1 - i]. Global arrays (Index = int64) or shared ones (Index = int).
template <class Index, class Bits, bool IsFloat>
__device__ __forceinline__ Index merge_path(const Bits* a, Index na, const Bits* b, Index nb, Index diag,
                                            key_transform<Bits, IsFloat> order) {
  Index lo = diag > nb ? diag - nb : 0;
  Index hi = diag < na ? diag : na;
  while (lo < hi) {
    const Index mid = lo + (hi - lo) / 2;
    if (order.ordered(a[mid]) <= order.ordered(b[diag - 1 - mid])) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// Kernel 1: the split of every tile boundary of the launch's jobs.
template <int TileItems, class Bits, bool IsFloat>
__global__ void __launch_bounds__(partition_threads)
    merge_partition_kernel(const Bits* a_keys, const Bits* b_keys, const __grid_constant__ merge_jobs jobs,
                           key_transform<Bits, IsFloat> order, std::int64_t* splits, std::int64_t entries) {
  const std::int64_t entry = static_cast<std::int64_t>(blockIdx.x) * partition_threads + threadIdx.x;
  if (entry >= entries) return;
  const int j = jobs.job_of<true>(entry);
  const std::int64_t n = jobs.na[j] + jobs.nb[j];
  const std::int64_t boundary = (entry - jobs.first_tile[j] - j) * TileItems;
  splits[entry] = merge_path<std::int64_t>(a_keys + jobs.a_begin[j], jobs.na[j], b_keys + jobs.b_begin[j],
                                           jobs.nb[j], boundary < n ? boundary : n, order);
}

// Copies the tile's count items, a[0, count_a) then b[0, count - count_a), into shared
// memory; thread x takes items x, x + Threads, ... (coalesced), all loads issued first.
template <int Threads, int Items, class T>
__device__ __forceinline__ void load_tile(const T* a, const T* b, int count_a, int count, T* shared) {
  T items[Items];
  const bool full = count == Threads * Items;
#pragma unroll
  for (int k = 0; k < Items; ++k) {
    const int i = static_cast<int>(threadIdx.x) + k * Threads;
    if (full || i < count) items[k] = *(i < count_a ? a + i : b + (i - count_a));
  }
#pragma unroll
  for (int k = 0; k < Items; ++k) {
    const int i = static_cast<int>(threadIdx.x) + k * Threads;
    if (full || i < count) shared[i] = items[k];
  }
}

// Thread x's merged items (outputs first, first + 1, ... of the tile, those below count)
// into shared memory, then the tile's count items out to global memory, coalesced.
template <int Threads, int Items, class T>
__device__ __forceinline__ void store_tile(const T (&items)[Items], int first, int count, T* shared, T* out) {
  __syncthreads();  // every thread is done reading the staged inputs
#pragma unroll
  for (int k = 0; k < Items; ++k) {
    if (first + k < count) shared[first + k] = items[k];
  }
  __syncthreads();
  const bool full = count == Threads * Items;
#pragma unroll
  for (int k = 0; k < Items; ++k) {
    const int i = static_cast<int>(threadIdx.x) + k * Threads;
    if (full || i < count) out[i] = shared[i];
  }
}

// Kernel 2: block t merges tile t of the launch's jobs.
template <class Policy, class Bits, bool IsFloat, class ValueBits>
__global__ void __launch_bounds__(Policy::block_threads, min_blocks_on<Policy>(arch::compiled_family))
    merge_tiles_kernel(merge_buffers<Bits, ValueBits> buffers, const __grid_constant__ merge_jobs jobs,
                       key_transform<Bits, IsFloat> order, const std::int64_t* splits) {
  constexpr int threads = Policy::block_threads;
  constexpr int items = Policy::items_per_thread;
  constexpr int tile_items = Policy::tile_items;
  constexpr bool with_values = has_values_v<ValueBits>;
  using staged_value = std::conditional_t<with_values, ValueBits, char>;
  __shared__ Bits shared_keys[tile_items];
  __shared__ staged_value shared_values[with_values ? tile_items : 1];

  // The tile: outputs [d0, d1) of job j, from a[a0, a1) and b[d0 - a0, d1 - a1).
  const std::int64_t tile = blockIdx.x;
  const int j = jobs.job_of<false>(tile);
  const std::int64_t n = jobs.na[j] + jobs.nb[j];
  const std::int64_t d0 = (tile - jobs.first_tile[j]) * tile_items;
  const std::int64_t d1 = d0 + tile_items < n ? d0 + tile_items : n;
  const std::int64_t a0 = splits[tile + j];
  const std::int64_t a1 = splits[tile + j + 1];
  const int count_a = static_cast<int>(a1 - a0);
  const int count = static_cast<int>(d1 - d0);
  const std::int64_t b0 = d0 - a0;

  load_tile<threads, items>(buffers.a_keys + jobs.a_begin[j] + a0, buffers.b_keys + jobs.b_begin[j] + b0, count_a,
                            count, shared_keys);
  if constexpr (with_values) {
    load_tile<threads, items>(buffers.a_values + jobs.a_begin[j] + a0, buffers.b_values + jobs.b_begin[j] + b0,
                              count_a, count, shared_values);
  }
  __syncthreads();

  // This thread's outputs start at `first`: the a's of the tile are shared_keys[0, count_a),
  // its b's shared_keys[count_a, count).
  const int first = static_cast<int>(threadIdx.x) * items < count ? static_cast<int>(threadIdx.x) * items : count;
  int ai = merge_path<int>(shared_keys, count_a, shared_keys + count_a, count - count_a, first, order);
  int bi = count_a + first - ai;

  // Serial merge: the heads of both sides (raw and ordered bits) in registers; each step
  // takes one and reads the next item of that side only.
  Bits raw_a = ai < count_a ? shared_keys[ai] : Bits{0};
  Bits raw_b = bi < count ? shared_keys[bi] : Bits{0};
  Bits key_a = order.ordered(raw_a);
  Bits key_b = order.ordered(raw_b);
  Bits keys[items];
  int sources[items];
#pragma unroll
  for (int k = 0; k < items; ++k) {
    const bool take_a = bi >= count || (ai < count_a && key_a <= key_b);
    keys[k] = take_a ? raw_a : raw_b;
    sources[k] = take_a ? ai : bi;
    ai += take_a ? 1 : 0;
    bi += take_a ? 0 : 1;
    const int next = take_a ? ai : bi;
    const Bits raw = next < (take_a ? count_a : count) ? shared_keys[next] : Bits{0};
    const Bits key = order.ordered(raw);
    raw_a = take_a ? raw : raw_a;
    key_a = take_a ? key : key_a;
    raw_b = take_a ? raw_b : raw;
    key_b = take_a ? key_b : key;
  }

  if constexpr (with_values) {
    ValueBits values[items];
#pragma unroll
    for (int k = 0; k < items; ++k) {
      if (first + k < count) values[k] = shared_values[sources[k]];
    }
    store_tile<threads, items>(values, first, count, shared_values, buffers.out_values + jobs.out_begin[j] + d0);
  }
  store_tile<threads, items>(keys, first, count, shared_keys, buffers.out_keys + jobs.out_begin[j] + d0);
}

// A device range a call reads or writes (null is fine while it holds no bytes).
struct region {
  std::uintptr_t begin;
  std::size_t bytes;
};
template <class T>
region region_of(const T* p, std::int64_t count) {
  return {reinterpret_cast<std::uintptr_t>(p), static_cast<std::size_t>(count) * sizeof(T)};
}

// Whether a call's ranges are usable: none null that holds items, and no output sharing a
// byte with an input or with another output.
inline bool usable(std::initializer_list<region> inputs, std::initializer_list<region> outputs) {
  const auto overlap = [](region x, region y) {
    return x.bytes > 0 && y.bytes > 0 && x.begin < y.begin + y.bytes && y.begin < x.begin + x.bytes;
  };
  for (const region* o = outputs.begin(); o != outputs.end(); ++o) {
    if (o->bytes > 0 && o->begin == 0) return false;
    for (const region& i : inputs) {
      if (overlap(*o, i)) return false;
    }
    for (const region* other = outputs.begin(); other != o; ++other) {
      if (overlap(*o, *other)) return false;
    }
  }
  for (const region& i : inputs) {
    if (i.bytes > 0 && i.begin == 0) return false;
  }
  return true;
}

// Entries of the splits buffer that any launch over n items in all needs: a job of m items
// has ceil(m / tile) + 1 <= m / tile + 2 boundaries, and a launch has at most max_jobs jobs.
template <class Policy>
constexpr std::int64_t split_capacity(std::int64_t n) {
  return n / Policy::tile_items + 2 * max_jobs + 1;
}

// Collects merges and launches them, max_jobs at a time (partition, then merge).
template <class Policy, class Bits, bool IsFloat, class ValueBits>
class merge_launcher {
 public:
  merge_launcher(const merge_buffers<Bits, ValueBits>& buffers, key_transform<Bits, IsFloat> order,
                 std::int64_t* splits, cudaStream_t stream)
      : buffers_(buffers), order_(order), splits_(splits), stream_(stream) {}

  // Adds a merge (an empty one does nothing); launches when the batch is full.
  [[nodiscard]] cudaError_t add(const merge_job& job) {
    const std::int64_t n = job.na + job.nb;
    if (n == 0) return cudaSuccess;
    const int j = jobs_.count++;
    jobs_.a_begin[j] = job.a_begin;
    jobs_.na[j] = job.na;
    jobs_.b_begin[j] = job.b_begin;
    jobs_.nb[j] = job.nb;
    jobs_.out_begin[j] = job.out_begin;
    jobs_.first_tile[j + 1] = jobs_.first_tile[j] + detail::ceil_div<std::int64_t>(n, Policy::tile_items);
    return jobs_.count == max_jobs ? flush() : cudaSuccess;
  }

  // Launches the collected merges.
  [[nodiscard]] cudaError_t flush() {
    if (jobs_.count == 0) return cudaSuccess;
    const std::int64_t tiles = jobs_.first_tile[jobs_.count];
    const std::int64_t entries = tiles + jobs_.count;
    if (tiles > INT_MAX) return cudaErrorInvalidValue;  // past 2^31 tiles (about 10^12 items)
    SCANLAB_TRY(detail::launch(merge_partition_kernel<Policy::tile_items, Bits, IsFloat>,
                               dim3(static_cast<unsigned>(detail::ceil_div<std::int64_t>(entries, partition_threads))),
                               dim3(partition_threads), 0, stream_, buffers_.a_keys, buffers_.b_keys, jobs_, order_,
                               splits_, entries));
    SCANLAB_TRY(detail::launch(merge_tiles_kernel<Policy, Bits, IsFloat, ValueBits>,
                               dim3(static_cast<unsigned>(tiles)), dim3(Policy::block_threads), 0, stream_, buffers_,
                               jobs_, order_, static_cast<const std::int64_t*>(splits_)));
    jobs_ = merge_jobs{};
    return cudaSuccess;
  }

 private:
  merge_buffers<Bits, ValueBits> buffers_;
  key_transform<Bits, IsFloat> order_;
  std::int64_t* splits_;
  cudaStream_t stream_;
  merge_jobs jobs_{};
};

// Raw bits of the caller's types: the kernels are shared by keys of one width (and
// floatness) and by values of one size.
template <class Key>
using bits_of = key_bits_t<Key>;
template <class Value>
using value_bits_of = typename std::conditional_t<has_values_v<Value>,
                                                  radix_sort_detail::unsigned_of_size<static_cast<int>(sizeof(Value))>,
                                                  std::type_identity<keys_only>>::type;

template <class Key, class Value>
constexpr void check_types() {
  static_assert(radix_sort_detail::is_radix_key_v<Key>, "keys: 8- to 64-bit integers, float or double");
  if constexpr (has_values_v<Value>) {
    static_assert(std::is_trivially_copyable_v<Value> && (sizeof(Value) == 4 || sizeof(Value) == 8),
                  "values: trivially copyable, 4 or 8 bytes");
  }
}

// out[begin, begin + count) = in[begin, begin + count) (nothing for keys_only).
template <class T>
[[nodiscard]] cudaError_t copy_range(T* out, const T* in, std::int64_t begin, std::int64_t count, cudaStream_t stream) {
  if constexpr (!has_values_v<T>) return cudaSuccess;
  else {
    return cudaMemcpyAsync(out + begin, in + begin, static_cast<std::size_t>(count) * sizeof(T),
                           cudaMemcpyDeviceToDevice, stream);
  }
}

// merge_keys and merge_pairs (Value = keys_only: no values). Policy: the tile shape (a
// merge_policy-like struct; benchmarks try others).
template <class Key, class Value, class Policy = policy_for<Key, Value>>
[[nodiscard]] cudaError_t merge_two(void* d_temp, std::size_t& temp_bytes, const Key* a_keys, const Value* a_values,
                                    std::int64_t na, const Key* b_keys, const Value* b_values, std::int64_t nb,
                                    Key* out_keys, Value* out_values, cudaStream_t stream) {
  check_types<Key, Value>();
  using policy = Policy;
  using Bits = bits_of<Key>;
  using ValueBits = value_bits_of<Value>;
  constexpr bool with_values = has_values_v<Value>;
  if (na < 0 || nb < 0 || na > INT64_MAX - nb) return cudaErrorInvalidValue;
  const std::int64_t n = na + nb;
  radix_sort_detail::temp_carver carver(d_temp);
  std::int64_t* splits = carver.take<std::int64_t>(static_cast<std::size_t>(split_capacity<policy>(n)));
  if (d_temp == nullptr) {
    temp_bytes = carver.bytes();
    return cudaSuccess;
  }
  if (temp_bytes < carver.bytes()) return cudaErrorInvalidValue;
  const std::int64_t per_value = with_values ? 1 : 0;  // keys_only: no value ranges
  if (!usable({region_of(a_keys, na), region_of(b_keys, nb), region_of(a_values, na * per_value),
               region_of(b_values, nb * per_value)},
              {region_of(out_keys, n), region_of(out_values, n * per_value)})) {
    return cudaErrorInvalidValue;
  }
  merge_buffers<Bits, ValueBits> buffers;
  buffers.a_keys = reinterpret_cast<const Bits*>(a_keys);
  buffers.b_keys = reinterpret_cast<const Bits*>(b_keys);
  buffers.out_keys = reinterpret_cast<Bits*>(out_keys);
  buffers.a_values = reinterpret_cast<const ValueBits*>(a_values);
  buffers.b_values = reinterpret_cast<const ValueBits*>(b_values);
  buffers.out_values = reinterpret_cast<ValueBits*>(out_values);
  merge_launcher<policy, Bits, std::is_floating_point_v<Key>, ValueBits> launcher(
      buffers, radix_sort_detail::make_key_transform<Key>(false), splits, stream);
  SCANLAB_TRY(launcher.add(merge_job{0, na, 0, nb, 0}));
  return launcher.flush();
}

// merge_runs_keys and merge_runs_pairs (Value = keys_only: no values).
template <class Key, class Value>
[[nodiscard]] cudaError_t merge_runs(void* d_temp, std::size_t& temp_bytes, const Key* keys_in, const Value* values_in,
                                     std::span<const std::int64_t> run_offsets, Key* keys_out, Value* values_out,
                                     cudaStream_t stream) {
  check_types<Key, Value>();
  using policy = policy_for<Key, Value>;
  using Bits = bits_of<Key>;
  using ValueBits = value_bits_of<Value>;
  constexpr bool with_values = has_values_v<Value>;
  if (run_offsets.empty() || run_offsets[0] != 0) return cudaErrorInvalidValue;
  // The boundaries of the nonempty runs: bounds[r] is where run r starts, bounds.back() == n.
  std::vector<std::int64_t> bounds{0};
  for (std::size_t r = 1; r < run_offsets.size(); ++r) {
    if (run_offsets[r] < run_offsets[r - 1]) return cudaErrorInvalidValue;
    if (run_offsets[r] > run_offsets[r - 1]) bounds.push_back(run_offsets[r]);
  }
  const std::int64_t n = bounds.back();
  int passes = 0;
  for (std::size_t runs = bounds.size() - 1; runs > 1; runs = (runs + 1) / 2) ++passes;

  radix_sort_detail::temp_carver carver(d_temp);
  const std::size_t buffered = passes >= 2 ? static_cast<std::size_t>(n) : 0;
  auto* alternate_keys = carver.take<Bits>(buffered);
  auto* alternate_values = carver.take<ValueBits>(with_values ? buffered : 0);
  std::int64_t* splits = carver.take<std::int64_t>(static_cast<std::size_t>(split_capacity<policy>(n)));
  if (d_temp == nullptr) {
    temp_bytes = carver.bytes();
    return cudaSuccess;
  }
  if (temp_bytes < carver.bytes()) return cudaErrorInvalidValue;
  const std::int64_t values = with_values ? n : 0;  // keys_only: no value ranges
  if (!usable({region_of(keys_in, n), region_of(values_in, values)},
              {region_of(keys_out, n), region_of(values_out, values)})) {
    return cudaErrorInvalidValue;
  }
  if (n == 0) return cudaSuccess;
  if (passes == 0) {  // one nonempty run
    SCANLAB_TRY(copy_range(keys_out, keys_in, 0, n, stream));
    return copy_range(values_out, values_in, 0, n, stream);
  }

  // Pass p reads the previous pass's output (pass 0: the input) and writes d_out when
  // passes - 1 - p is even, else the alternate buffer: the last pass writes d_out.
  merge_buffers<Bits, ValueBits> previous;
  previous.out_keys = const_cast<Bits*>(reinterpret_cast<const Bits*>(keys_in));  // only read
  previous.out_values = const_cast<ValueBits*>(reinterpret_cast<const ValueBits*>(values_in));
  for (int pass = 0; pass < passes; ++pass) {
    const bool to_output = (passes - 1 - pass) % 2 == 0;
    merge_buffers<Bits, ValueBits> buffers;
    buffers.a_keys = buffers.b_keys = previous.out_keys;
    buffers.a_values = buffers.b_values = previous.out_values;
    buffers.out_keys = to_output ? reinterpret_cast<Bits*>(keys_out) : alternate_keys;
    buffers.out_values = to_output ? reinterpret_cast<ValueBits*>(values_out) : alternate_values;
    merge_launcher<policy, Bits, std::is_floating_point_v<Key>, ValueBits> launcher(
        buffers, radix_sort_detail::make_key_transform<Key>(false), splits, stream);
    std::vector<std::int64_t> next{0};
    const std::size_t runs = bounds.size() - 1;
    for (std::size_t r = 0; r < runs; r += 2) {
      const std::int64_t begin = bounds[r];
      if (r + 1 == runs) {  // the odd run out moves on unmerged
        const std::int64_t count = bounds[r + 1] - begin;
        SCANLAB_TRY(copy_range(buffers.out_keys, buffers.a_keys, begin, count, stream));
        SCANLAB_TRY(copy_range(buffers.out_values, buffers.a_values, begin, count, stream));
        next.push_back(bounds[r + 1]);
        continue;
      }
      const std::int64_t middle = bounds[r + 1];
      const std::int64_t end = bounds[r + 2];
      SCANLAB_TRY(launcher.add(merge_job{begin, middle - begin, middle, end - middle, begin}));
      next.push_back(end);
    }
    SCANLAB_TRY(launcher.flush());
    bounds = std::move(next);
    previous = buffers;
  }
  return cudaSuccess;
}

}  // namespace scanlab::merge_detail

namespace scanlab {

// d_out[0, na + nb) = the stable merge of sorted d_a[0, na) and sorted d_b[0, nb): among
// equal keys, a's come first, each side in its own order.
template <class Key>
[[nodiscard]] cudaError_t merge_keys(void* d_temp, std::size_t& temp_bytes, const Key* d_a, std::int64_t na,
                                     const Key* d_b, std::int64_t nb, Key* d_out, cudaStream_t stream = nullptr) {
  using merge_detail::keys_only;
  return merge_detail::merge_two<Key, keys_only>(d_temp, temp_bytes, d_a, nullptr, na, d_b, nullptr, nb, d_out,
                                                 nullptr, stream);
}

// The keys merged as merge_keys does, each value moving with its key: d_out_values[i] is
// the value that came with d_out_keys[i].
template <class Key, class Value>
[[nodiscard]] cudaError_t merge_pairs(void* d_temp, std::size_t& temp_bytes, const Key* d_a_keys,
                                      const Value* d_a_values, std::int64_t na, const Key* d_b_keys,
                                      const Value* d_b_values, std::int64_t nb, Key* d_out_keys, Value* d_out_values,
                                      cudaStream_t stream = nullptr) {
  return merge_detail::merge_two<Key, Value>(d_temp, temp_bytes, d_a_keys, d_a_values, na, d_b_keys, d_b_values, nb,
                                             d_out_keys, d_out_values, stream);
}

// k sorted runs stored back to back in d_in: run r is [run_offsets[r], run_offsets[r + 1])
// (k + 1 host offsets, nondecreasing, run_offsets[0] == 0; k = 0 is an empty input). d_out
// gets all of them merged, stably: among equal keys, run r's before run r + 1's. Pairwise
// merges in a balanced tree, ceil(log2 k) passes over the nonempty runs; one nonempty run
// is a copy. d_in and d_out must not overlap; d_in is left unchanged. temp_bytes depends on
// the offsets (about n keys more once there are three nonempty runs or more).
template <class Key>
[[nodiscard]] cudaError_t merge_runs_keys(void* d_temp, std::size_t& temp_bytes, const Key* d_in,
                                          std::span<const std::int64_t> run_offsets, Key* d_out,
                                          cudaStream_t stream = nullptr) {
  using merge_detail::keys_only;
  return merge_detail::merge_runs<Key, keys_only>(d_temp, temp_bytes, d_in, nullptr, run_offsets, d_out, nullptr,
                                                  stream);
}

// merge_runs_keys with values: each value moves with its key.
template <class Key, class Value>
[[nodiscard]] cudaError_t merge_runs_pairs(void* d_temp, std::size_t& temp_bytes, const Key* d_keys_in,
                                           const Value* d_values_in, std::span<const std::int64_t> run_offsets,
                                           Key* d_keys_out, Value* d_values_out, cudaStream_t stream = nullptr) {
  return merge_detail::merge_runs<Key, Value>(d_temp, temp_bytes, d_keys_in, d_values_in, run_offsets, d_keys_out,
                                              d_values_out, stream);
}

}  // namespace scanlab
