// The kernels behind scanlab/algorithms/partition.cuh (and the partition levels of
// scanlab/algorithms/quicksort.cuh): single-pass two-way and three-way partitions on the
// decoupled look-back tile state (device/tile_state.cuh).
//
// Two-way (two_way_agent below): the stream compaction's structure (select_kernels.cuh):
// 16-byte lane-contiguous loads, packed per-slot counts ranked by one warp scan, a
// cooperative grid whose first round is written out at once after a grid barrier, and the
// deferred look-back (each tile parked in shared memory until its block has published its
// next tile's count). The difference: the staged tile holds every item, [selected |
// rejected] each in input order, and goes to two output streams.
//
// Three-way (partition3_tiles_kernel, also the quicksort's, over many segments). One tile =
// BlockThreads x Items elements, handed out in order from a ticket counter. For each tile:
//
//   1. load     striped: warp w's item k of lane l is element  w*32*Items + k*32 + l  of the
//               tile, so every load instruction of a warp reads 32 consecutive elements
//               (coalesced for any alignment: segments of a quicksort start anywhere);
//   2. classify each item: class 0 (less), 1 (equal), 2 (greater);
//   3. rank     with ballots: for item k, the items of class c before it in its warp are the
//               earlier slots' counts plus popc(ballot_k(c) & lanes below); warp counts go
//               through shared memory (no block-wide scan is needed);
//   4. look back warp 0 publishes the tile's (less, equal) in one 16-byte value and gets
//               the counts of all tiles before it (the greater are tile_start - less - equal);
//   5. compact  the tile in shared memory: [less | equal | greater], each in input order;
//   6. store    from shared memory, consecutive threads to consecutive addresses: each
//               class's run of the tile goes to one contiguous range of the output.
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

#include <scanlab/block/block_reduce.cuh>
#include <scanlab/block/block_scan.cuh>
#include <scanlab/detail/shuffle.cuh>
#include <scanlab/detail/util.cuh>
#include <scanlab/detail/vector_io.cuh>
#include <scanlab/device/tile_state.cuh>
#include <scanlab/error.hpp>
#include <scanlab/functional.cuh>
#include <scanlab/warp/warp_scan.cuh>

#include <cooperative_groups.h>
#include <cuda/std/cmath>
#include <cuda_runtime.h>

#include <cstdint>
#include <iterator>
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

