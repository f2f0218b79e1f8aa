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
// Three ways to run it (scan_mode), chosen by the dispatcher (device/scan_dispatch.cuh):
//   single_block  one block walks all tiles, keeping the window aggregates in shared memory;
//   cooperative   a cooperative (all-resident) grid of G blocks, block b taking tiles
//                 b, b + G, ... Round one: each block resets its tiles' states, scans tile b
//                 and publishes its aggregate; one grid-wide barrier; then every aggregate
//                 of round one is there, and each block computes its prefix with one round
//                 of parallel loads. Later tiles use the look-back, deferred by one step:
//                 a tile parks its local results in shared memory and looks back only
//                 after the block has scanned its next tile and published that aggregate
//                 (see run_cooperative). One launch, no initialisation kernel. With
//                 Prefetch, the next tile's loads are in flight during all of this.
//   tickets       where cooperative launch is unavailable or refused: tile states reset by a
//                 memset before the launch, tiles claimed in order from an atomic counter.
#pragma once

#include <scanlab/arch.cuh>
#include <scanlab/block/block_scan.cuh>
#include <scanlab/detail/shuffle.cuh>
#include <scanlab/device/scan_policy.cuh>
#include <scanlab/device/tile_state.cuh>
#include <scanlab/warp/warp_scan.cuh>

#include <cooperative_groups.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace scanlab::scan_detail {

enum class scan_mode : int { automatic = 0, single_block, cooperative, tickets };

template <class InputIt, class OutputIt, class T, class Op>
struct scan_params {
  InputIt in;
  OutputIt out;
  std::int64_t n;
  std::int64_t num_tiles;
  T init;  // exclusive only
  Op op;
  device::tile_state<T> state;
  scan_mode mode;
  bool exclusive;
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
  using state_t = device::tile_state<T>;

  static constexpr int block_threads = Policy::block_threads;
  static constexpr int warps = block_threads / 32;
  static constexpr int C = device::scan_chunk_items<T>;  // items per chunk
  static constexpr int V = Policy::items_per_thread / C;  // chunks per thread
  static_assert(V >= 1 && V * C == Policy::items_per_thread, "items per thread must be whole chunks");
  static constexpr std::int64_t warp_items = 32 * Policy::items_per_thread;
  static constexpr std::int64_t tile_items = Policy::tile_items;
  static constexpr bool can_vector_load = is_pointer_to<InputIt, T> && vector_io_type<T>;
  static constexpr bool can_vector_store = is_pointer_to<OutputIt, T> && vector_io_type<T>;
  static constexpr int vectors_per_chunk = vector_io_type<T> ? static_cast<int>(C * sizeof(T) / 16) : 1;
  static constexpr int window_tiles = state_t::window_tiles;
  // Round one computes its prefixes in one go up to this many windows (2048 tiles); a
  // grid larger than that (never on current GPUs) uses the look-back for the rest.
  static constexpr int max_round_windows = 64;

  // A parked tile (cooperative mode only, so it lives in dynamic shared memory that the
  // other modes do not ask for): [chunk][16-byte word][thread], or [chunk][item][thread]
  // for types that 16-byte words do not cover exactly.
  static constexpr bool park_vectors = vector_io_type<T>;
  static constexpr std::size_t parked_bytes =
      park_vectors ? sizeof(uint4) * V * vectors_per_chunk * block_threads : sizeof(raw_slot<T>) * V * C * block_threads;

  struct temp_storage {
    typename block_scan_t::temp_storage scan;
    raw_slot<T> tile_prefix;
    raw_slot<T> window_totals[max_round_windows];  // round one: R_v; single block: this window's aggregates
    std::int64_t next_tile;
  };
  // Shared memory of a block in cooperative mode (the most any mode asks for).
  static constexpr std::size_t smem_bytes = sizeof(temp_storage) + parked_bytes;

  using items_t = T[V][C];

  const params_t& p;
  temp_storage& s;
  unsigned char* const parked;  // parked_bytes of dynamic shared memory (cooperative mode)
  const int warp;
  const int lane;

  T x[V][C];          // the thread's items
  T lane_prefix[V];   // per slot: earlier lanes' total (lane > 0)
  T slot_total[V];    // per slot: the warp's total
  T aggregate;        // the tile's total

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

