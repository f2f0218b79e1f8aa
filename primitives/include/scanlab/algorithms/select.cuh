// scanlab/algorithms/select.cuh: stream compaction. Keep the items that satisfy a
// predicate (select_if), that carry a nonzero flag (select_flagged), that differ from
// their predecessor (unique), or that fail a predicate (remove_if); in order, with the
// count written to the device. Keys alone, or key-value pairs (the pair forms decide on
// the key and move the value with it).
//
//   std::int64_t* d_count;   // device memory for the count
//   std::size_t temp_bytes = 0;
//   SCANLAB_CHECK(scanlab::select_if(nullptr, temp_bytes, d_in, d_out, d_count, n, is_positive{}, stream));
//   ... allocate temp_bytes at d_temp ...
//   SCANLAB_CHECK(scanlab::select_if(d_temp, temp_bytes, d_in, d_out, d_count, n, is_positive{}, stream));
//   std::int64_t count = 0;
//   SCANLAB_CHECK(scanlab::read_num_selected(d_count, count, stream));   // waits for the stream
//
// Contract, for every function below:
//   * Stable: the kept items appear in their input order. d_out receives exactly
//     *d_num_selected items; nothing is written past them, so an output buffer exactly as
//     long as the count is enough (an upper bound such as n is the caller's usual choice).
//   * Two-phase temp storage, as in CUB: with d_temp == nullptr only temp_bytes is set (at
//     least 1; it depends on n and the types only); nothing is launched. Otherwise d_temp
//     must hold temp_bytes bytes (any alignment, uninitialised is fine). Everything is
//     enqueued on `stream`: no synchronisation, no allocation. Returns the first failing
//     CUDA status (cudaErrorInvalidValue for n < 0, too little temp storage, or a null
//     d_num_selected). Nothing throws.
//   * Counts are 64-bit: n and *d_num_selected (an std::int64_t in device memory, written
//     once the call's work is done, also for n == 0). Inputs past 2^32 items are fine
//     (they are processed in chunks of just under 2^32 items, one launch each).
//   * Types: keys and values trivially copyable, at most 16 bytes each. Iterators are read
//     as their value type (counting_iterator and transform_iterator work); raw pointers
//     get one access of 16 bytes per lane (or the chunk's size for pairs of unequal sizes)
//     where aligned, element accesses otherwise. Outputs are written element-wise.
//   * The predicate is called on the device as pred(key) -> convertible to bool, may be
//     called more than once per item and on padding copies of real items; it must not
//     have side effects. Flags are any type convertible to bool (nonzero = keep).
//     unique's equality eq(a, b) must be an equivalence for the result to mean "drop
//     consecutive duplicates"; the default is a == b (so NaNs are never duplicates).
//   * No overlap: outputs must not overlap inputs (no in-place compaction).
//   * Deterministic: the output depends only on the input.
//   * One pass: keys (and values, flags) are read once; the output written once; about
//     8 bytes of temp storage per tile of 8192 four-byte items. One launch per chunk (a
//     single block for inputs of one tile, otherwise a cooperative grid; a memset and a
//     regular grid where cooperative launch is unavailable or refused).
//   * Optional tuning (scanlab/tuning.hpp): a tile shape as first template argument
//     (select_policy below) and single_pass_options as last argument; see "tuning" below.
//   The same entry points, computed the classic way (flags, scanlab's exclusive scan,
//   scatter), are in scanlab/algorithms/select_three_phase.cuh (scanlab::three_phase).
#pragma once

#include <scanlab/algorithms/select_kernels.cuh>
#include <scanlab/error.hpp>
#include <scanlab/tuning.hpp>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace scanlab {

namespace select_detail {

template <class It>
using key_of = iterator_value_t<It>;

template <class KeyIt, class ValueIt>
using policy_for = default_select_policy<key_of<KeyIt>, std::conditional_t<is_none<ValueIt>, none, key_of<ValueIt>>>;

template <class KeyIt, class ValueIt>
constexpr void check_types() {
  using K = key_of<KeyIt>;
  static_assert(std::is_trivially_copyable_v<K> && sizeof(K) <= 16, "keys: trivially copyable, at most 16 bytes");
  if constexpr (!is_none<ValueIt>) {
    using V = key_of<ValueIt>;
    static_assert(std::is_trivially_copyable_v<V> && sizeof(V) <= 16, "values: trivially copyable, at most 16 bytes");
  }
}

template <class Policy, class KeyIt, class ValueIt, class FlagIt, class KeyOut, class ValueOut, class Selector>
[[nodiscard]] cudaError_t run(void* d_temp, std::size_t& temp_bytes, KeyIt keys_in, ValueIt values_in, FlagIt flags,
                              KeyOut keys_out, ValueOut values_out, std::int64_t* d_num_selected, std::int64_t n,
                              Selector selector, cudaStream_t stream, const single_pass_options& options) {
  check_types<KeyIt, ValueIt>();
  if (!detail::valid_options(options)) return cudaErrorInvalidValue;
  using policy = detail::resolve_policy_t<Policy, policy_for<KeyIt, ValueIt>>;
  return dispatch_select<policy>(d_temp, temp_bytes, keys_in, values_in, flags, keys_out, values_out, d_num_selected,
                                 n, selector, stream, detail::to_dispatch_options<select_options>(options));
}

}  // namespace select_detail