// sm_90. Three-way (and the quicksort's levels): 256 threads, 64 bytes per thread (16
// four-byte or 8 eight-byte items), the tile goes through shared memory once (16 KB); four
// blocks per SM keep 64 KB of loads in flight per SM.
// Two-way: the stream compaction's shape (select_kernels.cuh): 256 threads, 128 bytes per
// thread in 16-byte chunks (at most 32 items; 8 where T does not fit 16-byte chunks, so the
// packed slot counts fit 64 bits), two blocks per SM, each holding its next tile's loads in
// registers and one parked tile (32 KB) in shared memory. H100, uint32, 2^28, x < 2^31, ms
// (CUB DevicePartition::If: 0.992 / 1.008; the previous two-way kernel, striped loads,
// ballot ranks, tickets, 256 x 16, 3/SM: 1.199):
//   256 x 32, 2/SM, cooperative (chosen)  0.833 / 0.831     tickets mode   0.836
//   256 x 16, 3/SM, cooperative           0.831  (two 16 KB staging buffers)
//   256 x 24, 2/SM, cooperative           0.858             256 x 20, 2/SM 0.879
template <class T>
struct partition_tuning_sm90 {
  static constexpr int raw_items = static_cast<int>(64 / sizeof(T));
  static constexpr int items = raw_items < 1 ? 1 : (raw_items > 16 ? 16 : raw_items);
  using policy = partition_policy<256, items, sizeof(T) <= 4 ? 4 : 3>;
  static constexpr int by_bytes = static_cast<int>(128 / sizeof(T));
  static constexpr int chunk = detail::vector_items<T>;
  static constexpr int two_way_items =
      chunk > 1 ? (by_bytes > 32 ? 32 : (by_bytes < chunk ? chunk : by_bytes / chunk * chunk))
                : (by_bytes > 8 ? 8 : (by_bytes < 1 ? 1 : by_bytes));
  using two_way_policy = partition_policy<256, two_way_items, 2>;
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

// Launch modes of the two-way kernel (as the stream compaction's, select_kernels.cuh).
//   cooperative  an all-resident grid of G blocks, block b taking tiles b, b+G, ...: each
//                block resets its tiles' states, ranks tile b and publishes its count; one
//                grid-wide barrier; then every count of round one is there, block b sums
//                those of tiles < b with one block-wide round of loads and writes tile b
//                out at once. Later tiles use the deferred look-back.
//   tickets      where cooperative launch is unavailable: states reset by a memset, tiles
//                claimed in order from the tile state's ticket counter, all deferred.
enum class two_way_mode : int { automatic = 0, cooperative, tickets };

template <class InputIt, class OutputIt, class Count, class Pred>
struct partition_params {
  InputIt in;
  OutputIt out;
  OutputIt rejected_out;  // two outputs: the rejected, in order; else unused
  bool separate_rejected;
  bool vector_loads;  // in is a pointer aligned to 16 bytes: one 16-byte load per chunk
  std::int64_t* num_selected;
  std::int64_t n;
  std::int64_t num_tiles;
  Pred pred;
  device::tile_state<Count> state;
  two_way_mode mode;  // cooperative or tickets
};

// One tile per block iteration:
//   1. load     lane l of warp w holds Items items as S slots of C consecutive items (C
//               items = 16 bytes where T allows): slot v starts at tile item
//               w*32*Items + v*32*C + l*C, so a warp's access covers 32*C contiguous items;
//   2. evaluate the predicate per item;
//   3. rank     the selected: the per-slot counts of a lane, packed into one word (B bits
//               per slot, enough for a slot's warp total 32*C), are scanned across the
//               warp at once, then the warp totals across the block;
//   4. publish  the tile's selected count on the tile state;
//   5. park     the tile in a shared-memory staging buffer as [selected | rejected], each
//               in input order (an item's rejected rank is its index minus its selected
//               rank), while the block does steps 1-4 for its next tile;
//   6. look back only then (warp 0: the counts before the parked tile were published a
//               step earlier), and write the parked tile out: consecutive threads to
//               consecutive addresses, the selected run to out[S + j], the rejected run
//               to out[n - 1 - (R + j)] or rejected_out[R + j].
template <class Policy, class InputIt, class OutputIt, class Count, class Pred>
struct two_way_agent {
  using params_t = partition_params<InputIt, OutputIt, Count, Pred>;
  using T = std::remove_cv_t<typename std::iterator_traits<InputIt>::value_type>;
  static constexpr int block_threads = Policy::block_threads;
  static constexpr int I = Policy::items_per_thread;
  static constexpr int C = I % detail::vector_items<T> == 0 ? detail::vector_items<T> : 1;
  static constexpr int S = I / C;  // slots per thread
  static_assert(I <= 32, "the verdicts of a thread's items are the bits of one word");
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

  using block_scan_t = block_scan<std::uint32_t, block_threads>;
  using block_reduce_t = block_reduce<Count, block_threads>;
  // Two staging buffers, used in turn, where they fit in static shared memory (the new tile
  // is gathered while the parked one is still there); one and one more barrier otherwise.
  static constexpr int buffers = 2 * sizeof(T) * tile_items + 1024 <= 48 * 1024 ? 2 : 1;

  struct temp_storage {
    union {
      typename block_scan_t::temp_storage scan;
      typename block_reduce_t::temp_storage reduce;
    } collective;
    Count tile_prefix;  // the selected before the tile being written out
    std::int64_t next_tile;
    raw_array<T, tile_items> staged[buffers];
  };

  const params_t& p;
  temp_storage& s;
  const int warp;
  const int lane;

  std::int64_t current_tile = 0;
  T x[S][C];               // the current tile
  std::uint32_t keep;      // its verdicts: bit v*C + c for item c of slot v (one register)
  std::uint32_t rank[S];   // per slot: the selected of the tile before the slot's first item
  std::uint32_t selected;  // selected items in the tile

  __device__ two_way_agent(const params_t& params, temp_storage& storage)
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
    // Items past the end (last tile) repeat the tile's first; they are never kept or stored.
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

  // ---- 2. evaluate, 3. rank (one barrier) ----

