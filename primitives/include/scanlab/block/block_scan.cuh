// Block-level scans for kernels that scan a tile held in registers.
//
//   __shared__ scanlab::block_scan<int, 256>::temp_storage storage;
//   int items[8];                       // blocked: thread t holds items 8t .. 8t+7
//   scanlab::block_scan<int, 256>(storage).inclusive_scan(items, items, scanlab::plus{});
//
// 1-D blocks of exactly BlockThreads threads (a multiple of 32, at most 1024); every
// thread calls, converged. Operators are applied as op(earlier, later), never
// swapped, so any associative operator works; no identity element is needed. The
// combination tree is fixed (serial inside a thread, Kogge-Stone shuffles across
// lanes and across warps), so the same input gives the same bits on every run.
// A temp_storage may be reused by the next call only after a __syncthreads().
//
// The callback forms seed the block with a prefix that is known only once the
// block's aggregate is: `prefix_op(block_aggregate)` is called by every lane of warp 0
// and must return the prefix of everything before this block (lane 0's value is
// used). device/tile_state.cuh provides one that does decoupled look-back.
#pragma once

#include <scanlab/detail/shuffle.cuh>
#include <scanlab/warp/warp_scan.cuh>

#include <cstring>
#include <type_traits>

namespace scanlab {

namespace scan_detail {

// Shared-memory slot for a T that may not be trivially default constructible
// (__shared__ variables cannot run constructors).
template <class T>
struct raw_slot {
  alignas(T) unsigned char bytes[sizeof(T)];
  __device__ __forceinline__ T load() const {
    T value;
    std::memcpy(&value, bytes, sizeof(T));
    return value;
  }
  __device__ __forceinline__ void store(const T& value) { std::memcpy(bytes, &value, sizeof(T)); }
};

// The smallest power of two >= n (n in [1, 32]).
__host__ __device__ constexpr int pow2_at_least(int n) {
  int p = 1;
  while (p < n) p *= 2;
  return p;
}

}  // namespace scan_detail

template <class T, int BlockThreads>
class block_scan {
  static_assert(std::is_trivially_copyable_v<T>, "block_scan needs a trivially copyable type");
  static_assert(BlockThreads >= 32 && BlockThreads <= 1024 && BlockThreads % 32 == 0,
                "BlockThreads must be a multiple of 32 in [32, 1024]");

 public:
  static constexpr int warps = BlockThreads / 32;

  struct temp_storage {
    scan_detail::raw_slot<T> warp_totals[warps];
    scan_detail::raw_slot<T> block_prefix;
  };

  __device__ explicit block_scan(temp_storage& storage) : storage_(storage) {}

  // ---- building blocks ----

  // Each warp passes its total (the same value on every lane). Sets block_aggregate
  // (total of all warps, in order) on every thread; returns false for warp 0, else
  // sets warp_prefix to the total of the earlier warps and returns true.
  template <class Op>
  __device__ bool scan_warp_totals(const T& warp_total, Op op, T& warp_prefix, T& block_aggregate) {
    const int warp = static_cast<int>(threadIdx.x / 32);
    const unsigned lane = detail::scan_lane();
    if (lane == 0) storage_.warp_totals[warp].store(warp_total);
    __syncthreads();
    if constexpr (warps == 1) {
      block_aggregate = warp_total;
      return false;
    } else {
      // Every warp scans the warp totals itself (lane i holds warp i's total): no second barrier.
      constexpr int width = scan_detail::pow2_at_least(warps);
      const int source = static_cast<int>(lane) < warps ? static_cast<int>(lane) : warps - 1;
      const T scanned = warp_inclusive_scan<width>(storage_.warp_totals[source].load(), op);
      block_aggregate = detail::shfl_idx(scanned, warps - 1);
      const T earlier = detail::shfl_idx(scanned, warp > 0 ? warp - 1 : 0);
      if (warp == 0) return false;
      warp_prefix = earlier;
      return true;
    }
  }

  // Each thread passes a partial (its items' total). Sets block_aggregate on every
  // thread; returns false for thread 0, else sets prefix to the combination of the
  // earlier threads' partials and returns true.
  template <class Op>
  __device__ bool exclusive_partials(const T& partial, Op op, T& prefix, T& block_aggregate) {
    T lane_prefix;
    T inclusive;
    const bool has_lane_prefix = warp_exclusive_scan_unseeded(partial, op, lane_prefix, inclusive);
    const T warp_total = detail::shfl_idx(inclusive, 31);
    T warp_prefix;
    const bool has_warp_prefix = scan_warp_totals(warp_total, op, warp_prefix, block_aggregate);
    if (has_warp_prefix) {
      prefix = has_lane_prefix ? op(warp_prefix, lane_prefix) : warp_prefix;
      return true;
    }
    if (has_lane_prefix) prefix = lane_prefix;
    return has_lane_prefix;
  }

  // ---- blocked arrangement: thread t holds items [t * Items, (t + 1) * Items) ----
  // `input` and `output` may be the same array.

