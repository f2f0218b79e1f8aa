// Small helpers shared by scanlab's kernels and dispatch code.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>
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

// The two-phase temp-storage protocol (as CUB's) of the device-wide calls, in one place:
//   if (const auto answer = detail::temp_storage_query(d_temp, temp_bytes, required)) return *answer;
// d_temp == nullptr: a size query, temp_bytes = required and the call returns cudaSuccess;
// less than `required` bytes, or `usable` false (the caller's other checks of the run: a
// required output pointer that is null, misaligned storage): cudaErrorInvalidValue;
// otherwise (nullopt) the call goes on.
[[nodiscard]] inline std::optional<cudaError_t> temp_storage_query(const void* d_temp, std::size_t& temp_bytes,
                                                                  std::size_t required, bool usable = true) {
  if (d_temp == nullptr) {
    temp_bytes = required;
    return cudaSuccess;
  }
  if (temp_bytes < required || !usable) return cudaErrorInvalidValue;
  return std::nullopt;
}

// Temp storage carved into 256-byte aligned slices. Sizing and carving run the same code,
// so the size asked for is the size used (radix sort; apps that keep one workspace).
class temp_carver {
 public:
  // base: the caller's temp pointer (any alignment), or null while sizing.
  explicit temp_carver(void* base)
      : base_(base == nullptr ? nullptr
                              : reinterpret_cast<unsigned char*>(align_up(reinterpret_cast<std::uintptr_t>(base)))) {}

  template <class T>
  T* take(std::size_t count) {
    T* slice = base_ == nullptr ? nullptr : reinterpret_cast<T*>(base_ + used_);
    used_ += align_up(count * sizeof(T));
    return slice;
  }
  // Bytes the caller must provide: what was taken plus the alignment slack.
  [[nodiscard]] std::size_t bytes() const { return used_ + 256; }

 private:
  unsigned char* base_;
  std::size_t used_ = 0;
};

}  // namespace scanlab::detail
