// Stream compaction, the production path: one pass with decoupled look-back.
// (Public entry points: scanlab/algorithms/select.cuh. The teaching version in three
// phases: scanlab/algorithms/select_three_phase.cuh.)
//
// One tile per block iteration:
//   1. load      keys (and values, and flags for select_flagged) in the scan's layout:
//                thread (warp w, lane l) holds Items items as S slots of C consecutive
//                items; slot s of lane l starts at tile item w*32*Items + s*32*C + l*C,
//                so for each slot a warp touches 32*C contiguous items with one access
//                of C items per lane (16 bytes for the widest type);
//   2. evaluate  the predicate (or the flag, or "differs from its predecessor") per item;
//   3. rank      each item's position among the tile's kept items: per slot, the count of
//                kept items of each lane is scanned across the warp. The S per-slot counts
//                of a lane are packed into one word (a field of B bits per slot, wide
//                enough for a whole slot's total, 32*C), so one warp scan of one word
//                ranks all slots at once; then the warp totals are scanned across the
//                block (block_scan::scan_warp_totals);
//   4. publish   the tile's count (at most Items*256, a 32-bit number) on the shared look-back
//                tile state (device/tile_state.cuh) on uint32: one 64-bit word per tile
//                holds status and count, one load per poll;
//   5. park      the kept items, gathered in order at their tile-local rank, wait in a
//                shared-memory staging buffer while the block does steps 1-4 for its NEXT
//                tile;
//   6. look back only then, warp 0 gets the parked tile's exclusive prefix (the counts
//                of the tiles before it were published a whole step earlier, so this
//                seldom waits, and a block does not idle on the slowest block of a round),
//                and the block writes the parked items out contiguously to
//                out[base + prefix + rank] (each warp store covers 32 consecutive items).
//                The next tile takes its place (two staging buffers, used in turn, where
//                they fit in static shared memory; one otherwise).
// The tiles are walked by the single-pass engine (device/single_pass.cuh: launch modes,
// round one, the deferred look-back, tickets); this file is compaction's worker, steps 1-6
// of one tile. The tile-to-tile hand-over, which bounded the kernel when each tile looked
// back at once, is hidden behind the next tile.
//
// 64-bit counts. A tile-state value is 32 bits, so one launch handles a chunk of at most
// 2^32 - 1 items (a whole number of tiles): its counts cannot overflow. Longer inputs are
// compacted chunk by chunk, one launch each, in stream order: the last tile of chunk k
// writes the running total (64-bit) to temp storage, where every block of chunk k + 1 reads
// its output base before it starts. No host synchronisation between chunks.
#pragma once

#include <scanlab/arch.cuh>
#include <scanlab/block/block_scan.cuh>
#include <scanlab/detail/launch.cuh>
#include <scanlab/detail/prefetch.cuh>
#include <scanlab/detail/shuffle.cuh>
#include <scanlab/detail/util.cuh>
#include <scanlab/device/single_pass.cuh>
#include <scanlab/device/tile_state.cuh>
#include <scanlab/error.hpp>
#include <scanlab/functional.cuh>
#include <scanlab/warp/warp_scan.cuh>

#include <cuda_runtime.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <type_traits>