// ---- tuning (optional: scanlab/tuning.hpp) -------------------------------------------------

// A tile shape for every function below, given as their first template argument:
//   scanlab::select_if<scanlab::select_policy<256, 16, 4, 3>>(d_temp, temp_bytes, ...)
// BlockThreads x ItemsPerThread items per tile, read in accesses of Chunk consecutive items
// (a whole number of chunks per thread; Chunk * sizeof(widest of key and value) at most 16
// bytes), MinBlocksPerSm for __launch_bounds__, Prefetch: the next tile's loads issued
// before the look-back, StagingBuffers: shared-memory staging tiles (0: two where they fit),
// L2Ahead: tiles of keys asked of L2 beyond the prefetched one (0: none). Left out (default_policy), the tuned shape for the key and value types is used
// (default_select_policy: the per-architecture table in select_kernels.cuh, primitives/docs/compact.md).
template <int BlockThreads, int ItemsPerThread, int Chunk, int MinBlocksPerSm, bool Prefetch = true,
          int StagingBuffers = 0, int L2Ahead = 0>
using select_policy = select_detail::select_policy<BlockThreads, ItemsPerThread, Chunk, MinBlocksPerSm, Prefetch,
                                                   StagingBuffers, L2Ahead>;

// The tuned shape for keys K and values V (V = void: keys only).
template <class K, class V = void>
using default_select_policy =
    select_detail::default_select_policy<K, std::conditional_t<std::is_void_v<V>, select_detail::none, V>>;

// Every function below also takes an optional last argument, single_pass_options (launch
// mode, grid cap: benchmark and test knobs, scanlab/tuning.hpp).

// ---- keys ---------------------------------------------------------------------------

// d_out gets the d_in[i] for which pred(d_in[i]) is true, in order.
template <class Policy = default_policy, class InputIt, class OutputIt, class Pred>
[[nodiscard]] cudaError_t select_if(void* d_temp, std::size_t& temp_bytes, InputIt d_in, OutputIt d_out,
                                    std::int64_t* d_num_selected, std::int64_t n, Pred pred,
                                    cudaStream_t stream = nullptr, const single_pass_options& options = {}) {
  using namespace select_detail;
  return run<Policy>(d_temp, temp_bytes, d_in, none_iterator{}, none_iterator{}, d_out, none_iterator{}, d_num_selected,
                     n, predicate_selector<Pred, true>{pred}, stream, options);
}

// d_out gets the d_in[i] for which pred(d_in[i]) is false, in order.
template <class Policy = default_policy, class InputIt, class OutputIt, class Pred>
[[nodiscard]] cudaError_t remove_if(void* d_temp, std::size_t& temp_bytes, InputIt d_in, OutputIt d_out,
                                    std::int64_t* d_num_selected, std::int64_t n, Pred pred,
                                    cudaStream_t stream = nullptr, const single_pass_options& options = {}) {
  using namespace select_detail;
  return run<Policy>(d_temp, temp_bytes, d_in, none_iterator{}, none_iterator{}, d_out, none_iterator{}, d_num_selected,
                     n, predicate_selector<Pred, false>{pred}, stream, options);
}

// d_out gets the d_in[i] whose d_flags[i] converts to true, in order.
template <class Policy = default_policy, class InputIt, class FlagIt, class OutputIt>
[[nodiscard]] cudaError_t select_flagged(void* d_temp, std::size_t& temp_bytes, InputIt d_in, FlagIt d_flags,
                                         OutputIt d_out, std::int64_t* d_num_selected, std::int64_t n,
                                         cudaStream_t stream = nullptr, const single_pass_options& options = {}) {
  using namespace select_detail;
  return run<Policy>(d_temp, temp_bytes, d_in, none_iterator{}, d_flags, d_out, none_iterator{}, d_num_selected, n,
                     flags_selector{}, stream, options);
}

