// Warp-wide reduction: 32 lanes (or a prefix of them) to one value.
//
// warp_reduce(value, op[, valid_lanes[, member_mask]]) combines the values of lanes
// [0, valid_lanes) and returns the total in lane 0 (other lanes get partial values).
// The combination order is fixed (a shuffle-down tree), so the result is
// deterministic for any operator; it is exact for integers. Op must be associative
// and commutative, callable on device, and T trivially copyable.
//
// Every lane named in member_mask must make the call (converged); member_mask must
// cover lanes [0, valid_lanes). Lanes outside the mask (the missing lanes of a
// partial warp at the end of a block of, say, 96 + 16 threads) must not call.
#pragma once

#include <scanlab/detail/shuffle.cuh>
#include <scanlab/detail/util.cuh>
#include <scanlab/functional.cuh>

#include <cstdint>
#include <type_traits>

namespace scanlab {

namespace detail {

// Whether this compilation pass targets sm_80+ (the REDUX instruction); false in the host pass.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
inline constexpr bool has_redux = true;
#else
inline constexpr bool has_redux = false;
#endif

// The sm_80+ REDUX instruction reduces a 32-bit integer over the warp in one step.
template <class T, class Op>
inline constexpr bool warp_redux_supported_v =
    std::is_integral_v<T> && sizeof(T) == 4 &&
    (std::is_same_v<Op, plus> || std::is_same_v<Op, minimum> || std::is_same_v<Op, maximum>);

template <class T, class Op>
__device__ __forceinline__ T warp_redux(T value, unsigned mask) {
  using Word = std::conditional_t<std::is_signed_v<T>, int, unsigned>;
  const Word word = static_cast<Word>(value);
  if constexpr (std::is_same_v<Op, plus>) return static_cast<T>(__reduce_add_sync(mask, word));
  else if constexpr (std::is_same_v<Op, minimum>) return static_cast<T>(__reduce_min_sync(mask, word));
  else return static_cast<T>(__reduce_max_sync(mask, word));
}

__device__ __forceinline__ unsigned lane_mask_below(int lanes) {
  return lanes >= warp_threads ? full_warp_mask : (1u << lanes) - 1u;
}

}  // namespace detail

// Total of lanes [0, valid_lanes) in lane 0. valid_lanes in [1, 32].
template <class T, class Op>
__device__ __forceinline__ T warp_reduce(T value, Op op, int valid_lanes = detail::warp_threads,
                                         unsigned member_mask = detail::full_warp_mask) {
  const int lane = static_cast<int>(detail::lane_id());
  if constexpr (detail::warp_redux_supported_v<T, Op> && detail::has_redux) {
    // Lanes past valid_lanes contribute the identity; REDUX leaves the total in every lane.
    const T contribution = lane < valid_lanes ? value : identity<Op, T>::value();
    return detail::warp_redux<T, Op>(contribution, member_mask);
  } else {
    // Shuffle-down tree: after the step with offset d, lane l holds the total of the
    // lanes l, l + d, l + 2d, ... below 2 * (the previous offset). A lane whose partner
    // is at or past valid_lanes keeps its value: everything the partner holds would be
    // past the valid prefix as well.
#pragma unroll
    for (int offset = detail::warp_threads / 2; offset > 0; offset /= 2) {
      const T other = detail::shfl_down(value, static_cast<unsigned>(offset), member_mask);
      if (lane + offset < valid_lanes) value = static_cast<T>(op(value, other));
    }
    return value;
  }
}

// Total of all 32 lanes in every lane (butterfly). Needs a full, converged warp.
template <class T, class Op>
__device__ __forceinline__ T warp_all_reduce(T value, Op op) {
  if constexpr (detail::warp_redux_supported_v<T, Op> && detail::has_redux) {
    return detail::warp_redux<T, Op>(value, detail::full_warp_mask);
  } else {
    // Both lanes of a pair combine (lower lane's value, upper lane's value) in that
    // order, so every lane ends with bitwise the same total.
    const unsigned lane = detail::lane_id();
#pragma unroll
    for (int offset = detail::warp_threads / 2; offset > 0; offset /= 2) {
      const T other = detail::shfl_xor(value, static_cast<unsigned>(offset));
      value = static_cast<T>((lane & static_cast<unsigned>(offset)) ? op(other, value) : op(value, other));
    }
    return value;
  }
}

}  // namespace scanlab
