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
// Two arrays read side by side (zip_input, below: a dot product, the RMS of a
// difference) are one input whose unit is a 16-byte vector of EACH array, when the two
// have the same address modulo 16 (one head/body/tail split then serves both); a unit
// is then two loads, so a thread takes half as many units per iteration and keeps the
// same bytes in flight. Arrays that do not share their alignment take the scalar path.
//
// Determinism: every combination order above depends only on n, the pointer's
// address modulo 16 and the grid size (fixed per device), never on timing.
#pragma once

#include <scanlab/block/block_reduce.cuh>
#include <scanlab/detail/util.cuh>
#include <scanlab/detail/vector_io.cuh>
#include <scanlab/functional.cuh>

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <concepts>
#include <cstdint>
#include <type_traits>

namespace scanlab {

// ---- Inputs and outputs for transform_reduce (public through scanlab/reduce.cuh) ----

// One item of a zip_input: the elements at the same index of its two arrays.
template <class T>
struct zip_item {
  T x;
  T y;
};

// Two device arrays of the same length read side by side as one input of zip_item<T>:
// item i is {x[i], y[i]}. Make one with scanlab::zip(d_x, d_y).
template <class T>
struct zip_input {
  const T* x;
  const T* y;
  __host__ __device__ zip_item<T> operator[](std::int64_t i) const { return {x[i], y[i]}; }
  __host__ __device__ zip_input operator+(std::int64_t i) const { return {x + i, y + i}; }
};

// An output that applies an epilogue on the device: `*it = v` stores epilogue(v) at the
// wrapped output (it[i] = v stores it at out[i]). reduce and transform_reduce store their
// result once, from one thread, so the epilogue (a square root, a division by n) costs
// no launch and no pass. Make one with scanlab::with_epilogue(d_out, f).
template <class OutputIt, class Epilogue>
struct epilogue_output {
  OutputIt out;
  Epilogue epilogue;
  struct reference {
    OutputIt out;
    Epilogue epilogue;
    template <class V>
    __device__ void operator=(const V& value) const {
      *out = epilogue(value);
    }
  };
  __device__ reference operator*() const { return {out, epilogue}; }
  __device__ reference operator[](std::int64_t i) const { return {out + i, epilogue}; }
};

}  // namespace scanlab

