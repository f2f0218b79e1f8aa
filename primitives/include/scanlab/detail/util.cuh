// Small helpers shared by scanlab's kernels and dispatch code.
#pragma once

#include <cstdint>
#include <type_traits>

namespace scanlab::detail {

inline constexpr int warp_threads = 32;

template <class I>
__host__ __device__ constexpr I ceil_div(I a, I b) {
  return (a + b - 1) / b;
}

__device__ __forceinline__ unsigned lane_id() { return threadIdx.x & (warp_threads - 1); }
__device__ __forceinline__ unsigned warp_id() { return threadIdx.x / warp_threads; }

// Round `bytes` up to a multiple of 256, the alignment every temp-storage slice gets.
__host__ __device__ constexpr std::size_t align_up(std::size_t bytes, std::size_t alignment = 256) {
  return (bytes + alignment - 1) / alignment * alignment;
}

}  // namespace scanlab::detail
