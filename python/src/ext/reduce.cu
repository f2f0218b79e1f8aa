// scanlab_py::reduce: scanlab::reduce for each element type and operator.
#include "typed.cuh"

#include <scanlab/functional.cuh>
#include <scanlab/reduce.cuh>

namespace scanlab_py {
namespace {

template <class T>
cudaError_t reduce_typed(op_code op, const void* d_in, void* d_out, std::int64_t n, void* d_temp,
                         std::size_t& temp_bytes, cudaStream_t stream) {
  const T* in = static_cast<const T*>(d_in);
  using W = wide_t<T>;
  switch (op) {
    case op_code::sum:
      return scanlab::reduce(d_temp, temp_bytes, in, static_cast<W*>(d_out), n, W(0), scanlab::plus{}, stream);
    case op_code::prod:
      return scanlab::reduce(d_temp, temp_bytes, in, static_cast<W*>(d_out), n, W(1), scanlab::multiplies{},
                             stream);
    case op_code::min:
      return scanlab::reduce(d_temp, temp_bytes, in, static_cast<T*>(d_out), n,
                             scanlab::identity<scanlab::minimum, T>::value(), scanlab::minimum{}, stream);
    case op_code::max:
      return scanlab::reduce(d_temp, temp_bytes, in, static_cast<T*>(d_out), n,
                             scanlab::identity<scanlab::maximum, T>::value(), scanlab::maximum{}, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t reduce(dtype in, op_code op, const void* d_in, void* d_out, std::int64_t n, void* d_temp,
                   std::size_t& temp_bytes, cudaStream_t stream) {
  return visit(in, [&](auto tag) {
    return reduce_typed<typename decltype(tag)::type>(op, d_in, d_out, n, d_temp, temp_bytes, stream);
  });
}

}  // namespace scanlab_py