namespace scanlab::detail {

struct identity_transform {
  template <class U>
  __host__ __device__ constexpr U operator()(const U& x) const {
    return x;
  }
};

// ---- Units of the vector path ----
//
// Inputs read in 16-byte vectors: pointers to vector-loadable types (a unit is one
// vector) and zip_input of them (a unit is one vector of each array). unit_items is the
// number of items in a unit, unit_loads the 16-byte loads it takes.
template <class InputIt>
inline constexpr bool is_zip_input_v = false;
template <class T>
inline constexpr bool is_zip_input_v<zip_input<T>> = is_vector_loadable_v<T>;

template <class InputIt>
inline constexpr bool reads_vectors_v = is_vectorizable_input_v<InputIt> || is_zip_input_v<InputIt>;

template <class InputIt>
struct unit_shape {
  static constexpr int items = vector_items<input_value_t<InputIt>>;
  static constexpr int loads = 1;
};
template <class T>
struct unit_shape<zip_input<T>> {
  static constexpr int items = vector_items<T>;
  static constexpr int loads = 2;
};
template <class InputIt>
inline constexpr int unit_items = unit_shape<InputIt>::items;
template <class InputIt>
inline constexpr int unit_loads = unit_shape<InputIt>::loads;

// Units per thread per iteration for a shape that issues VectorsPerThread 16-byte loads
// (at least one unit: a shape of one vector per thread reads a zip's two).
template <int VectorsPerThread, class InputIt>
__host__ __device__ constexpr int units_per_iteration() {
  return VectorsPerThread >= unit_loads<InputIt> ? VectorsPerThread / unit_loads<InputIt> : 1;
}

// The two vectors of a zip_input unit.
template <class T>
struct zip_vector {
  vector16<T> x;
  vector16<T> y;
};

// Whether the vector path can read `in`: a pointer aligned to its element (always, for
// arithmetic types), or two such arrays at the same address modulo 16.
template <class T>
__host__ __device__ constexpr bool vectors_usable(const T* p) {
  return element_aligned(p);
}
template <class T>
__host__ __device__ constexpr bool vectors_usable(const zip_input<T>& in) {
  return element_aligned(in.x) && element_aligned(in.y) &&
         reinterpret_cast<std::uintptr_t>(in.x) % vector_bytes == reinterpret_cast<std::uintptr_t>(in.y) % vector_bytes;
}

// The first (or only) array of an input, whose address decides the split.
template <class T>
__host__ __device__ constexpr const T* first_array(const T* p) {
  return p;
}
template <class T>
__host__ __device__ constexpr const T* first_array(const zip_input<T>& in) {
  return in.x;
}

template <class T>
__device__ __forceinline__ vector16<T> load_unit(const T* aligned) {
  return load_vector(aligned);
}
template <class T>
__device__ __forceinline__ zip_vector<T> load_unit(const zip_input<T>& aligned) {
  return {load_vector(aligned.x), load_vector(aligned.y)};
}

template <class T>
__device__ __forceinline__ T unit_item(const vector16<T>& unit, int m) {
  return unit.items[m];
}
template <class T>
__device__ __forceinline__ zip_item<T> unit_item(const zip_vector<T>& unit, int m) {
  return {unit.x.items[m], unit.y.items[m]};
}

// How [in, in + n) of a vector-read input splits into head, whole units and tail.
template <class InputIt>
__host__ __device__ constexpr vector_split split_units(InputIt in, std::int64_t n) {
  return split_for_vectors(first_array(in), n);
}

// A transform may reduce a whole unit itself: tf.reduce_unit(items, op), with items the
// unit's K items (const U (&)[K]), returning what tree_reduce(values, op) returns for
// values[m] = T(tf(items[m])), to the bit. It is a shortcut, never a change of result
// (the norms' scaled sum of squares uses it to skip two sums that are zero in a unit of
// mid-range values: algorithms/norms_kernels.cuh). Only the vector path calls it.
template <class Tf, class U, int K, class T, class Op>
concept unit_reducer = requires(const Tf& tf, const U (&items)[K], Op op) {
  { tf.reduce_unit(items, op) } -> std::convertible_to<T>;
};

// How an input is cut into units (see the top of this file). Computed identically
// on the host (to size the grid) and in the kernels.
struct reduce_layout {
  std::int64_t units = 0;  // vectors of the aligned body, or elements
  bool vectorized = false;
};

template <class InputIt>
__host__ __device__ constexpr reduce_layout make_reduce_layout(InputIt in, std::int64_t n) {
  if constexpr (reads_vectors_v<InputIt>) {
    if (vectors_usable(in)) return {split_units(in, n).vectors, true};
  }
  return {n, false};
}

// acc = has ? op(acc, value) : value.
template <class T, class Op>
__device__ __forceinline__ void fold_into(T& acc, bool& has, const T& value, Op op) {
  acc = has ? static_cast<T>(op(acc, value)) : value;
  has = true;
}

// 1- and 2-byte integers, read as they are (identity transform), take the unit's four
// 32-bit words a lane per item: minima and maxima in the data's type through the
// SIMD-in-word instructions (__vmins4, __vminu2, ...), sums into a 4- or 8-byte
// accumulator through dot products with ones (__dp4a: four bytes into an int32;
// __dp2a_lo: two halves), 16 bytes exactly summed in 32 bits in the data's signedness,
// then converted to T. Integers are exact (T's sums wrap alike), so the bits are the
// in-order fold's. Without them an int8 minimum spilled (904 bytes in the
// single-block kernel, 136 in the grid kernel at its 64 registers): 0.38x CUB at 2^17
// items, 0.76x at 2^28 (H200, 2026-11-29).
template <class T, class U, class Tf, class Op>
inline constexpr bool packed_lanes_v =
    std::is_integral_v<U> && (sizeof(U) == 1 || sizeof(U) == 2) && std::is_same_v<Tf, identity_transform> &&
    (((std::is_same_v<Op, minimum> || std::is_same_v<Op, maximum>) && std::is_same_v<T, U>) ||
     (std::is_same_v<Op, plus> && std::is_integral_v<T> && sizeof(T) >= 4));

// One lane-wise min or max of two words of 1- or 2-byte lanes.
template <class U, bool Min>
__device__ __forceinline__ unsigned lanes_min_max(unsigned a, unsigned b) {
  if constexpr (sizeof(U) == 1 && std::is_signed_v<U>) return Min ? __vmins4(a, b) : __vmaxs4(a, b);
  else if constexpr (sizeof(U) == 1) return Min ? __vminu4(a, b) : __vmaxu4(a, b);
  else if constexpr (std::is_signed_v<U>) return Min ? __vmins2(a, b) : __vmaxs2(a, b);
  else return Min ? __vminu2(a, b) : __vmaxu2(a, b);
}

// The sum of a word's lanes plus c, in 32 bits.
template <class U>
__device__ __forceinline__ auto lanes_sum(unsigned word, std::conditional_t<std::is_signed_v<U>, int, unsigned> c) {
  if constexpr (sizeof(U) == 1 && std::is_signed_v<U>) return __dp4a(static_cast<int>(word), 0x01010101, c);
  else if constexpr (sizeof(U) == 1) return __dp4a(word, 0x01010101u, c);
  else if constexpr (std::is_signed_v<U>) return __dp2a_lo(static_cast<int>(word), 0x0101, c);
  else return __dp2a_lo(word, 0x0101u, c);
}

template <class T, class U, class Op>
__device__ __forceinline__ T reduce_packed_lanes(const vector16<U>& unit, Op op) {
  unsigned w[4];
  std::memcpy(w, &unit, sizeof(w));
  if constexpr (std::is_same_v<Op, plus>) {
    using Acc32 = std::conditional_t<std::is_signed_v<U>, int, unsigned>;
    Acc32 sum = lanes_sum<U>(w[0], Acc32{0});
#pragma unroll
    for (int k = 1; k < 4; ++k) sum = lanes_sum<U>(w[k], sum);
    return static_cast<T>(sum);
  } else {
    constexpr bool is_min = std::is_same_v<Op, minimum>;
    const unsigned word = lanes_min_max<U, is_min>(lanes_min_max<U, is_min>(w[0], w[1]),
                                                   lanes_min_max<U, is_min>(w[2], w[3]));
    U lane[4 / sizeof(U)];
    std::memcpy(lane, &word, sizeof(word));
    T r = lane[0];
#pragma unroll
    for (int m = 1; m < static_cast<int>(4 / sizeof(U)); ++m) r = op(r, lane[m]);
    return r;
  }
}

// The K items of one unit, each converted to T, combined by a fixed tree (the same
// order in every kernel that reads vectors, so the same bits; integers, exact, in order
// or on packed lanes as above); or the transform's own reduce_unit where it has one
// (unit_reducer: the same bits).
template <class T, int K, class Unit, class Tf, class Convert, class Op>
__device__ __forceinline__ T reduce_unit(const Unit& unit, Tf tf, Convert convert, Op op) {
  using U = decltype(unit_item(unit, 0));
  if constexpr (std::is_same_v<Unit, vector16<U>> && packed_lanes_v<T, U, Tf, Op>) {
    return reduce_packed_lanes<T>(unit, op);
  } else if constexpr (unit_reducer<Tf, U, K, T, Op>) {
    U items[K];
#pragma unroll
    for (int m = 0; m < K; ++m) items[m] = unit_item(unit, m);
    return static_cast<T>(tf.reduce_unit(items, op));
  } else if constexpr (std::is_integral_v<T>) {
    // Integers are exact: with an associative and commutative operator every order gives
    // the same bits, so the items fold in order into one value instead of a tree holding
    // all K (a tree of 16 one-byte items widened to 64 bits spilled at 64 registers:
    // uint8 sums ran at 257 GB/s).
    T r = convert(unit_item(unit, 0));
#pragma unroll
    for (int m = 1; m < K; ++m) r = static_cast<T>(op(r, convert(unit_item(unit, m))));
    return r;
  } else {
    T values[K];
#pragma unroll
    for (int m = 0; m < K; ++m) values[m] = convert(unit_item(unit, m));
    return tree_reduce(values, op);
  }
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

  if constexpr (reads_vectors_v<InputIt>) {
    if (vectors_usable(in)) {
      constexpr int vi = unit_items<InputIt>;
      const vector_split split = split_units(in, n);
      const InputIt body = in + split.head;
      bool has = thread_reduce_strided<threads, units_per_iteration<Policy::vectors_per_thread, InputIt>(), T>(
          unit_begin, unit_end, op, [&](std::int64_t v) { return load_unit(body + v * vi); },
          [&](const auto& unit) { return reduce_unit<T, vi>(unit, tf, convert, op); }, acc);
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
// arithmetic types) take the vector path with no run-time alignment check; zip inputs
// check at run time that their arrays share the alignment (one branch, before the
// loads); other inputs (iterators, structs that may straddle a vector) load one
// element at a time.
template <class InputIt>
inline constexpr bool tile_vectorized_v =
    is_vectorizable_input_v<InputIt> && alignof(input_value_t<InputIt>) == sizeof(input_value_t<InputIt>);

// The largest n one tile of Shape takes: threads x vectors_per_thread 16-byte vectors
// (plus the head and tail scalars around them), or threads x scalar_items_per_thread;
// a zip input, the smaller of its two paths.
template <class Shape, class InputIt>
constexpr std::int64_t tile_kernel_items() {
  constexpr std::int64_t scalar_items = std::int64_t{Shape::threads} * Shape::scalar_items_per_thread;
  if constexpr (tile_vectorized_v<InputIt>) {
    return std::int64_t{Shape::threads} * Shape::vectors_per_thread * vector_items<input_value_t<InputIt>>;
  } else if constexpr (is_zip_input_v<InputIt>) {
    constexpr std::int64_t vector_items =
        std::int64_t{Shape::threads} * units_per_iteration<Shape::vectors_per_thread, InputIt>() * unit_items<InputIt>;
    return vector_items < scalar_items ? vector_items : scalar_items;
  } else {
    return scalar_items;
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

// Thread t's part of a tile read one item at a time: items t, t + threads, ...
// Returns num_valid (the holders are a prefix of the block).
template <class Shape, class InputIt, class T, class Op, class Convert>
__device__ __forceinline__ int tile_items_one_by_one(InputIt in, int n, Op op, Convert convert, T& acc) {
  constexpr int threads = Shape::threads;
  const int t = static_cast<int>(threadIdx.x);
  tile_thread_reduce<threads, Shape::scalar_items_per_thread, T>(
      n, op, [&](int k) { return convert(in[t + k * threads]); }, [](const T& x) { return x; }, acc);
  return min(n, threads);
}

// *out = op(init, in[0] op ... op in[n - 1]) by one block of Shape::threads threads,
// n <= tile_kernel_items<Shape, InputIt>() (n == 0 writes init). Vector path: thread t
// takes units t, t + threads, ... of the aligned body, and the head and tail items t
// (fewer than a unit's worth each); the holders are a prefix of the block.
template <class Shape, class InputIt, class OutputIt, class T, class Op, class Tf>
__device__ __forceinline__ void reduce_tile(InputIt in, int n, OutputIt out, T init, Op op, Tf tf) {
  constexpr int threads = Shape::threads;
  using U = input_value_t<InputIt>;
  __shared__ typename block_reduce<T, threads>::temp_storage storage;
  const int t = static_cast<int>(threadIdx.x);
  auto convert = [&](const U& x) -> T { return static_cast<T>(tf(x)); };
  T acc;
  int num_valid;
  if constexpr (tile_vectorized_v<InputIt> || is_zip_input_v<InputIt>) {
    if (tile_vectorized_v<InputIt> || vectors_usable(in)) {  // a zip's arrays may not share their alignment
      constexpr int vi = unit_items<InputIt>;
      const auto* array = first_array(in);
      const int misalignment = static_cast<int>(reinterpret_cast<std::uintptr_t>(array) % vector_bytes);
      const int head =
          min(n, misalignment == 0 ? 0 : (vector_bytes - misalignment) / static_cast<int>(sizeof(*array)));
      const int vectors = (n - head) / vi;
      const int tail = n - head - vectors * vi;
      const InputIt first = in + head + t * vi;  // this thread's first unit; the others at constant offsets
      U head_item{}, tail_item{};
      if (t < head) head_item = in[t];
      if (t < tail) tail_item = in[n - tail + t];
      bool has = tile_thread_reduce<threads, units_per_iteration<Shape::vectors_per_thread, InputIt>(), T>(
          vectors, op, [&](int k) { return load_unit(first + k * threads * vi); },
          [&](const auto& unit) { return reduce_unit<T, vi>(unit, tf, convert, op); }, acc);
      if (t < head) fold_into(acc, has, convert(head_item), op);
      if (t < tail) fold_into(acc, has, convert(tail_item), op);
      num_valid = max(max(min(vectors, threads), head), tail);
    } else {
      num_valid = tile_items_one_by_one<Shape>(in, n, op, convert, acc);
    }
  } else {
    num_valid = tile_items_one_by_one<Shape>(in, n, op, convert, acc);
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
