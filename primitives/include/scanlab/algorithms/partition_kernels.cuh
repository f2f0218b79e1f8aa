// The kernels behind scanlab/algorithms/partition.cuh (and the partition levels of
// scanlab/algorithms/quicksort.cuh): single-pass two-way and three-way partitions on the
// decoupled look-back tile state (device/tile_state.cuh).
//
// One tile = BlockThreads x Items elements, handed out in order from a ticket counter (so
// a look-back only ever waits on tiles that running blocks hold). For each tile:
//
//   1. load     striped: warp w's item k of lane l is element  w*32*Items + k*32 + l  of the
//               tile, so every load instruction of a warp reads 32 consecutive elements
//               (coalesced for any alignment: segments of a quicksort start anywhere);
//   2. classify each item: class 0 (selected / less), 1 (rejected / equal), 2 (greater);
//   3. rank     with ballots: for item k, the items of class c before it in its warp are the
//               earlier slots' counts plus popc(ballot_k(c) & lanes below); warp counts go
//               through shared memory (no block-wide scan is needed);
//   4. publish  the tile's counts on the tile state, and
//   5. compact  the tile in shared memory: [class 0 | class 1 | class 2], each in input order;
//   6. store    from shared memory, consecutive threads to consecutive addresses: each
//               class's run of the tile goes to one contiguous range of the output, once
//               warp 0 has looked back for the tile: it gets the counts of all tiles before
//               it (two-way: one count, the selected; the rejected before the tile are
//               tile_start - selected. Three-way: (less, equal) in one 16-byte value; the
//               greater are tile_start - less - equal).
// The two-way kernel defers step 6 by one tile (the production scan's deferred look-back):
// the compacted tile waits in shared memory while the block does steps 1-5 for its next
// tile, so its look-back finds the counts before it already published. The three-way
// kernel (also the quicksort's, over many segments) still looks back at once.
//
// Where the classes go (tile_start - prefix = the count of that class before the tile):
//   two-way, one output      selected  out[S + j]            (in order)
//                            rejected  out[n - 1 - (R + j)]  (from the end: reversed)
//   two-way, two outputs     selected  out[S + j], rejected  rejected_out[R + j] (both in order)
//   three-way                less      out[L + j]            (in order)
//                            greater   out[n - 1 - (G + j)]  (reversed)
//                            equal     equal_out[E + j]      (in order, in a side buffer: their
//                                      place, after all the less, is unknown until the pass ends)
// One pass can place a class at a known start (0) or a known end (n); the class whose start
// depends on the total of another class cannot be placed in order without that total.
#pragma once

#include <scanlab/detail/util.cuh>
#include <scanlab/device/tile_state.cuh>
#include <scanlab/error.hpp>
#include <scanlab/functional.cuh>
#include <scanlab/warp/warp_scan.cuh>

#include <cuda/std/cmath>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace scanlab::partition_detail {

// ---- tuning -----------------------------------------------------------------------------

template <int BlockThreads, int ItemsPerThread, int MinBlocksPerSm>
struct partition_policy {
  static constexpr int block_threads = BlockThreads;
  static constexpr int items_per_thread = ItemsPerThread;
  static constexpr int min_blocks_per_sm = MinBlocksPerSm;
  static constexpr int tile_items = BlockThreads * ItemsPerThread;
  static_assert(tile_items < 65536, "tile ranks are held in 16-bit-safe ints");
};

