// The single-pass engine: how scan, stream compaction, partition and linear recurrences
// hand their tiles to blocks and their running totals from tile to tile, in one kernel.
// Each algorithm keeps only its per-tile work (a "worker": load, local scan or count,
// scatter); everything below is here, once.
//
// Launch modes (single_pass_mode), chosen by launch_single_pass():
//   single_block  one block walks every tile in order (one tile; or forced, for tests);
//   cooperative   an all-resident cooperative grid of G blocks, block b taking tiles
//                 b, b + G, ... in increasing order (the default for more than one tile);
//   tickets       where cooperative launch is unavailable or refused (and when forced): a
//                 regular grid; blocks claim tiles in order from the ticket counter.
//
// A block's walk, tile by tile (the block's step s = 0, 1, ... handles tile t_s):
//   1. start    the worker loads tile t_s and does its local work; afterwards the tile's
//               aggregate (one value per tile state) is on every thread. Thread 0
//               publishes it at once.
//   2. defer    the tile waits (parks: in registers, per-thread shared memory, or a
//               staging buffer) while the block starts its next tile; only then does the
//               block look back for it. A look-back thus finds the aggregates of the tiles
//               before it published a whole step earlier and seldom waits, and the blocks
//               of a round do not wait for the slowest of them.
//   3. retire   after a barrier that publishes the prefix, the worker writes the parked
//               tile out, combining its local results with the prefix.
//   Round one (cooperative and single_block): each block resets the tile states of its
//   own tiles, starts its first tile and publishes it; one grid-wide barrier orders every
//   reset and every aggregate of round one before any look-back; then each block forms
//   its first tile's prefix with one round of parallel loads (no waiting) and retires it
//   at once. In tickets mode the states are reset by a memset before the launch.
//
// The prefix is the canonical one of tile_state.cuh (fixed windows of 32 tiles, one fixed
// combining tree): the same input gives the same bits in every mode, on any grid.
//
// The barrier rule. Every step has the worker's own block-wide barrier, inside start()
// (each local step ends in a block scan or count) and, unless the worker looks back early
// (below), one engine barrier between the look-back and the retire. Everything the engine
// keeps in shared memory is double-buffered by step parity (the prefix of the tile parked
// at step s goes to slot s & 1; the ticket of step s to slot s & 1), so one of those two
// barriers always lies between a slot's read and its next write. The worker's own parking
// follows the same rule through park_buffers, its count of shared parking buffers:
//   0  each thread parks and retires only its own data (registers or its own
//      shared-memory slots): no barrier needed between the two, and the worker's swap()
//      retires the parked tile and parks the new one in its place in one pass (fewer
//      registers live than a retire followed by a park);
//   1  one shared buffer: the engine puts a second barrier between the retire of the
//      parked tile and the park of the new one;
//   2  two buffers, used by step parity: the new tile is parked before the look-back;
//      start()'s barrier separates a retire from the next park into the same buffer.
// early_look_back: the look-back runs at the start of a step, on warps 0..K-1 while the
// others begin the worker's local step, whose barrier then publishes the prefix (linear
// recurrences: their local step is long and the look-back hides behind it).
//
// No deadlock: a look-back waits only on tiles below the tile looked back for. In
// cooperative and single_block mode every tile belongs to a resident block walking its
// tiles in increasing order; in tickets mode tiles are claimed in order, so every lower
// tile belongs to a running block. In both, the smallest unpublished tile belongs to a
// block whose pending look-back (for a lower tile) needs only published tiles: it goes on
// and publishes.
//
// The worker (one per block, in registers and the block's shared memory) provides:
//   using value_type;                 the tile-state value (count, scan value, affine map)
//   static constexpr int states;      K tile states (partition: one per counted class)
//   static constexpr int park_buffers; 0, 1 or 2 (above)
//   static constexpr bool early_look_back;
//   op()                              the combining operator of the values
//   start<Ahead, Prefetched>(tile, step, stride)
//                                     the local step (contains a block barrier); Ahead: the
//                                     block's tiles are known in advance, stride apart (not in
//                                     tickets mode: stride 0); Prefetched: prefetch(tile) ran
//                                     in the block's previous step; afterwards aggregate_of(k)
//                                     on every thread
//   aggregate_of(k)
//   prefetch(tile)                    the block's next tile, known ahead (not in tickets mode)
//   park(step)                        the current tile into its parking place
//   retire(const retiring<...>&)      the parked tile out, after the prefix barrier
//   swap(const retiring<...>&, step)  park_buffers 0: retire, then park the current tile
//   retire_started(const retiring<...>&)
//                                     park_buffers 0, round one: the tile start() just left,
//                                     retired without parking
//   advance(tile, step, stride)       end of a step (linear recurrences stage tiles ahead)
//   begin(first, stride)              before the first step (the same)
// and a single_pass_storage in its shared temp storage.
#pragma once