// d_out gets d_in[0] and every d_in[i] with !eq(d_in[i-1], d_in[i]): consecutive duplicates
// dropped (the first of each run kept).
template <class Policy = default_policy, class InputIt, class OutputIt, class EqualOp = select_detail::equal_to>
[[nodiscard]] cudaError_t unique(void* d_temp, std::size_t& temp_bytes, InputIt d_in, OutputIt d_out,
                                 std::int64_t* d_num_selected, std::int64_t n, cudaStream_t stream = nullptr,
                                 EqualOp eq = {}, const single_pass_options& options = {}) {
  using namespace select_detail;
  return run<Policy>(d_temp, temp_bytes, d_in, none_iterator{}, none_iterator{}, d_out, none_iterator{}, d_num_selected,
                     n, unique_selector<EqualOp>{eq}, stream, options);
}

// ---- key-value pairs: the decision is made on the key ----------------------------------

template <class Policy = default_policy, class KeyIt, class ValueIt, class KeyOut, class ValueOut, class Pred>
[[nodiscard]] cudaError_t select_if_pairs(void* d_temp, std::size_t& temp_bytes, KeyIt d_keys_in, ValueIt d_values_in,
                                          KeyOut d_keys_out, ValueOut d_values_out, std::int64_t* d_num_selected,
                                          std::int64_t n, Pred pred, cudaStream_t stream = nullptr,
                                          const single_pass_options& options = {}) {
  using namespace select_detail;
  return run<Policy>(d_temp, temp_bytes, d_keys_in, d_values_in, none_iterator{}, d_keys_out, d_values_out,
                     d_num_selected, n, predicate_selector<Pred, true>{pred}, stream, options);
}

template <class Policy = default_policy, class KeyIt, class ValueIt, class KeyOut, class ValueOut, class Pred>
[[nodiscard]] cudaError_t remove_if_pairs(void* d_temp, std::size_t& temp_bytes, KeyIt d_keys_in, ValueIt d_values_in,
                                          KeyOut d_keys_out, ValueOut d_values_out, std::int64_t* d_num_selected,
                                          std::int64_t n, Pred pred, cudaStream_t stream = nullptr,
                                          const single_pass_options& options = {}) {
  using namespace select_detail;
  return run<Policy>(d_temp, temp_bytes, d_keys_in, d_values_in, none_iterator{}, d_keys_out, d_values_out,
                     d_num_selected, n, predicate_selector<Pred, false>{pred}, stream, options);
}

template <class Policy = default_policy, class KeyIt, class ValueIt, class FlagIt, class KeyOut, class ValueOut>
[[nodiscard]] cudaError_t select_flagged_pairs(void* d_temp, std::size_t& temp_bytes, KeyIt d_keys_in,
                                               ValueIt d_values_in, FlagIt d_flags, KeyOut d_keys_out,
                                               ValueOut d_values_out, std::int64_t* d_num_selected, std::int64_t n,
                                               cudaStream_t stream = nullptr, const single_pass_options& options = {}) {
  using namespace select_detail;
  return run<Policy>(d_temp, temp_bytes, d_keys_in, d_values_in, d_flags, d_keys_out, d_values_out, d_num_selected, n,
                     flags_selector{}, stream, options);
}

// The first pair of each run of equal keys.
template <class Policy = default_policy, class KeyIt, class ValueIt, class KeyOut, class ValueOut,
          class EqualOp = select_detail::equal_to>
[[nodiscard]] cudaError_t unique_by_key(void* d_temp, std::size_t& temp_bytes, KeyIt d_keys_in, ValueIt d_values_in,
                                        KeyOut d_keys_out, ValueOut d_values_out, std::int64_t* d_num_selected,
                                        std::int64_t n, cudaStream_t stream = nullptr, EqualOp eq = {},
                                        const single_pass_options& options = {}) {
  using namespace select_detail;
  return run<Policy>(d_temp, temp_bytes, d_keys_in, d_values_in, none_iterator{}, d_keys_out, d_values_out,
                     d_num_selected, n, unique_selector<EqualOp>{eq}, stream, options);
}

// ---- convenience ------------------------------------------------------------------------

// Copies *d_num_selected to the host once the stream's work is done (synchronises the
// stream).
[[nodiscard]] inline cudaError_t read_num_selected(const std::int64_t* d_num_selected, std::int64_t& count,
                                                   cudaStream_t stream = nullptr) {
  SCANLAB_TRY(cudaMemcpyAsync(&count, d_num_selected, sizeof(count), cudaMemcpyDeviceToHost, stream));
  return cudaStreamSynchronize(stream);
}

}  // namespace scanlab
