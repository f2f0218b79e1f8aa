// scanlab_py::linear_recurrence and its backward pass, float and double.
#include "ops.hpp"

#include <scanlab/algorithms/linrec.cuh>

namespace scanlab_py {
namespace {

template <class T>
cudaError_t forward_typed(const void* d_a, const void* d_b, void* d_x, const void* d_x0s, double x0, std::int64_t batch,
                          std::int64_t length, bool reverse, void* d_temp, std::size_t& temp_bytes,
                          cudaStream_t stream) {
  const auto src = scanlab::linrec_ab(static_cast<const T*>(d_a), static_cast<const T*>(d_b));
  T* x = static_cast<T*>(d_x);
  const T* x0s = static_cast<const T*>(d_x0s);
  if (reverse) {
    return scanlab::solve_linear_recurrence(d_temp, temp_bytes, scanlab::linrec_reverse(src), x, nullptr, batch,
                                            length, scanlab::batch_layout::row_major, x0s, static_cast<T>(x0), stream);
  }
  return scanlab::solve_linear_recurrence(d_temp, temp_bytes, src, x, nullptr, batch, length,
                                          scanlab::batch_layout::row_major, x0s, static_cast<T>(x0), stream);
}

template <class T>
cudaError_t backward_typed(const void* d_a, const void* d_x, const void* d_grad_x, void* d_grad_a, void* d_grad_b,
                           void* d_grad_x0, const void* d_x0s, std::int64_t batch, std::int64_t length, void* d_temp,
                           std::size_t& temp_bytes, cudaStream_t stream) {
  return scanlab::linear_recurrence_backward_batched(
      d_temp, temp_bytes, static_cast<const T*>(d_a), static_cast<const T*>(d_x), static_cast<const T*>(d_grad_x),
      static_cast<T*>(d_grad_a), static_cast<T*>(d_grad_b), static_cast<T*>(d_grad_x0), batch, length,
      scanlab::batch_layout::row_major, static_cast<const T*>(d_x0s), stream);
}

}  // namespace

cudaError_t linear_recurrence(dtype t, const void* d_a, const void* d_b, void* d_x, const void* d_x0s, double x0,
                              std::int64_t batch, std::int64_t length, bool reverse, void* d_temp,
                              std::size_t& temp_bytes, cudaStream_t stream) {
  switch (t) {
    case dtype::float32:
      return forward_typed<float>(d_a, d_b, d_x, d_x0s, x0, batch, length, reverse, d_temp, temp_bytes, stream);
    case dtype::float64:
      return forward_typed<double>(d_a, d_b, d_x, d_x0s, x0, batch, length, reverse, d_temp, temp_bytes, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t linear_recurrence_backward(dtype t, const void* d_a, const void* d_x, const void* d_grad_x,
                                       void* d_grad_a, void* d_grad_b, void* d_grad_x0, const void* d_x0s,
                                       std::int64_t batch, std::int64_t length, void* d_temp,
                                       std::size_t& temp_bytes, cudaStream_t stream) {
  switch (t) {
    case dtype::float32:
      return backward_typed<float>(d_a, d_x, d_grad_x, d_grad_a, d_grad_b, d_grad_x0, d_x0s, batch, length, d_temp,
                                   temp_bytes, stream);
    case dtype::float64:
      return backward_typed<double>(d_a, d_x, d_grad_x, d_grad_a, d_grad_b, d_grad_x0, d_x0s, batch, length, d_temp,
                                    temp_bytes, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace scanlab_py
