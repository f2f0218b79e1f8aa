// The kernels behind scanlab/algorithms/partition.cuh: single-pass two-way and three-way
// partitions on the decoupled look-back tile state (device/tile_state.cuh).
//
// Both are one agent (partition_agent below) with the stream compaction's structure
// (select_kernels.cuh): 16-byte lane-contiguous loads, packed per-slot counts ranked by one
// warp scan, a cooperative grid whose first round is written out at once after a grid
// barrier, and the deferred look-back (each tile parked in shared memory until its block
// has published its next tile's counts). The staged tile holds every item, grouped by
// class, each class in input order, and goes to one output stream per class.
//
// The classes, and where they go (X_before = the count of class X in the tiles before):
//   two-way, one output      selected  out[S + j]                 (in order)
//                            rejected  out[n - 1 - (R + j)]       (from the end: reversed)
//   two-way, two outputs     selected  out[S + j], rejected  rejected_out[R + j] (both in order)
//   three-way                less      out[L + j]                 (in order)
//                            equal     equal_out[E + j]           (in order, in a side buffer:
//                                      their place, after all the less, is unknown until
//                                      the pass ends; a small kernel moves them after it)
//                            greater   out[n - 1 - (G + j)]       (reversed)
// One pass can place a class at a known start (0) or a known end (n); the class whose start
// depends on the total of another class cannot be placed in order without that total.
// The counts carried through the look-back: the selected (two-way) or the (less, equal)
// pair (three-way); the last class is the tile's start minus the others.
#pragma once

#include <scanlab/arch.cuh>
#include <scanlab/block/block_scan.cuh>
#include <scanlab/detail/shuffle.cuh>
#include <scanlab/detail/prefetch.cuh>
#include <scanlab/detail/util.cuh>
#include <scanlab/detail/vector_io.cuh>
#include <scanlab/device/single_pass.cuh>
#include <scanlab/device/tile_state.cuh>
#include <scanlab/error.hpp>
#include <scanlab/functional.cuh>
#include <scanlab/warp/warp_scan.cuh>

#include <cuda/std/cmath>
#include <cuda_runtime.h>

#include <cstdint>
#include <iterator>
#include <type_traits>