// sm_90: 256 threads, 64 bytes per thread (16 four-byte or 8 eight-byte items), as the
// production scan. Three-way (and the quicksort's levels): the tile goes through shared
// memory once (16 KB); four blocks per SM keep 64 KB of loads in flight per SM.
// Two-way: a block holds two compacted tiles (the deferred look-back: 32 KB). H100,
// uint32, 2^28, two-way partition, ms (CUB DevicePartition::If: 0.987; before the
// deferred look-back: 1.676 at 256 x 16, 4/SM):
//   256 x 16, 3/SM (chosen) 1.203    256 x 16, 4/SM 1.380    256 x 16, 2/SM 1.371
//   256 x 20, 2/SM          1.214    384 x 12, 2/SM 1.268    128 x 16, 8/SM 1.393
//   512 x  8, 2/SM          1.376
template <class T>
struct partition_tuning_sm90 {
  static constexpr int raw_items = static_cast<int>(64 / sizeof(T));
  static constexpr int items = raw_items < 1 ? 1 : (raw_items > 16 ? 16 : raw_items);
  using policy = partition_policy<256, items, sizeof(T) <= 4 ? 4 : 3>;
  using two_way_policy = partition_policy<256, items, 3>;
};

template <class T>
using default_partition_policy = typename partition_tuning_sm90<T>::policy;
template <class T>
using default_two_way_policy = typename partition_tuning_sm90<T>::two_way_policy;

// ---- counts carried through the look-back ---------------------------------------------

// Three-way: the less and the equal before (or in) a tile. 64-bit: totals pass 2^32.
struct three_counts {
  std::uint64_t less;
  std::uint64_t equal;
};
struct three_counts_add {
  __host__ __device__ three_counts operator()(const three_counts& a, const three_counts& b) const {
    return {a.less + b.less, a.equal + b.equal};
  }
};

// ---- ranking a tile -------------------------------------------------------------------

// Classes 2 or 3. Every thread passes its items' classes (-1: past the end of the input;
// such items must come after every valid item of the tile, as the striped layout
// guarantees for a tile cut short). rank() turns each class into the item's slot in the
// tile compacted by class ([class 0 | class 1 | class 2], each in input order) and yields the
// tile's totals of classes 0 and 1. One int per item is live (the warp-local rank and the
// class, packed), which keeps a 16-item tile in registers.
template <int BlockThreads, int Items, int Classes>
struct tile_ranker {
  static constexpr int warps = BlockThreads / 32;
  static_assert(Classes == 2 || Classes == 3, "two or three classes");

  struct temp_storage {
    int warp_counts[Classes][warps];
  };

  // In: code[k] = the item's class, in {-1, 0, .., Classes - 1}. Out: code[k] = the item's
  // slot, or -1 for an item past the end.
  __device__ static void rank(int (&code)[Items], int& total0, int& total1, temp_storage& s) {
    const int warp = static_cast<int>(threadIdx.x / 32);
    const unsigned lane = detail::scan_lane();
    const unsigned below = (1u << lane) - 1u;
    int running[Classes] = {};
#pragma unroll
    for (int k = 0; k < Items; ++k) {
      int local = 0;
#pragma unroll
      for (int c = 0; c < Classes; ++c) {
        const unsigned b = __ballot_sync(detail::full_warp_mask, code[k] == c);
        if (code[k] == c) local = running[c] + __popc(b & below);
        running[c] += __popc(b);
      }
      code[k] = local * 4 + (code[k] + 1);  // warp-local rank in its class, and the class + 1
    }
    if (lane == 0) {
#pragma unroll
      for (int c = 0; c < Classes; ++c) s.warp_counts[c][warp] = running[c];
    }
    __syncthreads();
    int prefix[Classes] = {};
    int total[Classes] = {};
#pragma unroll
    for (int w = 0; w < warps; ++w) {
#pragma unroll
      for (int c = 0; c < Classes; ++c) {
        const int count = s.warp_counts[c][w];
        if (w < warp) prefix[c] += count;
        total[c] += count;
      }
    }
    total0 = total[0];
    total1 = Classes == 3 ? total[1] : 0;
    const int base0 = prefix[0];
    const int base1 = total[0] + prefix[1];
    const int base2 = Classes == 3 ? total[0] + total[1] + prefix[Classes - 1] : 0;
#pragma unroll
    for (int k = 0; k < Items; ++k) {
      const int c = (code[k] & 3) - 1;
      const int local = code[k] >> 2;
      code[k] = c < 0 ? -1 : local + (c == 0 ? base0 : (c == 1 ? base1 : base2));
    }
  }
};

