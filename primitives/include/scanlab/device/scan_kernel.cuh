// The production scan's kernel: one tile per block iteration, single pass.
//
// Tile layout. Thread (warp w, lane l) holds ItemsPerThread items as V chunks of C
// consecutive items (C x sizeof(T) = 16 bytes where the type allows). Chunk v of lane l
// in warp w starts at item  w * 32 * Items + v * 32 * C + l * C  of the tile, so for a
// fixed v the warp reads or writes 32 x 16 contiguous bytes with one 16-byte access per
// lane: coalesced vector I/O without a shared-memory transpose. The price is one warp
// scan per chunk slot instead of one per thread, which the instruction budget of a
// memory-bound kernel easily pays.
//
// Inside a tile: each chunk is scanned serially, each slot v across the warp with
// shuffles, slots in order, warps in order (block_scan::scan_warp_totals). Every item's
// result is  E op (((W op S_0 op ... op S_{v-1}) op L) op local)  with E the tile's
// exclusive prefix, W the earlier warps, S the earlier slots of this warp, L the earlier
// lanes of this slot: the tile-local result is complete before E is known. Across tiles, E is the canonical prefix of device/tile_state.cuh (windows of
// 32 tiles), seeded with init for exclusive scans: init op E. All groupings are fixed by
// the tile boundaries, so the same input gives the same bits in every launch mode.
//
// The tiles are walked by the single-pass engine (device/single_pass.cuh: launch modes,
// round one, the deferred look-back); this file is the scan's worker, its per-tile work.
// A tile waiting for its prefix parks in shared memory, each thread its own chunks.
#pragma once

#include <scanlab/arch.cuh>
#include <scanlab/block/block_scan.cuh>
#include <scanlab/detail/shuffle.cuh>
#include <scanlab/device/scan_policy.cuh>
#include <scanlab/device/single_pass.cuh>
#include <scanlab/device/tile_state.cuh>
#include <scanlab/warp/warp_scan.cuh>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace scanlab::scan_detail {

using scan_mode = device::single_pass_mode;

// What each output holds: in[0] op ... op in[i] (inclusive), init op in[0] op ... op in[i]
// (inclusive_init), or init op in[0] op ... op in[i - 1] (exclusive).
enum class scan_kind : unsigned char { inclusive, inclusive_init, exclusive };
constexpr scan_kind kind_of(bool exclusive) { return exclusive ? scan_kind::exclusive : scan_kind::inclusive; }

template <class InputIt, class OutputIt, class T, class Op>
struct scan_params {
  InputIt in;
  OutputIt out;
  std::int64_t n;
  T init;  // inclusive_init and exclusive only
  Op op;
  device::single_pass_schedule<T> schedule;
  bool exclusive;     // kind == exclusive
  bool has_init;      // kind != inclusive
  bool vector_load;   // d_in is 16-byte aligned (checked by the dispatcher)
  bool vector_store;  // d_out is 16-byte aligned
};

// A value that may not exist yet (no identity element is assumed anywhere).
template <class T>
struct maybe {
  T value;
  bool valid;
};

// a op b, or b when a does not exist.
template <class T, class Op>
__device__ __forceinline__ maybe<T> then(const maybe<T>& a, const T& b, const Op& op) {
  return maybe<T>{a.valid ? op(a.value, b) : b, true};
}

template <class It, class T>
inline constexpr bool is_pointer_to =
    std::is_pointer_v<It> && std::is_same_v<std::remove_cv_t<std::remove_pointer_t<It>>, T>;

// Types that 16-byte accesses cover exactly: divisors and multiples of 16 bytes.
template <class T>
inline constexpr bool vector_io_type = sizeof(T) <= 16 ? (16 % sizeof(T) == 0) : (sizeof(T) % 16 == 0);

template <class Policy, class InputIt, class OutputIt, class T, class Op>
struct scan_agent {
  using params_t = scan_params<InputIt, OutputIt, T, Op>;
  using block_scan_t = block_scan<T, Policy::block_threads>;

