// The scan ladder: every step from the naive scan to the single-pass production scan,
// each kept as a named kernel with a comment saying what it fixes over the step before.
// Read in order to learn; call scanlab::inclusive_scan / exclusive_scan for speed.
//
// All variants scan inputs of any (64-bit) length across many blocks, inclusive or
// exclusive, through one launcher:
//
//   std::size_t temp_bytes = 0;
//   scanlab::ladder::scan(variant, kind, nullptr, temp_bytes, d_in, d_out, n, init, op, stream, 256);
//   ... allocate ...
//   scanlab::ladder::scan(variant, kind, d_temp, temp_bytes, d_in, d_out, n, init, op, stream, 256);
//
// Block-local kernels (Kogge-Stone, Brent-Kung, warp shuffle, coarsened) become
// multi-block with the hierarchical scheme: scan each section and write its total,
// scan the totals (recursively, with the same kernel), add each section's prefix back.
//
// Simplifications of teaching code, all documented where they occur: the ladder pads
// partial sections with the operator's identity (scanlab::identity<Op, T>, which must
// exist: specialise it for your own operators), takes raw pointers, and its kernels use
// dynamic shared memory sized from the block size. Operators are applied as
// op(earlier, later) everywhere, so non-commutative operators work in every variant.
// Every launch is checked and every status returned; nothing throws.
#pragma once

#include <scanlab/detail/launch.cuh>
#include <scanlab/detail/shuffle.cuh>
#include <scanlab/detail/util.cuh>
#include <scanlab/device/tile_state.cuh>
#include <scanlab/error.hpp>
#include <scanlab/functional.cuh>
#include <scanlab/scan.cuh>
#include <scanlab/warp/warp_scan.cuh>

#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace scanlab::ladder {

enum class scan_variant : int {
  naive,
  kogge_stone,
  kogge_stone_double_buffer,
  brent_kung,
  warp_shuffle,
  scan_then_propagate,
  reduce_then_scan,
  chained,
  decoupled_lookback,
};

// Ladder order, for --list and for loops over variants.
inline constexpr std::array<scan_variant, 9> scan_variants = {
    scan_variant::naive,         scan_variant::kogge_stone,         scan_variant::kogge_stone_double_buffer,
    scan_variant::brent_kung,    scan_variant::warp_shuffle,        scan_variant::scan_then_propagate,
    scan_variant::reduce_then_scan, scan_variant::chained,          scan_variant::decoupled_lookback,
};
inline constexpr std::array<std::string_view, 9> scan_variant_names = {
    "naive",        "kogge-stone",      "kogge-stone-double-buffer", "brent-kung", "warp-shuffle",
    "scan-then-propagate", "reduce-then-scan", "chained",           "decoupled-lookback",
};

constexpr std::string_view variant_name(scan_variant variant) {
  return scan_variant_names[static_cast<std::size_t>(variant)];
}
// False when `name` is not a variant.
constexpr bool parse_variant(std::string_view name, scan_variant& variant) {
  for (std::size_t i = 0; i < scan_variants.size(); ++i) {
    if (scan_variant_names[i] == name) {
      variant = scan_variants[i];
      return true;
    }
  }
  return false;
}

enum class scan_kind { inclusive, exclusive };

// The naive scan does O(n^2) work: it refuses inputs larger than this (cudaErrorInvalidValue).
inline constexpr std::int64_t naive_scan_max_items = std::int64_t{1} << 16;
// Items per thread of the coarsened variants (scan-then-propagate, reduce-then-scan, chained).
inline constexpr int coarsened_items_per_thread = 8;

