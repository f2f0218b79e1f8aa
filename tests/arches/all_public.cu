// Every public header of scanlab, and every public algorithm instantiated for a couple
// of types: scripts/compile-arches.sh compiles this file (compile only) once per CUDA
// architecture of the portable list, so an instruction one architecture lacks shows up
// as a compile error for that architecture. Nothing here runs.
//
// Keep it in step with the headers: compile-arches.sh refuses to run when a header under
// primitives/include/scanlab/ is not included below.
#include <scanlab/algorithms/linrec.cuh>
#include <scanlab/algorithms/linrec_kernels.cuh>
#include <scanlab/algorithms/merge.cuh>
#include <scanlab/algorithms/norms.cuh>
#include <scanlab/algorithms/norms_kernels.cuh>
#include <scanlab/algorithms/partition.cuh>
#include <scanlab/algorithms/partition_kernels.cuh>
#include <scanlab/algorithms/quicksort.cuh>
#include <scanlab/algorithms/quicksort_kernels.cuh>
#include <scanlab/algorithms/radix_sort.cuh>
#include <scanlab/algorithms/radix_sort_common.cuh>
#include <scanlab/algorithms/radix_sort_digit_state.cuh>
#include <scanlab/algorithms/radix_sort_multipass.cuh>
#include <scanlab/algorithms/radix_sort_onesweep.cuh>
#include <scanlab/algorithms/select.cuh>
#include <scanlab/algorithms/select_kernels.cuh>
#include <scanlab/algorithms/select_three_phase.cuh>
#include <scanlab/arch.cuh>
#include <scanlab/block/block_reduce.cuh>
#include <scanlab/block/block_scan.cuh>
#include <scanlab/complex.hpp>
#include <scanlab/detail/launch.cuh>
#include <scanlab/detail/prefetch.cuh>
#include <scanlab/detail/shuffle.cuh>
#include <scanlab/detail/util.cuh>
#include <scanlab/detail/vector_io.cuh>
#include <scanlab/device/reduce_kernels.cuh>
#include <scanlab/device/reduce_policy.cuh>
#include <scanlab/device/scan_dispatch.cuh>
#include <scanlab/device/scan_kernel.cuh>
#include <scanlab/device/scan_policy.cuh>
#include <scanlab/device/single_pass.cuh>
#include <scanlab/device/tile_state.cuh>
#include <scanlab/device_check.cuh>
#include <scanlab/distributed.cuh>
#include <scanlab/distributed/communicator.hpp>
#include <scanlab/distributed/detail/exchange.cuh>
#include <scanlab/distributed/detail/plan.hpp>
#include <scanlab/distributed/reduce.cuh>
#include <scanlab/distributed/select.cuh>
#include <scanlab/distributed/sort.cuh>
#include <scanlab/device_check.hpp>
#include <scanlab/error.hpp>
#include <scanlab/functional.cuh>
#include <scanlab/iterator.cuh>
#include <scanlab/mix64.hpp>
#include <scanlab/ladder/reduce_ladder.cuh>
#include <scanlab/ladder/scan_ladder.cuh>
#include <scanlab/reduce.cuh>
#include <scanlab/scan.cuh>
#include <scanlab/segmented_scan.cuh>
#include <scanlab/streaming.cuh>
#include <scanlab/streaming/pipeline.cuh>
#include <scanlab/streaming/reduce.cuh>
#include <scanlab/streaming/scan.cuh>
#include <scanlab/streaming/select.cuh>
#include <scanlab/streaming/sort.cuh>
#include <scanlab/tuning.hpp>
#include <scanlab/warp/warp_reduce.cuh>
#include <scanlab/warp/warp_scan.cuh>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace arches {

struct is_positive {
  template <class T>
  __host__ __device__ bool operator()(const T& x) const {
    return x > T(0);
  }
};

struct square {
  template <class T>
  __host__ __device__ T operator()(const T& x) const {
    return x * x;
  }
};

