// The linear recurrence's dispatchers at the default tile shapes, instantiated once per
// element type (linrec_<type>.cu, the library scanlab_linrec_instances) and shared by
// scanlab-linrec and test_gpu_linrec: every kernel that solve_linear_recurrence, the named
// forms (forward, reverse; (a, b), and (lambda, u) and EMA in float and double; rows,
// columns, channels-last, offsets) and the backward pass launch with the default policy.
// Included before a call, this header declares them (extern template), so that translation
// unit compiles none of those kernels: it links them. Other policies (tuning variants,
// tests of a named policy) are instantiated where they are used, as before.
#pragma once

#include <scanlab/algorithms/linrec.cuh>
#include <scanlab/complex.hpp>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>

// The forward dispatchers of one source S (rows and look-back, offsets, columns).
#define SCANLAB_LINREC_FORWARD_INSTANCES(EXTERN, T, S) \
  EXTERN template cudaError_t dispatch_rows<default_linrec_policy<T>, default_linrec_rows_policy<T>, S, T>( \
      void*, std::size_t&, S, T*, T*, std::int64_t, std::int64_t, const T*, T, cudaStream_t, linrec_options); \
  EXTERN template cudaError_t dispatch_offsets<default_linrec_policy<T>, S, T>( \
      void*, std::size_t&, S, T*, T*, const std::int64_t*, std::int64_t, std::int64_t, const T*, T, cudaStream_t, \
      linrec_options); \
  EXTERN template cudaError_t dispatch_columns<default_linrec_policy<T>, S, T>( \
      void*, std::size_t&, S, T*, T*, std::int64_t, std::int64_t, const T*, T, cudaStream_t, linrec_options, \
      std::int64_t);

// The (lambda, u) and EMA forms in both directions: float and double only (the app and the
// tests run these forms in those types; each is another set of kernels per type to build).
#define SCANLAB_LINREC_FORM_INSTANCES(EXTERN, T) \
  SCANLAB_LINREC_FORWARD_INSTANCES(EXTERN, T, lambda_source<T>) \
  SCANLAB_LINREC_FORWARD_INSTANCES(EXTERN, T, ema_source<T>) \
  SCANLAB_LINREC_FORWARD_INSTANCES(EXTERN, T, reversed<lambda_source<T>>) \
  SCANLAB_LINREC_FORWARD_INSTANCES(EXTERN, T, reversed<ema_source<T>>)

// Every dispatcher of one element type: the (a, b) form in both directions, and the
// backward pass (rows and look-back, offsets, columns).
#define SCANLAB_LINREC_INSTANCES(EXTERN, T) \
  SCANLAB_LINREC_FORWARD_INSTANCES(EXTERN, T, ab_source<T>) \
  SCANLAB_LINREC_FORWARD_INSTANCES(EXTERN, T, reversed<ab_source<T>>) \
  EXTERN template cudaError_t \
  dispatch_rows<default_linrec_gradient_policy<T>, default_linrec_rows_gradient_policy<T>, gradient_source<T>, T>( \
      void*, std::size_t&, gradient_source<T>, T*, T*, std::int64_t, std::int64_t, const T*, T, cudaStream_t, \
      linrec_options); \
  EXTERN template cudaError_t dispatch_offsets<default_linrec_gradient_policy<T>, gradient_source<T>, T>( \
      void*, std::size_t&, gradient_source<T>, T*, T*, const std::int64_t*, std::int64_t, std::int64_t, const T*, T, \
      cudaStream_t, linrec_options); \
  EXTERN template cudaError_t dispatch_gradient_columns<default_linrec_policy<T>, T>( \
      void*, std::size_t&, const gradient_source<T>&, T*, std::int64_t, std::int64_t, const T*, T, cudaStream_t, \
      linrec_options, std::int64_t);

// The row-major solves of the segment maps of column batches cut into segments
// (segmented_columns), for a state type V: with the look-back shape for the rows too.
// The 16-bit types' are float's.
#define SCANLAB_LINREC_SEGMENT_INSTANCES(EXTERN, V) \
  EXTERN template cudaError_t dispatch_rows<default_linrec_policy<V>, default_linrec_policy<V>, ab_source<V>, V>( \
      void*, std::size_t&, ab_source<V>, V*, V*, std::int64_t, std::int64_t, const V*, V, cudaStream_t, \
      linrec_options); \
  EXTERN template cudaError_t \
  dispatch_rows<default_linrec_policy<V>, default_linrec_policy<V>, reversed<ab_source<V>>, V>( \
      void*, std::size_t&, reversed<ab_source<V>>, V*, V*, std::int64_t, std::int64_t, const V*, V, cudaStream_t, \
      linrec_options);

namespace scanlab::linrec_detail {
SCANLAB_LINREC_SEGMENT_INSTANCES(extern, float)
SCANLAB_LINREC_SEGMENT_INSTANCES(extern, double)
SCANLAB_LINREC_SEGMENT_INSTANCES(extern, scanlab::complex<float>)
SCANLAB_LINREC_SEGMENT_INSTANCES(extern, scanlab::complex<double>)
SCANLAB_LINREC_FORM_INSTANCES(extern, float)
SCANLAB_LINREC_FORM_INSTANCES(extern, double)
SCANLAB_LINREC_INSTANCES(extern, float)
SCANLAB_LINREC_INSTANCES(extern, double)
SCANLAB_LINREC_INSTANCES(extern, __half)
SCANLAB_LINREC_INSTANCES(extern, __nv_bfloat16)
SCANLAB_LINREC_INSTANCES(extern, scanlab::complex<float>)
SCANLAB_LINREC_INSTANCES(extern, scanlab::complex<double>)
}  // namespace scanlab::linrec_detail