namespace scanlab::partition_detail {

// ---- tuning -----------------------------------------------------------------------------

template <int BlockThreads, int ItemsPerThread, int MinBlocksPerSm, int StagingBuffers = 0, int L2Ahead = 0>
struct partition_policy {
  static constexpr int block_threads = BlockThreads;
  static constexpr int items_per_thread = ItemsPerThread;
  static constexpr int min_blocks_per_sm = MinBlocksPerSm;
  static constexpr int staging_buffers = StagingBuffers;  // 0: two where they fit in 48 KB
  // Tiles of the block's walk asked of L2 beyond the one loaded ahead into registers (0:
  // none): memory kept busy further ahead without the registers to hold it.
  static constexpr int l2_ahead = L2Ahead;
  static constexpr int tile_items = BlockThreads * ItemsPerThread;
  static_assert(tile_items < 65536, "tile ranks are held in 16-bit-safe ints");
};

// sm_90, two-way and three-way alike: the stream compaction's shape (select_kernels.cuh):
// 256 threads, 128 bytes per thread in 16-byte chunks (at most 32 items; 8 where T does not
// fit 16-byte chunks, so the packed slot counts fit 64 bits), two blocks per SM, each
// holding its next tile's loads in registers and one parked tile (32 KB) in shared memory.
// H100, uint32, 2^28, x < 2^31, two-way, ms (CUB DevicePartition::If: 0.992 / 1.008; the
// previous two-way kernel, striped loads, ballot ranks, tickets, 256 x 16, 3/SM: 1.199):
//   256 x 32, 2/SM, cooperative (chosen)  0.833 / 0.831     tickets mode   0.836
//   256 x 16, 3/SM, cooperative           0.831  (two 16 KB staging buffers)
//   256 x 24, 2/SM, cooperative           0.858             256 x 20, 2/SM 0.879
// Two-way, from sm_90 on: the warp's part of the tile after the prefetched one is asked of
// L2 with one bulk prefetch (L2Ahead 1; H100, same runs: 0.850 -> 0.821 ms, CUB 0.996). The
// three-way partition gains 1 % from it (1.162 -> 1.149), compaction nothing (0.626 ->
// 0.619 at 50 % kept, 0.516 -> 0.525 at 1 %): left out of both.
// Other architectures (scanlab/arch.cuh): the same shape wherever two blocks fit an SM;
// Turing (64 KB per SM) takes half the bytes per thread and one staging buffer; before
// sm_90 (no bulk prefetch) no L2 prefetch. Only Hopper was measured.
template <class T, int BytesPerThread, int StagingBuffers, int L2Ahead = 0>
struct partition_shape {
  static constexpr int by_bytes = static_cast<int>(BytesPerThread / sizeof(T));
  static constexpr int chunk = detail::vector_items<T>;
  static constexpr int items =
      chunk > 1 ? (by_bytes > 32 ? 32 : (by_bytes < chunk ? chunk : by_bytes / chunk * chunk))
                : (by_bytes > 8 ? 8 : (by_bytes < 1 ? 1 : by_bytes));
  using policy = partition_policy<256, items, 2, StagingBuffers, L2Ahead>;
  // Three-way: half the items (64 bytes per thread, two 16 KB staging buffers): a second
  // counted class (its ranks and verdicts) and 32 items plus the 32 prefetched ones do not
  // fit in 128 registers (ptxas spilled 672 bytes per thread at 256 x 32).
  static constexpr int three_way_items = items / 2 < chunk ? items : items / 2;
  using three_way_policy = partition_policy<256, three_way_items, 2, StagingBuffers>;
};

template <class T>
struct partition_tuning {
  template <int Family>
  struct at {
    using type =
        typename partition_shape<T, Family == 75 ? 64 : 128, Family == 75 ? 1 : 0, Family >= 90 ? 1 : 0>::policy;
  };
};
template <class T>
struct three_way_tuning {
  template <int Family>
  struct at {
    using type = typename partition_shape<T, Family == 75 ? 64 : 128, Family == 75 ? 1 : 0>::three_way_policy;
  };
};

template <class T>
using default_partition_policy = partition_tuning<T>;
template <class T>
using default_two_way_policy = partition_tuning<T>;
template <class T>
using default_three_way_policy = three_way_tuning<T>;

// Shared-memory slot array for T that may lack a trivial default constructor.
template <class T, int Count>
struct raw_array {
  alignas(T) unsigned char bytes[sizeof(T) * Count];
  __device__ __forceinline__ T* data() { return reinterpret_cast<T*>(bytes); }
};

// ---- counts carried through the look-back ---------------------------------------------

// The counts of the classes but the last (K of them: 1 two-way, 2 three-way), in U: 32 bits
// while n < 2^32, else 64. Each counted class has its own tile state of U: a 32-bit count
// rides with its status in one 64-bit word (one relaxed access, no fence), where one state
// of both counts (8 bytes) would need a release store per tile (H100, three-way 2^28 u32:
// 1.52 ms with one 8-byte state, the same kernel with two 4-byte states: see partition.md).
template <class U, int K>
struct class_counts {
  using value_type = U;
  static constexpr int size = K;
  U c[K];
  __host__ __device__ friend class_counts operator+(const class_counts& a, const class_counts& b) {
    class_counts r;
    for (int k = 0; k < K; ++k) r.c[k] = a.c[k] + b.c[k];  // K is 1 or 2: unrolled by the compiler
    return r;
  }
};

// ---- classifiers ------------------------------------------------------------------------

// Two-way: class 0 (selected) where pred(x), else class 1.
template <class Pred>
struct by_predicate {
  static constexpr int classes = 2;
  Pred pred;
  template <class T>
  __device__ __forceinline__ int operator()(const T& x) const {
    return static_cast<bool>(pred(x)) ? 0 : 1;
  }
};

// Three-way around a pivot: 0 less (comp(x, pivot)), 2 greater (comp(pivot, x)), else 1.
template <class T, class Comp>
struct around_pivot {
  static constexpr int classes = 3;
  T pivot;
  Comp comp;
  __device__ __forceinline__ int operator()(const T& x) const {
    return comp(x, pivot) ? 0 : (comp(pivot, x) ? 2 : 1);
  }
};

// ---- the agent --------------------------------------------------------------------------

// The tiles are walked by the single-pass engine (device/single_pass.cuh: launch modes,
// round one, the deferred look-back, tickets), with one tile state per counted class.
using two_way_mode = device::single_pass_mode;

template <class InputIt, class OutputIt, class Count, class Classify>
struct partition_params {
  InputIt in;
  OutputIt out;           // class 0 from the start; the last class from the end (reversed)
  OutputIt rejected_out;  // two-way with two outputs: the rejected, in order; else unused
  OutputIt equal_out;     // three-way: the equal, in order (side buffer); else unused
  bool separate_rejected;
  bool vector_loads;      // in is a pointer aligned to 16 bytes: one 16-byte load per chunk
  std::int64_t* counts;   // written by the last tile: the selected, or (less, equal, greater)
  std::int64_t n;
  Classify classify;
  device::single_pass_schedule<typename Count::value_type, Count::size> schedule;  // a state per counted class
};

// One tile per block iteration:
//   1. load     lane l of warp w holds Items items as S slots of C consecutive items (C
//               items = 16 bytes where T allows): slot v starts at tile item
//               w*32*Items + v*32*C + l*C, so a warp's access covers 32*C contiguous items;
//   2. classify each item;
//   3. rank     per counted class (all but the last): the per-slot counts of a lane, packed
//               into one word (B bits per slot, enough for a slot's warp total 32*C), are
//               scanned across the warp at once, then the warp totals across the block
//               (the classes' totals packed in one word: one block scan);
//   4. publish  the tile's counts, each class on its own tile state;
//   5. park     the tile in a shared-memory staging buffer as [class 0 | class 1 | ...],
//               each in input order (an item of the last class ranks at its index minus
//               the items of the other classes before it), while the block does steps 1-4
//               for its next tile;
//   6. look back only then (warp k for class k, at once: the counts before the parked
//               tile were published a step earlier), and write the parked tile out: consecutive threads to
//               consecutive addresses, each class's run to its place.
template <class Policy, class InputIt, class OutputIt, class Count, class Classify>
struct partition_agent {
  using params_t = partition_params<InputIt, OutputIt, Count, Classify>;
  using T = std::remove_cv_t<typename std::iterator_traits<InputIt>::value_type>;
  static constexpr int classes = Classify::classes;
  static constexpr int K = classes - 1;  // counted classes
  static constexpr int block_threads = Policy::block_threads;
  static constexpr int I = Policy::items_per_thread;
  static constexpr int C = I % detail::vector_items<T> == 0 ? detail::vector_items<T> : 1;
  static constexpr int S = I / C;  // slots per thread
  static_assert(I <= 32, "the classes of a thread's items are the bits of one word");
  static constexpr int tile_items = Policy::tile_items;
  static constexpr int warp_items = 32 * I;

