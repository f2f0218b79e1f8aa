// Segmented prefix scans: scans that restart at every segment boundary, the segments given
// by keys (scan by key: a segment starts wherever the key changes) or by offsets.
//
//   std::size_t temp_bytes = 0;
//   SCANLAB_CHECK(scanlab::inclusive_scan_by_key(nullptr, temp_bytes, d_keys, d_in, d_out, n, scanlab::plus{}));
//   (allocate temp_bytes bytes at d_temp)
//   SCANLAB_CHECK(scanlab::inclusive_scan_by_key(d_temp, temp_bytes, d_keys, d_in, d_out, n, scanlab::plus{}));
//
// Within each segment [h, e): inclusive out[i] = in[h] op ... op in[i]; with an initial
// value (the *_init forms) init op in[h] op ... op in[i]; exclusive out[h] = init and
// out[i] = init op in[h] op ... op in[i - 1]. Every segment starts afresh from init.
//
// How. A segmented scan is an ordinary scan of (value, head) pairs under the operator
//   (a, fa) . (b, fb) = (fb ? b : a op b, fa or fb),
// which is associative whenever op is (it need not be commutative, and needs no
// identity). So the segmented forms run the production scan itself (device/scan_kernel.cuh,
// single pass, the same determinism) over pairs read through an input iterator, in two
// launches: first the segment heads become a bitmap in temp storage (one bit per item,
// n / 8 bytes: from the keys, or from the offsets by a clear and a scatter), then the scan
// reads the values and the bitmap. Keys are read once, in the first launch; the scan is one
// instantiation per value type and operator, whatever the keys' type. Values travel as
// their own type T; an exclusive scan reads in[i - 1] for item i.
//
// Contract: as scanlab/scan.cuh (two-phase temp storage; op(earlier, later); 64-bit n;
// nothing throws; only enqueues work on the stream), and:
//   * Keys: any type with == on the device; key i starts a segment when i == 0 or
//     !(keys[i - 1] == keys[i]) (so a NaN key, never equal to itself, is a segment of one).
//   * Offsets: num_segments + 1 values of any integer type, the layout of segmented_reduce:
//     a segment starts at 0 and at every offset (duplicates mark one boundary; offsets at or
//     past n, or below 0, mark none). With offsets that rise from 0 to n these are exactly
//     the segments [d_offsets[s], d_offsets[s + 1]); items before d_offsets[0] or from
//     d_offsets[num_segments] on are scanned as segments of their own (every output is
//     written).
//   * In place (d_out == d_in) is allowed for the inclusive forms, not for the exclusive ones.
#pragma once

#include <scanlab/device/scan_dispatch.cuh>
#include <scanlab/device/scan_policy.cuh>
#include <scanlab/detail/launch.cuh>
#include <scanlab/detail/util.cuh>
#include <scanlab/error.hpp>
#include <scanlab/functional.cuh>
#include <scanlab/tuning.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <type_traits>

namespace scanlab {

namespace segmented_detail {

using scan_detail::scan_kind;

// A value and whether it starts a segment: the element the underlying scan runs over. The
// flag is a whole word: a bool made the compiler move the pairs through local memory.
template <class T>
struct flagged {
  T value;
  std::uint32_t head;
};

// op on flagged values: a head cuts off everything before it.
template <class Op>
struct segmented_op {
  Op op;
  template <class T>
  __host__ __device__ flagged<T> operator()(const flagged<T>& a, const flagged<T>& b) const {
    return {b.head ? b.value : op(a.value, b.value), a.head | b.head};
  }
};

// Whether item i starts a segment: bit i of the bitmap (item 0 always does).
__device__ __forceinline__ bool is_head(const std::uint32_t* heads, std::int64_t i) {
  return i == 0 || ((heads[i >> 5] >> (i & 31)) & 1u) != 0;
}

// Item i of the scan: in[i] (as T) and its head flag; for inclusive_init, a head's value is
// init op in[i]; for exclusive, item i carries in[i - 1], a head carries init.
template <class InputIt, class T, class Op>
struct flagged_input {
  using value_type = flagged<T>;
  using difference_type = std::int64_t;
  using reference = value_type;
  using pointer = void;
  using iterator_category = std::random_access_iterator_tag;

