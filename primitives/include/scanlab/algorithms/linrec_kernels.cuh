// Kernels and dispatch of scanlab's linear recurrence solver (scanlab/algorithms/linrec.cuh):
// forward and reverse solves, and the backward pass of a forward solve.
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
// A tile (Policy::block_threads x Policy::items_per_thread elements) goes through shared
// memory: it is copied in coalesced (cp.async, B - 2 tiles ahead) and each thread then
// works on its own items CONSECUTIVE (a blocked arrangement: thread t holds items
// t * items ... ; each warp's part of a tile is the same 32 x items elements in both
// arrangements, so only warp barriers order the copies). Steps:
//   1. each thread composes its maps (the recurrence from state 0 for b, a tree product
//      for a: no per-step operator rules needed, see compose());
//   2. ONE warp scan of the thread compositions; block_scan::scan_warp_totals scans the
//      warp totals (the step's one barrier) and gives the tile's aggregate; each thread
//      keeps its prefix inside the tile in registers; the tile publishes its aggregate
//      and stays PARKED in its buffer (its maps: sequence starts made resets and
//      converted maps are written back);
//   3. at the start of the block's next step warp 0 looks back for the parked tile
//      (tile_state of affine maps: the canonical, deterministic prefix E) while the other
//      warps read and compose the next tile; that step's barrier hands E to all. The
//      aggregates it needs were published at least a step earlier, so it seldom waits:
//      the deferred look-back of the production scan;
//   4. the finish is done on STATES, not maps: the state entering the tile is E(.) (a
//      constant: E always contains element 0, a reset); each thread applies its prefix to
//      it and re-runs its items' recurrence x = a x + b from the maps in the buffer; x goes
//      over b and each warp stores its part coalesced. The buffer then takes a new tile.
// Every grouping depends only on n and the tile shape: results are bitwise identical
// from run to run, in every launch mode.
//
// Interleaved batches ([length, batch], sequence k at k, k + batch, ...): consecutive
// threads walk consecutive sequences down the length (coalesced). With few sequences the
// length is cut into S segments: pass 1 composes each segment's maps, pass 2 solves the
// recurrence of the segment maps (a row-major batch of `batch` sequences of S maps, with
// the single-pass kernel above), pass 3 re-walks each segment from its entering state.
//
// Reverse (x[i] = a[i] x[i+1] + b[i], x[n] = x0; reversed<Source>): the SAME kernel. Step t
// of the scan takes the array's mirror tile (physical tile num_tiles - 1 - t; tiles stay
// aligned to the array's start, so the copies stay 16-byte aligned and a partial tile is the
// first one scanned, with missing items, identities, before the scan's first element), each
// warp moves its mirror warp's part and each thread reads its mirror thread's items, last
// to first. The scan, the look-back and the tile states are as forward, on scan positions
// j = n - 1 - i; sequence starts are the last elements of the sequences as stored. Columns
// walk the rows upward.
//
// The backward pass (gradient_source): the reverse solve of the maps (a[i+1], dL/dx[i]),
// the shift read from the tile as stored: item c's a is the scan's previous item's, for a
// thread's first item the next thread's (as stored) or, at the edge of a warp's part, an
// element copied in with it (s.grad.a_after). Three arrays per tile (a, dL/dx, x). The
// finish writes g (= dL/db) over dL/dx and dL/da = g x[i-1] over x (x[i-1] from the item
// before as stored, or the edge copied in with the warp's part, s.grad.x_before; x0 at each
// sequence's first element), and dL/dx0 = a[0] g[0]. 20 bytes per float element moved.
//
// Element types (linrec_state_t below): what the arrays hold (the storage type S: float,
// double, __half, __nv_bfloat16, complex<float>, complex<double>) and what the solver
// computes in (the state type: float for the 16-bit types, the type itself otherwise).
// Tiles are copied in as stored (16-byte words: 8 halves, 4 floats, 2 complex<float>);
// every value is widened where a thread reads it from its tile; maps, compositions, the
// look-back's tile states and every state are in the state type, and a result is rounded
// to S once, where it is written. A 16-bit tile cannot hold maps in the state type, so for
// those the finish converts the operands again (as the backward pass always does) instead
// of reading converted maps back; sequence starts are then applied to the state there.
// Complex: the same code over complex<R> (scanlab/complex.hpp); the backward pass takes
// conjugates (PyTorch's convention, see gradient_source).
#pragma once

#include <scanlab/arch.cuh>
#include <scanlab/block/block_scan.cuh>
#include <scanlab/complex.hpp>
#include <scanlab/detail/launch.cuh>
#include <scanlab/detail/prefetch.cuh>
#include <scanlab/detail/shuffle.cuh>
#include <scanlab/detail/util.cuh>
#include <scanlab/device/single_pass.cuh>
#include <scanlab/device/tile_state.cuh>
#include <scanlab/error.hpp>
#include <scanlab/warp/warp_scan.cuh>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

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

// The element types of a linear recurrence: what the arrays hold (S) and what is computed
// in, linrec_state_t<S>: float for the 16-bit types (bfloat16 has 8 significant bits,
// float16 11: a state carried in them would lose a few bits per step), S itself for float,
// double, complex<float> and complex<double>.
template <class S>
struct linrec_state {
  using type = S;
};
template <>
struct linrec_state<__half> {
  using type = float;
};
template <>
struct linrec_state<__nv_bfloat16> {
  using type = float;
};
template <class S>
using linrec_state_t = typename linrec_state<S>::type;

// The storage types the solver takes.
template <class S>
inline constexpr bool is_linrec_element_v =
    std::is_same_v<S, float> || std::is_same_v<S, double> || std::is_same_v<S, __half> ||
    std::is_same_v<S, __nv_bfloat16> || std::is_same_v<S, complex<float>> || std::is_same_v<S, complex<double>>;

// Which way a linear recurrence runs: forward x[i] = a[i] x[i-1] + b[i] from x[-1] = x0,
// reverse x[i] = a[i] x[i+1] + b[i] from x[n] = x0 (the state after the end).
enum class linrec_direction { forward, reverse };

namespace linrec_detail {

// The smallest positive subnormal of T (a real type).
template <class T>
__host__ __device__ constexpr T smallest_subnormal() {
  if constexpr (std::is_same_v<T, float>) return 1.40129846e-45f;
  else return 4.9406564584124654e-324;
}

// a b + c, one rounding per (real) part.
template <class T>
__host__ __device__ __forceinline__ T fused(T a, T b, T c) {
  if constexpr (is_complex_v<T>) {
    return fma(a, b, c);
  } else {
#ifdef __CUDA_ARCH__
    if constexpr (std::is_same_v<T, float>) return __fmaf_rn(a, b, c);
    else return __fma_rn(a, b, c);
#else
    return std::fma(a, b, c);
#endif
  }
}

// A nonzero product of nonzero factors stays nonzero (the underflow rule of affine_then):
// a product that underflowed to 0 is kept at the smallest subnormal with its sign (complex:
// in its real part).
template <class T>
__host__ __device__ __forceinline__ T keep_nonzero(T product) {
  if constexpr (is_complex_v<T>) {
    using R = typename T::value_type;
    return product == T(0) ? T(std::copysign(smallest_subnormal<R>(), product.re), R(0)) : product;
  } else {
    return product == T(0) ? std::copysign(smallest_subnormal<T>(), product) : product;
  }
}

// The complex conjugate (the backward pass's adjoint); the value itself for real types.
template <class T>
__host__ __device__ __forceinline__ T conj_of(T v) {
  if constexpr (is_complex_v<T>) {
    return conj(v);
  } else {
    return v;
  }
}

// Loads widen to the state type, stores round to the storage type (once, to nearest even;
// the 16-bit conversions have a software path before sm_80).
template <class S>
__host__ __device__ __forceinline__ linrec_state_t<S> widen(S v) {
  if constexpr (std::is_same_v<S, __half>) return __half2float(v);
  else if constexpr (std::is_same_v<S, __nv_bfloat16>) return __bfloat162float(v);
  else return v;
}
template <class S>
__host__ __device__ __forceinline__ S narrow(linrec_state_t<S> v) {
  if constexpr (std::is_same_v<S, __half>) return __float2half_rn(v);
  else if constexpr (std::is_same_v<S, __nv_bfloat16>) return __float2bfloat16_rn(v);
  else return v;
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
    // (Real types: written out here, not through keep_nonzero: the same expression, but with
    // the call ptxas spilled 16 bytes in the reverse float kernel, sm_90.)
    T kept;
    if constexpr (is_complex_v<T>) {
      kept = linrec_detail::keep_nonzero(product);
    } else {
      kept = product == T(0) ? std::copysign(linrec_detail::smallest_subnormal<T>(), product) : product;
    }
    r.a = (l.a == T(0) || e.a == T(0)) ? T(0) : kept;
    r.b = l.a == T(0) ? l.b : linrec_detail::fused(l.a, e.b, l.b);
    return r;
  }
};