#include <scanlab/block/block_scan.cuh>
#include <scanlab/detail/launch.cuh>
#include <scanlab/device/tile_state.cuh>
#include <scanlab/error.hpp>

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstddef>
#include <cstdint>

namespace scanlab::device {

enum class single_pass_mode : int { automatic = 0, single_block, cooperative, tickets };

// The engine's part of a single-pass kernel's parameters: K tile states over the same
// tiles (the ticket counter is state[0]'s), the tile count, the mode of this launch.
template <class V, int K = 1>
struct single_pass_schedule {
  tile_state<V> state[K];
  std::int64_t num_tiles;
  single_pass_mode mode;

  // Host: every status invalid and the ticket counter zero, in stream order.
  [[nodiscard]] cudaError_t reset(cudaStream_t stream) const {
    for (int k = 0; k < K; ++k) SCANLAB_TRY(state[k].reset(stream));
    return cudaSuccess;
  }
};

// Round one forms its prefixes in one round of loads up to this many windows (2048 tiles);
// a grid larger than that (no GPU of today) looks back for the rest.
inline constexpr int round_one_windows = 64;

// The engine's shared memory, a member of the worker's temp storage.
template <class V, int K = 1>
struct single_pass_storage {
  scan_detail::raw_slot<V> prefix[2][K];                   // the parked tile's prefix, by step parity
  scan_detail::raw_slot<V> window_totals[round_one_windows];  // round one: the window totals R_v
  std::int64_t ticket[2];                        // tickets mode: the next tile, by step parity
};

// A parked tile as the worker retires it: its tile, step, own aggregates and (tile > 0)
// its exclusive prefixes.
template <class V, int K>
struct retiring {
  std::int64_t tile;
  int step;
  V aggregate[K];
  V prefix[K];
  bool has_prefix;
};

template <class Worker>
class single_pass {
 public:
  using V = typename Worker::value_type;
  static constexpr int K = Worker::states;
  using schedule_t = single_pass_schedule<V, K>;
  using storage_t = single_pass_storage<V, K>;
  static_assert(Worker::park_buffers >= 0 && Worker::park_buffers <= 2, "park_buffers: 0, 1 or 2 (single_pass.cuh)");
  // Optional: Worker::l2_ahead > 0 asks the worker to prefetch_l2(tile) that many tiles
  // beyond the one it loads ahead (blocks whose tiles are known ahead only).
  static constexpr int l2_ahead = [] {
    if constexpr (requires { Worker::l2_ahead; }) {
      return Worker::l2_ahead;
    } else {
      return 0;
    }
  }();
  // Optional: Worker::look_back_depth > 0 makes each look-back's first round trip also
  // load that many earlier windows (tile_state::exclusive_prefix): fewer second round trips
  // where the look-back is on a step's critical path (early_look_back workers).
  static constexpr int look_back_depth = [] {
    if constexpr (requires { Worker::look_back_depth; }) {
      return Worker::look_back_depth;
    } else {
      return 0;
    }
  }();

  __device__ single_pass(Worker& worker, const schedule_t& schedule, storage_t& storage)
      : w_(worker), p_(schedule), s_(storage), warp_(static_cast<int>(threadIdx.x / 32)),
        lane_(static_cast<int>(threadIdx.x % 32)) {}

  __device__ void run() {
    if (p_.mode == single_pass_mode::tickets) {
      walk<true>();
    } else {
      walk<false>();
    }
  }

 private:
  struct parked_tile {
    std::int64_t tile;
    int step;
    V aggregate[K];
  };

