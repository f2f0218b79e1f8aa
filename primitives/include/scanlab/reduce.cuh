// scanlab/reduce.cuh: device-wide reductions (the production path).
//
//   std::size_t temp_bytes = 0;
//   SCANLAB_CHECK(scanlab::reduce(nullptr, temp_bytes, d_in, d_out, n, 0.0f, scanlab::plus{}, stream));
//   ... allocate temp_bytes at d_temp ...
//   SCANLAB_CHECK(scanlab::reduce(d_temp, temp_bytes, d_in, d_out, n, 0.0f, scanlab::plus{}, stream));
//
// Guarantees, for every entry point here:
//  - Result: *d_out = op(init, x0 op x1 op ... op x(n-1)) in some fixed bracketing;
//    n == 0 writes init. The accumulator type is T (init's type): each input is
//    converted to T before it is combined (reduce int32 data with an int64 init to
//    sum without overflow).
//  - Operator: associative and commutative (elements are regrouped and reordered),
//    callable as op(T, T) on the device; T trivially copyable and default
//    constructible. No identity element is needed.
//  - Deterministic: the same input at the same address, on the same device, gives
//    the same bits on every run (no atomics; a fixed grid per device and a fixed
//    combination order). The bits may differ from a CPU loop or from CUB for floats.
//  - Temp storage: the two-phase protocol of CUB. With d_temp == nullptr only
//    temp_bytes is set (at least 1); otherwise d_temp must hold temp_bytes bytes, be
//    aligned to alignof(T) (cudaMalloc's 256 bytes is plenty) and not be in use by
//    another call in flight. Its contents need no initialisation and are garbage
//    afterwards. temp_bytes depends on n, the types and the current device.
//  - Not in place: d_out must not overlap the input.
//  - Asynchronous: everything is enqueued on `stream`; returns the first error of a
//    CUDA call or launch (cudaErrorInvalidValue for n < 0, too little or misaligned
//    temp storage). Never throws.
//  - Pointer inputs are read with 16-byte vector loads (a misaligned start is peeled
//    off with scalar loads; any pointer aligned to its element type works); other
//    iterators (counting_iterator, transform_iterator, ...) take a scalar path.
//
// Launches. n up to 16 KB (one tile of 256 threads x 4 16-byte vectors) is one
// straight-line single-block kernel that issues every load at once; n up to two
// single-block tiles (512 threads x 8 16-byte vectors, twice: 128 KB) is one looping
// single-block kernel. Anything larger is ONE cooperative launch of a grid of one
// resident wave: every block reduces a contiguous share to a partial in
// temp storage, the grid meets at a grid-wide barrier, and block 0 reduces the
// partials. Why cooperative rather than "the last block to arrive finishes": the
// last-block pattern needs an arrival counter that reads 0 at the start of every
// call. A counter in the caller's temp storage is uninitialised on first use (the
// last block can reset it for the next call, but nothing can make the first call
// safe), and a library-global counter would be shared by concurrent calls on other
// streams. Zeroing it first is a second operation (a memset costs about as much as
// the kernel at these sizes). The cooperative launch gives co-residency of all blocks
// and a grid barrier whose state the driver initialises, so the single launch is
// correct from the first call with garbage temp storage, with no extra operation.
// Devices without cooperative launch, and contexts that refuse the grid (fewer SMs than
// the device has), fall back to two launches (partials, then one block over them), with
// the same result bits.
#pragma once

#include <scanlab/detail/launch.cuh>
#include <scanlab/detail/util.cuh>
#include <scanlab/detail/vector_io.cuh>
#include <scanlab/device/reduce_kernels.cuh>
#include <scanlab/device/reduce_policy.cuh>
#include <scanlab/error.hpp>
#include <scanlab/functional.cuh>

#include <cuda_runtime.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace scanlab {