namespace ladder_detail {

// The block's dynamic shared memory, as an array of T (16-byte aligned).
template <class T>
__device__ __forceinline__ T* shared_array() {
  extern __shared__ uint4 ladder_shared_memory[];
  return reinterpret_cast<T*>(ladder_shared_memory);
}

template <class T, class Op>
__host__ __device__ __forceinline__ T identity_of() {
  return scanlab::identity<Op, T>::value();
}

// Block-wide scan of one value per thread for any blockDim.x (a multiple of 32): warp
// shuffles inside warps, then the warp totals (in shared memory `warp_totals`, one slot
// per warp) scanned by warp 0. Returns the inclusive result; sets `exclusive` (identity
// for thread 0) and `total`. Three barriers.
template <class T, class Op>
__device__ T block_scan_any_size(T x, Op op, T* warp_totals, T& exclusive, T& total) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int warp = static_cast<int>(threadIdx.x / 32);
  const int warps = static_cast<int>(blockDim.x / 32);
  T inclusive = warp_inclusive_scan(x, op);
  T previous = scanlab::detail::shfl_up(inclusive, 1);
  if (lane == 0) previous = identity_of<T, Op>();
  if (lane == 31) warp_totals[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    const T mine = warp_totals[lane < warps ? lane : warps - 1];
    const T scanned = warp_inclusive_scan(mine, op);
    __syncwarp();
    if (lane < warps) warp_totals[lane] = scanned;
  }
  __syncthreads();
  if (warp > 0) {
    const T earlier = warp_totals[warp - 1];
    inclusive = op(earlier, inclusive);
    previous = lane == 0 ? earlier : op(earlier, previous);
  }
  exclusive = previous;
  total = warp_totals[warps - 1];
  __syncthreads();  // warp_totals may be reused by the caller
  return inclusive;
}

// Common epilogue of the shared-memory kernels: `section` holds the inclusive scan of
// this block's `size` items. Exclusive results are shifted by one on the way out (the
// block's first item gets the identity, or `seed` in block 0); in block 0 of an
// exclusive scan every result is seeded. Writes the block's total (seeded likewise)
// to block_sums when given.
template <class T, class Op>
__device__ void write_section(const T* section, int size, std::int64_t base, T* out, std::int64_t n,
                              bool exclusive, T seed, T* block_sums, Op op) {
  const bool seeded = exclusive && blockIdx.x == 0;
  for (int p = static_cast<int>(threadIdx.x); p < size; p += static_cast<int>(blockDim.x)) {
    const std::int64_t i = base + p;
    if (i >= n) break;
    if (!exclusive) {
      out[i] = section[p];
    } else if (p == 0) {
      out[i] = seeded ? seed : identity_of<T, Op>();
    } else {
      out[i] = seeded ? op(seed, section[p - 1]) : section[p - 1];
    }
  }
  if (block_sums != nullptr && threadIdx.x == 0) {
    block_sums[blockIdx.x] = seeded ? op(seed, section[size - 1]) : section[size - 1];
  }
}

// Loads a tile of `size` items into shared memory with coalesced accesses (identity past the end).
template <class T, class Op>
__device__ void load_tile(const T* in, std::int64_t n, std::int64_t base, int size, T* tile) {
  for (int p = static_cast<int>(threadIdx.x); p < size; p += static_cast<int>(blockDim.x)) {
    const std::int64_t i = base + p;
    tile[p] = i < n ? in[i] : identity_of<T, Op>();
  }
  __syncthreads();
}

template <class T>
__device__ void store_tile(const T* tile, int size, std::int64_t base, T* out, std::int64_t n) {
  __syncthreads();
  for (int p = static_cast<int>(threadIdx.x); p < size; p += static_cast<int>(blockDim.x)) {
    const std::int64_t i = base + p;
    if (i < n) out[i] = tile[p];
  }
}

// Thread-coarsened block scan over a tile in shared memory (thread t owns items
// [t * Items, (t + 1) * Items)). Replaces the tile by its exclusive or inclusive scan,
// seeded with `prefix` (applied to every item); returns the tile's total (without prefix).
template <int Items, class T, class Op>
__device__ T scan_tile_coarsened(T* tile, T* warp_totals, bool exclusive, T prefix, Op op) {
  T local[Items];
#pragma unroll
  for (int k = 0; k < Items; ++k) local[k] = tile[threadIdx.x * Items + k];
#pragma unroll
  for (int k = 1; k < Items; ++k) local[k] = op(local[k - 1], local[k]);
  T thread_exclusive;
  T total;
  block_scan_any_size(local[Items - 1], op, warp_totals, thread_exclusive, total);
  const T running = op(prefix, thread_exclusive);
#pragma unroll
  for (int k = 0; k < Items; ++k) {
    tile[threadIdx.x * Items + k] =
        exclusive ? (k == 0 ? running : op(running, local[k - 1])) : op(running, local[k]);
  }
  return total;
}

}  // namespace ladder_detail

