// scanlab/ladder/reduce_ladder.cuh: the reduction optimisation ladder, for reading.
//
// Each rung is a named __global__ kernel whose comment says what it fixes over the
// rung before (the classic sequence: interleaved addressing, sequential addressing,
// first add during load, unrolled last warp, complete unroll, coarsening, warp
// shuffles, cooperative groups). Users who want speed call scanlab::reduce
// (reduce.cuh); this file is here to be read in order.
//
// What every rung does, unlike the textbook versions it is faithful to:
//  - Any length n (64-bit; indices are computed in 64 bits), over many blocks.
//  - Any block size from 1 to 1024, not only powers of two. The shared-memory tree
//    is padded with the identity up to the next power of two P >= blockDim.x (at
//    least 64 where the last warp is unrolled), so the halving loops stay simple:
//    an index at or past blockDim.x only ever holds padding, and no thread is needed
//    there.
//  - Any T and operator with an identity element, passed by the caller (scanlab::
//    identity<Op, T>::value() for the standard operators; your own for custom types).
//    Op must be associative and commutative.
//  - The caller's input is never modified: values are copied into shared memory or
//    registers first (one textbook kernel reduces in place in global memory).
//  - Global step: each pass writes one partial per block to temp storage and the
//    next pass reduces those, until a pass has a single block, which writes *d_out
//    ("a second launch over the per-block partials"). The last rung,
//    warp_shuffle_atomic, instead combines the block partials with one atomic per
//    block on *d_out.
//  - Every launch is checked; every launcher returns a status; nothing throws.
//
// Launchers (all rungs have the same signature, so tests and benchmarks loop over them):
//   template <class T, class Op>
//   cudaError_t reduce_<rung>(const T* d_in, T* d_out, std::int64_t n, T identity, Op op,
//                             void* d_temp, std::size_t& temp_bytes, int block_threads,
//                             cudaStream_t stream);
// with the two-phase temp protocol (d_temp == nullptr: only set temp_bytes, at least 1).
// ladder::reduce(rung, ...) dispatches on a runtime rung; rung_names lists them in order.
#pragma once

#include <scanlab/detail/launch.cuh>
#include <scanlab/detail/shuffle.cuh>
#include <scanlab/detail/util.cuh>
#include <scanlab/error.hpp>
#include <scanlab/functional.cuh>

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>

#include <array>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