namespace scanlab::select_detail {

// ---- vocabulary ---------------------------------------------------------------------

// The value type of a keys-only compaction (and the flag type when there are no flags):
// an empty placeholder that is never loaded or stored.
struct none {};

// An iterator over nothing (keys-only: no values; select_if: no flags).
struct none_iterator {
  __host__ __device__ none operator[](std::int64_t) const { return {}; }
  __host__ __device__ none_iterator operator+(std::int64_t) const { return {}; }
};

template <class It>
using iterator_value_t = std::remove_cv_t<std::remove_reference_t<decltype(std::declval<It>()[0])>>;

template <class It>
inline constexpr bool is_none = std::is_same_v<It, none_iterator>;

// Byte size a type occupies in a tile (0 for the placeholder).
template <class T>
inline constexpr std::size_t item_bytes = std::is_same_v<T, none> ? 0 : sizeof(T);

// What decides whether an item is kept.
enum class select_kind { predicate, flags, unique };

// select_if (Keep = true) and remove_if (Keep = false).
template <class Pred, bool Keep>
struct predicate_selector {
  static constexpr select_kind kind = select_kind::predicate;
  Pred pred;
  template <class K>
  __device__ __forceinline__ bool operator()(const K& key) const {
    return static_cast<bool>(pred(key)) == Keep;
  }
};

// select_flagged: item i is kept where flags[i] converts to true.
struct flags_selector {
  static constexpr select_kind kind = select_kind::flags;
};

// unique: item i is kept if i == 0 or !eq(in[i - 1], in[i]).
template <class Eq>
struct unique_selector {
  static constexpr select_kind kind = select_kind::unique;
  Eq eq;
};

// a == b, the default equality of unique.
struct equal_to {
  template <class T>
  __host__ __device__ constexpr bool operator()(const T& a, const T& b) const {
    return a == b;
  }
};

// ---- tuning -------------------------------------------------------------------------

template <int BlockThreads, int ItemsPerThread, int Chunk, int MinBlocksPerSm, bool Prefetch = true,
          int StagingBuffers = 0, int L2Ahead = 0>
struct select_policy {
  static constexpr int staging_buffers = StagingBuffers;  // 0: two where they fit
  // Tiles asked of L2 beyond the one loaded ahead (with Prefetch; 0: none): the keys only.
  static constexpr int l2_ahead = Prefetch ? L2Ahead : 0;
  static constexpr int block_threads = BlockThreads;
  static constexpr int items_per_thread = ItemsPerThread;
  static constexpr int chunk = Chunk;  // consecutive items per lane and access
  static constexpr int min_blocks_per_sm = MinBlocksPerSm;
  static constexpr bool prefetch = Prefetch;
  static constexpr int tile_items = BlockThreads * ItemsPerThread;
};

// sm_90 (H100). The widest of the key and value types sets the layout: 128 bytes per
// thread (the production scan's shape), one 16-byte access per C items of the widest type,
// at most 32 items per thread (the packed slot counts must fit in 64 bits), and few enough
// that a tile's staging buffer (keys and values) fits in static shared memory. With the
// deferred look-back the hand-over between tiles no longer bounds the kernel, so larger
// tiles simply mean fewer barriers per item. H100, uint32 keys, 2^28, ms at 1 / 50 / 99 %
// kept, predicate x < t (CUB DeviceSelect::If: 0.521 / 0.704 / 0.934; before the deferred
// look-back, 256 x 16, 3/SM, prefetch: 0.726 / 0.885 / 1.093):
//   256 x 32, 2/SM, prefetch (chosen)      0.497 / 0.612 / 0.771   (one staging buffer)
//   256 x 32, 3/SM, no prefetch            0.442 / 0.589 / 0.798   (fastest with x < t, but
//                                          80 registers: a heavier predicate spills, e.g.
//                                          scanlab-compact's runtime test: 1.21 / 1.98 / 2.17)
//   256 x 32, 2/SM, no prefetch            0.509 / 0.642 / 0.803
//   256 x 32, 4/SM, no prefetch            0.470 / 0.668 / 0.962
//   256 x 32, 3/SM, prefetch               0.705 / 0.880 / 1.228   (registers spill)
//   256 x 24, 2/SM, prefetch               0.557 / 0.668 / 0.802
//   256 x 16, 3/SM, prefetch               0.554 / 0.657 / 0.795   (two staging buffers;
//                                                                    one: 0.595 / 0.685 / 0.811)
//   384 x 16, 2/SM, prefetch               0.575 / 0.677 / 0.814
//   512 x 16, 2/SM, prefetch               0.592 / 0.733 / 0.880
// More: primitives/docs/compact.md.
// The shape for a byte budget per thread and a staging budget (static shared memory, at
// most 48 KB with the rest of the block's), 256 threads, two resident blocks per SM.
template <class K, class V, int BytesPerThread, int StagingBytes, int StagingBuffers>
struct select_shape {
  static constexpr std::size_t widest = item_bytes<K> > item_bytes<V> ? item_bytes<K> : item_bytes<V>;
  static constexpr std::size_t pair_bytes = item_bytes<K> + item_bytes<V>;  // staged per kept item
  static constexpr int threads = 256;
  static constexpr int chunk = (widest < 16 && 16 % widest == 0) ? static_cast<int>(16 / widest) : 1;
  static constexpr int by_bytes =
      static_cast<int>(BytesPerThread / widest) > 32 ? 32 : static_cast<int>(BytesPerThread / widest);
  static constexpr int by_staging = static_cast<int>(StagingBytes / (threads * pair_bytes));
  static constexpr int raw_items = by_bytes < by_staging ? by_bytes : by_staging;
  static constexpr int items = raw_items < chunk ? chunk : raw_items / chunk * chunk;
  // Two tiles in registers (prefetch): 2 resident blocks of 256 leave 128 registers per thread.
  using policy = select_policy<threads, (items > 0 ? items : 1), chunk, 2, true, StagingBuffers>;
};

// The default tuning table (scanlab/arch.cuh): the sm_90 shape above (128 bytes per thread,
// staging within 44 of the 48 KB of static shared memory, two buffers where they fit)
// everywhere two such blocks fit an SM; Turing (64 KB per SM) takes 64 bytes per thread and
// one staging buffer of at most 28 KB. Only Hopper was measured.
template <class K, class V>
struct select_tuning {
  template <int Family>
  struct at {
    using type = typename select_shape<K, V, Family == 75 ? 64 : 128, Family == 75 ? 28 * 1024 : 44 * 1024,
                                       Family == 75 ? 1 : 0>::policy;
  };
};

template <class K, class V>
using default_select_policy = select_tuning<K, V>;

// ---- chunk I/O ----------------------------------------------------------------------

// C consecutive items of T as one access of C*sizeof(T) bytes (2, 4, 8 or 16) where the
// address is aligned to that size; element-wise otherwise.
template <class T, int C>
struct chunk_io {
  static constexpr std::size_t bytes = static_cast<std::size_t>(C) * sizeof(T);
  static constexpr bool vector = bytes == 2 || bytes == 4 || bytes == 8 || bytes == 16;
  using word = std::conditional_t<
      bytes == 16, uint4,
      std::conditional_t<bytes == 8, uint2, std::conditional_t<bytes == 4, unsigned int, unsigned short>>>;