// ---------------------------------------------------------------------------------------
// 1. Naive: thread i combines x_0 .. x_i on its own. Correct and fully parallel, but
// O(n^2) work in total (the last thread alone does n - 1 steps): teaching only, and
// refused above naive_scan_max_items.
template <class T, class Op>
__global__ void naive_scan_kernel(const T* in, T* out, std::int64_t n, bool exclusive, T init, Op op) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  if (exclusive) {
    T acc = init;
    for (std::int64_t j = 0; j < i; ++j) acc = op(acc, in[j]);
    out[i] = acc;
  } else {
    T acc = in[0];
    for (std::int64_t j = 1; j <= i; ++j) acc = op(acc, in[j]);
    out[i] = acc;
  }
}

// 2. Kogge-Stone: shares partial results. After step k, XY[t] holds the combination of
// up to 2^k items ending at t; log2(block) steps of O(block) work each, in shared memory.
// One buffer: each step reads XY[t - stride] and XY[t] into a register, waits at a
// barrier until every thread has read (write-after-read hazard), then writes: two
// barriers per step. Exclusive by shifting the input right by one on load (item 0 gets
// the identity, or the seed in block 0), as in seed 002's exclusive kernel.
template <class T, class Op>
__global__ void kogge_stone_scan_kernel(const T* in, T* out, std::int64_t n, bool exclusive, T seed,
                                        T* block_sums, Op op) {
  T* xy = ladder_detail::shared_array<T>();
  const int t = static_cast<int>(threadIdx.x);
  const int size = static_cast<int>(blockDim.x);
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(size) + t;
  const T identity = ladder_detail::identity_of<T, Op>();
  // The shifted load leaves the block's last item out of the scan: keep it for the block total
  // (read now: in place, out[i] overwrites in[i] below).
  const T own = i < n ? in[i] : identity;
  if (!exclusive) {
    xy[t] = own;
  } else if (t == 0) {
    xy[t] = blockIdx.x == 0 ? seed : identity;
  } else {
    xy[t] = i - 1 < n ? in[i - 1] : identity;
  }
  for (int stride = 1; stride < size; stride *= 2) {
    __syncthreads();
    T sum;
    if (t >= stride) sum = op(xy[t - stride], xy[t]);
    __syncthreads();
    if (t >= stride) xy[t] = sum;
  }
  if (i < n) out[i] = xy[t];
  if (block_sums != nullptr && t == size - 1) block_sums[blockIdx.x] = exclusive ? op(xy[t], own) : xy[t];
}

// 3. Kogge-Stone, double-buffered: each step reads one buffer and writes the other, so
// no thread can overwrite a value another thread has yet to read: one barrier per step
// instead of two, for twice the shared memory. Exclusive by shifting, as above.
template <class T, class Op>
__global__ void kogge_stone_double_buffer_scan_kernel(const T* in, T* out, std::int64_t n, bool exclusive,
                                                      T seed, T* block_sums, Op op) {
  T* buffers = ladder_detail::shared_array<T>();
  const int t = static_cast<int>(threadIdx.x);
  const int size = static_cast<int>(blockDim.x);
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(size) + t;
  const T identity = ladder_detail::identity_of<T, Op>();
  const T own = i < n ? in[i] : identity;
  if (!exclusive) {
    buffers[t] = own;
  } else if (t == 0) {
    buffers[t] = blockIdx.x == 0 ? seed : identity;
  } else {
    buffers[t] = i - 1 < n ? in[i - 1] : identity;
  }
  __syncthreads();
  int in_buffer = 0;
  for (int stride = 1; stride < size; stride *= 2) {
    const int out_buffer = 1 - in_buffer;
    const T* from = buffers + in_buffer * size;
    buffers[out_buffer * size + t] = t >= stride ? op(from[t - stride], from[t]) : from[t];
    __syncthreads();
    in_buffer = out_buffer;
  }
  const T result = buffers[in_buffer * size + t];
  if (i < n) out[i] = result;
  if (block_sums != nullptr && t == size - 1) block_sums[blockIdx.x] = exclusive ? op(result, own) : result;
}