namespace linrec_detail {

// ---- where the maps come from: one or two arrays, turned into (a, b) on load ----
// Each form says how many arrays it reads, its direction (reversed<> below turns any form
// around), whether what is copied in are the maps themselves (no conversion to write back
// for the finish) and whether it is the backward pass of a solve (gradient_source).

// Each form reads arrays of the storage type S and builds maps in the state type
// (linrec_state_t<S>) from the widened operands: map() takes state values.

// x[i] = a[i] x[i-1] + b[i]
template <class S>
struct ab_source {
  using storage_type = S;
  using state_type = linrec_state_t<S>;
  static constexpr int arrays = 2;
  static constexpr linrec_direction direction = linrec_direction::forward;
  static constexpr bool maps_as_read = true;
  static constexpr bool gradient = false;
  const S* p;  // a
  const S* q;  // b
  __host__ __device__ affine_map<state_type> map(state_type a, state_type b) const { return {a, b}; }
};

// v[i] = (1 - lambda[i]) v[i-1] + lambda[i] u[i]
template <class S>
struct lambda_source {
  using storage_type = S;
  using state_type = linrec_state_t<S>;
  static constexpr int arrays = 2;
  static constexpr linrec_direction direction = linrec_direction::forward;
  static constexpr bool maps_as_read = false;
  static constexpr bool gradient = false;
  const S* p;  // lambda
  const S* q;  // u
  __host__ __device__ affine_map<state_type> map(state_type lambda, state_type u) const {
    return {state_type(1) - lambda, lambda * u};
  }
};

// y[i] = (1 - alpha) y[i-1] + alpha s[i] (alpha in the state type)
template <class S>
struct ema_source {
  using storage_type = S;
  using state_type = linrec_state_t<S>;
  static constexpr int arrays = 1;
  static constexpr linrec_direction direction = linrec_direction::forward;
  static constexpr bool maps_as_read = false;
  static constexpr bool gradient = false;
  const S* p;  // s
  const S* q;  // unused
  state_type alpha;
  state_type one_minus_alpha;
  __host__ __device__ affine_map<state_type> map(state_type s, state_type) const {
    return {one_minus_alpha, alpha * s};
  }
};

// The same form solved from the end: x[i] = a_i x[i+1] + b_i, x[n] = x0 (per sequence).
// The kernels are the same: tile t of the scan is the array's mirror tile, read from its end.
template <class Source>
struct reversed : Source {
  static_assert(Source::direction == linrec_direction::forward && !Source::gradient, "reversed<> of a forward form");
  static constexpr linrec_direction direction = linrec_direction::reverse;
};

// The backward pass of x = linrec(a, b, x0) (forward): the adjoint is the reverse
// recurrence g[i] = dL/dx[i] + a[i+1] g[i+1] (g[n-1] = dL/dx[n-1]), i.e. the reverse solve
// of the maps (a[i+1], dL/dx[i]) from the state 0; then dL/db = g (the solve's x),
// dL/da[i] = g[i] x[i-1] (x[-1] = x0) and dL/dx0 = a[0] g[0] per sequence (0 where a[0]
// is 0: a reset cuts x0 off). The shift of a (a[i+1] with element i) and of x (x[i-1])
// is done where the tile is read; dL/da and dL/dx0 are formed in the finish.
// Complex: PyTorch's convention for holomorphic functions (the gradient is dL/d conj(z)):
// g[i] = dL/dx[i] + conj(a[i+1]) g[i+1], dL/da[i] = g[i] conj(x[i-1]), dL/db = g,
// dL/dx0 = conj(a[0]) g[0] (conj_of: nothing for real types).
template <class S>
struct gradient_source {
  using storage_type = S;
  using state_type = linrec_state_t<S>;
  static constexpr int arrays = 3;
  static constexpr linrec_direction direction = linrec_direction::reverse;
  static constexpr bool maps_as_read = true;
  static constexpr bool gradient = true;
  const S* p;      // a
  const S* q;      // dL/dx
  const S* r;      // x, the forward solution (read only with grad_a)
  S* grad_a;       // dL/da, or nullptr
  S* grad_x0;      // dL/dx0, one per sequence, or nullptr
  __host__ __device__ affine_map<state_type> map(state_type a_next, state_type g) const {
    return {conj_of(a_next), g};
  }
};

// Variable-length sequences, any form above: the arrays are the concatenation of
// `sequences` sequences, sequence s being elements [offsets[s], offsets[s+1]). Solved as
// ONE scan of the whole array, each sequence's first element (reverse and the backward
// pass: its last) made a reset, as the sequence starts of a row-major batch are; the
// agent finds which of a thread's items start or end a sequence by walking the offsets
// from the sequence of its first item, bisected inside the tile's bracket,
// tile_sequences (temp storage, linrec_tile_sequences_kernel).
template <class Source>
struct varlen : Source {
  const std::int64_t* offsets = nullptr;         // sequences + 1 values: 0, ..., n, nondecreasing
  std::int64_t sequences = 0;                    // at least 1 when the array is not empty
  const std::int64_t* tile_sequences = nullptr;  // tiles + 1: the sequence of each tile's first element
};
template <class Source>
inline constexpr bool is_varlen = false;
template <class Source>
inline constexpr bool is_varlen<varlen<Source>> = true;

// ---- tuning ----

// A tile shape: threads per block, items per thread (whole 16-byte words), the resident
// blocks per SM __launch_bounds__ must leave room for, and whether later tiles are
// prefetched: copied asynchronously into a third tile buffer of shared memory while the
// current one is scanned and the parked one finished, and asked of L2 `l2_ahead` tiles
// further ahead (no registers either way). Without prefetch each tile is copied in when
// its scan starts (two buffers: the parked tile and the current one).
template <int BlockThreads, int ItemsPerThread, int MinBlocksPerSm, bool Prefetch>
struct linrec_policy {
  static constexpr int block_threads = BlockThreads;
  static constexpr int items_per_thread = ItemsPerThread;
  static constexpr int min_blocks_per_sm = MinBlocksPerSm;
  static constexpr bool prefetch = Prefetch;
  static constexpr int buffers = Prefetch ? 3 : 2;
  static constexpr int l2_ahead = Prefetch ? 1 : 0;
  static constexpr int tile_items = BlockThreads * ItemsPerThread;
};

// The same with the buffers and the L2 prefetch distance given apart: two tile buffers
// (the parked tile and the current one, copied in at the end of the step before) with L2
// asked for the tiles L2Ahead steps beyond: larger tiles in the same shared memory, the
// copy's latency from L2 in each step. The backward pass's Hopper shape.
template <int BlockThreads, int ItemsPerThread, int MinBlocksPerSm, int Buffers, int L2Ahead>
struct linrec_buffers_policy {
  static constexpr int block_threads = BlockThreads;
  static constexpr int items_per_thread = ItemsPerThread;
  static constexpr int min_blocks_per_sm = MinBlocksPerSm;
  static constexpr bool prefetch = Buffers > 2;
  static constexpr int buffers = Buffers;
  static constexpr int l2_ahead = L2Ahead;
  static constexpr int tile_items = BlockThreads * ItemsPerThread;
};

// sm_90 (H100). Measured in the H100 session recorded in primitives/docs/linrec.md: see the
// tuning table there. 64 bytes of a and 64 of b per thread (16 floats, 8 doubles), prefetch
// on: one block of 512 per SM (three 64 KB tile buffers: the parked, the scanned and the
// staged tile, and the sequence starts' initial states: 198 KB of shared memory, 204 for double).
// Other architectures (scanlab/arch.cuh) have less shared memory per block, so smaller
// tiles: Ampere datacentre (163 KB) keeps the prefetch with 32 bytes per thread (108 KB for
// double); Ampere, Ada and consumer Blackwell (99 KB) take 32 bytes per thread without the
// third buffer (72 KB); Turing (64 KB) 16 bytes per thread without it (40 KB). Only Hopper
// was measured.
// Items per thread count states: `bytes` of the state type (16 floats, 8 doubles, 8
// complex<float>), so the 16-bit types take float's 16 items (32 bytes of storage per
// thread and array: their tiles take half float's shared memory), at least one 16-byte
// word of storage. The look-back kernel holds a thread's items in registers while it
// composes them: 32 bfloat16 items (64 bytes, float's bytes) spilled 244-476 bytes at 128
// registers and ran at half the speed of 16 (H100, [4096, 65536]: 2.27 ms against 1.25).
// `bytes` of each array in items of `unit` bytes, at least one 16-byte word of storage S.
template <class S>
constexpr int linrec_items_of(int bytes, int unit) {
  const int items = bytes / unit;
  const int word = static_cast<int>(16 / sizeof(S));
  return items > word ? items : word;
}
template <class S>
constexpr int linrec_items(int bytes) {
  return linrec_items_of<S>(bytes, static_cast<int>(sizeof(linrec_state_t<S>)));
}
// The rows kernel's shapes count storage (`bytes` of each array as stored: 32 bfloat16 in
// 64 bytes), at least one 16-byte word: without the look-back a tile's bytes pay more than
// its registers (H100, bfloat16 [12288, 4096]: 256 x 32, 0.167 ms against 0.179 for
// 256 x 16; the backward pass 512 x 16, 0.259 ms against 0.327 for 512 x 8).
template <class S>
constexpr int linrec_stored_items(int bytes) {
  return linrec_items_of<S>(bytes, static_cast<int>(sizeof(S)));
}
// A per-architecture table (scanlab/arch.cuh) of Shape<T, Family>::policy.
// The families with Hopper's limits (227 KB of shared memory a block: Hopper and
// datacentre Blackwell), which take the shapes measured on Hopper.
constexpr bool linrec_hopper_family(int family) { return family >= 90 && family < 120; }
template <template <class, int> class Shape, class T>
struct linrec_table {
  template <int Family>
  struct at {
    using type = typename Shape<T, Family>::policy;
  };
};
template <class T, int Family>
struct linrec_shape {
  static constexpr int bytes = linrec_hopper_family(Family) ? 64 : (Family == 75 ? 16 : 32);
  static constexpr bool prefetch = linrec_hopper_family(Family) || Family == 80;
  using policy = linrec_policy<512, linrec_items<T>(bytes), 1, prefetch>;
};
template <class T>
using linrec_tuning = linrec_table<linrec_shape, T>;
template <class T>
using default_linrec_policy = linrec_tuning<T>;

// The backward pass stages three arrays per tile (a, dL/dx and x), not two: at the
// forward's 64 bytes per thread its three buffers would need 288 KB. Hopper (and Blackwell
// datacentre, same limits): the forward's tile, 64 bytes per thread and array, in TWO
// buffers (192 KB) with L2 asked for the tile after the one being copied in; measured on an
// H200 at 2^28 floats (scanlab-linrec --backward --bench --tune, primitives/docs/linrec.md):
// 2.05 ms against 2.23-2.28 for 32 bytes per thread in three buffers (144 KB), 2.31 with L2
// two tiles ahead, 2.36 for 32 bytes in two buffers, 2.34 for 256 x 16 in three: the step
// costs about the same whatever the tile, so the larger tile pays. A100 (163 KB): 32 bytes,
// three buffers (144 KB). The others: 16 bytes and two buffers (48 KB). complex<double>
// takes blocks of 256 on both (with its 16-byte initial states, 512 would not fit: 173 KB
// on the A100, 64 KB on Turing). Only Hopper measured.
// float alone on Hopper: the same bytes in blocks of 256, two resident per SM (each 96 KB),
// since the backward pass stopped testing every item for a sequence start (H200,
// 2026-11-28, primitives/docs/linrec.md "Backward tiles"): 2^28 floats 1.686 ms against
// 1.908 for 512 x 16 (2^24: 0.143 against 0.158; [1000, 70001]: 0.486 against 0.535),
// though it spills (172/480 bytes). double and complex<float> were slower so (2^27:
// 1.92 ms against 1.82, 2.12 against 1.87), and the 16-bit types too (128 x 16 at 4/SM or
// 256 x 16 at 2/SM: 1.43 and 1.33 ms against 1.15).
template <class T, int Family>
struct linrec_gradient_shape {
  static constexpr int items(int bytes) { return linrec_items<T>(bytes); }
  static constexpr int small_threads = sizeof(linrec_state_t<T>) >= 16 ? 256 : 512;
  using hopper_policy = std::conditional_t<std::is_same_v<T, float>, linrec_buffers_policy<256, items(64), 2, 2, 1>,
                                           linrec_buffers_policy<512, items(64), 1, 2, 1>>;
  using policy = std::conditional_t<
      linrec_hopper_family(Family), hopper_policy,
      std::conditional_t<Family == 80, linrec_policy<small_threads, items(32), 1, true>,
                         linrec_policy<small_threads, items(16), 1, false>>>;
};
template <class T>
using linrec_gradient_tuning = linrec_table<linrec_gradient_shape, T>;
template <class T>
using default_linrec_gradient_policy = linrec_gradient_tuning<T>;

// The rows kernel's tile shapes (short rows: linrec_rows_kernel, no look-back). Without the
// look-back a tile's chain is short, so more bytes in flight per step pay more than a large
// tile. Hopper, measured on the H100 with scanlab-linrec --bench --tune (float32,
// primitives/docs/linrec.md "Short rows"): forward 256 threads x 64 bytes per array, 2
// blocks/SM, two buffers, no L2 prefetch: [12288, 4096] 0.213 ms (95.4 % of memcpy),
// [49152, 1024] 0.215, [196608, 256] 0.216, against 0.224-0.226 for 256 x 16 with three
// buffers, 0.226-0.229 for the look-back kernel's 512 x 16 in the rows kernel, 0.231-0.235
// for 1024 x 8 or 512 x 8 (2/SM), 0.245 for 256 x 16 at 3/SM, and 0.252-0.254 for the
// look-back kernel. Backward: 512 x 32 bytes, three buffers, L2 one tile ahead: [12288,
// 4096] 0.352 ms (96.1 %) and [49152, 1024] 0.351 against 0.359 in two buffers, 0.399 for
// 256 x 16 (three buffers), 0.414 for the look-back kernel's 512 x 16 (two buffers) and
// 0.527 for the look-back kernel. Only float was measured; the shapes count bytes, so the
// other types take the same bytes per thread. Other architectures: their look-back
// shapes (not measured). Where the rows shape's tile is not a multiple of the length (8192
// floats), the look-back kernel (dispatch_rows).
// Remeasured on the H200 (2026-11-28, primitives/docs/linrec.md "Backward tiles", after
// the backward pass stopped testing every item for a sequence start):
// - the backward pass without the L2 prefetch (three buffers are ahead enough): float
//   [12288, 4096] 0.261 ms against 0.285, double 0.572 against 0.610, complex<float> 0.644
//   against 0.687; chained float rows the same (1.423 against 1.424 ms);
// - the 16-bit types (twice the items per byte, so a tile's chain is longer for its
//   bytes): more, smaller blocks. Forward 128 x 32 at 4/SM in two buffers, bfloat16
//   [12288, 4096] 0.097 ms against 0.101 for 256 x 32 at 2/SM, [12288, 8192] 0.174 against
//   0.186, [4096, 65536] 0.440 against 0.448, [196608, 256] 0.104 against 0.107 (float16
//   0.105 against 0.110); backward 256 x 16 at 3/SM in two buffers, [12288, 4096] 0.199 ms
//   against 0.227 for 512 x 16 in three, [4096, 65536] 0.809 against 0.885, [12288, 8192]
//   0.349 against 0.420, [49152, 1024] 0.216 against 0.247 (float16 [12288, 4096] 0.202
//   against 0.224).
template <class T, int Family>
struct linrec_rows_shape {
  using hopper_policy = std::conditional_t<(sizeof(T) < 4), linrec_buffers_policy<128, linrec_stored_items<T>(64), 4, 2, 0>,
                                           linrec_policy<256, linrec_stored_items<T>(64), 2, false>>;
  using policy = std::conditional_t<linrec_hopper_family(Family), hopper_policy, typename linrec_shape<T, Family>::policy>;
};
template <class T, int Family>
struct linrec_rows_gradient_shape {
  using hopper_policy = std::conditional_t<(sizeof(T) < 4), linrec_buffers_policy<256, linrec_stored_items<T>(32), 3, 2, 0>,
                                           linrec_buffers_policy<512, linrec_stored_items<T>(32), 1, 3, 0>>;
  using policy = std::conditional_t<linrec_hopper_family(Family), hopper_policy,
                                    typename linrec_gradient_shape<T, Family>::policy>;
};
template <class T>
using default_linrec_rows_policy = linrec_table<linrec_rows_shape, T>;
template <class T>
using default_linrec_rows_gradient_policy = linrec_table<linrec_rows_gradient_shape, T>;

// ---- launch modes: the single-pass engine's (device/single_pass.cuh) ----

using linrec_mode = device::single_pass_mode;

// Test and benchmark hooks: force a launch mode, cap the grid (many look-back rounds from
// small inputs), or force the segmented path for interleaved batches. Users never need these.
enum class column_path : int { automatic = 0, walk, tiled };
struct linrec_options {
  linrec_mode mode = linrec_mode::automatic;
  int max_blocks = 0;             // 0: as many as are resident
  std::int64_t segments = 0;      // interleaved: 0 = automatic (walk path)
  column_path columns = column_path::automatic;  // interleaved / channels-last: which kernel
  std::int64_t chain_min_batch = 0;  // row-major: the fewest sequences chained (0: chain_min_batch)
};

// The tile states the single-pass kernel publishes for storage type S: maps of the state
// type (float for the 16-bit types). Every size of temp storage and every schedule names
// this one type, so what is sized is what is written.
template <class S>
using linrec_tile_state = device::tile_state<affine_map<linrec_state_t<S>>>;

// S: the storage type of x, the final states and the initial states (the source's).
template <class Source, class S>
struct linrec_params {
  Source src;
  S* x;                 // the solution, or nullptr (final states only)
  S* final_x;           // the last state of each sequence, or nullptr
  const S* x0s;         // one initial state per sequence, or nullptr: x0 for all
  linrec_state_t<S> x0;
  std::int64_t n;       // batch * length
  std::int64_t length;  // elements per sequence (n for one sequence)
  device::single_pass_schedule<affine_map<linrec_state_t<S>>> schedule;
  bool batched;       // more than one sequence: sequence starts inside the array
  bool vector_load;   // the input arrays are 16-byte aligned
  bool vector_store;  // the outputs are 16-byte aligned
  std::int64_t batch;   // sequences
};

// One element of storage type S copied into shared memory by itself (an initial state, the
// backward pass's edges). cp.async copies 4, 8 or 16 bytes, so a 16-bit element travels in
// the aligned 4-byte word that holds it (`word`), with which half it is (`high`).
template <class S, bool Narrow = (sizeof(S) < 4)>
struct element_slot {
  S value;
};
template <class S>
struct element_slot<S, true> {
  std::uint32_t word;
  std::uint32_t high;  // 1: the element is the word's upper half
};

// One element into shared memory. From sm_80 on, cp.async: the copy lands by the matching
// cp.async.wait_group (the single-pass agent's take(), the tiled columns' load).
// Before sm_80 (no cp.async) the same thread copies the same bytes to the same place at
// once, through registers: the data is there earlier than the wait promises, and the
// agent's __syncwarp in take() makes it visible to the warp as it does the asynchronous
// copies. (The callers stage into a buffer only once it is free, so an early copy
// overwrites nothing still in use.)
__device__ __forceinline__ void copy_async(void* to, const void* from, std::integral_constant<int, 16>) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const auto address = static_cast<unsigned>(__cvta_generic_to_shared(to));
  asm volatile(
      "{\n\t.reg .u64 g;\n\tcvta.to.global.u64 g, %1;\n\tcp.async.cg.shared.global [%0], [g], 16;\n\t}" ::"r"(address),
      "l"(from)
      : "memory");
#else
  *static_cast<uint4*>(to) = *static_cast<const uint4*>(from);  // both 16-byte aligned (staged tiles)
#endif
}
template <int Bytes>
__device__ __forceinline__ void copy_async(void* to, const void* from, std::integral_constant<int, Bytes>) {
  static_assert(Bytes == 4 || Bytes == 8, "cp.async copies 4, 8 or 16 bytes");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const auto address = static_cast<unsigned>(__cvta_generic_to_shared(to));
  asm volatile(
      "{\n\t.reg .u64 g;\n\tcvta.to.global.u64 g, %1;\n\tcp.async.ca.shared.global [%0], [g], %2;\n\t}" ::"r"(address),
      "l"(from), "n"(Bytes)
      : "memory");
#else
  using word = std::conditional_t<Bytes == 4, unsigned, unsigned long long>;
  *static_cast<word*>(to) = *static_cast<const word*>(from);  // aligned as a word
#endif
}

template <class Policy, class Source, class S>
struct linrec_agent {
  // S: the storage type (what the arrays and the tiles in shared memory hold); T: the
  // state type everything is computed in.
  using T = linrec_state_t<S>;
  using map_t = affine_map<T>;
  using params_t = linrec_params<Source, S>;
  using block_scan_t = block_scan<map_t, Policy::block_threads>;
  using slot_t = element_slot<S>;

  static_assert(is_linrec_element_v<S>,
                "linear recurrences over float, double, __half, __nv_bfloat16, complex<float> or complex<double>");
  static_assert(std::is_same_v<typename Source::storage_type, S>, "the source's storage type");
  // The tile holds the maps in the state type (converted maps and sequence starts written
  // back for the finish), or, for the 16-bit types, only the operands as stored: their
  // finish converts again and applies the sequence starts itself.
  static constexpr bool maps_in_tile = std::is_same_v<S, T>;
  static constexpr int block_threads = Policy::block_threads;
  static constexpr int items = Policy::items_per_thread;
  static constexpr int C = static_cast<int>(16 / sizeof(S));  // items per 16-byte word
  static constexpr int W = items / C;                         // words per thread and array
  static_assert(W >= 1 && W <= 8 && (W & (W - 1)) == 0 && W * C == items,
                "items per thread must be 1, 2, 4 or 8 16-byte words");
  static constexpr int B = Policy::buffers;
  static_assert(B >= 2, "a parked and a current tile at least");
  static constexpr int in_flight = B - 2;  // tiles whose copies may still be pending when one is taken
  static constexpr int warps = block_threads / 32;
  static constexpr int warp_items = 32 * items;
  static constexpr int warp_words = 32 * W;
  static constexpr int tile_words = block_threads * W;
  static constexpr std::int64_t tile_items = Policy::tile_items;
  // The (a, b) source needs no conversion: what is copied in are the maps.
  static constexpr bool maps_as_read = Source::maps_as_read;
  // Reverse: step t of the scan takes the array's mirror tile (tiles stay aligned to the
  // array's start, so a partial tile is the first one scanned, with its missing items
  // before the scan's first element), and each thread reads the items of its mirror
  // thread, last to first. Everything the scan and the look-back see is as forward.
  static constexpr bool reverse = Source::direction == linrec_direction::reverse;
  static constexpr bool gradient = Source::gradient;
  static_assert(!gradient || reverse, "the backward pass runs from the end");
  // Variable-length sequences (varlen<>): sequence starts and ends found from the offsets.
  static constexpr bool by_offsets = is_varlen<Source>;

  // The backward pass's third array and the two shifts: a[i+1] and x[i-1] reach over the
  // edge of each warp's part of the tile, into another warp's part (or tile): those two
  // elements are copied in with the warp's part, so that only warp barriers order the copies.
  struct gradient_storage {
    uint4 x[B][tile_words];     // x (the forward solution); dL/da is written over it
    slot_t a_after[B][warps];   // a at the element after each warp's part (0 past the end)
    slot_t x_before[B][warps];  // x at the element before each warp's part (0 before the start)
  };
  struct no_storage {};

  struct temp_storage {
    // B tiles of maps: tile i of the block in buffer i % B (the parked one, the one being
    // scanned, the ones being copied in). Raw operands are copied in; the scan turns them
    // into maps in place (except for the (a, b) source) and makes sequence starts resets,
    // so that the finish reads maps; the finish writes x over b.
    uint4 a[B][tile_words];
    uint4 b[B][tile_words];
    // The initial state of the sequence that starts in the thread's items of a tile (the
    // backward pass: that ends there, where x[-1] = x0 enters dL/da), copied in with the
    // tile (batches with x0s and sequences of at least `items`): a load at scan time would
    // put a memory round trip into every tile's critical path.
    slot_t start_state[B][block_threads];
    // Two of each, alternating from tile to tile (`parity`): a step has ONE barrier (the
    // block scan's), so a slot is rewritten only two steps after it was read, with a
    // barrier between.
    typename block_scan_t::temp_storage scan[2];
    device::single_pass_storage<map_t> engine;
    std::conditional_t<gradient, gradient_storage, no_storage> grad;
  };
  static constexpr std::size_t smem_bytes = sizeof(temp_storage);

  // The engine's view (device/single_pass.cuh): each warp finishes and refills only its own
  // part of a buffer (park_buffers 0), and the look-back runs at the start of a step while
  // the other warps compose the new tile.
  using value_type = map_t;
  static constexpr int states = 1;
  static constexpr int park_buffers = 0;
  static constexpr bool early_look_back = true;
  // The look-back is on the step's critical path (the other warps wait for warp 0 at the
  // block scan's barrier), and a resident grid's tiles of one step span about four windows,
  // so most look-backs find C_w not yet out: for real states the first round trip also
  // loads the three windows before (H200, 2026-11-28, one sequence, scanlab-linrec --bench:
  // 2^28 float 0.935 ms against 1.051, bfloat16 0.951 against 0.981, 2^27 double 1.085
  // against 1.152, float [1000, 70001] 0.278 against 0.301, float backward 1.640 against
  // 1.664; primitives/docs/linrec.md "The look-back's round trips"). Not for the complex
  // types (an earlier form: complex64 2.47 ms against 1.27, complex128 at one window 3.66
  // against 1.63: their kernels are at the register cap) nor the backward pass of double
  // (1.92 ms against 1.85).
  static constexpr int look_back_depth =
      !is_complex_v<T> && (!gradient || sizeof(T) == 4) ? 3 : 0;

  const params_t& p;
  temp_storage& s;
  const int warp;
  const int lane;
  const int swizzle;  // the owner's word j lies at word owner() * W + (j ^ swizzle)

  map_t aggregate;  // the tile's map
  map_t prefix;     // the maps of the tile before the thread's items (if has_prefix)
  bool has_prefix = false;
  // The parked tile: the thread's prefix inside it in registers, its maps in shared memory
  // (the engine keeps its index and aggregate).
  map_t parked_prefix;
  bool parked_has_prefix = false;
  // The backward pass: where sequences start and end among the thread's items, found once
  // when the tile is scanned (one remainder), kept for its finish.
  struct sequence_marks {
    int start = -1;  // sequences of at least `items` elements (or one sequence): the item, or -1
    int end = -1;
    std::uint32_t start_mask = 0;  // shorter ones: bit c for item c
    std::uint32_t end_mask = 0;
  };
  // Kept as they are, or (double and the complex types: fewer registers, double's
  // streamed finish measured faster so) packed into one register: start + 1 and end + 1 in
  // 8 bits each, the masks of sequences shorter than `items` found again in the finish.
  // Not by offsets (their marks are found by the walk of the offsets).
  static constexpr bool packed_marks = sizeof(T) >= 8 && !by_offsets;
  using kept_marks = std::conditional_t<packed_marks, std::uint32_t, sequence_marks>;
  kept_marks marks_scanned{};
  kept_marks marks_parked{};
  // Variable lengths: the sequence of the thread's first item (as stored) in the scanned and
  // in the parked tile (-1: no items), found when the tile is scanned, kept for its finish.
  std::int64_t sequence_scanned = -1;
  std::int64_t sequence_parked = -1;
  __device__ kept_marks keep(const sequence_marks& m) const {
    if constexpr (packed_marks) {
      return static_cast<std::uint32_t>(m.start + 1) | (static_cast<std::uint32_t>(m.end + 1) << 8);
    } else {
      return m;
    }
  }
  __device__ sequence_marks restore(const kept_marks& kept, std::int64_t tile) const {
    if constexpr (packed_marks) {
      if (p.batched && p.length < items) return find_marks(tile);
      sequence_marks m;
      m.start = static_cast<int>(kept & 0xffu) - 1;
      m.end = static_cast<int>((kept >> 8) & 0xffu) - 1;
      return m;
    } else {
      return kept;
    }
  }

  __device__ linrec_agent(const params_t& params, temp_storage& storage)
      : p(params),
        s(storage),
        warp(static_cast<int>(threadIdx.x / 32)),
        lane(static_cast<int>(threadIdx.x % 32)),
        swizzle(swizzle_of(static_cast<int>(owner()))) {}

  // ---- where things are ----