  // True if every chunk of an array starting at p can be accessed as one word.
  template <class It>
  __host__ __device__ static bool aligned(It p) {
    if constexpr (std::is_pointer_v<It> && vector) {
      return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
    } else {
      return false;
    }
  }

  template <class It>
  __device__ __forceinline__ static void load(It p, std::int64_t i, bool use_vector, T (&out)[C]) {
    if constexpr (std::is_pointer_v<It> && vector) {
      if (use_vector) {
        const word w = *reinterpret_cast<const word*>(p + i);
        std::memcpy(out, &w, bytes);
        return;
      }
    }
#pragma unroll
    for (int c = 0; c < C; ++c) out[c] = static_cast<T>(p[i + c]);
  }
};

// ---- parameters ---------------------------------------------------------------------

using select_mode = device::single_pass_mode;

template <class KeyIt, class ValueIt, class FlagIt, class KeyOut, class ValueOut, class Selector>
struct select_params {
  KeyIt keys_in;       // advanced to this chunk's first item
  ValueIt values_in;   // none_iterator: keys only
  FlagIt flags;        // select_flagged only
  KeyOut keys_out;     // not advanced: the chunk's base is read on the device
  ValueOut values_out;
  Selector selector;
  std::int64_t n;          // items in this chunk
  std::int64_t chunk;      // index of this chunk
  std::int64_t* chunk_totals;   // [chunk]: kept items in chunks 0 .. chunk (temp storage)
  std::int64_t* num_selected;   // the user's count, written by the last tile of every chunk
  device::single_pass_schedule<std::uint32_t> schedule;  // the chunk's tiles
  bool vector_keys;
  bool vector_values;
  bool vector_flags;
};

// ---- the agent: one tile at a time ----------------------------------------------------

template <class Policy, class KeyIt, class ValueIt, class FlagIt, class KeyOut, class ValueOut, class Selector>
struct select_agent {
  using params_t = select_params<KeyIt, ValueIt, FlagIt, KeyOut, ValueOut, Selector>;
  using K = iterator_value_t<KeyIt>;
  using V = std::conditional_t<is_none<ValueIt>, none, iterator_value_t<ValueIt>>;
  using F = std::conditional_t<is_none<FlagIt>, none, iterator_value_t<FlagIt>>;
  static constexpr bool has_values = !is_none<ValueIt>;
  static constexpr select_kind kind = Selector::kind;
  static_assert(kind != select_kind::flags || !is_none<FlagIt>, "select_flagged needs flags");