// 4. Brent-Kung: work-efficient. Kogge-Stone does O(block log block) work; here an
// up-sweep reduction tree (block - 1 operations) leaves partial sums at positions
// k * 2^s - 1, and a down-sweep reverse tree (about as many) pushes them to the
// positions that still need them: O(block) work, 2 log2 steps. Each thread handles two
// items. Thread-to-index mapping: contiguous threads take positions (t + 1) * 2 * stride - 1,
// so active threads stay packed in the lowest warps and whole warps drop out together
// (no divergence from a `t % (2 * stride)` test). Exclusive by shifting on the way out.
template <class T, class Op>
__global__ void brent_kung_scan_kernel(const T* in, T* out, std::int64_t n, bool exclusive, T seed,
                                       T* block_sums, Op op) {
  T* xy = ladder_detail::shared_array<T>();
  const int t = static_cast<int>(threadIdx.x);
  const int size = 2 * static_cast<int>(blockDim.x);
  const std::int64_t base = blockIdx.x * static_cast<std::int64_t>(size);
  ladder_detail::load_tile<T, Op>(in, n, base, size, xy);
  for (int stride = 1; stride < size; stride *= 2) {  // up-sweep
    const int index = (t + 1) * 2 * stride - 1;
    if (index < size) xy[index] = op(xy[index - stride], xy[index]);
    __syncthreads();
  }
  for (int stride = size / 4; stride > 0; stride /= 2) {  // down-sweep
    const int index = (t + 1) * 2 * stride - 1;
    if (index + stride < size) xy[index + stride] = op(xy[index], xy[index + stride]);
    __syncthreads();
  }
  ladder_detail::write_section(xy, size, base, out, n, exclusive, seed, block_sums, op);
}

// 5. Warp shuffle: the steps inside a warp need neither shared memory nor barriers:
// __shfl_up_sync moves values between lanes' registers (any type, word by word). Only
// the warp totals go through shared memory: three barriers per block instead of one or
// two per step.
template <class T, class Op>
__global__ void warp_shuffle_scan_kernel(const T* in, T* out, std::int64_t n, bool exclusive, T seed,
                                         T* block_sums, Op op) {
  T* section = ladder_detail::shared_array<T>();
  T* warp_totals = section + blockDim.x;
  const int t = static_cast<int>(threadIdx.x);
  const std::int64_t base = blockIdx.x * static_cast<std::int64_t>(blockDim.x);
  const T x = base + t < n ? in[base + t] : ladder_detail::identity_of<T, Op>();
  T unused_exclusive;
  T unused_total;
  section[t] = ladder_detail::block_scan_any_size(x, op, warp_totals, unused_exclusive, unused_total);
  __syncthreads();
  ladder_detail::write_section(section, static_cast<int>(blockDim.x), base, out, n, exclusive, seed, block_sums, op);
}

// 6. Scan-then-propagate, coarsened: one item per thread spends a whole block scan on
// every `block` items. Here each thread scans 8 items serially (work-efficient, in
// registers) and only the thread totals take part in the block scan; loads and stores go
// through shared memory so that global accesses stay coalesced. This is the local phase
// of the three-phase scheme (local scan writing block sums, scan of the block sums,
// add back), which moves 4n items (read, write, read, write).
template <class T, class Op>
__global__ void coarsened_scan_kernel(const T* in, T* out, std::int64_t n, bool exclusive, T seed,
                                      T* block_sums, Op op) {
  constexpr int items = coarsened_items_per_thread;
  T* tile = ladder_detail::shared_array<T>();
  T* warp_totals = tile + items * blockDim.x;
  const int size = items * static_cast<int>(blockDim.x);
  const std::int64_t base = blockIdx.x * static_cast<std::int64_t>(size);
  ladder_detail::load_tile<T, Op>(in, n, base, size, tile);
  const bool seeded = exclusive && blockIdx.x == 0;
  const T prefix = seeded ? seed : ladder_detail::identity_of<T, Op>();
  const T total = ladder_detail::scan_tile_coarsened<items>(tile, warp_totals, exclusive, prefix, op);
  ladder_detail::store_tile(tile, size, base, out, n);
  if (block_sums != nullptr && threadIdx.x == 0) block_sums[blockIdx.x] = seeded ? op(seed, total) : total;
}