  InputIt in;
  const std::uint32_t* heads;
  T init;
  Op op;
  scan_kind kind;

  __device__ value_type operator[](std::int64_t i) const {
    const bool head = is_head(heads, i);
    if (kind == scan_kind::exclusive) return {head ? init : static_cast<T>(in[i - 1]), head};
    const T x = static_cast<T>(in[i]);
    return {kind == scan_kind::inclusive_init && head ? op(init, x) : x, head};
  }
};

// Writes the value of each flagged result to out[i].
template <class OutputIt>
struct value_output {
  using value_type = void;
  using difference_type = std::int64_t;
  using reference = void;
  using pointer = void;
  using iterator_category = std::output_iterator_tag;

  struct slot {
    OutputIt out;
    std::int64_t i;
    template <class T>
    __device__ void operator=(const flagged<T>& f) const {
      out[i] = f.value;
    }
  };

  OutputIt out;
  __device__ slot operator[](std::int64_t i) const { return {out, i}; }
};

// The tile shape: the production scan's 256 threads and two blocks per SM, 16 pairs per
// thread (4 for values of 8 bytes or more; Turing's half as many), without loading the next
// tile ahead: pairs take more registers than values (a flag has a register of its own, and
// the per-slot warp scans carry pairs), and these are the largest tiles that do not spill
// at 128 registers (sm_90, ptxas -v: int32, int64, float, double and uint8 sums none; double
// maxima 8 bytes; 16-byte values 24).
template <class T>
struct segmented_scan_tuning {
  template <int Family>
  struct at {
    static constexpr int pairs = (sizeof(T) >= 8 ? 4 : 16) / (Family == 75 ? 2 : 1);
    using shape = device::scan_shape<flagged<T>, static_cast<int>(pairs * sizeof(flagged<T>))>;
    using type = device::scan_policy<256, shape::items, 2, false>;
  };
};

inline constexpr int heads_block_threads = 256;
inline constexpr std::int64_t heads_max_blocks = 8192;

inline unsigned heads_grid(std::int64_t items) {
  return static_cast<unsigned>(std::min(heads_max_blocks, std::max<std::int64_t>(
                                                              1, detail::ceil_div<std::int64_t>(items, heads_block_threads))));
}

// Word w of the bitmap: bit j is whether item 32w + j starts a segment. One warp per word,
// grid-stride; the load of keys[i - 1] mostly hits the lines the warp just read.
template <class KeyIt>
__global__ void __launch_bounds__(heads_block_threads) heads_from_keys_kernel(KeyIt keys, std::int64_t n,
                                                                               std::uint32_t* heads) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * heads_block_threads;
  const int lane = static_cast<int>(threadIdx.x % 32);
  for (std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * heads_block_threads + threadIdx.x - lane; base < n;
       base += stride) {
    const std::int64_t i = base + lane;
    const bool head = i < n && (i == 0 || !(keys[i - 1] == keys[i]));
    const unsigned bits = __ballot_sync(0xffffffffu, head);
    if (lane == 0) heads[base >> 5] = bits;
  }
}

// Sets the bit of every offset within [0, n) (the bitmap cleared before).
template <class OffsetIt>
__global__ void __launch_bounds__(heads_block_threads) heads_from_offsets_kernel(OffsetIt offsets, std::int64_t count,
                                                                                  std::int64_t n,
                                                                                  std::uint32_t* heads) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * heads_block_threads;
  for (std::int64_t s = static_cast<std::int64_t>(blockIdx.x) * heads_block_threads + threadIdx.x; s < count;
       s += stride) {
    const auto o = static_cast<std::int64_t>(offsets[s]);
    if (o >= 0 && o < n) atomicOr(heads + (o >> 5), 1u << (o & 31));
  }
}

