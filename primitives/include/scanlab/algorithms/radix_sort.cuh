// Device-wide LSD radix sort: keys, key-value pairs, and argsort (the permutation).
//
//   std::size_t temp_bytes = 0;
//   SCANLAB_CHECK(scanlab::radix_sort_keys(nullptr, temp_bytes, d_in, d_out, n));
//   (allocate temp_bytes bytes at d_temp)
//   SCANLAB_CHECK(scanlab::radix_sort_keys(d_temp, temp_bytes, d_in, d_out, n));
//
//   scanlab::radix_sort_options o;  o.descending = true;  o.end_bit = 16;
//   scanlab::radix_sort_pairs(d_temp, temp_bytes, d_keys, d_keys_out, d_values, d_values_out, n, o, stream);
//   scanlab::radix_argsort(d_temp, temp_bytes, d_keys, d_permutation, n, o, stream);
//
// Contract, for every function below:
//   * Keys: uint8/16/32/64, int8/16/32/64, float, double. Values: any trivially copyable
//     type of 4 or 8 bytes (moved as raw bits). Argsort indices: int32, uint32, int64,
//     uint64 (n - 1 must fit).
//   * Order: ascending by default, descending with options.descending. Stable in both:
//     equal keys (and keys equal in the sorted bit range) keep their input order, and
//     their values move with them.
//   * Floats: -0.0 and +0.0 are equal keys (they keep their input order; each keeps its
//     sign). Every NaN (either sign, any payload) is greater than every number and equal
//     to every other NaN: NaNs come LAST in both orders, in their input order. The keys
//     are moved as bit patterns, never rewritten.
//   * Bit range: only bits [options.begin_bit, options.end_bit) of the key's ORDERED bits
//     take part (algorithms/radix_sort_common.cuh: the key itself for unsigned types, the
//     sign bit flipped for signed ones, the float transform above for floats; inverted for
//     descending). 8 bits per pass: a narrower range is proportionally faster.
//     0 <= begin_bit <= end_bit <= 8 * sizeof(Key); end_bit = -1 means all bits. An empty
//     range copies (argsort: the identity permutation).
//   * Two-phase temp storage, like the scans: with d_temp == nullptr only temp_bytes is
//     set (depends on n, the key and value sizes, the options and, for argsort, whether
//     d_keys_out is given: size and run with the same arguments); nothing is launched.
//     Argsort into 64-bit indices of at most 2^32 keys sorts 32-bit positions (4 bytes an
//     item less in every pass) and widens them at the end: 4n bytes more temp storage.
//     Otherwise d_temp holds temp_bytes bytes (any alignment, uninitialised); it is left
//     in an unspecified state. The call only enqueues work on `stream`.
//   * Inputs are only read; outputs must not overlap the inputs or each other.
//   * n is 64-bit (counts past 2^31 are fine); n = 0 does nothing.
//   * Deterministic: a sort's output is a function of its input (integer counts only).
//   * Errors: cudaErrorInvalidValue for n < 0, a bad bit range, too little temp storage,
//     or an argsort index type too narrow for n; otherwise the first failing CUDA status.
//   * Optional tuning (scanlab/tuning.hpp): the onesweep kernels' policy as first template
//     argument (radix_sort_policy below); refused with multipass.
//
// Two implementations (options.algorithm), the same results:
//   onesweep   (default) one histogram pass over the keys, then one single-pass kernel
//              per 8-bit digit: warp multi-split ranking, per-digit decoupled look-back
//              between tiles, scatter through shared memory (radix_sort_onesweep.cuh).
//              1-byte keys alone on all 8 bits are a counting sort there: the histogram's
//              digit starts, then one kernel that writes each value's run.
//   multipass  the classic three steps per digit, for teaching: block histograms, a
//              device-wide exclusive scan of the digit-major counts (scanlab::exclusive_sum),
//              a stable block-local sort by block-scan splits, a scatter
//              (radix_sort_multipass.cuh).
#pragma once

#include <scanlab/algorithms/radix_sort_common.cuh>
#include <scanlab/algorithms/radix_sort_multipass.cuh>
#include <scanlab/algorithms/radix_sort_onesweep.cuh>
#include <scanlab/tuning.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace scanlab {

enum class radix_sort_algorithm { onesweep, multipass };