  static constexpr int block_threads = Policy::block_threads;
  static constexpr int I = Policy::items_per_thread;
  static constexpr int C = Policy::chunk;
  static constexpr int S = I / C;  // slots per thread
  static_assert(S >= 1 && S * C == I, "items per thread must be whole chunks");
  static constexpr std::int64_t tile_items = Policy::tile_items;
  static constexpr std::int64_t warp_items = 32 * I;

  // Packed slot counts: a slot's warp total is at most 32*C, so B bits per field hold it
  // (and a lane's own count, and every prefix) without carrying into the next field.
  static constexpr int field_bits = [] {
    int b = 1;
    while ((1 << b) <= 32 * C) ++b;
    return b;
  }();
  static_assert(S * field_bits <= 64, "too many slots per thread to pack their counts");
  using packed_t = std::conditional_t<S * field_bits <= 32, std::uint32_t, std::uint64_t>;
  static constexpr packed_t field_mask = (packed_t{1} << field_bits) - 1;

  using block_scan_t = block_scan<std::uint32_t, block_threads>;

  // A tile's kept items, gathered in order: where a tile waits for its prefix.
  struct staging {
    alignas(16) unsigned char keys[static_cast<std::size_t>(tile_items) * sizeof(K)];
    alignas(16) unsigned char values[has_values ? static_cast<std::size_t>(tile_items) * sizeof(V) : 1];
  };
  // Two buffers, used in turn, let a block gather its new tile while the parked one is
  // still there; where two do not fit in static shared memory (pairs of wide types), one
  // buffer and one more barrier per tile (the parked tile leaves before the next arrives).
  static constexpr int buffers =
      Policy::staging_buffers > 0 ? Policy::staging_buffers : (2 * sizeof(staging) + 1024 <= 48 * 1024 ? 2 : 1);

  struct temp_storage {
    typename block_scan_t::temp_storage scan;
    device::single_pass_storage<std::uint32_t> engine;
    std::int64_t chunk_total;  // thread 0: the running total, once this block wrote the chunk's last tile
    staging staged[buffers];
  };
  static constexpr std::size_t smem_bytes = sizeof(temp_storage);

  // The engine's view (device/single_pass.cuh).
  using value_type = std::uint32_t;
  static constexpr int states = 1;
  static constexpr int park_buffers = buffers;
  static constexpr bool early_look_back = false;

  // A tile's inputs, as loaded.
  struct tile_data {
    K keys[S][C];
    V values[S][C];
    F flags[S][C];
  };