  // Where the thread's items and the warp's part lie in a tile as stored: forward the
  // thread's and the warp's own, reverse their mirrors' (thread block_threads - 1 - t, warp
  // warps - 1 - w). The thread's items are the tile's owner() * items ... + items - 1; the
  // warp's part, region(), holds the items of owners 32 region() ... 32 region() + 31.
  __device__ static unsigned owner() {
    if constexpr (reverse) {
      return block_threads - 1 - threadIdx.x;
    } else {
      return threadIdx.x;
    }
  }
  __device__ int region() const {
    if constexpr (reverse) {
      return warps - 1 - warp;
    } else {
      return warp;
    }
  }

  // Thread t's W words are consecutive in the tile. Stored plainly, a quarter warp reading
  // word j of 8 threads (16-byte accesses) would hit only 8 / W of the 8 bank groups;
  // XOR-ing the word index with (lane * W / 8) % W spreads them over all 8. The coalesced
  // accesses (8 consecutive words) stay inside one 128-byte row: conflict free too.
  __host__ __device__ static constexpr int swizzle_of(int thread) { return ((thread % 32) * W / 8) % W; }
  __device__ static int physical(int word) {
    const int owner = word / W;
    return owner * W + ((word % W) ^ swizzle_of(owner));
  }
  // Item e of a tile (by position as stored) in a buffer, as stored.
  __device__ static S& item(uint4* buffer, int e) { return reinterpret_cast<S*>(buffer + physical(e / C))[e % C]; }
  // The thread's item c in scan order is its owner's item stored(c).
  __host__ __device__ static constexpr int stored(int c) { return reverse ? items - 1 - c : c; }
  // Item c (scan order) of the thread's own items (the maps written back: maps_in_tile only).
  __device__ S& own_item(uint4* buffer, int c) const {
    const int e = stored(c);
    return reinterpret_cast<S*>(buffer + owner() * W + ((e / C) ^ swizzle))[e % C];
  }
  // One 16-byte word of a tile as C states (widened), and C states as one word (rounded).
  __device__ static void unpack(uint4 r, T* v) {
    if constexpr (std::is_same_v<S, T>) {
      std::memcpy(v, &r, sizeof(r));
    } else if constexpr (std::is_same_v<S, __nv_bfloat16>) {
      // A bfloat16 is a float's upper half: the lower element of each 4-byte word shifted
      // up, the upper one masked in place (one instruction each, not an extract and a shift).
      const unsigned words[4] = {r.x, r.y, r.z, r.w};
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        v[2 * k] = __uint_as_float(words[k] << 16);
        v[2 * k + 1] = __uint_as_float(words[k] & 0xffff0000u);
      }
    } else {
      S w[C];
      std::memcpy(w, &r, sizeof(r));
#pragma unroll
      for (int c = 0; c < C; ++c) v[c] = widen(w[c]);
    }
  }
  __device__ static uint4 pack(const T* v) {
    uint4 r;
    if constexpr (std::is_same_v<S, T>) {
      std::memcpy(&r, v, sizeof(r));
    } else {
      S w[C];
#pragma unroll
      for (int c = 0; c < C; ++c) w[c] = narrow<S>(v[c]);
      std::memcpy(&r, w, sizeof(r));
    }
    return r;
  }
  // The thread's items of a buffer, in scan order.
  __device__ void read_own(const uint4* buffer, T (&v)[items]) const {
#pragma unroll
    for (int j = 0; j < W; ++j) {
      T w[C];
      unpack(buffer[owner() * W + (j ^ swizzle)], w);
#pragma unroll
      for (int c = 0; c < C; ++c) v[stored(j * C + c)] = w[c];
    }
  }
  __device__ void write_own(uint4* buffer, const T (&v)[items]) const {
#pragma unroll
    for (int j = 0; j < W; ++j) {
      T w[C];
#pragma unroll
      for (int c = 0; c < C; ++c) w[c] = v[stored(j * C + c)];
      buffer[owner() * W + (j ^ swizzle)] = pack(w);
    }
  }

  // Step `tile` of the scan works on the array's tile physical_tile(tile), stored from base().
  __device__ std::int64_t physical_tile(std::int64_t tile) const {
    return reverse ? p.schedule.num_tiles - 1 - tile : tile;
  }
  __device__ std::int64_t base(std::int64_t tile) const { return physical_tile(tile) * tile_items; }
  __device__ bool is_full(std::int64_t tile) const { return base(tile) + tile_items <= p.n; }
  // The scan position of the thread's item 0 (position j is element j forward, n - 1 - j
  // in reverse); negative for the missing items that precede a reverse scan's first element.
  __device__ std::int64_t first_position(std::int64_t tile) const {
    if constexpr (reverse) {
      return p.n - base(tile) - static_cast<std::int64_t>(owner() + 1) * items;
    } else {
      return tile * tile_items + threadIdx.x * items;
    }
  }
  // The thread's items that exist: c in [first_existing, end_existing).
  __device__ int first_existing(std::int64_t j0) const {
    if constexpr (reverse) {
      return j0 >= 0 ? 0 : (j0 <= -items ? items : static_cast<int>(-j0));
    } else {
      return 0;
    }
  }
  __device__ int end_existing(std::int64_t j0) const {
    if constexpr (reverse) {
      return items;
    } else {
      const std::int64_t left = p.n - j0;
      return left < 0 ? 0 : (left > items ? items : static_cast<int>(left));
    }
  }

  // ---- moving tiles: global <-> shared, coalesced; each warp moves only its own part ----
  // A warp's part of a tile is the same in the coalesced and the blocked arrangement (its
  // lanes' items), so copies, scan and finish need only __syncwarp between them.

  // Full tiles of 16-byte aligned arrays are copied asynchronously; the others are loaded
  // by items when they are taken.
  __device__ bool staged(std::int64_t tile) const { return is_full(tile) && p.vector_load; }
  // The backward pass reads x only for dL/da.
  __device__ bool reads_x() const {
    if constexpr (gradient) {
      return p.src.grad_a != nullptr;
    } else {
      return false;
    }
  }

  // Element `index` of `array` (`count` elements) into a slot: asynchronously, except for
  // a 16-bit element whose aligned word would reach past the array (its first element, at
  // the upper half of a word, or its last, at the lower half): copied at once.
  __device__ static void copy_element_async(slot_t* to, const S* array, std::int64_t index, std::int64_t count) {
    const S* const from = array + index;
    if constexpr (sizeof(S) >= 4) {
      copy_async(&to->value, from, std::integral_constant<int, static_cast<int>(sizeof(S))>{});
    } else {
      const bool high = reinterpret_cast<std::uintptr_t>(from) % 4 != 0;
      if (high ? index >= 1 : index + 1 < count) {
        copy_async(&to->word, reinterpret_cast<const unsigned char*>(from) - (high ? 2 : 0),
                   std::integral_constant<int, 4>{});
        to->high = high ? 1u : 0u;
      } else {
        set_slot(*to, *from);
      }
    }
  }
  __device__ static void set_slot(slot_t& slot, S v) {
    if constexpr (sizeof(S) >= 4) {
      slot.value = v;
    } else {
      std::uint16_t bits;
      std::memcpy(&bits, &v, sizeof(bits));
      slot.word = bits;
      slot.high = 0;
    }
  }
  __device__ static T slot_value(const slot_t& slot) {
    if constexpr (sizeof(S) >= 4) {
      return widen(slot.value);
    } else {
      const auto bits = static_cast<std::uint16_t>(slot.high != 0 ? slot.word >> 16 : slot.word & 0xffffu);
      S v;
      std::memcpy(&v, &bits, sizeof(v));
      return widen(v);
    }
  }

  __device__ bool starts_staged() const {
    if constexpr (by_offsets) {
      return false;  // the initial states are read where the walk of the offsets meets a start
    } else {
      return p.batched && p.x0s != nullptr && p.length >= items;
    }
  }
  // The sequence whose initial state the thread's items of a full tile need, or -1
  // (sequences of at least `items`: at most one): the one starting there, or for the
  // backward pass the one ending there.
  __device__ std::int64_t thread_start_sequence(std::int64_t tile) const {
    const std::int64_t j0 = first_position(tile);
    if constexpr (reverse) {
      const std::int64_t c = gradient ? to_next_end(j0) : to_next_start(j0);
      return c < items ? sequence_of(j0 + c) : -1;
    } else {
      const std::int64_t c = to_next_start(j0);
      return c < items ? (j0 + c) / p.length : -1;
    }
  }

  // The backward pass's two edge elements of the warp's part (lane 0; the tile is loaded
  // from `first`): a after it, x before it. Asynchronous where the tile is staged.
  template <bool Async>
  __device__ void copy_edges(std::int64_t first, int buf) {
    if constexpr (gradient) {
      if (lane != 0) return;
      const std::int64_t after = first + (region() + 1) * warp_items;
      slot_t& a_after = s.grad.a_after[buf][region()];
      if (after >= p.n) {
        set_slot(a_after, S{});  // the end of the array: the last element starts the scan, no a[i+1]
      } else if constexpr (Async) {
        copy_element_async(&a_after, p.src.p, after, p.n);
      } else {
        set_slot(a_after, p.src.p[after]);
      }
      if (!reads_x()) return;
      const std::int64_t before = first + region() * warp_items - 1;
      slot_t& x_before = s.grad.x_before[buf][region()];
      if (before < 0 || before >= p.n) {
        // the first element (x0 takes its place), or a warp whose part of a partial tile
        // is past the end (its items do not exist; the value is never used)
        set_slot(x_before, S{});
      } else if constexpr (Async) {
        copy_element_async(&x_before, p.src.r, before, p.n);
      } else {
        set_slot(x_before, p.src.r[before]);
      }
    }
  }

  // Starts copying `tile` into buffer `buf` (a full aligned tile) and commits a copy group
  // either way, so that every thread counts the same groups.
  __device__ void stage(std::int64_t tile, int buf) {
    if (tile < p.schedule.num_tiles && staged(tile)) {
      const std::int64_t first = base(tile);
#pragma unroll
      for (int k = 0; k < W; ++k) {
        const int word = region() * warp_words + k * 32 + lane;
        copy_async(&s.a[buf][physical(word)], p.src.p + first + word * C, std::integral_constant<int, 16>{});
        if constexpr (Source::arrays >= 2) {
          copy_async(&s.b[buf][physical(word)], p.src.q + first + word * C, std::integral_constant<int, 16>{});
        }
      }
      if constexpr (gradient) {
        if (reads_x()) {
#pragma unroll
          for (int k = 0; k < W; ++k) {
            const int word = region() * warp_words + k * 32 + lane;
            copy_async(&s.grad.x[buf][physical(word)], p.src.r + first + word * C, std::integral_constant<int, 16>{});
          }
        }
        copy_edges<true>(first, buf);
      }
      if (starts_staged() && (!gradient || reads_x())) {
        const std::int64_t sequence = thread_start_sequence(tile);
        if (sequence >= 0) copy_element_async(&s.start_state[buf][threadIdx.x], p.x0s, sequence, p.batch);
      }
    }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif  // before sm_80 the copies are already done: no groups to count
  }

  // Asks L2 for a tile that will be staged later: the copies into shared memory wait for
  // a free buffer (B - 2 tiles ahead), this keeps the memory busy further ahead: the warp's
  // part of each array (detail::warp_prefetch_l2: one bulk prefetch from sm_90 on).
  __device__ void prefetch_l2(std::int64_t tile) const {
    if (tile >= p.schedule.num_tiles || !staged(tile)) return;
    const std::int64_t first = base(tile) + region() * warp_items;
    constexpr int bytes = warp_items * static_cast<int>(sizeof(S));
    detail::warp_prefetch_l2<bytes>(p.src.p + first, lane);
    if constexpr (Source::arrays >= 2) detail::warp_prefetch_l2<bytes>(p.src.q + first, lane);
    if constexpr (gradient) {
      if (reads_x()) detail::warp_prefetch_l2<bytes>(p.src.r + first, lane);
    }
  }

  // Makes `tile` readable in buffer `buf`: waits for its copies (InFlight later groups may
  // still be pending), or loads it by items (partial tiles, misaligned arrays).
  template <int InFlight>
  __device__ void take(std::int64_t tile, int buf) {
    if (staged(tile)) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
      asm volatile("cp.async.wait_group %0;" ::"n"(InFlight) : "memory");
#endif  // before sm_80 stage() copied synchronously: nothing to wait for
    } else {
      const std::int64_t first = base(tile);
      const std::int64_t left = p.n - first;
#pragma unroll
      for (int k = 0; k < items; ++k) {
        const int e = region() * warp_items + k * 32 + lane;
        const bool exists = e < left;
        item(s.a[buf], e) = exists ? p.src.p[first + e] : S{};
        if constexpr (Source::arrays >= 2) item(s.b[buf], e) = exists ? p.src.q[first + e] : S{};
      }
      if constexpr (gradient) {
        if (reads_x()) {
#pragma unroll
          for (int k = 0; k < items; ++k) {
            const int e = region() * warp_items + k * 32 + lane;
            item(s.grad.x[buf], e) = e < left ? p.src.r[first + e] : S{};
          }
        }
        copy_edges<false>(first, buf);
      }
    }
    __syncwarp();  // the lanes' copies are visible to the whole warp
  }

  // ---- sequence starts and ends (in scan order) ----

  // From scan position j >= 0 to the next sequence start (0: it starts one) or end.
  __device__ std::int64_t to_next_start(std::int64_t j) const {
    const std::int64_t first = j % p.length;
    return first == 0 ? 0 : p.length - first;
  }
  __device__ std::int64_t to_next_end(std::int64_t j) const { return p.length - 1 - j % p.length; }
  // The sequence of scan position j, as stored (reverse: the scan meets the last one first).
  __device__ std::int64_t sequence_of(std::int64_t j) const {
    const std::int64_t k = p.batched ? j / p.length : 0;
    return reverse ? p.batch - 1 - k : k;
  }
  __device__ T initial_state(std::int64_t sequence) const {
    return p.x0s != nullptr ? widen(p.x0s[sequence]) : p.x0;
  }
  // Position q of a sequence (from its start) is its last (forward).
  __device__ bool ends(std::int64_t q) const {
    return p.length >= items ? q + 1 == p.length : (q + 1) % p.length == 0;
  }

  // Which of the thread's items (scan order; j0 = first_position, [lo, hi) existing) start
  // (End: end) a sequence: sequences of at least `items` have at most one among a thread's
  // items, found with one subtraction (`one`: its index, or -1; `mask` unused); shorter ones
  // get a test per item (`mask`, bit c: item c). One test per item against the one index,
  // not a start test per item: the per-item tests (64-bit compares, and a division each for
  // the initial state) were 0.19 ms of a batch's 1.42 ms at 2^16 x 2^12 on the H100.
  template <bool End>
  __device__ void marks(std::int64_t j0, int lo, int hi, int& one, std::uint32_t& mask) const {
    one = -1;
    mask = 0;
    if (lo >= hi) return;
    const std::int64_t first = j0 + lo;
    if (!p.batched) {  // one sequence: position 0 starts it, n - 1 ends it
      const std::int64_t c = End ? p.n - 1 - j0 : -j0;
      if (c >= lo && c < hi) one = static_cast<int>(c);
      return;
    }
    if (p.length >= items) {
      const std::int64_t c = lo + (End ? to_next_end(first) : to_next_start(first));
      if (c < hi) one = static_cast<int>(c);
      return;
    }
#pragma unroll
    for (int c = 0; c < items; ++c) {
      if (c >= lo && c < hi && (End ? (j0 + c + 1) % p.length == 0 : (j0 + c) % p.length == 0)) mask |= 1u << c;
    }
  }
  // The initial state for the marked item c (`one`): staged with the tile, or loaded.
  __device__ T marked_state(int buf, std::int64_t tile, std::int64_t j) const {
    return starts_staged() && staged(tile) ? slot_value(s.start_state[buf][threadIdx.x])
                                           : initial_state(sequence_of(j));
  }

  // ---- variable-length sequences (by_offsets) ----
  // A tile's elements belong to the sequences tile_sequences[t] ... tile_sequences[t + 1]
  // (t: the tile as stored). Each thread bisects that bracket for the sequence of its first
  // item (one load per halving; the bracket holds one or two sequences when they are longer
  // than a tile, and the block's loads share a few cache lines when they are short), then
  // walks the offsets along its items: one comparison per item, one load per sequence
  // boundary crossed (empty sequences included). Every index stays in [0, sequences), also
  // with offsets that break the precondition (the results are then meaningless, never an
  // access out of bounds).

  // The element of the thread's first item (as stored).
  __device__ std::int64_t first_element(std::int64_t tile) const {
    return base(tile) + static_cast<std::int64_t>(owner()) * items;
  }
  // The last s in [lo, hi] with offsets[s] <= i: the nonempty sequence holding element i.
  __device__ std::int64_t sequence_holding(std::int64_t i, std::int64_t lo, std::int64_t hi) const {
    while (lo < hi) {
      const std::int64_t mid = hi - (hi - lo) / 2;
      if (p.src.offsets[mid] <= i) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    return lo;
  }
  // The sequence of the thread's first item of `tile`, or -1 (no items: past the end).
  __device__ std::int64_t first_sequence(std::int64_t tile) const {
    const std::int64_t e0 = first_element(tile);
    if (e0 >= p.n) return -1;
    const std::int64_t t = physical_tile(tile);
    return sequence_holding(e0, p.src.tile_sequences[t], p.src.tile_sequences[t + 1]);
  }
  // f(e, s, first, last) for each of the thread's items that exist, as stored (e = 0 ..
  // items - 1, first to last): s its sequence (s0: the first item's, first_sequence), and
  // whether it is that sequence's first and last element.
  template <class F>
  __device__ void for_each_item_sequence(std::int64_t tile, std::int64_t s0, F&& f) const {
    if (s0 < 0) return;
    const std::int64_t e0 = first_element(tile);
    const std::int64_t* const offsets = p.src.offsets;
    std::int64_t sequence = s0;
    std::int64_t begin = offsets[sequence];
    std::int64_t end = offsets[sequence + 1];
#pragma unroll
    for (int e = 0; e < items; ++e) {
      const std::int64_t i = e0 + e;
      if (i < p.n) {
        while (end <= i && sequence + 1 < p.src.sequences) {  // on to the sequence holding i, past empty ones
          ++sequence;
          begin = end;
          end = offsets[sequence + 1];
        }
        f(e, sequence, i == begin, i + 1 == end);
      }
    }
  }
  // Where sequences start and end among the thread's items, from the offsets (bit c: item c
  // in scan order): the scan starts at each sequence's first element as stored (reverse, and
  // so the backward pass: its last) and ends at the other. The backward pass keeps both; the
  // 16-bit finish uses the starts (its tiles keep no maps, so it applies each start itself).
  __device__ sequence_marks offset_marks(std::int64_t tile, std::int64_t s0) const {
    static_assert(items <= 32, "one bit per item");
    sequence_marks m;
    for_each_item_sequence(tile, s0, [&](int e, std::int64_t, bool first, bool last) {
      if (reverse ? last : first) m.start_mask |= 1u << stored(e);
      if (reverse ? first : last) m.end_mask |= 1u << stored(e);
    });
    return m;
  }
  // The sequence of item c (scan order) of the thread's items: a bisection of the tile's
  // bracket (the 16-bit finish, once per sequence start).
  __device__ std::int64_t sequence_at(std::int64_t tile, int c) const {
    const std::int64_t t = physical_tile(tile);
    return sequence_holding(first_element(tile) + stored(c), p.src.tile_sequences[t], p.src.tile_sequences[t + 1]);
  }

  // ---- the scan of a tile ----

  // The thread's maps: identities past the end; each sequence start replaced by the
  // constant map (0, f(x0)), which is written back for the finish (as are converted maps).
  __device__ void read_maps(int buf, std::int64_t tile, T (&a)[items], T (&b)[items]) {
    uint4* const wa = &s.a[buf][owner() * W];
    uint4* const wb = &s.b[buf][owner() * W];
#pragma unroll
    for (int j = 0; j < W; ++j) {
      unpack(wa[j ^ swizzle], &a[j * C]);
      if constexpr (Source::arrays == 2) unpack(wb[j ^ swizzle], &b[j * C]);
    }
    if constexpr (reverse) {  // scan order: last to first (read_own, written so: fewer spills, ptxas sm_90)
#pragma unroll
      for (int c = 0; c < items / 2; ++c) {
        // (not std::swap: a host constexpr function, refused in device code without
        // --expt-relaxed-constexpr, which users need not pass; scripts/compile-arches.sh does not)
        const T a_c = a[c], b_c = b[c];
        a[c] = a[items - 1 - c];
        a[items - 1 - c] = a_c;
        b[c] = b[items - 1 - c];
        b[items - 1 - c] = b_c;
      }
    }
    const bool full = is_full(tile);
    const std::int64_t j0 = first_position(tile);
    // The thread's items that exist: [lo, left) (forward: lo = 0; reverse: left = items).
    const int lo = reverse && !full ? first_existing(j0) : 0;
    const int left = full ? items : end_existing(j0);
    // Two loops, not one with `full ||` in its test: ptxas made that a select per item and
    // operand in every tile (4 instructions per element, H200 profile of the rows kernel).
    if (full) {
#pragma unroll
      for (int c = 0; c < items; ++c) {
        const map_t m = p.src.map(a[c], Source::arrays >= 2 ? b[c] : T(0));
        a[c] = m.a;
        b[c] = m.b;
      }
    } else {
#pragma unroll
      for (int c = 0; c < items; ++c) {
        map_t m{T(1), T(0)};
        if ((!reverse || c >= lo) && c < left) m = p.src.map(a[c], Source::arrays >= 2 ? b[c] : T(0));
        a[c] = m.a;
        b[c] = m.b;
      }
    }
    if constexpr (!maps_as_read && maps_in_tile) {
      if constexpr (reverse) {
        write_own(s.a[buf], a);
        write_own(s.b[buf], b);
      } else {
#pragma unroll
        for (int j = 0; j < W; ++j) {
          uint4 ra, rb;
          std::memcpy(&ra, &a[j * C], sizeof(ra));
          std::memcpy(&rb, &b[j * C], sizeof(rb));
          wa[j ^ swizzle] = ra;
          wb[j ^ swizzle] = rb;
        }
      }
    }
    if constexpr (by_offsets) {
      // Each sequence's first element (reverse: its last) from the walk of the offsets.
      sequence_scanned = first_sequence(tile);
      for_each_item_sequence(tile, sequence_scanned, [&](int e, std::int64_t sequence, bool first, bool last) {
        if (!(reverse ? last : first)) return;
        const T x0 = initial_state(sequence);
#pragma unroll
        for (int c = 0; c < items; ++c) {
          if (c == stored(e)) make_start(buf, c, x0, a, b);
        }
      });
      return;
    }
    const std::int64_t first = j0 + lo;  // the first existing item's position
    if ((!p.batched && first != 0) || (reverse ? lo >= left : left == 0)) return;
    if (p.length >= items) {
      // At most one sequence starts among the thread's items: item c0. One test per item
      // against c0, not a start test per item: the per-item tests (64-bit compares, and a
      // division each for the initial state) were 0.19 ms of a batch's 1.42 ms at
      // 2^16 x 2^12 on the H100.
      const std::int64_t to_start = lo + (p.batched ? to_next_start(first) : 0);
      if (to_start >= left) return;
      const int c0 = static_cast<int>(to_start);
      const T x0 = starts_staged() && staged(tile) ? slot_value(s.start_state[buf][threadIdx.x])
                                                   : initial_state(p.batched ? sequence_of(j0 + c0) : 0);
#pragma unroll
      for (int c = 0; c < items; ++c) {
        if (c == c0) make_start(buf, c, x0, a, b);
      }
      return;
    }
    // Sequences shorter than `items` (several may start among a thread's items): a test per item.
#pragma unroll
    for (int c = 0; c < items; ++c) {
      const bool start = !p.batched ? c == lo : (!reverse || c >= lo) && c < left && (j0 + c) % p.length == 0;
      if (start) make_start(buf, c, initial_state(p.batched ? sequence_of(j0 + c) : 0), a, b);
    }
  }

  // Item c starts a sequence: its map becomes the constant (0, f(x0)), written back for the
  // finish (16-bit tiles: the finish applies the start again, finish_converting).
  __device__ void make_start(int buf, int c, T x0, T (&a)[items], T (&b)[items]) {
    b[c] = apply(map_t{a[c], b[c]}, x0);
    a[c] = T(0);
    if constexpr (maps_in_tile) {
      own_item(s.a[buf], c) = a[c];
      own_item(s.b[buf], c) = b[c];
    }
  }

  // Where sequences start and end among the thread's items of `tile` (scan order; the
  // backward pass), from one remainder.
  __device__ sequence_marks find_marks(std::int64_t tile) const {
    sequence_marks m;
    const std::int64_t j0 = first_position(tile);
    const int lo = first_existing(j0);
    if (!p.batched) {  // one sequence: position 0 starts it, n - 1 ends it
      const std::int64_t c_start = -j0, c_end = p.n - 1 - j0;
      if (c_start >= lo && c_start < items) m.start = static_cast<int>(c_start);
      if (c_end >= lo && c_end < items) m.end = static_cast<int>(c_end);
      return m;
    }
    if (lo >= items) return m;
    if (p.length >= items) {
      const std::int64_t r = (j0 + lo) % p.length;
      const std::int64_t c_start = lo + (r == 0 ? 0 : p.length - r);
      const std::int64_t c_end = lo + p.length - 1 - r;
      if (c_start < items) m.start = static_cast<int>(c_start);
      if (c_end < items) m.end = static_cast<int>(c_end);
      return m;
    }
#pragma unroll
    for (int c = 0; c < items; ++c) {
      if (c < lo) continue;
      const std::int64_t r = (j0 + c) % p.length;
      if (r == 0) m.start_mask |= 1u << c;
      if (r == p.length - 1) m.end_mask |= 1u << c;
    }
    return m;
  }

  // The backward pass's maps (scan order), for the scan and again for the finish (nothing
  // is written back: a stays as read, for the shift and for dL/dx0). Map c is
  // (a[i+1], dL/dx[i]) for the element i of item c: a of the scan's previous item, which
  // for item 0 is the item after the thread's items as stored (the next owner's first, or
  // past the warp's part, the edge copied with it). A sequence start (its last element:
  // the state after it is 0) is the constant (0, dL/dx); missing items are identities.
  // own_a: a of the thread's own items.
  __device__ void gradient_maps(int buf, std::int64_t tile, const sequence_marks& m, T (&own_a)[items], T (&a)[items],
                                T (&g)[items]) const {
    read_own(s.a[buf], own_a);
    read_own(s.b[buf], g);
    a[0] = conj_of(owner() % 32 == 31 ? slot_value(s.grad.a_after[buf][region()])
                                      : widen(item(s.a[buf], (owner() + 1) * items)));
#pragma unroll
    for (int c = 1; c < items; ++c) a[c] = conj_of(own_a[c - 1]);
    if (tile == 0) {  // the scan's first tile: items before the first element (a partial tile)
      const int lo = first_existing(first_position(tile));
#pragma unroll
      for (int c = 0; c < items; ++c) {
        if (c < lo) {
          a[c] = T(1);
          g[c] = T(0);
        }
      }
    }
    // The starts as one mask, tested once: most threads of long sequences have none.
    const std::uint32_t starts = m.start_mask | (m.start >= 0 ? 1u << m.start : 0u);
    if (starts != 0) {
#pragma unroll
      for (int c = 0; c < items; ++c) {
        if ((starts >> c) & 1u) a[c] = T(0);
      }
    }
  }

  // The composition of the thread's maps, first to last, without the operator's
  // per-step rules: b is the recurrence run from state 0 (exactly the operator's b, reset
  // rule included); a is the product of the a's, formed as a tree (4 dependent steps, not
  // 15), 0 if one of them is 0 (a reset) and never 0 otherwise (each underflowed partial
  // product is kept at the smallest subnormal, as the operator keeps it).
  __device__ static map_t compose(const T (&a)[items], const T (&b)[items]) {
    T x = b[0];
    bool reset = a[0] == T(0);
#pragma unroll
    for (int c = 1; c < items; ++c) {
      x = a[c] == T(0) ? b[c] : fused(a[c], x, b[c]);
      reset = reset || a[c] == T(0);
    }
    T product[items];
#pragma unroll
    for (int c = 0; c < items; ++c) product[c] = a[c];
#pragma unroll
    for (int stride = 1; stride < items; stride *= 2) {
#pragma unroll
      for (int c = 0; c + stride < items; c += 2 * stride) product[c] = keep_nonzero(product[c] * product[c + stride]);
    }
    return map_t{reset ? T(0) : product[0], x};
  }

  // Reads, prepares and scans `tile` (in buffer `buf`): ONE warp scan of the threads'
  // compositions and the block's scan of the warp totals (the step's barrier); sets
  // aggregate, prefix and has_prefix, and publishes the aggregate.
  __device__ void scan_tile(int buf, std::int64_t tile, int parity) {
    const affine_then op;
    map_t composed;
    {
      T a[items], b[items];
      if constexpr (gradient) {
        T own_a[items];
        sequence_marks m;
        if constexpr (by_offsets) {
          sequence_scanned = first_sequence(tile);
          m = offset_marks(tile, sequence_scanned);
        } else {
          m = find_marks(tile);
        }
        marks_scanned = keep(m);
        gradient_maps(buf, tile, m, own_a, a, b);
      } else {
        read_maps(buf, tile, a, b);
      }
      composed = compose(a, b);
    }
    map_t lane_prefix, inclusive;
    const bool has_lane_prefix = warp_exclusive_scan_unseeded(composed, op, lane_prefix, inclusive);
    const map_t warp_total = detail::shfl_idx(inclusive, 31);
    map_t warp_prefix;
    const bool has_warp_prefix = block_scan_t(s.scan[parity]).scan_warp_totals(warp_total, op, warp_prefix, aggregate);
    prefix = has_warp_prefix ? (has_lane_prefix ? op(warp_prefix, lane_prefix) : warp_prefix) : lane_prefix;
    has_prefix = has_warp_prefix || has_lane_prefix;
  }

  // ---- the finish of the parked tile ----

  // The warp's part of a finished buffer out to `out` (coalesced; streaming stores: read
  // by no one here).
  __device__ void store(uint4* buffer, std::int64_t tile, S* out) const {
    const std::int64_t first = base(tile);
    if (is_full(tile) && p.vector_store) {
#pragma unroll
      for (int k = 0; k < W; ++k) {
        const int word = region() * warp_words + k * 32 + lane;
        __stcs(reinterpret_cast<uint4*>(out + first) + word, buffer[physical(word)]);
      }
    } else {
      const std::int64_t left = p.n - first;
#pragma unroll
      for (int k = 0; k < items; ++k) {
        const int e = region() * warp_items + k * 32 + lane;
        if (e < left) out[first + e] = item(buffer, e);
      }
    }
  }

  // After the barrier that published the parked tile's prefix: each thread re-runs its
  // items' recurrence from the state entering them. This works on STATES: the state entering the
  // tile is the prefix's b (the prefix always contains element 0, a reset; tile 0 needs
  // none), the thread's prefix inside the tile takes it to the thread's items. x goes
  // over b in the buffer and each warp stores its part coalesced; the buffer is free after.
  __device__ void finish(const device::retiring<map_t, 1>& r) {
    const int buf = r.step % B;
    const std::int64_t tile = r.tile;
    const T entering = r.has_prefix ? apply(r.prefix[0], T(0)) : T(0);
    T state = parked_has_prefix ? apply(parked_prefix, entering) : entering;
    if constexpr (gradient) {
      finish_gradient(buf, tile, state);
      return;
    }
    uint4* const wa = &s.a[buf][owner() * W];
    uint4* const wb = &s.b[buf][owner() * W];
    // 16-bit tiles hold the operands as stored: the maps are formed again here and each
    // sequence start sets the state to its initial state (the same bits as the start map
    // (0, f(x0)) the scan composed: f applied to x0). Where the starts among the thread's
    // items (`start_bits`, bit k: item k in scan order) share one initial state (`one_x0`:
    // no x0s, or at most one start), it is read before the loop and each item's start is a
    // select; a branch and a search per item cost 8 instructions per element (H200 profile).
    std::uint32_t start_bits = 0;
    [[maybe_unused]] T start_x0 = p.x0;
    bool one_x0 = true;
    [[maybe_unused]] std::int64_t j0 = 0;
    if constexpr (!maps_in_tile) {
      static_assert(items <= 32, "one bit per item");
      if constexpr (by_offsets) {
        start_bits = offset_marks(tile, sequence_parked).start_mask;  // the walk of the offsets, as the scan did
        one_x0 = p.x0s == nullptr || __popc(start_bits) <= 1;
        if (p.x0s != nullptr && start_bits != 0 && one_x0) start_x0 = initial_state(sequence_at(tile, __ffs(start_bits) - 1));
      } else {
        const sequence_marks starts = find_marks(tile);
        j0 = first_position(tile);
        // the thread's items that exist: [0, left) (forward)
        const int left = is_full(tile) ? items : end_existing(j0);
        const std::uint32_t existing = left >= 32 ? ~0u : (1u << left) - 1u;
        if (starts.start >= 0 && starts.start < left) {
          start_bits = 1u << starts.start;
          start_x0 = marked_state(buf, tile, j0 + starts.start);
        }
        const std::uint32_t short_starts = starts.start_mask & existing;  // sequences shorter than `items`
        start_bits |= short_starts;
        one_x0 = p.x0s == nullptr || short_starts == 0;
      }
    }
    T x[items];  // scan order
    const auto solve = [&](auto shared_x0) {
#pragma unroll
      for (int jj = 0; jj < W; ++jj) {
        const int j = reverse ? W - 1 - jj : jj;  // the thread's words in scan order
        T a[C], b[C];
        unpack(wa[j ^ swizzle], a);
        if constexpr (maps_in_tile || Source::arrays == 2) unpack(wb[j ^ swizzle], b);
        if constexpr (!maps_in_tile) {
#pragma unroll
          for (int c = 0; c < C; ++c) {
            const map_t m = p.src.map(a[c], Source::arrays == 2 ? b[c] : T(0));
            a[c] = m.a;
            b[c] = m.b;
          }
        }
#pragma unroll
        for (int cc = 0; cc < C; ++cc) {
          const int c = reverse ? C - 1 - cc : cc;
          if constexpr (!maps_in_tile) {
            const int k = jj * C + cc;  // scan order
            if ((start_bits >> k) & 1u) {
              if constexpr (decltype(shared_x0)::value) {
                state = start_x0;
              } else if constexpr (by_offsets) {
                state = initial_state(sequence_at(tile, k));
              } else {
                state = initial_state(sequence_of(j0 + k));
              }
            }
          }
          state = a[c] == T(0) ? b[c] : fused(a[c], state, b[c]);  // apply(), the reset rule
          x[jj * C + cc] = state;
        }
      }
    };
    if (one_x0) {
      solve(std::true_type{});
    } else {
      solve(std::false_type{});
    }
    if (p.final_x != nullptr) write_final_states(tile, x);
    if (p.x == nullptr) {
      __syncwarp();  // every lane has read its maps before the buffer is refilled
      return;
    }
    if constexpr (reverse) {
      write_own(s.b[buf], x);
    } else {
#pragma unroll
      for (int j = 0; j < W; ++j) wb[j ^ swizzle] = pack(&x[j * C]);
    }
    __syncwarp();
    if constexpr (reverse) {
      store(s.b[buf], tile, p.x);
    } else {  // the same, written out: through store() the forward kernel spilled (ptxas, sm_90)
      const std::int64_t base = tile * tile_items;
      if (is_full(tile) && p.vector_store) {
#pragma unroll
        for (int k = 0; k < W; ++k) {
          const int word = warp * warp_words + k * 32 + lane;
          __stcs(reinterpret_cast<uint4*>(p.x + base) + word, s.b[buf][physical(word)]);  // streaming: read by no one here
        }
      } else {
        const std::int64_t left = p.n - base;
#pragma unroll
        for (int k = 0; k < items; ++k) {
          const int e = warp * warp_items + k * 32 + lane;
          if (e < left) p.x[base + e] = item(s.b[buf], e);
        }
      }
    }
    __syncwarp();  // every lane has read x before the buffer is refilled
  }

  // The backward pass's finish: g (dL/db) from the entering state through the maps again,
  // dL/da = g x[i-1] (x[i-1]: the scan's next item, for the last one the item before the
  // thread's items as stored, or before the warp's part, the edge copied with it; x0 at a
  // sequence's first element), dL/dx0 = a[0] g[0] at each sequence's first element. g goes
  // over dL/dx, dL/da over x, and each warp stores its part of both. Two ways, the same
  // results: whole arrays in registers (float: 2.04 ms at 2^28 on an H200, against 2.38 for
  // the other way), or word by word with the marks packed (double: 1.87 ms at 2^27 against
  // 2.06). ptxas spills some registers either way (the tile is the forward's, with a third
  // array and the shifts).
  static constexpr bool streamed_finish = sizeof(T) >= 8 && !by_offsets;  // double and the complex types
  static_assert(!streamed_finish || std::is_same_v<S, T>, "the streamed finish reads g back as stored");
  __device__ void finish_gradient(int buf, std::int64_t tile, T state) {
    if constexpr (streamed_finish) {
      finish_gradient_streamed(buf, tile, state);
      return;
    }
    const sequence_marks m = restore(marks_parked, tile);
    T own_a[items], a[items], g[items];
    gradient_maps(buf, tile, m, own_a, a, g);
#pragma unroll
    for (int c = 0; c < items; ++c) {
      state = a[c] == T(0) ? g[c] : fused(a[c], state, g[c]);
      g[c] = state;
    }
    const bool ends = m.end >= 0 || m.end_mask != 0;  // each sequence's first element: the scan's last
    const std::int64_t j0 = ends ? first_position(tile) : 0;
    if (p.src.grad_x0 != nullptr && ends) {
      if constexpr (by_offsets) {
        for_each_item_sequence(tile, sequence_parked, [&](int e, std::int64_t sequence, bool first, bool) {
          if (!first) return;
#pragma unroll
          for (int c = 0; c < items; ++c) {
            if (c == stored(e)) {
              p.src.grad_x0[sequence] = narrow<S>(own_a[c] == T(0) ? T(0) : conj_of(own_a[c]) * g[c]);
            }
          }
        });
      } else {
#pragma unroll
        for (int c = 0; c < items; ++c) {
          if (c == m.end || ((m.end_mask >> c) & 1u)) {
            p.src.grad_x0[sequence_of(j0 + c)] = narrow<S>(own_a[c] == T(0) ? T(0) : conj_of(own_a[c]) * g[c]);
          }
        }
      }
    }
    if (reads_x()) {
      T x[items];
      read_own(s.grad.x[buf], x);
      const T before = owner() % 32 == 0 ? slot_value(s.grad.x_before[buf][region()])
                                         : widen(item(s.grad.x[buf], owner() * items - 1));
      T da[items];
      // x[i-1] of item c: the next item's x in scan order; at a sequence's first element
      // its initial state. Two loops, so that the threads without one (most, in long
      // sequences) test nothing per item.
      auto form_da = [&](auto with_ends) {
        constexpr bool E = decltype(with_ends)::value;
        const T x0 = E && m.end >= 0 ? marked_state(buf, tile, j0 + m.end) : T(0);
#pragma unroll
        for (int c = 0; c < items; ++c) {
          T previous = c + 1 < items ? x[c + 1] : before;
          if constexpr (E) {
            if (c == m.end) previous = x0;
            if constexpr (!by_offsets) {
              if ((m.end_mask >> c) & 1u) previous = initial_state(sequence_of(j0 + c));
            }
          }
          da[c] = g[c] * conj_of(previous);
        }
      };
      if (ends) form_da(std::true_type{});
      else form_da(std::false_type{});
      if constexpr (by_offsets) {  // x[-1] = x0 at each sequence's first element
        if (ends) {
          for_each_item_sequence(tile, sequence_parked, [&](int e, std::int64_t sequence, bool first, bool) {
            if (!first) return;
            const T x0s = initial_state(sequence);
#pragma unroll
            for (int c = 0; c < items; ++c) {
              if (c == stored(e)) da[c] = g[c] * conj_of(x0s);
            }
          });
        }
      }
      __syncwarp();  // every lane has read x (its own and its neighbour's) before dL/da goes over it
      write_own(s.grad.x[buf], da);
    }
    if (p.x != nullptr) write_own(s.b[buf], g);
    __syncwarp();
    if (p.x != nullptr) store(s.b[buf], tile, p.x);
    if (reads_x()) store(s.grad.x[buf], tile, p.src.grad_a);
    __syncwarp();  // every lane has read its part before the buffer is refilled
  }

  // The same word by word (few registers live, as the forward's finish): g written over
  // dL/dx as it goes, with dL/dx0 where a sequence starts; then dL/da over x word by word,
  // x[i-1] carried from the element before as stored, read by every lane before any
  // dL/da goes over x.
  __device__ void finish_gradient_streamed(int buf, std::int64_t tile, T state) {
    const sequence_marks m = restore(marks_parked, tile);
    const bool ends = m.end >= 0 || m.end_mask != 0;
    const std::int64_t j0 = ends ? first_position(tile) : 0;
    uint4* const wg = &s.b[buf][owner() * W];
    {
      const int lo = tile == 0 ? first_existing(first_position(tile)) : 0;  // missing items: tile 0 only
      T a_next = owner() % 32 == 31 ? slot_value(s.grad.a_after[buf][region()])
                                    : widen(item(s.a[buf], (owner() + 1) * items));
      const uint4* const wa = &s.a[buf][owner() * W];
#pragma unroll
      for (int jj = 0; jj < W; ++jj) {  // the thread's words in scan order: last to first
        const int j = W - 1 - jj;
        T a[C], gw[C];
        unpack(wa[j ^ swizzle], a);
        unpack(wg[j ^ swizzle], gw);
#pragma unroll
        for (int cc = 0; cc < C; ++cc) {
          const int c = jj * C + cc;  // the item in scan order, stored as j * C + e
          const int e = C - 1 - cc;
          T map_a = conj_of(a_next);
          T map_b = gw[e];
          a_next = a[e];
          if (c < lo) {
            map_a = T(1);
            map_b = T(0);
          }
          if (c == m.start || ((m.start_mask >> c) & 1u)) map_a = T(0);
          state = map_a == T(0) ? map_b : fused(map_a, state, map_b);
          gw[e] = state;
          if (p.src.grad_x0 != nullptr && (c == m.end || ((m.end_mask >> c) & 1u))) {
            p.src.grad_x0[sequence_of(j0 + c)] = narrow<S>(a[e] == T(0) ? T(0) : conj_of(a[e]) * state);
          }
        }
        wg[j ^ swizzle] = pack(gw);  // the thread's own word: read by no other lane
      }
    }
    if (reads_x()) {
      T previous = owner() % 32 == 0 ? slot_value(s.grad.x_before[buf][region()])
                                     : widen(item(s.grad.x[buf], owner() * items - 1));
      const T x0 = m.end >= 0 ? marked_state(buf, tile, j0 + m.end) : T(0);
      __syncwarp();  // every lane has read its neighbour's last x before dL/da goes over x
      uint4* const wx = &s.grad.x[buf][owner() * W];
#pragma unroll
      for (int j = 0; j < W; ++j) {  // as stored: first to last
        T x[C], g[C], da[C];
        unpack(wx[j ^ swizzle], x);
        unpack(wg[j ^ swizzle], g);
#pragma unroll
        for (int e = 0; e < C; ++e) {
          const int c = stored(j * C + e);  // the item in scan order
          T before = previous;
          if (c == m.end) before = x0;
          if ((m.end_mask >> c) & 1u) before = initial_state(sequence_of(j0 + c));
          da[e] = g[e] * conj_of(before);
          previous = x[e];
        }
        wx[j ^ swizzle] = pack(da);
      }
    }
    __syncwarp();
    if (p.x != nullptr) store(s.b[buf], tile, p.x);
    if (reads_x()) store(s.grad.x[buf], tile, p.src.grad_a);
    __syncwarp();  // every lane has read its part before the buffer is refilled
  }

  // The thread holding the last item of a sequence (scan order) writes its final state.
  __device__ void write_final_states(std::int64_t tile, const T (&x)[items]) const {
    if constexpr (by_offsets) {  // each sequence's last element (reverse: its first), from the walk
      for_each_item_sequence(tile, sequence_parked, [&](int e, std::int64_t sequence, bool first, bool last) {
        if (!(reverse ? first : last)) return;
#pragma unroll
        for (int c = 0; c < items; ++c) {
          if (c == stored(e)) p.final_x[sequence] = narrow<S>(x[c]);
        }
      });
      return;
    }
    const std::int64_t j0 = first_position(tile);
    if constexpr (reverse) {
      int one;
      std::uint32_t mask;
      marks<true>(j0, first_existing(j0), end_existing(j0), one, mask);
#pragma unroll
      for (int c = 0; c < items; ++c) {
        if (c == one || ((mask >> c) & 1u)) p.final_x[sequence_of(j0 + c)] = narrow<S>(x[c]);
      }
    } else {
      if (!p.batched) {
        const std::int64_t last = p.n - 1 - j0;  // the last item's offset, if it is this thread's
        if (last >= 0 && last < items) {
#pragma unroll
          for (int c = 0; c < items; ++c) {
            if (c == last) p.final_x[0] = narrow<S>(x[c]);
          }
        }
        return;
      }
      const int left = end_existing(j0);
      if (left == 0) return;
      const std::int64_t first = j0 % p.length;
#pragma unroll
      for (int c = 0; c < items; ++c) {
        if (c < left && ends(first + c)) p.final_x[(j0 + c) / p.length] = narrow<S>(x[c]);
      }
    }
  }

  // ---- the engine's hooks (device/single_pass.cuh) ----
  // The block's i-th tile (step i) lives in buffer i % B. With the block's tiles known
  // ahead (stride > 0: cooperative, single block), the next B - 2 tiles are being copied
  // into shared memory while a tile is scanned and the parked one finished, and the L2
  // prefetch runs further ahead; the buffer a finish frees takes the tile B - 1 steps
  // ahead. In tickets mode the next tile is not known ahead: each tile is copied in at
  // the start of its own step.

  __device__ affine_then op() const { return {}; }
  __device__ map_t aggregate_of(int) const { return aggregate; }
  __device__ void prefetch(std::int64_t) {}

  __device__ void begin(std::int64_t first, std::int64_t stride) {
    if (stride == 0) return;  // tickets
#pragma unroll
    for (int i = 0; i < B - 1; ++i) stage(first + i * stride, i);
#pragma unroll
    for (int k = 0; k < Policy::l2_ahead; ++k) prefetch_l2(first + (B - 1 + k) * stride);
  }

  template <bool Ahead, bool Prefetched>
  __device__ void start(std::int64_t tile, int step, std::int64_t) {
    const int buf = step % B;
    if constexpr (Ahead) {
      take<in_flight>(tile, buf);
    } else {
      stage(tile, buf);
      take<0>(tile, buf);
    }
    scan_tile(buf, tile, step & 1);
  }

  __device__ void park(int) {
    parked_prefix = prefix;
    parked_has_prefix = has_prefix;
    if constexpr (gradient) marks_parked = marks_scanned;
    if constexpr (by_offsets) sequence_parked = sequence_scanned;
  }

  __device__ void retire(const device::retiring<map_t, 1>& r) { finish(r); }

  // Round one: the tile's maps stay in their buffer; only the thread's prefix moves.
  __device__ void retire_started(const device::retiring<map_t, 1>& r) {
    park(r.step);
    finish(r);
  }

  __device__ void swap(const device::retiring<map_t, 1>& r, int step) {
    finish(r);
    park(step);
  }

  // The buffer the step's finish freed takes the tile B - 1 steps ahead.
  __device__ void advance(std::int64_t tile, int step, std::int64_t stride) {
    if (stride == 0) return;
    stage(tile + (B - 1) * stride, (step + B - 1) % B);
    if constexpr (Policy::l2_ahead > 0) prefetch_l2(tile + (B - 1 + Policy::l2_ahead) * stride);
  }
};