  // A slot's warp total is at most 32*C: B bits per field hold it and every prefix.
  static constexpr int field_bits = [] {
    int b = 1;
    while ((1 << b) <= 32 * C) ++b;
    return b;
  }();
  static_assert(S * field_bits <= 64, "too many slots per thread to pack their counts");
  using packed_t = std::conditional_t<S * field_bits <= 32, std::uint32_t, std::uint64_t>;
  static constexpr packed_t field_mask = (packed_t{1} << field_bits) - 1;

  // The warp totals of the counted classes, packed 32 bits apiece (a tile holds < 2^16).
  using warp_count_t = std::conditional_t<K == 1, std::uint32_t, std::uint64_t>;
  using block_scan_t = block_scan<warp_count_t, block_threads>;
  using U = typename Count::value_type;
  // Two staging buffers, used in turn, where they fit in static shared memory (the new tile
  // is gathered while the parked one is still there); one and one more barrier otherwise.
  static constexpr int buffers = Policy::staging_buffers > 0 ? Policy::staging_buffers
                                : (2 * sizeof(T) * tile_items + 1024 <= 48 * 1024 ? 2 : 1);

  struct temp_storage {
    typename block_scan_t::temp_storage scan;
    device::single_pass_storage<U, K> engine;
    raw_array<T, tile_items> staged[buffers];
  };
  static constexpr std::size_t smem_bytes = sizeof(temp_storage);