// The warp and block building blocks inside a kernel of our own.
template <class T>
__global__ void building_blocks_kernel(const T* in, T* out) {
  using block_reduce = scanlab::block_reduce<T, 128>;
  using block_scan = scanlab::block_scan<T, 128>;
  __shared__ typename block_reduce::temp_storage reduce_storage;
  __shared__ typename block_scan::temp_storage scan_storage;
  const T x = in[threadIdx.x];
  const T total = block_reduce(reduce_storage).reduce(x, scanlab::plus{});
  const T prefix = block_scan(scan_storage).inclusive_scan(x, scanlab::plus{});
  const T warp_total = scanlab::warp_reduce(x, scanlab::plus{});
  const T warp_prefix = scanlab::warp_inclusive_scan(x, scanlab::plus{});
  out[threadIdx.x] = total + prefix + warp_total + warp_prefix;
}

// The first failed call of a sequence of calls (the later ones still run: every entry
// point is instantiated whatever an earlier one returns).
struct first_error {
  cudaError_t status = cudaSuccess;
  void operator()(cudaError_t e) {
    if (status == cudaSuccess) status = e;
  }
};

// Device-wide algorithms for keys/values of type T. Every status is folded into one so
// that nothing is discarded; the function is never called.
template <class T>
cudaError_t device_wide(void* d_temp, std::size_t& bytes, const T* d_in, T* d_out, T* d_out2, std::int64_t* d_count,
                        std::int64_t n, cudaStream_t stream) {
  first_error keep;
  keep(scanlab::reduce(d_temp, bytes, d_in, d_out, n, T(0), scanlab::plus{}, stream));
  keep(scanlab::reduce_min(d_temp, bytes, d_in, d_out, n, stream));
  keep(scanlab::reduce_max(d_temp, bytes, d_in, d_out, n, stream));
  keep(scanlab::transform_reduce(d_temp, bytes, d_in, d_out, n, T(0), scanlab::plus{}, square{}, stream));
  keep(scanlab::segmented_reduce(d_temp, bytes, d_in, d_out, n, d_count, T(0), scanlab::plus{}, stream));
  keep(scanlab::reduce_sum(d_temp, bytes, scanlab::counting_iterator<T>(T(0)), d_out, n, stream));
  keep(scanlab::inclusive_scan(d_temp, bytes, d_in, d_out, n, scanlab::plus{}, stream));
  keep(scanlab::exclusive_scan(d_temp, bytes, d_in, d_out, n, T(0), scanlab::maximum{}, stream));
  keep(scanlab::inclusive_sum(d_temp, bytes, d_in, d_out, n, stream));
  keep(scanlab::exclusive_sum(d_temp, bytes, d_in, d_out, n, stream));
  keep(scanlab::inclusive_scan_init(d_temp, bytes, d_in, d_out, n, T(1), scanlab::plus{}, stream));
  keep(scanlab::inclusive_scan_by_key(d_temp, bytes, d_in, d_in, d_out, n, scanlab::plus{}, stream));
  keep(scanlab::exclusive_scan_by_key(d_temp, bytes, d_in, d_in, d_out, n, T(0), scanlab::minimum{}, stream));
  keep(scanlab::inclusive_segmented_scan_init(d_temp, bytes, d_in, d_out, n, std::int64_t{2}, d_in, T(0),
                                              scanlab::plus{}, stream));
  keep(scanlab::select_if(d_temp, bytes, d_in, d_out, d_count, n, is_positive{}, stream));
  keep(scanlab::remove_if(d_temp, bytes, d_in, d_out, d_count, n, is_positive{}, stream));
  keep(scanlab::select_flagged(d_temp, bytes, d_in, d_in, d_out, d_count, n, stream));
  keep(scanlab::unique(d_temp, bytes, d_in, d_out, d_count, n, stream));
  keep(scanlab::select_if_pairs(d_temp, bytes, d_in, d_in, d_out, d_out2, d_count, n, is_positive{}, stream));
  keep(scanlab::remove_if_pairs(d_temp, bytes, d_in, d_in, d_out, d_out2, d_count, n, is_positive{}, stream));
  keep(scanlab::select_flagged_pairs(d_temp, bytes, d_in, d_in, d_in, d_out, d_out2, d_count, n, stream));
  keep(scanlab::unique_by_key(d_temp, bytes, d_in, d_in, d_out, d_out2, d_count, n, stream));
  keep(scanlab::partition(d_temp, bytes, d_in, d_out, d_count, n, is_positive{}, stream));
  keep(scanlab::stable_partition(d_temp, bytes, d_in, d_out, d_count, n, is_positive{}, stream));
  keep(scanlab::partition_copy(d_temp, bytes, d_in, d_out, d_out2, d_count, n, is_positive{}, stream));
  keep(scanlab::partition_three_way(d_temp, bytes, d_in, d_out, d_count, n, T(0)));
  keep(scanlab::stable_partition_three_way(d_temp, bytes, d_in, d_out, d_count, n, T(0)));
  keep(scanlab::quicksort(d_temp, bytes, d_in, d_out, n, stream));
  keep(scanlab::quicksort_pairs(d_temp, bytes, d_in, d_out, d_in, d_out2, n, stream));
  keep(scanlab::radix_sort_keys(d_temp, bytes, d_in, d_out, n, {}, stream));
  keep(scanlab::radix_sort_pairs(d_temp, bytes, d_in, d_out, d_in, d_out2, n, {}, stream));
  keep(scanlab::radix_argsort(d_temp, bytes, d_in, d_count, n, {}, stream, d_out));
  const std::int64_t run_offsets[] = {0, n / 3, n / 2, n};
  keep(scanlab::merge_keys(d_temp, bytes, d_in, n / 2, d_in + n / 2, n - n / 2, d_out, stream));
  keep(scanlab::merge_pairs(d_temp, bytes, d_in, d_in, n / 2, d_in + n / 2, d_in + n / 2, n - n / 2, d_out, d_out2,
                            stream));
  keep(scanlab::merge_runs_keys(d_temp, bytes, d_in, run_offsets, d_out, stream));
  keep(scanlab::merge_runs_pairs(d_temp, bytes, d_in, d_in, run_offsets, d_out, d_out2, stream));
  keep(scanlab::ladder::reduce(scanlab::ladder::rung::warp_shuffle, d_in, d_out, n, T(0), scanlab::plus{}, d_temp,
                               bytes, 256, stream));
  for (const auto rung : scanlab::ladder::all_rungs) {
    keep(scanlab::ladder::reduce(rung, d_in, d_out, n, T(0), scanlab::plus{}, d_temp, bytes, 256, stream));
  }
  for (const auto variant : scanlab::ladder::scan_variants) {
    keep(scanlab::ladder::scan(variant, scanlab::ladder::scan_kind::inclusive, d_temp, bytes, d_in, d_out, n, T(0),
                               scanlab::plus{}, stream));
  }
  building_blocks_kernel<T><<<1, 128, 0, stream>>>(d_in, d_out);
  return keep.status;
}

