// scanlab_py::select and scanlab_py::unique_consecutive: scanlab's single-pass stream
// compaction (scanlab/algorithms/select.cuh).
//
// Kernels, to keep this file's compile time modest: the range test (typed.cuh: in_range)
// once per element type, keys alone and with positions; the flags form once per item size
// (a flagged item is moved as a raw word: the six types need two); unique once per kind of
// equality (integers compared as words of their size, float and double as themselves:
// NaN != NaN, -0.0 == +0.0).
#include "typed.cuh"

#include <scanlab/algorithms/select.cuh>
#include <scanlab/detail/launch.cuh>
#include <scanlab/detail/util.cuh>
#include <scanlab/error.hpp>
#include <scanlab/iterator.cuh>

#include <algorithm>

namespace scanlab_py {
namespace {

using positions = scanlab::counting_iterator<std::int64_t>;

// The unsigned word of T's size: what a copy of T moves, and integer equality.
template <class T>
using word_t = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
// What unique compares: floats as floats, integers as words.
template <class T>
using equality_t = std::conditional_t<std::is_floating_point_v<T>, T, word_t<T>>;

template <class T>
cudaError_t select_typed(const void* d_in, const void* d_flags, scalar lo, scalar hi, void* d_out,
                         std::int64_t* d_indices, std::int64_t* d_count, std::int64_t n, void* d_temp,
                         std::size_t& temp_bytes, cudaStream_t stream) {
  if (d_flags != nullptr) {
    using W = word_t<T>;
    const auto* in = static_cast<const W*>(d_in);
    auto* out = static_cast<W*>(d_out);
    const auto* flags = static_cast<const std::uint8_t*>(d_flags);
    if (d_indices == nullptr) return scanlab::select_flagged(d_temp, temp_bytes, in, flags, out, d_count, n, stream);
    return scanlab::select_flagged_pairs(d_temp, temp_bytes, in, positions(0), flags, out, d_indices, d_count, n,
                                         stream);
  }
  const auto* in = static_cast<const T*>(d_in);
  auto* out = static_cast<T*>(d_out);
  const in_range<T> test = read_range<T>(lo, hi);
  if (d_indices == nullptr) return scanlab::select_if(d_temp, temp_bytes, in, out, d_count, n, test, stream);
  return scanlab::select_if_pairs(d_temp, temp_bytes, in, positions(0), out, d_indices, d_count, n, test, stream);
}

// lengths[k] = starts[k + 1] - starts[k] for the *count runs (the last one ends at n).
__global__ void run_lengths_kernel(const std::int64_t* starts, const std::int64_t* count, std::int64_t n,
                                   std::int64_t* lengths) {
  const std::int64_t runs = *count;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < runs; k += step) {
    lengths[k] = (k + 1 < runs ? starts[k + 1] : n) - starts[k];
  }
}

template <class T>
cudaError_t unique_typed(const void* d_in, void* d_out, std::int64_t* d_run_lengths, std::int64_t* d_count,
                         std::int64_t n, void* d_temp, std::size_t& temp_bytes, cudaStream_t stream) {
  using E = equality_t<T>;
  const auto* in = static_cast<const E*>(d_in);
  auto* out = static_cast<E*>(d_out);
  if (d_run_lengths == nullptr) return scanlab::unique(d_temp, temp_bytes, in, out, d_count, n, stream);
  // With run lengths: the position of each run's first item (unique_by_key with the
  // positions as values) into temp storage, then their differences. Temp storage:
  // [n starts | unique_by_key's own].
  scanlab::detail::temp_carver carver(d_temp);
  std::int64_t* starts = carver.take<std::int64_t>(static_cast<std::size_t>(n));
  std::size_t select_bytes = 0;
  SCANLAB_TRY(scanlab::unique_by_key(nullptr, select_bytes, in, positions(0), out, starts, d_count, n, stream));
  void* select_temp = carver.take<unsigned char>(select_bytes);
  if (const auto answer = scanlab::detail::temp_storage_query(d_temp, temp_bytes, carver.bytes())) return *answer;
  SCANLAB_TRY(scanlab::unique_by_key(select_temp, select_bytes, in, positions(0), out, starts, d_count, n, stream));
  if (n == 0) return cudaSuccess;
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((n + 255) / 256, 4096));
  return scanlab::detail::launch(run_lengths_kernel, blocks, 256, 0, stream, static_cast<const std::int64_t*>(starts),
                                 static_cast<const std::int64_t*>(d_count), n, d_run_lengths);
}

}  // namespace

cudaError_t select(dtype t, const void* d_in, const void* d_flags, scalar lo, scalar hi, void* d_out,
                   std::int64_t* d_indices, std::int64_t* d_count, std::int64_t n, void* d_temp,
                   std::size_t& temp_bytes, cudaStream_t stream) {
  return visit(t, [&](auto tag) {
    return select_typed<typename decltype(tag)::type>(d_in, d_flags, lo, hi, d_out, d_indices, d_count, n, d_temp,
                                                      temp_bytes, stream);
  });
}

cudaError_t unique_consecutive(dtype t, const void* d_in, void* d_out, std::int64_t* d_run_lengths,
                               std::int64_t* d_count, std::int64_t n, void* d_temp, std::size_t& temp_bytes,
                               cudaStream_t stream) {
  return visit(t, [&](auto tag) {
    return unique_typed<typename decltype(tag)::type>(d_in, d_out, d_run_lengths, d_count, n, d_temp, temp_bytes,
                                                      stream);
  });
}

}  // namespace scanlab_py
