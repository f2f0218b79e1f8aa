// Block-wide reduction: one value per thread (or per-thread arrays) to one value.
//
//   using reducer = scanlab::block_reduce<float, 256>;
//   __shared__ reducer::temp_storage storage;
//   const float total = reducer(storage).reduce(my_value, scanlab::plus{});   // valid in thread 0
//
// Every thread of the block must call reduce (it contains __syncthreads()); the
// block must have exactly BlockThreads threads (any count in [1, 1024], not only
// multiples of 32). The total is returned in thread 0 only. To reuse the same
// temp_storage for a second reduction, __syncthreads() first.
//
// The combination order is fixed (shuffle trees inside warps, then over the warp
// totals): the same inputs give the same bits on every run. Op must be associative
// and commutative; T trivially copyable. No identity element is needed: the
// num_valid overloads reduce only a prefix of the threads.
#pragma once

#include <scanlab/detail/util.cuh>
#include <scanlab/warp/warp_reduce.cuh>

#include <cstddef>
#include <type_traits>

namespace scanlab {

namespace detail {

// Shared-memory storage for Count values of T without running constructors
// (__shared__ variables cannot have non-trivial constructors).
template <class T, int Count>
struct uninitialized_array {
  alignas(T) unsigned char bytes[sizeof(T) * Count];
  __device__ __forceinline__ T& operator[](int i) { return reinterpret_cast<T*>(bytes)[i]; }
};

// A fixed-shape tree over an array of N values (register-resident when the index
// is a constant): pairs (i, i + half), so the order never depends on the data.
template <int N, class T, class Op>
__device__ __forceinline__ T tree_reduce(T (&values)[N], Op op) {
#pragma unroll
  for (int width = N; width > 1; width = (width + 1) / 2) {
    const int half = (width + 1) / 2;
#pragma unroll
    for (int i = 0; i + half < width; ++i) values[i] = op(values[i], values[i + half]);
  }
  return values[0];
}

}  // namespace detail

template <class T, int BlockThreads>
class block_reduce {
  static_assert(BlockThreads >= 1 && BlockThreads <= 1024, "a block has 1 to 1024 threads");
  static_assert(std::is_trivially_copyable_v<T>, "block_reduce needs a trivially copyable type");

 public:
  static constexpr int warps = (BlockThreads + detail::warp_threads - 1) / detail::warp_threads;

  struct temp_storage {
    detail::uninitialized_array<T, warps> warp_totals;
  };

  __device__ __forceinline__ explicit block_reduce(temp_storage& storage) : storage_(storage) {}

  // Total over all threads, in thread 0.
  template <class Op>
  __device__ __forceinline__ T reduce(T value, Op op) {
    return reduce(value, op, BlockThreads);
  }

  // Total over threads [0, num_valid), in thread 0; num_valid in [1, BlockThreads].
  // The other threads' values are ignored (they may be uninitialised).
  template <class Op>
  __device__ T reduce(T value, Op op, int num_valid) {
    const int warp = static_cast<int>(detail::warp_id());
    const int lane = static_cast<int>(detail::lane_id());
    // The lanes that exist in this warp (fewer than 32 only in the last warp of an
    // odd-sized block), and how many of them hold valid values.
    constexpr int last_warp_lanes = BlockThreads - (warps - 1) * detail::warp_threads;
    const int lanes_here = warp == warps - 1 ? last_warp_lanes : detail::warp_threads;
    const unsigned mask = detail::lane_mask_below(lanes_here);
    const int valid_here = min(lanes_here, num_valid - warp * detail::warp_threads);
    if (valid_here > 0) {  // warp-uniform
      value = warp_reduce(value, op, valid_here, mask);
      if (lane == 0) storage_.warp_totals[warp] = value;
    }
    if constexpr (warps > 1) {
      __syncthreads();
      const int valid_warps = (num_valid + detail::warp_threads - 1) / detail::warp_threads;
      if (warp == 0) {
        constexpr int lanes0 = BlockThreads < detail::warp_threads ? BlockThreads : detail::warp_threads;
        T total = lane < valid_warps ? storage_.warp_totals[lane] : value;
        total = warp_reduce(total, op, valid_warps, detail::lane_mask_below(lanes0));
        value = total;
      }
    }
    return value;
  }

  // Each thread first reduces its own ItemsPerThread values (a fixed tree), then the block.
  template <int ItemsPerThread, class Op>
  __device__ __forceinline__ T reduce(const T (&items)[ItemsPerThread], Op op) {
    T copy[ItemsPerThread];
#pragma unroll
    for (int i = 0; i < ItemsPerThread; ++i) copy[i] = items[i];
    return reduce(detail::tree_reduce(copy, op), op);
  }

 private:
  temp_storage& storage_;
};

}  // namespace scanlab