struct radix_sort_options {
  bool descending = false;
  int begin_bit = 0;
  int end_bit = -1;  // -1: all 8 * sizeof(Key) bits
  radix_sort_algorithm algorithm = radix_sort_algorithm::onesweep;
};

namespace radix_sort_detail {

template <int Bytes>
using value_bits_t = typename unsigned_of_size<Bytes>::type;

// Checks the options against Key and fills in the request's transform and passes.
template <class Key, class Request>
[[nodiscard]] cudaError_t prepare(const radix_sort_options& options, std::int64_t n, Request& r) {
  constexpr int key_bits = 8 * static_cast<int>(sizeof(Key));
  const int end_bit = options.end_bit < 0 ? key_bits : options.end_bit;
  if (n < 0 || options.begin_bit < 0 || options.begin_bit > end_bit || end_bit > key_bits) {
    return cudaErrorInvalidValue;
  }
  r.n = n;
  r.transform = make_key_transform<Key>(options.descending);
  r.plan = pass_plan{options.begin_bit, end_bit};
  return cudaSuccess;
}

// Policy tunes onesweep; the multipass teaching path has one fixed shape and refuses a
// policy (cudaErrorInvalidValue) rather than ignore it.
template <class Policy, class Bits, bool IsFloat, class Value>
[[nodiscard]] cudaError_t run(void* d_temp, std::size_t& temp_bytes, const sort_request<Bits, IsFloat, Value>& r,
                              radix_sort_algorithm algorithm, cudaStream_t stream) {
  if (algorithm == radix_sort_algorithm::multipass) {
    if constexpr (!detail::is_default_policy<Policy>) return cudaErrorInvalidValue;
    else return multipass_sort(d_temp, temp_bytes, r, stream);
  }
  return onesweep_sort<detail::resolve_policy_t<Policy, void>>(d_temp, temp_bytes, r, stream);
}

// out[i] = in[i], widened: argsort's 32-bit positions into the caller's 64-bit indices.
template <class Wide, class Narrow>
__global__ void __launch_bounds__(256) widen_kernel(const Narrow* in, Wide* out, std::int64_t n) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = static_cast<Wide>(in[i]);
  }
}

// radix_argsort for 64-bit indices of n <= 2^32 keys: the positions travel as 4-byte
// values (every pass of a 4-byte key then moves 8 bytes an item, not 12) through a buffer
// in temp storage. Onesweep's last pass writes them widened into d_permutation; the
// multipass teaching path sorts into the buffer and one kernel widens them after it.
// Temp: the sort's plus 4n bytes.
template <class Policy, class Key, class Index>
[[nodiscard]] cudaError_t argsort_narrow(void* d_temp, std::size_t& temp_bytes, const Key* d_keys_in,
                                         Index* d_permutation, std::int64_t n, const radix_sort_options& options,
                                         cudaStream_t stream, Key* d_keys_out) {
  using Bits = key_bits_t<Key>;
  sort_request<Bits, std::is_floating_point_v<Key>, value_bits_t<4>> r;
  SCANLAB_TRY(prepare<Key>(options, n, r));
  r.keys_in = reinterpret_cast<const Bits*>(d_keys_in);
  r.keys_out = reinterpret_cast<Bits*>(d_keys_out);  // may be null
  r.values_in = nullptr;                               // the values are the input positions
  detail::temp_carver carve(d_temp);
  r.values_out = carve.take<value_bits_t<4>>(static_cast<std::size_t>(n));
  const bool fused = options.algorithm == radix_sort_algorithm::onesweep;
  if (fused) {
    static_assert(sizeof(Index) == sizeof(std::uint64_t));
    r.values_out_wide = reinterpret_cast<std::uint64_t*>(d_permutation);
  }
  std::size_t sort_bytes = 0;
  if (d_temp == nullptr) {
    SCANLAB_TRY(run<Policy>(nullptr, sort_bytes, r, options.algorithm, stream));
    carve.take<unsigned char>(sort_bytes);
    temp_bytes = carve.bytes();
    return cudaSuccess;
  }
  if (n > 0 && (d_keys_in == nullptr || d_permutation == nullptr)) return cudaErrorInvalidValue;
  SCANLAB_TRY(run<Policy>(nullptr, sort_bytes, r, options.algorithm, stream));
  unsigned char* sort_temp = carve.take<unsigned char>(sort_bytes);
  if (carve.bytes() > temp_bytes) return cudaErrorInvalidValue;
  SCANLAB_TRY(run<Policy>(sort_temp, sort_bytes, r, options.algorithm, stream));
  if (n == 0 || fused) return cudaSuccess;
  constexpr int threads = 256;
  const std::int64_t blocks = detail::ceil_div<std::int64_t>(n, threads * 8);
  return detail::launch(widen_kernel<Index, value_bits_t<4>>, dim3(static_cast<unsigned>(blocks < 65536 ? blocks : 65536)),
                        dim3(threads), 0, stream, static_cast<const value_bits_t<4>*>(r.values_out), d_permutation, n);
}

}  // namespace radix_sort_detail