// Phase 3 of the hierarchical scheme: section b > 0 gets the combined total of the
// sections before it, prefixes[b], on its left.
template <class T, class Op>
__global__ void add_block_prefix_kernel(T* out, std::int64_t n, std::int64_t section, const T* prefixes, Op op) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = section + blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride) {
    out[i] = op(prefixes[i / section], out[i]);
  }
}

// 7. Reduce-then-scan: scan-then-propagate writes every item twice and reads it twice.
// Here the first pass only reduces each tile to its total (reads n, writes nothing per
// item), the totals are scanned, and a second pass rescans each tile seeded with its
// prefix: 3n items moved instead of 4n.
template <class T, class Op>
__global__ void tile_reduce_kernel(const T* in, std::int64_t n, T* tile_totals, Op op) {
  constexpr int items = coarsened_items_per_thread;
  T* tile = ladder_detail::shared_array<T>();
  T* warp_totals = tile + items * blockDim.x;
  const int size = items * static_cast<int>(blockDim.x);
  const std::int64_t base = blockIdx.x * static_cast<std::int64_t>(size);
  ladder_detail::load_tile<T, Op>(in, n, base, size, tile);
  T sum = tile[threadIdx.x * items];
#pragma unroll
  for (int k = 1; k < items; ++k) sum = op(sum, tile[threadIdx.x * items + k]);
  T unused_exclusive;
  T total;
  ladder_detail::block_scan_any_size(sum, op, warp_totals, unused_exclusive, total);
  if (threadIdx.x == 0) tile_totals[blockIdx.x] = total;
}

template <class T, class Op>
__global__ void tile_rescan_kernel(const T* in, T* out, std::int64_t n, bool exclusive, const T* tile_prefixes,
                                   Op op) {
  constexpr int items = coarsened_items_per_thread;
  T* tile = ladder_detail::shared_array<T>();
  T* warp_totals = tile + items * blockDim.x;
  const int size = items * static_cast<int>(blockDim.x);
  const std::int64_t base = blockIdx.x * static_cast<std::int64_t>(size);
  ladder_detail::load_tile<T, Op>(in, n, base, size, tile);
  ladder_detail::scan_tile_coarsened<items>(tile, warp_totals, exclusive, tile_prefixes[blockIdx.x], op);
  ladder_detail::store_tile(tile, size, base, out, n);
}

namespace ladder_detail {
// Slot `i` of an array of T padded to whole 4-byte words (read and written word by word).
template <class T>
__device__ __forceinline__ T* prefix_slot(unsigned char* base, std::int64_t i) {
  return reinterpret_cast<T*>(base + i * static_cast<std::int64_t>(device::tile_state_detail::slot_bytes<T>));
}
}  // namespace ladder_detail

// 8. Chained single pass (seed 003, "global scan version 2"): one launch, each item read
// and written once (2n). Blocks take tickets from an atomic counter, so tile t is only
// started after tiles 0 .. t-1 were, and waiting on t - 1 cannot deadlock (blockIdx.x
// order is not guaranteed to be launch order). A block scans its tile, waits until tile
// t - 1 has published its inclusive prefix, publishes its own (value, then flag with
// release semantics; readers acquire the flag before the value), then finishes. The cost:
// the prefixes travel tile by tile, one global-memory round trip each, in series.
// Counter and flags are cleared (cudaMemsetAsync) before every launch: temp storage
// arrives uninitialised.
template <class T, class Op>
__global__ void chained_scan_kernel(const T* in, T* out, std::int64_t n, bool exclusive, T init,
                                    unsigned long long* ticket_counter, std::uint32_t* flags,
                                    unsigned char* inclusive_prefixes, Op op) {
  constexpr int items = coarsened_items_per_thread;
  __shared__ std::int64_t tile_index;
  __shared__ scan_detail::raw_slot<T> tile_prefix;
  T* tile = ladder_detail::shared_array<T>();
  T* warp_totals = tile + items * blockDim.x;
  if (threadIdx.x == 0) tile_index = static_cast<std::int64_t>(atomicAdd(ticket_counter, 1ull));
  __syncthreads();
  const std::int64_t t = tile_index;
  const int size = items * static_cast<int>(blockDim.x);
  const std::int64_t base = t * size;
  ladder_detail::load_tile<T, Op>(in, n, base, size, tile);
  // Scan the tile locally first, so that only the last step waits for the chain.
  const T identity = ladder_detail::identity_of<T, Op>();
  const T total = ladder_detail::scan_tile_coarsened<items>(tile, warp_totals, exclusive, identity, op);
  if (threadIdx.x == 0) {
    T prefix = exclusive ? init : identity;
    if (t > 0) {
      while (device::tile_state_detail::load_acquire(flags + (t - 1)) == 0) {
      }
      prefix = device::tile_state_detail::load_cg(ladder_detail::prefix_slot<T>(inclusive_prefixes, t - 1));
    }
    device::tile_state_detail::store_cg(ladder_detail::prefix_slot<T>(inclusive_prefixes, t),
                                        (t > 0 || exclusive) ? op(prefix, total) : total);
    device::tile_state_detail::store_release(flags + t, 1u);
    tile_prefix.store(prefix);
  }
  __syncthreads();
  if (t > 0 || exclusive) {
    const T prefix = tile_prefix.load();
    for (int p = static_cast<int>(threadIdx.x); p < size; p += static_cast<int>(blockDim.x)) {
      tile[p] = op(prefix, tile[p]);
    }
  }
  ladder_detail::store_tile(tile, size, base, out, n);
}

