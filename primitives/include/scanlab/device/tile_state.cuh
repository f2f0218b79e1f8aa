// Decoupled look-back tile state: how the tiles of a single-pass algorithm (scan,
// stream compaction, partition) hand their running totals forward, deterministically.
//
// Tiles are grouped in aligned windows of 32 (window w = tiles 32w .. 32w+31). The state
// holds two kinds of entries, each a status and a value:
//   per tile t    invalid | aggregate    A_t, the tile's own total, published as soon as
//                                        the tile is reduced;
//   per window w  invalid | inclusive    C_w, the total of all tiles before window w
//                                        (tiles 0 .. 32w-1), published by tile 32w-1.
//
// The canonical prefix. Let R_w be the window total and X_t the in-window prefix, both
// taken from ONE fixed tree: the warp Kogge-Stone inclusive scan of the window's 32
// aggregates (lane i holding A_{32w+i}): X_t = that scan at lane t-32w-1, R_w = at lane 31.
// Then  C_1 = R_0,  C_{w+1} = C_w op R_w,  and the exclusive prefix of tile t is
// E_t = C_w op X_t (just X_t in window 0, just C_w for the first tile of a window).
// Every quantity is one fixed expression of the aggregates: whichever published C a
// look-back happens to find, folding the window totals forward from it gives the same
// bits. So results never depend on timing, for floats too (a look-back that reduces
// whatever it finds ready, as usual, rounds differently from run to run).
//
// Protocol, for the user of this header:
//   1. Every status must read "invalid" before any tile can look at it: reset(stream)
//      (a cudaMemsetAsync of reset_bytes(), ordered before the kernel by the stream), or
//      init_tile() for every tile inside a cooperative kernel, then a grid-wide barrier.
//      Temp storage arrives uninitialised: this is needed on every call.
//   2. Tile t publishes its aggregate (one thread), then, for t >= 1, one whole warp calls
//      exclusive_prefix(t, A_t, op), which returns E_t and, when t ends a window,
//      publishes C_{w+1}. Tile 0 has no prefix.
//   3. A look-back waits only on tiles below it. It cannot deadlock if every lower tile is
//      being processed by a block that is already resident: hand tiles out in order with
//      claim_tile() (a block holding tile t got it after tiles < t were handed to running
//      blocks, which wait only on tiles below themselves), or launch a cooperative
//      (all-resident) grid whose blocks walk their tiles in increasing order.
//
// Memory ordering (CUDA/PTX memory model, gpu scope): a value is cut into 32-bit pieces
// and each piece shares a 64-bit word with the status, written and read with single
// relaxed gpu-scope accesses (st.relaxed.gpu / ld.relaxed.gpu). A reader issues the loads
// of all of a slot's words together (one round trip) and takes the value only when every
// word says valid: each word is written once per call, after the reset, so a valid word
// holds its final piece. The reader needs nothing but the words themselves: no fences, no
// acquire/release pairs, no second round trip for the value.
#pragma once

#include <scanlab/detail/shuffle.cuh>
#include <scanlab/functional.cuh>
#include <scanlab/detail/util.cuh>
#include <scanlab/warp/warp_scan.cuh>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace scanlab::device {

enum class tile_status : std::uint32_t { invalid = 0, aggregate = 1, inclusive = 2 };

namespace tile_state_detail {

__device__ __forceinline__ std::uint64_t load_relaxed(const std::uint64_t* address) {
  std::uint64_t value;
  asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(value) : "l"(address) : "memory");
  return value;
}
__device__ __forceinline__ void store_relaxed(std::uint64_t* address, std::uint64_t value) {
  asm volatile("st.relaxed.gpu.u64 [%0], %1;" ::"l"(address), "l"(value) : "memory");
}
// A flag and a separate value, ordered by release/acquire: what the teaching ladder's
// chained scan (ladder/scan_ladder.cuh) uses. tile_state itself needs neither (above).
__device__ __forceinline__ std::uint32_t load_acquire(const std::uint32_t* address) {
  std::uint32_t value;
  asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(value) : "l"(address) : "memory");
  return value;
}
__device__ __forceinline__ void store_release(std::uint32_t* address, std::uint32_t value) {
  asm volatile("st.release.gpu.u32 [%0], %1;" ::"l"(address), "r"(value) : "memory");
}

