// scanlab/algorithms/norms.cuh: dot product, sum of squares, RMS, Euclidean norm and
// RMS of a difference, each in one fused, deterministic pass over the data: each is one
// scanlab::transform_reduce (a transform, a sum, an epilogue on the device; the kinds are
// in norms_kernels.cuh).
//
//   float* d_out;   // accumulate in float (or double* d_out: accumulate float data in double)
//   std::size_t temp_bytes = 0;
//   SCANLAB_CHECK(scanlab::dot(nullptr, temp_bytes, d_x, d_y, d_out, n, stream));
//   ... allocate temp_bytes at d_temp ...
//   SCANLAB_CHECK(scanlab::dot(d_temp, temp_bytes, d_x, d_y, d_out, n, stream));
//
// Entry points (T = float or double data; Acc = float or double, at least as wide as T):
//   dot(x, y)          sum of x[i] * y[i]
//   sum_squares(x)     sum of x[i]^2 (unscaled: it overflows when the true value does)
//   l2_norm(x)         sqrt(sum of x[i]^2), scaled: never overflows or underflows unless
//                      the result itself does (see below)
//   rms(x)             sqrt(sum of x[i]^2 / n), scaled like l2_norm
//   rms_diff(x, y)     rms(x - y) without forming x - y in memory: the "RMS change" of an
//                      iteration; the difference is formed in Acc, scaled like l2_norm
//
// Guarantees, for every entry point here:
//  - One pass: each input element is read once (dot and rms_diff read x and y once each),
//    with 16-byte vector loads when x and y have the same address modulo 16 (always true
//    for cudaMalloc'd arrays), element loads otherwise.
//  - Accumulator: the result type. Pass a double* d_out for float data to accumulate in
//    double: products and squares of floats are then exact, and only the sums round.
//    Each element is converted to Acc before anything else is done with it.
//  - Order: the reduction engine's fixed trees (device/reduce_kernels.cuh): per-thread
//    sums of short sequential chains of tree-summed groups (the 16 floats of one array, or
//    8 of each of two, that a thread loads per iteration), then block and grid trees. The
//    same input at the same addresses on the same device gives the same bits on every
//    run. No atomics. The bits may differ from a CPU loop, from CUB or cuBLAS, and across
//    GPU models.
//  - l2_norm, rms and rms_diff scale as the reference BLAS nrm2 does since LAPACK 3.10
//    (Blue's algorithm, Anderson 2017): three sums of squares (values below 2^-63, above
//    2^43 and in between, for float) each scaled by a constant power of two, combined only
//    at the end. One pass and no division per element (a two-pass max-then-sum would read
//    the data twice; a running (scale, ssq) pair divides per element). A 16-byte vector of
//    values all in the middle range takes a plain tree of squares; only a vector holding a
//    huge, tiny, Inf or NaN value takes the careful path. With Acc wide enough that no square of the
//    data can overflow or underflow (float data, double accumulator) it is a plain sum of
//    squares. Results are correct to a few ulps of Acc down to subnormal inputs and up to
//    the overflow threshold (inputs of up to 2^40 elements).
//  - n == 0: dot, sum_squares and l2_norm write 0; rms and rms_diff write NaN (the mean of
//    nothing is undefined; NaN also makes a convergence test "rms < tol" fail rather than
//    pass on empty data).
//  - NaN and Inf propagate: a NaN anywhere gives NaN; otherwise an Inf gives Inf from
//    l2_norm, rms and rms_diff, and whatever IEEE arithmetic gives from dot and
//    sum_squares (Inf * 0 is NaN, Inf - Inf is NaN).
//  - Lengths: the pointer forms take one n for both inputs; matching lengths are the
//    caller's responsibility. The span forms below check them (cudaErrorInvalidValue).
//  - Temp storage: CUB's two-phase protocol. With d_temp == nullptr only temp_bytes is set
//    (at least 1); otherwise d_temp must hold temp_bytes bytes aligned to 8 (cudaMalloc's
//    256 is plenty) and not be in use by another call in flight. No initialisation
//    needed. temp_bytes depends on n, the types and the current device.
//  - d_out must not overlap the inputs. Asynchronous: everything is enqueued on `stream`;
//    returns the first error of a CUDA call or launch (cudaErrorInvalidValue for n < 0 or
//    too little or misaligned temp storage). Never throws.
//  - Launches: scanlab::transform_reduce's, so one kernel: up to 16 KB of input (4096
//    floats of one array, 2048 of each of two) the one-round tile kernel, up to 128 KB one
//    looping block, beyond that one cooperative launch of one resident wave that ends in
//    a grid-wide barrier (see reduce.cuh for why), with the same two-launch fallback on
//    devices without cooperative launch and where the grid is refused. The epilogue
//    (square root, mean) runs in the thread that writes the result.
#pragma once

