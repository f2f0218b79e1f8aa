// Kernels and dispatch of scanlab's linear recurrence solver (scanlab/algorithms/linrec.cuh).
//
// The recurrence x[i] = a[i] x[i-1] + b[i] is a scan over affine maps f_i(x) = a_i x + b_i
// under composition: x[i] = (f_i o ... o f_0)(x0). Composition is associative, not
// commutative: "earlier, then later" is
//     then(e, l) = l o e = (l.a e.a, l.a e.b + l.b).
//
// One sequence, or many stored one after another (row-major [batch, length]): ONE fused
// single-pass kernel, linrec_tiles_kernel. It reads a and b once and writes x once (12
// bytes per float element), with the decoupled look-back of device/tile_state.cuh. A
// batch needs no segmented scan: the first element of each sequence k is replaced by the
// constant map (0, f(x0_k)), which cuts every dependence on what came before (a = 0 is a
// reset, see affine_map below), so the whole batch is one scan over one long array.
//
// A tile (Policy::block_threads x Policy::items_per_thread elements) uses the layout of
// the production scan (device/scan_kernel.cuh): chunk v of lane l in warp w holds the C
// consecutive elements starting at  w * 32 * Items + v * 32 * C + l * C  (C x sizeof(T)
// = 16 bytes), so a warp reads 32 x 16 contiguous bytes of a and of b per chunk slot with
// one 16-byte load per lane each, and writes x the same way. Steps:
//   1. each chunk's maps are composed serially (its "chunk map");
//   2. per chunk slot, a warp scan of the 32 chunk maps (lane prefixes, slot total);
//      the slot totals folded in order give the warp total; block_scan::scan_warp_totals
//      gives the earlier warps' map and the tile's aggregate;
//   3. each chunk's prefix map inside the tile (earlier warps, slots, lanes) is formed and
//      folded into the chunk's first map, so the chunk alone describes everything from
//      the tile's start to its own items; the tile publishes its aggregate and PARKS its
//      a and b in shared memory;
//   4. the block scans the next tile (publishing its aggregate too) and only then looks
//      back for the parked one (tile_state of affine maps: the canonical, deterministic
//      prefix E). Its aggregate and those before it were published a step earlier, so
//      the look-back seldom waits: the deferred look-back of the production scan;
//   5. the finish is done on STATES, not maps: the state entering the tile is E(.)
//      (a constant: E always contains element 0, a reset); each parked chunk re-runs its
//      recurrence x = a x + b from there (its first map carries the chunk's prefix). So
//      no per-element composed map is ever kept: the parked a and b, and x replaces b.
// The next tile's a and b are copied to shared memory asynchronously (cp.async) while a
// tile is scanned and the parked one finished, so no registers hold a prefetched tile.
// Every grouping depends only on n and the tile shape: results are bitwise identical
// from run to run, in every launch mode.
//
// Interleaved batches ([length, batch], sequence k at k, k + batch, ...): consecutive
// threads walk consecutive sequences down the length (coalesced). With few sequences the
// length is cut into S segments: pass 1 composes each segment's maps, pass 2 solves the
// recurrence of the segment maps (a row-major batch of `batch` sequences of S maps, with
// the single-pass kernel above), pass 3 re-walks each segment from its entering state.
#pragma once