// A T read from / written to L2 (bypassing L1) in 4-byte words, for values another
// block wrote. The address must be 4-byte aligned.
template <class T>
__device__ __forceinline__ T load_cg(const T* address) {
  constexpr int words = static_cast<int>((sizeof(T) + 3) / 4);
  unsigned int raw[words];
  const unsigned int* source = reinterpret_cast<const unsigned int*>(address);
#pragma unroll
  for (int w = 0; w < words; ++w) raw[w] = __ldcg(source + w);
  T value;
  std::memcpy(&value, raw, sizeof(T));
  return value;
}
template <class T>
__device__ __forceinline__ void store_cg(T* address, const T& value) {
  constexpr int words = static_cast<int>((sizeof(T) + 3) / 4);
  unsigned int raw[words] = {};
  std::memcpy(raw, &value, sizeof(T));
  unsigned int* target = reinterpret_cast<unsigned int*>(address);
#pragma unroll
  for (int w = 0; w < words; ++w) __stcg(target + w, raw[w]);
}

// Bytes of one 4-byte aligned slot holding a T: padded to whole 4-byte words.
template <class T>
inline constexpr std::size_t slot_bytes = (sizeof(T) + 3) / 4 * 4;

// The 32-bit pieces a T is cut into (the last one padded).
template <class T>
inline constexpr int pieces = static_cast<int>((sizeof(T) + 3) / 4);

// a op b, or b when a does not exist (no identity element is ever needed).
template <class T, class Op>
__device__ __forceinline__ T then(bool has_a, const T& a, const T& b, const Op& op) {
  return has_a ? op(a, b) : b;
}

}  // namespace tile_state_detail

template <class T>
class tile_state {
  static_assert(std::is_trivially_copyable_v<T>, "tile values must be trivially copyable");

 public:
  static constexpr int window_tiles = 32;
  // 64-bit words per slot: one per 32-bit piece of the value, each with the status.
  static constexpr int words = tile_state_detail::pieces<T>;

  __host__ __device__ static constexpr std::int64_t windows(std::int64_t num_tiles) {
    return num_tiles / window_tiles + 1;
  }

  // Layout: [ticket counter, padded to 128 B][tile slots][window slots], a slot being
  // `words` 64-bit words. A reset zeroes all of it (every status invalid).
  static constexpr std::size_t header_bytes = 128;
  static constexpr std::size_t slot_size = sizeof(std::uint64_t) * words;
  __host__ __device__ static constexpr std::size_t reset_bytes(std::int64_t num_tiles) {
    return header_bytes + static_cast<std::size_t>(num_tiles + windows(num_tiles)) * slot_size;
  }
  __host__ __device__ static constexpr std::size_t storage_bytes(std::int64_t num_tiles) {
    return reset_bytes(num_tiles);
  }

  tile_state() = default;
  // d_storage: storage_bytes(num_tiles) bytes of device memory, 128-byte aligned.
  __host__ __device__ tile_state(void* d_storage, std::int64_t num_tiles) : num_tiles_(num_tiles) {
    auto* bytes = static_cast<unsigned char*>(d_storage);
    counter_ = reinterpret_cast<unsigned long long*>(bytes);
    tile_slots_ = reinterpret_cast<std::uint64_t*>(bytes + header_bytes);
    window_slots_ = tile_slots_ + static_cast<std::size_t>(num_tiles) * words;
  }

  [[nodiscard]] __host__ __device__ std::int64_t num_tiles() const { return num_tiles_; }

  // Host: every status invalid and the ticket counter zero, in stream order.
  [[nodiscard]] cudaError_t reset(cudaStream_t stream) const {
    return cudaMemsetAsync(counter_, 0, reset_bytes(num_tiles_), stream);
  }

  // Device, inside a kernel, once per tile: the tile's status (and, for a tile that ends a
  // window, that window's successor prefix) invalid. Order before any look-back with a
  // grid-wide barrier. Block 0 also zeroes the ticket counter with init_counter().
  __device__ void init_tile(std::int64_t tile) const {
    clear(tile_slots_, tile);
    if (tile % window_tiles == window_tiles - 1) clear(window_slots_, tile / window_tiles + 1);
  }
  __device__ void init_counter() const { *counter_ = 0; }

  // The next tile in launch order (one thread per block calls it).
  __device__ std::int64_t claim_tile() const { return static_cast<std::int64_t>(atomicAdd(counter_, 1ull)); }