// Tuning: one policy or a per-architecture table (scanlab/arch.cuh); the kernel runs the
// policy of the architecture it is compiled for.
template <class Tuning, class Source, class T>
__global__ void __launch_bounds__(arch::active_policy<Tuning>::block_threads,
                                  arch::active_policy<Tuning>::min_blocks_per_sm)
    linrec_tiles_kernel(const __grid_constant__ linrec_params<Source, T> params) {
  using Policy = arch::active_policy<Tuning>;
  using agent_t = linrec_agent<Policy, Source, T>;
  static_assert(arch::fits_block(arch::compiled_family, Policy::block_threads, agent_t::smem_bytes),
                "linear recurrence policy too large for the architecture being compiled (limits: scanlab/arch.cuh)");
  extern __shared__ uint4 linrec_shared[];  // agent_t::temp_storage: too large for static shared memory
  auto& storage = *reinterpret_cast<typename agent_t::temp_storage*>(linrec_shared);
  agent_t agent(params, storage);
  device::single_pass<agent_t>(agent, params.schedule, storage.engine).run();
}

// ---- row-major batches without look-back: short rows, and long rows chained ----
//
// A row-major batch whose sequences tile the tiles exactly (tile_items a multiple of the
// length: every tile starts with a sequence start and ends with a sequence end), or that
// fits one tile, needs no state from one tile to the next: each tile's first element
// (reverse and the backward pass: its last) is a reset, so its entering state is never
// read. linrec_rows_kernel runs the SAME agent (its copies, scan, finish, sequence starts,
// x0s, final states and gradients, every element type and source) without the engine:
// no tile states, no look-back, no grid barrier, no temp storage, and each tile finished in
// the step that scanned it (no parking: the tile's results leave one step earlier). A
// block walks tiles b, b + G, ... of a regular resident grid of G blocks, all B buffers
// staging the next B - 1 tiles while one is scanned and finished (the look-back kernel
// keeps one buffer for the parked tile). One block barrier per tile (the block scan's);
// the buffers are per-warp as in the engine (each warp copies in, finishes and stores only
// its part), so a buffer is restaged after its warp's finish without a block barrier.
// Results: the bits of the look-back kernel with the same tile shape (its prefix of a tile
// that begins with a reset is a constant map that the reset discards; the same groupings
// inside a tile). The default shapes differ (linrec_rows_shape), so a forced launch mode
// (the look-back kernel, its own shape) may round differently; each is deterministic.
//
// Long rows CHAINED: where the length is a multiple of the tile (`per` tiles a sequence)
// and the batch has at least chain_min_batch sequences (chained_rows), block b takes sequences
// b, b + G, ... whole, their tiles in scan order, and carries the state from one tile to
// the next: the state leaving a tile is its aggregate applied to the state entering it
// (every thread holds the aggregate after the block scan), the entering state of the
// next (its prefix: the constant map of that state). The chain adds one map application
// per tile to the critical path, against the look-back's wait for a predecessor's
// aggregate published by another block; the sequences' first tiles start with a reset.
template <class Tuning, class Source, class T>
__global__ void __launch_bounds__(arch::active_policy<Tuning>::block_threads,
                                  arch::active_policy<Tuning>::min_blocks_per_sm)
    linrec_rows_kernel(const __grid_constant__ linrec_params<Source, T> params) {
  using Policy = arch::active_policy<Tuning>;
  using agent_t = linrec_agent<Policy, Source, T>;
  using map_t = affine_map<linrec_state_t<T>>;
  constexpr int B = Policy::buffers;
  extern __shared__ uint4 linrec_shared[];
  auto& storage = *reinterpret_cast<typename agent_t::temp_storage*>(linrec_shared);
  agent_t agent(params, storage);
  const std::int64_t num_tiles = params.schedule.num_tiles;
  const std::int64_t grid = gridDim.x;
  // Tiles a sequence (chained), or 1: whole sequences per tile (the length divides the tile).
  const std::int64_t per = params.length > Policy::tile_items ? params.length / Policy::tile_items : 1;
  // The block's tiles in order: tile t of sequence blockIdx.x + k G (k = 0, 1, ...), t = 0 ..
  // per - 1; with per = 1 the tiles blockIdx.x + step G. Cursors (the tile scanned, staged,
  // asked of L2) move a step at a time: a 64-bit division is a subroutine of about 70
  // instructions, three a step without them.
  struct cursor {
    std::int64_t sequence, t;
  };
  const auto cursor_at = [&](int step) { return cursor{blockIdx.x + (step / per) * grid, step % per}; };
  const auto tile_of = [&](const cursor& c) { return c.sequence * per + c.t; };
  const auto next = [&](cursor& c) {
    if (++c.t == per) {
      c.t = 0;
      c.sequence += grid;
    }
  };
  cursor now = cursor_at(0);
  if (tile_of(now) >= num_tiles) return;
  // Steps 0 .. B - 2 into buffers 0 .. B - 2, L2 asked beyond.
#pragma unroll
  for (int i = 0; i < B - 1; ++i) agent.stage(tile_of(cursor_at(i)), i);
#pragma unroll
  for (int k = 0; k < Policy::l2_ahead; ++k) agent.prefetch_l2(tile_of(cursor_at(B - 1 + k)));
  cursor staged = cursor_at(B - 1);                     // the tile the step stages
  cursor asked = cursor_at(B - 1 + Policy::l2_ahead);  // the tile the step asks L2 for
  linrec_state_t<T> carry{};                             // the state leaving the block's previous tile
  for (int step = 0;; ++step, next(now), next(staged), next(asked)) {
    const std::int64_t tile = tile_of(now);
    if (tile >= num_tiles) break;
    // Buffer (step - 1) % B was finished by its warps in the step before: it takes the tile
    // B - 1 steps ahead (a copy group is committed either way).
    agent.stage(tile_of(staged), (step + B - 1) % B);
    if constexpr (Policy::l2_ahead > 0) agent.prefetch_l2(tile_of(asked));
    agent.template take<B - 1>(tile, step % B);  // the B - 1 later groups may still be in flight
    agent.scan_tile(step % B, tile, step & 1);
    device::retiring<map_t, 1> r{};
    r.tile = tile;
    r.step = step;
    r.has_prefix = now.t != 0;  // a sequence's first tile starts with a reset
    r.prefix[0] = map_t{linrec_state_t<T>(0), carry};
    carry = apply(agent.aggregate, carry);  // the first tile's aggregate is a reset: carry's start is moot
    agent.retire_started(r);
  }
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

// The dispatch rule of row-major batches (and one sequence): linrec_rows_kernel, without
// look-back, where no tile needs the state of the one before: the whole input fits one
// tile, or tile_items is a multiple of the length (whole sequences per tile: every power of
// two up to the tile). dispatch_rows asks it of the rows shape (4096 floats on Hopper); the
// single-pass kernel otherwise (length 8192 too), and whenever a launch mode is forced
// (tests and benchmarks of the engine). Measured on the H100 in primitives/docs/linrec.md
// ("Short rows").
template <class Policy>
constexpr bool whole_rows_per_tile(std::int64_t batch, std::int64_t length, linrec_mode mode) {
  if (mode != linrec_mode::automatic || length <= 0) return false;
  return batch * length <= Policy::tile_items || (length <= Policy::tile_items && Policy::tile_items % length == 0);
}

// Long rows chained (linrec_rows_kernel) where the length is a multiple of the tile, longer
// than one, and the batch has at least `min_batch` sequences (chain_min_batch by default):
// enough for every block of today's GPUs (264 resident on an H100) to take about four,
// so that a block's last round of sequences is a small part of its work (the look-back
// kernel balances every tile). The rule depends on the shapes alone, not on the device's
// size, so the same input takes the same path (and gives the same bits) on every GPU of an
// architecture. Not where a launch mode is forced (tests and benchmarks of the engine).
inline constexpr std::int64_t chain_min_batch = 1024;
template <class Policy>
constexpr bool chained_rows(std::int64_t batch, std::int64_t length, linrec_mode mode,
                            std::int64_t min_batch = chain_min_batch) {
  return mode == linrec_mode::automatic && length > Policy::tile_items && length % Policy::tile_items == 0 &&
         batch >= min_batch;
}

// Temp storage of the single-pass kernel: [alignment slack][tile states], for every
// architecture's tiles (no need to ask the device); the slack alone (never empty: a
// nonzero size keeps CUB's two-phase protocol unambiguous) where every architecture's
// rows shape takes the rows kernel.
template <class Tuning, class T, class RowsTuning = Tuning>
constexpr std::size_t rows_temp_bytes(std::int64_t batch, std::int64_t length, linrec_mode mode) {
  const bool rows_everywhere = arch::max_over_policies<RowsTuning>([&](auto policy) {
                                 return whole_rows_per_tile<typename decltype(policy)::type>(batch, length, mode) ? 0 : 1;
                               }) == 0;
  if (rows_everywhere) return 256;
  return arch::max_over_policies<Tuning>([&](auto policy) -> std::size_t {
    return 256 + linrec_tile_state<T>::storage_bytes(
                     detail::ceil_div<std::int64_t>(batch * length, decltype(policy)::type::tile_items));
  });
}

// The single-pass kernel's parameters: tile states at `states` (aligned temp storage),
// vector accesses where every array they touch is 16-byte aligned. T: the storage type (x0
// too, as the caller holds it).
template <class Source, class T>
linrec_params<Source, T> tile_params(const Source& src, T* d_x, T* d_final, std::int64_t batch, std::int64_t length,
                                     const T* d_x0s, T x0, unsigned char* states, std::int64_t num_tiles) {
  const auto aligned = [](const void* pointer) { return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0; };
  bool vector_load = aligned(src.p) && (Source::arrays == 1 || aligned(src.q));
  bool vector_store = d_x != nullptr && aligned(d_x);
  if constexpr (Source::gradient) {  // x and dL/da too, where they are used
    vector_load = vector_load && (src.grad_a == nullptr || aligned(src.r));
    vector_store = (d_x == nullptr || aligned(d_x)) && (src.grad_a == nullptr || aligned(src.grad_a));
  }
  return {.src = src,
          .x = d_x,
          .final_x = d_final,
          .x0s = d_x0s,
          .x0 = widen(x0),
          .n = batch * length,
          .length = length,
          .schedule = {{linrec_tile_state<T>(states, num_tiles)}, num_tiles, {}},
          .batched = batch > 1,
          .vector_load = vector_load,
          .vector_store = vector_store,
          .batch = batch};
}

// The rows kernel with RowsTuning's shape on this device, if its tile takes whole rows
// (whole_rows_per_tile) or the rows are long enough to chain (chained_rows): a regular
// grid of the resident blocks (at most max_blocks), no temp storage. `taken`: whether it
// was launched.
template <class RowsTuning, class Source, class T>
[[nodiscard]] cudaError_t launch_rows(bool& taken, const Source& src, T* d_x, T* d_final, std::int64_t batch,
                                      std::int64_t length, const T* d_x0s, T x0, cudaStream_t stream,
                                      const linrec_options& options) {
  static_assert(arch::table_fits<RowsTuning>([](auto policy) {
                  return linrec_agent<typename decltype(policy)::type, Source, T>::smem_bytes;
                }),
                "a linear recurrence tuning entry does not fit its architecture (limits: scanlab/arch.cuh)");
  constexpr auto kernel = linrec_rows_kernel<RowsTuning, Source, T>;
  taken = false;
  return detail::with_policy<kernel, RowsTuning>([&](auto policy) -> cudaError_t {
    using Policy = typename decltype(policy)::type;
    const bool whole = whole_rows_per_tile<Policy>(batch, length, options.mode);
    const std::int64_t min_batch = options.chain_min_batch > 0 ? options.chain_min_batch : chain_min_batch;
    if (!whole && !chained_rows<Policy>(batch, length, options.mode, min_batch)) return cudaSuccess;
    taken = true;
    constexpr std::size_t smem = linrec_agent<Policy, Source, T>::smem_bytes;
    const std::int64_t num_tiles = detail::ceil_div<std::int64_t>(batch * length, Policy::tile_items);
    // No tile states: the rows kernel never reads them.
    const auto params = tile_params(src, d_x, d_final, batch, length, d_x0s, x0, nullptr, num_tiles);
    int capacity = 0;
    bool cooperative = false;
    SCANLAB_TRY(detail::resident_grid<kernel>(Policy::block_threads, INT_MAX, capacity, cooperative, smem));
    if (options.max_blocks > 0 && options.max_blocks < capacity) capacity = options.max_blocks;
    // Whole rows: a block a tile at a time; chained: a block a sequence at a time.
    const std::int64_t units = whole ? num_tiles : batch;
    const std::int64_t grid = units < capacity ? units : capacity;
    return detail::launch(kernel, static_cast<unsigned>(grid), Policy::block_threads, smem, stream, params);
  });
}

// One sequence (batch == 1, length == n) or a row-major batch. x and/or final_x. T: the
// storage type. Short rows take the rows kernel (RowsTuning's shape, where its tile takes
// whole rows), the others the single-pass kernel (Tuning). One rows kernel per source: the
// look-back shape's larger tile in the rows kernel (length 8192: 0.225 ms against 0.252 for
// the look-back kernel, H100) would be a third kernel per source, form and type to compile.
template <class Tuning, class RowsTuning = Tuning, class Source, class T>
[[nodiscard]] cudaError_t dispatch_rows(void* d_temp, std::size_t& temp_bytes, Source src, T* d_x, T* d_final,
                                        std::int64_t batch, std::int64_t length, const T* d_x0s, T x0,
                                        cudaStream_t stream, linrec_options options = {}) {
  static_assert(arch::table_fits<Tuning>([](auto policy) {
                  return linrec_agent<typename decltype(policy)::type, Source, T>::smem_bytes;
                }),
                "a linear recurrence tuning entry does not fit its architecture (limits: scanlab/arch.cuh)");
  if (!multiply_fits(batch, length)) return cudaErrorInvalidValue;
  const std::int64_t n = batch * length;
  const std::size_t required = rows_temp_bytes<Tuning, T, RowsTuning>(batch, length, options.mode);
  if (const auto answer = detail::temp_storage_query(d_temp, temp_bytes, required)) return *answer;
  if (n == 0) {
    if constexpr (Source::gradient) {
      // x0 reaches no state of an empty sequence: its gradient is 0.
      if (src.grad_x0 != nullptr && batch > 0) {
        return cudaMemsetAsync(src.grad_x0, 0, static_cast<std::size_t>(batch) * sizeof(T), stream);
      }
    } else if (d_final != nullptr && batch > 0) {  // empty sequences end where they start
      const std::int64_t blocks = detail::ceil_div<std::int64_t>(batch, 256);
      const auto grid = static_cast<unsigned>(blocks < 65535 ? blocks : 65535);
      SCANLAB_TRY(detail::launch(linrec_initial_states_kernel<T>, grid, 256, 0, stream, d_final, d_x0s, x0, batch));
    }
    return cudaSuccess;
  }
  bool taken = false;
  SCANLAB_TRY(launch_rows<RowsTuning>(taken, src, d_x, d_final, batch, length, d_x0s, x0, stream, options));
  if (taken) return cudaSuccess;

  constexpr auto kernel = linrec_tiles_kernel<Tuning, Source, T>;
  return detail::with_policy<kernel, Tuning>([&](auto policy) -> cudaError_t {
    using Policy = typename decltype(policy)::type;
    const std::int64_t num_tiles = detail::ceil_div<std::int64_t>(n, Policy::tile_items);
    auto* base = reinterpret_cast<unsigned char*>(detail::align_up(reinterpret_cast<std::uintptr_t>(d_temp)));
    constexpr std::size_t smem = linrec_agent<Policy, Source, T>::smem_bytes;
    const auto params = tile_params(src, d_x, d_final, batch, length, d_x0s, x0, base, num_tiles);
    // The agent's temp storage is dynamic shared memory: the parked and the staged tiles
    // do not fit in the 48 KB of static shared memory.
    return device::launch_single_pass<kernel>(params, Policy::block_threads, smem, options.mode, options.max_blocks,
                                              stream);
  });
}

// ---- variable-length sequences: the concatenation given by offsets ----

// The sequence of each tile's first element (the last one: of element n - 1) into
// tile_sequences[0 .. num_tiles], by bisection of the offsets: the brackets the agent
// searches (linrec_agent, by_offsets). Indices stay in [0, sequences) whatever the offsets.
// (A template so that every translation unit including this header may define it.)
template <class Offset>
__global__ void __launch_bounds__(256)
    linrec_tile_sequences_kernel(const Offset* offsets, std::int64_t sequences, std::int64_t n,
                                 std::int64_t tile_items, std::int64_t num_tiles, std::int64_t* tile_sequences) {
  for (std::int64_t t = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; t <= num_tiles;
       t += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t i = t < num_tiles ? t * tile_items : n - 1;
    std::int64_t lo = 0, hi = sequences - 1;
    while (lo < hi) {
      const std::int64_t mid = hi - (hi - lo) / 2;
      if (offsets[mid] <= i) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    tile_sequences[t] = lo;
  }
}

// Empty sequences (offsets[s] == offsets[s + 1]) end where they start: final state x0
// (and dL/dx0 = 0, the backward pass). The tiles write those of the others.
template <class T>
__global__ void __launch_bounds__(256)
    linrec_empty_sequences_kernel(const std::int64_t* offsets, std::int64_t sequences, const T* x0s, T x0,
                                  T* final_x, T* grad_x0) {
  for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; k < sequences;
       k += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    if (offsets[k + 1] > offsets[k]) continue;
    if (final_x != nullptr) final_x[k] = x0s != nullptr ? x0s[k] : x0;
    if (grad_x0 != nullptr) grad_x0[k] = T(0);
  }
}

// Temp storage of a variable-length solve: the single-pass kernel's tile states (of the
// maps the kernel publishes: linrec_state_t<T>, float for the 16-bit types), then the tiles'
// brackets. T: the storage type.
template <class T>
constexpr std::size_t offsets_states_bytes(std::int64_t tiles) {
  return detail::align_up(linrec_tile_state<T>::storage_bytes(tiles));
}
template <class Tuning, class T>
constexpr std::size_t offsets_temp_bytes(std::int64_t n) {
  return arch::max_over_policies<Tuning>([&](auto policy) {
    const std::int64_t tiles = detail::ceil_div<std::int64_t>(n, decltype(policy)::type::tile_items);
    return 256 + offsets_states_bytes<T>(tiles) + static_cast<std::size_t>(tiles + 1) * sizeof(std::int64_t);
  });
}

// `sequences` sequences of total length n, concatenated, sequence s at [offsets[s],
// offsets[s + 1]) (device; offsets[0] == 0, nondecreasing, offsets[sequences] == n: the
// caller's precondition). ONE single-pass scan of the whole array, each sequence's start
// a reset; x and/or final_x (per sequence), or the backward pass (Source::gradient).
template <class Tuning, class Source, class T>
[[nodiscard]] cudaError_t dispatch_offsets(void* d_temp, std::size_t& temp_bytes, Source src, T* d_x, T* d_final,
                                           const std::int64_t* d_offsets, std::int64_t sequences, std::int64_t n,
                                           const T* d_x0s, T x0, cudaStream_t stream, linrec_options options = {}) {
  using source_t = varlen<Source>;
  static_assert(arch::table_fits<Tuning>([](auto policy) {
                  return linrec_agent<typename decltype(policy)::type, source_t, T>::smem_bytes;
                }),
                "a linear recurrence tuning entry does not fit its architecture (limits: scanlab/arch.cuh)");
  // What the host can check: the sizes (offsets[sequences] == n is the caller's promise).
  if (sequences < 0 || n < 0 || (sequences == 0 && n != 0) || (sequences > 0 && d_offsets == nullptr)) {
    return cudaErrorInvalidValue;
  }
  const std::size_t required = offsets_temp_bytes<Tuning, T>(n);
  if (const auto answer = detail::temp_storage_query(d_temp, temp_bytes, required)) return *answer;
  T* grad_x0 = nullptr;
  if constexpr (Source::gradient) grad_x0 = src.grad_x0;
  if (sequences > 0 && (d_final != nullptr || grad_x0 != nullptr)) {
    const std::int64_t blocks = detail::ceil_div<std::int64_t>(sequences, 256);
    const auto grid = static_cast<unsigned>(blocks < 65535 ? blocks : 65535);
    SCANLAB_TRY(detail::launch(linrec_empty_sequences_kernel<T>, grid, 256, 0, stream, d_offsets, sequences, d_x0s,
                               x0, d_final, grad_x0));
  }
  if (n == 0) return cudaSuccess;

  constexpr auto kernel = linrec_tiles_kernel<Tuning, source_t, T>;
  return detail::with_policy<kernel, Tuning>([&](auto policy) -> cudaError_t {
    using Policy = typename decltype(policy)::type;
    const std::int64_t num_tiles = detail::ceil_div<std::int64_t>(n, Policy::tile_items);
    auto* base = reinterpret_cast<unsigned char*>(detail::align_up(reinterpret_cast<std::uintptr_t>(d_temp)));
    auto* brackets = reinterpret_cast<std::int64_t*>(base + offsets_states_bytes<T>(num_tiles));
    const std::int64_t blocks = detail::ceil_div<std::int64_t>(num_tiles + 1, 256);
    const auto grid = static_cast<unsigned>(blocks < 65535 ? blocks : 65535);
    SCANLAB_TRY(detail::launch(linrec_tile_sequences_kernel<std::int64_t>, grid, 256, 0, stream, d_offsets, sequences, n,
                               static_cast<std::int64_t>(Policy::tile_items), num_tiles, brackets));
    source_t walked{};
    static_cast<Source&>(walked) = src;
    walked.offsets = d_offsets;
    walked.sequences = sequences;
    walked.tile_sequences = brackets;
    // batched, with a length of 1 that nothing reads: the starts come from the offsets.
    auto params = tile_params(walked, d_x, d_final, sequences, std::int64_t{1}, d_x0s, x0, base, num_tiles);
    params.n = n;
    params.batched = true;
    return device::launch_single_pass<kernel>(params, Policy::block_threads,
                                              linrec_agent<Policy, source_t, T>::smem_bytes, options.mode,
                                              options.max_blocks, stream);
  });
}

// ---- interleaved batches: [length, batch] ----

// Threads per block and time steps whose loads are issued together.
inline constexpr int column_threads = 256;
inline constexpr int column_unroll = 8;
// Threads the segmented path aims at (about 2000 per SM on an H100), and the shortest segment.
inline constexpr std::int64_t column_target_threads = std::int64_t{1} << 18;
inline constexpr std::int64_t column_min_segment = 64;

// What the column kernels of a solve and of the backward pass share: the batch, its
// initial states (storage type T) and its segments (maps and states in the state type).
template <class T>
struct column_shape {
  using state_type = linrec_state_t<T>;
  const T* x0s;
  T x0;
  std::int64_t batch;           // sequences
  std::int64_t length;
  std::int64_t channels;        // sequences per group: interleaved batch (one group), or C of [B, T, C]
  std::int64_t segments;        // S
  std::int64_t segment_length;  // ceil(length / S)
  state_type* segment_a;        // [batch, S] maps of the segments (pass 1)
  state_type* segment_b;
  const state_type* segment_states;  // [batch, S]: state after each segment (pass 2), or nullptr with S == 1
};

template <class Source, class T>
struct column_params : column_shape<T> {
  Source src;
  T* x;        // or nullptr
  T* final_x;  // or nullptr (single-segment path only)
};

// Where sequence k starts: sequence k is channel k % channels of group k / channels, a
// group being one [length, channels] block (an interleaved batch is one group); its step t
// is at column_origin + t * channels.
template <class P>
__host__ __device__ __forceinline__ std::int64_t column_origin(const P& p, std::int64_t k) {
  if (p.channels == p.batch) return k;
  const std::int64_t group = k / p.channels;
  return group * p.length * p.channels + (k - group * p.channels);
}

// Rows [t0, t1) of segment `segment` (the last ones may be empty).
template <class P>
__device__ __forceinline__ void segment_rows(const P& p, std::int64_t segment, std::int64_t& t0, std::int64_t& t1) {
  t0 = segment * p.segment_length;
  t1 = t0 + p.segment_length < p.length ? t0 + p.segment_length : p.length;
  if (t0 > t1) t0 = t1;
}

// Calls f(k, segment, t0, t1) for this thread's (segment, sequence k) pairs, rows [t0, t1):
// consecutive threads on consecutive sequences (coalesced), grid-stride.
template <class P, class F>
__device__ __forceinline__ void for_each_column_segment(const P& p, F&& f) {
  const std::int64_t total = p.batch * p.segments;
  for (std::int64_t id = blockIdx.x * static_cast<std::int64_t>(column_threads) + threadIdx.x; id < total;
       id += static_cast<std::int64_t>(gridDim.x) * column_threads) {
    const std::int64_t k = id % p.batch;
    const std::int64_t segment = id / p.batch;
    std::int64_t t0, t1;
    segment_rows(p, segment, t0, t1);
    f(k, segment, t0, t1);
  }
}

// Walks rows [t0, t1) of sequence k in the source's direction (reverse: t1 - 1 down to t0)
// from `state`: composes (Compose) or solves, writing x.
// (T: the storage type; maps and states in V, the state type.)
template <bool Compose, class Source, class T, class V = linrec_state_t<T>>
__device__ __forceinline__ void walk_column(const column_params<Source, T>& p, std::int64_t k, std::int64_t t0,
                                            std::int64_t t1, affine_map<V>& composed, V& state) {
  constexpr bool reverse = Source::direction == linrec_direction::reverse;
  const affine_then op;
  // The i-th row of the walk.
  const std::int64_t origin = column_origin(p, k);
  const auto element = [&](std::int64_t i) { return origin + (reverse ? t1 - 1 - i : t0 + i) * p.channels; };
  const std::int64_t rows = t1 - t0;
  std::int64_t i = 0;
  for (; i + column_unroll <= rows; i += column_unroll) {
    V pv[column_unroll], qv[column_unroll];
#pragma unroll
    for (int u = 0; u < column_unroll; ++u) {
      pv[u] = widen(p.src.p[element(i + u)]);
      if constexpr (Source::arrays == 2) qv[u] = widen(p.src.q[element(i + u)]);
    }
#pragma unroll
    for (int u = 0; u < column_unroll; ++u) {
      const affine_map<V> m = p.src.map(pv[u], Source::arrays == 2 ? qv[u] : V(0));
      if constexpr (Compose) {
        composed = op(composed, m);
      } else {
        state = apply(m, state);
        if (p.x != nullptr) p.x[element(i + u)] = narrow<T>(state);
      }
    }
  }
  for (; i < rows; ++i) {
    const affine_map<V> m =
        p.src.map(widen(p.src.p[element(i)]), Source::arrays == 2 ? widen(p.src.q[element(i)]) : V(0));
    if constexpr (Compose) {
      composed = op(composed, m);
    } else {
      state = apply(m, state);
      if (p.x != nullptr) p.x[element(i)] = narrow<T>(state);
    }
  }
}

// Pass 1 (S > 1): the composed map of each (segment, sequence), consecutive threads on
// consecutive sequences.
template <class Source, class T>
__global__ void __launch_bounds__(column_threads) linrec_column_maps_kernel(const __grid_constant__ column_params<Source, T> p) {
  constexpr bool reverse = Source::direction == linrec_direction::reverse;
  using V = linrec_state_t<T>;
  for_each_column_segment(p, [&](std::int64_t k, std::int64_t segment, std::int64_t t0, std::int64_t t1) {
    affine_map<V> composed{V(1), V(0)};  // an empty segment (possible in the last ones): the identity
    if (t0 < t1) {  // else start from the first map: composing onto (1, 0) would turn Inf * 0 into NaN
      const std::int64_t first = column_origin(p, k) + (reverse ? t1 - 1 : t0) * p.channels;
      composed = p.src.map(widen(p.src.p[first]), Source::arrays == 2 ? widen(p.src.q[first]) : V(0));
      V unused = V(0);
      if constexpr (reverse) {
        walk_column<true>(p, k, t0, t1 - 1, composed, unused);
      } else {
        walk_column<true>(p, k, t0 + 1, t1, composed, unused);
      }
    }
    p.segment_a[k * p.segments + segment] = composed.a;
    p.segment_b[k * p.segments + segment] = composed.b;
  });
}

// Pass 3 (or the only pass with S == 1): each (segment, sequence) solved from its entering
// state (reverse: the state after the segment below it).
template <class Source, class T>
__global__ void __launch_bounds__(column_threads) linrec_column_solve_kernel(const __grid_constant__ column_params<Source, T> p) {
  constexpr bool reverse = Source::direction == linrec_direction::reverse;
  using V = linrec_state_t<T>;
  for_each_column_segment(p, [&](std::int64_t k, std::int64_t segment, std::int64_t t0, std::int64_t t1) {
    const std::int64_t first_segment = reverse ? p.segments - 1 : 0;  // in the walk's order
    const std::int64_t entering = reverse ? segment + 1 : segment - 1;
    V state = segment == first_segment ? widen(p.x0s != nullptr ? p.x0s[k] : p.x0)
                                       : p.segment_states[k * p.segments + entering];
    affine_map<V> unused{V(1), V(0)};
    walk_column<false>(p, k, t0, t1, unused, state);
    if (p.final_x != nullptr && segment == p.segments - 1 - first_segment) p.final_x[k] = narrow<T>(state);
  });
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

// The shape of an interleaved batch (channels == batch) or of a channels-last one (batch =
// groups * channels sequences) in `segments` segments (column_segments).
template <class T>
column_shape<T> make_column_shape(std::int64_t batch, std::int64_t length, std::int64_t channels,
                                  std::int64_t segments, const T* x0s, T x0) {
  return {.x0s = x0s,
          .x0 = x0,
          .batch = batch,
          .length = length,
          .channels = channels,
          .segments = segments,
          .segment_length = length > 0 ? detail::ceil_div(length, segments) : 0,
          .segment_a = nullptr,
          .segment_b = nullptr,
          .segment_states = nullptr};
}

inline int column_grid(std::int64_t threads) {
  const std::int64_t blocks = detail::ceil_div<std::int64_t>(threads, column_threads);
  return static_cast<int>(blocks < (1 << 20) ? blocks : (1 << 20));
}

// Storage to state type and back, element by element (the 16-bit types' segmented columns).
template <class T>
__global__ void __launch_bounds__(column_threads)
    linrec_widen_kernel(const T* in, linrec_state_t<T>* out, std::int64_t n) {
  for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(column_threads) + threadIdx.x; k < n;
       k += static_cast<std::int64_t>(gridDim.x) * column_threads) {
    out[k] = widen(in[k]);
  }
}
template <class T>
__global__ void __launch_bounds__(column_threads)
    linrec_narrow_kernel(const linrec_state_t<T>* in, T* out, std::int64_t n) {
  for (std::int64_t k = blockIdx.x * static_cast<std::int64_t>(column_threads) + threadIdx.x; k < n;
       k += static_cast<std::int64_t>(gridDim.x) * column_threads) {
    out[k] = narrow<T>(in[k]);
  }
}

// The row-major solve of the segment maps ([batch, S]) in the direction of `Source`.
template <class Source, class T>
using segment_source = std::conditional_t<Source::direction == linrec_direction::reverse, reversed<ab_source<T>>,
                                          ab_source<T>>;
template <class Source, class T>
segment_source<Source, T> segment_maps(const T* a, const T* b) {
  segment_source<Source, T> src{};
  src.p = a;
  src.q = b;
  return src;
}

// Passes 1-3 of an interleaved batch cut into params.segments > 1 segments, in temp storage
// [segment a][segment b][segment states][the row-major solve of the segment maps]: pass 1
// (maps_kernel) composes each segment's maps, pass 2 solves them with the tiles in
// SegmentSource's direction from d_x0s / x0 (their final states to d_final), pass 3
// (solve_kernel; only if `solve`) walks each segment again from the state entering it.
template <class Policy, class SegmentSource, class Params, class T>
[[nodiscard]] cudaError_t segmented_columns(void* d_temp, std::size_t& temp_bytes, Params params,
                                            void (*maps_kernel)(Params), void (*solve_kernel)(Params), bool solve,
                                            T* d_final, const T* d_x0s, T x0, cudaStream_t stream,
                                            const linrec_options& options) {
  // The segment maps and states are in the state type V. For the 16-bit types (V = float,
  // T the storage) pass 2 runs in V too: the initial states are widened into temp storage
  // before it and its final states rounded from temp storage after it (two small kernels,
  // `batch` elements each), so no state is rounded on its way.
  using V = linrec_state_t<T>;
  constexpr bool widened = !std::is_same_v<T, V>;
  // (the 16-bit types' tile shapes are not V's: pass 2 takes V's default)
  using inner_policy = std::conditional_t<widened, default_linrec_policy<V>, Policy>;
  const std::int64_t maps = params.batch * params.segments;
  const std::size_t slice = detail::align_up(static_cast<std::size_t>(maps) * sizeof(V));
  const std::size_t per_sequence = widened ? detail::align_up(static_cast<std::size_t>(params.batch) * sizeof(V)) : 0;
  const bool widen_x0s = widened && d_x0s != nullptr;
  const bool narrow_final = widened && d_final != nullptr;
  std::size_t inner_bytes = 0;
  SCANLAB_TRY((dispatch_rows<inner_policy>(nullptr, inner_bytes, segment_maps<SegmentSource, V>(nullptr, nullptr),
                                     static_cast<V*>(nullptr), static_cast<V*>(nullptr), params.batch, params.segments,
                                     static_cast<const V*>(nullptr), V(0), stream, options)));
  const std::size_t required = 256 + 3 * slice + 2 * per_sequence + inner_bytes;
  if (const auto answer = detail::temp_storage_query(d_temp, temp_bytes, required)) return *answer;
  auto* base = reinterpret_cast<unsigned char*>(detail::align_up(reinterpret_cast<std::uintptr_t>(d_temp)));
  params.segment_a = reinterpret_cast<V*>(base);
  params.segment_b = reinterpret_cast<V*>(base + slice);
  V* states = reinterpret_cast<V*>(base + 2 * slice);
  params.segment_states = states;
  V* const wide_x0s = reinterpret_cast<V*>(base + 3 * slice);
  V* const wide_final = reinterpret_cast<V*>(base + 3 * slice + per_sequence);
  void* inner_temp = base + 3 * slice + 2 * per_sequence;

  const int grid = column_grid(maps);
  SCANLAB_TRY(detail::launch(maps_kernel, grid, column_threads, 0, stream, params));
  // Pass 2: the state after each segment (and, the last one, the final state).
  const V* x0s_v = nullptr;
  V* final_v = nullptr;
  if constexpr (widened) {
    if (widen_x0s) {
      SCANLAB_TRY(detail::launch(linrec_widen_kernel<T>, column_grid(params.batch), column_threads, 0, stream, d_x0s,
                                 wide_x0s, params.batch));
    }
    x0s_v = widen_x0s ? wide_x0s : nullptr;
    final_v = narrow_final ? wide_final : nullptr;
  } else {
    x0s_v = d_x0s;
    final_v = d_final;
  }
  SCANLAB_TRY((dispatch_rows<inner_policy>(inner_temp, inner_bytes,
                                     segment_maps<SegmentSource, V>(params.segment_a, params.segment_b),
                                     solve ? states : nullptr, final_v, params.batch, params.segments, x0s_v, widen(x0),
                                     stream, options)));
  if constexpr (widened) {
    if (narrow_final) {
      SCANLAB_TRY(detail::launch(linrec_narrow_kernel<T>, column_grid(params.batch), column_threads, 0, stream,
                                 static_cast<const V*>(wide_final), d_final, params.batch));
    }
  }
  if (!solve) return cudaSuccess;
  return detail::launch(solve_kernel, grid, column_threads, 0, stream, params);
}

// ---- interleaved and channels-last batches in one pass: tiled columns ----
//
// The column walk above gives each sequence one thread. With fewer sequences than fill the
// GPU it cuts them into segments and reads a and b twice (20 bytes per float element, not
// 12). The tiled kernel reads them once:
//
//   a tile     `tiled_warps * R` consecutive time steps (in the walk's order) of 32
//              consecutive sequences, lane = sequence: each warp load is one row of 32
//              sequences (128 contiguous bytes for float when `channels` is a multiple of
//              32). Warp w copies rows [w R, (w+1) R) of the tile into shared memory and
//              composes their maps (R: tiled_rows).
//   the chain  tiles are claimed from a ticket counter, time-major (ticket = tile *
//              groups + group), so the tile before a tile in time was handed out earlier.
//              Lane l of warp 0 chains sequence l of its tile to the tile before it, as a
//              decoupled look-back per sequence (below), and hands each warp the state
//              entering its rows; every warp then solves its rows from shared memory.
//
// The look-back of one sequence. Each tile publishes its INCLUSIVE state (the state after
// it: apply(tile map, entering state)) and, only when its predecessor's was not yet there
// at the first look, its AGGREGATE (the tile's composed map). The entering state of tile t
// is the predecessor's inclusive state, or, when that is missing, the nearest inclusive
// state among the `tiled_window` tiles before it with the aggregates of the tiles between
// applied to it, one after another; until such a window is complete the lane reads it
// again. The states are therefore always x0 with the tiles' maps applied one by one in
// order, never a regrouped composition of them: the same bits whichever tile's state a
// look-back found, on every run (deterministic), without the windows of tile_state.cuh.
// The tile's operands wait in shared memory (32 KB a block), not in registers, while warp
// 0 looks back: few registers, several blocks per SM, their loads in flight.
// No deadlock: a tile waits only on earlier tickets, held by running blocks; the earliest
// unfinished tile finds its predecessor's inclusive state.
//
// Slots: one per (tile, sequence) in each of two arrays (inclusive states, aggregates),
// each 32-bit piece in a 64-bit word with a mark, written once per call after a zeroing
// memset (tile_state.cuh's rule: a marked word holds its final piece; relaxed loads and
// stores, no fences). Traffic besides a, b and x: the memset and one inclusive state per
// tile and sequence, 24 bytes per 128 float elements (0.19 bytes per element, 1.6 %).

inline constexpr int tiled_warps = 8;
inline constexpr int tiled_threads = 32 * tiled_warps;
// Blocks per SM asked of the compiler: 4 (at most 64 registers a thread) for the 4-byte
// and 16-bit types, 3 (85) for the larger ones (their look-back holds more).
template <class T>
inline constexpr int tiled_min_blocks = sizeof(T) <= 4 ? 4 : 3;
// Tiles a look-back reads at once: 4 (2 of the 16-byte states: registers).
template <class V>
inline constexpr int tiled_window = sizeof(V) <= 8 ? 4 : 2;

// One U per (tile, sequence) slot, its 32-bit pieces marked in 64-bit words.
template <class U>
struct column_slots {
  static constexpr int words = device::tile_state_detail::pieces<U>;
  std::uint64_t* base;

  __device__ __forceinline__ void publish(std::int64_t slot, const U& value) const {
    std::uint32_t raw[words] = {};
    std::memcpy(raw, &value, sizeof(U));
#pragma unroll
    for (int w = 0; w < words; ++w) {
      device::tile_state_detail::store_relaxed(base + slot * words + w, (std::uint64_t{1} << 32) | raw[w]);
    }
  }
  // The words of a slot, loaded together.
  __device__ __forceinline__ void load(std::int64_t slot, std::uint64_t (&got)[words]) const {
#pragma unroll
    for (int w = 0; w < words; ++w) got[w] = device::tile_state_detail::load_relaxed(base + slot * words + w);
  }
  // The value, when every word is marked.
  __device__ __forceinline__ static bool decode(const std::uint64_t (&got)[words], U& value) {
    std::uint32_t raw[words];
    bool marked = true;
#pragma unroll
    for (int w = 0; w < words; ++w) {
      marked = marked && (got[w] >> 32) != 0;
      raw[w] = static_cast<std::uint32_t>(got[w]);
    }
    if (marked) std::memcpy(&value, raw, sizeof(U));
    return marked;
  }
  __device__ __forceinline__ bool read(std::int64_t slot, U& value) const {
    std::uint64_t got[words];
    load(slot, got);
    return decode(got, value);
  }
};

// The tiled pass of a solve (Source: a form, forward or reversed) or of the backward pass
// (gradient_source: walked from the last step; the state is g = dL/db, written where a
// solve writes x; dL/da and dL/dx0 besides). `x`: the state's output, `final_x`: a solve's
// final states.
template <class Source, class T>
struct tiled_column_params : column_params<Source, T> {
  column_slots<linrec_state_t<T>> inclusive;
  column_slots<affine_map<linrec_state_t<T>>> aggregate;
  unsigned long long* ticket;
  std::int64_t groups;  // ceil(batch / 32)
};

// The arrays a tiled pass reads per row: the form's (1 or 2), or the backward pass's a,
// dL/dx and (only for dL/da) x.
template <class Source>
inline constexpr int tiled_operands = Source::arrays;

// Operand i of the row at step t is at step t + tiled_shift<Source>(i): the backward pass
// takes a of the step after (a[t+1], 0 after the last step) and x of the step before
// (x[t-1], x0 before the first).
template <class Source>
__host__ __device__ constexpr int tiled_shift(int i) {
  if constexpr (Source::gradient) {
    return i == 0 ? 1 : (i == 1 ? 0 : -1);
  } else {
    return 0;
  }
}

// Rows of a tile per warp: 128 bytes of shared memory per thread for the operands, as
// stored: 16 rows of two float arrays, 8 of two doubles, 32 of two bfloat16 ones, 10 of the
// backward pass's three float arrays. (A tile moves as many bytes whatever the type: the
// 16-bit types staged one element per 4-byte word, half the bytes a tile, ran at 34 % of
// memcpy where float ran at 95 %.)
template <class Source, class T>
inline constexpr int tiled_rows = [] {
  constexpr int rows = 128 / (tiled_operands<Source> * static_cast<int>(sizeof(T)));
  return rows < 2 ? 2 : rows;
}();

// The state entering `tile` of sequence k (lane of warp 0) from `start` (the state before
// the walk), and the tile's inclusive state published for the tile after it. The window's
// loads go in two rounds (the inclusive states, then the aggregates after the nearest one),
// so that few registers are live.
template <class P, class V>
__device__ __forceinline__ V tiled_look_back(const P& p, std::int64_t tile, std::int64_t tiles, std::int64_t k,
                                             const affine_map<V>& aggregate, V start) {
  constexpr int window = tiled_window<V>;
  using inclusive_slots = column_slots<V>;
  using aggregate_slots = column_slots<affine_map<V>>;
  const std::int64_t stride = p.groups * 32;  // slots per tile
  V entering = start;
  if (tile > 0 && !p.inclusive.read((tile - 1) * stride + k, entering)) {
    p.aggregate.publish(tile * stride + k, aggregate);
    for (;;) {
      // The nearest of the window's tiles with its inclusive state (the start before tile 0).
      std::uint64_t inc[window][inclusive_slots::words];
#pragma unroll
      for (int d = 0; d < window; ++d) {
        if (tile - 1 - d >= 0) p.inclusive.load((tile - 1 - d) * stride + k, inc[d]);
      }
      int nearest = -1;
#pragma unroll
      for (int d = 0; d < window; ++d) {
        if (nearest < 0) {
          if (tile - 1 - d < 0) {
            entering = start;
            nearest = d;
          } else if (inclusive_slots::decode(inc[d], entering)) {
            nearest = d;
          }
        }
      }
      if (nearest >= 0) {
        // The aggregates of the tiles after it, all published, applied oldest first.
        std::uint64_t agg[window][aggregate_slots::words];
#pragma unroll
        for (int d = 0; d < window; ++d) {
          if (d < nearest) p.aggregate.load((tile - 1 - d) * stride + k, agg[d]);
        }
        bool complete = true;
        V state = entering;
#pragma unroll
        for (int d = window - 1; d >= 0; --d) {
          affine_map<V> m;
          if (d < nearest) {
            if (aggregate_slots::decode(agg[d], m)) {
              state = apply(m, state);
            } else {
              complete = false;
            }
          }
        }
        if (complete) {
          entering = state;
          break;
        }
      }
      __nanosleep(32);  // a gap in the window: read it again
    }
  }
  if (tile + 1 < tiles) p.inclusive.publish(tile * stride + k, apply(aggregate, entering));
  return entering;
}

template <int R, class Source, class T>
__global__ void __launch_bounds__(tiled_threads, tiled_min_blocks<T>)
    linrec_tiled_columns_kernel(const __grid_constant__ tiled_column_params<Source, T> p) {
  constexpr bool reverse = Source::direction == linrec_direction::reverse;
  constexpr int operands = tiled_operands<Source>;
  using V = linrec_state_t<T>;
  using M = affine_map<V>;
  constexpr int W = tiled_warps;
  const affine_then op;
  // The tile's operands, [operand][row of the warp][thread] (consecutive lanes, consecutive
  // elements: no bank conflicts), copied asynchronously: they wait here, not in registers,
  // during the look-back. 16-bit elements: cp.async copies 4 bytes at least, so an even
  // lane copies the aligned word holding its element and its odd neighbour's where the two
  // are adjacent in memory (`paired`); a lane whose element is not in such a word loads it
  // itself (misaligned arrays, odd channel counts, the last sequence of a batch entry).
  __shared__ alignas(16) scan_detail::raw_slot<T> rows[operands][R][tiled_threads];
  __shared__ scan_detail::raw_slot<M> warp_maps[W][32];
  __shared__ scan_detail::raw_slot<V> warp_states[W][32];
  __shared__ std::int64_t claimed;
  if (threadIdx.x == 0) claimed = static_cast<std::int64_t>(atomicAdd(p.ticket, 1ull));
  __syncthreads();
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int warp = static_cast<int>(threadIdx.x / 32);
  const std::int64_t group = claimed % p.groups;
  const std::int64_t tile = claimed / p.groups;
  const std::int64_t tiles = detail::ceil_div<std::int64_t>(p.length, W * R);
  const std::int64_t k = group * 32 + lane;
  const bool live = k < p.batch;
  const std::int64_t origin = live ? column_origin(p, k) : 0;
  // Rows [first, first + rows) of the walk are this warp's; row j is step t = j (reverse:
  // length - 1 - j), at element origin + t * channels.
  const std::int64_t first = tile * (W * R) + warp * R;
  const std::int64_t left = p.length - first;
  const int rows_here = !live || left <= 0 ? 0 : (left < R ? static_cast<int>(left) : R);
  const std::int64_t first_step = reverse ? p.length - 1 - first : first;
  const std::int64_t step = reverse ? -p.channels : p.channels;  // one offset walked per row
  const auto array_of = [&](int i) -> const T* {
    if constexpr (Source::gradient) {
      return i == 0 ? p.src.p : (i == 1 ? p.src.q : p.src.r);
    } else {
      return i == 0 ? p.src.p : p.src.q;
    }
  };
  // The backward pass reads x (operand 2) only for dL/da.
  const auto wanted = [&](int i) {
    if constexpr (Source::gradient) {
      return i < 2 || p.src.grad_a != nullptr;
    } else {
      return true;
    }
  };
  // 16-bit: whether this lane's element and its pair's (lanes 2j, 2j + 1) are adjacent in
  // memory, in every row (the step between rows is the same for both).
  bool paired = false;
  if constexpr (sizeof(T) < 4) {
    const std::int64_t other = __shfl_xor_sync(0xffffffffu, origin, 1);
    const bool other_live = __shfl_xor_sync(0xffffffffu, live, 1);
    paired = live && other_live && other == origin + ((lane & 1) != 0 ? -1 : 1);
  }
  {
    // Element `at` of `array` into `to`. 16-bit: an even lane of a pair whose word is aligned
    // copies the word (both elements), its odd lane nothing; any other lane its own element.
    const auto copy = [&](T* to, const T* array, std::int64_t at) {
      if constexpr (sizeof(T) >= 4) {
        copy_async(to, array + at, std::integral_constant<int, static_cast<int>(sizeof(T))>{});
      } else {
        const bool upper = reinterpret_cast<std::uintptr_t>(array + at) % 4 != 0;
        if (paired && upper == ((lane & 1) != 0)) {
          if (!upper) copy_async(to, array + at, std::integral_constant<int, 4>{});
        } else {
          *to = array[at];
        }
      }
    };
    std::int64_t at = origin + first_step * p.channels;
    std::int64_t t = first_step;
#pragma unroll
    for (int u = 0; u < R; ++u) {
      if (u < rows_here) {
#pragma unroll
        for (int i = 0; i < operands; ++i) {
          T* to = reinterpret_cast<T*>(&rows[i][u][threadIdx.x]);
          if constexpr (Source::gradient) {
            const int shift = tiled_shift<Source>(i);
            if (!wanted(i)) {
            } else if (shift == 0 || (t + shift >= 0 && t + shift < p.length)) {
              copy(to, array_of(i), at + shift * p.channels);
            } else if (shift > 0) {
              *to = T(0);  // a after the last step
            } else {
              *to = p.x0s != nullptr ? p.x0s[k] : p.x0;  // x before the first
            }
          } else {
            copy(to, array_of(i), at);
          }
        }
        at += step;
        if constexpr (Source::gradient) t += reverse ? -1 : 1;
      }
    }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n\tcp.async.wait_group 0;" ::: "memory");  // this thread's copies
#endif
    if constexpr (sizeof(T) < 4) __syncwarp();  // the pairs' words, copied by their even lanes
  }
  const auto value = [&](int i, int u) -> V { return widen(rows[i][u][threadIdx.x].load()); };
  const auto map_of = [&](int u) {
    if constexpr (operands >= 2) {
      return p.src.map(value(0, u), value(1, u));
    } else {
      return p.src.map(value(0, u), V(0));
    }
  };
  // This warp's map (from its first map: composing onto (1, 0) would turn Inf * 0 into NaN).
  M mine{V(1), V(0)};
  if (rows_here > 0) {
    mine = map_of(0);
#pragma unroll
    for (int u = 1; u < R; ++u) {
      if (u < rows_here) mine = op(mine, map_of(u));
    }
  }
  warp_maps[warp][lane].store(mine);
  __syncthreads();
  if (warp == 0 && live) {
    // The tile's map: its warps' with rows, in order; then each warp's entering state. The
    // walk starts from x0 (the backward pass: from 0, its first map being a reset anyway).
    const std::int64_t tile_left = p.length - tile * (W * R);
    const int with_rows = tile_left >= W * R ? W : static_cast<int>(detail::ceil_div<std::int64_t>(tile_left, R));
    M aggregate = warp_maps[0][lane].load();
#pragma unroll
    for (int w = 1; w < W; ++w) {
      if (w < with_rows) aggregate = op(aggregate, warp_maps[w][lane].load());
    }
    V start = V(0);
    if constexpr (!Source::gradient) start = widen(p.x0s != nullptr ? p.x0s[k] : p.x0);
    V state = tiled_look_back(p, tile, tiles, k, aggregate, start);
#pragma unroll
    for (int w = 0; w < W; ++w) {
      warp_states[w][lane].store(state);
      if (w + 1 < with_rows) state = apply(warp_maps[w][lane].load(), state);
    }
  }
  __syncthreads();
  if (rows_here == 0) return;
  V state = warp_states[warp][lane].load();
  std::int64_t at = origin + first_step * p.channels;
  std::int64_t t = first_step;
#pragma unroll
  for (int u = 0; u < R; ++u) {
    if (u < rows_here) {
      state = apply(map_of(u), state);
      if (p.x != nullptr) p.x[at] = narrow<T>(state);
      if constexpr (Source::gradient) {
        // dL/da[t] = g conj(x[t-1]) (x0 at t = 0); dL/dx0 = conj(a[0]) g at t = 0 (0 if a[0] is 0).
        if (p.src.grad_a != nullptr) p.src.grad_a[at] = narrow<T>(state * conj_of(value(2, u)));
        if (t == 0 && p.src.grad_x0 != nullptr) {
          const V a0 = widen(p.src.p[at]);
          p.src.grad_x0[k] = narrow<T>(a0 == V(0) ? V(0) : conj_of(a0) * state);
        }
      }
      at += step;
      if constexpr (Source::gradient) t += reverse ? -1 : 1;
    }
  }
  if constexpr (!Source::gradient) {
    if (p.final_x != nullptr && first + rows_here == p.length) p.final_x[k] = narrow<T>(state);
  }
}

// Whether the tiled kernel takes a batch by default: enough 32-sequence groups that their
// chains keep the GPU's memory busy (each chain advances at most `tiled_window` tiles per
// round trip of its look-back), and a grid that fits.
inline constexpr std::int64_t tiled_min_sequences = 1024;

// The choice of dispatch_columns and dispatch_gradient_columns: the tiled kernel (one pass)
// where the walk would need `segments` (two reads of the operands) and there are enough
// sequences for its chains, every element type; or forced by the test hook. `wanted`: false
// keeps the walk (a solve of the final states alone: the segmented walk skips its third
// pass, so it reads the operands once too).
template <class Source, class T>
[[nodiscard]] inline bool take_tiled(const linrec_options& options, std::int64_t segments, std::int64_t batch,
                                     std::int64_t length, bool wanted) {
  const bool tiled = options.columns == column_path::tiled ||
                     (options.columns == column_path::automatic && options.segments == 0 && segments > 1 &&
                      batch >= tiled_min_sequences && wanted);
  const std::int64_t rows = tiled_warps * tiled_rows<Source, T>;
  return tiled && detail::ceil_div<std::int64_t>(length, rows) * detail::ceil_div<std::int64_t>(batch, 32) <= INT_MAX;
}

// The tiled kernel on `shape` (x or dL/db, and/or final states; the backward pass's other
// outputs are in its source).
template <class Source, class T>
[[nodiscard]] cudaError_t dispatch_tiled_columns(void* d_temp, std::size_t& temp_bytes,
                                                 const column_params<Source, T>& shape, cudaStream_t stream) {
  using V = linrec_state_t<T>;
  constexpr int R = tiled_rows<Source, T>;
  tiled_column_params<Source, T> params{};
  static_cast<column_params<Source, T>&>(params) = shape;
  params.groups = detail::ceil_div<std::int64_t>(shape.batch, 32);
  const std::int64_t tiles = detail::ceil_div<std::int64_t>(shape.length, tiled_warps * R);
  const std::int64_t slots = tiles * params.groups * 32;
  const std::size_t inclusive_bytes = static_cast<std::size_t>(slots) * column_slots<V>::words * 8;
  const std::size_t aggregate_bytes = static_cast<std::size_t>(slots) * column_slots<affine_map<V>>::words * 8;
  const std::size_t reset = 256 + inclusive_bytes + aggregate_bytes;
  if (const auto answer = detail::temp_storage_query(d_temp, temp_bytes, 256 + reset)) return *answer;
  if (shape.batch == 0) return cudaSuccess;
  if (shape.length == 0) {
    if constexpr (Source::gradient) {
      return shape.src.grad_x0 != nullptr ? cudaMemsetAsync(shape.src.grad_x0, 0,
                                                            static_cast<std::size_t>(shape.batch) * sizeof(T), stream)
                                          : cudaSuccess;
    } else {
      if (shape.final_x == nullptr) return cudaSuccess;
      return detail::launch(linrec_initial_states_kernel<T>, column_grid(shape.batch), column_threads, 0, stream,
                            shape.final_x, shape.x0s, shape.x0, shape.batch);
    }
  }
  auto* base = reinterpret_cast<unsigned char*>(detail::align_up(reinterpret_cast<std::uintptr_t>(d_temp)));
  params.ticket = reinterpret_cast<unsigned long long*>(base);
  params.inclusive.base = reinterpret_cast<std::uint64_t*>(base + 256);
  params.aggregate.base = reinterpret_cast<std::uint64_t*>(base + 256 + inclusive_bytes);
  SCANLAB_TRY(cudaMemsetAsync(base, 0, reset, stream));
  return detail::launch(linrec_tiled_columns_kernel<R, Source, T>, static_cast<unsigned>(tiles * params.groups),
                        tiled_threads, 0, stream, params);
}

// `batch` sequences walked as columns: interleaved [length, batch] (channels == batch, or 0
// for that), or channels-last [batch / channels, length, channels].
template <class Policy, class Source, class T>
[[nodiscard]] cudaError_t dispatch_columns(void* d_temp, std::size_t& temp_bytes, Source src, T* d_x, T* d_final,
                                           std::int64_t batch, std::int64_t length, const T* d_x0s, T x0,
                                           cudaStream_t stream, linrec_options options = {},
                                           std::int64_t channels = 0) {
  if (!multiply_fits(batch, length)) return cudaErrorInvalidValue;
  if (channels == 0) channels = batch;
  // One sequence, sequences of one element, or one channel: the layout is the row-major one.
  if (batch == 1 || channels == 1 || (length == 1 && options.segments == 0)) {
    return dispatch_rows<Policy>(d_temp, temp_bytes, src, d_x, d_final, batch, length, d_x0s, x0, stream, options);
  }
  const std::int64_t segments = column_segments(batch, length, options.segments);
  if (take_tiled<Source, T>(options, segments, batch, length, d_x != nullptr)) {
    return dispatch_tiled_columns(d_temp, temp_bytes,
                                  column_params<Source, T>{make_column_shape(batch, length, channels, 1, d_x0s, x0),
                                                           src, d_x, d_final},
                                  stream);
  }
  const column_params<Source, T> params{make_column_shape(batch, length, channels, segments, d_x0s, x0), src, d_x,
                                        d_final};
  if (segments == 1) {
    // Nothing is used: 1 byte, so that the caller's allocation is not null.
    if (const auto answer = detail::temp_storage_query(d_temp, temp_bytes, 1)) return *answer;
    if (batch == 0) return cudaSuccess;
    return detail::launch(linrec_column_solve_kernel<Source, T>, column_grid(batch), column_threads, 0, stream,
                          params);
  }
  column_params<Source, T> segmented = params;
  segmented.final_x = nullptr;  // the final states come from pass 2
  return segmented_columns<Policy, Source>(d_temp, temp_bytes, segmented, linrec_column_maps_kernel<Source, T>,
                                           linrec_column_solve_kernel<Source, T>, d_x != nullptr, d_final, d_x0s, x0,
                                           stream, options);
}

// ---- the backward pass of interleaved batches ----
// The same three passes over the gradient's maps (a[t+1], dL/dx[t]), walked from the last
// row up: pass 1 composes each segment's maps (its first map takes a from the row below
// the segment), pass 2 is the reverse row-major solve of the segment maps from the state
// 0, pass 3 walks each segment again from the state below it, writing dL/db, dL/da and,
// at row 0, dL/dx0. Reads a and dL/dx twice with segments, x once.

// (x0s: the forward's initial states; segment_states: g at the top row of each segment.)
template <class T>
struct column_gradient_params : column_shape<T> {
  gradient_source<T> src;
  T* grad_b;  // or nullptr
};

// Rows t1 - 1 down to t0 of sequence k. Compose: the segment's map; otherwise the
// gradients from the state g below the segment.
// (T: the storage type; V: the state type; complex: conj(a) and conj(x), gradient_source.)
template <bool Compose, class T, class V = linrec_state_t<T>>
__device__ __forceinline__ void walk_gradient_column(const column_gradient_params<T>& p, std::int64_t k,
                                                     std::int64_t t0, std::int64_t t1, affine_map<V>& composed,
                                                     V& g) {
  const affine_then op;
  const std::int64_t origin = column_origin(p, k);
  const auto element = [&](std::int64_t t) { return origin + t * p.channels; };
  // a of the row below (the next in time): 0 below the last row (nothing follows it).
  V a_below = t1 < p.length ? widen(p.src.p[element(t1)]) : V(0);
  bool first = Compose;
  for (std::int64_t top = t1; top > t0;) {
    const int rows = top - t0 >= column_unroll ? column_unroll : static_cast<int>(top - t0);
    V av[column_unroll], gv[column_unroll], xv[column_unroll];
#pragma unroll
    for (int u = 0; u < column_unroll; ++u) {
      if (u < rows) {
        const std::int64_t t = top - 1 - u;
        av[u] = widen(p.src.p[element(t)]);
        gv[u] = widen(p.src.q[element(t)]);
        if (!Compose && p.src.grad_a != nullptr) xv[u] = t > 0 ? widen(p.src.r[element(t - 1)]) : V(0);
      }
    }
#pragma unroll
    for (int u = 0; u < column_unroll; ++u) {
      if (u < rows) {
        const std::int64_t t = top - 1 - u;
        const affine_map<V> m{conj_of(a_below), gv[u]};  // a_below is 0 at the last row: a start
        a_below = av[u];
        if constexpr (Compose) {
          composed = first ? m : op(composed, m);
          first = false;
        } else {
          g = apply(m, g);
          if (p.grad_b != nullptr) p.grad_b[element(t)] = narrow<T>(g);
          if (t == 0) {
            const V x0 = widen(p.x0s != nullptr ? p.x0s[k] : p.x0);
            if (p.src.grad_a != nullptr) p.src.grad_a[element(t)] = narrow<T>(g * conj_of(x0));
            if (p.src.grad_x0 != nullptr) p.src.grad_x0[k] = narrow<T>(av[u] == V(0) ? V(0) : conj_of(av[u]) * g);
          } else if (p.src.grad_a != nullptr) {
            p.src.grad_a[element(t)] = narrow<T>(g * conj_of(xv[u]));
          }
        }
      }
    }
    top -= rows;
  }
}

template <class T>
__global__ void __launch_bounds__(column_threads)
    linrec_column_gradient_maps_kernel(const __grid_constant__ column_gradient_params<T> p) {
  using V = linrec_state_t<T>;
  for_each_column_segment(p, [&](std::int64_t k, std::int64_t segment, std::int64_t t0, std::int64_t t1) {
    affine_map<V> composed{V(1), V(0)};  // an empty segment: the identity
    V unused = V(0);
    walk_gradient_column<true>(p, k, t0, t1, composed, unused);
    p.segment_a[k * p.segments + segment] = composed.a;
    p.segment_b[k * p.segments + segment] = composed.b;
  });
}

template <class T>
__global__ void __launch_bounds__(column_threads)
    linrec_column_gradient_kernel(const __grid_constant__ column_gradient_params<T> p) {
  using V = linrec_state_t<T>;
  for_each_column_segment(p, [&](std::int64_t k, std::int64_t segment, std::int64_t t0, std::int64_t t1) {
    V g = segment == p.segments - 1 ? V(0) : p.segment_states[k * p.segments + segment + 1];
    affine_map<V> unused{V(1), V(0)};
    walk_gradient_column<false>(p, k, t0, t1, unused, g);
  });
}

// The backward pass of an interleaved batch (more than one sequence of more than one step).
// Policy: the tiles of the row-major solve of the segment maps (a forward-form tuning).
// channels: as dispatch_columns (0: interleaved).
template <class Policy, class T>
[[nodiscard]] cudaError_t dispatch_gradient_columns(void* d_temp, std::size_t& temp_bytes,
                                                    const gradient_source<T>& src, T* d_grad_b, std::int64_t batch,
                                                    std::int64_t length, const T* d_x0s, T x0, cudaStream_t stream,
                                                    linrec_options options = {}, std::int64_t channels = 0) {
  if (!multiply_fits(batch, length)) return cudaErrorInvalidValue;
  if (channels == 0) channels = batch;
  const std::int64_t segments = column_segments(batch, length, options.segments);
  if (take_tiled<gradient_source<T>, T>(options, segments, batch, length, true)) {
    return dispatch_tiled_columns(
        d_temp, temp_bytes,
        column_params<gradient_source<T>, T>{make_column_shape(batch, length, channels, 1, d_x0s, x0), src, d_grad_b,
                                             nullptr},
        stream);
  }
  const column_gradient_params<T> params{make_column_shape(batch, length, channels, segments, d_x0s, x0), src,
                                         d_grad_b};
  if (segments == 1) {
    if (const auto answer = detail::temp_storage_query(d_temp, temp_bytes, 1)) return *answer;
    if (batch == 0) return cudaSuccess;
    if (length == 0) {
      return src.grad_x0 != nullptr
                 ? cudaMemsetAsync(src.grad_x0, 0, static_cast<std::size_t>(batch) * sizeof(T), stream)
                 : cudaSuccess;
    }
    return detail::launch(linrec_column_gradient_kernel<T>, column_grid(batch), column_threads, 0, stream, params);
  }
  // Pass 2 solves the segment maps from the state 0 after the last row: g at each segment's top.
  return segmented_columns<Policy, reversed<ab_source<T>>>(
      d_temp, temp_bytes, params, linrec_column_gradient_maps_kernel<T>, linrec_column_gradient_kernel<T>, true,
      static_cast<T*>(nullptr), static_cast<const T*>(nullptr), T{}, stream, options);
}

}  // namespace linrec_detail

}  // namespace scanlab