// 9. Decoupled look-back: the production scan (scanlab::inclusive_scan / exclusive_scan).
// Chained scanning waits for the previous tile's inclusive prefix; here every tile also
// publishes its own total as soon as it is reduced, and a waiting tile combines the
// totals of up to 32 predecessors at once, so prefixes advance many tiles per round trip
// instead of one. See device/tile_state.cuh and device/scan_kernel.cuh.

// ---------------------------------------------------------------------------------------
// Host side.

namespace ladder_detail {

// Items one block of `variant` scans (the section of the hierarchical scheme).
constexpr std::int64_t section_items(scan_variant variant, int block_threads) {
  switch (variant) {
    case scan_variant::brent_kung:
      return 2 * std::int64_t{block_threads};
    case scan_variant::scan_then_propagate:
    case scan_variant::reduce_then_scan:
    case scan_variant::chained:
      return std::int64_t{coarsened_items_per_thread} * block_threads;
    default:
      return block_threads;
  }
}

// Dynamic shared memory of a variant's kernels, in bytes.
template <class T>
constexpr std::size_t shared_bytes(scan_variant variant, int block_threads) {
  switch (variant) {
    case scan_variant::kogge_stone:
      return sizeof(T) * block_threads;
    case scan_variant::kogge_stone_double_buffer:
      return 2 * sizeof(T) * block_threads;
    case scan_variant::brent_kung:
      return 2 * sizeof(T) * block_threads;
    case scan_variant::warp_shuffle:
      return sizeof(T) * (block_threads + 32);
    default:
      return sizeof(T) * (std::size_t{coarsened_items_per_thread} * block_threads + 32);
  }
}

// Block-sum arrays of the hierarchical scheme: level k holds one total per section of
// level k - 1 (level 0: of the input), as long as there is more than one section.
struct hierarchy {
  static constexpr int max_levels = 40;
  int levels = 0;
  std::int64_t counts[max_levels] = {};
  std::size_t offsets[max_levels] = {};
  std::size_t bytes = 0;
};

template <class T>
constexpr hierarchy plan_hierarchy(std::int64_t n, std::int64_t section, std::size_t start_offset) {
  hierarchy h;
  h.bytes = start_offset;
  std::int64_t count = n;
  while (h.levels < hierarchy::max_levels) {
    const std::int64_t sections = scanlab::detail::ceil_div(count, section);
    if (sections <= 1) break;
    h.counts[h.levels] = sections;
    h.offsets[h.levels] = h.bytes;
    h.bytes += scanlab::detail::align_up(static_cast<std::size_t>(sections) * sizeof(T));
    ++h.levels;
    count = sections;
  }
  return h;
}

inline unsigned blocks_for(std::int64_t items, std::int64_t per_block) {
  return static_cast<unsigned>(scanlab::detail::ceil_div(items, per_block));
}

// Launches one block-local kernel of the hierarchical scheme.
template <class T, class Op>
cudaError_t launch_local(scan_variant variant, const T* in, T* out, std::int64_t count, bool exclusive, T seed,
                         T* block_sums, Op op, int block_threads, cudaStream_t stream) {
  const std::size_t smem = shared_bytes<T>(variant, block_threads);
  const unsigned grid = blocks_for(count, section_items(variant, block_threads));
  void (*kernel)(const T*, T*, std::int64_t, bool, T, T*, Op) = coarsened_scan_kernel<T, Op>;
  switch (variant) {
    case scan_variant::kogge_stone: kernel = kogge_stone_scan_kernel<T, Op>; break;
    case scan_variant::kogge_stone_double_buffer: kernel = kogge_stone_double_buffer_scan_kernel<T, Op>; break;
    case scan_variant::brent_kung: kernel = brent_kung_scan_kernel<T, Op>; break;
    case scan_variant::warp_shuffle: kernel = warp_shuffle_scan_kernel<T, Op>; break;
    default: break;
  }
  SCANLAB_TRY(scanlab::detail::allow_dynamic_smem(kernel, smem));
  return scanlab::detail::launch(kernel, grid, block_threads, smem, stream, in, out, count, exclusive, seed,
                                 block_sums, op);
}

template <class T, class Op>
cudaError_t launch_add_back(T* out, std::int64_t count, std::int64_t section, const T* prefixes, Op op,
                            cudaStream_t stream) {
  if (count <= section) return cudaSuccess;
  constexpr int threads = 256;
  const std::int64_t wanted = scanlab::detail::ceil_div<std::int64_t>(count - section, threads * 4);
  const unsigned grid = static_cast<unsigned>(wanted < 65536 ? wanted : 65536);
  return scanlab::detail::launch(add_block_prefix_kernel<T, Op>, grid, threads, 0, stream, out, count, section,
                                 prefixes, op);
}

// The hierarchical scheme, from level `level` of the plan: local scans (block sums into
// the level's array), the block sums scanned exclusively in place (recursively),
// prefixes added back. Exclusive scans are seeded with `seed` in their first block.
template <class T, class Op>
cudaError_t scan_hierarchical(scan_variant local, const T* in, T* out, std::int64_t count, bool exclusive, T seed,
                              unsigned char* temp, const hierarchy& plan, int level, Op op, int block_threads,
                              cudaStream_t stream) {
  const std::int64_t section = section_items(local, block_threads);
  const bool single = count <= section;
  T* sums = single ? nullptr : reinterpret_cast<T*>(temp + plan.offsets[level]);
  SCANLAB_TRY(launch_local(local, in, out, count, exclusive, seed, sums, op, block_threads, stream));
  if (single) return cudaSuccess;
  SCANLAB_TRY(scan_hierarchical(local, sums, sums, scanlab::detail::ceil_div(count, section), true,
                                identity_of<T, Op>(), temp, plan, level + 1, op, block_threads, stream));
  return launch_add_back(out, count, section, sums, op, stream);
}

}  // namespace ladder_detail