  // The tile's prefix as used for its items: init op E for exclusive scans (init alone
  // for tile 0), E for inclusive ones (nothing for tile 0).
  __device__ maybe<T> seeded(bool has_prefix, const T& prefix) const {
    maybe<T> m;
    if (p.exclusive) {
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
    if (!seed.valid) return;  // inclusive tile 0
#pragma unroll
    for (int c = 0; c < C; ++c) chunk[c] = p.op(seed.value, chunk[c]);
    if (p.exclusive && threadIdx.x == 0 && v == 0) chunk[0] = seed.value;  // the tile's first item
  }

  // The seeded prefix of `tile` from shared memory (warp 0 wrote it before a barrier).
  __device__ maybe<T> shared_seed(std::int64_t tile) const {
    T prefix;
    if (tile > 0) prefix = s.tile_prefix.load();
    return seeded(tile > 0, prefix);
  }

  // Broadcasts warp 0's prefix (valid for tile > 0) to the block, then finishes and stores x.
  __device__ void finish_with_shared_prefix(std::int64_t tile) {
    __syncthreads();
    const maybe<T> seed = shared_seed(tile);
#pragma unroll
    for (int v = 0; v < V; ++v) {
      finish(v, x[v], seed);
      store_chunk(tile, v, x[v]);
    }
  }

  // ---- single_block: the canonical prefix from shared memory ----
  __device__ void run_single() {
    const Op& op = p.op;
    T carry;  // C_w, warp 0 only
    bool has_carry = false;
    for (std::int64_t tile = 0; tile < p.num_tiles; ++tile) {
      load(x, tile);
      scan_local();
      if (warp == 0) {
        const int position = static_cast<int>(tile % window_tiles);
        const T value = lane < position ? s.window_totals[lane].load() : aggregate;
        const T scanned = warp_inclusive_scan(value, op);
        const T in_window = detail::shfl_idx(scanned, position > 0 ? position - 1 : 0);
        if (lane == 0) {
          s.window_totals[position].store(aggregate);
          if (position > 0) s.tile_prefix.store(device::tile_state_detail::then(has_carry, carry, in_window, op));
          else if (has_carry) s.tile_prefix.store(carry);
        }
        if (position == window_tiles - 1) {
          carry = device::tile_state_detail::then(has_carry, carry, detail::shfl_idx(scanned, window_tiles - 1), op);
          has_carry = true;
        }
      }
      finish_with_shared_prefix(tile);
      __syncthreads();  // the next tile reuses the shared slots
    }
  }

  // ---- cooperative ----
  // Round one is finished at once (its prefixes need no waiting after the grid barrier).
  // Every later tile is deferred by one step: it is scanned and publishes its aggregate,
  // then parks in shared memory while the block scans the next tile and publishes that
  // aggregate too; only then does warp 0 look back for the parked tile. So a look-back
  // finds the aggregates of the tiles before it published a whole step earlier and
  // seldom waits, and the blocks of a round do not wait for the slowest of them.
  __device__ void run_cooperative() {
    const std::int64_t grid = gridDim.x;
    const std::int64_t block = blockIdx.x;
    // Tiles b, b + G, ...: reset their states (thread 0 resets tile b, which it then publishes).
    for (std::int64_t t = block + threadIdx.x * grid; t < p.num_tiles; t += block_threads * grid) {
      p.state.init_tile(t);
    }
    load(x, block);
    scan_local();
    if (threadIdx.x == 0) p.state.publish_aggregate(block, aggregate);
    [[maybe_unused]] items_t next;
    std::int64_t tile = block;
    if constexpr (Policy::prefetch) {
      if (tile + grid < p.num_tiles) load(next, tile + grid);
    }
    // Orders the resets and round one's aggregates before everything below.
    cooperative_groups::this_grid().sync();
    round_one_prefix(block);
    finish_with_shared_prefix(tile);

    bool parked = false;  // a tile waits in shared memory (uniform across the block)
    std::int64_t parked_tile = 0;
    T parked_aggregate;  // its total (warp 0 needs it for the look-back)
    for (tile += grid; tile < p.num_tiles; tile += grid) {
      if constexpr (Policy::prefetch) {
        copy(next, x);
      } else {
        load(x, tile);
      }
      scan_local();
      if (threadIdx.x == 0) p.state.publish_aggregate(tile, aggregate);
      if constexpr (Policy::prefetch) {
        if (tile + grid < p.num_tiles) load(next, tile + grid);
      }
      if (parked && warp == 0) look_back(parked_tile, parked_aggregate);
      // Publishes the prefix, and keeps the next scan_local's writes to the shared warp
      // totals after every warp has read this tile's.
      __syncthreads();
      if (parked) {
        finish_parked<true>(parked_tile);
      } else {
#pragma unroll
        for (int v = 0; v < V; ++v) park(v, x[v]);
      }
      parked = true;
      parked_tile = tile;
      parked_aggregate = aggregate;
    }
    if (parked) {
      __syncthreads();  // every warp has read the last prefix before warp 0 writes the next
      if (warp == 0) look_back(parked_tile, parked_aggregate);
      __syncthreads();
      finish_parked<false>(parked_tile);
    }
  }

  // After the barrier that publishes the parked tile's prefix: each thread unparks its
  // chunks of that tile, applies the prefix and stores them; with ThenPark the current
  // tile's chunks take their slots (each thread touches only its own slots).
  template <bool ThenPark>
  __device__ void finish_parked(std::int64_t tile) {
    const maybe<T> seed = shared_seed(tile);
#pragma unroll
    for (int v = 0; v < V; ++v) {
      T chunk[C];
      unpark(v, chunk);
      finish(v, chunk, seed);
      store_chunk(tile, v, chunk);
      if constexpr (ThenPark) park(v, x[v]);
    }
  }

  __device__ static void copy(const items_t& from, items_t& to) {
#pragma unroll
    for (int v = 0; v < V; ++v) {
#pragma unroll
      for (int c = 0; c < C; ++c) to[v][c] = from[v][c];
    }
  }

  // Warp 0: the tile's canonical prefix into shared memory (tile > 0).
  __device__ void look_back(std::int64_t tile, const T& tile_aggregate) {
    if (tile == 0) return;
    const T prefix = p.state.exclusive_prefix(tile, tile_aggregate, p.op);
    if (lane == 0) s.tile_prefix.store(prefix);
  }

  // Round one (after the grid barrier): every aggregate of tiles < G is published, so the
  // canonical prefix of tile b is formed with one round of loads: each warp reduces some
  // of the earlier windows with the window tree, warp 0 scans this tile's window, and warp
  // 0 folds the window totals in order. Same expression as the look-back, same bits.
  __device__ void round_one_prefix(std::int64_t tile) {
    if (tile == 0) return;
    const Op& op = p.op;
    const std::int64_t window = tile / window_tiles;
    const int position = static_cast<int>(tile % window_tiles);
    if (window > max_round_windows) {  // beyond what one round is sized for: plain look-back
      if (warp == 0) look_back(tile, aggregate);
      return;
    }
    // Two windows per warp per round trip (enough for every resident grid of today's GPUs
    // in one trip; more registers would cost occupancy everywhere else).
    T own = aggregate;
    if (warp == 0 && lane < position) p.state.poll_aggregate(window * window_tiles + lane, own);
    for (std::int64_t v = warp; v < window; v += 2 * warps) {
      T values[2];
      p.state.poll_aggregate(v * window_tiles + lane, values[0]);
      if (v + warps < window) p.state.poll_aggregate((v + warps) * window_tiles + lane, values[1]);
#pragma unroll
      for (int k = 0; k < 2; ++k) {
        if (v + k * warps < window) {
          const T total = detail::shfl_idx(warp_inclusive_scan(values[k], op), window_tiles - 1);
          if (lane == 0) s.window_totals[v + k * warps].store(total);
        }
      }
    }
    __syncthreads();
    if (warp == 0) {
      T before;  // C_w: the window totals folded in order
      bool has_before = false;
      for (std::int64_t v = 0; v < window; ++v) {
        before = device::tile_state_detail::then(has_before, before, s.window_totals[v].load(), op);
        has_before = true;
      }
      const T scanned = warp_inclusive_scan(own, op);
      const T in_window = detail::shfl_idx(scanned, position > 0 ? position - 1 : 0);
      if (position == window_tiles - 1) {
        const T window_total = detail::shfl_idx(scanned, window_tiles - 1);  // every lane shuffles
        if (lane == 0) {
          p.state.publish_window_prefix(window + 1,
                                        device::tile_state_detail::then(has_before, before, window_total, op));
        }
      }
      const T prefix = position > 0 ? device::tile_state_detail::then(has_before, before, in_window, op) : before;
      if (lane == 0) s.tile_prefix.store(prefix);
    }
  }

  // ---- tickets ----
  __device__ void run_tickets() {
    if (threadIdx.x == 0) s.next_tile = p.state.claim_tile();
    __syncthreads();
    for (;;) {
      // Read before this tile's first barrier; thread 0 overwrites it after that barrier.
      const std::int64_t tile = s.next_tile;
      if (tile >= p.num_tiles) break;
      load(x, tile);
      scan_local();
      if (warp == 0) {
        if (lane == 0) {
          p.state.publish_aggregate(tile, aggregate);
          s.next_tile = p.state.claim_tile();
        }
        look_back(tile, aggregate);
      }
      finish_with_shared_prefix(tile);
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
  static_assert(arch::fits(arch::compiled_family, agent_t::block_threads, arch::active_policy<Tuning>::min_blocks_per_sm,
                           agent_t::smem_bytes),
                "scan policy too large for the architecture being compiled (limits: scanlab/arch.cuh)");
  __shared__ typename agent_t::temp_storage storage;
  extern __shared__ uint4 scan_parked_storage[];  // agent_t::parked_bytes in cooperative mode, else none
  agent_t agent(params, storage, reinterpret_cast<unsigned char*>(scan_parked_storage));
  switch (params.mode) {
    case scan_mode::single_block:
      agent.run_single();
      break;
    case scan_mode::cooperative:
      agent.run_cooperative();
      break;
    default:
      agent.run_tickets();
      break;
  }
}

}  // namespace scanlab::scan_detail
