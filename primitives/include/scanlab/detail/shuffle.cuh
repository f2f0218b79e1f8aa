// Warp shuffles for any trivially copyable type: values wider than 32 bits (or
// structs) travel as a sequence of 32-bit words.
#pragma once

#include <cstring>
#include <type_traits>

namespace scanlab::detail {

inline constexpr unsigned full_warp_mask = 0xffffffffu;

template <class T, class Shuffle>
__device__ __forceinline__ T shuffle_words(const T& value, Shuffle shuffle) {
  static_assert(std::is_trivially_copyable_v<T>, "warp shuffles need a trivially copyable type");
  constexpr int words = (sizeof(T) + sizeof(int) - 1) / sizeof(int);
  int in[words] = {};
  int out[words];
  std::memcpy(in, &value, sizeof(T));
#pragma unroll
  for (int w = 0; w < words; ++w) out[w] = shuffle(in[w]);
  T result;
  std::memcpy(&result, out, sizeof(T));
  return result;
}

// Value held by lane (lane_id + delta); lanes past the end get their own value back.
template <class T>
__device__ __forceinline__ T shfl_down(const T& value, unsigned delta, unsigned mask = full_warp_mask) {
  return shuffle_words(value, [&](int word) { return __shfl_down_sync(mask, word, delta); });
}

// Value held by lane (lane_id - delta); lanes before the start get their own value back.
template <class T>
__device__ __forceinline__ T shfl_up(const T& value, unsigned delta, unsigned mask = full_warp_mask) {
  return shuffle_words(value, [&](int word) { return __shfl_up_sync(mask, word, delta); });
}

// Value held by lane `src_lane`.
template <class T>
__device__ __forceinline__ T shfl_idx(const T& value, int src_lane, unsigned mask = full_warp_mask) {
  return shuffle_words(value, [&](int word) { return __shfl_sync(mask, word, src_lane); });
}

// Value held by lane (lane_id ^ lane_mask): the butterfly of all-reduce patterns.
template <class T>
__device__ __forceinline__ T shfl_xor(const T& value, unsigned lane_mask, unsigned mask = full_warp_mask) {
  return shuffle_words(value, [&](int word) { return __shfl_xor_sync(mask, word, static_cast<int>(lane_mask)); });
}

}  // namespace scanlab::detail