  const params_t& p;
  temp_storage& s;
  const int warp;
  const int lane;
  std::int64_t base = 0;  // kept items of the earlier chunks

  tile_data x;              // the current tile
  bool keep[S][C];          // its verdicts
  std::uint32_t rank[S];    // per slot: the tile-local rank of the slot's first kept item of this lane
  std::uint32_t aggregate;  // kept items in the tile

  __device__ select_agent(const params_t& params, temp_storage& storage)
      : p(params), s(storage), warp(static_cast<int>(threadIdx.x / 32)), lane(static_cast<int>(threadIdx.x % 32)) {
    if (p.chunk > 0) base = p.chunk_totals[p.chunk - 1];
    if (threadIdx.x == 0) s.chunk_total = -1;
  }

  // After the walk: the block that wrote the chunk's last tile hands the running total on.
  // Kept out of write_out, where the destination's address would be live across the whole
  // walk (at the register cap it was spilled and reloaded every tile).
  __device__ void finish() const {
    if (threadIdx.x == 0 && s.chunk_total >= 0) {
      p.chunk_totals[p.chunk] = s.chunk_total;
      *p.num_selected = s.chunk_total;
    }
  }

  // Index (within the chunk) of the first item of slot `slot` of this lane.
  __device__ std::int64_t slot_start(std::int64_t tile, int slot) const {
    return tile * tile_items + warp * warp_items + slot * 32 * C + lane * C;
  }

  // ---- 1. load ----

  template <class T, class It>
  __device__ void load_array(It in, bool use_vector, std::int64_t tile, T (&out)[S][C]) const {
    const std::int64_t tile_base = tile * tile_items;
    if (tile_base + tile_items <= p.n) {
#pragma unroll
      for (int v = 0; v < S; ++v) chunk_io<T, C>::load(in, slot_start(tile, v), use_vector, out[v]);
      return;
    }
    // The last, partial tile: items past the end repeat the tile's first (never kept).
    const T first = static_cast<T>(in[tile_base]);
#pragma unroll
    for (int v = 0; v < S; ++v) {
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const std::int64_t i = slot_start(tile, v) + c;
        out[v][c] = i < p.n ? static_cast<T>(in[i]) : first;
      }
    }
  }

  __device__ void load(tile_data& d, std::int64_t tile) const {
    load_array(p.keys_in, p.vector_keys, tile, d.keys);
    if constexpr (has_values) load_array(p.values_in, p.vector_values, tile, d.values);
    if constexpr (kind == select_kind::flags) load_array(p.flags, p.vector_flags, tile, d.flags);
  }

  // ---- 2. evaluate ----