  // One thread: the tile's own total.
  __device__ void publish_aggregate(std::int64_t tile, const T& aggregate) const {
    publish(tile_slots_, tile, tile_status::aggregate, aggregate);
  }
  // One thread: C_w, the total of the tiles before window w (w >= 1).
  __device__ void publish_window_prefix(std::int64_t window, const T& prefix) const {
    publish(window_slots_, window, tile_status::inclusive, prefix);
  }

  // One poll: the status, and the value unless invalid.
  __device__ tile_status poll_aggregate(std::int64_t tile, T& value) const {
    return poll(tile_slots_, tile, value);
  }
  __device__ tile_status poll_window_prefix(std::int64_t window, T& value) const {
    return poll(window_slots_, window, value);
  }

  // Warp-cooperative look-back: all 32 lanes of one warp, for tile >= 1, after the tile's
  // aggregate was published. Returns E_t (the canonical exclusive prefix, on every lane);
  // if the tile ends a window, also publishes the next window's prefix.
  //
  // First the aggregates of the earlier tiles in the tile's own window (waiting until they
  // are published); then C_w: the window prefix published at the end of the previous
  // window if it is there, else that window's total is formed from its 32 aggregates and
  // the walk goes one window further back, two windows per poll, until a published
  // prefix (or tile 0) is reached; the window totals met on the way are folded forward
  // from it. Only aggregates are ever waited for, and tiles publish them early.
  //
  // Depth > 0 makes the first round trip speculative: it also loads the aggregates of the
  // Depth windows before the tile's and their published prefixes, so that a tile whose
  // C_w is not out yet (the tile ending the previous window is still looking back itself)
  // usually forms it without a second round trip. Worth it where the look-back is on the
  // critical path and the tiles published a step earlier (linear recurrences); the same
  // bits either way.
  template <int Depth = 0, class Op>
  __device__ T exclusive_prefix(std::int64_t tile, const T& own_aggregate, Op op) const {
    const int lane = static_cast<int>(detail::scan_lane());
    const int position = static_cast<int>(tile % window_tiles);
    const std::int64_t window = tile / window_tiles;
    const std::int64_t first = tile - position;
    // One round trip in the common case: the earlier aggregates of this window and the
    // window's published prefix are polled together (Depth > 0: lane d also polls C_{w-d},
    // and the Depth windows before are polled with them).
    T value = own_aggregate;
    tile_status status = tile_status::aggregate;
    T published;
    tile_status published_status = tile_status::invalid;
    earlier_windows<Depth> earlier;
    if constexpr (Depth == 0) {
      if (lane < position) status = poll_aggregate(first + lane, value);
      if (window > 0 && lane == 0) published_status = poll_window_prefix(window, published);
    } else {
      earlier = first_round_trip<Depth>(tile, value, status, published, published_status);
    }
    while (!__all_sync(detail::full_warp_mask, status != tile_status::invalid)) {
      if (lane < position) status = poll_aggregate(first + lane, value);
    }
    if (lane >= position) value = own_aggregate;
    const T scanned = warp_inclusive_scan(value, op);
    const T in_window = detail::shfl_idx(scanned, position > 0 ? position - 1 : 0);

    T before_window;
    bool has_before = false;
    if (window > 0) {
      has_before = true;
      if (__shfl_sync(detail::full_warp_mask, published_status == tile_status::inclusive ? 1 : 0, 0) != 0) {
        before_window = detail::shfl_idx(published, 0);
      } else {
        bool formed = false;
        if constexpr (Depth > 0) formed = polled_prefix(window, op, earlier, published, published_status, before_window);
        if (!formed) window_prefix(window, op, before_window);
      }
    }
    if (position == window_tiles - 1) {
      const T window_total = detail::shfl_idx(scanned, window_tiles - 1);
      if (lane == 0) {
        publish_window_prefix(window + 1, tile_state_detail::then(has_before, before_window, window_total, op));
      }
    }
    return position > 0 ? tile_state_detail::then(has_before, before_window, in_window, op) : before_window;
  }

