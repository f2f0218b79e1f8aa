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
// Entry points (T = float or double):
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
//    (the canonical look-back of device/tile_state.cuh; no atomics in the arithmetic).
//  - In place: d_x may be d_a or d_b (each tile is read before it is written, by the same
//    block). Other overlaps are not allowed.
//  - Alignment: 16-byte aligned arrays (cudaMalloc's) get 16-byte vector loads and stores;
//    any arrays aligned to sizeof(T) work (element accesses, same results).
//  - Sizes: 64-bit; n == 0 (or batch == 0 or length == 0) writes no x; the final-state forms
//    then write x0 for every sequence (an empty sequence ends in its initial state).
//    n < 0, or batch * length overflowing int64, is cudaErrorInvalidValue.
//  - Initial states: the batched forms take d_x0 (device, `batch` values), or nullptr for 0.
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
//    of dynamic shared memory per block (set once per device on first use). Interleaved batches:
//    one kernel when there are at least 2^17 sequences; otherwise three (segment maps,
//    the row-major solve of the segment maps, the segments again: a and b read twice).
#pragma once

#include <scanlab/algorithms/linrec_kernels.cuh>
#include <scanlab/error.hpp>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace scanlab {

enum class batch_layout {
  row_major,    // [batch, length]: sequence k is a[k * length + t]
  interleaved,  // [length, batch]: sequence k is a[t * batch + k]
};

namespace linrec_detail {

template <class Source, class T>
[[nodiscard]] cudaError_t solve(void* d_temp, std::size_t& temp_bytes, Source src, T* d_x, T* d_final,
                                std::int64_t batch, std::int64_t length, batch_layout layout, const T* d_x0s, T x0,
                                cudaStream_t stream) {
  using policy = default_linrec_policy<T>;
  if (layout == batch_layout::interleaved) {
    return dispatch_columns<policy>(d_temp, temp_bytes, src, d_x, d_final, batch, length, d_x0s, x0, stream);
  }
  return dispatch_rows<policy>(d_temp, temp_bytes, src, d_x, d_final, batch, length, d_x0s, x0, stream);
}

}  // namespace linrec_detail

// ---- x[i] = a[i] x[i-1] + b[i] ----

template <class T>
[[nodiscard]] cudaError_t linear_recurrence(void* d_temp, std::size_t& temp_bytes, const T* d_a, const T* d_b, T* d_x,
                                            std::int64_t n, T x0, cudaStream_t stream = nullptr) {
  if (n < 0) return cudaErrorInvalidValue;
  return linrec_detail::solve(d_temp, temp_bytes, linrec_detail::ab_source<T>{d_a, d_b}, d_x, static_cast<T*>(nullptr),
                              std::int64_t{1}, n, batch_layout::row_major, static_cast<const T*>(nullptr), x0, stream);
}

template <class T>
[[nodiscard]] cudaError_t linear_recurrence_batched(void* d_temp, std::size_t& temp_bytes, const T* d_a,
                                                    const T* d_b, T* d_x, std::int64_t batch, std::int64_t length,
                                                    batch_layout layout, const T* d_x0 = nullptr,
                                                    cudaStream_t stream = nullptr) {
  return linrec_detail::solve(d_temp, temp_bytes, linrec_detail::ab_source<T>{d_a, d_b}, d_x, static_cast<T*>(nullptr),
                              batch, length, layout, d_x0, T(0), stream);
}

// ---- v[i] = (1 - lambda[i]) v[i-1] + lambda[i] u[i] ----

template <class T>
[[nodiscard]] cudaError_t linear_recurrence_lambda(void* d_temp, std::size_t& temp_bytes, const T* d_lambda,
                                                   const T* d_u, T* d_v, std::int64_t n, T v0,
                                                   cudaStream_t stream = nullptr) {
  if (n < 0) return cudaErrorInvalidValue;
  return linrec_detail::solve(d_temp, temp_bytes, linrec_detail::lambda_source<T>{d_lambda, d_u}, d_v,
                              static_cast<T*>(nullptr), std::int64_t{1}, n, batch_layout::row_major,
                              static_cast<const T*>(nullptr), v0, stream);
}