  // The engine's view (device/single_pass.cuh).
  using value_type = U;
  static constexpr int states = K;
  static constexpr int park_buffers = buffers;
  static constexpr bool early_look_back = false;

  const params_t& p;
  temp_storage& s;
  const int warp;
  const int lane;

  std::int64_t current_tile = 0;
  T x[S][C];                  // the current tile
  std::uint32_t is_class[K];  // its classes: bit v*C + c of is_class[k] for item c of slot v
  std::uint32_t rank[K][S];   // per class and slot: that class's items of the tile before the slot
  std::uint32_t total[K];     // per class: its items in the tile

  __device__ partition_agent(const params_t& params, temp_storage& storage)
      : p(params), s(storage), warp(static_cast<int>(threadIdx.x / 32)), lane(static_cast<int>(threadIdx.x % 32)) {}

  // The tile index of slot v's first item of this lane.
  __device__ int slot_index(int v) const { return warp * warp_items + v * 32 * C + lane * C; }

  __device__ int valid_items(std::int64_t tile) const {
    const std::int64_t left = p.n - tile * tile_items;
    return static_cast<int>(left < tile_items ? left : tile_items);
  }

  // ---- 1. load ----

  __device__ void load(T (&d)[S][C], std::int64_t tile) const {
    const std::int64_t tile_start = tile * tile_items;
    if constexpr (std::is_pointer_v<InputIt> && C > 1) {
      if (p.vector_loads && tile_start + tile_items <= p.n) {
#pragma unroll
        for (int v = 0; v < S; ++v) {
          const auto w = detail::load_vector(p.in + tile_start + slot_index(v));
#pragma unroll
          for (int c = 0; c < C; ++c) d[v][c] = w.items[c];
        }
        return;
      }
    }
    // Items past the end (last tile) repeat the tile's first; they are never stored.
    const int valid = valid_items(tile);
    const T first = static_cast<T>(p.in[tile_start]);
#pragma unroll
    for (int v = 0; v < S; ++v) {
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int i = slot_index(v) + c;
        d[v][c] = i < valid ? static_cast<T>(p.in[tile_start + i]) : first;
      }
    }
  }

  // ---- 2. classify, 3. rank (one barrier) ----