// The item's index in the tile (striped layout).
template <int Items>
__device__ __forceinline__ int striped_index(int k) {
  return static_cast<int>(threadIdx.x / 32) * 32 * Items + k * 32 + static_cast<int>(detail::scan_lane());
}

// Shared-memory slot array for T that may lack a trivial default constructor.
template <class T, int Count>
struct raw_array {
  alignas(T) unsigned char bytes[sizeof(T) * Count];
  __device__ __forceinline__ T* data() { return reinterpret_cast<T*>(bytes); }
};

// ---- two-way partition ------------------------------------------------------------------

template <class InputIt, class OutputIt, class Count, class Pred>
struct partition_params {
  InputIt in;
  OutputIt out;
  OutputIt rejected_out;  // two outputs: the rejected, in order; else unused
  bool separate_rejected;
  std::int64_t* num_selected;
  std::int64_t n;
  std::int64_t num_tiles;
  Pred pred;
  device::tile_state<Count> state;
};

// The deferred look-back (as the production scan's, device/scan_kernel.cuh): a tile is
// ranked, publishes its count and is compacted into one of two shared-memory buffers,
// where it waits ("parks") while the block claims, ranks, publishes and compacts its next
// tile; only then does warp 0 look back for the parked tile, whose predecessors published
// their counts at least a step earlier, so the look-back seldom waits. A block publishes
// its new tile's count before it looks back for the parked one, so every count that a
// look-back awaits belongs to a running block that publishes it without waiting first
// (tickets are handed out in order): no deadlock.
template <class Policy, class InputIt, class OutputIt, class Count, class Pred>
__global__ void __launch_bounds__(Policy::block_threads, Policy::min_blocks_per_sm)
    partition_tiles_kernel(const __grid_constant__ partition_params<InputIt, OutputIt, Count, Pred> p) {
  using T = std::remove_cv_t<typename std::iterator_traits<InputIt>::value_type>;
  constexpr int items = Policy::items_per_thread;
  constexpr int tile_items = Policy::tile_items;
  using ranker = tile_ranker<Policy::block_threads, items, 2>;
  __shared__ struct {
    typename ranker::temp_storage rank;
    raw_array<T, tile_items> tile[2];  // compacted tiles: the parked one and the current one
    Count prefix;                      // the parked tile's selected before it
    std::int64_t ticket;
  } s;

  // Tile `tile` from buffer `buffer` to the output, once s.prefix holds its prefix (tile > 0)
  // and a barrier made it and the buffer visible.
  const auto write_out = [&](std::int64_t tile, int selected, int buffer) {
    const std::int64_t tile_start = tile * tile_items;
    const int valid = static_cast<int>(p.n - tile_start < tile_items ? p.n - tile_start : tile_items);
    const auto selected_before = tile > 0 ? static_cast<std::int64_t>(s.prefix) : std::int64_t{0};
    const std::int64_t rejected_before = tile_start - selected_before;
    if (tile == p.num_tiles - 1 && threadIdx.x == 0) *p.num_selected = selected_before + selected;
    const T* compacted = s.tile[buffer].data();
    for (int i = static_cast<int>(threadIdx.x); i < valid; i += Policy::block_threads) {
      const T v = compacted[i];
      if (i < selected) {
        p.out[selected_before + i] = v;
      } else if (p.separate_rejected) {
        p.rejected_out[rejected_before + (i - selected)] = v;
      } else {
        p.out[p.n - 1 - (rejected_before + (i - selected))] = v;
      }
    }
  };
  // Warp 0: the parked tile's prefix into s.prefix.
  const auto look_back = [&](std::int64_t tile, int selected) {
    if (tile == 0) return;
    const Count prefix = p.state.exclusive_prefix(tile, static_cast<Count>(selected), plus{});
    if (threadIdx.x == 0) s.prefix = prefix;
  };

  // The items of tile `tile` (striped) into x, with their classes in slot (-1 past the end).
  const auto load = [&](std::int64_t tile, T (&x)[items], int (&slot)[items]) {
    const std::int64_t tile_start = tile * tile_items;
    const int valid = static_cast<int>(p.n - tile_start < tile_items ? p.n - tile_start : tile_items);
#pragma unroll
    for (int k = 0; k < items; ++k) {
      const int i = striped_index<items>(k);
      slot[k] = -1;
      if (i < valid) x[k] = static_cast<T>(p.in[tile_start + i]);
    }
  };

  if (threadIdx.x == 0) s.ticket = p.state.claim_tile();
  __syncthreads();
  std::int64_t tile = s.ticket;
  T x[items];
  int slot[items];  // the class, then the slot in the compacted tile
  if (tile < p.num_tiles) load(tile, x, slot);
  std::int64_t parked = -1;  // the parked tile (-1: none), the same on every thread
  int parked_selected = 0;
  int buffer = 0;  // the current tile's buffer; the parked one is in the other
  while (tile < p.num_tiles) {
    const int valid = static_cast<int>(p.n - tile * tile_items < tile_items ? p.n - tile * tile_items : tile_items);
#pragma unroll
    for (int k = 0; k < items; ++k) {
      if (striped_index<items>(k) < valid) slot[k] = p.pred(x[k]) ? 0 : 1;
    }
    int selected = 0, unused_total = 0;
    ranker::rank(slot, selected, unused_total, s.rank);
    // s.ticket was read by every thread before the barrier inside rank().
    if (threadIdx.x == 0) {
      p.state.publish_aggregate(tile, static_cast<Count>(selected));  // before the look-back below
      s.ticket = p.state.claim_tile();
    }
    // Compact the tile: [selected | rejected], each in input order. Its buffer was last read
    // by the previous iteration's write_out, before the barrier inside rank().
    T* compacted = s.tile[buffer].data();
#pragma unroll
    for (int k = 0; k < items; ++k) {
      if (slot[k] >= 0) compacted[slot[k]] = x[k];
    }
    if (threadIdx.x < 32 && parked >= 0) look_back(parked, parked_selected);
    __syncthreads();
    // The tile is in shared memory: x is free for the next tile's loads, which are in
    // flight while the parked tile is written out (a prefetch that costs no registers).
    const std::int64_t next = s.ticket;
    if (next < p.num_tiles) load(next, x, slot);
    if (parked >= 0) write_out(parked, parked_selected, buffer ^ 1);
    parked = tile;
    parked_selected = selected;
    buffer ^= 1;
    tile = next;
  }
  if (parked >= 0) {
    if (threadIdx.x < 32) look_back(parked, parked_selected);
    __syncthreads();
    write_out(parked, parked_selected, buffer ^ 1);
  }
}