  __device__ void process() {
    const int valid = valid_items(current_tile);
    const bool full = valid == tile_items;
    keep = 0;
    packed_t counts = 0;
#pragma unroll
    for (int v = 0; v < S; ++v) {
      packed_t count = 0;
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const bool k = (full || slot_index(v) + c < valid) && static_cast<bool>(p.pred(x[v][c]));
        keep = k ? keep | (1u << (v * C + c)) : keep;
        count += k ? 1 : 0;
      }
      counts |= count << (v * field_bits);
    }
    const packed_t inclusive = warp_inclusive_scan(counts, plus{});
    const packed_t exclusive = inclusive - counts;
    const packed_t totals = detail::shfl_idx(inclusive, 31);
    std::uint32_t warp_count = 0;
#pragma unroll
    for (int v = 0; v < S; ++v) {
      rank[v] = warp_count + static_cast<std::uint32_t>((exclusive >> (v * field_bits)) & field_mask);
      warp_count += static_cast<std::uint32_t>((totals >> (v * field_bits)) & field_mask);
    }
    std::uint32_t warp_prefix = 0;
    block_scan_t(s.collective.scan).scan_warp_totals(warp_count, plus{}, warp_prefix, selected);
#pragma unroll
    for (int v = 0; v < S; ++v) rank[v] += warp_prefix;
  }

  // ---- 5. park ----