  __device__ void process() {
    const int valid = valid_items(current_tile);
    const bool full = valid == tile_items;
    packed_t counts[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
      is_class[k] = 0;
      counts[k] = 0;
    }
#pragma unroll
    for (int v = 0; v < S; ++v) {
      packed_t count[K] = {};
#pragma unroll
      for (int c = 0; c < C; ++c) {
        // Items past the end are of the last class: they stage at their own index (see gather).
        const int cls = (full || slot_index(v) + c < valid) ? p.classify(x[v][c]) : K;
#pragma unroll
        for (int k = 0; k < K; ++k) {
          is_class[k] = cls == k ? is_class[k] | (1u << (v * C + c)) : is_class[k];
          count[k] += cls == k ? 1 : 0;
        }
      }
#pragma unroll
      for (int k = 0; k < K; ++k) counts[k] |= count[k] << (v * field_bits);
    }
    warp_count_t warp_count = 0;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const packed_t inclusive = warp_inclusive_scan(counts[k], plus{});
      const packed_t exclusive = inclusive - counts[k];
      const packed_t totals = detail::shfl_idx(inclusive, 31);
      std::uint32_t running = 0;
#pragma unroll
      for (int v = 0; v < S; ++v) {
        rank[k][v] = running + static_cast<std::uint32_t>((exclusive >> (v * field_bits)) & field_mask);
        running += static_cast<std::uint32_t>((totals >> (v * field_bits)) & field_mask);
      }
      warp_count |= static_cast<warp_count_t>(running) << (32 * k);
    }
    warp_count_t warp_prefix = 0;
    warp_count_t block_total = 0;
    block_scan_t(s.scan).scan_warp_totals(warp_count, plus{}, warp_prefix, block_total);
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const auto before = static_cast<std::uint32_t>(warp_prefix >> (32 * k));
      total[k] = static_cast<std::uint32_t>(block_total >> (32 * k));
#pragma unroll
      for (int v = 0; v < S; ++v) rank[k][v] += before;
    }
  }

  // ---- 5. park ----

  // The current tile into staging buffer `buffer` as [class 0 | class 1 | last class], each
  // in input order. An item of the last class ranks at its index minus the counted items
  // before it; items past the end of the input (last class) land at their own index, past
  // the tile's valid items, where write_out does not read.
  __device__ void gather(int buffer) {
    T* staged = s.staged[buffer].data();
    std::uint32_t start[K];  // where each counted class's run starts in the staged tile
    std::uint32_t counted = 0;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      start[k] = counted;
      counted += total[k];
    }
