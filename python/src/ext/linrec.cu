// scanlab_py::linear_recurrence and its backward pass, float and double, and float16 and
// bfloat16 storage (computed in float32), on every shape of linrec.cuh: [batch, length]
// row-major or interleaved, channels-last, variable lengths.
#include "ops.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <scanlab/algorithms/linrec.cuh>

#include <type_traits>

namespace scanlab_py {
namespace {

// The batch layout of a row-major or interleaved shape.
scanlab::batch_layout batch_layout_of(const recurrence_shape& shape) {
  return shape.layout == recurrence_layout::row_major ? scanlab::batch_layout::row_major
                                                      : scanlab::batch_layout::interleaved;
}

// One solve of `src` on `shape`: the general entry point of each shape.
template <class T, class Source>
cudaError_t solve_on(const Source& src, T* x, T* final_states, const T* x0s, T x0, const recurrence_shape& shape,
                     void* d_temp, std::size_t& temp_bytes, cudaStream_t stream) {
  switch (shape.layout) {
    case recurrence_layout::row_major:
    case recurrence_layout::interleaved:
      return scanlab::solve_linear_recurrence(d_temp, temp_bytes, src, x, final_states, shape.batch, shape.length,
                                              batch_layout_of(shape), x0s, x0, stream);
    case recurrence_layout::channels_last:
      return scanlab::solve_linear_recurrence(d_temp, temp_bytes, src, x, final_states,
                                              scanlab::linrec_channels_last{shape.batch, shape.length, shape.channels},
                                              x0s, x0, stream);
    case recurrence_layout::varlen:
      return scanlab::solve_linear_recurrence(d_temp, temp_bytes, src, x, final_states,
                                              scanlab::linrec_varlen{shape.d_offsets, shape.batch, shape.length}, x0s,
                                              x0, stream);
  }
  return cudaErrorInvalidValue;
}

// A host number as T: through float for the 16-bit types (their conversions from float are
// the ones both headers have, rounding to nearest even).
template <class T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>) return T(static_cast<float>(v));
  else return static_cast<T>(v);
}

// f(T{}) for the element types of the recurrence (cudaErrorInvalidValue for the others).
template <class F>
cudaError_t visit_recurrence(dtype t, F&& f) {
  switch (t) {
    case dtype::float32: return f(float{});
    case dtype::float64: return f(double{});
    case dtype::float16: return f(__half{});
    case dtype::bfloat16: return f(__nv_bfloat16{});
    default: return cudaErrorInvalidValue;
  }
}

template <class T>
cudaError_t forward_typed(const void* d_a, const void* d_b, void* d_x, void* d_final, const void* d_x0s, double x0,
                          const recurrence_shape& shape, bool reverse, void* d_temp, std::size_t& temp_bytes,
                          cudaStream_t stream) {
  const auto src = scanlab::linrec_ab(static_cast<const T*>(d_a), static_cast<const T*>(d_b));
  T* x = static_cast<T*>(d_x);
  T* final_states = static_cast<T*>(d_final);
  const T* x0s = static_cast<const T*>(d_x0s);
  if (reverse) {
    return solve_on<T>(scanlab::linrec_reverse(src), x, final_states, x0s, from_double<T>(x0), shape, d_temp,
                       temp_bytes, stream);
  }
  return solve_on<T>(src, x, final_states, x0s, from_double<T>(x0), shape, d_temp, temp_bytes, stream);
}

template <class T>
cudaError_t backward_typed(const void* d_a, const void* d_x, const void* d_grad_x, void* d_grad_a, void* d_grad_b,
                           void* d_grad_x0, const void* d_x0s, const recurrence_shape& shape, void* d_temp,
                           std::size_t& temp_bytes, cudaStream_t stream) {
  const T* a = static_cast<const T*>(d_a);
  const T* x = static_cast<const T*>(d_x);
  const T* grad_x = static_cast<const T*>(d_grad_x);
  T* grad_a = static_cast<T*>(d_grad_a);
  T* grad_b = static_cast<T*>(d_grad_b);
  T* grad_x0 = static_cast<T*>(d_grad_x0);
  const T* x0s = static_cast<const T*>(d_x0s);
  switch (shape.layout) {
    case recurrence_layout::row_major:
    case recurrence_layout::interleaved:
      return scanlab::linear_recurrence_backward_batched(d_temp, temp_bytes, a, x, grad_x, grad_a, grad_b, grad_x0,
                                                         shape.batch, shape.length, batch_layout_of(shape), x0s,
                                                         stream);
    case recurrence_layout::channels_last:
      return scanlab::linear_recurrence_backward_channels_last(d_temp, temp_bytes, a, x, grad_x, grad_a, grad_b,
                                                               grad_x0, shape.batch, shape.length, shape.channels, x0s,
                                                               stream);
    case recurrence_layout::varlen:
      return scanlab::linear_recurrence_backward_varlen(d_temp, temp_bytes, a, x, grad_x, grad_a, grad_b, grad_x0,
                                                        shape.d_offsets, shape.batch, shape.length, x0s, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t linear_recurrence(dtype t, const void* d_a, const void* d_b, void* d_x, void* d_final, const void* d_x0s,
                              double x0, const recurrence_shape& shape, bool reverse, void* d_temp,
                              std::size_t& temp_bytes, cudaStream_t stream) {
  return visit_recurrence(t, [&](auto v) {
    return forward_typed<decltype(v)>(d_a, d_b, d_x, d_final, d_x0s, x0, shape, reverse, d_temp, temp_bytes, stream);
  });
}

cudaError_t linear_recurrence_backward(dtype t, const void* d_a, const void* d_x, const void* d_grad_x,
                                       void* d_grad_a, void* d_grad_b, void* d_grad_x0, const void* d_x0s,
                                       const recurrence_shape& shape, void* d_temp, std::size_t& temp_bytes,
                                       cudaStream_t stream) {
  return visit_recurrence(t, [&](auto v) {
    return backward_typed<decltype(v)>(d_a, d_x, d_grad_x, d_grad_a, d_grad_b, d_grad_x0, d_x0s, shape, d_temp,
                                       temp_bytes, stream);
  });
}

}  // namespace scanlab_py