  // C_w for window w >= 1 (on every lane of the calling warp); returns true (it exists).
  template <class Op>
  __device__ bool window_prefix(std::int64_t window, Op op, T& prefix) const {
    constexpr int batch = 2;  // windows examined per poll
    const int lane = static_cast<int>(detail::scan_lane());
    // Totals of the windows walked over, newest first: lane j holds the j-th one.
    T walked;
    int depth = 0;
    std::int64_t next = window - 1;  // the window whose successor prefix C_{next+1} is wanted
    for (;;) {
      T aggregates[batch];
      tile_status aggregate_status[batch];
#pragma unroll
      for (int b = 0; b < batch; ++b) {
        aggregate_status[b] = tile_status::invalid;
        if (next - b >= 0) aggregate_status[b] = poll_aggregate((next - b) * window_tiles + lane, aggregates[b]);
      }
      T published;
      tile_status published_status = tile_status::invalid;
      if (lane < batch && next - lane >= 0) published_status = poll_window_prefix(next + 1 - lane, published);
      const unsigned published_lanes =
          __ballot_sync(detail::full_warp_mask, lane < batch && published_status == tile_status::inclusive);
#pragma unroll
      for (int b = 0; b < batch; ++b) {
        const std::int64_t w = next;  // == original next - b
        const bool start_found = (published_lanes >> b) & 1u;
        if (start_found || w < 0) {
          // Fold forward: C_{w+1} (or nothing, below window 0), then the walked totals.
          bool has = start_found;
          T acc;
          if (start_found) acc = detail::shfl_idx(published, b);
          for (int j = depth - 1; j >= 0; --j) {
            acc = tile_state_detail::then(has, acc, detail::shfl_idx(walked, j), op);
            has = true;
          }
          prefix = acc;
          return true;
        }
        const bool complete = __all_sync(detail::full_warp_mask, aggregate_status[b] != tile_status::invalid);
        if (!complete || depth == window_tiles) break;  // wait (or no room to walk further): poll again
        const T total = detail::shfl_idx(warp_inclusive_scan(aggregates[b], op), window_tiles - 1);
        if (lane == depth) walked = total;
        ++depth;
        --next;
      }
    }
  }