  template <int Items, class Op>
  __device__ void inclusive_scan(const T (&input)[Items], T (&output)[Items], Op op, T& block_aggregate) {
    T local[Items];
    thread_inclusive(input, local, op);
    T prefix;
    const bool has_prefix = exclusive_partials(local[Items - 1], op, prefix, block_aggregate);
#pragma unroll
    for (int i = 0; i < Items; ++i) output[i] = has_prefix ? op(prefix, local[i]) : local[i];
  }

  template <int Items, class Op>
  __device__ void inclusive_scan(const T (&input)[Items], T (&output)[Items], Op op) {
    T block_aggregate;
    inclusive_scan(input, output, op, block_aggregate);
  }

  // Exclusive, seeded with init: the block's first item becomes init.
  // block_aggregate does not include init.
  template <int Items, class Op>
  __device__ void exclusive_scan(const T (&input)[Items], T (&output)[Items], T init, Op op,
                                 T& block_aggregate) {
    T local[Items];
    thread_inclusive(input, local, op);
    T prefix;
    const bool has_prefix = exclusive_partials(local[Items - 1], op, prefix, block_aggregate);
    thread_exclusive(local, output, has_prefix ? op(init, prefix) : init, op);
  }

  template <int Items, class Op>
  __device__ void exclusive_scan(const T (&input)[Items], T (&output)[Items], T init, Op op) {
    T block_aggregate;
    exclusive_scan(input, output, init, op, block_aggregate);
  }

  // Inclusive, seeded by prefix_op(block_aggregate) (called by warp 0): output
  // item i is prefix op x_0 op ... op x_i.
  template <int Items, class Op, class PrefixOp>
  __device__ void inclusive_scan_with_prefix(const T (&input)[Items], T (&output)[Items], Op op,
                                             PrefixOp& prefix_op) {
    T local[Items];
    thread_inclusive(input, local, op);
    T prefix;
    T block_aggregate;
    const bool has_prefix = exclusive_partials(local[Items - 1], op, prefix, block_aggregate);
    const T block_prefix = call_prefix_op(prefix_op, block_aggregate);
    const T running = has_prefix ? op(block_prefix, prefix) : block_prefix;
#pragma unroll
    for (int i = 0; i < Items; ++i) output[i] = op(running, local[i]);
  }

  // Exclusive, seeded by prefix_op(block_aggregate): the block's first item becomes the prefix.
  template <int Items, class Op, class PrefixOp>
  __device__ void exclusive_scan_with_prefix(const T (&input)[Items], T (&output)[Items], Op op,
                                             PrefixOp& prefix_op) {
    T local[Items];
    thread_inclusive(input, local, op);
    T prefix;
    T block_aggregate;
    const bool has_prefix = exclusive_partials(local[Items - 1], op, prefix, block_aggregate);
    const T block_prefix = call_prefix_op(prefix_op, block_aggregate);
    thread_exclusive(local, output, has_prefix ? op(block_prefix, prefix) : block_prefix, op);
  }

  // ---- one item per thread ----

  template <class Op>
  __device__ T inclusive_scan(T x, Op op, T& block_aggregate) {
    T items[1] = {x};
    inclusive_scan(items, items, op, block_aggregate);
    return items[0];
  }
  template <class Op>
  __device__ T inclusive_scan(T x, Op op) {
    T block_aggregate;
    return inclusive_scan(x, op, block_aggregate);
  }
  template <class Op>
  __device__ T exclusive_scan(T x, T init, Op op, T& block_aggregate) {
    T items[1] = {x};
    exclusive_scan(items, items, init, op, block_aggregate);
    return items[0];
  }
  template <class Op>
  __device__ T exclusive_scan(T x, T init, Op op) {
    T block_aggregate;
    return exclusive_scan(x, init, op, block_aggregate);
  }

 private:
  template <int Items, class Op>
  __device__ static void thread_inclusive(const T (&input)[Items], T (&local)[Items], Op op) {
    local[0] = input[0];
#pragma unroll
    for (int i = 1; i < Items; ++i) local[i] = op(local[i - 1], input[i]);
  }

  // output[0] = seed, output[i] = seed op local[i - 1].
  template <int Items, class Op>
  __device__ static void thread_exclusive(const T (&local)[Items], T (&output)[Items], const T& seed, Op op) {
#pragma unroll
    for (int i = Items - 1; i > 0; --i) output[i] = op(seed, local[i - 1]);
    output[0] = seed;
  }

  template <class PrefixOp>
  __device__ T call_prefix_op(PrefixOp& prefix_op, const T& block_aggregate) {
    if (threadIdx.x < 32) {
      const T block_prefix = prefix_op(block_aggregate);
      if (threadIdx.x == 0) storage_.block_prefix.store(block_prefix);
    }
    __syncthreads();
    return storage_.block_prefix.load();
  }

  temp_storage& storage_;
};

}  // namespace scanlab