template <class T>
cudaError_t recurrences(void* d_temp, std::size_t& bytes, const T* d_a, const T* d_b, T* d_x, std::int64_t n,
                        cudaStream_t stream);

// The floating-point algorithms: norms and linear recurrences.
template <class T>
cudaError_t floating(void* d_temp, std::size_t& bytes, const T* d_a, const T* d_b, T* d_x, std::int64_t n,
                     cudaStream_t stream) {
  first_error keep;
  keep(scanlab::dot(d_temp, bytes, d_a, d_b, d_x, n, stream));
  keep(scanlab::sum_squares(d_temp, bytes, d_a, d_x, n, stream));
  keep(scanlab::l2_norm(d_temp, bytes, d_a, d_x, n, stream));
  keep(scanlab::rms(d_temp, bytes, d_a, d_x, n, stream));
  keep(scanlab::rms_diff(d_temp, bytes, d_a, d_b, d_x, n, stream));
  keep(scanlab::dot(d_temp, bytes, std::span<const T>(d_a, 4), std::span<const T>(d_b, 4), d_x, stream));
  keep(recurrences(d_temp, bytes, d_a, d_b, d_x, n, stream));
  return keep.status;
}

// Linear recurrences over every element type: float, double, the 16-bit storage types
// (computed in float; bfloat16's conversions have a software path before sm_80) and complex.
template <class T>
cudaError_t recurrences(void* d_temp, std::size_t& bytes, const T* d_a, const T* d_b, T* d_x, std::int64_t n,
                        cudaStream_t stream) {
  first_error keep;
  keep(scanlab::linear_recurrence(d_temp, bytes, d_a, d_b, d_x, n, T(0), stream));
  keep(scanlab::linear_recurrence_batched(d_temp, bytes, d_a, d_b, d_x, n, n, scanlab::batch_layout::interleaved,
                                          d_a, stream));
  keep(scanlab::linear_recurrence_lambda(d_temp, bytes, d_a, d_b, d_x, n, T(0), stream));
  keep(scanlab::linear_recurrence_lambda_batched(d_temp, bytes, d_a, d_b, d_x, n, n,
                                                 scanlab::batch_layout::row_major, d_a, stream));
  keep(scanlab::exponential_moving_average(d_temp, bytes, d_a, d_x, n, T(0.5), T(0), stream));
  keep(scanlab::exponential_moving_average_batched(d_temp, bytes, d_a, d_x, n, n, scanlab::batch_layout::row_major,
                                                   T(0.5), d_a, stream));
  keep(scanlab::linear_recurrence_final(d_temp, bytes, d_a, d_b, d_x, n, T(0), stream));
  keep(scanlab::linear_recurrence_final_batched(d_temp, bytes, d_a, d_b, d_x, n, n, scanlab::batch_layout::row_major,
                                                d_a, stream));
  keep(scanlab::linear_recurrence_reverse(d_temp, bytes, d_a, d_b, d_x, n, T(0), stream));
  keep(scanlab::linear_recurrence_reverse_batched(d_temp, bytes, d_a, d_b, d_x, n, n,
                                                  scanlab::batch_layout::interleaved, d_a, stream));
  keep(scanlab::linear_recurrence_backward(d_temp, bytes, d_a, d_b, d_a, d_x, d_x, d_x, n, T(0), stream));
  keep(scanlab::linear_recurrence_backward_batched(d_temp, bytes, d_a, d_b, d_a, d_x, d_x, d_x, n, n,
                                                   scanlab::batch_layout::interleaved, d_b, stream));
  // Channels-last batches and variable-length sequences (offsets: d_x's bytes stand in).
  const auto* offsets = reinterpret_cast<const std::int64_t*>(d_x);
  keep(scanlab::linear_recurrence_channels_last(d_temp, bytes, d_a, d_b, d_x, n, n, n, d_a, stream));
  keep(scanlab::linear_recurrence_reverse_channels_last(d_temp, bytes, d_a, d_b, d_x, n, n, n, d_a, stream));
  keep(scanlab::linear_recurrence_backward_channels_last(d_temp, bytes, d_a, d_b, d_a, d_x, d_x, d_x, n, n, n, d_b,
                                                         stream));
  keep(scanlab::linear_recurrence_varlen(d_temp, bytes, d_a, d_b, d_x, d_x, offsets, n, n, d_a, stream));
  keep(scanlab::linear_recurrence_reverse_varlen(d_temp, bytes, d_a, d_b, d_x, d_x, offsets, n, n, d_a, stream));
  keep(scanlab::linear_recurrence_backward_varlen(d_temp, bytes, d_a, d_b, d_a, d_x, d_x, d_x, offsets, n, n, d_b,
                                                  stream));
  keep(scanlab::solve_linear_recurrence(d_temp, bytes, scanlab::linrec_ema(d_a, T(0.5)), nullptr, d_x,
                                        scanlab::linrec_channels_last{n, n, n}, d_a, T(0), stream));
  keep(scanlab::solve_linear_recurrence(d_temp, bytes, scanlab::linrec_reverse(scanlab::linrec_lambda(d_a, d_b)), d_x,
                                        d_x, scanlab::linrec_varlen{offsets, n, n}, d_a, T(0), stream));
  return keep.status;
}