#include <scanlab/block/block_scan.cuh>
#include <scanlab/detail/launch.cuh>
#include <scanlab/detail/shuffle.cuh>
#include <scanlab/detail/util.cuh>
#include <scanlab/device/tile_state.cuh>
#include <scanlab/error.hpp>
#include <scanlab/warp/warp_scan.cuh>

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace scanlab {

// The affine map x -> a x + b.
//
// a == 0 (or -0) is a RESET: the map is the constant b, whatever its argument, also when
// the argument is Inf or NaN (IEEE would give 0 * Inf = NaN). Composition and application
// below follow this rule, so that a sequence restarted by a = 0 (and every sequence of a
// batch) is independent of what came before it. Everything else is IEEE arithmetic with
// fused multiply-adds, except that a product of nonzero a's that underflows is kept at the
// smallest subnormal (with its sign) instead of 0: an underflowed product is not a reset,
// so a NaN or Inf state still propagates through it, as in a sequential loop.
template <class T>
struct affine_map {
  T a;
  T b;
};

namespace linrec_detail {

// The smallest positive subnormal of T.
template <class T>
__host__ __device__ constexpr T smallest_subnormal() {
  if constexpr (std::is_same_v<T, float>) return 1.40129846e-45f;
  else return 4.9406564584124654e-324;
}

template <class T>
__host__ __device__ __forceinline__ T fused(T a, T b, T c) {
#ifdef __CUDA_ARCH__
  if constexpr (std::is_same_v<T, float>) return __fmaf_rn(a, b, c);
  else return __fma_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

}  // namespace linrec_detail

// f(x) = a x + b, with a == 0 giving b (a reset).
template <class T>
__host__ __device__ __forceinline__ T apply(const affine_map<T>& f, T x) {
  return f.a == T(0) ? f.b : linrec_detail::fused(f.a, x, f.b);
}

// then(e, l) = l o e: first e, then l. Associative (up to rounding), not commutative;
// the operator scanlab's scans take as op(earlier, later).
struct affine_then {
  template <class T>
  __host__ __device__ __forceinline__ affine_map<T> operator()(const affine_map<T>& e, const affine_map<T>& l) const {
    affine_map<T> r;
    const T product = l.a * e.a;
    // 0 only for a reset; an underflowed product of nonzero a's stays the tiniest nonzero.
    const T kept = product == T(0) ? std::copysign(linrec_detail::smallest_subnormal<T>(), product) : product;
    r.a = (l.a == T(0) || e.a == T(0)) ? T(0) : kept;
    r.b = l.a == T(0) ? l.b : linrec_detail::fused(l.a, e.b, l.b);
    return r;
  }
};

namespace linrec_detail {

// ---- where the maps come from: one or two arrays, turned into (a, b) on load ----

// x[i] = a[i] x[i-1] + b[i]
template <class T>
struct ab_source {
  static constexpr int arrays = 2;
  const T* p;  // a
  const T* q;  // b
  __host__ __device__ affine_map<T> map(T a, T b) const { return {a, b}; }
};

// v[i] = (1 - lambda[i]) v[i-1] + lambda[i] u[i]
template <class T>
struct lambda_source {
  static constexpr int arrays = 2;
  const T* p;  // lambda
  const T* q;  // u
  __host__ __device__ affine_map<T> map(T lambda, T u) const { return {T(1) - lambda, lambda * u}; }
};

// y[i] = (1 - alpha) y[i-1] + alpha s[i]
template <class T>
struct ema_source {
  static constexpr int arrays = 1;
  const T* p;  // s
  const T* q;  // unused
  T alpha;
  T one_minus_alpha;
  __host__ __device__ affine_map<T> map(T s, T) const { return {one_minus_alpha, alpha * s}; }
};

// ---- tuning ----

// A tile shape: threads per block, items per thread (whole 16-byte chunks), the resident
// blocks per SM __launch_bounds__ must leave room for, and whether the next tile is
// prefetched (copied asynchronously to shared memory while the current one is scanned:
// a second tile of shared memory per block, no registers).
template <int BlockThreads, int ItemsPerThread, int MinBlocksPerSm, bool Prefetch>
struct linrec_policy {
  static constexpr int block_threads = BlockThreads;
  static constexpr int items_per_thread = ItemsPerThread;
  static constexpr int min_blocks_per_sm = MinBlocksPerSm;
  static constexpr bool prefetch = Prefetch;
  static constexpr int tile_items = BlockThreads * ItemsPerThread;
};

// sm_90 (H100). Measured in the H100 session recorded in primitives/docs/linrec.md: see the
// tuning table there. 64 bytes of a and 64 of b per thread, prefetch on: one block of 512
// per SM (128 registers a thread; 128 KB of shared memory: the parked and the staged tile).
template <class T>
struct linrec_tuning_sm90 {
  using policy = linrec_policy<512, static_cast<int>(64 / sizeof(T)), 1, true>;
};
template <class T>
using default_linrec_policy = typename linrec_tuning_sm90<T>::policy;

// ---- launch modes (as the production scan: cooperative by default, tickets as fallback) ----

enum class linrec_mode : int { automatic = 0, cooperative, tickets };

// Test and benchmark hooks: force a launch mode, cap the grid (many look-back rounds from
// small inputs), or force the segmented path for interleaved batches. Users never need these.
struct linrec_options {
  linrec_mode mode = linrec_mode::automatic;
  int max_blocks = 0;             // 0: as many as are resident
  std::int64_t segments = 0;      // interleaved: 0 = automatic
};

template <class Source, class T>
struct linrec_params {
  Source src;
  T* x;                 // the solution, or nullptr (final states only)
  T* final_x;           // the last state of each sequence, or nullptr
  const T* x0s;         // one initial state per sequence, or nullptr: x0 for all
  T x0;
  std::int64_t n;       // batch * length
  std::int64_t length;  // elements per sequence (n for one sequence)
  std::int64_t num_tiles;
  device::tile_state<affine_map<T>> state;
  linrec_mode mode;
  bool batched;       // more than one sequence: sequence starts inside the array
  bool vector_load;   // the input arrays are 16-byte aligned
  bool vector_store;  // x is 16-byte aligned
};

template <class Policy, class Source, class T>
struct linrec_agent {
  using map_t = affine_map<T>;
  using params_t = linrec_params<Source, T>;
  using block_scan_t = block_scan<map_t, Policy::block_threads>;

  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "linear recurrences over float or double");
  static constexpr int block_threads = Policy::block_threads;
  static constexpr int C = static_cast<int>(16 / sizeof(T));  // items per 16-byte chunk
  static constexpr int V = Policy::items_per_thread / C;      // chunks per thread
  static_assert(V >= 1 && V * C == Policy::items_per_thread, "items per thread must be whole 16-byte chunks");
  static constexpr std::int64_t warp_items = 32 * Policy::items_per_thread;
  static constexpr std::int64_t tile_items = Policy::tile_items;

  struct temp_storage {
    // The tile waiting for its prefix: the a and b of each chunk, [chunk][thread] so that
    // a warp touches consecutive 16-byte words. Each thread parks and unparks only its
    // own chunks, so the buffer itself needs no barrier.
    uint4 parked_a[V][block_threads];
    uint4 parked_b[V][block_threads];
    // The next tile's operands, copied in asynchronously (prefetch), same layout.
    uint4 staged_p[Policy::prefetch ? V : 1][block_threads];
    uint4 staged_q[Policy::prefetch && Source::arrays == 2 ? V : 1][block_threads];
    typename block_scan_t::temp_storage scan;
    scan_detail::raw_slot<map_t> tile_prefix;
    std::int64_t next_tile;
  };

  using items_t = T[V][C];

  const params_t& p;
  temp_storage& s;
  const int warp;
  const int lane;

  T a[V][C];  // the maps of the tile being scanned (after scan_local, each chunk's first
  T b[V][C];  // map carries everything in the tile before the chunk)
  map_t aggregate;  // the tile's map
  // The parked tile: its index and aggregate (for the look-back) in registers, its a and
  // b in shared memory.
  std::int64_t parked_tile = 0;
  map_t parked_aggregate;

  __device__ linrec_agent(const params_t& params, temp_storage& storage)
      : p(params), s(storage), warp(static_cast<int>(threadIdx.x / 32)), lane(static_cast<int>(threadIdx.x % 32)) {}

  __device__ bool is_full(std::int64_t tile) const { return tile * tile_items + tile_items <= p.n; }
  __device__ std::int64_t thread_base(std::int64_t tile) const { return tile * tile_items + warp * warp_items + lane * C; }

  // ---- I/O ----
  // Element accesses (partial tiles, misaligned arrays) address item o of the thread as
  // pointer + o with o a compile-time constant, and test o < remaining: no 64-bit index
  // per item, so this rarely used path costs no registers on the fast one.

  // Items of the thread at or past the end of the array: those with o >= remaining.
  __device__ int remaining(std::int64_t tile) const {
    const std::int64_t left = p.n - thread_base(tile);
    return left < 0 ? 0 : (left > tile_items ? static_cast<int>(tile_items) : static_cast<int>(left));
  }
  __host__ __device__ static constexpr int offset(int v, int c) { return v * 32 * C + c; }

  // The raw operand values of a tile (past the end: left unset, prepare() ignores them).
  __device__ void load(items_t& pv, items_t& qv, std::int64_t tile) const {
    const std::int64_t base = thread_base(tile);
    if (tile * tile_items + tile_items <= p.n && p.vector_load) {
      load_vectors(p.src.p + base, pv);
      if constexpr (Source::arrays == 2) load_vectors(p.src.q + base, qv);
      return;
    }
    const int left = remaining(tile);
    const T* ps = p.src.p + base;
    const T* qs = p.src.q + base;
#pragma unroll
    for (int v = 0; v < V; ++v) {
#pragma unroll
      for (int c = 0; c < C; ++c) {
        if (offset(v, c) < left) {
          pv[v][c] = ps[offset(v, c)];
          if constexpr (Source::arrays == 2) qv[v][c] = qs[offset(v, c)];
        }
      }
    }
  }

  __device__ static void load_vectors(const T* from, items_t& to) {
    const uint4* source = reinterpret_cast<const uint4*>(from);
    uint4 raw[V];
#pragma unroll
    for (int v = 0; v < V; ++v) raw[v] = __ldg(source + v * 32);
#pragma unroll
    for (int v = 0; v < V; ++v) std::memcpy(to[v], &raw[v], sizeof(to[v]));
  }

  // Chunk v of the thread's items in a tile (the positions load() reads): x.
  template <bool Full>
  __device__ void store_chunk(std::int64_t tile, int v, const T (&chunk)[C]) const {
    T* target = p.x + thread_base(tile);
    if (Full && p.vector_store) {
      uint4 raw;
      std::memcpy(&raw, chunk, sizeof(raw));
      reinterpret_cast<uint4*>(target)[v * 32] = raw;
      return;
    }
    const int left = Full ? static_cast<int>(tile_items) : remaining(tile);
#pragma unroll
    for (int c = 0; c < C; ++c) {
      if (Full || offset(v, c) < left) target[offset(v, c)] = chunk[c];
    }
  }

  // Position (in its sequence) of the first item of chunk v, given `first`, that of the
  // thread's first item in the tile.
  __device__ std::int64_t chunk_position(std::int64_t first, int v) const {
    const std::int64_t position = first + v * 32 * C;
    if (p.length >= tile_items) return position >= p.length ? position - p.length : position;
    return position % p.length;
  }
  // Whether the item at `position + c` of a chunk starts (ends) a sequence.
  __device__ bool starts(std::int64_t position, int c) const {
    const std::int64_t q = position + c;
    return p.length >= C ? (q == 0 || q == p.length) : q % p.length == 0;
  }
  __device__ bool ends(std::int64_t position, int c) const {
    const std::int64_t q = position + c + 1;
    return p.length >= C ? q == p.length : q % p.length == 0;
  }
  __device__ T initial_state(std::int64_t sequence) const { return p.x0s != nullptr ? p.x0s[sequence] : p.x0; }

  template <bool Full>
  __device__ void prepare(const items_t& pv, const items_t& qv, std::int64_t tile) {
    const std::int64_t base = thread_base(tile);
    const int left = Full ? static_cast<int>(tile_items) : remaining(tile);
#pragma unroll
    for (int v = 0; v < V; ++v) {
#pragma unroll
      for (int c = 0; c < C; ++c) {
        map_t m{T(1), T(0)};
        if (Full || offset(v, c) < left) m = p.src.map(pv[v][c], Source::arrays == 2 ? qv[v][c] : T(0));
        a[v][c] = m.a;
        b[v][c] = m.b;
      }
    }
    if (!p.batched) {
      if (base == 0) {  // tile 0, warp 0, lane 0: the start of the only sequence
        b[0][0] = apply(map_t{a[0][0], b[0][0]}, initial_state(0));
        a[0][0] = T(0);
      }
      return;
    }
    if (!Full && left == 0) return;
    const std::int64_t first = base % p.length;
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const std::int64_t position = chunk_position(first, v);
#pragma unroll
      for (int c = 0; c < C; ++c) {
        if ((Full || offset(v, c) < left) && starts(position, c)) {
          b[v][c] = apply(map_t{a[v][c], b[v][c]}, initial_state((base + offset(v, c)) / p.length));
          a[v][c] = T(0);
        }
      }
    }
  }

  // ---- inside the tile ----

  // Chunk maps, slot scans, warp and block maps, each chunk's prefix map folded into its
  // first map; ends with `aggregate` on every thread.
  __device__ void scan_local() {
    const affine_then op;
    map_t lane_prefix[V];  // per slot: the earlier lanes' map (lane > 0)
    map_t slot_total[V];   // per slot: the warp's map
#pragma unroll
    for (int v = 0; v < V; ++v) {
      map_t m{a[v][0], b[v][0]};
#pragma unroll
      for (int c = 1; c < C; ++c) m = op(m, map_t{a[v][c], b[v][c]});
      map_t inclusive;
      warp_exclusive_scan_unseeded(m, op, lane_prefix[v], inclusive);
      slot_total[v] = detail::shfl_idx(inclusive, 31);
    }
    map_t warp_total = slot_total[0];
#pragma unroll
    for (int v = 1; v < V; ++v) warp_total = op(warp_total, slot_total[v]);
    map_t running;  // earlier warps, then earlier slots
    bool has_running = block_scan_t(s.scan).scan_warp_totals(warp_total, op, running, aggregate);
    // Each chunk's prefix inside the tile (where there is one: not for the tile's first
    // chunk), folded into the chunk's first map: from then on the chunk's own maps take
    // the state entering the TILE to its items' states, and nothing else has to be kept.
#pragma unroll
    for (int v = 0; v < V; ++v) {
      if (lane != 0 || has_running) {
        map_t prefix = running;
        if (lane != 0) prefix = has_running ? op(running, lane_prefix[v]) : lane_prefix[v];
        const map_t first = op(prefix, map_t{a[v][0], b[v][0]});
        a[v][0] = first.a;
        b[v][0] = first.b;
      }
      if (v + 1 < V) {
        running = has_running ? op(running, slot_total[v]) : slot_total[v];
        has_running = true;
      }
    }
  }

  // ---- a tile waiting for its prefix ----

  __device__ void park_chunk(int v) {
    std::memcpy(&s.parked_a[v][threadIdx.x], a[v], sizeof(uint4));
    std::memcpy(&s.parked_b[v][threadIdx.x], b[v], sizeof(uint4));
  }

  // The scanned tile becomes the parked one (its a and b into shared memory with
  // park_chunk, by the caller).
  __device__ void remember_parked(std::int64_t tile) {
    parked_tile = tile;
    parked_aggregate = aggregate;
  }

  // Final states in chunk v of a finished tile: the thread holding the last item of a
  // sequence writes it.
  __device__ void write_final_states(std::int64_t tile, int v, const T (&x)[C]) const {
    const std::int64_t base = thread_base(tile);
    const int left = remaining(tile);
    if (!p.batched) {
      const std::int64_t last = p.n - 1 - base;  // the last item's offset, if it is this thread's
      if (last < tile_items) {
#pragma unroll
        for (int c = 0; c < C; ++c) {
          if (offset(v, c) == last) p.final_x[0] = x[c];
        }
      }
      return;
    }
    if (left == 0) return;
    const std::int64_t position = chunk_position(base % p.length, v);
#pragma unroll
    for (int c = 0; c < C; ++c) {
      if (offset(v, c) < left && ends(position, c)) p.final_x[(base + offset(v, c)) / p.length] = x[c];
    }
  }

  // Finishes the parked tile: warp 0 looks back for its prefix (its aggregate and those of
  // the tiles before it were published at least one step earlier), one barrier broadcasts
  // the prefix, and each thread turns its parked chunks into x and stores them. With
  // Repark, each chunk's slot then takes the chunk of the tile just scanned.
  //
  // The finish works on STATES, not maps: the state entering the tile is the prefix's b
  // (the prefix always contains element 0, a reset, so its a is 0; tile 0 needs no state:
  // its first item is a reset); each chunk re-runs its own recurrence x = a x + b from
  // it (the chunk's first map carries the chunk's prefix inside the tile).
  template <bool Repark>
  __device__ void finish_parked() {
    const std::int64_t tile = parked_tile;
    if constexpr (!Repark) {
      // The last finish follows the previous one with no scan (and its barrier) between:
      // every thread must have read the previous prefix before warp 0 overwrites it.
      __syncthreads();
    }
    if (warp == 0 && tile > 0) {
      const map_t prefix = p.state.exclusive_prefix(tile, parked_aggregate, affine_then{});
      if (lane == 0) s.tile_prefix.store(prefix);
    }
    __syncthreads();
    const T entering = tile > 0 ? apply(s.tile_prefix.load(), T(0)) : T(0);
    const bool full = is_full(tile);
#pragma unroll
    for (int v = 0; v < V; ++v) {
      T pa[C], x[C];
      std::memcpy(pa, &s.parked_a[v][threadIdx.x], sizeof(uint4));
      std::memcpy(x, &s.parked_b[v][threadIdx.x], sizeof(uint4));
      if constexpr (Repark) park_chunk(v);
      T state = entering;
#pragma unroll
      for (int c = 0; c < C; ++c) {
        state = apply(map_t{pa[c], x[c]}, state);
        x[c] = state;
      }
      if (p.x != nullptr) {
        if (full) store_chunk<true>(tile, v, x);
        else store_chunk<false>(tile, v, x);
      }
      if (p.final_x != nullptr) write_final_states(tile, v, x);
    }
  }

  // ---- prefetch: the next tile's operands copied to shared memory asynchronously ----
  // Only full tiles of 16-byte aligned arrays are staged; the others are loaded directly
  // when they are scanned. Each thread copies and later reads only its own chunks, so a
  // wait for its own copies is all the ordering it needs.

  __device__ bool staged(std::int64_t tile) const { return Policy::prefetch && is_full(tile) && p.vector_load; }

  __device__ static void copy_async(uint4* to, const T* from) {
    const auto address = static_cast<unsigned>(__cvta_generic_to_shared(to));
    asm volatile(
        "{\n\t.reg .u64 g;\n\tcvta.to.global.u64 g, %1;\n\tcp.async.cg.shared.global [%0], [g], 16;\n\t}" ::"r"(address),
        "l"(from)
        : "memory");
  }

  __device__ void stage(std::int64_t tile) {
    if (tile >= p.num_tiles || !staged(tile)) return;
    const std::int64_t base = thread_base(tile);
#pragma unroll
    for (int v = 0; v < V; ++v) {
      copy_async(&s.staged_p[v][threadIdx.x], p.src.p + base + v * 32 * C);
      if constexpr (Source::arrays == 2) copy_async(&s.staged_q[v][threadIdx.x], p.src.q + base + v * 32 * C);
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
  }

  __device__ void take(items_t& pv, items_t& qv, std::int64_t tile, bool prefetched) const {
    if (!prefetched || !staged(tile)) {
      load(pv, qv, tile);
      return;
    }
    asm volatile("cp.async.wait_all;" ::: "memory");
#pragma unroll
    for (int v = 0; v < V; ++v) {
      std::memcpy(pv[v], &s.staged_p[v][threadIdx.x], sizeof(uint4));
      if constexpr (Source::arrays == 2) std::memcpy(qv[v], &s.staged_q[v][threadIdx.x], sizeof(uint4));
    }
  }

  // Takes (when `prefetched`, else loads), prepares, scans and publishes `tile`; then
  // stages `next`. The stage is refilled after scan_local's barrier, which orders this
  // tile's reads of it before the new copies land.
  __device__ void scan_tile(std::int64_t tile, bool prefetched, std::int64_t next) {
    {
      items_t pv, qv;
      take(pv, qv, tile, prefetched);
      if (is_full(tile)) prepare<true>(pv, qv, tile);
      else prepare<false>(pv, qv, tile);
    }
    scan_local();
    stage(next);
    if (threadIdx.x == 0) p.state.publish_aggregate(tile, aggregate);
  }

  // After scan_tile: finish the parked tile and park this one in its place, or, the
  // first time, just park this one (the barrier orders this scan's shared-memory reads
  // before the next scan's writes, which finish_parked's barrier does otherwise).
  __device__ void defer(std::int64_t tile, bool parked) {
    if (parked) {
      finish_parked<true>();
    } else {
      __syncthreads();
#pragma unroll
      for (int v = 0; v < V; ++v) park_chunk(v);
    }
    remember_parked(tile);
  }

  // Cooperative grid of G blocks: block b takes tiles b, b + G, ... in increasing order.
  // The tile states are reset inside the kernel, ordered before every look-back by the one
  // grid-wide barrier. Every tile's look-back is deferred by one step: tile t is scanned,
  // publishes its aggregate and is parked; the block scans tile t + G and publishes that
  // aggregate too, and only then looks back for t, so the aggregates it needs were
  // published a whole step earlier and it seldom waits. Tile b is scanned and published
  // before the barrier (thread 0 reset its state itself, so the order is safe), and its
  // look-back after it finds every aggregate of the first round there.
  // With prefetch the loads of tile t + 2G are in flight while t + G is scanned and t is
  // finished.
  __device__ void run_cooperative() {
    const std::int64_t grid = gridDim.x;
    for (std::int64_t t = blockIdx.x + threadIdx.x * grid; t < p.num_tiles; t += block_threads * grid) {
      p.state.init_tile(t);
    }
    std::int64_t tile = blockIdx.x;
    scan_tile(tile, false, tile + grid);
    defer(tile, false);
    cooperative_groups::this_grid().sync();
    for (tile += grid; tile < p.num_tiles; tile += grid) {
      scan_tile(tile, true, tile + grid);
      defer(tile, true);
    }
    finish_parked<false>();
  }

  // Fallback where cooperative launch is unavailable: states reset by a memset before the
  // launch, tiles handed out in order from the ticket counter, each look-back deferred by
  // one tile as above. No deadlock: a block publishes the aggregate of its new tile before
  // it looks back for its parked one, so every aggregate a look-back waits for belongs to
  // a running block that publishes it before it waits itself (on lower tiles only).
  __device__ void run_tickets() {
    if (threadIdx.x == 0) s.next_tile = p.state.claim_tile();
    __syncthreads();
    bool parked = false;
    for (;;) {
      // Read before scan_tile's barrier; thread 0 overwrites it after that barrier, and
      // the barrier in defer() publishes the new value before the next read.
      const std::int64_t tile = s.next_tile;
      if (tile >= p.num_tiles) break;
      scan_tile(tile, false, p.num_tiles);
      if (threadIdx.x == 0) s.next_tile = p.state.claim_tile();
      defer(tile, parked);
      parked = true;
    }
    if (parked) finish_parked<false>();
  }
};

template <class Policy, class Source, class T>
__global__ void __launch_bounds__(Policy::block_threads, Policy::min_blocks_per_sm)
    linrec_tiles_kernel(const __grid_constant__ linrec_params<Source, T> params) {
  using agent_t = linrec_agent<Policy, Source, T>;
  extern __shared__ uint4 linrec_shared[];  // agent_t::temp_storage: too large for static shared memory
  agent_t agent(params, *reinterpret_cast<typename agent_t::temp_storage*>(linrec_shared));
  if (params.mode == linrec_mode::cooperative) agent.run_cooperative();
  else agent.run_tickets();
}

// Final states of empty sequences: the initial states.
template <class T>
__global__ void linrec_initial_states_kernel(T* final_x, const T* x0s, T x0, std::int64_t batch) {
  for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; k < batch;
       k += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    final_x[k] = x0s != nullptr ? x0s[k] : x0;
  }
}

[[nodiscard]] inline bool multiply_fits(std::int64_t batch, std::int64_t length) {
  return batch >= 0 && length >= 0 && (length == 0 || batch <= INT64_MAX / length);
}

// Temp storage of the single-pass kernel: [alignment slack][tile states].
template <class Policy, class T>
constexpr std::size_t rows_temp_bytes(std::int64_t n) {
  return 256 + device::tile_state<affine_map<T>>::storage_bytes(detail::ceil_div<std::int64_t>(n, Policy::tile_items));
}

// One sequence (batch == 1, length == n) or a row-major batch. x and/or final_x.
template <class Policy, class Source, class T>
[[nodiscard]] cudaError_t dispatch_rows(void* d_temp, std::size_t& temp_bytes, Source src, T* d_x, T* d_final,
                                        std::int64_t batch, std::int64_t length, const T* d_x0s, T x0,
                                        cudaStream_t stream, linrec_options options = {}) {
  if (!multiply_fits(batch, length)) return cudaErrorInvalidValue;
  const std::int64_t n = batch * length;
  const std::int64_t num_tiles = detail::ceil_div<std::int64_t>(n, Policy::tile_items);
  const std::size_t required = rows_temp_bytes<Policy, T>(n);
  if (d_temp == nullptr) {
    temp_bytes = required;
    return cudaSuccess;
  }
  if (temp_bytes < required) return cudaErrorInvalidValue;
  if (n == 0) {
    if (d_final != nullptr && batch > 0) {  // empty sequences end where they start
      const std::int64_t blocks = detail::ceil_div<std::int64_t>(batch, 256);
      linrec_initial_states_kernel<<<static_cast<unsigned>(blocks < 65535 ? blocks : 65535), 256, 0, stream>>>(
          d_final, d_x0s, x0, batch);
      SCANLAB_TRY_LAUNCH();
    }
    return cudaSuccess;
  }

  auto* base = reinterpret_cast<unsigned char*>(detail::align_up(reinterpret_cast<std::uintptr_t>(d_temp)));
  const device::tile_state<affine_map<T>> state(base, num_tiles);
  const auto kernel = linrec_tiles_kernel<Policy, Source, T>;

  linrec_mode mode = options.mode == linrec_mode::automatic ? linrec_mode::cooperative : options.mode;
  int capacity = 0;
  bool cooperative = false;
  // The kernel's shared memory is dynamic: the parked and the staged tile do not fit in
  // the 48 KB of static shared memory.
  constexpr std::size_t shared_bytes = sizeof(typename linrec_agent<Policy, Source, T>::temp_storage);
  SCANLAB_TRY((detail::resident_grid<linrec_tiles_kernel<Policy, Source, T>>(Policy::block_threads, INT_MAX, capacity,
                                                                            cooperative, shared_bytes)));
  if (options.max_blocks > 0 && options.max_blocks < capacity) capacity = options.max_blocks;
  if (mode == linrec_mode::cooperative && !cooperative) mode = linrec_mode::tickets;
  const std::int64_t grid = num_tiles < capacity ? num_tiles : capacity;

  const auto aligned = [](const void* pointer) { return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0; };
  linrec_params<Source, T> params{.src = src,
                                  .x = d_x,
                                  .final_x = d_final,
                                  .x0s = d_x0s,
                                  .x0 = x0,
                                  .n = n,
                                  .length = length,
                                  .num_tiles = num_tiles,
                                  .state = state,
                                  .mode = mode,
                                  .batched = batch > 1,
                                  .vector_load = aligned(src.p) && (Source::arrays == 1 || aligned(src.q)),
                                  .vector_store = d_x != nullptr && aligned(d_x)};
  if (mode == linrec_mode::cooperative) {
    return detail::launch_cooperative_smem(kernel, static_cast<int>(grid), Policy::block_threads, shared_bytes, stream,
                                           params);
  }
  SCANLAB_TRY(state.reset(stream));
  kernel<<<static_cast<unsigned>(grid), Policy::block_threads, shared_bytes, stream>>>(params);
  SCANLAB_TRY_LAUNCH();
  return cudaSuccess;
}

// ---- interleaved batches: [length, batch] ----

// Threads per block and time steps whose loads are issued together.
inline constexpr int column_threads = 256;
inline constexpr int column_unroll = 8;
// Threads the segmented path aims at (about 2000 per SM on an H100), and the shortest segment.
inline constexpr std::int64_t column_target_threads = std::int64_t{1} << 18;
inline constexpr std::int64_t column_min_segment = 64;

template <class Source, class T>
struct column_params {
  Source src;
  T* x;                 // or nullptr
  T* final_x;           // or nullptr (single-segment path only)
  const T* x0s;
  T x0;
  std::int64_t batch;
  std::int64_t length;
  std::int64_t segments;        // S
  std::int64_t segment_length;  // ceil(length / S)
  T* segment_a;                 // [batch, S] maps of the segments (pass 1)
  T* segment_b;
  const T* segment_states;      // [batch, S]: state after each segment (pass 2), or nullptr with S == 1
};

// Walks rows [t0, t1) of sequence k from `state`: composes (Compose) or solves, writing x.
template <bool Compose, class Source, class T>
__device__ __forceinline__ void walk_column(const column_params<Source, T>& p, std::int64_t k, std::int64_t t0,
                                            std::int64_t t1, affine_map<T>& composed, T& state) {
  const affine_then op;
  const auto element = [&](std::int64_t t) { return t * p.batch + k; };
  std::int64_t t = t0;
  for (; t + column_unroll <= t1; t += column_unroll) {
    T pv[column_unroll], qv[column_unroll];
#pragma unroll
    for (int u = 0; u < column_unroll; ++u) {
      pv[u] = p.src.p[element(t + u)];
      if constexpr (Source::arrays == 2) qv[u] = p.src.q[element(t + u)];
    }
#pragma unroll
    for (int u = 0; u < column_unroll; ++u) {
      const affine_map<T> m = p.src.map(pv[u], Source::arrays == 2 ? qv[u] : T(0));
      if constexpr (Compose) {
        composed = op(composed, m);
      } else {
        state = apply(m, state);
        if (p.x != nullptr) p.x[element(t + u)] = state;
      }
    }
  }
  for (; t < t1; ++t) {
    const affine_map<T> m = p.src.map(p.src.p[element(t)], Source::arrays == 2 ? p.src.q[element(t)] : T(0));
    if constexpr (Compose) {
      composed = op(composed, m);
    } else {
      state = apply(m, state);
      if (p.x != nullptr) p.x[element(t)] = state;
    }
  }
}

// Pass 1 (S > 1): the composed map of each (segment, sequence), consecutive threads on
// consecutive sequences.
template <class Source, class T>
__global__ void __launch_bounds__(column_threads) linrec_column_maps_kernel(const __grid_constant__ column_params<Source, T> p) {
  const std::int64_t total = p.batch * p.segments;
  for (std::int64_t id = blockIdx.x * static_cast<std::int64_t>(column_threads) + threadIdx.x; id < total;
       id += static_cast<std::int64_t>(gridDim.x) * column_threads) {
    const std::int64_t k = id % p.batch;
    const std::int64_t segment = id / p.batch;
    const std::int64_t t0 = segment * p.segment_length;
    const std::int64_t t1 = t0 + p.segment_length < p.length ? t0 + p.segment_length : p.length;
    affine_map<T> composed{T(1), T(0)};  // an empty segment (possible in the last ones): the identity
    if (t0 < t1) {  // else start from the first map: composing onto (1, 0) would turn Inf * 0 into NaN
      composed = p.src.map(p.src.p[t0 * p.batch + k], Source::arrays == 2 ? p.src.q[t0 * p.batch + k] : T(0));
    }
    T unused = T(0);
    if (t0 < t1) walk_column<true>(p, k, t0 + 1, t1, composed, unused);
    p.segment_a[k * p.segments + segment] = composed.a;
    p.segment_b[k * p.segments + segment] = composed.b;
  }
}

// Pass 3 (or the only pass with S == 1): each (segment, sequence) solved from its entering state.
template <class Source, class T>
__global__ void __launch_bounds__(column_threads) linrec_column_solve_kernel(const __grid_constant__ column_params<Source, T> p) {
  const std::int64_t total = p.batch * p.segments;
  for (std::int64_t id = blockIdx.x * static_cast<std::int64_t>(column_threads) + threadIdx.x; id < total;
       id += static_cast<std::int64_t>(gridDim.x) * column_threads) {
    const std::int64_t k = id % p.batch;
    const std::int64_t segment = id / p.batch;
    const std::int64_t t0 = segment * p.segment_length;
    const std::int64_t t1 = t0 + p.segment_length < p.length ? t0 + p.segment_length : p.length;
    T state = segment == 0 ? (p.x0s != nullptr ? p.x0s[k] : p.x0) : p.segment_states[k * p.segments + segment - 1];
    affine_map<T> unused{T(1), T(0)};
    walk_column<false>(p, k, t0, t1, unused, state);
    if (p.final_x != nullptr && segment == p.segments - 1) p.final_x[k] = state;
  }
}

// Segments per sequence for an interleaved batch: one when there are enough sequences to
// fill the GPU, else enough to reach column_target_threads, each at least
// column_min_segment long.
inline std::int64_t column_segments(std::int64_t batch, std::int64_t length, std::int64_t forced) {
  if (forced > 0) return forced < length ? forced : (length > 0 ? length : 1);
  if (batch <= 0 || length <= column_min_segment || batch >= column_target_threads / 2) return 1;
  std::int64_t s = detail::ceil_div(column_target_threads, batch);
  const std::int64_t most = detail::ceil_div(length, column_min_segment);
  return s < most ? s : most;
}

inline int column_grid(std::int64_t threads) {
  const std::int64_t blocks = detail::ceil_div<std::int64_t>(threads, column_threads);
  return static_cast<int>(blocks < (1 << 20) ? blocks : (1 << 20));
}

template <class Policy, class Source, class T>
[[nodiscard]] cudaError_t dispatch_columns(void* d_temp, std::size_t& temp_bytes, Source src, T* d_x, T* d_final,
                                           std::int64_t batch, std::int64_t length, const T* d_x0s, T x0,
                                           cudaStream_t stream, linrec_options options = {}) {
  if (!multiply_fits(batch, length)) return cudaErrorInvalidValue;
  // One sequence, or sequences of one element: the interleaved layout is the row-major one.
  if (batch == 1 || (length == 1 && options.segments == 0)) {
    return dispatch_rows<Policy>(d_temp, temp_bytes, src, d_x, d_final, batch, length, d_x0s, x0, stream, options);
  }
  const std::int64_t segments = column_segments(batch, length, options.segments);
  column_params<Source, T> params{.src = src,
                                  .x = d_x,
                                  .final_x = d_final,
                                  .x0s = d_x0s,
                                  .x0 = x0,
                                  .batch = batch,
                                  .length = length,
                                  .segments = segments,
                                  .segment_length = length > 0 ? detail::ceil_div(length, segments) : 0,
                                  .segment_a = nullptr,
                                  .segment_b = nullptr,
                                  .segment_states = nullptr};
  if (segments == 1) {
    if (d_temp == nullptr) {
      temp_bytes = 1;
      return cudaSuccess;
    }
    if (batch == 0) return cudaSuccess;
    linrec_column_solve_kernel<<<column_grid(batch), column_threads, 0, stream>>>(params);
    SCANLAB_TRY_LAUNCH();
    return cudaSuccess;
  }
  // [segment a][segment b][segment states][the row-major solve of the segment maps]
  const std::int64_t maps = batch * segments;
  const std::size_t slice = detail::align_up(static_cast<std::size_t>(maps) * sizeof(T));
  std::size_t inner_bytes = 0;
  const ab_source<T> inner_src{nullptr, nullptr};
  SCANLAB_TRY((dispatch_rows<Policy>(nullptr, inner_bytes, inner_src, static_cast<T*>(nullptr),
                                     static_cast<T*>(nullptr), batch, segments, d_x0s, x0, stream)));
  const std::size_t required = 256 + 3 * slice + inner_bytes;
  if (d_temp == nullptr) {
    temp_bytes = required;
    return cudaSuccess;
  }
  if (temp_bytes < required) return cudaErrorInvalidValue;
  auto* base = reinterpret_cast<unsigned char*>(detail::align_up(reinterpret_cast<std::uintptr_t>(d_temp)));
  params.segment_a = reinterpret_cast<T*>(base);
  params.segment_b = reinterpret_cast<T*>(base + slice);
  T* states = reinterpret_cast<T*>(base + 2 * slice);
  params.segment_states = states;
  void* inner_temp = base + 3 * slice;

  const int grid = column_grid(maps);
  linrec_column_maps_kernel<<<grid, column_threads, 0, stream>>>(params);
  SCANLAB_TRY_LAUNCH();
  const ab_source<T> segment_src{params.segment_a, params.segment_b};
  // Pass 2: the state after each segment (and, the last one, the final state).
  SCANLAB_TRY((dispatch_rows<Policy>(inner_temp, inner_bytes, segment_src, d_x != nullptr ? states : nullptr,
                                     d_final, batch, segments, d_x0s, x0, stream, options)));
  if (d_x == nullptr) return cudaSuccess;
  params.final_x = nullptr;  // written by pass 2
  linrec_column_solve_kernel<<<grid, column_threads, 0, stream>>>(params);
  SCANLAB_TRY_LAUNCH();
  return cudaSuccess;
}

}  // namespace linrec_detail

}  // namespace scanlab