// ---- tuning (optional: scanlab/tuning.hpp) -------------------------------------------------

// The onesweep kernels' tuning, given as the first template argument of every sort below
// (radix_sort_keys<my_policy>(...)). Left out (default_policy), a per-architecture table runs
// (onesweep_tuning in radix_sort_onesweep.cuh): radix_sort_policy<key bytes, value bytes>
// (the sm_90 measurements) with, on each family, the most blocks per SM up to its
// min_blocks_per_sm that the family holds (1 on Turing). A policy given here is one policy
// for every GPU (its min_blocks_per_sm capped, in the kernel's __launch_bounds__, at what
// the compiled family's threads per SM hold). To change a knob, derive from the default and
// redefine it, e.g. the warp multi-split's ranking:
//   struct match_ranking : scanlab::radix_sort_policy<4> {
//     static constexpr auto ranking = scanlab::radix_sort_ranking::match;
//   };
// Members: block_threads, items_per_thread, tile_items (= their product: redefine it with
// them), ranking, min_blocks_per_sm, histogram_threads, histogram_items,
// histogram_blocks_per_sm. A tile's keys (or values) must fit 48 KB of static shared memory.
// A policy applies to the onesweep algorithm only: with options.algorithm = multipass, a
// policy other than default_policy is cudaErrorInvalidValue.
template <int KeyBytes, int ValueBytes = 0>
using radix_sort_policy = radix_sort_detail::onesweep_policy<KeyBytes, ValueBytes>;
// How lanes with the same digit find each other: match (one __match_any_sync per key) or
// ballot (eight __ballot_sync per key; the default, faster unless a warp holds few digits).
using radix_sort_ranking = radix_sort_detail::onesweep_ranking;

// The unsigned integer the sort orders keys of type Key by (same size as Key).
template <class Key>
using radix_ordered_bits_t = radix_sort_detail::key_bits_t<Key>;

// The bits the sort compares for `key`, host or device: sorting keys by this unsigned value
// (stably) gives the sort's order, and bits [begin_bit, end_bit) of it are what a bit range
// sorts by. The key itself for unsigned types, the sign bit flipped for signed ones; floats:
// -0.0 as +0.0, every NaN all ones (last), negatives inverted; all bits inverted for
// descending except that NaNs stay all ones.
template <class Key>
__host__ __device__ inline radix_ordered_bits_t<Key> radix_ordered_bits(Key key, bool descending = false) {
  static_assert(radix_sort_detail::is_radix_key_v<Key>, "keys: 8- to 64-bit integers, float or double");
  return radix_sort_detail::ordered_bits(key, descending);
}

// d_keys_out = d_keys_in sorted.
template <class Policy = default_policy, class Key>
[[nodiscard]] cudaError_t radix_sort_keys(void* d_temp, std::size_t& temp_bytes, const Key* d_keys_in, Key* d_keys_out,
                                          std::int64_t n, const radix_sort_options& options = {},
                                          cudaStream_t stream = nullptr) {
  static_assert(radix_sort_detail::is_radix_key_v<Key>, "keys: 8- to 64-bit integers, float or double");
  using namespace radix_sort_detail;
  using Bits = key_bits_t<Key>;
  sort_request<Bits, std::is_floating_point_v<Key>, keys_only> r;
  SCANLAB_TRY(prepare<Key>(options, n, r));
  r.keys_in = reinterpret_cast<const Bits*>(d_keys_in);
  r.keys_out = reinterpret_cast<Bits*>(d_keys_out);
  if (d_temp != nullptr && n > 0 && (d_keys_in == nullptr || d_keys_out == nullptr)) return cudaErrorInvalidValue;
  return run<Policy>(d_temp, temp_bytes, r, options.algorithm, stream);
}

