// scanlab/algorithms/linrec.cuh: first-order linear recurrences on the GPU.
//
//   x[i] = a[i] * x[i-1] + b[i],   x[-1] = x0,   i = 0 .. n-1
//
// (first-order IIR filters, exponential moving averages, linear recurrent layers and
// state-space models, discounted sums). Solved as a scan over the affine maps
// f_i(x) = a_i x + b_i under composition, in ONE fused single-pass kernel that reads a
// and b once and writes x once (12 bytes per float element), with decoupled look-back.
//
//   std::size_t temp_bytes = 0;
//   SCANLAB_CHECK(scanlab::linear_recurrence(nullptr, temp_bytes, d_a, d_b, d_x, n, x0, stream));
//   ... allocate temp_bytes at d_temp ...
//   SCANLAB_CHECK(scanlab::linear_recurrence(d_temp, temp_bytes, d_a, d_b, d_x, n, x0, stream));
//
// Entry points (T, the element type the arrays hold: float, double, __half, __nv_bfloat16,
// scanlab::complex<float> or scanlab::complex<double>; see "Element types" below):
//   linear_recurrence(a, b, x, n, x0)                 one sequence
//   linear_recurrence_batched(a, b, x, batch, length, layout, x0s)
//                                                     `batch` independent sequences, stored
//                                                     row-major [batch, length] (sequence k
//                                                     at k*length ...) or interleaved
//                                                     [length, batch] (sequence k at k,
//                                                     k + batch, ...), one initial state each
//   linear_recurrence_lambda(lambda, u, v, n, v0)     v[i] = (1 - lambda[i]) v[i-1] + lambda[i] u[i]
//   exponential_moving_average(s, y, n, alpha, y0)    y[i] = (1 - alpha) y[i-1] + alpha s[i]
//                                                     (reads 4 bytes per float element, not 8)
//   ..._batched forms of the last two
//   linear_recurrence_final(a, b, final, n, x0)       only x[n-1] (a reduction over the maps:
//   linear_recurrence_final_batched(...)              reads a and b, writes one value per sequence)
//   solve_linear_recurrence(src, x, final, batch, length, layout, x0s, x0)
//                                                     any input form (linrec_ab, linrec_lambda,
//                                                     linrec_ema, and linrec_reverse(any of them)),
//                                                     x and/or final states: the general form
//                                                     behind all of the above
//   linear_recurrence_reverse(a, b, x, n, x_end)      x[i] = a[i] x[i+1] + b[i], x[n] = x_end
//   linear_recurrence_reverse_batched(a, b, x, batch, length, layout, x_ends)
//                                                     (the same kernels, tiles read from the end)
//   linear_recurrence_backward(a, x, grad_x, grad_a, grad_b, grad_x0, n, x0)
//   linear_recurrence_backward_batched(..., batch, length, layout, x0s)
//                                                     the backward pass of x = linrec(a, b, x0):
//                                                     dL/da, dL/db, dL/dx0 from dL/dx in ONE
//                                                     fused pass (below)
//   linear_recurrence_channels_last(a, b, x, batch, length, channels, x0s)
//                                                     channels-last [batch, length, channels]:
//                                                     sequence b * channels + c is element
//                                                     (b * length + t) * channels + c (the
//                                                     interleaved column walks, one block per b)
//   linear_recurrence_varlen(a, b, x, final, offsets, sequences, n, x0s)
//                                                     variable lengths (cu_seqlens): sequence s is
//                                                     elements offsets[s] .. offsets[s+1] - 1, in ONE
//                                                     single-pass scan (each start a reset); x and
//                                                     the final states from one call
//   ..._reverse_channels_last, _reverse_varlen, _backward_channels_last, _backward_varlen
//   solve_linear_recurrence(src, x, final, shape, x0s, x0)
//                                                     any form on linrec_channels_last{batch, length,
//                                                     channels} or linrec_varlen{offsets, sequences, n}
// Optional tuning (scanlab/tuning.hpp): a tile shape as template argument (after T in the
// named forms, first in solve_linear_recurrence) and single_pass_options as last argument.
//
// Memory traffic (elements read / written, n = batch * length):
//   solve (a, b)             2n read, n written  (12 bytes per float element)
//   EMA                      n read, n written
//   final states only        2n read, batch written
//   reverse                  the same as forward
//   backward                 3n read (a, x, dL/dx), 2n written (dL/da, dL/db): 20 bytes per
//                            float element; plus batch read (x0) and batch written (dL/dx0).
//                            Interleaved batches of fewer than 2^17 sequences: a and dL/dx
//                            read twice (the column segments), 7n in all.
//   channels-last            as interleaved batches: 12 (backward 20) bytes per float element
//                            with at least 2^17 sequences, 20 (28) with fewer
//   offsets                  as one sequence, plus the offsets and one 8-byte bracket per tile
//                            (built by a small kernel first) and x0 / final per sequence
// The backward pass: the adjoint g of x = linrec(a, b, x0) is the reverse recurrence
// g[i] = dL/dx[i] + a[i+1] g[i+1] (g[n-1] = dL/dx[n-1]): the reverse solve of the maps
// (a[i+1], dL/dx[i]) from 0, the shift of a done where each tile is read (each warp's part
// of a tile is copied in with the element after it). dL/db = g; the finish also forms
// dL/da[i] = g[i] x[i-1] (x[-1] = x0; x read with the tile, the element before each warp's
// part with it) and dL/dx0 = a[0] g[0].
//
// Element types. float and double are computed in themselves. __half and __nv_bfloat16
// (cuda_fp16.h, cuda_bf16.h) are STORAGE types: a, b, x0 and the results are stored in 16
// bits, everything is computed in float (linrec_state_t<T>: the maps, their compositions,
// the look-back's tile states, every state), and each result is rounded to 16 bits once,
// where it is written (to nearest even; beyond the type's range: Inf). Their tiles are
// copied in as stored, 8 halves per 16-byte word. scanlab::complex<float> / <double>
// (scanlab/complex.hpp; the layout of std::complex, cuda::std::complex, cuComplex, NumPy's
// complex64 / complex128: cast the pointers) are computed in themselves; a == 0 (both
// parts) is the reset. The backward pass of complex recurrences follows PyTorch's
// convention for holomorphic functions: with g = dL/dx given as dL/d conj(x),
//   g[i] = dL/dx[i] + conj(a[i+1]) g[i+1],  dL/db = g,  dL/da[i] = g[i] conj(x[i-1]),
//   dL/dx0 = conj(a[0]) g[0].
//
// Guarantees, for every entry point here:
//  - a[i] == 0 RESETS: x[i] = b[i] whatever x[i-1] is, also Inf or NaN (IEEE would give
//    0 * Inf = NaN). Otherwise IEEE arithmetic with fused multiply-adds: a NaN in a or b
//    propagates to every later x of its sequence (until a reset), as in a sequential loop.
//    Sequences of a batch never influence each other, NaNs included.
//  - Accuracy: the maps are composed in a tree, not left to right, so the bits differ from
//    a sequential loop. The error of x[i] is bounded by about
//        eps * (2 * sum_j |a_{j+1} ... a_i| |b_j| (i - j + 1) + 64 * sum_j |a_{j+1} ... a_i| |b_j|)
//    (x0 counting as b_{-1}), the sequential loop's bound plus a term for the depth of the
//    tree; with |a| <= rho < 1 the first sum is about 1/(1 - rho) times the second, so the
//    relative error stays a few hundred eps whatever n; with a = 1 (a prefix sum) it is
//    Higham's n * eps * sum |b|. See primitives/docs/linrec.md. A product of nonzero a's
//    that underflows is kept at the smallest subnormal, not 0 (only a == 0 resets), so
//    NaN and Inf states propagate as in a sequential loop (this needs subnormals: do not
//    build with flush-to-zero, e.g. --use_fast_math).
//  - Deterministic: the same input gives the same bits on every run, on any number of SMs
//    (the canonical look-back of device/tile_state.cuh; no atomics in the arithmetic). The
//    kernel and tile shape follow from the shape of the input and the device (short rows:
//    the rows kernel); a forced launch mode (single_pass_options) may change them, and so
//    the rounding.
//  - In place: d_x may be d_a or d_b (each tile is read before it is written, by the same
//    block). Other overlaps are not allowed.
//  - Alignment: 16-byte aligned arrays (cudaMalloc's) get 16-byte vector loads and stores;
//    any arrays aligned to sizeof(T) work (element accesses, same results).
//  - Accuracy of the 16-bit types: the float solve's bound (above, with float's eps) plus
//    the one rounding of each result to 16 bits (half an ulp of the stored type).
//  - Sizes: 64-bit; n == 0 (or batch == 0 or length == 0) writes no x; the final-state forms
//    then write x0 for every sequence (an empty sequence ends in its initial state).
//    n < 0, or batch * length overflowing int64, is cudaErrorInvalidValue.
//  - Initial states: the batched forms take d_x0 (device, `batch` values), or nullptr for 0;
//    channels-last and offsets: one per sequence (b * channels + c; s).
//  - Offsets (linrec_varlen): offsets[0] == 0, nondecreasing, offsets[sequences] == n is the
//    caller's precondition, not checked on the device (broken offsets give meaningless
//    results, never an access out of bounds); negative sizes, sequences == 0 with n > 0 and a
//    null d_offsets are cudaErrorInvalidValue. Empty sequences end in their initial state.
//  - Temp storage: CUB's two-phase protocol. With d_temp == nullptr only temp_bytes is set;
//    otherwise d_temp must hold temp_bytes bytes (any alignment) and not be in use by
//    another call in flight. About 16 bytes per tile of 4096 elements for float
//    (interleaved batches with few sequences: also 12 bytes per segment map); uninitialised
//    is fine. Too little is cudaErrorInvalidValue.
//  - Asynchronous: everything is enqueued on `stream`; no allocation, no synchronisation;
//    returns the first failed CUDA call or launch. Never throws.
//  - Lengths: the pointer forms take one n for all arrays; the span forms check them
//    (cudaErrorInvalidValue before anything is enqueued).
//  - Launches: one cooperative kernel for one sequence and for row-major batches (a regular
//    launch after a memset where cooperative launch is unavailable or refused), with 128 KB
//    of dynamic shared memory per block (set once per device on first use). Short rows
//    (the tile, 8192 floats on Hopper, a multiple of the length, or everything in one tile):
//    one regular launch of the rows kernel instead, each tile whole sequences, no look-back
//    and no tile states (temp storage: 256 bytes), the same bits; offsets add one
//    small kernel before it (and one for the final states of empty sequences). Interleaved
//    and channels-last batches:
//    one kernel when there are at least 2^17 sequences; otherwise three (segment maps,
//    the row-major solve of the segment maps, the segments again: a and b read twice).
#pragma once