namespace detail {

// Items one block of Policy's shape reads per iteration (one tile).
template <class Policy, class InputIt>
constexpr std::int64_t tile_items() {
  if constexpr (reads_vectors_v<InputIt>) {
    return std::int64_t{Policy::threads} * units_per_iteration<Policy::vectors_per_thread, InputIt>() *
           unit_items<InputIt>;
  } else {
    return std::int64_t{Policy::threads} * Policy::scalar_items_per_thread;
  }
}

// The largest n the single-block kernel takes (Single: the policy's single_block shape).
template <class Single, class InputIt>
constexpr std::int64_t single_block_items() {
  return tile_items<Single, InputIt>() * Single::tiles;
}

template <class Policy, class InputIt, class OutputIt, class T, class Op, class Tf>
cudaError_t dispatch_reduce(void* d_temp, std::size_t& temp_bytes, InputIt d_in, OutputIt d_out, std::int64_t n,
                            T init, Op op, Tf tf, cudaStream_t stream) {
  static_assert(std::is_trivially_copyable_v<T> && std::is_default_constructible_v<T>,
                "the accumulator type T (init's type) must be trivially copyable and default constructible");
  if (n < 0) return cudaErrorInvalidValue;

  // Small n: one block, one launch, no temp storage used (1 byte is still asked for,
  // so that the caller's allocation is never a null pointer). Up to one tile of the
  // small shape, a straight-line kernel; up to single_block_items, a looping one.
  using tile = typename Policy::tile;
  using single = typename Policy::single_block;
  if (n <= single_block_items<single, InputIt>()) {
    // Nothing is used: 1 byte, so that the caller's allocation is not null.
    if (const auto answer = detail::temp_storage_query(d_temp, temp_bytes, 1)) return *answer;
    if (n <= tile_kernel_items<tile, InputIt>()) {
      return detail::launch(reduce_tile_kernel<tile, InputIt, OutputIt, T, Op, Tf>, 1, tile::threads, 0, stream,
                            d_in, n, d_out, init, op, tf);
    }
    return detail::launch(reduce_single_block_kernel<single, InputIt, OutputIt, T, Op, Tf>, 1, single::threads, 0,
                          stream, d_in, n, d_out, init, op, tf);
  }

  constexpr auto kernel = reduce_grid_kernel<Policy, InputIt, OutputIt, T, Op, Tf>;
  int max_blocks = 0;
  bool cooperative = false;
  SCANLAB_TRY(resident_grid<kernel>(Policy::threads, Policy::blocks_per_sm, max_blocks, cooperative));
  // One partial per block; sized for the largest grid so the size depends only on n.
  const std::size_t required = align_up(static_cast<std::size_t>(max_blocks) * sizeof(T));
  if (const auto answer = detail::temp_storage_query(d_temp, temp_bytes, required,
                                                                reinterpret_cast<std::uintptr_t>(d_temp) % alignof(T) == 0)) {
    return *answer;
  }

  // Grid: as many blocks as there are tiles, at most one resident wave; each block an
  // equal contiguous share, rounded up to whole warps of units (32 vectors: 512 bytes).
  const reduce_layout layout = make_reduce_layout(d_in, n);
  const std::int64_t unit_tile =
      std::int64_t{Policy::threads} * (layout.vectorized ? units_per_iteration<Policy::vectors_per_thread, InputIt>()
                                                         : Policy::scalar_items_per_thread);
  std::int64_t blocks = ceil_div<std::int64_t>(layout.units, unit_tile);
  if (blocks > max_blocks) blocks = max_blocks;
  if (blocks < 1) blocks = 1;
  const std::int64_t units_per_block =
      ceil_div<std::int64_t>(ceil_div<std::int64_t>(layout.units, blocks), warp_threads) * warp_threads;
  const int grid = static_cast<int>(ceil_div<std::int64_t>(layout.units, units_per_block));
  if (grid <= 1) {  // a short input on the scalar path: one block suffices
    return detail::launch(reduce_single_block_kernel<single, InputIt, OutputIt, T, Op, Tf>, 1, single::threads, 0,
                          stream, d_in, n, d_out, init, op, tf);
  }
  T* partials = static_cast<T*>(d_temp);

  if (cooperative) {
    const cudaError_t status = detail::launch_cooperative(kernel, grid, Policy::threads, stream, d_in, n,
                                                          units_per_block, partials, d_out, init, op, tf, true);
    if (status != cudaErrorCooperativeLaunchTooLarge) return status;
    // Refused (launch.cuh): the two launches below, the same grid and the same bits.
  }
  SCANLAB_TRY(detail::launch(kernel, grid, Policy::threads, 0, stream, d_in, n, units_per_block, partials, d_out,
                             init, op, tf, false));
  return detail::launch(reduce_partials_kernel<Policy, OutputIt, T, Op>, 1, Policy::threads, 0, stream,
                        static_cast<const T*>(partials), grid, d_out, init, op);
}

}  // namespace detail

// *d_out = op(init, d_in[0], ..., d_in[n - 1]) (see the guarantees at the top of this file).
template <class InputIt, class OutputIt, class T, class Op>
[[nodiscard]] cudaError_t reduce(void* d_temp, std::size_t& temp_bytes, InputIt d_in, OutputIt d_out,
                                 std::int64_t n, T init, Op op, cudaStream_t stream = nullptr) {
  return detail::dispatch_reduce<detail::reduce_policy_sm90>(d_temp, temp_bytes, d_in, d_out, n, init, op,
                                                             detail::identity_transform{}, stream);
}

// *d_out = op(init, t(d_in[0]), ..., t(d_in[n - 1])) with t = transform_op, each t(x)
// converted to T; t is applied exactly once per element, on the device. Same
// guarantees as reduce (e.g. a sum of squares, or a norm, in one pass). d_in may be
// zip(d_x, d_y) (two arrays side by side) and d_out with_epilogue(d_out, f) (a final
// step on the device): see below. transform_op may also offer reduce_unit, a shortcut
// for the items of one 16-byte vector that must return the same bits as the per-item
// path (detail::unit_reducer in device/reduce_kernels.cuh; scanlab's norms use it).
template <class InputIt, class OutputIt, class T, class ReduceOp, class TransformOp>
[[nodiscard]] cudaError_t transform_reduce(void* d_temp, std::size_t& temp_bytes, InputIt d_in, OutputIt d_out,
                                           std::int64_t n, T init, ReduceOp reduce_op, TransformOp transform_op,
                                           cudaStream_t stream = nullptr) {
  return detail::dispatch_reduce<detail::reduce_policy_sm90>(d_temp, temp_bytes, d_in, d_out, n, init, reduce_op,
                                                             transform_op, stream);
}