  // Tiles b, b + G, ... (cooperative; single_block: every tile) or claimed (tickets).
  template <bool Tickets>
  __device__ void walk() {
    const std::int64_t num_tiles = p_.num_tiles;
    const std::int64_t stride = Tickets ? 0 : static_cast<std::int64_t>(gridDim.x);
    std::int64_t tile = blockIdx.x;
    int step = 0;
    if constexpr (Tickets) {
      if (threadIdx.x == 0) s_.ticket[0] = p_.state[0].claim_tile();
      __syncthreads();
      tile = s_.ticket[0];
      if (tile >= num_tiles) return;
      w_.begin(tile, stride);
    } else {
      // Their states invalid (thread 0 resets tile b, which it publishes itself), ordered
      // before every look-back by round one's barrier.
      for (std::int64_t t = tile + threadIdx.x * stride; t < num_tiles; t += Worker::block_threads * stride) {
#pragma unroll
        for (int k = 0; k < K; ++k) p_.state[k].init_tile(t);
      }
      if (tile >= num_tiles) return;
      w_.begin(tile, stride);
      round_one(start<true, false>(tile, step, stride));
      w_.advance(tile, step, stride);
      tile += stride;
      ++step;
    }
    parked_tile parked;
    bool has_parked = false;
    for (; tile < num_tiles; ++step) {
      if constexpr (Tickets) {
        // Read at the end of this step, after start()'s barrier.
        if (threadIdx.x == 0) s_.ticket[(step + 1) & 1] = p_.state[0].claim_tile();
      }
      if constexpr (Worker::early_look_back) {
        if (has_parked) look_back(parked);
      }
      const parked_tile current = start<!Tickets, !Tickets>(tile, step, stride);
      if constexpr (Worker::park_buffers == 2) w_.park(step);
      if constexpr (!Worker::early_look_back) {
        if (has_parked) look_back(parked);
        __syncthreads();
      }
      if constexpr (Worker::park_buffers == 0) {
        if (has_parked) {
          w_.swap(retiring_of(parked), step);
        } else {
          w_.park(step);
        }
      } else {
        if (has_parked) w_.retire(retiring_of(parked));
        if constexpr (Worker::park_buffers == 1) {
          __syncthreads();  // the retired tile has left the one buffer
          w_.park(step);
        }
      }
      parked = current;
      has_parked = true;
      w_.advance(tile, step, stride);
      tile = Tickets ? s_.ticket[(step + 1) & 1] : tile + stride;
    }
    if (has_parked) {
      look_back(parked);
      __syncthreads();
      w_.retire(retiring_of(parked));
    }
  }

  // The worker's local step; thread 0 publishes the aggregates; the block's next tile, if
  // known, is requested. Ahead: the block's tiles are known in advance (not tickets);
  // Prefetched: prefetch(tile) ran in the block's previous step. Both compile-time, so a
  // worker's step holds only the loads it uses.
  template <bool Ahead, bool Prefetched>
  __device__ parked_tile start(std::int64_t tile, int step, std::int64_t stride) {
    w_.template start<Ahead, Prefetched>(tile, step, stride);
    parked_tile current{tile, step, {}};
#pragma unroll
    for (int k = 0; k < K; ++k) current.aggregate[k] = w_.aggregate_of(k);
    if (threadIdx.x == 0) {
#pragma unroll
      for (int k = 0; k < K; ++k) p_.state[k].publish_aggregate(tile, current.aggregate[k]);
    }
    if (Ahead && tile + stride < p_.num_tiles) w_.prefetch(tile + stride);
    if constexpr (l2_ahead > 0) {
      const std::int64_t further = tile + (1 + l2_ahead) * stride;
      if (Ahead && further < p_.num_tiles) w_.prefetch_l2(further);
    }
    return current;
  }

  // Warps 0..K-1, warp k for state k: the parked tile's prefix into slot step & 1.
  __device__ void look_back(const parked_tile& t) {
    if (t.tile == 0) return;
#pragma unroll
    for (int k = 0; k < K; ++k) {  // constant indices: no local-memory copies
      if (warp_ == k) look_back_state(k, t);
    }
  }

  // One warp: the tile's prefix of state k (the walk of tile_state::exclusive_prefix) into
  // slot step & 1.
  __device__ void look_back_state(int k, const parked_tile& t) {
    const V prefix = p_.state[k].template exclusive_prefix<look_back_depth>(t.tile, t.aggregate[k], w_.op());
    if (lane_ == 0) s_.prefix[t.step & 1][k].store(prefix);
  }

