// scanlab's linear recurrence as XLA FFI handlers: what scanlab.jax calls through
// jax.ffi.ffi_call, so that JAX code (jit-compiled or not) runs the recurrence on XLA's
// stream, on XLA's buffers, its temporary storage one more result that XLA allocates (no
// cudaMalloc, no DLPack round trip, no synchronisation).
//
// Compiled only where the jaxlib headers (jax.ffi.include_dir(): xla/ffi/api/ffi.h) are found
// at build time (python/CMakeLists.txt); module.cpp then exposes the handlers' addresses
// (xla_ffi_targets) and scanlab.jax registers them for the CUDA platform.
#include "jax_ffi.hpp"

#include "ops.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace scanlab_py {
namespace {

// The element types of the recurrence (ops.hpp: linear_recurrence).
std::optional<dtype> recurrence_dtype(ffi::DataType t) {
  switch (t) {
    case ffi::DataType::F32: return dtype::float32;
    case ffi::DataType::F64: return dtype::float64;
    case ffi::DataType::F16: return dtype::float16;
    case ffi::DataType::BF16: return dtype::bfloat16;
    default: return std::nullopt;
  }
}

// The recurrence's shape from the attributes the Python side computed (scanlab._api's
// layout codes; the offsets buffer is read only for variable lengths).
std::optional<recurrence_shape> shape_of(std::int64_t layout, std::int64_t batch, std::int64_t length,
                                         std::int64_t channels, const ffi::AnyBuffer& offsets) {
  if (layout < 0 || layout >= recurrence_layout_count) return std::nullopt;
  recurrence_shape shape;
  shape.layout = static_cast<recurrence_layout>(layout);
  shape.batch = batch;
  shape.length = length;
  shape.channels = channels;
  if (shape.layout == recurrence_layout::varlen) {
    if (offsets.element_type() != ffi::DataType::S64) return std::nullopt;
    shape.d_offsets = static_cast<const std::int64_t*>(offsets.untyped_data());
  }
  return shape;
}

ffi::Error cuda_error(const char* what, cudaError_t e) {
  return ffi::Error::Internal(std::string(what) + ": CUDA error " + cudaGetErrorName(e) + ": " +
                              cudaGetErrorString(e));
}

// ops.hpp's two-phase protocol on the temporary storage XLA allocated as one more result
// (sized by the same query on the Python side, at trace time). XLA's FFI scratch allocator
// refused every request on the H200 machine (jax 0.11.2), so it is not used.
template <class Run>
ffi::Error run_with_temp(const char* what, ffi::AnyBuffer temp, Run&& run) {
  std::size_t bytes = 0;
  cudaError_t e = run(nullptr, bytes);
  if (e != cudaSuccess) return cuda_error(what, e);
  std::size_t given = temp.size_bytes();
  if (bytes > given || temp.untyped_data() == nullptr) {
    return ffi::Error::Internal(std::string(what) + ": needs " + std::to_string(bytes) +
                                " bytes of temporary storage, the call was given " + std::to_string(given));
  }
  e = run(temp.untyped_data(), given);
  return e == cudaSuccess ? ffi::Error::Success() : cuda_error(what, e);
}

// x (and the final states) of x[i] = a[i] x[i-1] + b[i] (reverse != 0: x[i+1]); x0s holds one
// initial state per sequence (zeros for none).
ffi::Error forward(cudaStream_t stream, ffi::AnyBuffer a, ffi::AnyBuffer b, ffi::AnyBuffer x0s, ffi::AnyBuffer offsets,
                   ffi::Result<ffi::AnyBuffer> x, ffi::Result<ffi::AnyBuffer> final_states,
                   ffi::Result<ffi::AnyBuffer> temp, std::int64_t layout, std::int64_t batch,
                   std::int64_t length, std::int64_t channels, std::int64_t reverse) {
  const char* what = "scanlab.jax.linear_recurrence";
  const std::optional<dtype> t = recurrence_dtype(a.element_type());
  const std::optional<recurrence_shape> shape = shape_of(layout, batch, length, channels, offsets);
  if (!t || b.element_type() != a.element_type() || x0s.element_type() != a.element_type() ||
      x->element_type() != a.element_type() || final_states->element_type() != a.element_type() || !shape) {
    return ffi::Error::InvalidArgument(std::string(what) + ": unsupported dtypes or shape");
  }
  return run_with_temp(what, *temp, [&](void* d_temp, std::size_t& bytes) {
    return linear_recurrence(*t, a.untyped_data(), b.untyped_data(), x->untyped_data(), final_states->untyped_data(),
                             x0s.untyped_data(), 0.0, *shape, reverse != 0, d_temp, bytes, stream);
  });
}

// dL/da, dL/db, dL/dx0 of the forward direction (ops.hpp: linear_recurrence_backward).
ffi::Error backward(cudaStream_t stream, ffi::AnyBuffer a, ffi::AnyBuffer x, ffi::AnyBuffer grad_x,
                    ffi::AnyBuffer x0s, ffi::AnyBuffer offsets, ffi::Result<ffi::AnyBuffer> grad_a,
                    ffi::Result<ffi::AnyBuffer> grad_b, ffi::Result<ffi::AnyBuffer> grad_x0,
                    ffi::Result<ffi::AnyBuffer> temp, std::int64_t layout, std::int64_t batch,
                    std::int64_t length, std::int64_t channels) {
  const char* what = "scanlab.jax.linear_recurrence (backward)";
  const std::optional<dtype> t = recurrence_dtype(a.element_type());
  const std::optional<recurrence_shape> shape = shape_of(layout, batch, length, channels, offsets);
  const ffi::DataType e = a.element_type();
  if (!t || x.element_type() != e || grad_x.element_type() != e || x0s.element_type() != e ||
      grad_a->element_type() != e || grad_b->element_type() != e || grad_x0->element_type() != e || !shape) {
    return ffi::Error::InvalidArgument(std::string(what) + ": unsupported dtypes or shape");
  }
  return run_with_temp(what, *temp, [&](void* d_temp, std::size_t& bytes) {
    return linear_recurrence_backward(*t, a.untyped_data(), x.untyped_data(), grad_x.untyped_data(),
                                      grad_a->untyped_data(), grad_b->untyped_data(), grad_x0->untyped_data(),
                                      x0s.untyped_data(), *shape, d_temp, bytes, stream);
  });
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(scanlab_xla_linear_recurrence, forward,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<cudaStream_t>>()
                                  .Arg<ffi::AnyBuffer>()  // a
                                  .Arg<ffi::AnyBuffer>()  // b
                                  .Arg<ffi::AnyBuffer>()  // x0s
                                  .Arg<ffi::AnyBuffer>()  // offsets (a dummy unless varlen)
                                  .Ret<ffi::AnyBuffer>()  // x
                                  .Ret<ffi::AnyBuffer>()  // final states
                                  .Ret<ffi::AnyBuffer>()  // temporary storage
                                  .Attr<std::int64_t>("layout")
                                  .Attr<std::int64_t>("batch")
                                  .Attr<std::int64_t>("length")
                                  .Attr<std::int64_t>("channels")
                                  .Attr<std::int64_t>("reverse"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(scanlab_xla_linear_recurrence_backward, backward,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<cudaStream_t>>()
                                  .Arg<ffi::AnyBuffer>()  // a
                                  .Arg<ffi::AnyBuffer>()  // x
                                  .Arg<ffi::AnyBuffer>()  // dL/dx
                                  .Arg<ffi::AnyBuffer>()  // x0s
                                  .Arg<ffi::AnyBuffer>()  // offsets
                                  .Ret<ffi::AnyBuffer>()  // dL/da
                                  .Ret<ffi::AnyBuffer>()  // dL/db
                                  .Ret<ffi::AnyBuffer>()  // dL/dx0
                                  .Ret<ffi::AnyBuffer>()  // temporary storage
                                  .Attr<std::int64_t>("layout")
                                  .Attr<std::int64_t>("batch")
                                  .Attr<std::int64_t>("length")
                                  .Attr<std::int64_t>("channels"));

std::vector<std::pair<std::string, std::uintptr_t>> xla_ffi_handlers() {
  return {{"scanlab_linear_recurrence", reinterpret_cast<std::uintptr_t>(&scanlab_xla_linear_recurrence)},
          {"scanlab_linear_recurrence_backward",
           reinterpret_cast<std::uintptr_t>(&scanlab_xla_linear_recurrence_backward)}};
}

}  // namespace scanlab_py