// The distributed algorithms' kernels (the NCCL calls need no architecture).
struct odd_int {
  __host__ __device__ bool operator()(std::int32_t v) const { return (v & 1) != 0; }
};
inline scanlab::distributed::status distributed(const scanlab::distributed::communicator& comm, std::int32_t* d_a,
                                                std::int64_t* d_b, std::int64_t n, cudaStream_t stream) {
  namespace dist = scanlab::distributed;
  dist::selection sel;
  SCANLAB_DIST_TRY(dist::reduce(comm, d_a, n, d_b, std::int64_t{0}, scanlab::plus{}, stream));
  SCANLAB_DIST_TRY(dist::inclusive_scan(comm, d_a, d_a, n, scanlab::maximum{}, stream));
  SCANLAB_DIST_TRY(dist::exclusive_scan(comm, d_a, d_b, n, std::int64_t{0}, scanlab::plus{}, stream));
  SCANLAB_DIST_TRY(dist::select_if(comm, d_a, n, d_a, odd_int{}, sel, stream));
  SCANLAB_DIST_TRY(dist::sort_pairs(comm, d_a, d_a, d_b, d_b, n, stream));
  return dist::sort_keys(comm, d_b, d_b, n, stream);
}

// The streaming (out-of-core) forms over host arrays: their kernels (carry, gather, the
// merge's splitter search) and the in-memory algorithms they call.
inline cudaError_t streaming(float* h_x, std::uint32_t* h_k, std::int64_t n) {
  namespace ss = scanlab::streaming;
  ss::workspace ws(std::size_t{1} << 20);
  first_error keep;
  float total = 0;
  double squares = 0;
  std::int64_t kept = 0;
  keep(ss::reduce_sum(ws, h_x, n, total));
  keep(ss::reduce_max(ws, h_x, n, total));
  keep(ss::sum_squares(ws, h_x, n, squares));
  keep(ss::inclusive_sum(ws, h_x, h_x, n));
  keep(ss::exclusive_scan(ws, h_x, h_x, n, 0.0f, scanlab::maximum{}));
  keep(ss::select_if(ws, h_k, h_k, n, kept, odd_int{}));
  keep(ss::sort_keys(ws, h_k, h_k, n));
  keep(ss::sort_pairs(ws, h_k, h_k, h_k, h_k, n));
  return keep.status;
}

}  // namespace arches