  // After the barrier that published the prefix (slot step & 1): the parked tile as the
  // worker retires it.
  __device__ retiring<V, K> retiring_of(const parked_tile& t) const {
    retiring<V, K> r;
    r.tile = t.tile;
    r.step = t.step;
    r.has_prefix = t.tile > 0;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      r.aggregate[k] = t.aggregate[k];
      // Defined for tile 0 too: left unset, the register would carry the previous tile's
      // prefix around the walk, and at the register cap it is spilled (compaction: 6 %).
      r.prefix[k] = r.has_prefix ? s_.prefix[t.step & 1][k].load() : V{};
    }
    return r;
  }

  // Round one (step 0 of cooperative and single_block): one grid-wide barrier (a block
  // barrier for a single block), the started tile's prefixes from one round of loads, and
  // it retires at once. A worker that parks in shared buffers parks it before the barrier;
  // one that parks each thread's own data (park_buffers 0) retires it from where start()
  // left it (retire_started): it waits only for the barrier, so parking would be a detour.
  __device__ void round_one(const parked_tile& t) {
    if constexpr (Worker::park_buffers > 0) w_.park(t.step);
    if (p_.mode == single_pass_mode::cooperative) {
      cooperative_groups::this_grid().sync();
    } else {
      __syncthreads();
    }
    if (t.tile > 0) {
      V prefix[K];
      if (tile_state<V>::template published_prefix<Worker::block_threads>(p_.state, t.tile, t.aggregate, w_.op(),
                                                                         s_.window_totals, prefix)) {
        if (threadIdx.x == 0) {
#pragma unroll
          for (int k = 0; k < K; ++k) s_.prefix[t.step & 1][k].store(prefix[k]);
        }
      } else {
        look_back(t);  // a grid larger than one round is sized for
      }
    }
    __syncthreads();
    if constexpr (Worker::park_buffers > 0) {
      w_.retire(retiring_of(t));
    } else {
      w_.retire_started(retiring_of(t));
    }
  }

  Worker& w_;
  const schedule_t& p_;
  storage_t& s_;
  const int warp_;
  const int lane_;
};

// ---- host ---------------------------------------------------------------------------

// Launches a single-pass kernel over params.schedule.num_tiles tiles (>= 1): the mode
// (automatic: single_block for one tile, else cooperative; cooperative falls back to
// tickets where the device cannot launch it or the runtime refuses the grid), the grid
// (as many blocks as are resident, at most max_blocks if > 0, at most one per tile), the
// tile-state reset of tickets mode. smem: the kernel's dynamic shared memory, the same
// on every launch of that kernel.
template <auto Kernel, class Params>
[[nodiscard]] cudaError_t launch_single_pass(Params params, int block_threads, std::size_t smem,
                                             single_pass_mode mode, int max_blocks, cudaStream_t stream) {
  auto& schedule = params.schedule;
  const std::int64_t tiles = schedule.num_tiles;
  if (mode == single_pass_mode::automatic) {
    mode = tiles == 1 ? single_pass_mode::single_block : single_pass_mode::cooperative;
  }
  std::int64_t grid = 1;
  if (mode == single_pass_mode::single_block) {
    SCANLAB_TRY(detail::allow_dynamic_smem(Kernel, smem));
  } else {
    int capacity = 0;
    bool cooperative = false;
    SCANLAB_TRY(detail::resident_grid<Kernel>(block_threads, INT_MAX, capacity, cooperative, smem));
    if (max_blocks > 0 && max_blocks < capacity) capacity = max_blocks;
    if (mode == single_pass_mode::cooperative && !cooperative) mode = single_pass_mode::tickets;
    grid = tiles < capacity ? tiles : capacity;
  }
  schedule.mode = mode;
  if (mode == single_pass_mode::cooperative) {
    const cudaError_t status =
        detail::launch_cooperative_smem(Kernel, static_cast<int>(grid), block_threads, smem, stream, params);
    if (status != cudaErrorCooperativeLaunchTooLarge) return status;
    // Refused (detail/launch.cuh): the same grid takes its tiles by ticket instead.
    schedule.mode = single_pass_mode::tickets;
  }
  if (schedule.mode == single_pass_mode::tickets) SCANLAB_TRY(schedule.reset(stream));
  return detail::launch(Kernel, static_cast<unsigned>(grid), block_threads, smem, stream, params);
}

}  // namespace scanlab::device