#include <scanlab/algorithms/norms_kernels.cuh>
#include <scanlab/error.hpp>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace scanlab {

// *d_out = sum of d_x[i] * d_y[i], i < n, accumulated in Acc.
template <class T, class Acc>
[[nodiscard]] cudaError_t dot(void* d_temp, std::size_t& temp_bytes, const T* d_x, const T* d_y, Acc* d_out,
                              std::int64_t n, cudaStream_t stream = nullptr) {
  return detail::norms::run_kind<detail::norms::dot_kind<T, Acc>>(d_temp, temp_bytes, d_x, d_y, d_out, n, stream);
}

// *d_out = sum of d_x[i]^2, accumulated in Acc.
template <class T, class Acc>
[[nodiscard]] cudaError_t sum_squares(void* d_temp, std::size_t& temp_bytes, const T* d_x, Acc* d_out,
                                      std::int64_t n, cudaStream_t stream = nullptr) {
  using kind = detail::norms::sum_squares_kind<T, Acc>;
  return detail::norms::run_kind<kind>(d_temp, temp_bytes, d_x, d_x, d_out, n, stream);
}

// *d_out = sqrt(sum of d_x[i]^2), scaled (no spurious overflow or underflow).
template <class T, class Acc>
[[nodiscard]] cudaError_t l2_norm(void* d_temp, std::size_t& temp_bytes, const T* d_x, Acc* d_out, std::int64_t n,
                                  cudaStream_t stream = nullptr) {
  return detail::norms::run_kind<detail::norms::l2_norm_kind<T, Acc>>(d_temp, temp_bytes, d_x, d_x, d_out, n, stream);
}

// *d_out = sqrt(sum of d_x[i]^2 / n), scaled; NaN for n == 0.
template <class T, class Acc>
[[nodiscard]] cudaError_t rms(void* d_temp, std::size_t& temp_bytes, const T* d_x, Acc* d_out, std::int64_t n,
                              cudaStream_t stream = nullptr) {
  return detail::norms::run_kind<detail::norms::rms_kind<T, Acc>>(d_temp, temp_bytes, d_x, d_x, d_out, n, stream);
}

// *d_out = sqrt(sum of (d_x[i] - d_y[i])^2 / n), scaled, the difference formed in Acc;
// NaN for n == 0.
template <class T, class Acc>
[[nodiscard]] cudaError_t rms_diff(void* d_temp, std::size_t& temp_bytes, const T* d_x, const T* d_y, Acc* d_out,
                                   std::int64_t n, cudaStream_t stream = nullptr) {
  return detail::norms::run_kind<detail::norms::rms_diff_kind<T, Acc>>(d_temp, temp_bytes, d_x, d_y, d_out, n, stream);
}

// ---- Length-checked forms -----------------------------------------------------------
// The same with device spans: cudaErrorInvalidValue, before anything is enqueued, when
// the two inputs differ in length (n is their common length).

template <class T, class Acc>
[[nodiscard]] cudaError_t dot(void* d_temp, std::size_t& temp_bytes, std::span<const T> d_x, std::span<const T> d_y,
                              Acc* d_out, cudaStream_t stream = nullptr) {
  if (d_x.size() != d_y.size()) return cudaErrorInvalidValue;
  return dot(d_temp, temp_bytes, d_x.data(), d_y.data(), d_out, static_cast<std::int64_t>(d_x.size()), stream);
}

template <class T, class Acc>
[[nodiscard]] cudaError_t rms_diff(void* d_temp, std::size_t& temp_bytes, std::span<const T> d_x,
                                   std::span<const T> d_y, Acc* d_out, cudaStream_t stream = nullptr) {
  if (d_x.size() != d_y.size()) return cudaErrorInvalidValue;
  return rms_diff(d_temp, temp_bytes, d_x.data(), d_y.data(), d_out, static_cast<std::int64_t>(d_x.size()), stream);
}

}  // namespace scanlab