// Referenced from a function with external linkage so that nothing is dropped before
// code generation.
cudaError_t scanlab_compile_arches_all(void* d_temp, std::size_t& bytes, std::int64_t n, cudaStream_t stream) {
  arches::first_error keep;
  keep(arches::device_wide<std::int32_t>(d_temp, bytes, nullptr, nullptr, nullptr, nullptr, n, stream));
  keep(arches::device_wide<float>(d_temp, bytes, nullptr, nullptr, nullptr, nullptr, n, stream));
  keep(arches::floating<float>(d_temp, bytes, nullptr, nullptr, nullptr, n, stream));
  keep(arches::floating<double>(d_temp, bytes, nullptr, nullptr, nullptr, n, stream));
  keep(arches::recurrences<__half>(d_temp, bytes, nullptr, nullptr, nullptr, n, stream));
  keep(arches::recurrences<__nv_bfloat16>(d_temp, bytes, nullptr, nullptr, nullptr, n, stream));
  keep(arches::recurrences<scanlab::complex<float>>(d_temp, bytes, nullptr, nullptr, nullptr, n, stream));
  keep(arches::recurrences<scanlab::complex<double>>(d_temp, bytes, nullptr, nullptr, nullptr, n, stream));
  scanlab::device_code_report report;
  keep(scanlab::check_device_code(0, report));
  const scanlab::distributed::communicator comm;
  keep(arches::distributed(comm, nullptr, nullptr, n, stream).cuda);
  keep(arches::streaming(nullptr, nullptr, n));
  return keep.status;
}