// Runs one variant. kind selects inclusive or exclusive (then seeded with `init`; init is
// ignored for inclusive scans). Two-phase temp storage as in scanlab::inclusive_scan
// (temp_bytes >= 1 always). block_threads: a power of two in [32, 1024] (the production
// variant uses its own tuning and ignores it). Returns cudaErrorInvalidValue for n < 0, a
// bad block size, too little temp storage, or the naive scan above naive_scan_max_items.
// In place (d_out == d_in) is allowed except for the naive scan.
template <class T, class Op>
[[nodiscard]] cudaError_t scan(scan_variant variant, scan_kind kind, void* d_temp, std::size_t& temp_bytes,
                               const T* d_in, T* d_out, std::int64_t n, T init, Op op, cudaStream_t stream = nullptr,
                               int block_threads = 256) {
  const bool exclusive = kind == scan_kind::exclusive;
  if (n < 0 || block_threads < 32 || block_threads > 1024 || (block_threads & (block_threads - 1)) != 0) {
    return cudaErrorInvalidValue;
  }
  if (variant == scan_variant::decoupled_lookback) {
    return exclusive ? scanlab::exclusive_scan(d_temp, temp_bytes, d_in, d_out, n, init, op, stream)
                     : scanlab::inclusive_scan(d_temp, temp_bytes, d_in, d_out, n, op, stream);
  }
  if (variant == scan_variant::naive && n > naive_scan_max_items) return cudaErrorInvalidValue;

  // Temp storage plan: [alignment slack][variant's arrays].
  const std::int64_t section = ladder_detail::section_items(variant, block_threads);
  const std::int64_t tiles = scanlab::detail::ceil_div(n, section);
  constexpr std::size_t slack = 256;
  ladder_detail::hierarchy plan;
  std::size_t required = slack;
  std::size_t first_offset = 0;  // reduce-then-scan: the tile totals; chained: counter + flags
  std::size_t second_offset = 0;  // chained: inclusive prefixes
  switch (variant) {
    case scan_variant::naive:
      break;
    case scan_variant::reduce_then_scan:
      first_offset = 0;
      plan = ladder_detail::plan_hierarchy<T>(tiles, section,
                                              scanlab::detail::align_up(static_cast<std::size_t>(tiles) * sizeof(T)));
      required += plan.bytes;
      break;
    case scan_variant::chained:
      second_offset = scanlab::detail::align_up(128 + static_cast<std::size_t>(tiles) * sizeof(std::uint32_t));
      required += second_offset + scanlab::detail::align_up(static_cast<std::size_t>(tiles) *
                                                   device::tile_state_detail::slot_bytes<T>);
      break;
    default:
      plan = ladder_detail::plan_hierarchy<T>(n, section, 0);
      required += plan.bytes;
      break;
  }
  if (const auto answer = scanlab::detail::temp_storage_query(d_temp, temp_bytes, required)) return *answer;
  if (n == 0) return cudaSuccess;
  auto* temp = reinterpret_cast<unsigned char*>(scanlab::detail::align_up(reinterpret_cast<std::uintptr_t>(d_temp)));

  switch (variant) {
    case scan_variant::naive:
      return scanlab::detail::launch(naive_scan_kernel<T, Op>, ladder_detail::blocks_for(n, block_threads),
                                     block_threads, 0, stream, d_in, d_out, n, exclusive, init, op);
    case scan_variant::reduce_then_scan: {
      const std::size_t smem = ladder_detail::shared_bytes<T>(variant, block_threads);
      T* totals = reinterpret_cast<T*>(temp + first_offset);
      SCANLAB_TRY(scanlab::detail::allow_dynamic_smem(tile_reduce_kernel<T, Op>, smem));
      SCANLAB_TRY(scanlab::detail::allow_dynamic_smem(tile_rescan_kernel<T, Op>, smem));
      SCANLAB_TRY(scanlab::detail::launch(tile_reduce_kernel<T, Op>, static_cast<unsigned>(tiles), block_threads, smem,
                                          stream, d_in, n, totals, op));
      // Exclusive scan of the tile totals: tile b's prefix (seeded with init, or the identity).
      const T seed = exclusive ? init : ladder_detail::identity_of<T, Op>();
      SCANLAB_TRY(ladder_detail::scan_hierarchical(scan_variant::scan_then_propagate, totals, totals, tiles, true,
                                                   seed, temp, plan, 0, op, block_threads, stream));
      return scanlab::detail::launch(tile_rescan_kernel<T, Op>, static_cast<unsigned>(tiles), block_threads, smem,
                                     stream, d_in, d_out, n, exclusive, totals, op);
    }
    case scan_variant::chained: {
      const std::size_t smem = ladder_detail::shared_bytes<T>(variant, block_threads);
      auto* counter = reinterpret_cast<unsigned long long*>(temp);
      auto* flags = reinterpret_cast<std::uint32_t*>(temp + 128);
      unsigned char* prefixes = temp + second_offset;
      SCANLAB_TRY(cudaMemsetAsync(temp, 0, 128 + static_cast<std::size_t>(tiles) * sizeof(std::uint32_t), stream));
      SCANLAB_TRY(scanlab::detail::allow_dynamic_smem(chained_scan_kernel<T, Op>, smem));
      return scanlab::detail::launch(chained_scan_kernel<T, Op>, static_cast<unsigned>(tiles), block_threads, smem,
                                     stream, d_in, d_out, n, exclusive, init, counter, flags, prefixes, op);
    }
    default: {
      const T seed = exclusive ? init : ladder_detail::identity_of<T, Op>();
      return ladder_detail::scan_hierarchical(variant, d_in, d_out, n, exclusive, seed, temp, plan, 0, op,
                                              block_threads, stream);
    }
  }
}

}  // namespace scanlab::ladder