// Reverses out[begin, n) in place, begin = *d_begin (read on the device): turns the reversed
// tail of a one-pass partition into input order.
template <class T>
__global__ void reverse_tail_kernel(T* out, std::int64_t n, const std::int64_t* d_begin) {
  const std::int64_t begin = *d_begin;
  const std::int64_t half = (n - begin) / 2;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < half; i += stride) {
    const T a = out[begin + i];
    const T b = out[n - 1 - i];
    out[begin + i] = b;
    out[n - 1 - i] = a;
  }
}

// ---- three-way partition (one segment or many) -------------------------------------------

// Keys-only partitions and sorts carry this in place of a value type.
struct no_value {};

// What a tile needs to know about the segment it belongs to.
template <class T>
struct segment_view {
  std::int64_t begin;       // the segment's first element in the buffers
  std::int64_t size;
  std::int64_t tile;        // the tile's index inside the segment
  std::int64_t num_tiles;   // the segment's tiles
  device::tile_state<three_counts> state;
  T pivot;
  std::int64_t* counts;     // where the last tile writes (less, equal, greater)
};

// One segment: the public three-way partition.
template <class T>
struct single_segment {
  std::int64_t n;
  std::int64_t num_tiles;
  device::tile_state<three_counts> state;
  T pivot;
  std::int64_t* counts;
  __device__ segment_view<T> locate(std::int64_t tile) const { return {0, n, tile, num_tiles, state, pivot, counts}; }
};