// The shared body: sizes and carves temp storage ([slack][bitmap][the scan's]), has
// mark_heads(bitmap, words, stream) fill the bitmap, then scans the flagged items.
template <class InputIt, class OutputIt, class T, class Op, class MarkHeads>
[[nodiscard]] cudaError_t scan(void* d_temp, std::size_t& temp_bytes, InputIt d_in, OutputIt d_out, std::int64_t n,
                               scan_kind kind, T init, Op op, cudaStream_t stream, const single_pass_options& options,
                               MarkHeads&& mark_heads) {
  static_assert(std::is_trivially_copyable_v<T> && std::is_default_constructible_v<T>,
                "the value type must be trivially copyable and default constructible");
  if (!detail::valid_options(options) || n < 0) return cudaErrorInvalidValue;
  using input_t = flagged_input<InputIt, T, Op>;
  using output_t = value_output<OutputIt>;
  using tuning = segmented_scan_tuning<T>;
  const segmented_op<Op> pair_op{op};
  const auto dispatch_options = detail::to_dispatch_options<scan_detail::scan_options>(options);

  const std::int64_t words = detail::ceil_div<std::int64_t>(n, 32);
  const std::size_t bitmap_bytes = detail::align_up(static_cast<std::size_t>(words) * sizeof(std::uint32_t));
  std::size_t scan_bytes = 0;
  SCANLAB_TRY((scan_detail::dispatch_scan<tuning>(nullptr, scan_bytes, input_t{}, output_t{}, n, scan_kind::inclusive,
                                                  flagged<T>{}, pair_op, stream, dispatch_options)));
  if (const auto answer = detail::temp_storage_query(d_temp, temp_bytes, 256 + bitmap_bytes + scan_bytes)) {
    return *answer;
  }
  if (n == 0) return cudaSuccess;
  auto* base = reinterpret_cast<unsigned char*>(detail::align_up(reinterpret_cast<std::uintptr_t>(d_temp)));
  auto* heads = reinterpret_cast<std::uint32_t*>(base);
  SCANLAB_TRY(mark_heads(heads, words, stream));
  const input_t items{d_in, heads, init, op, kind};
  return scan_detail::dispatch_scan<tuning>(base + bitmap_bytes, scan_bytes, items, output_t{d_out}, n,
                                            scan_kind::inclusive, flagged<T>{}, pair_op, stream, dispatch_options);
}

template <class InputIt, class OutputIt, class T, class Op, class KeyIt>
[[nodiscard]] cudaError_t by_key(void* d_temp, std::size_t& temp_bytes, KeyIt d_keys, InputIt d_in, OutputIt d_out,
                                 std::int64_t n, scan_kind kind, T init, Op op, cudaStream_t stream,
                                 const single_pass_options& options) {
  return scan(d_temp, temp_bytes, d_in, d_out, n, kind, init, op, stream, options,
              [&](std::uint32_t* heads, std::int64_t words, cudaStream_t s) {
                return detail::launch(heads_from_keys_kernel<KeyIt>, heads_grid(words * 32), heads_block_threads, 0, s,
                                      d_keys, n, heads);
              });
}

template <class InputIt, class OutputIt, class T, class Op, class OffsetIt>
[[nodiscard]] cudaError_t by_offsets(void* d_temp, std::size_t& temp_bytes, InputIt d_in, OutputIt d_out,
                                     std::int64_t n, std::int64_t num_segments, OffsetIt d_offsets, scan_kind kind,
                                     T init, Op op, cudaStream_t stream, const single_pass_options& options) {
  if (num_segments < 0) return cudaErrorInvalidValue;
  return scan(d_temp, temp_bytes, d_in, d_out, n, kind, init, op, stream, options,
              [&](std::uint32_t* heads, std::int64_t words, cudaStream_t s) -> cudaError_t {
                SCANLAB_TRY(cudaMemsetAsync(heads, 0, static_cast<std::size_t>(words) * sizeof(std::uint32_t), s));
                return detail::launch(heads_from_offsets_kernel<OffsetIt>, heads_grid(num_segments + 1),
                                      heads_block_threads, 0, s, d_offsets, num_segments + 1, n, heads);
              });
}

template <class InputIt>
using value_t = std::remove_cv_t<typename std::iterator_traits<InputIt>::value_type>;

}  // namespace segmented_detail

// ---- by key: a segment starts wherever the key changes ----

