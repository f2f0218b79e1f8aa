// scanlab_py::scan: scanlab::inclusive_scan / exclusive_scan for each element type and operator.
#include "typed.cuh"

#include <scanlab/functional.cuh>
#include <scanlab/scan.cuh>

namespace scanlab_py {
namespace {

// W: the accumulator (and output) type.
template <class T, class W, class Op>
cudaError_t scan_with(Op op, W identity, bool exclusive, scalar init, const T* in, W* out, std::int64_t n,
                      void* d_temp, std::size_t& temp_bytes, cudaStream_t stream) {
  if (exclusive) return scanlab::exclusive_scan(d_temp, temp_bytes, in, out, n, read_scalar<W>(init), op, stream);
  if constexpr (std::is_same_v<T, W>) {
    (void)identity;
    return scanlab::inclusive_scan(d_temp, temp_bytes, in, out, n, op, stream);
  } else {
    // A wider accumulator (int64 sums of int32 data): start from the identity.
    return scanlab::inclusive_scan_init(d_temp, temp_bytes, in, out, n, identity, op, stream);
  }
}

template <class T>
cudaError_t scan_typed(op_code op, bool exclusive, scalar init, const void* d_in, void* d_out, std::int64_t n,
                       void* d_temp, std::size_t& temp_bytes, cudaStream_t stream) {
  const T* in = static_cast<const T*>(d_in);
  using W = wide_t<T>;
  switch (op) {
    case op_code::sum:
      return scan_with<T, W>(scanlab::plus{}, W(0), exclusive, init, in, static_cast<W*>(d_out), n, d_temp,
                             temp_bytes, stream);
    case op_code::prod:
      return scan_with<T, W>(scanlab::multiplies{}, W(1), exclusive, init, in, static_cast<W*>(d_out), n, d_temp,
                             temp_bytes, stream);
    case op_code::min:
      return scan_with<T, T>(scanlab::minimum{}, scanlab::identity<scanlab::minimum, T>::value(), exclusive, init,
                             in, static_cast<T*>(d_out), n, d_temp, temp_bytes, stream);
    case op_code::max:
      return scan_with<T, T>(scanlab::maximum{}, scanlab::identity<scanlab::maximum, T>::value(), exclusive, init,
                             in, static_cast<T*>(d_out), n, d_temp, temp_bytes, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t scan(dtype in, op_code op, bool exclusive, scalar init, const void* d_in, void* d_out, std::int64_t n,
                 void* d_temp, std::size_t& temp_bytes, cudaStream_t stream) {
  return visit(in, [&](auto tag) {
    return scan_typed<typename decltype(tag)::type>(op, exclusive, init, d_in, d_out, n, d_temp, temp_bytes, stream);
  });
}

}  // namespace scanlab_py