// Many segments partitioned in one launch (a quicksort level). Segment s owns the global
// tiles [first_tile[s], first_tile[s + 1]) and its own tile state at state_base +
// state_offset[s]; its pivot is pivots[s]; its counts go to counts[3 s .. 3 s + 2].
struct segment_desc {
  std::int64_t begin;
  std::int64_t size;
  std::int64_t first_tile;
  std::int64_t state_offset;
};

template <class T>
struct segment_table {
  const segment_desc* segments;
  std::int64_t num_segments;
  const T* pivots;
  unsigned char* state_base;
  std::int64_t* counts;
  int tile_items;
  __device__ segment_view<T> locate(std::int64_t tile) const {
    std::int64_t lo = 0, hi = num_segments - 1;  // the last segment whose first tile <= tile
    while (lo < hi) {
      const std::int64_t mid = (lo + hi + 1) / 2;
      if (segments[mid].first_tile <= tile) lo = mid;
      else hi = mid - 1;
    }
    const segment_desc d = segments[lo];
    const std::int64_t tiles = detail::ceil_div<std::int64_t>(d.size, tile_items);
    return {d.begin,
            d.size,
            tile - d.first_tile,
            tiles,
            device::tile_state<three_counts>(state_base + d.state_offset, tiles),
            pivots[lo],
            counts + 3 * lo};
  }
};

template <class T, class V, class Comp, class Segments>
struct partition3_params {
  const T* keys_in;
  T* keys_out;     // less from the segment's start, greater from its end (reversed)
  T* keys_equal;   // equal, from the segment's start, in order
  const V* values_in;
  V* values_out;
  V* values_equal;
  Comp comp;
  Segments segments;
  std::int64_t total_tiles;
  unsigned long long* ticket;  // zeroed before the launch
};