  static constexpr int block_threads = Policy::block_threads;
  static constexpr int C = device::scan_chunk_items<T>;  // items per chunk
  static constexpr int V = Policy::items_per_thread / C;  // chunks per thread
  static_assert(V >= 1 && V * C == Policy::items_per_thread, "items per thread must be whole chunks");
  static constexpr std::int64_t warp_items = 32 * Policy::items_per_thread;
  static constexpr std::int64_t tile_items = Policy::tile_items;
  static constexpr bool can_vector_load = is_pointer_to<InputIt, T> && vector_io_type<T>;
  static constexpr bool can_vector_store = is_pointer_to<OutputIt, T> && vector_io_type<T>;
  static constexpr int vectors_per_chunk = vector_io_type<T> ? static_cast<int>(C * sizeof(T) / 16) : 1;
  // A parked tile, in dynamic shared memory: [chunk][16-byte word][thread], or
  // [chunk][item][thread] for types that 16-byte words do not cover exactly.
  static constexpr bool park_vectors = vector_io_type<T>;
  static constexpr std::size_t parked_bytes =
      park_vectors ? sizeof(uint4) * V * vectors_per_chunk * block_threads : sizeof(raw_slot<T>) * V * C * block_threads;

  struct temp_storage {
    typename block_scan_t::temp_storage scan;
    device::single_pass_storage<T> engine;
  };
  static constexpr std::size_t smem_bytes = sizeof(temp_storage) + parked_bytes;

  // The engine's view (device/single_pass.cuh).
  using value_type = T;
  static constexpr int states = 1;
  static constexpr int park_buffers = 0;  // each thread parks its own chunks
  static constexpr bool early_look_back = false;

  using items_t = T[V][C];

  const params_t& p;
  temp_storage& s;
  unsigned char* const parked;  // parked_bytes of dynamic shared memory
  const int warp;
  const int lane;

  T x[V][C];          // the thread's items
  T lane_prefix[V];   // per slot: earlier lanes' total (lane > 0)
  T slot_total[V];    // per slot: the warp's total
  T aggregate;        // the tile's total
  [[maybe_unused]] items_t next;  // the block's next tile, loaded ahead (Policy::prefetch)

  __device__ scan_agent(const params_t& params, temp_storage& storage, unsigned char* parked_storage)
      : p(params),
        s(storage),
        parked(parked_storage),
        warp(static_cast<int>(threadIdx.x / 32)),
        lane(static_cast<int>(threadIdx.x % 32)) {}

  // ---- tile I/O ----