template <class T>
[[nodiscard]] cudaError_t linear_recurrence_lambda_batched(void* d_temp, std::size_t& temp_bytes, const T* d_lambda,
                                                           const T* d_u, T* d_v, std::int64_t batch,
                                                           std::int64_t length, batch_layout layout,
                                                           const T* d_v0 = nullptr, cudaStream_t stream = nullptr) {
  return linrec_detail::solve(d_temp, temp_bytes, linrec_detail::lambda_source<T>{d_lambda, d_u}, d_v,
                              static_cast<T*>(nullptr), batch, length, layout, d_v0, T(0), stream);
}

// ---- y[i] = (1 - alpha) y[i-1] + alpha s[i] ----

template <class T>
[[nodiscard]] cudaError_t exponential_moving_average(void* d_temp, std::size_t& temp_bytes, const T* d_s, T* d_y,
                                                     std::int64_t n, T alpha, T y0, cudaStream_t stream = nullptr) {
  if (n < 0) return cudaErrorInvalidValue;
  return linrec_detail::solve(d_temp, temp_bytes, linrec_detail::ema_source<T>{d_s, nullptr, alpha, T(1) - alpha},
                              d_y, static_cast<T*>(nullptr), std::int64_t{1}, n, batch_layout::row_major,
                              static_cast<const T*>(nullptr), y0, stream);
}

template <class T>
[[nodiscard]] cudaError_t exponential_moving_average_batched(void* d_temp, std::size_t& temp_bytes, const T* d_s,
                                                             T* d_y, std::int64_t batch, std::int64_t length,
                                                             batch_layout layout, T alpha, const T* d_y0 = nullptr,
                                                             cudaStream_t stream = nullptr) {
  return linrec_detail::solve(d_temp, temp_bytes, linrec_detail::ema_source<T>{d_s, nullptr, alpha, T(1) - alpha},
                              d_y, static_cast<T*>(nullptr), batch, length, layout, d_y0, T(0), stream);
}

// ---- final states only: *d_final = x[n-1] (x0 when n == 0) ----

template <class T>
[[nodiscard]] cudaError_t linear_recurrence_final(void* d_temp, std::size_t& temp_bytes, const T* d_a, const T* d_b,
                                                  T* d_final, std::int64_t n, T x0, cudaStream_t stream = nullptr) {
  if (n < 0) return cudaErrorInvalidValue;
  return linrec_detail::solve(d_temp, temp_bytes, linrec_detail::ab_source<T>{d_a, d_b}, static_cast<T*>(nullptr),
                              d_final, std::int64_t{1}, n, batch_layout::row_major, static_cast<const T*>(nullptr), x0,
                              stream);
}

// d_final[k] = the last state of sequence k (its initial state when length == 0).
template <class T>
[[nodiscard]] cudaError_t linear_recurrence_final_batched(void* d_temp, std::size_t& temp_bytes, const T* d_a,
                                                          const T* d_b, T* d_final, std::int64_t batch,
                                                          std::int64_t length, batch_layout layout,
                                                          const T* d_x0 = nullptr, cudaStream_t stream = nullptr) {
  return linrec_detail::solve(d_temp, temp_bytes, linrec_detail::ab_source<T>{d_a, d_b}, static_cast<T*>(nullptr),
                              d_final, batch, length, layout, d_x0, T(0), stream);
}

// ---- length-checked forms: cudaErrorInvalidValue when the spans differ in length ----

template <class T>
[[nodiscard]] cudaError_t linear_recurrence(void* d_temp, std::size_t& temp_bytes, std::span<const T> d_a,
                                            std::span<const T> d_b, std::span<T> d_x, T x0,
                                            cudaStream_t stream = nullptr) {
  if (d_a.size() != d_b.size() || d_a.size() != d_x.size()) return cudaErrorInvalidValue;
  return linear_recurrence(d_temp, temp_bytes, d_a.data(), d_b.data(), d_x.data(),
                           static_cast<std::int64_t>(d_a.size()), x0, stream);
}

template <class T>
[[nodiscard]] cudaError_t linear_recurrence_lambda(void* d_temp, std::size_t& temp_bytes, std::span<const T> d_lambda,
                                                   std::span<const T> d_u, std::span<T> d_v, T v0,
                                                   cudaStream_t stream = nullptr) {
  if (d_lambda.size() != d_u.size() || d_lambda.size() != d_v.size()) return cudaErrorInvalidValue;
  return linear_recurrence_lambda(d_temp, temp_bytes, d_lambda.data(), d_u.data(), d_v.data(),
                                  static_cast<std::int64_t>(d_lambda.size()), v0, stream);
}

}  // namespace scanlab