#include <scanlab/algorithms/linrec_kernels.cuh>
#include <scanlab/error.hpp>
#include <scanlab/tuning.hpp>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

namespace scanlab {

enum class batch_layout {
  row_major,    // [batch, length]: sequence k is a[k * length + t]
  interleaved,  // [length, batch]: sequence k is a[t * batch + k]
};

// ---- the shapes beyond [batch, length] (solve_linear_recurrence and the named forms) ----

// Channels-last batches [batch, length, channels], the layout of sequence models: each
// (b, c) pair is one sequence, its step t at a[(b * length + t) * channels + c]; the
// sequence's index (for initial and final states and dL/dx0) is b * channels + c. Solved
// by the interleaved batches' column walks, one [length, channels] block per b.
struct linrec_channels_last {
  std::int64_t batch = 1;
  std::int64_t length = 0;
  std::int64_t channels = 1;
};

// Variable-length sequences, concatenated (cu_seqlens): sequence s is elements
// offsets[s] .. offsets[s + 1] - 1, s = 0 .. sequences - 1. d_offsets: device, sequences + 1
// int64 values with offsets[0] == 0, nondecreasing, offsets[sequences] == n (the caller's
// precondition: the device does not check it; broken offsets give meaningless results but
// no access out of bounds). Empty sequences are allowed (their final state is their
// initial state, their dL/dx0 0). Solved as ONE single-pass scan of all n elements.
struct linrec_varlen {
  const std::int64_t* d_offsets = nullptr;
  std::int64_t sequences = 0;
  std::int64_t n = 0;
};

// ---- the input forms: where each step's map (a, b) comes from ----

// x[i] = a[i] x[i-1] + b[i]: the arrays a and b (device, n elements each).
template <class T>
using linrec_ab_source = linrec_detail::ab_source<T>;
// v[i] = (1 - lambda[i]) v[i-1] + lambda[i] u[i]: the arrays lambda and u.
template <class T>
using linrec_lambda_source = linrec_detail::lambda_source<T>;
// y[i] = (1 - alpha) y[i-1] + alpha s[i]: the array s and one alpha (reads one array, not two).
template <class T>
using linrec_ema_source = linrec_detail::ema_source<T>;

template <class T>
[[nodiscard]] linrec_ab_source<T> linrec_ab(const T* d_a, const T* d_b) {
  return {d_a, d_b};
}
template <class T>
[[nodiscard]] linrec_lambda_source<T> linrec_lambda(const T* d_lambda, const T* d_u) {
  return {d_lambda, d_u};
}
// (alpha as the caller holds it, widened to the state type: 1 - alpha formed there.)
template <class T>
[[nodiscard]] linrec_ema_source<T> linrec_ema(const T* d_s, T alpha) {
  using state = linrec_state_t<T>;
  const state a = linrec_detail::widen(alpha);
  return {d_s, nullptr, a, state(1) - a};
}

// Any of the three, solved from the end: x[i] = a_i x[i+1] + b_i with x[n] = x0 (the state
// after each sequence's end; the final state is then x[0]). The same kernels, walking the
// tiles (or rows) from the end.
template <class Source>
using linrec_reversed_source = linrec_detail::reversed<Source>;
template <class Source>
[[nodiscard]] linrec_reversed_source<Source> linrec_reverse(const Source& src) {
  linrec_reversed_source<Source> reversed{};
  static_cast<Source&>(reversed) = src;
  return reversed;
}

namespace linrec_detail {

// The element type of an input form (the three above only).
template <class Source>
struct source_value;
template <class T>
struct source_value<ab_source<T>> {
  using type = T;
};
template <class T>
struct source_value<lambda_source<T>> {
  using type = T;
};
template <class T>
struct source_value<ema_source<T>> {
  using type = T;
};
template <class Source>
struct source_value<reversed<Source>> : source_value<Source> {};

// channels (interleaved only): sequences per [length, channels] block, 0 for one block of
// `batch` (channels-last batches: batch = groups * channels).
template <class Policy, class Source, class T>
[[nodiscard]] cudaError_t solve(void* d_temp, std::size_t& temp_bytes, Source src, T* d_x, T* d_final,
                                std::int64_t batch, std::int64_t length, batch_layout layout, const T* d_x0s, T x0,
                                cudaStream_t stream, const single_pass_options& options, std::int64_t channels = 0) {
  if (!detail::valid_options(options)) return cudaErrorInvalidValue;
  using policy = detail::resolve_policy_t<Policy, default_linrec_policy<T>>;
  // Short rows (linrec_rows_kernel): their own shape by default; a named policy for both.
  using rows_policy = detail::resolve_policy_t<Policy, default_linrec_rows_policy<T>>;
  const auto launch = detail::to_dispatch_options<linrec_options>(options);
  if (layout == batch_layout::interleaved) {
    return dispatch_columns<policy>(d_temp, temp_bytes, src, d_x, d_final, batch, length, d_x0s, x0, stream, launch,
                                    channels);
  }
  return dispatch_rows<policy, rows_policy>(d_temp, temp_bytes, src, d_x, d_final, batch, length, d_x0s, x0, stream,
                                            launch);
}

// The sequences of a channels-last shape, or -1 (negative sizes, an overflow).
[[nodiscard]] inline std::int64_t sequences_of(const linrec_channels_last& shape) {
  if (shape.length < 0 || !multiply_fits(shape.batch, shape.channels)) return -1;
  return shape.batch * shape.channels;
}

template <class Policy, class Source, class T>
[[nodiscard]] cudaError_t solve(void* d_temp, std::size_t& temp_bytes, Source src, T* d_x, T* d_final,
                                const linrec_channels_last& shape, const T* d_x0s, T x0, cudaStream_t stream,
                                const single_pass_options& options) {
  const std::int64_t sequences = sequences_of(shape);
  if (sequences < 0) return cudaErrorInvalidValue;
  return solve<Policy>(d_temp, temp_bytes, src, d_x, d_final, sequences, shape.length, batch_layout::interleaved,
                       d_x0s, x0, stream, options, shape.channels);
}

template <class Policy, class Source, class T>
[[nodiscard]] cudaError_t solve(void* d_temp, std::size_t& temp_bytes, Source src, T* d_x, T* d_final,
                                const linrec_varlen& shape, const T* d_x0s, T x0, cudaStream_t stream,
                                const single_pass_options& options) {
  if (!detail::valid_options(options)) return cudaErrorInvalidValue;
  using policy = detail::resolve_policy_t<Policy, default_linrec_policy<T>>;
  return dispatch_offsets<policy>(d_temp, temp_bytes, src, d_x, d_final, shape.d_offsets, shape.sequences, shape.n,
                                  d_x0s, x0, stream, detail::to_dispatch_options<linrec_options>(options));
}

// channels: as solve() (interleaved only; 1 is the row-major layout).
template <class Policy, class T>
[[nodiscard]] cudaError_t backward(void* d_temp, std::size_t& temp_bytes, const T* d_a, const T* d_x,
                                   const T* d_grad_x, T* d_grad_a, T* d_grad_b, T* d_grad_x0, std::int64_t batch,
                                   std::int64_t length, batch_layout layout, const T* d_x0s, T x0,
                                   cudaStream_t stream, const single_pass_options& options,
                                   std::int64_t channels = 0) {
  if (!detail::valid_options(options)) return cudaErrorInvalidValue;
  const auto launch = detail::to_dispatch_options<linrec_options>(options);
  const gradient_source<T> src{d_a, d_grad_x, d_x, d_grad_a, d_grad_x0};
  if (layout == batch_layout::interleaved && batch > 1 && length > 1 && channels != 1) {
    // Column walks; the segment maps of few long sequences are solved by the forward tiles.
    return dispatch_gradient_columns<default_linrec_policy<T>>(d_temp, temp_bytes, src, d_grad_b, batch, length,
                                                               d_x0s, x0, stream, launch, channels);
  }
  using policy = detail::resolve_policy_t<Policy, default_linrec_gradient_policy<T>>;
  using rows_policy = detail::resolve_policy_t<Policy, default_linrec_rows_gradient_policy<T>>;
  return dispatch_rows<policy, rows_policy>(d_temp, temp_bytes, src, d_grad_b, static_cast<T*>(nullptr), batch,
                                            length, d_x0s, x0, stream, launch);
}

template <class Policy, class T>
[[nodiscard]] cudaError_t backward(void* d_temp, std::size_t& temp_bytes, const T* d_a, const T* d_x,
                                   const T* d_grad_x, T* d_grad_a, T* d_grad_b, T* d_grad_x0,
                                   const linrec_channels_last& shape, const T* d_x0s, cudaStream_t stream,
                                   const single_pass_options& options) {
  const std::int64_t sequences = sequences_of(shape);
  if (sequences < 0) return cudaErrorInvalidValue;
  return backward<Policy>(d_temp, temp_bytes, d_a, d_x, d_grad_x, d_grad_a, d_grad_b, d_grad_x0, sequences,
                          shape.length, batch_layout::interleaved, d_x0s, T(0), stream, options, shape.channels);
}

template <class Policy, class T>
[[nodiscard]] cudaError_t backward(void* d_temp, std::size_t& temp_bytes, const T* d_a, const T* d_x,
                                   const T* d_grad_x, T* d_grad_a, T* d_grad_b, T* d_grad_x0,
                                   const linrec_varlen& shape, const T* d_x0s, cudaStream_t stream,
                                   const single_pass_options& options) {
  if (!detail::valid_options(options)) return cudaErrorInvalidValue;
  using policy = detail::resolve_policy_t<Policy, default_linrec_gradient_policy<T>>;
  const gradient_source<T> src{d_a, d_grad_x, d_x, d_grad_a, d_grad_x0};
  return dispatch_offsets<policy>(d_temp, temp_bytes, src, d_grad_b, static_cast<T*>(nullptr), shape.d_offsets,
                                  shape.sequences, shape.n, d_x0s, T(0), stream,
                                  detail::to_dispatch_options<linrec_options>(options));
}

}  // namespace linrec_detail

// ---- tuning (optional: scanlab/tuning.hpp) -------------------------------------------------

// A tile shape for every function below. The named forms take the element type T first and
// the policy second (linear_recurrence<float, scanlab::linrec_policy<256, 16, 2, true>>(...));
// solve_linear_recurrence, which deduces T, takes the policy first.
// BlockThreads x ItemsPerThread elements per tile (ItemsPerThread a multiple of 16 bytes'
// worth of T), MinBlocksPerSm for __launch_bounds__, Prefetch: a third tile buffer of shared
// memory into which the next tile is copied while the current one is scanned. Left out
// (default_policy), default_linrec_policy<T> is used (the sm_90 tuning in
// primitives/docs/linrec.md). Every function below also takes an optional last argument,
// single_pass_options (launch mode, grid cap: benchmark and test knobs).
template <int BlockThreads, int ItemsPerThread, int MinBlocksPerSm, bool Prefetch>
using linrec_policy = linrec_detail::linrec_policy<BlockThreads, ItemsPerThread, MinBlocksPerSm, Prefetch>;
template <class T>
using default_linrec_policy = linrec_detail::default_linrec_policy<T>;
// The backward pass's default (three arrays staged per tile: smaller tiles).
template <class T>
using default_linrec_gradient_policy = linrec_detail::default_linrec_gradient_policy<T>;

// ---- any input form: the general entry point behind every one below ----

// `batch` sequences of `length` steps whose maps come from `src` (linrec_ab, linrec_lambda,
// linrec_ema), stored in `layout`. d_x: the states (batch * length), or nullptr; d_final:
// the last state of each sequence (batch; the initial state for length == 0), or nullptr.
// d_x0s: one initial state per sequence (device), or nullptr: x0 for every sequence.
template <class Policy = default_policy, class Source>
[[nodiscard]] cudaError_t solve_linear_recurrence(
    void* d_temp, std::size_t& temp_bytes, const Source& src, typename linrec_detail::source_value<Source>::type* d_x,
    typename linrec_detail::source_value<Source>::type* d_final, std::int64_t batch, std::int64_t length,
    batch_layout layout, const typename linrec_detail::source_value<Source>::type* d_x0s = nullptr,
    typename linrec_detail::source_value<Source>::type x0 = {}, cudaStream_t stream = nullptr,
    const single_pass_options& options = {}) {
  return linrec_detail::solve<Policy>(d_temp, temp_bytes, src, d_x, d_final, batch, length, layout, d_x0s, x0, stream,
                                      options);
}

// The same for the shapes above: `shape` is linrec_channels_last{batch, length, channels}
// (d_x [batch, length, channels]; d_final and d_x0s one per sequence, b * channels + c) or
// linrec_varlen{d_offsets, sequences, n} (d_x n elements; d_final and d_x0s one per
// sequence: empty ones end in their initial state). Reversed sources end at each
// sequence's first element (d_final = x at it) and take d_x0s as the states after the ends.
template <class Policy = default_policy, class Source, class Shape>
  requires(std::is_same_v<Shape, linrec_channels_last> || std::is_same_v<Shape, linrec_varlen>)
[[nodiscard]] cudaError_t solve_linear_recurrence(
    void* d_temp, std::size_t& temp_bytes, const Source& src, typename linrec_detail::source_value<Source>::type* d_x,
    typename linrec_detail::source_value<Source>::type* d_final, const Shape& shape,
    const typename linrec_detail::source_value<Source>::type* d_x0s = nullptr,
    typename linrec_detail::source_value<Source>::type x0 = {}, cudaStream_t stream = nullptr,
    const single_pass_options& options = {}) {
  return linrec_detail::solve<Policy>(d_temp, temp_bytes, src, d_x, d_final, shape, d_x0s, x0, stream, options);
}

// ---- x[i] = a[i] x[i-1] + b[i] ----

template <class T, class Policy = default_policy>
[[nodiscard]] cudaError_t linear_recurrence(void* d_temp, std::size_t& temp_bytes, const T* d_a, const T* d_b, T* d_x,
                                            std::int64_t n, T x0, cudaStream_t stream = nullptr,
                                            const single_pass_options& options = {}) {
  if (n < 0) return cudaErrorInvalidValue;
  return solve_linear_recurrence<Policy>(d_temp, temp_bytes, linrec_ab(d_a, d_b), d_x, nullptr, 1, n,
                                         batch_layout::row_major, nullptr, x0, stream, options);
}

template <class T, class Policy = default_policy>
[[nodiscard]] cudaError_t linear_recurrence_batched(void* d_temp, std::size_t& temp_bytes, const T* d_a,
                                                    const T* d_b, T* d_x, std::int64_t batch, std::int64_t length,
                                                    batch_layout layout, const T* d_x0 = nullptr,
                                                    cudaStream_t stream = nullptr,
                                                    const single_pass_options& options = {}) {
  return solve_linear_recurrence<Policy>(d_temp, temp_bytes, linrec_ab(d_a, d_b), d_x, nullptr, batch, length, layout,
                                         d_x0, T{}, stream, options);
}

// Channels-last [batch, length, channels]: sequence b * channels + c is a[(b * length + t) *
// channels + c]; d_x0: one initial state per sequence (b * channels + c), or nullptr for 0.
template <class T, class Policy = default_policy>
[[nodiscard]] cudaError_t linear_recurrence_channels_last(void* d_temp, std::size_t& temp_bytes, const T* d_a,
                                                          const T* d_b, T* d_x, std::int64_t batch,
                                                          std::int64_t length, std::int64_t channels,
                                                          const T* d_x0 = nullptr, cudaStream_t stream = nullptr,
                                                          const single_pass_options& options = {}) {
  return solve_linear_recurrence<Policy>(d_temp, temp_bytes, linrec_ab(d_a, d_b), d_x, nullptr,
                                         linrec_channels_last{batch, length, channels}, d_x0, T(0), stream, options);
}

// Variable-length sequences concatenated in n elements, sequence s at offsets[s] ..
// offsets[s + 1] - 1 (linrec_varlen above: d_offsets on the device, sequences + 1 values).
// d_x (n values) and/or d_final (one per sequence: its last state, or its initial state when
// it is empty) may be nullptr; d_x0: one initial state per sequence, or nullptr for 0.
template <class T, class Policy = default_policy>
[[nodiscard]] cudaError_t linear_recurrence_varlen(void* d_temp, std::size_t& temp_bytes, const T* d_a, const T* d_b,
                                                   T* d_x, T* d_final, const std::int64_t* d_offsets,
                                                   std::int64_t sequences, std::int64_t n, const T* d_x0 = nullptr,
                                                   cudaStream_t stream = nullptr,
                                                   const single_pass_options& options = {}) {
  return solve_linear_recurrence<Policy>(d_temp, temp_bytes, linrec_ab(d_a, d_b), d_x, d_final,
                                         linrec_varlen{d_offsets, sequences, n}, d_x0, T(0), stream, options);
}

// ---- reverse: x[i] = a[i] x[i+1] + b[i], x[n] = x_end ----
// (the (lambda, u) and EMA forms and final states, reversed: solve_linear_recurrence with
// linrec_reverse(src))

template <class T, class Policy = default_policy>
[[nodiscard]] cudaError_t linear_recurrence_reverse(void* d_temp, std::size_t& temp_bytes, const T* d_a,
                                                    const T* d_b, T* d_x, std::int64_t n, T x_end,
                                                    cudaStream_t stream = nullptr,
                                                    const single_pass_options& options = {}) {
  if (n < 0) return cudaErrorInvalidValue;
  return solve_linear_recurrence<Policy>(d_temp, temp_bytes, linrec_reverse(linrec_ab(d_a, d_b)), d_x, nullptr, 1, n,
                                         batch_layout::row_major, nullptr, x_end, stream, options);
}

// d_x_end: the state after the end of each sequence (device, `batch` values), or nullptr for 0.
template <class T, class Policy = default_policy>
[[nodiscard]] cudaError_t linear_recurrence_reverse_batched(void* d_temp, std::size_t& temp_bytes, const T* d_a,
                                                            const T* d_b, T* d_x, std::int64_t batch,
                                                            std::int64_t length, batch_layout layout,
                                                            const T* d_x_end = nullptr, cudaStream_t stream = nullptr,
                                                            const single_pass_options& options = {}) {
  return solve_linear_recurrence<Policy>(d_temp, temp_bytes, linrec_reverse(linrec_ab(d_a, d_b)), d_x, nullptr, batch,
                                         length, layout, d_x_end, T{}, stream, options);
}

// Channels-last and variable-length sequences from the end: d_x_end, the state after each
// sequence (one per sequence), or nullptr for 0; the varlen form's d_final is x at each
// sequence's first element (d_x_end for an empty one).
template <class T, class Policy = default_policy>
[[nodiscard]] cudaError_t linear_recurrence_reverse_channels_last(void* d_temp, std::size_t& temp_bytes, const T* d_a,
                                                                  const T* d_b, T* d_x, std::int64_t batch,
                                                                  std::int64_t length, std::int64_t channels,
                                                                  const T* d_x_end = nullptr,
                                                                  cudaStream_t stream = nullptr,
                                                                  const single_pass_options& options = {}) {
  return solve_linear_recurrence<Policy>(d_temp, temp_bytes, linrec_reverse(linrec_ab(d_a, d_b)), d_x, nullptr,
                                         linrec_channels_last{batch, length, channels}, d_x_end, T(0), stream,
                                         options);
}

template <class T, class Policy = default_policy>
[[nodiscard]] cudaError_t linear_recurrence_reverse_varlen(void* d_temp, std::size_t& temp_bytes, const T* d_a,
                                                           const T* d_b, T* d_x, T* d_final,
                                                           const std::int64_t* d_offsets, std::int64_t sequences,
                                                           std::int64_t n, const T* d_x_end = nullptr,
                                                           cudaStream_t stream = nullptr,
                                                           const single_pass_options& options = {}) {
  return solve_linear_recurrence<Policy>(d_temp, temp_bytes, linrec_reverse(linrec_ab(d_a, d_b)), d_x, d_final,
                                         linrec_varlen{d_offsets, sequences, n}, d_x_end, T(0), stream, options);
}

// ---- the backward pass of x = linear_recurrence(a, b, x0) (forward) ----
//
// Given d_grad_x = dL/dx (and x, the forward's result, and its x0), ONE fused pass solves
// the adjoint, the reverse recurrence g[i] = dL/dx[i] + a[i+1] g[i+1] (g[n-1] = dL/dx[n-1]),
// and writes
//   d_grad_b[i]  = dL/db[i] = g[i]
//   d_grad_a[i]  = dL/da[i] = g[i] x[i-1]          (x[-1] = x0)
//   d_grad_x0[k] = dL/dx0   = a[0] g[0] per sequence (0 where a[0] == 0: a reset cuts x0 off)
// Memory traffic: a, x and dL/dx read once, dL/da and dL/db written once (5 arrays; 20
// bytes per float element), plus x0 and dL/dx0 per sequence; interleaved batches of few
// long sequences read a and dL/dx twice (the column walks' segments). Any of d_grad_a,
// d_grad_b, d_grad_x0 may be nullptr (not written; without d_grad_a, x is not read and
// d_x may be nullptr). a == 0 is a reset here too: g[i] = dL/dx[i] whatever g[i+1] is, so
// the gradients of a sequence restarted by a = 0 never see what follows the restart.
// Deterministic, same accuracy bound as a solve (primitives/docs/linrec.md) for g, and
// one more rounding for dL/da and dL/dx0. In place: d_grad_b may be d_grad_x, d_grad_a may
// be d_x; no other overlaps. Policy: the tile shape of the backward pass
// (default_linrec_gradient_policy<T>; three arrays are staged per tile).

template <class T, class Policy = default_policy>
[[nodiscard]] cudaError_t linear_recurrence_backward(void* d_temp, std::size_t& temp_bytes, const T* d_a,
                                                     const T* d_x, const T* d_grad_x, T* d_grad_a, T* d_grad_b,
                                                     T* d_grad_x0, std::int64_t n, T x0,
                                                     cudaStream_t stream = nullptr,
                                                     const single_pass_options& options = {}) {
  if (n < 0) return cudaErrorInvalidValue;
  return linrec_detail::backward<Policy>(d_temp, temp_bytes, d_a, d_x, d_grad_x, d_grad_a, d_grad_b, d_grad_x0, 1, n,
                                         batch_layout::row_major, static_cast<const T*>(nullptr), x0, stream, options);
}

// d_x0: the forward's initial states (device, `batch` values), or nullptr for 0;
// d_grad_x0: `batch` values, or nullptr.
template <class T, class Policy = default_policy>
[[nodiscard]] cudaError_t linear_recurrence_backward_batched(void* d_temp, std::size_t& temp_bytes, const T* d_a,
                                                             const T* d_x, const T* d_grad_x, T* d_grad_a,
                                                             T* d_grad_b, T* d_grad_x0, std::int64_t batch,
                                                             std::int64_t length, batch_layout layout,
                                                             const T* d_x0 = nullptr, cudaStream_t stream = nullptr,
                                                             const single_pass_options& options = {}) {
  return linrec_detail::backward<Policy>(d_temp, temp_bytes, d_a, d_x, d_grad_x, d_grad_a, d_grad_b, d_grad_x0, batch,
                                         length, layout, d_x0, T{}, stream, options);
}

// Channels-last [batch, length, channels] (d_x0, d_grad_x0: one per sequence, b * channels + c).
template <class T, class Policy = default_policy>
[[nodiscard]] cudaError_t linear_recurrence_backward_channels_last(
    void* d_temp, std::size_t& temp_bytes, const T* d_a, const T* d_x, const T* d_grad_x, T* d_grad_a, T* d_grad_b,
    T* d_grad_x0, std::int64_t batch, std::int64_t length, std::int64_t channels, const T* d_x0 = nullptr,
    cudaStream_t stream = nullptr, const single_pass_options& options = {}) {
  return linrec_detail::backward<Policy>(d_temp, temp_bytes, d_a, d_x, d_grad_x, d_grad_a, d_grad_b, d_grad_x0,
                                         linrec_channels_last{batch, length, channels}, d_x0, stream, options);
}

// Variable-length sequences (linrec_varlen): the adjoint restarts at each sequence's last
// element; dL/da at each sequence's first element is g x0[s], dL/dx0[s] = a[first] g[first]
// (0 for an empty sequence). One single-pass scan of all n elements, as the forward.
template <class T, class Policy = default_policy>
[[nodiscard]] cudaError_t linear_recurrence_backward_varlen(
    void* d_temp, std::size_t& temp_bytes, const T* d_a, const T* d_x, const T* d_grad_x, T* d_grad_a, T* d_grad_b,
    T* d_grad_x0, const std::int64_t* d_offsets, std::int64_t sequences, std::int64_t n, const T* d_x0 = nullptr,
    cudaStream_t stream = nullptr, const single_pass_options& options = {}) {
  return linrec_detail::backward<Policy>(d_temp, temp_bytes, d_a, d_x, d_grad_x, d_grad_a, d_grad_b, d_grad_x0,
                                         linrec_varlen{d_offsets, sequences, n}, d_x0, stream, options);
}

// ---- v[i] = (1 - lambda[i]) v[i-1] + lambda[i] u[i] ----

template <class T, class Policy = default_policy>
[[nodiscard]] cudaError_t linear_recurrence_lambda(void* d_temp, std::size_t& temp_bytes, const T* d_lambda,
                                                   const T* d_u, T* d_v, std::int64_t n, T v0,
                                                   cudaStream_t stream = nullptr,
                                                   const single_pass_options& options = {}) {
  if (n < 0) return cudaErrorInvalidValue;
  return solve_linear_recurrence<Policy>(d_temp, temp_bytes, linrec_lambda(d_lambda, d_u), d_v, nullptr, 1, n,
                                         batch_layout::row_major, nullptr, v0, stream, options);
}

template <class T, class Policy = default_policy>
[[nodiscard]] cudaError_t linear_recurrence_lambda_batched(void* d_temp, std::size_t& temp_bytes, const T* d_lambda,
                                                           const T* d_u, T* d_v, std::int64_t batch,
                                                           std::int64_t length, batch_layout layout,
                                                           const T* d_v0 = nullptr, cudaStream_t stream = nullptr,
                                                           const single_pass_options& options = {}) {
  return solve_linear_recurrence<Policy>(d_temp, temp_bytes, linrec_lambda(d_lambda, d_u), d_v, nullptr, batch,
                                         length, layout, d_v0, T{}, stream, options);
}

// ---- y[i] = (1 - alpha) y[i-1] + alpha s[i] ----

template <class T, class Policy = default_policy>
[[nodiscard]] cudaError_t exponential_moving_average(void* d_temp, std::size_t& temp_bytes, const T* d_s, T* d_y,
                                                     std::int64_t n, T alpha, T y0, cudaStream_t stream = nullptr,
                                                     const single_pass_options& options = {}) {
  if (n < 0) return cudaErrorInvalidValue;
  return solve_linear_recurrence<Policy>(d_temp, temp_bytes, linrec_ema(d_s, alpha), d_y, nullptr, 1, n,
                                         batch_layout::row_major, nullptr, y0, stream, options);
}

template <class T, class Policy = default_policy>
[[nodiscard]] cudaError_t exponential_moving_average_batched(void* d_temp, std::size_t& temp_bytes, const T* d_s,
                                                             T* d_y, std::int64_t batch, std::int64_t length,
                                                             batch_layout layout, T alpha, const T* d_y0 = nullptr,
                                                             cudaStream_t stream = nullptr,
                                                             const single_pass_options& options = {}) {
  return solve_linear_recurrence<Policy>(d_temp, temp_bytes, linrec_ema(d_s, alpha), d_y, nullptr, batch, length,
                                         layout, d_y0, T{}, stream, options);
}

// ---- final states only: *d_final = x[n-1] (x0 when n == 0) ----

template <class T, class Policy = default_policy>
[[nodiscard]] cudaError_t linear_recurrence_final(void* d_temp, std::size_t& temp_bytes, const T* d_a, const T* d_b,
                                                  T* d_final, std::int64_t n, T x0, cudaStream_t stream = nullptr,
                                                  const single_pass_options& options = {}) {
  if (n < 0) return cudaErrorInvalidValue;
  return solve_linear_recurrence<Policy>(d_temp, temp_bytes, linrec_ab(d_a, d_b), nullptr, d_final, 1, n,
                                         batch_layout::row_major, nullptr, x0, stream, options);
}

// d_final[k] = the last state of sequence k (its initial state when length == 0).
template <class T, class Policy = default_policy>
[[nodiscard]] cudaError_t linear_recurrence_final_batched(void* d_temp, std::size_t& temp_bytes, const T* d_a,
                                                          const T* d_b, T* d_final, std::int64_t batch,
                                                          std::int64_t length, batch_layout layout,
                                                          const T* d_x0 = nullptr, cudaStream_t stream = nullptr,
                                                          const single_pass_options& options = {}) {
  return solve_linear_recurrence<Policy>(d_temp, temp_bytes, linrec_ab(d_a, d_b), nullptr, d_final, batch, length,
                                         layout, d_x0, T{}, stream, options);
}

// ---- length-checked forms: cudaErrorInvalidValue when the spans differ in length ----

template <class T, class Policy = default_policy>
[[nodiscard]] cudaError_t linear_recurrence(void* d_temp, std::size_t& temp_bytes, std::span<const T> d_a,
                                            std::span<const T> d_b, std::span<T> d_x, T x0,
                                            cudaStream_t stream = nullptr, const single_pass_options& options = {}) {
  if (d_a.size() != d_b.size() || d_a.size() != d_x.size()) return cudaErrorInvalidValue;
  return linear_recurrence<T, Policy>(d_temp, temp_bytes, d_a.data(), d_b.data(), d_x.data(),
                                      static_cast<std::int64_t>(d_a.size()), x0, stream, options);
}

template <class T, class Policy = default_policy>
[[nodiscard]] cudaError_t linear_recurrence_reverse(void* d_temp, std::size_t& temp_bytes, std::span<const T> d_a,
                                                    std::span<const T> d_b, std::span<T> d_x, T x_end,
                                                    cudaStream_t stream = nullptr,
                                                    const single_pass_options& options = {}) {
  if (d_a.size() != d_b.size() || d_a.size() != d_x.size()) return cudaErrorInvalidValue;
  return linear_recurrence_reverse<T, Policy>(d_temp, temp_bytes, d_a.data(), d_b.data(), d_x.data(),
                                              static_cast<std::int64_t>(d_a.size()), x_end, stream, options);
}

template <class T, class Policy = default_policy>
[[nodiscard]] cudaError_t linear_recurrence_lambda(void* d_temp, std::size_t& temp_bytes, std::span<const T> d_lambda,
                                                   std::span<const T> d_u, std::span<T> d_v, T v0,
                                                   cudaStream_t stream = nullptr,
                                                   const single_pass_options& options = {}) {
  if (d_lambda.size() != d_u.size() || d_lambda.size() != d_v.size()) return cudaErrorInvalidValue;
  return linear_recurrence_lambda<T, Policy>(d_temp, temp_bytes, d_lambda.data(), d_u.data(), d_v.data(),
                                             static_cast<std::int64_t>(d_lambda.size()), v0, stream, options);
}

}  // namespace scanlab
