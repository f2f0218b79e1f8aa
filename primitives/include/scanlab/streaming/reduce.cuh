// scanlab/streaming/reduce.cuh: reductions of host arrays of any length (out of core).
//
//   float sum = 0;
//   SCANLAB_CHECK(scanlab::streaming::reduce(std::size_t{1} << 30, h_x, n, sum, 0.0f, scanlab::plus{}));
//   scanlab::streaming::workspace ws(std::size_t{1} << 30);   // reused by many calls
//   SCANLAB_CHECK(scanlab::streaming::reduce_max(ws, h_x, n, largest));
//
// Each chunk of the host array (streaming/pipeline.cuh: the ring, the budget, the copies)
// is reduced on the device by scanlab::transform_reduce, whose epilogue folds the chunk's
// total into a device-resident accumulator: acc = op(acc, chunk total), in chunk order,
// with no host round trip. Chunk 0 is reduced with `init`; a later chunk c is reduced over
// its items 1.. with init = t(x[c.begin]), its first item read on the host (the in-memory
// reduce takes its init by value), which is why transform_op must be callable on the host
// as well as on the device (the identity and the square below are).
//
// Guarantees: those of scanlab::reduce (scanlab/reduce.cuh) for op and T: associative and
// commutative op, accumulator T (init's type, each t(x) converted to T), no identity
// needed, deterministic for a given input, budget and options (the chunk size sets the
// grouping: floats differ from the in-memory reduce by rounding, within n * eps * sum|x|).
// minimum / maximum keep their NaN rule (any NaN gives NaN; a fixed NaN of several).
// Host-synchronous: `result` is set when the call returns; on failure it is unchanged.
// n == 0 sets result = init. Device memory: at most the workspace's budget (the chunk
// buffers, the reduce's temp storage, one accumulator); cudaErrorInvalidValue where even
// one item per chunk does not fit, for n < 0 or a null h_in with n > 0.
#pragma once

#include <scanlab/functional.cuh>
#include <scanlab/reduce.cuh>
#include <scanlab/streaming/pipeline.cuh>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace scanlab::streaming {

namespace detail {

// Epilogue of a chunk's reduce: the chunk's total folded into the accumulator (chunk 0:
// stored). Runs on the one device thread that writes the result.
template <class T, class Op>
struct fold_into {
  const T* acc;
  Op op;
  bool first;
  __device__ T operator()(const T& total) const { return first ? total : op(*acc, total); }
};

template <class In, class T, class Op, class Tf>
struct reduce_stage {
  static constexpr std::size_t item_bytes = sizeof(In);
  const In* h_in;
  T init;
  Op op;
  Tf tf;
  T* result;
  static constexpr std::size_t word_bytes = sizeof(T);  // the accumulator

  using output_it = epilogue_output<T*, fold_into<T, Op>>;

  [[nodiscard]] std::size_t slot_bytes(std::int64_t items) const { return static_cast<std::size_t>(items) * sizeof(In); }
  [[nodiscard]] cudaError_t temp_bytes(std::int64_t items, std::size_t& bytes) const {
    const output_it no_output{nullptr, fold_into<T, Op>{nullptr, op, true}};
    return ::scanlab::transform_reduce(nullptr, bytes, static_cast<const In*>(nullptr), no_output, items, init, op, tf);
  }

  [[nodiscard]] transfer input(const pipeline& p, const chunk& c) const {
    return {const_cast<In*>(h_in + c.begin), p.slot(c.slot), static_cast<std::size_t>(c.items) * sizeof(In)};
  }
  [[nodiscard]] cudaError_t compute(const pipeline& p, const chunk& c, cudaStream_t stream) {
    T* acc = reinterpret_cast<T*>(p.words());
    const auto* d_in = reinterpret_cast<const In*>(p.slot(c.slot));
    const auto out = ::scanlab::with_epilogue(acc, fold_into<T, Op>{acc, op, c.index == 0});
    std::size_t bytes = p.temp_bytes();
    if (c.index == 0) {
      return ::scanlab::transform_reduce(p.temp(), bytes, d_in, out, c.items, init, op, tf, stream);
    }
    const T first = static_cast<T>(tf(h_in[c.begin]));
    return ::scanlab::transform_reduce(p.temp(), bytes, d_in + 1, out, c.items - 1, first, op, tf, stream);
  }
  [[nodiscard]] cudaError_t output(const pipeline&, const chunk&, transfer_list& out) const {
    out = {};
    return cudaSuccess;
  }
  [[nodiscard]] cudaError_t finish(const pipeline& p, cudaStream_t stream) const {
    // Into pageable memory: returns once copied. The pipeline then synchronises its streams.
    return cudaMemcpyAsync(result, p.words(), sizeof(T), cudaMemcpyDeviceToHost, stream);
  }
};

// x converted to Acc, squared (host and device: the first item of a chunk is squared on the host).
template <class Acc>
struct square_as {
  template <class U>
  __host__ __device__ constexpr Acc operator()(const U& x) const {
    const Acc v = static_cast<Acc>(x);
    return v * v;
  }
};

}  // namespace detail

