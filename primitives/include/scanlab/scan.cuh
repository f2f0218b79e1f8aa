// Device-wide prefix scans (inclusive and exclusive): scanlab's production scan.
//
//   std::size_t temp_bytes = 0;
//   SCANLAB_CHECK(scanlab::inclusive_scan(nullptr, temp_bytes, d_in, d_out, n, scanlab::plus{}, stream));
//   (allocate temp_bytes bytes at d_temp)
//   SCANLAB_CHECK(scanlab::inclusive_scan(d_temp, temp_bytes, d_in, d_out, n, scanlab::plus{}, stream));
//
// Contract, for every function below:
//   * Two-phase temp storage: with d_temp == nullptr only temp_bytes is set (always >= 1,
//     depends only on n and the value type); nothing is launched. Otherwise d_temp must
//     hold temp_bytes bytes (any alignment); it may be uninitialised and is left in an
//     unspecified state. The call only enqueues work on `stream` (no synchronisation, no
//     allocation) and returns the first failing CUDA status (cudaErrorInvalidValue for
//     n < 0 or too little temp storage). Nothing throws.
//   * Operator: any associative `op` callable on the device as op(T, T) -> T, applied as
//     op(earlier, later): it need not be commutative (affine-map composition and matrix
//     products work) and needs no identity element.
//   * Types: T trivially copyable (and default constructible). Input iterators are read
//     as T (d_in[i] converted to T); raw pointers get 16-byte vector loads and stores when
//     both are 16-byte aligned, element-wise accesses otherwise (same results).
//   * In place: d_out == d_in is allowed. Partially overlapping ranges are not.
//   * n is 64-bit: inputs past 2^31 elements are fine.
//   * Determinism: the result is a fixed function of the input, n, the value type, the
//     operator and the tile size (device/scan_policy.cuh): bitwise the same on every run,
//     floats included, whatever the timing, the launch mode or the number of SMs. Inside a
//     tile the combination tree is fixed by the layout; across tiles the prefix of tile t
//     has one canonical grouping (windows of 32 tiles, device/tile_state.cuh) that the
//     look-back reproduces exactly whichever predecessors it finds ready (given an `op`
//     that returns the same bits for the same operands, as IEEE arithmetic does). The grouping is
//     not the sequential one, so float results differ from a sequential loop (and from
//     CUB, which is not run-to-run deterministic for floats) by rounding, within the
//     usual n * eps * sum|x| bound.
//   * One launch on the device: a single block for one tile, a cooperative grid
//     otherwise (a memset and a regular grid where cooperative launch is unavailable or
//     refused).
//   * Optional tuning (scanlab/tuning.hpp): a tile shape as first template argument
//     (scan_policy below) and single_pass_options as last argument.
#pragma once

#include <scanlab/device/scan_dispatch.cuh>
#include <scanlab/device/scan_policy.cuh>
#include <scanlab/functional.cuh>
#include <scanlab/tuning.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <type_traits>