  __device__ void evaluate(std::int64_t tile) {
    const std::int64_t valid = p.n - tile * tile_items;  // items of the tile that exist (may exceed the tile)
    const bool full = valid >= tile_items;                 // the common case: no bounds to check
    [[maybe_unused]] K before_slot;  // unique: the item before this lane's slot
#pragma unroll
    for (int v = 0; v < S; ++v) {
      if constexpr (kind == select_kind::unique) {
        // Predecessor of the slot's first item: the previous lane's last item; for lane 0,
        // lane 31's last item of the previous slot, or for slot 0 the item before the
        // warp's part of the tile (from memory: another warp's, or another tile's).
        const K from_left = detail::shfl_up(x.keys[v][C - 1], 1);
        if (v > 0) {
          const K from_last = detail::shfl_idx(x.keys[v - 1][C - 1], 31);
          before_slot = lane == 0 ? from_last : from_left;
        } else {
          before_slot = from_left;
          if (lane == 0) {
            const std::int64_t first = tile * tile_items + warp * warp_items;  // chunk index of slot 0, lane 0
            if (first > 0 || p.chunk > 0) {
              if (first < p.n) before_slot = static_cast<K>(p.keys_in[first - 1]);
            }
          }
        }
      }
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const int local = warp * static_cast<int>(warp_items) + v * 32 * C + lane * C + c;
        bool k = full || local < valid;
        if constexpr (kind == select_kind::predicate) {
          k = k && p.selector(x.keys[v][c]);
        } else if constexpr (kind == select_kind::flags) {
          k = k && static_cast<bool>(x.flags[v][c]);
        } else {
          const bool very_first = tile == 0 && local == 0 && p.chunk == 0;
          const K& previous = c == 0 ? before_slot : x.keys[v][c - 1];
          k = k && (very_first || !p.selector.eq(previous, x.keys[v][c]));
        }
        keep[v][c] = k;
      }
    }
  }

  // ---- 3. rank ----

  // Sets rank[] (block-local) and aggregate; one __syncthreads inside.
  __device__ void rank_items() {
    packed_t counts = 0;
#pragma unroll
    for (int v = 0; v < S; ++v) {
      packed_t count = 0;
#pragma unroll
      for (int c = 0; c < C; ++c) count += keep[v][c] ? 1 : 0;
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
    block_scan_t(s.scan).scan_warp_totals(warp_count, plus{}, warp_prefix, aggregate);
#pragma unroll
    for (int v = 0; v < S; ++v) rank[v] += warp_prefix;
  }

  // ---- 5. park ----

  // The current tile's kept items into staging buffer `buffer`, in order, at their
  // tile-local rank (before the tile's prefix is known).
  __device__ void gather(int buffer) {
    K* keys = reinterpret_cast<K*>(s.staged[buffer].keys);
    [[maybe_unused]] V* values = reinterpret_cast<V*>(s.staged[buffer].values);
#pragma unroll
    for (int v = 0; v < S; ++v) {
      std::uint32_t r = rank[v];
#pragma unroll
      for (int c = 0; c < C; ++c) {
        if (keep[v][c]) {
          keys[r] = x.keys[v][c];
          if constexpr (has_values) values[r] = x.values[v][c];
          ++r;
        }
      }
    }
  }

  // ---- 6. look back and write out ----

  // After the barrier that makes the gathered items visible: the tile's `count` kept items
  // from staging buffer `buffer` to the output at the chunk's base plus the tile's prefix,
  // consecutive threads to consecutive items; the chunk's last tile records the running
  // total (finish() writes it).
  __device__ void write_out(std::int64_t tile, std::uint32_t prefix, std::uint32_t count, int buffer) const {
    const std::int64_t out = base + prefix;
    const K* keys = reinterpret_cast<const K*>(s.staged[buffer].keys);
    [[maybe_unused]] const V* values = reinterpret_cast<const V*>(s.staged[buffer].values);
    for (std::uint32_t i = threadIdx.x; i < count; i += block_threads) {
      p.keys_out[out + i] = keys[i];
      if constexpr (has_values) p.values_out[out + i] = values[i];
    }
    if (tile == p.schedule.num_tiles - 1 && threadIdx.x == 0) s.chunk_total = base + prefix + count;
  }

  // ---- the engine's hooks (device/single_pass.cuh) ----
  // Steps 1-4 in start(), 5 in park() (the buffer of the step's parity), 6 in retire().

  [[maybe_unused]] tile_data next;  // the block's next tile, loaded ahead (Policy::prefetch)

  __device__ plus op() const { return {}; }
  __device__ std::uint32_t aggregate_of(int) const { return aggregate; }
  __device__ void begin(std::int64_t, std::int64_t) {}
  __device__ void advance(std::int64_t, int, std::int64_t) {}

  template <bool Ahead, bool Prefetched>
  __device__ void start(std::int64_t tile, int, std::int64_t) {
    if constexpr (Prefetched && Policy::prefetch) {
      x = next;
    } else {
      load(x, tile);
    }
    evaluate(tile);
    rank_items();
  }

  __device__ void prefetch(std::int64_t tile) {
    if constexpr (Policy::prefetch) load(next, tile);
  }

  // Policy::l2_ahead tiles further (the engine calls it): the warp's keys of a whole tile,
  // asked of L2 (pointer keys aligned for vector loads).
  static constexpr int l2_ahead =
      std::is_pointer_v<KeyIt> && (warp_items * sizeof(K)) % 128 == 0 ? Policy::l2_ahead : 0;
  __device__ void prefetch_l2(std::int64_t tile) const {
    if constexpr (l2_ahead > 0) {
      if (p.vector_keys && (tile + 1) * tile_items <= p.n) {
        detail::warp_prefetch_l2<static_cast<int>(warp_items * sizeof(K))>(
            p.keys_in + tile * tile_items + warp * warp_items, lane);
      }
    }
  }

  __device__ static int buffer_of(int step) { return buffers == 2 ? (step & 1) : 0; }

  __device__ void park(int step) { gather(buffer_of(step)); }

  __device__ void retire(const device::retiring<std::uint32_t, 1>& r) {
    write_out(r.tile, r.has_prefix ? r.prefix[0] : 0u, r.aggregate[0], buffer_of(r.step));
  }
};