  __device__ void load(items_t& items, std::int64_t tile) const {
    const std::int64_t tile_base = tile * tile_items;
    const std::int64_t base = tile_base + warp * warp_items + lane * C;
    if (tile_base + tile_items <= p.n) {
      if constexpr (can_vector_load) {
        if (p.vector_load) {
          const uint4* source = reinterpret_cast<const uint4*>(p.in + base);
          uint4 raw[V][vectors_per_chunk];
#pragma unroll
          for (int v = 0; v < V; ++v) {
#pragma unroll
            for (int q = 0; q < vectors_per_chunk; ++q) raw[v][q] = source[v * 32 * vectors_per_chunk + q];
          }
#pragma unroll
          for (int v = 0; v < V; ++v) std::memcpy(items[v], raw[v], sizeof(items[v]));
          return;
        }
      }
#pragma unroll
      for (int v = 0; v < V; ++v) {
#pragma unroll
        for (int c = 0; c < C; ++c) items[v][c] = static_cast<T>(p.in[base + v * 32 * C + c]);
      }
      return;
    }
    // The last, partial tile: items past the end copy the tile's first item, so every
    // register holds a valid T (they only flow into results that are not stored).
    const T first = static_cast<T>(p.in[tile_base]);
#pragma unroll
    for (int v = 0; v < V; ++v) {
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const std::int64_t i = base + v * 32 * C + c;
        items[v][c] = i < p.n ? static_cast<T>(p.in[i]) : first;
      }
    }
  }

  // Chunk v of the thread's items in a tile (the same positions load() reads).
  __device__ void store_chunk(std::int64_t tile, int v, const T (&chunk)[C]) const {
    const std::int64_t tile_base = tile * tile_items;
    const std::int64_t base = tile_base + warp * warp_items + v * 32 * C + lane * C;
    if (tile_base + tile_items <= p.n) {
      if constexpr (can_vector_store) {
        if (p.vector_store) {
          uint4* target = reinterpret_cast<uint4*>(p.out + base);
          uint4 raw[vectors_per_chunk];
          std::memcpy(raw, chunk, sizeof(chunk));
#pragma unroll
          for (int q = 0; q < vectors_per_chunk; ++q) target[q] = raw[q];
          return;
        }
      }
#pragma unroll
      for (int c = 0; c < C; ++c) p.out[base + c] = chunk[c];
      return;
    }
#pragma unroll
    for (int c = 0; c < C; ++c) {
      if (base + c < p.n) p.out[base + c] = chunk[c];
    }
  }

  // ---- a tile waiting for its prefix, parked in shared memory ----
  // Each thread parks and unparks only its own chunks (no barrier needed between the
  // two), laid out [chunk][thread] so a warp touches consecutive 16-byte words.

  __device__ uint4& parked_vector(int v, int q) const {
    return reinterpret_cast<uint4*>(parked)[(v * vectors_per_chunk + q) * block_threads + threadIdx.x];
  }
  __device__ raw_slot<T>& parked_item(int v, int c) const {
    return reinterpret_cast<raw_slot<T>*>(parked)[(v * C + c) * block_threads + threadIdx.x];
  }

  __device__ void park(int v, const T (&chunk)[C]) {
    if constexpr (park_vectors) {
      uint4 raw[vectors_per_chunk];
      std::memcpy(raw, chunk, sizeof(chunk));
#pragma unroll
      for (int q = 0; q < vectors_per_chunk; ++q) parked_vector(v, q) = raw[q];
    } else {
#pragma unroll
      for (int c = 0; c < C; ++c) parked_item(v, c).store(chunk[c]);
    }
  }

  __device__ void unpark(int v, T (&chunk)[C]) const {
    if constexpr (park_vectors) {
      uint4 raw[vectors_per_chunk];
#pragma unroll
      for (int q = 0; q < vectors_per_chunk; ++q) raw[q] = parked_vector(v, q);
      std::memcpy(chunk, raw, sizeof(chunk));
    } else {
#pragma unroll
      for (int c = 0; c < C; ++c) chunk[c] = parked_item(v, c).load();
    }
  }

  // ---- inside the tile ----

  // Everything that does not need the tile's prefix: x becomes the tile-local scan
  // (inclusive, or exclusive for exclusive scans) and `aggregate` the tile's total, on
  // every thread (one __syncthreads inside). For an exclusive scan the tile's first item
  // has no local value: finish() gives it the prefix alone.
  __device__ void scan_local() {
    const Op& op = p.op;
#pragma unroll
    for (int v = 0; v < V; ++v) {
#pragma unroll
      for (int c = 1; c < C; ++c) x[v][c] = op(x[v][c - 1], x[v][c]);
    }
#pragma unroll
    for (int v = 0; v < V; ++v) {
      T inclusive;
      warp_exclusive_scan_unseeded(x[v][C - 1], op, lane_prefix[v], inclusive);
      slot_total[v] = detail::shfl_idx(inclusive, 31);
    }
    T warp_total = slot_total[0];
#pragma unroll
    for (int v = 1; v < V; ++v) warp_total = op(warp_total, slot_total[v]);
    T warp_prefix;
    const bool has_warp_prefix = block_scan_t(s.scan).scan_warp_totals(warp_total, op, warp_prefix, aggregate);

    // Each chunk's local prefix: earlier warps, earlier slots of this warp, earlier lanes.
    maybe<T> running{warp_prefix, has_warp_prefix};
#pragma unroll
    for (int v = 0; v < V; ++v) {
      maybe<T> r = running;
      if (lane != 0) r = then(r, lane_prefix[v], op);
      if (p.exclusive) {
#pragma unroll
        for (int c = C - 1; c > 0; --c) x[v][c] = r.valid ? op(r.value, x[v][c - 1]) : x[v][c - 1];
        if (r.valid) x[v][0] = r.value;  // else: the tile's first item
      } else if (r.valid) {
#pragma unroll
        for (int c = 0; c < C; ++c) x[v][c] = op(r.value, x[v][c]);
      }
      if (v + 1 < V) running = then(running, slot_total[v], op);
    }
  }

  // The tile's prefix as used for its items: init op E for scans with an initial value
  // (init alone for tile 0), E for the others (nothing for tile 0).
  __device__ maybe<T> seeded(bool has_prefix, const T& prefix) const {
    maybe<T> m;
    if (p.has_init) {
      m.value = has_prefix ? p.op(p.init, prefix) : p.init;
      m.valid = true;
    } else {
      m.valid = has_prefix;
      if (has_prefix) m.value = prefix;
    }
    return m;
  }

  // Chunk v of a locally scanned tile becomes output: the seeded prefix (if any) op each item.
  __device__ void finish(int v, T (&chunk)[C], const maybe<T>& seed) const {
    if (!seed.valid) return;  // tile 0 of an inclusive scan without init
#pragma unroll
    for (int c = 0; c < C; ++c) chunk[c] = p.op(seed.value, chunk[c]);
    if (p.exclusive && threadIdx.x == 0 && v == 0) chunk[0] = seed.value;  // the tile's first item
  }

  // ---- the engine's hooks (device/single_pass.cuh) ----

  __device__ Op op() const { return p.op; }
  __device__ T aggregate_of(int) const { return aggregate; }

  __device__ void begin(std::int64_t, std::int64_t) {}
  __device__ void advance(std::int64_t, int, std::int64_t) {}

  // The tile's items (loaded ahead by prefetch() when the block's next tile was known),
  // scanned locally.
  template <bool Ahead, bool Prefetched>
  __device__ void start(std::int64_t tile, int, std::int64_t) {
    if constexpr (Prefetched && Policy::prefetch) {
      copy(next, x);
    } else {
      load(x, tile);
    }
    scan_local();
  }

  __device__ void prefetch(std::int64_t tile) {
    if constexpr (Policy::prefetch) load(next, tile);
  }

  __device__ void park(int) {
#pragma unroll
    for (int v = 0; v < V; ++v) park(v, x[v]);
  }

  // Each thread unparks its chunks of the parked tile, applies the prefix and stores them;
  // with Park, the current tile's chunks take their slots, chunk by chunk.
  template <bool Park = false>
  __device__ void retire(const device::retiring<T, 1>& r) {
    const maybe<T> seed = seeded(r.has_prefix, r.prefix[0]);
#pragma unroll
    for (int v = 0; v < V; ++v) {
      T chunk[C];
      unpark(v, chunk);
      finish(v, chunk, seed);
      store_chunk(r.tile, v, chunk);
      if constexpr (Park) park(v, x[v]);
    }
  }
  __device__ void swap(const device::retiring<T, 1>& r, int) { retire<true>(r); }

  // Round one: the tile start() just scanned, finished straight from the registers.
  __device__ void retire_started(const device::retiring<T, 1>& r) {
    const maybe<T> seed = seeded(r.has_prefix, r.prefix[0]);
#pragma unroll
    for (int v = 0; v < V; ++v) {
      finish(v, x[v], seed);
      store_chunk(r.tile, v, x[v]);
    }
  }

  __device__ static void copy(const items_t& from, items_t& to) {
#pragma unroll
    for (int v = 0; v < V; ++v) {
#pragma unroll
      for (int c = 0; c < C; ++c) to[v][c] = from[v][c];
    }
  }
};

// Tuning: one policy or a per-architecture table (scanlab/arch.cuh); the kernel runs the
// policy of the architecture it is compiled for.
template <class Tuning, class InputIt, class OutputIt, class T, class Op>
__global__ void __launch_bounds__(arch::active_policy<Tuning>::block_threads,
                                  arch::active_policy<Tuning>::min_blocks_per_sm)
    scan_tiles_kernel(const __grid_constant__ scan_params<InputIt, OutputIt, T, Op> params) {
  using agent_t = scan_agent<arch::active_policy<Tuning>, InputIt, OutputIt, T, Op>;
  static_assert(arch::fits_block(arch::compiled_family, agent_t::block_threads, agent_t::smem_bytes),
                "scan policy too large for the architecture being compiled (limits: scanlab/arch.cuh)");
  __shared__ typename agent_t::temp_storage storage;
  extern __shared__ uint4 scan_parked_storage[];  // agent_t::parked_bytes
  agent_t agent(params, storage, reinterpret_cast<unsigned char*>(scan_parked_storage));
  device::single_pass<agent_t>(agent, params.schedule, storage.engine).run();
}

}  // namespace scanlab::scan_detail