namespace scanlab {

// ---- tuning (optional: scanlab/tuning.hpp) -------------------------------------------------

// A tile shape for every function below, given as their first template argument:
//   scanlab::inclusive_scan<scanlab::scan_policy<256, 16, 3>>(d_temp, temp_bytes, ...)
// BlockThreads x ItemsPerThread elements per tile (ItemsPerThread a whole number of 16-byte
// chunks of T where T divides 16 bytes), MinBlocksPerSm for __launch_bounds__, Prefetch: the
// next tile's loads issued before the look-back. Left out (default_policy),
// default_scan_policy<T> (device/scan_policy.cuh, with its sm_90 measurements). The policy
// is part of the determinism contract above: the same policy gives the same bits. Every
// function below also takes an optional last argument, single_pass_options (launch mode,
// grid cap: benchmark and test knobs).
template <int BlockThreads, int ItemsPerThread, int MinBlocksPerSm, bool Prefetch = true>
using scan_policy = device::scan_policy<BlockThreads, ItemsPerThread, MinBlocksPerSm, Prefetch>;
template <class T>
using default_scan_policy = device::default_scan_policy<T>;

namespace scan_detail {

template <class Policy, class InputIt, class OutputIt, class T, class Op>
[[nodiscard]] cudaError_t scan(void* d_temp, std::size_t& temp_bytes, InputIt d_in, OutputIt d_out, std::int64_t n,
                               scan_kind kind, T init, Op op, cudaStream_t stream,
                               const single_pass_options& options) {
  if (!detail::valid_options(options)) return cudaErrorInvalidValue;
  using policy = detail::resolve_policy_t<Policy, device::default_scan_policy<T>>;
  return dispatch_scan<policy>(d_temp, temp_bytes, d_in, d_out, n, kind, init, op, stream,
                               detail::to_dispatch_options<scan_options>(options));
}

}  // namespace scan_detail

// out[i] = in[0] op in[1] op ... op in[i], accumulated in the input's value type.
template <class Policy = default_policy, class InputIt, class OutputIt, class Op>
[[nodiscard]] cudaError_t inclusive_scan(void* d_temp, std::size_t& temp_bytes, InputIt d_in, OutputIt d_out,
                                         std::int64_t n, Op op, cudaStream_t stream = nullptr,
                                         const single_pass_options& options = {}) {
  using T = std::remove_cv_t<typename std::iterator_traits<InputIt>::value_type>;
  return scan_detail::scan<Policy>(d_temp, temp_bytes, d_in, d_out, n, scan_detail::scan_kind::inclusive, T{}, op,
                                   stream, options);
}

// out[i] = init op in[0] op ... op in[i], accumulated in T (init's type): a wider
// accumulator (int64 sums of int32 data) or a running value carried over from an earlier call.
template <class Policy = default_policy, class InputIt, class OutputIt, class T, class Op>
[[nodiscard]] cudaError_t inclusive_scan_init(void* d_temp, std::size_t& temp_bytes, InputIt d_in, OutputIt d_out,
                                              std::int64_t n, T init, Op op, cudaStream_t stream = nullptr,
                                              const single_pass_options& options = {}) {
  return scan_detail::scan<Policy>(d_temp, temp_bytes, d_in, d_out, n, scan_detail::scan_kind::inclusive_init, init,
                                   op, stream, options);
}

// out[0] = init, out[i] = init op in[0] op ... op in[i-1], accumulated in T (init's type).
template <class Policy = default_policy, class InputIt, class OutputIt, class T, class Op>
[[nodiscard]] cudaError_t exclusive_scan(void* d_temp, std::size_t& temp_bytes, InputIt d_in, OutputIt d_out,
                                         std::int64_t n, T init, Op op, cudaStream_t stream = nullptr,
                                         const single_pass_options& options = {}) {
  return scan_detail::scan<Policy>(d_temp, temp_bytes, d_in, d_out, n, scan_detail::scan_kind::exclusive, init, op,
                                   stream, options);
}

// Prefix sums.
template <class Policy = default_policy, class InputIt, class OutputIt>
[[nodiscard]] cudaError_t inclusive_sum(void* d_temp, std::size_t& temp_bytes, InputIt d_in, OutputIt d_out,
                                        std::int64_t n, cudaStream_t stream = nullptr,
                                        const single_pass_options& options = {}) {
  return inclusive_scan<Policy>(d_temp, temp_bytes, d_in, d_out, n, plus{}, stream, options);
}

template <class Policy = default_policy, class InputIt, class OutputIt>
[[nodiscard]] cudaError_t exclusive_sum(void* d_temp, std::size_t& temp_bytes, InputIt d_in, OutputIt d_out,
                                        std::int64_t n, cudaStream_t stream = nullptr,
                                        const single_pass_options& options = {}) {
  using T = std::remove_cv_t<typename std::iterator_traits<InputIt>::value_type>;
  return exclusive_scan<Policy>(d_temp, temp_bytes, d_in, d_out, n, T{}, plus{}, stream, options);
}

}  // namespace scanlab