// Tuning: one policy or a per-architecture table (scanlab/arch.cuh); the kernel runs the
// policy of the architecture it is compiled for.
template <class Tuning, class KeyIt, class ValueIt, class FlagIt, class KeyOut, class ValueOut, class Selector>
__global__ void __launch_bounds__(arch::active_policy<Tuning>::block_threads,
                                  arch::active_policy<Tuning>::min_blocks_per_sm)
    select_tiles_kernel(const __grid_constant__ select_params<KeyIt, ValueIt, FlagIt, KeyOut, ValueOut, Selector> params) {
  using Policy = arch::active_policy<Tuning>;
  using agent_t = select_agent<Policy, KeyIt, ValueIt, FlagIt, KeyOut, ValueOut, Selector>;
  static_assert(arch::fits_block(arch::compiled_family, Policy::block_threads, agent_t::smem_bytes),
                "compaction policy too large for the architecture being compiled (limits: scanlab/arch.cuh)");
  __shared__ typename agent_t::temp_storage storage;
  agent_t agent(params, storage);
  device::single_pass<agent_t>(agent, params.schedule, storage.engine).run();
  agent.finish();
}

// ---- host side ----------------------------------------------------------------------

// Test and benchmark hooks (users never need them): force a launch mode, cap the grid,
// shorten the chunks (to test the 64-bit path on small inputs).
struct select_options {
  select_mode mode = select_mode::automatic;
  int max_blocks = 0;            // 0: as many as can be resident
  std::int64_t chunk_tiles = 0;  // 0: as many as fit below 2^32 items
};

template <class Policy>
constexpr std::int64_t max_chunk_tiles() {
  return ((std::int64_t{1} << 32) - 1) / Policy::tile_items;
}

// Temp storage: [alignment slack][tile states of one chunk][running total per chunk].
template <class Policy>
constexpr std::size_t select_temp_bytes(std::int64_t n, std::int64_t chunk_tiles) {
  const std::int64_t chunk_items = chunk_tiles * Policy::tile_items;
  const std::int64_t chunks = n > 0 ? detail::ceil_div(n, chunk_items) : 1;
  const std::int64_t tiles = detail::ceil_div(n < chunk_items ? n : chunk_items, std::int64_t{Policy::tile_items});
  return 256 + detail::align_up(device::tile_state<std::uint32_t>::storage_bytes(tiles)) +
         static_cast<std::size_t>(chunks) * sizeof(std::int64_t);
}

template <class Policy>
constexpr std::int64_t chunk_tiles_for(const select_options& options) {
  std::int64_t chunk_tiles = max_chunk_tiles<Policy>();
  if (options.chunk_tiles > 0 && options.chunk_tiles < chunk_tiles) chunk_tiles = options.chunk_tiles;
  return chunk_tiles;
}