// result = op(init, t(h_in[0]), ..., t(h_in[n - 1])): transform_op callable on host and device.
template <class In, class T, class Op, class TransformOp>
[[nodiscard]] cudaError_t transform_reduce(workspace& ws, const In* h_in, std::int64_t n, T& result, T init, Op op,
                                           TransformOp transform_op) {
  T value = init;
  detail::reduce_stage<In, T, Op, TransformOp> stage{h_in, init, op, transform_op, &value};
  SCANLAB_TRY(detail::stream_chunks(ws, stage, n, h_in, nullptr));
  result = value;
  return cudaSuccess;
}

// result = op(init, h_in[0], ..., h_in[n - 1]).
template <class In, class T, class Op>
[[nodiscard]] cudaError_t reduce(workspace& ws, const In* h_in, std::int64_t n, T& result, T init, Op op) {
  return transform_reduce(ws, h_in, n, result, init, op, ::scanlab::detail::identity_transform{});
}

// Sum, minimum, maximum in the input's type (min/max: init the operator's identity, NaN rule above).
template <class T>
[[nodiscard]] cudaError_t reduce_sum(workspace& ws, const T* h_in, std::int64_t n, T& result) {
  return reduce(ws, h_in, n, result, identity<plus, T>::value(), plus{});
}
template <class T>
[[nodiscard]] cudaError_t reduce_min(workspace& ws, const T* h_in, std::int64_t n, T& result) {
  return reduce(ws, h_in, n, result, identity<minimum, T>::value(), minimum{});
}
template <class T>
[[nodiscard]] cudaError_t reduce_max(workspace& ws, const T* h_in, std::int64_t n, T& result) {
  return reduce(ws, h_in, n, result, identity<maximum, T>::value(), maximum{});
}

// Sum of squares accumulated in Acc (float data into a double: exact squares), e.g. for a
// norm: sqrt(result). Unscaled, as scanlab::sum_squares: it overflows when the true value does.
template <class T, class Acc>
[[nodiscard]] cudaError_t sum_squares(workspace& ws, const T* h_in, std::int64_t n, Acc& result) {
  return transform_reduce(ws, h_in, n, result, Acc(0), plus{}, detail::square_as<Acc>{});
}

// The same with a workspace of device_bytes made for the call (default options).
template <class In, class T, class Op, class TransformOp>
[[nodiscard]] cudaError_t transform_reduce(std::size_t device_bytes, const In* h_in, std::int64_t n, T& result, T init,
                                           Op op, TransformOp transform_op) {
  workspace ws(device_bytes);
  return transform_reduce(ws, h_in, n, result, init, op, transform_op);
}
template <class In, class T, class Op>
[[nodiscard]] cudaError_t reduce(std::size_t device_bytes, const In* h_in, std::int64_t n, T& result, T init, Op op) {
  workspace ws(device_bytes);
  return reduce(ws, h_in, n, result, init, op);
}
template <class T>
[[nodiscard]] cudaError_t reduce_sum(std::size_t device_bytes, const T* h_in, std::int64_t n, T& result) {
  workspace ws(device_bytes);
  return reduce_sum(ws, h_in, n, result);
}
template <class T>
[[nodiscard]] cudaError_t reduce_min(std::size_t device_bytes, const T* h_in, std::int64_t n, T& result) {
  workspace ws(device_bytes);
  return reduce_min(ws, h_in, n, result);
}
template <class T>
[[nodiscard]] cudaError_t reduce_max(std::size_t device_bytes, const T* h_in, std::int64_t n, T& result) {
  workspace ws(device_bytes);
  return reduce_max(ws, h_in, n, result);
}
template <class T, class Acc>
[[nodiscard]] cudaError_t sum_squares(std::size_t device_bytes, const T* h_in, std::int64_t n, Acc& result) {
  workspace ws(device_bytes);
  return sum_squares(ws, h_in, n, result);
}

}  // namespace scanlab::streaming
