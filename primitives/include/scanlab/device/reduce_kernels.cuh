// Kernels of the production reduction: the per-block work ("agent") and the three
// __global__ shells that scanlab::reduce, transform_reduce and segmented_reduce launch.
//
// Work split. The input [in, in + n) is cut into "units": 16-byte vectors of the
// aligned body for pointer inputs (plus the head and tail scalars around it), single
// elements for other iterators. Block b of a grid reduces the contiguous units
// [b * units_per_block, (b + 1) * units_per_block); block 0 also takes the head and the
// last block the tail. Within a block, thread t takes units t, t + threads, ... (so a
// warp reads 32 consecutive vectors: 512 contiguous bytes), several at a time, and
// folds them into a register accumulator; then the block combines its threads.
//
// Determinism: every combination order above depends only on n, the pointer's
// address modulo 16 and the grid size (fixed per device), never on timing.
#pragma once

#include <scanlab/block/block_reduce.cuh>
#include <scanlab/detail/util.cuh>
#include <scanlab/detail/vector_io.cuh>

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace scanlab::detail {

struct identity_transform {
  template <class U>
  __host__ __device__ constexpr U operator()(const U& x) const {
    return x;
  }
};

// How an input is cut into units (see the top of this file). Computed identically
// on the host (to size the grid) and in the kernels.
struct reduce_layout {
  std::int64_t units = 0;  // vectors of the aligned body, or elements
  bool vectorized = false;
};

template <class InputIt>
__host__ __device__ constexpr reduce_layout make_reduce_layout(InputIt in, std::int64_t n) {
  if constexpr (is_vectorizable_input_v<InputIt>) {
    if (element_aligned(in)) return {split_for_vectors(in, n).vectors, true};
  }
  return {n, false};
}

// acc = has ? op(acc, value) : value.
template <class T, class Op>
__device__ __forceinline__ void fold_into(T& acc, bool& has, const T& value, Op op) {
  acc = has ? static_cast<T>(op(acc, value)) : value;
  has = true;
}

// The items of one 16-byte vector, each converted to T, combined by a fixed tree (the
// same order in every kernel that reads vectors, so the same bits).
template <class T, class U, class Convert, class Op>
__device__ __forceinline__ T reduce_vector(const vector16<U>& vec, Convert convert, Op op) {
  T values[vector_items<U>];
#pragma unroll
  for (int m = 0; m < vector_items<U>; ++m) values[m] = convert(vec.items[m]);
  return tree_reduce(values, op);
}

// Per-thread accumulation over the units [begin, end) of a block's share: thread t
// takes begin + t, begin + t + Threads, ..., Unroll units per iteration, all loads of
// an iteration issued before any is combined (they are independent: Unroll loads in
// flight per thread). The remainder (fewer than Unroll units) is one more iteration
// with predicated loads, so a thread with, say, 2 units pays one memory round trip,
// not two. load(i) fetches unit i, to_value turns it into one T. The combination
// order depends only on (begin, end). Returns false when the thread has no unit
// (acc untouched).
template <int Threads, int Unroll, class T, class Op, class Load, class ToValue>
__device__ __forceinline__ bool thread_reduce_strided(std::int64_t begin, std::int64_t end, Op op, Load load,
                                                      ToValue to_value, T& acc) {
  using Raw = decltype(load(begin));
  constexpr std::int64_t stride = std::int64_t{Threads} * Unroll;
  constexpr std::int64_t reach = std::int64_t{Threads} * (Unroll - 1);  // last unit of a group, from its first
  auto group = [&](std::int64_t first) {
    Raw raw[Unroll];
#pragma unroll
    for (int k = 0; k < Unroll; ++k) raw[k] = load(first + k * std::int64_t{Threads});
    T values[Unroll];
#pragma unroll
    for (int k = 0; k < Unroll; ++k) values[k] = to_value(raw[k]);
    return tree_reduce(values, op);
  };
  auto partial_group = [&](std::int64_t first) {  // units first + k * Threads below end; k = 0 always is
    Raw raw[Unroll];
#pragma unroll
    for (int k = 0; k < Unroll; ++k) {
      if (first + k * std::int64_t{Threads} < end) raw[k] = load(first + k * std::int64_t{Threads});
    }
    T value = to_value(raw[0]);
#pragma unroll
    for (int k = 1; k < Unroll; ++k) {
      if (first + k * std::int64_t{Threads} < end) value = op(value, to_value(raw[k]));
    }
    return value;
  };
  std::int64_t i = begin + static_cast<std::int64_t>(threadIdx.x);
  if (i >= end) return false;
  if (i + reach < end) {
    acc = group(i);
    for (i += stride; i + reach < end; i += stride) acc = op(acc, group(i));
    if (i < end) acc = op(acc, partial_group(i));
  } else {
    acc = partial_group(i);
  }
  return true;
}

// One thread's part of a block's share of [in, in + n): units [unit_begin, unit_end),
// and (pointer inputs) the head scalars if with_head, the tail scalars if with_tail.
// Returns the block-uniform count of threads that hold a value: the holders are
// always threads [0, count), as block_reduce's num_valid overload wants.
template <class Policy, class InputIt, class T, class Op, class Tf>
__device__ __forceinline__ int thread_reduce_share(InputIt in, std::int64_t n, std::int64_t unit_begin,
                                                   std::int64_t unit_end, bool with_head, bool with_tail, Op op,
                                                   Tf tf, T& acc) {
  constexpr int threads = Policy::threads;
  using U = input_value_t<InputIt>;
  const int t = static_cast<int>(threadIdx.x);
  const std::int64_t share = unit_end > unit_begin ? unit_end - unit_begin : 0;
  int num_valid = static_cast<int>(share < threads ? share : threads);
  auto convert = [&](const U& x) -> T { return static_cast<T>(tf(x)); };

  if constexpr (is_vectorizable_input_v<InputIt>) {
    if (element_aligned(in)) {
      constexpr int vi = vector_items<U>;
      const vector_split split = split_for_vectors(in, n);
      const U* body = in + split.head;
      bool has = thread_reduce_strided<threads, Policy::vectors_per_thread, T>(
          unit_begin, unit_end, op, [&](std::int64_t v) { return load_vector(body + v * vi); },
          [&](const vector16<U>& vec) { return reduce_vector<T>(vec, convert, op); }, acc);
      if (with_head) {
        if (t < split.head) fold_into(acc, has, convert(in[t]), op);
        num_valid = max(num_valid, static_cast<int>(split.head));
      }
      if (with_tail) {
        if (t < split.tail) fold_into(acc, has, convert(in[n - split.tail + t]), op);
        num_valid = max(num_valid, static_cast<int>(split.tail));
      }
      return num_valid;
    }
  }
  // Scalar path: units are elements; no head or tail.
  thread_reduce_strided<threads, Policy::scalar_items_per_thread, T>(
      unit_begin, unit_end, op, [&](std::int64_t i) { return convert(in[i]); }, [](const T& x) { return x; }, acc);
  return num_valid;
}

// Block b's share of the whole input, reduced to partials[b].
template <class Policy, class InputIt, class T, class Op, class Tf, class Storage>
__device__ __forceinline__ void reduce_block_share(InputIt in, std::int64_t n, std::int64_t units_per_block,
                                                   T* partials, Op op, Tf tf, Storage& storage) {
  const reduce_layout layout = make_reduce_layout(in, n);
  const std::int64_t begin = static_cast<std::int64_t>(blockIdx.x) * units_per_block;
  const std::int64_t end = begin + units_per_block < layout.units ? begin + units_per_block : layout.units;
  T acc;
  // The host sizes the grid so that every block has at least one unit: num_valid >= 1.
  const int num_valid = thread_reduce_share<Policy>(in, n, begin, end, blockIdx.x == 0,
                                                    blockIdx.x == gridDim.x - 1, op, tf, acc);
  const T total = block_reduce<T, Policy::threads>(storage).reduce(acc, op, num_valid);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

// *out = op(init, partials[0] op ... op partials[count - 1]), by one block, in a fixed order.
template <class Policy, class OutputIt, class T, class Op, class Storage>
__device__ __forceinline__ void reduce_partials(const T* partials, int count, OutputIt out, T init, Op op,
                                                Storage& storage) {
  T acc;
  thread_reduce_strided<Policy::threads, 4, T>(
      0, count, op, [&](std::int64_t i) { return partials[i]; }, [](const T& x) { return x; }, acc);
  const int num_valid = count < Policy::threads ? count : Policy::threads;
  const T total = block_reduce<T, Policy::threads>(storage).reduce(acc, op, num_valid);
  if (threadIdx.x == 0) *out = op(init, total);
}

// ---- The smallest inputs: one tile, one block, one memory round trip ----
//
// Why a kernel of its own rather than the single-block kernel below with one round: at
// these sizes the time is the launch, the fetch of the kernel's code (cold after other
// work) and ONE DRAM round trip for the data; anything the block executes before its
// loads are issued, or between them and the store, adds directly to it. So: 32-bit
// indices, the head/body/tail split of vector_io.cuh done in 32 bits, all loads
// predicated and issued together at constant offsets from one base pointer, no loop
// and no branch before the loads (see reduce_policy.cuh for the measurements).

// Pointer inputs whose every pointer is element-aligned (alignof == sizeof: all
// arithmetic types) take the vector path with no run-time alignment check; other
// inputs (iterators, structs that may straddle a vector) load one element at a time.
template <class InputIt>
inline constexpr bool tile_vectorized_v =
    is_vectorizable_input_v<InputIt> && alignof(input_value_t<InputIt>) == sizeof(input_value_t<InputIt>);

// The largest n one tile of Shape takes: threads x vectors_per_thread 16-byte vectors
// (plus the head and tail scalars around them), or threads x scalar_items_per_thread.
template <class Shape, class InputIt>
constexpr std::int64_t tile_kernel_items() {
  if constexpr (tile_vectorized_v<InputIt>) {
    return std::int64_t{Shape::threads} * Shape::vectors_per_thread * vector_items<input_value_t<InputIt>>;
  } else {
    return std::int64_t{Shape::threads} * Shape::scalar_items_per_thread;
  }
}

// Thread t's units t, t + Threads, ..., t + (Count - 1) * Threads below `units`; load(k)
// fetches the thread's k-th unit, to_value turns it into one T. Every load is issued
// before any is combined. Returns false when the thread has no unit (acc untouched).
template <int Threads, int Count, class T, class Op, class Load, class ToValue>
__device__ __forceinline__ bool tile_thread_reduce(int units, Op op, Load load, ToValue to_value, T& acc) {
  using Raw = decltype(load(0));
  const int t = static_cast<int>(threadIdx.x);
  Raw raw[Count];
#pragma unroll
  for (int k = 0; k < Count; ++k) {
    if (t + k * Threads < units) raw[k] = load(k);
  }
  if (t >= units) return false;
  T value = to_value(raw[0]);
#pragma unroll
  for (int k = 1; k < Count; ++k) {
    if (t + k * Threads < units) value = op(value, to_value(raw[k]));
  }
  acc = value;
  return true;
}

// *out = op(init, in[0] op ... op in[n - 1]) by one block of Shape::threads threads,
// n <= tile_kernel_items<Shape, InputIt>() (n == 0 writes init). Vector path: thread t
// takes vectors t, t + threads, ... of the aligned body, and the head and tail
// scalars t (fewer than a vector's worth each); the holders are a prefix of the block.
template <class Shape, class InputIt, class OutputIt, class T, class Op, class Tf>
__device__ __forceinline__ void reduce_tile(InputIt in, int n, OutputIt out, T init, Op op, Tf tf) {
  constexpr int threads = Shape::threads;
  using U = input_value_t<InputIt>;
  __shared__ typename block_reduce<T, threads>::temp_storage storage;
  const int t = static_cast<int>(threadIdx.x);
  auto convert = [&](const U& x) -> T { return static_cast<T>(tf(x)); };
  T acc;
  int num_valid;
  if constexpr (tile_vectorized_v<InputIt>) {
    constexpr int vi = vector_items<U>;
    const int misalignment = static_cast<int>(reinterpret_cast<std::uintptr_t>(in) % vector_bytes);
    const int head = min(n, misalignment == 0 ? 0 : (vector_bytes - misalignment) / static_cast<int>(sizeof(U)));
    const int vectors = (n - head) / vi;
    const int tail = n - head - vectors * vi;
    const U* first = in + head + t * vi;  // this thread's first vector; the others at constant offsets
    U head_item{}, tail_item{};
    if (t < head) head_item = in[t];
    if (t < tail) tail_item = in[n - tail + t];
    bool has = tile_thread_reduce<threads, Shape::vectors_per_thread, T>(
        vectors, op, [&](int k) { return load_vector(first + k * threads * vi); },
        [&](const vector16<U>& vec) { return reduce_vector<T>(vec, convert, op); }, acc);
    if (t < head) fold_into(acc, has, convert(head_item), op);
    if (t < tail) fold_into(acc, has, convert(tail_item), op);
    num_valid = max(max(min(vectors, threads), head), tail);
  } else {
    tile_thread_reduce<threads, Shape::scalar_items_per_thread, T>(
        n, op, [&](int k) { return convert(in[t + k * threads]); }, [](const T& x) { return x; }, acc);
    num_valid = min(n, threads);
  }
  if (num_valid == 0) {  // n == 0 (block-uniform)
    if (t == 0) *out = init;
    return;
  }
  const T total = block_reduce<T, threads>(storage).reduce(acc, op, num_valid);
  if (t == 0) *out = op(init, total);
}

template <class Shape, class InputIt, class OutputIt, class T, class Op, class Tf>
__global__ void __launch_bounds__(Shape::threads)
    reduce_tile_kernel(InputIt in, std::int64_t n, OutputIt out, T init, Op op, Tf tf) {
  reduce_tile<Shape>(in, static_cast<int>(n), out, init, op, tf);  // the host checked n <= one tile
}

// ---- Larger inputs ----

// n small enough for one block (Policy is the single-block shape: one tile of it):
// the whole reduction in one block, one launch. n == 0 writes init.
template <class Policy, class InputIt, class OutputIt, class T, class Op, class Tf>
__global__ void __launch_bounds__(Policy::threads)
    reduce_single_block_kernel(InputIt in, std::int64_t n, OutputIt out, T init, Op op, Tf tf) {
  __shared__ typename block_reduce<T, Policy::threads>::temp_storage storage;
  T acc;
  const int num_valid =
      thread_reduce_share<Policy>(in, n, 0, make_reduce_layout(in, n).units, true, true, op, tf, acc);
  if (num_valid == 0) {  // n == 0
    if (threadIdx.x == 0) *out = init;
    return;
  }
  const T total = block_reduce<T, Policy::threads>(storage).reduce(acc, op, num_valid);
  if (threadIdx.x == 0) *out = op(init, total);
}

// The whole grid: each block reduces its share to partials[blockIdx.x]. Launched
// cooperatively (cooperative == true), the grid then waits at a grid-wide barrier and
// block 0 reduces the partials into *out: one launch in all. Without cooperative
// launch (unsupported or refused), it stops after the partials and reduce_partials_kernel follows.
template <class Policy, class InputIt, class OutputIt, class T, class Op, class Tf>
__global__ void __launch_bounds__(Policy::threads, Policy::blocks_per_sm)
    reduce_grid_kernel(InputIt in, std::int64_t n, std::int64_t units_per_block, T* partials, OutputIt out, T init,
                       Op op, Tf tf, bool cooperative) {
  __shared__ typename block_reduce<T, Policy::threads>::temp_storage storage;
  reduce_block_share<Policy>(in, n, units_per_block, partials, op, tf, storage);
  if (!cooperative) return;
  // grid.sync() orders every block's partials store before block 0's loads below
  // (release/acquire at device scope) and ends with a __syncthreads(), so `storage`
  // may be reused.
  cooperative_groups::this_grid().sync();
  if (blockIdx.x == 0) reduce_partials<Policy>(partials, static_cast<int>(gridDim.x), out, init, op, storage);
}

// Second launch of the non-cooperative fallback: one block over the partials (the
// same code, so the same bits, as block 0 of the cooperative kernel).
template <class Policy, class OutputIt, class T, class Op>
__global__ void __launch_bounds__(Policy::threads)
    reduce_partials_kernel(const T* partials, int count, OutputIt out, T init, Op op) {
  __shared__ typename block_reduce<T, Policy::threads>::temp_storage storage;
  reduce_partials<Policy>(partials, count, out, init, op, storage);
}

// One block per segment (grid-stride over segments when there are more segments
// than blocks). out[s] = op(init, total of segment s); an empty segment gets init.
template <class Policy, class InputIt, class OutputIt, class OffsetIt, class T, class Op>
__global__ void __launch_bounds__(Policy::threads)
    segmented_reduce_kernel(InputIt in, OutputIt out, OffsetIt offsets, std::int64_t num_segments, T init, Op op) {
  __shared__ typename block_reduce<T, Policy::threads>::temp_storage storage;
  for (std::int64_t s = blockIdx.x; s < num_segments; s += gridDim.x) {
    const auto begin = static_cast<std::int64_t>(offsets[s]);
    const auto end = static_cast<std::int64_t>(offsets[s + 1]);
    const std::int64_t length = end > begin ? end - begin : 0;
    const InputIt segment = in + begin;
    T acc;
    const int num_valid = thread_reduce_share<Policy>(segment, length, 0, make_reduce_layout(segment, length).units,
                                                      true, true, op, identity_transform{}, acc);
    T result = init;
    if (num_valid > 0) {  // block-uniform
      const T total = block_reduce<T, Policy::threads>(storage).reduce(acc, op, num_valid);
      result = op(init, total);
    }
    if (threadIdx.x == 0) out[s] = result;
    __syncthreads();  // before the next segment reuses `storage`
  }
}

}  // namespace scanlab::detail