#pragma unroll
    for (int v = 0; v < S; ++v) {
      std::uint32_t r[K];
#pragma unroll
      for (int k = 0; k < K; ++k) r[k] = rank[k][v];
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const std::uint32_t i = static_cast<std::uint32_t>(slot_index(v) + c);
        std::uint32_t before = 0;  // counted items before this one
        std::uint32_t at = 0;
        bool counted_class = false;
#pragma unroll
        for (int k = 0; k < K; ++k) {
          const bool in_k = (is_class[k] >> (v * C + c)) & 1u;
          before += r[k];
          at = in_k ? start[k] + r[k] : at;
          counted_class = counted_class || in_k;
          r[k] += in_k ? 1u : 0u;
        }
        staged[counted_class ? at : counted + (i - before)] = x[v][c];
      }
    }
  }

  // ---- 6. look back and write out ----

  // After the barrier that makes the staged tile visible: the tile's runs to their places
  // (r: the tile, its counts and the counts before it).
  __device__ void write_out(const device::retiring<U, K>& r, int buffer) const {
    const std::int64_t tile = r.tile;
    const std::int64_t tile_start = tile * tile_items;
    const int valid = valid_items(tile);
    std::int64_t before[K];
    std::uint32_t own[K];
    std::int64_t last_before = tile_start;  // items of the last class before the tile
#pragma unroll
    for (int k = 0; k < K; ++k) {
      before[k] = r.has_prefix ? static_cast<std::int64_t>(r.prefix[k]) : 0;
      own[k] = static_cast<std::uint32_t>(r.aggregate[k]);
      last_before -= before[k];
    }
    const int end0 = static_cast<int>(own[0]);
    const int end1 = K == 2 ? end0 + static_cast<int>(own[K - 1]) : end0;  // end of the equal run
    const T* staged = s.staged[buffer].data();
    // The tile's last-class item j goes to last[step * j].
    const OutputIt last = p.separate_rejected ? p.rejected_out + last_before : p.out + (p.n - 1 - last_before);
    const std::int64_t step = p.separate_rejected ? 1 : -1;
#pragma unroll 1
    for (int i = static_cast<int>(threadIdx.x); i < valid; i += block_threads) {
      const T v = staged[i];
      if (i < end0) {
        p.out[before[0] + i] = v;
      } else if (K == 2 && i < end1) {
        p.equal_out[before[K - 1] + (i - end0)] = v;
      } else {
        last[step * (i - end1)] = v;
      }
    }
    if (tile == p.schedule.num_tiles - 1 && threadIdx.x == 0) {
      std::int64_t counted = 0;
#pragma unroll
      for (int k = 0; k < K; ++k) {
        p.counts[k] = before[k] + own[k];
        counted += before[k] + own[k];
      }
      if constexpr (K == 2) p.counts[2] = p.n - counted;
    }
  }

  // ---- the engine's hooks (device/single_pass.cuh) ----
  // Steps 1-3 in start(), 5 in park() (the buffer of the step's parity), 6 in retire().

  T next[S][C];  // the block's next tile, loaded ahead

  __device__ plus op() const { return {}; }
  __device__ U aggregate_of(int k) const {
    U total_k = 0;
#pragma unroll
    for (int j = 0; j < K; ++j) total_k = j == k ? static_cast<U>(total[j]) : total_k;  // constant indices
    return total_k;
  }
  __device__ void begin(std::int64_t, std::int64_t) {}
  __device__ void advance(std::int64_t, int, std::int64_t) {}

  template <bool Ahead, bool Prefetched>
  __device__ void start(std::int64_t tile, int, std::int64_t) {
    current_tile = tile;
    if constexpr (Prefetched) {
#pragma unroll
      for (int v = 0; v < S; ++v) {
#pragma unroll
        for (int c = 0; c < C; ++c) x[v][c] = next[v][c];
      }
    } else {
      load(x, tile);
    }
    process();
  }

  __device__ void prefetch(std::int64_t tile) { load(next, tile); }

  // Policy::l2_ahead tiles further (the engine calls it): the warp's part of a whole tile,
  // asked of L2 (pointer inputs aligned for vector loads).
  static constexpr int l2_ahead =
      std::is_pointer_v<InputIt> && (warp_items * sizeof(T)) % 128 == 0 ? Policy::l2_ahead : 0;
  __device__ void prefetch_l2(std::int64_t tile) const {
    if constexpr (l2_ahead > 0) {
      if (p.vector_loads && (tile + 1) * tile_items <= p.n) {
        detail::warp_prefetch_l2<warp_items * static_cast<int>(sizeof(T))>(p.in + tile * tile_items + warp * warp_items,
                                                                           lane);
      }
    }
  }

  __device__ static int buffer_of(int step) { return buffers == 2 ? (step & 1) : 0; }

  __device__ void park(int step) { gather(buffer_of(step)); }

  __device__ void retire(const device::retiring<U, K>& r) { write_out(r, buffer_of(r.step)); }
};

// Tuning: one policy or a per-architecture table (scanlab/arch.cuh); the kernel runs the
// policy of the architecture it is compiled for.
template <class Tuning, class InputIt, class OutputIt, class Count, class Classify>
__global__ void __launch_bounds__(arch::active_policy<Tuning>::block_threads,
                                  arch::active_policy<Tuning>::min_blocks_per_sm)
    partition_tiles_kernel(const __grid_constant__ partition_params<InputIt, OutputIt, Count, Classify> p) {
  using Policy = arch::active_policy<Tuning>;
  using agent_t = partition_agent<Policy, InputIt, OutputIt, Count, Classify>;
  static_assert(arch::fits_block(arch::compiled_family, Policy::block_threads, agent_t::smem_bytes),
                "partition policy too large for the architecture being compiled (limits: scanlab/arch.cuh)");
  __shared__ typename agent_t::temp_storage storage;
  agent_t agent(p, storage);
  device::single_pass<agent_t>(agent, p.schedule, storage.engine).run();
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

// Keys-only sorts carry this in place of a value type.
struct no_value {};

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