// out[i] = in[h] op ... op in[i] (h: the first item of i's segment), in the input's value type.
template <class KeyIt, class InputIt, class OutputIt, class Op>
[[nodiscard]] cudaError_t inclusive_scan_by_key(void* d_temp, std::size_t& temp_bytes, KeyIt d_keys, InputIt d_in,
                                                OutputIt d_out, std::int64_t n, Op op, cudaStream_t stream = nullptr,
                                                const single_pass_options& options = {}) {
  using T = segmented_detail::value_t<InputIt>;
  return segmented_detail::by_key(d_temp, temp_bytes, d_keys, d_in, d_out, n, scan_detail::scan_kind::inclusive, T{},
                                  op, stream, options);
}

// out[i] = init op in[h] op ... op in[i], accumulated in T (init's type).
template <class KeyIt, class InputIt, class OutputIt, class T, class Op>
[[nodiscard]] cudaError_t inclusive_scan_by_key_init(void* d_temp, std::size_t& temp_bytes, KeyIt d_keys,
                                                     InputIt d_in, OutputIt d_out, std::int64_t n, T init, Op op,
                                                     cudaStream_t stream = nullptr,
                                                     const single_pass_options& options = {}) {
  return segmented_detail::by_key(d_temp, temp_bytes, d_keys, d_in, d_out, n, scan_detail::scan_kind::inclusive_init,
                                  init, op, stream, options);
}

// out[h] = init, out[i] = init op in[h] op ... op in[i - 1], accumulated in T (init's type).
template <class KeyIt, class InputIt, class OutputIt, class T, class Op>
[[nodiscard]] cudaError_t exclusive_scan_by_key(void* d_temp, std::size_t& temp_bytes, KeyIt d_keys, InputIt d_in,
                                                OutputIt d_out, std::int64_t n, T init, Op op,
                                                cudaStream_t stream = nullptr,
                                                const single_pass_options& options = {}) {
  return segmented_detail::by_key(d_temp, temp_bytes, d_keys, d_in, d_out, n, scan_detail::scan_kind::exclusive, init,
                                  op, stream, options);
}

// ---- by offsets: a segment starts at 0 and at every offset ----

template <class InputIt, class OutputIt, class OffsetIt, class Op>
[[nodiscard]] cudaError_t inclusive_segmented_scan(void* d_temp, std::size_t& temp_bytes, InputIt d_in,
                                                   OutputIt d_out, std::int64_t n, std::int64_t num_segments,
                                                   OffsetIt d_offsets, Op op, cudaStream_t stream = nullptr,
                                                   const single_pass_options& options = {}) {
  using T = segmented_detail::value_t<InputIt>;
  return segmented_detail::by_offsets(d_temp, temp_bytes, d_in, d_out, n, num_segments, d_offsets,
                                      scan_detail::scan_kind::inclusive, T{}, op, stream, options);
}

template <class InputIt, class OutputIt, class OffsetIt, class T, class Op>
[[nodiscard]] cudaError_t inclusive_segmented_scan_init(void* d_temp, std::size_t& temp_bytes, InputIt d_in,
                                                        OutputIt d_out, std::int64_t n, std::int64_t num_segments,
                                                        OffsetIt d_offsets, T init, Op op,
                                                        cudaStream_t stream = nullptr,
                                                        const single_pass_options& options = {}) {
  return segmented_detail::by_offsets(d_temp, temp_bytes, d_in, d_out, n, num_segments, d_offsets,
                                      scan_detail::scan_kind::inclusive_init, init, op, stream, options);
}

template <class InputIt, class OutputIt, class OffsetIt, class T, class Op>
[[nodiscard]] cudaError_t exclusive_segmented_scan(void* d_temp, std::size_t& temp_bytes, InputIt d_in,
                                                   OutputIt d_out, std::int64_t n, std::int64_t num_segments,
                                                   OffsetIt d_offsets, T init, Op op, cudaStream_t stream = nullptr,
                                                   const single_pass_options& options = {}) {
  return segmented_detail::by_offsets(d_temp, temp_bytes, d_in, d_out, n, num_segments, d_offsets,
                                      scan_detail::scan_kind::exclusive, init, op, stream, options);
}

}  // namespace scanlab