template <class Tuning, class KeyIt, class ValueIt, class FlagIt, class KeyOut, class ValueOut, class Selector>
[[nodiscard]] cudaError_t dispatch_select(void* d_temp, std::size_t& temp_bytes, KeyIt keys_in, ValueIt values_in,
                                          FlagIt flags, KeyOut keys_out, ValueOut values_out,
                                          std::int64_t* d_num_selected, std::int64_t n, Selector selector,
                                          cudaStream_t stream, select_options options = {}) {
  using params_t = select_params<KeyIt, ValueIt, FlagIt, KeyOut, ValueOut, Selector>;
  static_assert(arch::table_fits<Tuning>([](auto policy) {
                  return select_agent<typename decltype(policy)::type, KeyIt, ValueIt, FlagIt, KeyOut, ValueOut,
                                      Selector>::smem_bytes;
                }),
                "a compaction tuning entry does not fit its architecture (limits: scanlab/arch.cuh)");
  if (n < 0) return cudaErrorInvalidValue;
  // Sized for every architecture's tiles: no need to ask the device.
  const std::size_t required = arch::max_over_policies<Tuning>([&](auto policy) {
    using P = typename decltype(policy)::type;
    return select_temp_bytes<P>(n, chunk_tiles_for<P>(options));
  });
  if (const auto answer = detail::temp_storage_query(d_temp, temp_bytes, required, d_num_selected != nullptr)) return *answer;
  if (n == 0) return cudaMemsetAsync(d_num_selected, 0, sizeof(std::int64_t), stream);

  constexpr auto kernel = select_tiles_kernel<Tuning, KeyIt, ValueIt, FlagIt, KeyOut, ValueOut, Selector>;
  return detail::with_policy<kernel, Tuning>([&](auto policy) -> cudaError_t {
    using Policy = typename decltype(policy)::type;
    using agent_t = select_agent<Policy, KeyIt, ValueIt, FlagIt, KeyOut, ValueOut, Selector>;
    const std::int64_t chunk_tiles = chunk_tiles_for<Policy>(options);
    const std::int64_t chunk_items = chunk_tiles * Policy::tile_items;
    const std::int64_t chunks = detail::ceil_div(n, chunk_items);
    const std::int64_t max_tiles = detail::ceil_div(n < chunk_items ? n : chunk_items, std::int64_t{Policy::tile_items});
    auto* aligned = reinterpret_cast<unsigned char*>(detail::align_up(reinterpret_cast<std::uintptr_t>(d_temp)));
    auto* chunk_totals = reinterpret_cast<std::int64_t*>(
        aligned + detail::align_up(device::tile_state<std::uint32_t>::storage_bytes(max_tiles)));

    for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
      const std::int64_t begin = chunk * chunk_items;
      const std::int64_t items = n - begin < chunk_items ? n - begin : chunk_items;
      const std::int64_t tiles = detail::ceil_div(items, std::int64_t{Policy::tile_items});
      const params_t params{.keys_in = keys_in + begin,
                            .values_in = values_in + begin,
                            .flags = flags + begin,
                            .keys_out = keys_out,
                            .values_out = values_out,
                            .selector = selector,
                            .n = items,
                            .chunk = chunk,
                            .chunk_totals = chunk_totals,
                            .num_selected = d_num_selected,
                            .schedule = {{device::tile_state<std::uint32_t>(aligned, tiles)}, tiles, {}},
                            .vector_keys = chunk_io<typename agent_t::K, Policy::chunk>::aligned(keys_in + begin),
                            .vector_values = chunk_io<typename agent_t::V, Policy::chunk>::aligned(values_in + begin),
                            .vector_flags = chunk_io<typename agent_t::F, Policy::chunk>::aligned(flags + begin)};
      SCANLAB_TRY(device::launch_single_pass<kernel>(params, Policy::block_threads, 0, options.mode,
                                                     options.max_blocks, stream));
    }
    return cudaSuccess;
  });
}

}  // namespace scanlab::select_detail