  // The current tile into staging buffer `buffer` as [selected | rejected], in input order.
  // An item's rejected rank is its index minus the selected before it. Items past the end
  // of the input (never selected) land at their own index, past the tile's valid items,
  // where write_out does not read.
  __device__ void gather(int buffer) {
    T* staged = s.staged[buffer].data();
#pragma unroll
    for (int v = 0; v < S; ++v) {
      std::uint32_t r = rank[v];
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const bool k = (keep >> (v * C + c)) & 1u;
        const std::uint32_t i = static_cast<std::uint32_t>(slot_index(v) + c);
        staged[k ? r : selected + (i - r)] = x[v][c];
        r += k ? 1u : 0u;
      }
    }
  }

  // ---- 6. look back and write out ----

  // Warp 0: the selected before `tile` into s.tile_prefix.
  __device__ void look_back(std::int64_t tile, std::uint32_t count) {
    if (tile == 0) return;
    const Count prefix = p.state.exclusive_prefix(tile, static_cast<Count>(count), plus{});
    if (lane == 0) s.tile_prefix = prefix;
  }

  // After the barrier that makes s.tile_prefix (tile > 0) and the staged tile visible.
  __device__ void write_out(std::int64_t tile, std::uint32_t count, int buffer) const {
    const std::int64_t tile_start = tile * tile_items;
    const int valid = valid_items(tile);
    const int sel = static_cast<int>(count);
    const std::int64_t selected_before = tile > 0 ? static_cast<std::int64_t>(s.tile_prefix) : 0;
    const std::int64_t rejected_before = tile_start - selected_before;
    const T* staged = s.staged[buffer].data();
    // The tile's rejected item j goes to rejected[step * j].
    const OutputIt rejected =
        p.separate_rejected ? p.rejected_out + rejected_before : p.out + (p.n - 1 - rejected_before);
    const std::int64_t step = p.separate_rejected ? 1 : -1;
#pragma unroll 1
    for (int i = static_cast<int>(threadIdx.x); i < valid; i += block_threads) {
      const T v = staged[i];
      if (i < sel) {
        p.out[selected_before + i] = v;
      } else {
        rejected[step * (i - sel)] = v;
      }
    }
    if (tile == p.num_tiles - 1 && threadIdx.x == 0) *p.num_selected = selected_before + sel;
  }

  // A tile waiting in a staging buffer for its prefix (tile < 0: none); the same on every thread.
  struct parked_tile {
    std::int64_t tile = -1;
    std::uint32_t count = 0;
    int buffer = 0;
  };

  // Once per tile, after its count is published: the current tile is gathered, warp 0
  // looks back for the parked one, which is written out; the current one is parked. The
  // barrier runs every time (also with nothing parked): the next tile's rank rewrites the
  // shared warp totals. With two buffers the barrier inside the next process() separates
  // this write_out from the gather that reuses its buffer.
  __device__ void defer(parked_tile& parked) {
    const int buffer = buffers == 2 ? parked.buffer ^ 1 : 0;
    if constexpr (buffers == 2) gather(buffer);
    if (warp == 0 && parked.tile >= 0) look_back(parked.tile, parked.count);
    __syncthreads();
    if (parked.tile >= 0) write_out(parked.tile, parked.count, parked.buffer);
    if constexpr (buffers == 1) {
      __syncthreads();  // the parked tile has left the buffer
      gather(buffer);
    }
    parked = {current_tile, selected, buffer};
  }

  __device__ void drain(const parked_tile& parked) {
    if (parked.tile < 0) return;
    if (warp == 0) look_back(parked.tile, parked.count);
    __syncthreads();
    write_out(parked.tile, parked.count, parked.buffer);
  }

  // ---- the modes ----

  __device__ void run_cooperative() {
    const std::int64_t grid = gridDim.x;
    const std::int64_t block = blockIdx.x;
    for (std::int64_t t = block + threadIdx.x * grid; t < p.num_tiles; t += block_threads * grid) {
      p.state.init_tile(t);  // thread 0 resets tile `block`, which it publishes below
    }
    current_tile = block;
    load(x, block);
    process();
    if (threadIdx.x == 0) p.state.publish_aggregate(block, static_cast<Count>(selected));
    T next[S][C];  // the next tile's loads are in flight while this one is handled
    if (block + grid < p.num_tiles) load(next, block + grid);
    gather(0);
    // Orders every reset and round one's counts before everything below.
    cooperative_groups::this_grid().sync();
    round_one_prefix(block);
    __syncthreads();
    write_out(block, selected, 0);
    parked_tile parked;  // with two buffers the first deferred tile takes the other one
    for (std::int64_t tile = block + grid; tile < p.num_tiles; tile += grid) {
      current_tile = tile;
#pragma unroll
      for (int v = 0; v < S; ++v) {
#pragma unroll
        for (int c = 0; c < C; ++c) x[v][c] = next[v][c];
      }
      process();
      if (threadIdx.x == 0) p.state.publish_aggregate(tile, static_cast<Count>(selected));
      if (tile + grid < p.num_tiles) load(next, tile + grid);
      defer(parked);
    }
    drain(parked);
  }

  // Round one, after the grid barrier: every count of tiles < G is published, so block b
  // sums those of tiles < b with one block-wide round of loads. A tile that ends a window
  // of the tile state publishes that window's successor prefix, as a look-back would.
  __device__ void round_one_prefix(std::int64_t tile) {
    if (tile == 0) return;
    Count sum = 0;
    for (std::int64_t t = threadIdx.x; t < tile; t += block_threads) {
      Count count = 0;
      p.state.poll_aggregate(t, count);  // published before the barrier
      sum += count;
    }
    const Count prefix = block_reduce_t(s.collective.reduce).reduce(sum, plus{});
    if (threadIdx.x == 0) {
      s.tile_prefix = prefix;
      constexpr int window_tiles = device::tile_state<Count>::window_tiles;
      if (tile % window_tiles == window_tiles - 1) {
        p.state.publish_window_prefix(tile / window_tiles + 1, prefix + static_cast<Count>(selected));
      }
    }
  }

  __device__ void run_tickets() {
    if (threadIdx.x == 0) s.next_tile = p.state.claim_tile();
    __syncthreads();
    parked_tile parked;
    for (;;) {
      // Read before this tile's barrier in process(); thread 0 overwrites it after that
      // barrier, and defer()'s barrier orders the new value before the next read.
      const std::int64_t tile = s.next_tile;
      if (tile >= p.num_tiles) break;
      current_tile = tile;
      load(x, tile);
      process();
      if (threadIdx.x == 0) {
        p.state.publish_aggregate(tile, static_cast<Count>(selected));  // before the look-back: no deadlock
        s.next_tile = p.state.claim_tile();
      }
      defer(parked);
    }
    drain(parked);
  }
};

template <class Policy, class InputIt, class OutputIt, class Count, class Pred>
__global__ void __launch_bounds__(Policy::block_threads, Policy::min_blocks_per_sm)
    partition_tiles_kernel(const __grid_constant__ partition_params<InputIt, OutputIt, Count, Pred> p) {
  using agent_t = two_way_agent<Policy, InputIt, OutputIt, Count, Pred>;
  __shared__ typename agent_t::temp_storage storage;
  agent_t agent(p, storage);
  if (p.mode == two_way_mode::cooperative) {
    agent.run_cooperative();
  } else {
    agent.run_tickets();
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
