// Warp-level scans over register values, for kernels that scan inside a warp.
//
// All 32 lanes of the warp must call these together (converged, full mask). With
// Width < 32 the warp scans 32 / Width independent groups of Width consecutive
// lanes. Operators are applied as op(earlier, later) and never swapped, so any
// associative operator works, commutative or not. The combination tree is fixed
// (Kogge-Stone over shuffles, log2(Width) steps): for a given input every lane
// gets the same bits on every run, floats included.
#pragma once

#include <scanlab/detail/shuffle.cuh>

namespace scanlab {

namespace detail {

// The lane's index inside its warp, from the hardware (correct for any block shape).
__device__ __forceinline__ unsigned scan_lane() {
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

template <int Width>
inline constexpr bool valid_scan_width = Width >= 1 && Width <= 32 && (Width & (Width - 1)) == 0;

}  // namespace detail

// Inclusive scan: lane i of a group gets x_0 op x_1 op ... op x_i (of its group).
template <int Width = 32, class T, class Op>
__device__ __forceinline__ T warp_inclusive_scan(T x, Op op) {
  static_assert(detail::valid_scan_width<Width>, "Width must be a power of two in [1, 32]");
  const unsigned lane = detail::scan_lane() & (Width - 1);
#pragma unroll
  for (int offset = 1; offset < Width; offset *= 2) {
    // Lanes below `offset` read across their group's start; they ignore the value.
    const T earlier = detail::shfl_up(x, offset);
    if (lane >= static_cast<unsigned>(offset)) x = op(earlier, x);
  }
  return x;
}

// Inclusive scan, and the group's total (the last lane's result) on every lane.
template <int Width = 32, class T, class Op>
__device__ __forceinline__ T warp_inclusive_scan(T x, Op op, T& group_aggregate) {
  const T inclusive = warp_inclusive_scan<Width>(x, op);
  const int last = static_cast<int>(detail::scan_lane() | (Width - 1));
  group_aggregate = detail::shfl_idx(inclusive, last);
  return inclusive;
}

// Exclusive scan seeded with `init`: lane 0 of a group gets init, lane i > 0 gets
// init op x_0 op ... op x_{i-1}. No identity element is needed.
template <int Width = 32, class T, class Op>
__device__ __forceinline__ T warp_exclusive_scan(T x, T init, Op op) {
  const T inclusive = warp_inclusive_scan<Width>(x, op);
  const T previous = detail::shfl_up(inclusive, 1);
  return (detail::scan_lane() & (Width - 1)) == 0 ? init : op(init, previous);
}

// Exclusive scan seeded with `init`, and the group's total (without init) on every lane.
template <int Width = 32, class T, class Op>
__device__ __forceinline__ T warp_exclusive_scan(T x, T init, Op op, T& group_aggregate) {
  const T inclusive = warp_inclusive_scan<Width>(x, op, group_aggregate);
  const T previous = detail::shfl_up(inclusive, 1);
  return (detail::scan_lane() & (Width - 1)) == 0 ? init : op(init, previous);
}

// Exclusive scan without a seed: returns false on a group's lane 0, which has no
// prefix (`prefix` is then left unchanged); otherwise sets `prefix` to x_0 op ... op x_{i-1}.
// Also returns the inclusive value in `inclusive`.
template <int Width = 32, class T, class Op>
__device__ __forceinline__ bool warp_exclusive_scan_unseeded(T x, Op op, T& prefix, T& inclusive) {
  inclusive = warp_inclusive_scan<Width>(x, op);
  const T previous = detail::shfl_up(inclusive, 1);
  if ((detail::scan_lane() & (Width - 1)) == 0) return false;
  prefix = previous;
  return true;
}

}  // namespace scanlab
