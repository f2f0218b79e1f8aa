// scanlab_py::quicksort: scanlab::quicksort (scanlab/algorithms/quicksort.cuh), keys only.
//
// Descending order costs no second set of quicksort kernels: the keys are mapped by an
// order-reversing involution (integers: ~x; floats: -x, NaNs left alone so that they stay
// last), sorted ascending in the output, and mapped back: two streaming passes more. The
// ascending sort itself instantiates four sets of kernels for six types (the library sorts
// float and double as ordered unsigned words).
#include "typed.cuh"

#include <scanlab/algorithms/quicksort.cuh>
#include <scanlab/detail/launch.cuh>
#include <scanlab/error.hpp>

#include <algorithm>

namespace scanlab_py {
namespace {

// An involution that reverses the order of everything but NaN.
template <class T>
__device__ __forceinline__ T reverse_order(T x) {
  if constexpr (std::is_floating_point_v<T>) return x != x ? x : -x;  // -x: the sign bit flipped, exactly
  else return static_cast<T>(~x);  // two's complement: ~x = -x - 1, strictly decreasing
}

// out[i] = reverse_order(in[i]); in place allowed.
template <class T>
__global__ void reverse_order_kernel(const T* in, T* out, std::int64_t n) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    out[i] = reverse_order(in[i]);
  }
}

template <class T>
cudaError_t quicksort_typed(const void* d_in, void* d_out, std::int64_t n, bool descending, void* d_temp,
                            std::size_t& temp_bytes, cudaStream_t stream) {
  const auto* in = static_cast<const T*>(d_in);
  auto* out = static_cast<T*>(d_out);
  if (!descending || d_temp == nullptr || n == 0) {
    return scanlab::quicksort(d_temp, temp_bytes, in, out, n, stream);
  }
  // Check the temp storage before writing anything (the library does the same).
  std::size_t needed = 0;
  SCANLAB_TRY(scanlab::quicksort(nullptr, needed, in, out, n, stream));
  if (temp_bytes < needed) return cudaErrorInvalidValue;
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((n + 255) / 256, 8192));
  SCANLAB_TRY(scanlab::detail::launch(reverse_order_kernel<T>, blocks, 256, 0, stream, in, out, n));
  SCANLAB_TRY(scanlab::quicksort(d_temp, temp_bytes, static_cast<const T*>(out), out, n, stream));  // in place
  return scanlab::detail::launch(reverse_order_kernel<T>, blocks, 256, 0, stream, static_cast<const T*>(out), out, n);
}

}  // namespace

cudaError_t quicksort(dtype t, const void* d_in, void* d_out, std::int64_t n, bool descending, void* d_temp,
                      std::size_t& temp_bytes, cudaStream_t stream) {
  return visit(t, [&](auto tag) {
    return quicksort_typed<typename decltype(tag)::type>(d_in, d_out, n, descending, d_temp, temp_bytes, stream);
  });
}

}  // namespace scanlab_py