// The keys sorted, and the values in the same order: d_values_out[i] is the value that
// came with d_keys_out[i].
template <class Policy = default_policy, class Key, class Value>
[[nodiscard]] cudaError_t radix_sort_pairs(void* d_temp, std::size_t& temp_bytes, const Key* d_keys_in,
                                           Key* d_keys_out, const Value* d_values_in, Value* d_values_out,
                                           std::int64_t n, const radix_sort_options& options = {},
                                           cudaStream_t stream = nullptr) {
  static_assert(radix_sort_detail::is_radix_key_v<Key>, "keys: 8- to 64-bit integers, float or double");
  static_assert(std::is_trivially_copyable_v<Value> && (sizeof(Value) == 4 || sizeof(Value) == 8),
                "values: trivially copyable, 4 or 8 bytes");
  using namespace radix_sort_detail;
  using Bits = key_bits_t<Key>;
  using ValueBits = value_bits_t<static_cast<int>(sizeof(Value))>;
  sort_request<Bits, std::is_floating_point_v<Key>, ValueBits> r;
  SCANLAB_TRY(prepare<Key>(options, n, r));
  r.keys_in = reinterpret_cast<const Bits*>(d_keys_in);
  r.keys_out = reinterpret_cast<Bits*>(d_keys_out);
  r.values_in = reinterpret_cast<const ValueBits*>(d_values_in);
  r.values_out = reinterpret_cast<ValueBits*>(d_values_out);
  if (d_temp != nullptr && n > 0 &&
      (d_keys_in == nullptr || d_keys_out == nullptr || d_values_in == nullptr || d_values_out == nullptr)) {
    return cudaErrorInvalidValue;
  }
  return run<Policy>(d_temp, temp_bytes, r, options.algorithm, stream);
}

// The stable sorting permutation: d_keys_in[d_permutation[0]], d_keys_in[d_permutation[1]],
// ... is sorted. d_keys_out (optional) also receives the sorted keys.
template <class Policy = default_policy, class Key, class Index>
[[nodiscard]] cudaError_t radix_argsort(void* d_temp, std::size_t& temp_bytes, const Key* d_keys_in,
                                        Index* d_permutation, std::int64_t n, const radix_sort_options& options = {},
                                        cudaStream_t stream = nullptr, Key* d_keys_out = nullptr) {
  static_assert(radix_sort_detail::is_radix_key_v<Key>, "keys: 8- to 64-bit integers, float or double");
  static_assert(std::is_integral_v<Index> && (sizeof(Index) == 4 || sizeof(Index) == 8),
                "argsort indices: 32- or 64-bit integers");
  using namespace radix_sort_detail;
  using Bits = key_bits_t<Key>;
  using ValueBits = value_bits_t<static_cast<int>(sizeof(Index))>;
  if (n > 0 && static_cast<std::uint64_t>(n - 1) > static_cast<std::uint64_t>(std::numeric_limits<Index>::max())) {
    return cudaErrorInvalidValue;
  }
  if constexpr (sizeof(Index) == 8 && detail::is_default_policy<Policy>) {
    // Positions that fit 32 bits move as 4-byte values, widened once at the end (a policy
    // given for 8-byte values keeps them 8 bytes).
    if (n <= (std::int64_t{1} << 32)) {
      return radix_sort_detail::argsort_narrow<Policy>(d_temp, temp_bytes, d_keys_in, d_permutation, n, options,
                                                       stream, d_keys_out);
    }
  }
  sort_request<Bits, std::is_floating_point_v<Key>, ValueBits> r;
  SCANLAB_TRY(prepare<Key>(options, n, r));
  r.keys_in = reinterpret_cast<const Bits*>(d_keys_in);
  r.keys_out = reinterpret_cast<Bits*>(d_keys_out);  // may be null
  r.values_in = nullptr;                               // the values are the input positions
  r.values_out = reinterpret_cast<ValueBits*>(d_permutation);
  if (d_temp != nullptr && n > 0 && (d_keys_in == nullptr || d_permutation == nullptr)) return cudaErrorInvalidValue;
  return run<Policy>(d_temp, temp_bytes, r, options.algorithm, stream);
}

}  // namespace scanlab