namespace scanlab::ladder {

enum class rung : int {
  interleaved_divergent = 0,
  interleaved_strided,
  sequential_addressing,
  first_add_during_load,
  unrolled_last_warp,
  complete_unroll,
  coarsened,
  warp_shuffle,
  cooperative_groups,
  warp_shuffle_atomic,
};

inline constexpr int rung_count = 10;

// In ladder order (the benchmark's --list prints these).
inline constexpr std::array<std::string_view, rung_count> rung_names = {
    "interleaved_divergent", "interleaved_strided", "sequential_addressing", "first_add_during_load",
    "unrolled_last_warp",    "complete_unroll",     "coarsened",             "warp_shuffle",
    "cooperative_groups",    "warp_shuffle_atomic",
};

inline constexpr std::array<rung, rung_count> all_rungs = {
    rung::interleaved_divergent, rung::interleaved_strided, rung::sequential_addressing,
    rung::first_add_during_load, rung::unrolled_last_warp,  rung::complete_unroll,
    rung::coarsened,             rung::warp_shuffle,        rung::cooperative_groups,
    rung::warp_shuffle_atomic,
};

constexpr std::string_view rung_name(rung r) { return rung_names[static_cast<int>(r)]; }

// Whether warp_shuffle_atomic can run for (T, Op): a native atomic must exist.
// atomicAdd: 32/64-bit integers, float, double. atomicMin/Max: 32/64-bit integers.
template <class T, class Op>
inline constexpr bool has_native_atomic_v =
    (std::is_same_v<Op, plus> && ((std::is_integral_v<T> && (sizeof(T) == 4 || sizeof(T) == 8)) ||
                                  std::is_same_v<T, float> || std::is_same_v<T, double>)) ||
    ((std::is_same_v<Op, minimum> || std::is_same_v<Op, maximum>) && std::is_integral_v<T> &&
     (sizeof(T) == 4 || sizeof(T) == 8));

namespace detail {

using scanlab::detail::ceil_div;
using scanlab::detail::full_warp_mask;
using scanlab::detail::warp_threads;

// Dynamic shared memory, viewed as T (every rung sizes it at launch).
template <class T>
__device__ __forceinline__ T* shared_tree() {
  static_assert(alignof(T) <= 16, "ladder kernels align shared memory to 16 bytes");
  extern __shared__ __align__(16) unsigned char ladder_shared[];
  return reinterpret_cast<T*>(ladder_shared);
}

__host__ __device__ constexpr unsigned next_pow2(unsigned x) {
  unsigned p = 1;
  while (p < x) p *= 2;
  return p;
}

// Fills tree[blockDim.x .. tree_size) with the identity: the padding that lets the
// power-of-two loops below run over blocks of any size.
template <class T>
__device__ __forceinline__ void pad_tree(T* tree, unsigned tree_size, const T& identity) {
  for (unsigned j = threadIdx.x + blockDim.x; j < tree_size; j += blockDim.x) tree[j] = identity;
}

// Threads of warp 0 that exist: min(blockDim.x, 32) lanes, as a mask.
__device__ __forceinline__ unsigned first_warp_mask() {
  return blockDim.x >= warp_threads ? full_warp_mask : (1u << blockDim.x) - 1u;
}

// The last 64 -> 1 steps of a shared-memory tree, by warp 0 alone (tree_size >= 64).
// The textbook version declares the tree `volatile` and relies on the 32 lanes of
// a warp running in lockstep. Since Volta (independent thread scheduling) lanes may
// interleave arbitrarily: lane t can read tree[t + 16] before or after lane t + 16
// has overwritten it, and without a barrier nothing even orders lane t's store
// before lane t - 8 loads it. So each step reads, synchronises the warp, writes,
// and synchronises again: __syncwarp() is both the barrier and the memory fence
// among the warp's lanes, which makes `volatile` unnecessary.
template <class T, class Op>
__device__ __forceinline__ void warp_reduce_shared(T* tree, unsigned t, Op op) {
  const unsigned mask = first_warp_mask();
  T v = op(tree[t], tree[t + 32]);
  __syncwarp(mask);
  tree[t] = v;
  __syncwarp(mask);
  v = op(tree[t], tree[t + 16]);
  __syncwarp(mask);
  tree[t] = v;
  __syncwarp(mask);
  v = op(tree[t], tree[t + 8]);
  __syncwarp(mask);
  tree[t] = v;
  __syncwarp(mask);
  v = op(tree[t], tree[t + 4]);
  __syncwarp(mask);
  tree[t] = v;
  __syncwarp(mask);
  v = op(tree[t], tree[t + 2]);
  __syncwarp(mask);
  tree[t] = v;
  __syncwarp(mask);
  v = op(tree[t], tree[t + 1]);
  __syncwarp(mask);
  tree[t] = v;
}

// Shuffle-down reduction of one warp, into lane 0. `lanes` is how many lanes of this
// warp exist (32, or fewer in the last warp of an odd-sized block); only those take
// part (they are the mask), and a lane never combines a partner that does not exist.
template <class T, class Op>
__device__ __forceinline__ T warp_shuffle_reduce(T v, Op op, unsigned lanes) {
  const unsigned mask = lanes >= warp_threads ? full_warp_mask : (1u << lanes) - 1u;
  const unsigned lane = threadIdx.x % warp_threads;
#pragma unroll
  for (unsigned offset = warp_threads / 2; offset > 0; offset /= 2) {
    const T other = scanlab::detail::shfl_down(v, offset, mask);
    if (lane + offset < lanes) v = op(v, other);
  }
  return v;
}

// Grid-stride loading shared by the coarsened rungs: each thread folds elements
// i and i + blockDim.x of every grid-wide tile of 2 * blockDim.x * gridDim.x items.
template <class T, class Op>
__device__ __forceinline__ T grid_stride_load(const T* in, std::int64_t n, const T& identity, Op op) {
  const std::int64_t block = blockDim.x;
  const std::int64_t stride = 2 * block * gridDim.x;
  T sum = identity;
  for (std::int64_t i = blockIdx.x * 2 * block + threadIdx.x; i < n; i += stride) {
    sum = op(sum, in[i]);
    if (i + block < n) sum = op(sum, in[i + block]);
  }
  return sum;
}

// ---------------------------------------------------------------------------------
// Rung 1: interleaved addressing, divergent warps.
// One element per thread into shared memory; at step s, threads whose index is a
// multiple of 2s add the element s away. Correct, but the active threads are
// scattered (t % (2s) == 0): every warp stays busy while most of its lanes idle, and
// the % is slow.
template <class T, class Op>
__global__ void reduce_interleaved_divergent_kernel(const T* in, T* out, std::int64_t n, T identity, Op op,
                                                    unsigned tree_size) {
  T* tree = shared_tree<T>();
  const unsigned t = threadIdx.x;
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + t;
  tree[t] = i < n ? in[i] : identity;
  pad_tree(tree, tree_size, identity);
  __syncthreads();
  for (unsigned s = 1; s < tree_size; s *= 2) {
    // t is a multiple of 2s below tree_size, so t + s < tree_size: no bounds check.
    if (t % (2 * s) == 0) tree[t] = op(tree[t], tree[t + s]);
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = tree[0];
}

// Rung 2: interleaved addressing with a strided index.
// Fixes rung 1's divergence: thread t works on index 2 * s * t, so the active threads
// are contiguous (t < tree_size / 2s) and whole warps retire together. New problem:
// the accesses are strided by 2s words, so lanes of a warp hit the same shared-memory
// bank (2-way conflicts at s = 1, up to 32-way later).
template <class T, class Op>
__global__ void reduce_interleaved_strided_kernel(const T* in, T* out, std::int64_t n, T identity, Op op,
                                                  unsigned tree_size) {
  T* tree = shared_tree<T>();
  const unsigned t = threadIdx.x;
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + t;
  tree[t] = i < n ? in[i] : identity;
  pad_tree(tree, tree_size, identity);
  __syncthreads();
  for (unsigned s = 1; s < tree_size; s *= 2) {
    const unsigned index = 2 * s * t;
    if (index < tree_size) tree[index] = op(tree[index], tree[index + s]);
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = tree[0];
}

// Rung 3: sequential addressing.
// Fixes rung 2's bank conflicts: the stride starts at half the tree and halves;
// thread t adds tree[t + s] to tree[t], so a warp reads 32 consecutive words. New
// problem: half of the threads are idle from the very first step.
template <class T, class Op>
__global__ void reduce_sequential_addressing_kernel(const T* in, T* out, std::int64_t n, T identity, Op op,
                                                    unsigned tree_size) {
  T* tree = shared_tree<T>();
  const unsigned t = threadIdx.x;
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + t;
  tree[t] = i < n ? in[i] : identity;
  pad_tree(tree, tree_size, identity);
  __syncthreads();
  for (unsigned s = tree_size / 2; s > 0; s /= 2) {
    if (t < s) tree[t] = op(tree[t], tree[t + s]);
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = tree[0];
}

// Rung 4: first add during load.
// Fixes rung 3's idle half: each thread loads two elements (a block covers 2 *
// blockDim.x items) and adds them on the way into shared memory. Half the blocks,
// the same tree. Remaining cost: a __syncthreads() for every step, even when only
// one warp is still working.
template <class T, class Op>
__global__ void reduce_first_add_during_load_kernel(const T* in, T* out, std::int64_t n, T identity, Op op,
                                                    unsigned tree_size) {
  T* tree = shared_tree<T>();
  const unsigned t = threadIdx.x;
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * 2 * blockDim.x + t;
  T v = i < n ? in[i] : identity;
  if (i + blockDim.x < n) v = op(v, in[i + blockDim.x]);
  tree[t] = v;
  pad_tree(tree, tree_size, identity);
  __syncthreads();
  for (unsigned s = tree_size / 2; s > 0; s /= 2) {
    if (t < s) tree[t] = op(tree[t], tree[t + s]);
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = tree[0];
}

// Rung 5: unrolled last warp.
// Fixes rung 4's barriers at the bottom of the tree: once 32 threads remain, warp 0
// finishes the last six steps alone with warp-level synchronisation only
// (warp_reduce_shared: __syncwarp() between steps, see there why not `volatile`).
// The tree is padded to at least 64 entries for its first step (t + 32).
template <class T, class Op>
__global__ void reduce_unrolled_last_warp_kernel(const T* in, T* out, std::int64_t n, T identity, Op op,
                                                 unsigned tree_size) {
  T* tree = shared_tree<T>();
  const unsigned t = threadIdx.x;
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * 2 * blockDim.x + t;
  T v = i < n ? in[i] : identity;
  if (i + blockDim.x < n) v = op(v, in[i + blockDim.x]);
  tree[t] = v;
  pad_tree(tree, tree_size, identity);
  __syncthreads();
  for (unsigned s = tree_size / 2; s > 32; s /= 2) {
    if (t < s) tree[t] = op(tree[t], tree[t + s]);
    __syncthreads();
  }
  if (t < 32) warp_reduce_shared(tree, t, op);
  if (t == 0) out[blockIdx.x] = tree[0];
}

// The tree of rungs 6 and 7, fully unrolled for a tree size known at compile time.
template <unsigned TreeSize, class T, class Op>
__device__ __forceinline__ void unrolled_tree(T* tree, unsigned t, Op op) {
  static_assert(TreeSize >= 64 && TreeSize <= 1024 && (TreeSize & (TreeSize - 1)) == 0);
  if constexpr (TreeSize >= 1024) {
    if (t < 512) tree[t] = op(tree[t], tree[t + 512]);
    __syncthreads();
  }
  if constexpr (TreeSize >= 512) {
    if (t < 256) tree[t] = op(tree[t], tree[t + 256]);
    __syncthreads();
  }
  if constexpr (TreeSize >= 256) {
    if (t < 128) tree[t] = op(tree[t], tree[t + 128]);
    __syncthreads();
  }
  if constexpr (TreeSize >= 128) {
    if (t < 64) tree[t] = op(tree[t], tree[t + 64]);
    __syncthreads();
  }
  if (t < 32) warp_reduce_shared(tree, t, op);
}

// Rung 6: complete unroll, the tree size as a template parameter.
// Fixes rung 5's loop overhead: with the (power-of-two padded) tree size known at
// compile time, every step's bound is a constant, the loop disappears and dead steps
// are not compiled at all. The launcher instantiates TreeSize = 64 ... 1024 and picks
// the one for the block size (any block size works; the tree is padded).
template <unsigned TreeSize, class T, class Op>
__global__ void reduce_complete_unroll_kernel(const T* in, T* out, std::int64_t n, T identity, Op op) {
  T* tree = shared_tree<T>();
  const unsigned t = threadIdx.x;
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * 2 * blockDim.x + t;
  T v = i < n ? in[i] : identity;
  if (i + blockDim.x < n) v = op(v, in[i + blockDim.x]);
  tree[t] = v;
  pad_tree(tree, TreeSize, identity);
  __syncthreads();
  unrolled_tree<TreeSize>(tree, t, op);
  if (t == 0) out[blockIdx.x] = tree[0];
}

// Rung 7: thread coarsening with a grid-stride loop.
// Fixes rung 6's one-element-pair-per-thread: the grid is capped at one wave of
// resident blocks and each thread accumulates many elements in a register (two per
// grid-wide step, as the textbook's "version 5"; the COARSE_FACTOR of the other
// textbook version is n / (2 * grid threads) here). Far fewer blocks, far fewer
// shared-memory trees, and the second pass is over at most one wave of partials.
template <unsigned TreeSize, class T, class Op>
__global__ void reduce_coarsened_kernel(const T* in, T* out, std::int64_t n, T identity, Op op) {
  T* tree = shared_tree<T>();
  const unsigned t = threadIdx.x;
  tree[t] = grid_stride_load(in, n, identity, op);
  pad_tree(tree, TreeSize, identity);
  __syncthreads();
  unrolled_tree<TreeSize>(tree, t, op);
  if (t == 0) out[blockIdx.x] = tree[0];
}

// Rung 8: warp shuffles.
// Fixes rung 7's shared-memory tree: values move between the lanes of a warp in
// registers (__shfl_down_sync, 32-bit words at a time so any T travels), shared
// memory holds only one value per warp, and there are just two __syncthreads() in
// all. Blocks whose size is not a multiple of 32 shuffle in the partial last warp
// with a mask of the lanes that exist.
template <class T, class Op>
__global__ void reduce_warp_shuffle_kernel(const T* in, T* out, std::int64_t n, T identity, Op op) {
  T* warp_totals = shared_tree<T>();
  const unsigned t = threadIdx.x;
  const unsigned warp = t / warp_threads, lane = t % warp_threads;
  const unsigned warps = ceil_div(blockDim.x, 32u);
  T v = grid_stride_load(in, n, identity, op);
  v = warp_shuffle_reduce(v, op, min(32u, blockDim.x - warp * 32));
  if (lane == 0) warp_totals[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < warps ? warp_totals[lane] : identity;
    v = warp_shuffle_reduce(v, op, min(32u, blockDim.x));
    if (lane == 0) out[blockIdx.x] = v;
  }
}

namespace cg = cooperative_groups;

// The cooperative-groups functor for our operators where one exists (cg::reduce uses
// the sm_80+ REDUX instruction for 32-bit integers with these), else the operator.
// cg::less / cg::greater only for integers: for floats they drop NaNs depending on the
// operand order, where scanlab's minimum / maximum return NaN.
template <class T, class Op>
__device__ __forceinline__ auto cg_operator(Op op) {
  if constexpr (std::is_same_v<Op, plus>) return cg::plus<T>();
  else if constexpr (std::is_same_v<Op, minimum> && std::is_integral_v<T>) return cg::less<T>();
  else if constexpr (std::is_same_v<Op, maximum> && std::is_integral_v<T>) return cg::greater<T>();
  else return op;
}

// One warp's total via cooperative groups where that is defined: cg::reduce over a
// thread_block_tile<32> for arithmetic T. The partial last warp of an odd-sized block
// is not a full tile (and coalesced_threads() would depend on convergence), and
// cg::reduce is documented for arithmetic types: both fall back to rung 8's shuffles.
template <class T, class Op>
__device__ __forceinline__ T cg_warp_reduce(const cg::thread_block& block, T v, Op op, unsigned lanes) {
  if constexpr (std::is_arithmetic_v<T>) {
    if (lanes == warp_threads) {
      const cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
      return cg::reduce(tile, v, cg_operator<T>(op));
    }
  }
  return warp_shuffle_reduce(v, op, lanes);
}

// Rung 9: cooperative groups.
// Not faster than rung 8, clearer: the block and its warps are explicit objects
// (cg::this_thread_block(), cg::tiled_partition<32>), block.sync() replaces
// __syncthreads(), and cg::reduce does the warp step (with the REDUX instruction
// for 32-bit integer plus/min/max on sm_80+, so no shuffle tree at all there).
template <class T, class Op>
__global__ void reduce_cooperative_groups_kernel(const T* in, T* out, std::int64_t n, T identity, Op op) {
  const cg::thread_block block = cg::this_thread_block();
  T* warp_totals = shared_tree<T>();
  const unsigned t = block.thread_rank();
  const unsigned warp = t / warp_threads, lane = t % warp_threads;
  const unsigned size = block.size();
  const unsigned warps = ceil_div(size, 32u);
  T v = grid_stride_load(in, n, identity, op);
  v = cg_warp_reduce(block, v, op, min(32u, size - warp * 32));
  if (lane == 0) warp_totals[warp] = v;
  block.sync();
  if (warp == 0) {
    v = lane < warps ? warp_totals[lane] : identity;
    v = cg_warp_reduce(block, v, op, min(32u, size));
    if (lane == 0) out[blockIdx.x] = v;
  }
}

// One atomic read-modify-write of *target with op, where the hardware has one.
template <class T, class Op>
__device__ __forceinline__ void atomic_combine(T* target, T value) {
  static_assert(has_native_atomic_v<T, Op>);
  if constexpr (std::is_floating_point_v<T>) {
    atomicAdd(target, value);
  } else {
    // 64-bit integers go through the (unsigned) long long overloads; two's complement
    // addition is the same bits for signed and unsigned.
    using Word = std::conditional_t<sizeof(T) == 4, std::conditional_t<std::is_signed_v<T>, int, unsigned>,
                                    std::conditional_t<std::is_signed_v<T>, long long, unsigned long long>>;
    if constexpr (std::is_same_v<Op, plus> && sizeof(T) == 8) {
      atomicAdd(reinterpret_cast<unsigned long long*>(target), static_cast<unsigned long long>(value));
    } else if constexpr (std::is_same_v<Op, plus>) {
      atomicAdd(reinterpret_cast<Word*>(target), static_cast<Word>(value));
    } else if constexpr (std::is_same_v<Op, minimum>) {
      atomicMin(reinterpret_cast<Word*>(target), static_cast<Word>(value));
    } else {
      atomicMax(reinterpret_cast<Word*>(target), static_cast<Word>(value));
    }
  }
}

// Rung 10 (a variant of rung 8): warp shuffles + one atomic per block.
// Replaces the second pass: each block's thread 0 combines its partial straight
// into *out with an atomic (out is set to the identity first). One pass over the
// partials fewer; the price is generality (only operators with a native atomic:
// integer sum/min/max, float/double sum) and, for floats, determinism (the blocks
// arrive in a different order on every run, and float addition is not associative).
template <class T, class Op>
__global__ void reduce_warp_shuffle_atomic_kernel(const T* in, T* out, std::int64_t n, T identity, Op op) {
  T* warp_totals = shared_tree<T>();
  const unsigned t = threadIdx.x;
  const unsigned warp = t / warp_threads, lane = t % warp_threads;
  const unsigned warps = ceil_div(blockDim.x, 32u);
  T v = grid_stride_load(in, n, identity, op);
  v = warp_shuffle_reduce(v, op, min(32u, blockDim.x - warp * 32));
  if (lane == 0) warp_totals[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < warps ? warp_totals[lane] : identity;
    v = warp_shuffle_reduce(v, op, min(32u, blockDim.x));
    if (lane == 0) atomic_combine<T, Op>(out, v);
  }
}

template <class T>
__global__ void fill_one_kernel(T* out, T value) {
  *out = value;
}

// ---------------------------------------------------------------------------------
// Host side.

// How a rung maps `count` inputs to blocks and how much shared memory it needs.
struct pass_shape {
  std::int64_t items_per_block = 0;  // per block per pass (0: grid-stride, capped grid)
  unsigned tree_size = 0;            // shared tree entries (or warp slots)
};

constexpr pass_shape shape_of(rung r, unsigned block_threads) {
  switch (r) {
    case rung::interleaved_divergent:
    case rung::interleaved_strided:
    case rung::sequential_addressing:
      return {block_threads, next_pow2(block_threads)};
    case rung::first_add_during_load:
      return {2 * std::int64_t{block_threads}, next_pow2(block_threads)};
    case rung::unrolled_last_warp:
    case rung::complete_unroll:
      return {2 * std::int64_t{block_threads}, next_pow2(block_threads < 64 ? 64 : block_threads)};
    case rung::coarsened:
      return {0, next_pow2(block_threads < 64 ? 64 : block_threads)};
    case rung::warp_shuffle:
    case rung::cooperative_groups:
    case rung::warp_shuffle_atomic:
      return {0, warp_threads};
  }
  return {};
}

// Blocks of one pass over `count` items. Grid-stride rungs use one wave of resident
// blocks at most: SMs x (2048 / block_threads).
constexpr std::int64_t pass_blocks(const pass_shape& shape, unsigned block_threads, std::int64_t count,
                                   std::int64_t wave) {
  if (shape.items_per_block > 0) {
    const std::int64_t blocks = ceil_div(count, shape.items_per_block);
    return blocks < 1 ? 1 : blocks;
  }
  // At least one pair of elements per thread, at most one wave.
  std::int64_t blocks = ceil_div(count, 2 * std::int64_t{block_threads});
  if (blocks > wave) blocks = wave;
  return blocks < 1 ? 1 : blocks;
}

template <unsigned TreeSize, class T, class Op>
cudaError_t launch_unrolled(rung r, unsigned grid, unsigned block, std::size_t shared, cudaStream_t stream,
                            const T* in, T* out, std::int64_t n, const T& identity, Op op) {
  const auto kernel = r == rung::complete_unroll ? reduce_complete_unroll_kernel<TreeSize, T, Op>
                                                  : reduce_coarsened_kernel<TreeSize, T, Op>;
  return scanlab::detail::launch(kernel, grid, block, shared, stream, in, out, n, identity, op);
}

// One pass: `grid` blocks of rung r over in[0, n), one value per block to out.
template <class T, class Op>
cudaError_t launch_pass(rung r, unsigned grid, unsigned block, const pass_shape& shape, cudaStream_t stream,
                        const T* in, T* out, std::int64_t n, const T& identity, Op op) {
  const std::size_t shared = std::size_t{shape.tree_size} * sizeof(T);
  // The rungs before the unrolled ones take the tree size as an argument.
  const auto tree_rung = [&](void (*kernel)(const T*, T*, std::int64_t, T, Op, unsigned)) {
    return scanlab::detail::launch(kernel, grid, block, shared, stream, in, out, n, identity, op, shape.tree_size);
  };
  // The warp-based rungs need none.
  const auto warp_rung = [&](void (*kernel)(const T*, T*, std::int64_t, T, Op)) {
    return scanlab::detail::launch(kernel, grid, block, shared, stream, in, out, n, identity, op);
  };
  switch (r) {
    case rung::interleaved_divergent: return tree_rung(reduce_interleaved_divergent_kernel<T, Op>);
    case rung::interleaved_strided: return tree_rung(reduce_interleaved_strided_kernel<T, Op>);
    case rung::sequential_addressing: return tree_rung(reduce_sequential_addressing_kernel<T, Op>);
    case rung::first_add_during_load: return tree_rung(reduce_first_add_during_load_kernel<T, Op>);
    case rung::unrolled_last_warp: return tree_rung(reduce_unrolled_last_warp_kernel<T, Op>);
    case rung::complete_unroll:
    case rung::coarsened:
      switch (shape.tree_size) {
        case 64: return launch_unrolled<64>(r, grid, block, shared, stream, in, out, n, identity, op);
        case 128: return launch_unrolled<128>(r, grid, block, shared, stream, in, out, n, identity, op);
        case 256: return launch_unrolled<256>(r, grid, block, shared, stream, in, out, n, identity, op);
        case 512: return launch_unrolled<512>(r, grid, block, shared, stream, in, out, n, identity, op);
        case 1024: return launch_unrolled<1024>(r, grid, block, shared, stream, in, out, n, identity, op);
        default: return cudaErrorInvalidValue;
      }
    case rung::warp_shuffle: return warp_rung(reduce_warp_shuffle_kernel<T, Op>);
    case rung::cooperative_groups: return warp_rung(reduce_cooperative_groups_kernel<T, Op>);
    case rung::warp_shuffle_atomic:
      return cudaErrorInvalidValue;  // not a pass-based rung
  }
  return cudaErrorInvalidValue;
}

inline cudaError_t resident_wave(unsigned block_threads, std::int64_t& wave) {
  int device = 0, sms = 0;
  SCANLAB_TRY(cudaGetDevice(&device));
  SCANLAB_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const std::int64_t per_sm = 2048 / block_threads;
  wave = std::int64_t{sms} * (per_sm < 1 ? 1 : per_sm);
  return cudaSuccess;
}

template <class T, class Op>
cudaError_t run_atomic(const T* d_in, T* d_out, std::int64_t n, T identity, Op op, void* d_temp,
                       std::size_t& temp_bytes, unsigned block, cudaStream_t stream) {
  if constexpr (!has_native_atomic_v<T, Op>) {
    return cudaErrorNotSupported;
  } else {
    // Nothing is used: 1 byte, so that the caller's allocation is not null.
    if (const auto answer = scanlab::detail::temp_storage_query(d_temp, temp_bytes, 1)) return *answer;
    std::int64_t wave = 0;
    SCANLAB_TRY(resident_wave(block, wave));
    const pass_shape shape = shape_of(rung::warp_shuffle_atomic, block);
    const auto grid = static_cast<unsigned>(pass_blocks(shape, block, n, wave));
    SCANLAB_TRY(scanlab::detail::launch(fill_one_kernel<T>, 1, 1, 0, stream, d_out, identity));
    return scanlab::detail::launch(reduce_warp_shuffle_atomic_kernel<T, Op>, grid, block,
                                   std::size_t{shape.tree_size} * sizeof(T), stream, d_in, d_out, n, identity, op);
  }
}

template <class T, class Op>
cudaError_t run_ladder(rung r, const T* d_in, T* d_out, std::int64_t n, T identity, Op op, void* d_temp,
                       std::size_t& temp_bytes, int block_threads, cudaStream_t stream) {
  static_assert(std::is_trivially_copyable_v<T>, "ladder kernels need a trivially copyable type");
  if (n < 0 || block_threads < 1 || block_threads > 1024 || static_cast<int>(r) < 0 ||
      static_cast<int>(r) >= rung_count) {
    return cudaErrorInvalidValue;
  }
  const auto block = static_cast<unsigned>(block_threads);
  if (r == rung::warp_shuffle_atomic) return run_atomic(d_in, d_out, n, identity, op, d_temp, temp_bytes, block, stream);

  const pass_shape shape = shape_of(r, block);
  std::int64_t wave = 0;
  if (shape.items_per_block == 0) SCANLAB_TRY(resident_wave(block, wave));
  // Pass k writes one partial per block; passes alternate between two buffers
  // (the first pass's partials, the second's), the last pass writes d_out.
  const std::int64_t first = pass_blocks(shape, block, n, wave);
  const std::int64_t second = first > 1 ? pass_blocks(shape, block, first, wave) : 0;
  if (first > INT_MAX) return cudaErrorInvalidValue;  // more blocks than a grid can have
  const std::size_t first_bytes = first > 1 ? scanlab::detail::align_up(first * sizeof(T)) : 0;
  const std::size_t second_bytes = second > 1 ? scanlab::detail::align_up(second * sizeof(T)) : 0;
  const std::size_t required = first_bytes + second_bytes > 0 ? first_bytes + second_bytes : 1;
  if (const auto answer = scanlab::detail::temp_storage_query(d_temp, temp_bytes, required,
                                                                reinterpret_cast<std::uintptr_t>(d_temp) % alignof(T) == 0)) {
    return *answer;
  }
  T* buffers[2] = {static_cast<T*>(d_temp),
                   reinterpret_cast<T*>(static_cast<unsigned char*>(d_temp) + first_bytes)};
  const T* in = d_in;
  std::int64_t count = n;
  for (int pass = 0;; ++pass) {
    const std::int64_t blocks = pass_blocks(shape, block, count, wave);
    T* out = blocks == 1 ? d_out : buffers[pass % 2];
    SCANLAB_TRY(launch_pass(r, static_cast<unsigned>(blocks), block, shape, stream, in, out, count, identity, op));
    if (blocks == 1) return cudaSuccess;
    in = out;
    count = blocks;
  }
}

}  // namespace detail

// Runtime-selected rung (the benchmark and tests loop over all_rungs).
template <class T, class Op>
[[nodiscard]] cudaError_t reduce(rung r, const T* d_in, T* d_out, std::int64_t n, T identity, Op op, void* d_temp,
                                 std::size_t& temp_bytes, int block_threads, cudaStream_t stream = nullptr) {
  return detail::run_ladder(r, d_in, d_out, n, identity, op, d_temp, temp_bytes, block_threads, stream);
}

// One named launcher per rung, in ladder order.
#define SCANLAB_LADDER_LAUNCHER(name)                                                                            \
  template <class T, class Op>                                                                                   \
  [[nodiscard]] cudaError_t reduce_##name(const T* d_in, T* d_out, std::int64_t n, T identity, Op op,            \
                                          void* d_temp, std::size_t& temp_bytes, int block_threads,              \
                                          cudaStream_t stream = nullptr) {                                       \
    return detail::run_ladder(rung::name, d_in, d_out, n, identity, op, d_temp, temp_bytes, block_threads,       \
                              stream);                                                                           \
  }
SCANLAB_LADDER_LAUNCHER(interleaved_divergent)
SCANLAB_LADDER_LAUNCHER(interleaved_strided)
SCANLAB_LADDER_LAUNCHER(sequential_addressing)
SCANLAB_LADDER_LAUNCHER(first_add_during_load)
SCANLAB_LADDER_LAUNCHER(unrolled_last_warp)
SCANLAB_LADDER_LAUNCHER(complete_unroll)
SCANLAB_LADDER_LAUNCHER(coarsened)
SCANLAB_LADDER_LAUNCHER(warp_shuffle)
SCANLAB_LADDER_LAUNCHER(cooperative_groups)
SCANLAB_LADDER_LAUNCHER(warp_shuffle_atomic)
#undef SCANLAB_LADDER_LAUNCHER

}  // namespace scanlab::ladder