// ---- Inputs and outputs for transform_reduce ----------------------------------------

// Two device arrays of the same length read side by side: item i is zip_item<T>{x[i], y[i]}
// (e.g. transform_reduce(..., zip(d_x, d_y), ..., plus{}, product) is a dot product). When
// both arrays have the same address modulo 16 (always for cudaMalloc'd arrays) each is
// read with 16-byte vector loads, half as many per thread and iteration as for one array,
// so that the bytes in flight stay those of the tuning; otherwise one item (two scalar
// loads) at a time. The type is zip_input<T> (device/reduce_kernels.cuh).
template <class T>
[[nodiscard]] __host__ __device__ constexpr zip_input<T> zip(const T* d_x, const T* d_y) {
  return {d_x, d_y};
}

// An output iterator that stores epilogue(result) at d_out, computed on the device by the
// thread that writes the result (same launch, no pass): e.g. the square root of a sum of
// squares, or a mean. `epilogue` is a device-callable functor taking T (init's type); what
// it returns is converted to d_out's value type. Works with reduce, transform_reduce and
// segmented_reduce (d_out[s] = epilogue(total of segment s)).
template <class OutputIt, class Epilogue>
[[nodiscard]] constexpr epilogue_output<OutputIt, Epilogue> with_epilogue(OutputIt d_out, Epilogue epilogue) {
  return {d_out, epilogue};
}

// For each segment s in [0, num_segments): d_out[s] = op(init, d_in[b], ..., d_in[e - 1])
// with b = d_offsets[s], e = d_offsets[s + 1] (num_segments + 1 offsets, of any
// integer type; e <= b is an empty segment and gets init). One block per segment;
// deterministic; no temp storage is used (temp_bytes is set to 1 by the query).
// d_out must not overlap the input or the offsets.
template <class InputIt, class OutputIt, class OffsetIt, class T, class Op>
[[nodiscard]] cudaError_t segmented_reduce(void* d_temp, std::size_t& temp_bytes, InputIt d_in, OutputIt d_out,
                                           std::int64_t num_segments, OffsetIt d_offsets, T init, Op op,
                                           cudaStream_t stream = nullptr) {
  using policy = detail::segmented_reduce_policy_sm90;
  static_assert(std::is_trivially_copyable_v<T> && std::is_default_constructible_v<T>,
                "the accumulator type T (init's type) must be trivially copyable and default constructible");
  if (num_segments < 0) return cudaErrorInvalidValue;
  // Nothing is used: 1 byte, so that the caller's allocation is not null.
  if (const auto answer = detail::temp_storage_query(d_temp, temp_bytes, 1)) return *answer;
  if (num_segments == 0) return cudaSuccess;
  const auto grid = static_cast<unsigned>(num_segments < INT_MAX ? num_segments : INT_MAX);
  return detail::launch(detail::segmented_reduce_kernel<policy, InputIt, OutputIt, OffsetIt, T, Op>, grid,
                        policy::threads, 0, stream, d_in, d_out, d_offsets, num_segments, init, op);
}

// Convenience: sum, minimum and maximum of an arithmetic input, accumulated in its
// own value type (sum: init 0; min/max: init the operator's identity).
template <class InputIt, class OutputIt>
[[nodiscard]] cudaError_t reduce_sum(void* d_temp, std::size_t& temp_bytes, InputIt d_in, OutputIt d_out,
                                     std::int64_t n, cudaStream_t stream = nullptr) {
  using T = detail::input_value_t<InputIt>;
  return reduce(d_temp, temp_bytes, d_in, d_out, n, identity<plus, T>::value(), plus{}, stream);
}

template <class InputIt, class OutputIt>
[[nodiscard]] cudaError_t reduce_min(void* d_temp, std::size_t& temp_bytes, InputIt d_in, OutputIt d_out,
                                     std::int64_t n, cudaStream_t stream = nullptr) {
  using T = detail::input_value_t<InputIt>;
  return reduce(d_temp, temp_bytes, d_in, d_out, n, identity<minimum, T>::value(), minimum{}, stream);
}

template <class InputIt, class OutputIt>
[[nodiscard]] cudaError_t reduce_max(void* d_temp, std::size_t& temp_bytes, InputIt d_in, OutputIt d_out,
                                     std::int64_t n, cudaStream_t stream = nullptr) {
  using T = detail::input_value_t<InputIt>;
  return reduce(d_temp, temp_bytes, d_in, d_out, n, identity<maximum, T>::value(), maximum{}, stream);
}

}  // namespace scanlab
