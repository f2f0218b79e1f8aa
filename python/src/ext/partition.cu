// scanlab_py::partition_two_way and partition_three_way: scanlab's single-pass partitions
// (scanlab/algorithms/partition.cuh). The two-way test is typed.cuh's closed range (one
// kernel per element type, the stable and the reversed layouts share it); the three-way one
// scanlab::nan_last_less around the pivot.
#include "typed.cuh"

#include <scanlab/algorithms/partition.cuh>
#include <scanlab/detail/launch.cuh>
#include <scanlab/error.hpp>

namespace scanlab_py {
namespace {

// counts[1] = n - counts[0]: the two-way partition writes the first part's size only.
__global__ void rest_count_kernel(std::int64_t* counts, std::int64_t n) { counts[1] = n - counts[0]; }

template <class T>
cudaError_t two_way_typed(const void* d_in, void* d_out, std::int64_t* d_counts, std::int64_t n, scalar lo, scalar hi,
                          bool stable, void* d_temp, std::size_t& temp_bytes, cudaStream_t stream) {
  const auto* in = static_cast<const T*>(d_in);
  auto* out = static_cast<T*>(d_out);
  const in_range<T> test = read_range<T>(lo, hi);
  SCANLAB_TRY(stable ? scanlab::stable_partition(d_temp, temp_bytes, in, out, d_counts, n, test, stream)
                     : scanlab::partition(d_temp, temp_bytes, in, out, d_counts, n, test, stream));
  if (d_temp == nullptr) return cudaSuccess;
  return scanlab::detail::launch(rest_count_kernel, 1, 1, 0, stream, d_counts, n);
}

template <class T>
cudaError_t three_way_typed(const void* d_in, void* d_out, std::int64_t* d_counts, std::int64_t n, scalar pivot,
                            bool stable, void* d_temp, std::size_t& temp_bytes, cudaStream_t stream) {
  const auto* in = static_cast<const T*>(d_in);
  auto* out = static_cast<T*>(d_out);
  const T p = read_scalar<T>(pivot);
  const scanlab::nan_last_less less{};
  return stable ? scanlab::stable_partition_three_way(d_temp, temp_bytes, in, out, d_counts, n, p, less, stream)
                : scanlab::partition_three_way(d_temp, temp_bytes, in, out, d_counts, n, p, less, stream);
}

}  // namespace

cudaError_t partition_two_way(dtype t, const void* d_in, void* d_out, std::int64_t* d_counts, std::int64_t n,
                              scalar lo, scalar hi, bool stable, void* d_temp, std::size_t& temp_bytes,
                              cudaStream_t stream) {
  return visit(t, [&](auto tag) {
    return two_way_typed<typename decltype(tag)::type>(d_in, d_out, d_counts, n, lo, hi, stable, d_temp, temp_bytes,
                                                       stream);
  });
}

cudaError_t partition_three_way(dtype t, const void* d_in, void* d_out, std::int64_t* d_counts, std::int64_t n,
                                scalar pivot, bool stable, void* d_temp, std::size_t& temp_bytes,
                                cudaStream_t stream) {
  return visit(t, [&](auto tag) {
    return three_way_typed<typename decltype(tag)::type>(d_in, d_out, d_counts, n, pivot, stable, d_temp, temp_bytes,
                                                         stream);
  });
}

}  // namespace scanlab_py