template <class Policy, class T, class V, class Comp, class Segments>
__global__ void __launch_bounds__(Policy::block_threads, Policy::min_blocks_per_sm)
    partition3_tiles_kernel(const __grid_constant__ partition3_params<T, V, Comp, Segments> p) {
  constexpr bool has_values = !std::is_same_v<V, no_value>;
  constexpr int items = Policy::items_per_thread;
  constexpr int tile_items = Policy::tile_items;
  using ranker = tile_ranker<Policy::block_threads, items, 3>;
  __shared__ struct {
    typename ranker::temp_storage rank;
    raw_array<T, tile_items> keys;
    raw_array<V, has_values ? tile_items : 1> values;
    three_counts prefix;
    std::int64_t ticket;
  } s;

  for (;;) {
    if (threadIdx.x == 0) s.ticket = static_cast<std::int64_t>(atomicAdd(p.ticket, 1ull));
    __syncthreads();
    const std::int64_t ticket = s.ticket;
    if (ticket >= p.total_tiles) return;
    const segment_view<T> seg = p.segments.locate(ticket);
    const std::int64_t tile_start = seg.tile * tile_items;  // inside the segment
    const std::int64_t base = seg.begin + tile_start;
    const int valid = static_cast<int>(seg.size - tile_start < tile_items ? seg.size - tile_start : tile_items);

    T x[items];
    [[maybe_unused]] V y[items];
    int slot[items];  // the class, then the slot in the compacted tile
#pragma unroll
    for (int k = 0; k < items; ++k) {
      const int i = striped_index<items>(k);
      slot[k] = -1;
      if (i < valid) {
        x[k] = p.keys_in[base + i];
        if constexpr (has_values) y[k] = p.values_in[base + i];
        slot[k] = p.comp(x[k], seg.pivot) ? 0 : (p.comp(seg.pivot, x[k]) ? 2 : 1);
      }
    }
    int less = 0, equal = 0;
    ranker::rank(slot, less, equal, s.rank);

    if (threadIdx.x < 32) {
      const three_counts own{static_cast<std::uint64_t>(less), static_cast<std::uint64_t>(equal)};
      three_counts prefix{0, 0};
      if (seg.tile == 0) {
        if (threadIdx.x == 0) seg.state.publish_aggregate(0, own);
      } else {
        device::lookback_prefix_op<three_counts, three_counts_add> lookback{seg.state, seg.tile, three_counts_add{}};
        prefix = lookback(own);
      }
      if (threadIdx.x == 0) s.prefix = prefix;
    }
    // Compact the tile: [less | equal | greater], each in input order.
    T* keys = s.keys.data();
    [[maybe_unused]] V* values = s.values.data();
#pragma unroll
    for (int k = 0; k < items; ++k) {
      if (slot[k] >= 0) {
        keys[slot[k]] = x[k];
        if constexpr (has_values) values[slot[k]] = y[k];
      }
    }
    __syncthreads();
    const three_counts prefix = s.prefix;
    const auto less_before = static_cast<std::int64_t>(prefix.less);
    const auto equal_before = static_cast<std::int64_t>(prefix.equal);
    const std::int64_t greater_before = tile_start - less_before - equal_before;
    if (seg.tile == seg.num_tiles - 1 && threadIdx.x == 0) {
      seg.counts[0] = less_before + less;
      seg.counts[1] = equal_before + equal;
      seg.counts[2] = seg.size - (less_before + less) - (equal_before + equal);
    }
    const std::int64_t last = seg.begin + seg.size - 1;
    for (int i = static_cast<int>(threadIdx.x); i < valid; i += Policy::block_threads) {
      std::int64_t target;
      bool to_equal = false;
      if (i < less) {
        target = seg.begin + less_before + i;
      } else if (i < less + equal) {
        target = seg.begin + equal_before + (i - less);
        to_equal = true;
      } else {
        target = last - (greater_before + (i - less - equal));
      }
      if (to_equal) {
        p.keys_equal[target] = keys[i];
        if constexpr (has_values) p.values_equal[target] = values[i];
      } else {
        p.keys_out[target] = keys[i];
        if constexpr (has_values) p.values_out[target] = values[i];
      }
    }
    __syncthreads();  // shared buffers and the ticket are reused by the next tile
  }
}

// The public three-way partition's second step: the equal run from the side buffer to its
// place, out[less, less + equal), with the counts read on the device.
template <class T>
__global__ void place_equal_kernel(const T* equal_buffer, T* out, const std::int64_t* d_counts) {
  const std::int64_t less = d_counts[0];
  const std::int64_t equal = d_counts[1];
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < equal; i += stride) {
    out[less + i] = equal_buffer[i];
  }
}

// Reverses out[n - greater, n), greater = d_counts[2]: the greater part into input order.
template <class T>
__global__ void reverse_greater_kernel(T* out, std::int64_t n, const std::int64_t* d_counts) {
  const std::int64_t begin = n - d_counts[2];
  const std::int64_t half = (n - begin) / 2;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < half; i += stride) {
    const T a = out[begin + i];
    const T b = out[n - 1 - i];
    out[begin + i] = b;
    out[n - 1 - i] = a;
  }
}

// ---- comparators ----------------------------------------------------------------------

// a < b, with every NaN after every number (NaNs are equivalent to each other): a strict
// weak order on floats, which operator< is not.
struct nan_last_less {
  template <class T>
  __host__ __device__ bool operator()(const T& a, const T& b) const {
    if constexpr (std::is_floating_point_v<T>) {
      const bool a_nan = a != a;
      const bool b_nan = b != b;
      if (a_nan || b_nan) return !a_nan && b_nan;
    }
    return a < b;
  }
};

}  // namespace scanlab::partition_detail

namespace scanlab {
// The comparator the three-way partitions and the quicksort use by default: operator<,
// with NaNs after every number (and equivalent to each other).
using nan_last_less = partition_detail::nan_last_less;
}  // namespace scanlab
