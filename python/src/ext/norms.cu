// scanlab_py::norm: scanlab's fused norms (scanlab/algorithms/norms.cuh): dot, rms and the
// Euclidean norm of float32 or float64 data, accumulated in the data's type or, for float32
// data, in float64 (three accumulations, each three kernels' worth of transform_reduce).
#include "typed.cuh"

#include <scanlab/algorithms/norms.cuh>

namespace scanlab_py {
namespace {

template <class T, class Acc>
cudaError_t norm_typed(norm_kind kind, const void* d_x, const void* d_y, void* d_out, std::int64_t n, void* d_temp,
                       std::size_t& temp_bytes, cudaStream_t stream) {
  const auto* x = static_cast<const T*>(d_x);
  auto* out = static_cast<Acc*>(d_out);
  switch (kind) {
    case norm_kind::dot: return scanlab::dot(d_temp, temp_bytes, x, static_cast<const T*>(d_y), out, n, stream);
    case norm_kind::rms: return scanlab::rms(d_temp, temp_bytes, x, out, n, stream);
    case norm_kind::l2: return scanlab::l2_norm(d_temp, temp_bytes, x, out, n, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t norm(norm_kind kind, dtype t, dtype acc, const void* d_x, const void* d_y, void* d_out, std::int64_t n,
                 void* d_temp, std::size_t& temp_bytes, cudaStream_t stream) {
  if (t == dtype::float32 && acc == dtype::float32) {
    return norm_typed<float, float>(kind, d_x, d_y, d_out, n, d_temp, temp_bytes, stream);
  }
  if (t == dtype::float32 && acc == dtype::float64) {
    return norm_typed<float, double>(kind, d_x, d_y, d_out, n, d_temp, temp_bytes, stream);
  }
  if (t == dtype::float64 && acc == dtype::float64) {
    return norm_typed<double, double>(kind, d_x, d_y, d_out, n, d_temp, temp_bytes, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace scanlab_py