  // Block-cooperative (every thread of a block of BlockThreads), for K states over the same
  // tiles: E_t of each state when every aggregate of tiles <= t is already published
  // (after a grid-wide barrier: round one of a cooperative launch), from one round of loads
  // instead of a walk. Each warp reduces some of the earlier windows with the window tree
  // into `window_totals` (shared memory, Capacity slots), warp 0 folds them in order and
  // scans the tile's own window: the same expression as exclusive_prefix, so the same
  // bits. A tile that ends a window publishes the next window's prefix, as the look-back
  // would. The results are on thread 0; returns false (nothing done) when the tile's
  // window is past Capacity (look back instead). tile >= 1; one __syncthreads inside per
  // state and one between states (the window totals are reused).
  //
  // Counts (unsigned integers under plus: every grouping gives the same value) take a
  // shorter road: each thread sums the aggregates of some tiles below, of every state at
  // once (their loads in flight together), then one block-wide sum; no window cap; one
  // __syncthreads.
  template <int BlockThreads, int K, class Op, class Slot, int Capacity>
  __device__ static bool published_prefix(const tile_state (&states)[K], std::int64_t tile, const T (&own)[K], Op op,
                                          Slot (&window_totals)[Capacity], T (&prefix)[K]) {
    constexpr int warps = BlockThreads / 32;
    const std::int64_t window = tile / window_tiles;
    const int position = static_cast<int>(tile % window_tiles);
    const int warp = static_cast<int>(threadIdx.x / 32);
    const int lane = static_cast<int>(threadIdx.x % 32);
    if constexpr (std::is_unsigned_v<T> && std::is_same_v<Op, plus>) {
      static_assert(warps * K <= Capacity, "one slot per warp and state");
      T sum[K] = {};
      for (std::int64_t t = threadIdx.x; t < tile; t += BlockThreads) {
#pragma unroll
        for (int k = 0; k < K; ++k) {
          T count = 0;
          states[k].poll_aggregate(t, count);
          sum[k] += count;
        }
      }
#pragma unroll
      for (int k = 0; k < K; ++k) {
#pragma unroll
        for (int offset = 16; offset > 0; offset /= 2) sum[k] += detail::shfl_xor(sum[k], offset);
        if (lane == 0) window_totals[warp * K + k].store(sum[k]);
      }
      __syncthreads();
      if (warp == 0) {
#pragma unroll
        for (int k = 0; k < K; ++k) {
          T total = lane < warps ? window_totals[lane * K + k].load() : T(0);
#pragma unroll
          for (int offset = 16; offset > 0; offset /= 2) total += detail::shfl_xor(total, offset);
          prefix[k] = total;
          if (lane == 0 && position == window_tiles - 1) states[k].publish_window_prefix(window + 1, total + own[k]);
        }
      }
      return true;
    }
    if (window > Capacity) return false;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      if (k > 0) __syncthreads();  // the window totals are reused
      states[k].template window_tree_prefix<warps>(window, position, own[k], op, window_totals, prefix[k]);
    }
    return true;
  }

 private:
  // published_prefix of one state, for any operator (window <= Capacity).
  template <int Warps, class Op, class Slot, int Capacity>
  __device__ void window_tree_prefix(std::int64_t window, int position, const T& own_aggregate, Op op,
                                     Slot (&window_totals)[Capacity], T& prefix) const {
    const int warp = static_cast<int>(threadIdx.x / 32);
    const int lane = static_cast<int>(threadIdx.x % 32);
    T own = own_aggregate;
    if (warp == 0 && lane < position) poll_aggregate(window * window_tiles + lane, own);
    // Two windows per warp per round trip.
    for (std::int64_t v = warp; v < window; v += 2 * Warps) {
      T values[2];
      poll_aggregate(v * window_tiles + lane, values[0]);
      if (v + Warps < window) poll_aggregate((v + Warps) * window_tiles + lane, values[1]);
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        if (v + j * Warps < window) {
          const T total = detail::shfl_idx(warp_inclusive_scan(values[j], op), window_tiles - 1);
          if (lane == 0) window_totals[v + j * Warps].store(total);
        }
      }
    }
    __syncthreads();
    if (warp == 0) {
      T before;  // C_w: the window totals folded in order
      bool has_before = false;
      for (std::int64_t v = 0; v < window; ++v) {
        before = tile_state_detail::then(has_before, before, window_totals[v].load(), op);
        has_before = true;
      }
      const T scanned = warp_inclusive_scan(own, op);
      const T in_window = detail::shfl_idx(scanned, position > 0 ? position - 1 : 0);
      if (position == window_tiles - 1) {
        const T window_total = detail::shfl_idx(scanned, window_tiles - 1);  // every lane shuffles
        if (lane == 0) publish_window_prefix(window + 1, tile_state_detail::then(has_before, before, window_total, op));
      }
      prefix = position > 0 ? tile_state_detail::then(has_before, before, in_window, op) : before;
    }
  }

  // The aggregates of the Depth windows before a tile's window, polled with the look-back's
  // first round trip: lane i holds tile i of window w-1-e in value[e] (status invalid where
  // unpublished or below window 0).
  template <int Depth>
  struct earlier_windows {
    T value[Depth > 0 ? Depth : 1];
    tile_status status[Depth > 0 ? Depth : 1];
  };

  // The first round trip with Depth > 0: the aggregates of the earlier tiles in the
  // window (lane < position: value, status), lane d's published prefix C_{w-d} (d = 0 ..
  // Depth) and the Depth windows before, every load issued before any slot is decoded: a
  // decode waits for its load, and held before a later load it costs a round trip (polled
  // one slot after another, the look-back was slower than without the earlier windows;
  // the depth-0 poll above waits once, between its two slots). The compiler puts the own
  // window's decode right after its load whatever the source order, so that load goes
  // last (sm_90 SASS: the ten loads of float's maps back to back).
  template <int Depth>
  __device__ earlier_windows<Depth> first_round_trip(std::int64_t tile, T& value, tile_status& status, T& published,
                                                     tile_status& published_status) const {
    const int lane = static_cast<int>(detail::scan_lane());
    const int position = static_cast<int>(tile % window_tiles);
    const std::int64_t window = tile / window_tiles;
    const bool polls_prefix = lane <= Depth && window - lane >= 1;
    std::uint64_t own_words[words] = {};
    std::uint64_t prefix_words[words] = {};
    std::uint64_t window_words[Depth][words] = {};  // left zero: invalid
    if (polls_prefix) load(window_slots_, window - lane, prefix_words);
#pragma unroll
    for (int e = 0; e < Depth; ++e) {
      if (window - 1 - e >= 0) load(tile_slots_, (window - 1 - e) * window_tiles + lane, window_words[e]);
    }
    if (lane < position) load(tile_slots_, tile - position + lane, own_words);
    // Decoded whether loaded or not (words not loaded read invalid).
    T polled;
    const tile_status own_status = decode(own_words, polled);
    if (lane < position) {
      status = own_status;
      if (own_status != tile_status::invalid) value = polled;
    }
    published_status = decode(prefix_words, published);
    earlier_windows<Depth> earlier;
#pragma unroll
    for (int e = 0; e < Depth; ++e) earlier.status[e] = decode(window_words[e], earlier.value[e]);
    return earlier;
  }

  // C_w from the earlier windows of the first round trip: C_{w-d} op R_{w-d} op ... op
  // R_{w-1} for the least d whose C_{w-d} was published (lane d's poll; or w - d = 0:
  // nothing before), each window on the way complete: the walk's expression
  // (window_prefix), so the same bits. False if the poll did not reach one (the walk
  // takes over).
  template <int Depth, class Op>
  __device__ bool polled_prefix(std::int64_t window, Op op, const earlier_windows<Depth>& earlier, const T& published,
                                tile_status published_status, T& prefix) const {
    const int lane = static_cast<int>(detail::scan_lane());
    const unsigned found = __ballot_sync(detail::full_warp_mask, lane <= Depth && published_status == tile_status::inclusive);
    T totals[Depth];  // totals[e]: R_{w-1-e}
#pragma unroll
    for (int d = 1; d <= Depth; ++d) {
      if (!__all_sync(detail::full_warp_mask, earlier.status[d - 1] != tile_status::invalid)) return false;
      totals[d - 1] = detail::shfl_idx(warp_inclusive_scan(earlier.value[d - 1], op), window_tiles - 1);
      const bool start_found = (found >> d) & 1u;
      if (start_found || window - d == 0) {
        bool has = start_found;
        T acc;
        if (start_found) acc = detail::shfl_idx(published, d);
#pragma unroll
        for (int e = d - 1; e >= 0; --e) {
          acc = tile_state_detail::then(has, acc, totals[e], op);
          has = true;
        }
        prefix = acc;
        return true;
      }
    }
    return false;
  }

  static __device__ void clear(std::uint64_t* slots, std::int64_t index) {
#pragma unroll
    for (int w = 0; w < words; ++w) tile_state_detail::store_relaxed(slots + index * words + w, 0);
  }

  static __device__ void publish(std::uint64_t* slots, std::int64_t index, tile_status status, const T& value) {
    std::uint32_t bits[words] = {};
    std::memcpy(bits, &value, sizeof(T));
#pragma unroll
    for (int w = 0; w < words; ++w) {
      tile_state_detail::store_relaxed(slots + index * words + w,
                                       (static_cast<std::uint64_t>(status) << 32) | bits[w]);
    }
  }

  // All words are loaded before any is looked at: one round trip.
  static __device__ tile_status poll(const std::uint64_t* slots, std::int64_t index, T& value) {
    std::uint64_t word[words];
    load(slots, index, word);
    return decode(word, value);
  }
  static __device__ void load(const std::uint64_t* slots, std::int64_t index, std::uint64_t (&word)[words]) {
#pragma unroll
    for (int w = 0; w < words; ++w) word[w] = tile_state_detail::load_relaxed(slots + index * words + w);
  }
  // A slot's words as loaded: its status (invalid unless every word says valid) and value.
  static __device__ tile_status decode(const std::uint64_t (&word)[words], T& value) {
    std::uint32_t bits[words];
    bool valid = true;
#pragma unroll
    for (int w = 0; w < words; ++w) {
      bits[w] = static_cast<std::uint32_t>(word[w]);
      valid = valid && (word[w] >> 32) != 0;
    }
    if (!valid) return tile_status::invalid;
    std::memcpy(&value, bits, sizeof(T));
    return static_cast<tile_status>(word[0] >> 32);
  }

  unsigned long long* counter_ = nullptr;
  std::uint64_t* tile_slots_ = nullptr;
  std::uint64_t* window_slots_ = nullptr;
  std::int64_t num_tiles_ = 0;
};

// A prefix callback for block_scan's *_with_prefix forms (tiles >= 1): publishes the
// block's aggregate, looks back, returns the tile's exclusive prefix. Tile 0 has none:
// it publishes its aggregate and scans without a prefix.
template <class T, class Op>
struct lookback_prefix_op {
  tile_state<T> state;
  std::int64_t tile;
  Op op;

  __device__ T operator()(const T& block_aggregate) const {
    if (detail::scan_lane() == 0) state.publish_aggregate(tile, block_aggregate);
    __syncwarp();
    return state.exclusive_prefix(tile, block_aggregate, op);
  }
};

}  // namespace scanlab::device
