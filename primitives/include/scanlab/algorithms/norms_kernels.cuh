// Kernels and dispatch of scanlab's norms (scanlab/algorithms/norms.cuh): one fused,
// deterministic pass over one or two arrays, in the single-launch design of
// scanlab::reduce (device/reduce_kernels.cuh), with two inputs read side by side.
//
// What is computed is a "kind" (dot_kind, l2_norm_kind, ...): how many inputs it reads,
// the value it takes from each element (x * y, x, x - y, ...), the accumulator that sums
// those values (a plain sum, or the scaled sum of squares of l2_norm) and how the total
// becomes the result (as is, sqrt, sqrt of the mean).
//
// Work split (as in reduce_kernels.cuh). The input is cut into "units": 16-byte vectors of
// the aligned body when both inputs have the same address modulo 16 (then one split into
// head scalars, whole vectors and tail scalars serves both), single elements otherwise.
// Block b reduces the contiguous units [b * units_per_block, (b + 1) * units_per_block);
// block 0 also takes the head and the last block the tail. Thread t takes units
// t, t + threads, ..., several per iteration with every load of an iteration issued
// before any is used; the values of one iteration (up to 16 floats) are summed in a fixed
// tree, and that group total is added to the thread's running total. So each thread's
// sequential chain is n / (grid * threads * group) additions long (about 120 for 2^28
// floats on an H100), and everything above it is a tree: far better rounding than one
// long sequential sum.
//
// Determinism: every order above depends only on n, the inputs' addresses modulo 16 and
// the grid size (fixed per device), never on timing. No atomics.
#pragma once

#include <scanlab/block/block_reduce.cuh>
#include <scanlab/detail/launch.cuh>
#include <scanlab/detail/util.cuh>
#include <scanlab/detail/vector_io.cuh>
#include <scanlab/error.hpp>
#include <scanlab/functional.cuh>

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

// `#pragma unroll` in the __host__ __device__ functions below, for the device pass only
// (the host compiler warns about a pragma it does not know). Undefined at the end.
#if defined(__CUDA_ARCH__)
#define SCANLAB_NORMS_DEVICE_UNROLL _Pragma("unroll")
#else
#define SCANLAB_NORMS_DEVICE_UNROLL
#endif

namespace scanlab::detail::norms {

// Tuning (sm_90), the reasoning of reduce_policy_sm90: one resident wave of 2 blocks of
// 512 threads per SM, each thread with 4 independent 16-byte loads in flight per
// iteration (64 KB per SM: about three times bandwidth x latency). A two-input kind
// takes 2 vectors of each input per iteration, so the bytes in flight stay the same and
// the registers stay under the 64 a thread may use at 2 x 512 threads per SM.
struct norms_policy_sm90 {
  static constexpr int threads = 512;
  static constexpr int vectors_per_thread = 4;       // 16-byte loads per iteration, all inputs together
  static constexpr int scalar_items_per_thread = 8;  // elements per input per iteration, scalar path
  static constexpr int blocks_per_sm = 2;
};

template <class T>
__host__ __device__ __forceinline__ T abs_value(T a) {
  return a < T(0) ? -a : a;  // -0 -> -0 (harmless: only squared); NaN stays NaN
}

// The accumulators and kinds below are __host__ __device__ so that the CPU tests can
// check their arithmetic (the scaling of l2_norm above all) without a GPU.
template <class T>
__host__ __device__ __forceinline__ T square_root(T a) {
  if constexpr (std::is_same_v<T, float>) return sqrtf(a);
  else return sqrt(a);
}

template <class T>
__host__ __device__ __forceinline__ T quiet_nan() {
#ifdef __CUDA_ARCH__
  if constexpr (std::is_same_v<T, float>) return __int_as_float(0x7fffffff);
  else return __longlong_as_double(0x7fffffffffffffffll);
#else
  return std::numeric_limits<T>::quiet_NaN();
#endif
}

// A fixed pairwise tree over values[Begin, Begin + Count): the halves are summed first,
// then added. Every index is a compile-time constant, so the array stays in registers
// (a loop-based tree over 16 values was put in local memory by the compiler).
template <int Begin, int Count, class T, int N, class Op>
__host__ __device__ __forceinline__ T pairwise(const T (&values)[N], Op op) {
  static_assert(Count >= 1 && Begin + Count <= N, "range inside the array");
  if constexpr (Count == 1) {
    return values[Begin];
  } else {
    constexpr int half = (Count + 1) / 2;
    return op(pairwise<Begin, half>(values, op), pairwise<Begin + half, Count - half>(values, op));
  }
}

template <class T, int N, class Op>
__host__ __device__ __forceinline__ T pairwise(const T (&values)[N], Op op) {
  return pairwise<0, N>(values, op);
}

// ---- Accumulators ------------------------------------------------------------------

// A plain sum of the values.
template <class Acc>
struct sum_accumulator {
  using state = Acc;
  __host__ __device__ __forceinline__ static state zero() { return Acc(0); }
  template <int K>
  __host__ __device__ __forceinline__ static state group(const Acc (&values)[K]) {
    return pairwise(values, plus{});
  }
  __host__ __device__ __forceinline__ static state combine(const state& a, const state& b) { return a + b; }
};

// The scaled sum of squares of l2_norm: three sums, of the squares of the small, the
// medium and the big values, each scaled by a constant power of two so that no square
// overflows or underflows (Blue 1978; the "safe scaling" of Anderson 2017, which the
// reference BLAS nrm2 uses since LAPACK 3.10). Scaling by a power of two is exact, the
// three sums combine by addition (associative, so the usual trees apply: one pass, no
// division per element), and only the final step mixes them.
//
// The constants, for Acc with 2^e_min its smallest normal, 2^e_max its overflow
// threshold and 2^(e_min - p + 1) its smallest subnormal, for inputs of up to 2^40
// elements (two bits of margin everywhere):
//   medium [t_small, t_big], unscaled: t_small = 2^(e_min / 2), so a medium square is
//          normal; t_big = 2^((e_max - 40) / 2 - 1), so 2^40 medium squares stay finite.
//   big    (t_big, inf], scaled by s_big = 2^-((e_max + 40) / 2 + 2): 2^40 scaled squares
//          of the largest finite value stay finite, and the smallest big value's scaled
//          square is still normal (2^-86 for float).
//   small  (0, t_small), scaled by s_small = 2^((p - 1 - e_min) + e_min / 2): the
//          smallest subnormal's scaled square is normal, and 2^40 scaled squares of
//          t_small stay finite.
//   float : t_small 2^-63,  t_big 2^43,  s_big 2^-86,  s_small 2^86
//   double: t_small 2^-511, t_big 2^491, s_big 2^-534, s_small 2^563
// Each value goes to exactly one sum; zero counts as medium.
//
// When Acc is so much wider than the data type In that no square of an In (or of a
// difference of two) can leave Acc's normal range (float data accumulated in double),
// no scaling is needed: the accumulator is then a plain sum of squares in `medium`.
template <class Acc>
struct scaled_constants;
template <>
struct scaled_constants<float> {
  static constexpr float t_small = 0x1p-63f, t_big = 0x1p43f;
  static constexpr float s_small = 0x1p86f, s_big = 0x1p-86f;
  static constexpr float inv_s_small = 0x1p-86f, inv_s_big = 0x1p86f;
};
template <>
struct scaled_constants<double> {
  static constexpr double t_small = 0x1p-511, t_big = 0x1p491;
  static constexpr double s_small = 0x1p563, s_big = 0x1p-534;
  static constexpr double inv_s_small = 0x1p-563, inv_s_big = 0x1p534;
};

template <class In, class Acc>
inline constexpr bool squares_fit_v =
    std::numeric_limits<Acc>::max_exponent >= 2 * (std::numeric_limits<In>::max_exponent + 1) + 40 &&
    std::numeric_limits<Acc>::min_exponent <=
        2 * (std::numeric_limits<In>::min_exponent - std::numeric_limits<In>::digits);

template <class Acc>
struct scaled_ssq {
  Acc small;
  Acc medium;
  Acc big;
};

template <class In, class Acc>
struct scaled_ssq_accumulator {
  using state = scaled_ssq<Acc>;
  using k = scaled_constants<Acc>;
  static constexpr bool needs_scaling = !squares_fit_v<In, Acc>;

  __host__ __device__ __forceinline__ static state zero() { return {Acc(0), Acc(0), Acc(0)}; }

  __host__ __device__ __forceinline__ static void add_one(state& s, Acc v) {
    const Acc a = abs_value(v);
    if (a > k::t_big) {
      const Acc scaled = a * k::s_big;
      s.big += scaled * scaled;
    } else if (a < k::t_small) {
      const Acc scaled = a * k::s_small;
      s.small += scaled * scaled;
    } else {  // medium, and NaN (every comparison with NaN is false)
      s.medium += a * a;
    }
  }

  template <int K>
  __host__ __device__ __forceinline__ static state group(const Acc (&values)[K]) {
    bool all_medium = true;
    if constexpr (needs_scaling) {
SCANLAB_NORMS_DEVICE_UNROLL
      for (int j = 0; j < K; ++j) {
        const Acc a = abs_value(values[j]);
        all_medium &= ((a >= k::t_small) & (a <= k::t_big)) | (a == Acc(0));
      }
    }
    if (all_medium) {  // the common case: a plain tree of squares
      Acc squares[K];
SCANLAB_NORMS_DEVICE_UNROLL
      for (int j = 0; j < K; ++j) squares[j] = values[j] * values[j];
      return {Acc(0), pairwise(squares, plus{}), Acc(0)};
    }
    state s = zero();  // a group with a huge, tiny, Inf or NaN value: one at a time
SCANLAB_NORMS_DEVICE_UNROLL
    for (int j = 0; j < K; ++j) add_one(s, values[j]);
    return s;
  }

  __host__ __device__ __forceinline__ static state combine(const state& a, const state& b) {
    return {a.small + b.small, a.medium + b.medium, a.big + b.big};
  }

  // sqrt(total / divisor), from the three sums (divisor: 1 for the norm, n for the RMS).
  __host__ __device__ static Acc root(const state& s, Acc divisor) {
    if (s.medium != s.medium) return quiet_nan<Acc>();
    const Acc root_divisor = square_root(divisor);
    if (s.big > Acc(0)) {  // the small values cannot matter next to a big one
      const Acc total = s.big + (s.medium * k::s_big) * k::s_big;
      return square_root(total) / root_divisor * k::inv_s_big;
    }
    if (s.small > Acc(0)) {
      const Acc y_small = square_root(s.small) / root_divisor * k::inv_s_small;
      if (s.medium > Acc(0)) {
        const Acc y_medium = square_root(s.medium) / root_divisor;
        const Acc y_max = y_small > y_medium ? y_small : y_medium;
        const Acc y_min = y_small > y_medium ? y_medium : y_small;
        const Acc ratio = y_min / y_max;
        return y_max * square_root(Acc(1) + ratio * ratio);
      }
      return y_small;
    }
    return square_root(s.medium) / root_divisor;
  }
};

// ---- Kinds: what each entry point computes -----------------------------------------

template <class T, class Acc>
struct dot_kind {
  static constexpr int inputs = 2;
  using accumulator = sum_accumulator<Acc>;
  __host__ __device__ __forceinline__ static Acc value(T x, T y) { return static_cast<Acc>(x) * static_cast<Acc>(y); }
  __host__ __device__ __forceinline__ static Acc finish(const Acc& total, std::int64_t) { return total; }
};

template <class T, class Acc>
struct sum_squares_kind {
  static constexpr int inputs = 1;
  using accumulator = sum_accumulator<Acc>;
  __host__ __device__ __forceinline__ static Acc value(T x, T) { return static_cast<Acc>(x) * static_cast<Acc>(x); }
  __host__ __device__ __forceinline__ static Acc finish(const Acc& total, std::int64_t) { return total; }
};

template <class T, class Acc>
struct l2_norm_kind {
  static constexpr int inputs = 1;
  using accumulator = scaled_ssq_accumulator<T, Acc>;
  __host__ __device__ __forceinline__ static Acc value(T x, T) { return static_cast<Acc>(x); }
  __host__ __device__ __forceinline__ static Acc finish(const typename accumulator::state& s, std::int64_t) {
    return accumulator::root(s, Acc(1));
  }
};

template <class T, class Acc>
struct rms_kind {
  static constexpr int inputs = 1;
  using accumulator = scaled_ssq_accumulator<T, Acc>;
  __host__ __device__ __forceinline__ static Acc value(T x, T) { return static_cast<Acc>(x); }
  __host__ __device__ __forceinline__ static Acc finish(const typename accumulator::state& s, std::int64_t n) {
    return n == 0 ? quiet_nan<Acc>() : accumulator::root(s, static_cast<Acc>(n));
  }
};

// The difference is formed in Acc (exact for float data accumulated in double).
// Its accumulator is that of a difference: In's squares_fit_v holds for x - y as well
// (the +1 in squares_fit_v's max exponent).
template <class T, class Acc>
struct rms_diff_kind {
  static constexpr int inputs = 2;
  using accumulator = scaled_ssq_accumulator<T, Acc>;
  __host__ __device__ __forceinline__ static Acc value(T x, T y) { return static_cast<Acc>(x) - static_cast<Acc>(y); }
  __host__ __device__ __forceinline__ static Acc finish(const typename accumulator::state& s, std::int64_t n) {
    return n == 0 ? quiet_nan<Acc>() : accumulator::root(s, static_cast<Acc>(n));
  }
};

// ---- The per-block work ------------------------------------------------------------

struct norm_layout {
  std::int64_t units = 0;  // vectors of the aligned body, or elements
  bool vectorized = false;
};

// x and y (y == x for one input) share one vector split when they have the same address
// modulo 16; otherwise every element is loaded on its own.
template <class T>
__host__ __device__ __forceinline__ norm_layout make_norm_layout(const T* x, const T* y, std::int64_t n) {
  const auto ax = reinterpret_cast<std::uintptr_t>(x);
  const auto ay = reinterpret_cast<std::uintptr_t>(y);
  if (element_aligned(x) && element_aligned(y) && ax % vector_bytes == ay % vector_bytes) {
    return {split_for_vectors(x, n).vectors, true};
  }
  return {n, false};
}

template <class Kind>
struct combine_op {
  using state = typename Kind::accumulator::state;
  __device__ __forceinline__ state operator()(const state& a, const state& b) const {
    return Kind::accumulator::combine(a, b);
  }
};

template <class Policy, class Kind, class T>
struct norm_agent {
  using accumulator = typename Kind::accumulator;
  using state = typename accumulator::state;
  using Acc = decltype(Kind::value(T(), T()));
  static constexpr int threads = Policy::threads;
  static constexpr int vi = vector_items<T>;
  static constexpr int unroll = Policy::vectors_per_thread / Kind::inputs;  // vectors per input per iteration
  static constexpr int scalar_unroll = Policy::scalar_items_per_thread;
  static_assert(unroll >= 1, "the policy must allow one vector per input");

  __device__ __forceinline__ static state one(T x, T y) {
    Acc v[1] = {Kind::value(x, y)};
    return accumulator::group(v);
  }

  // This thread's part of the units [unit_begin, unit_end), plus the head scalars
  // (with_head) and the tail scalars (with_tail) of the vectorised layout.
  __device__ __forceinline__ static state thread_share(const T* x, const T* y, std::int64_t n,
                                                       std::int64_t unit_begin, std::int64_t unit_end,
                                                       bool with_head, bool with_tail) {
    const int t = static_cast<int>(threadIdx.x);
    state acc = accumulator::zero();
    const norm_layout layout = make_norm_layout(x, y, n);
    if (layout.vectorized) {
      const vector_split split = split_for_vectors(x, n);
      const T* xb = x + split.head;
      const T* yb = y + split.head;
      constexpr std::int64_t stride = std::int64_t{threads} * unroll;
      constexpr std::int64_t reach = std::int64_t{threads} * (unroll - 1);
      std::int64_t i = unit_begin + t;
      for (; i + reach < unit_end; i += stride) {
        vector16<T> xv[unroll];
        vector16<T> yv[unroll];
#pragma unroll
        for (int u = 0; u < unroll; ++u) {
          xv[u] = load_vector(xb + (i + u * std::int64_t{threads}) * vi);
          if constexpr (Kind::inputs == 2) yv[u] = load_vector(yb + (i + u * std::int64_t{threads}) * vi);
        }
        Acc values[unroll * vi];
#pragma unroll
        for (int u = 0; u < unroll; ++u) {
#pragma unroll
          for (int m = 0; m < vi; ++m) {
            values[u * vi + m] = Kind::value(xv[u].items[m], Kind::inputs == 2 ? yv[u].items[m] : xv[u].items[m]);
          }
        }
        acc = accumulator::combine(acc, accumulator::group(values));
      }
      for (; i < unit_end; i += threads) {
        const vector16<T> xv = load_vector(xb + i * vi);
        vector16<T> yv = xv;
        if constexpr (Kind::inputs == 2) yv = load_vector(yb + i * vi);
        Acc values[vi];
#pragma unroll
        for (int m = 0; m < vi; ++m) values[m] = Kind::value(xv.items[m], yv.items[m]);
        acc = accumulator::combine(acc, accumulator::group(values));
      }
      if (with_head && t < split.head) acc = accumulator::combine(acc, one(x[t], y[t]));
      if (with_tail && t < split.tail) {
        const std::int64_t j = n - split.tail + t;
        acc = accumulator::combine(acc, one(x[j], y[j]));
      }
      return acc;
    }
    // Scalar path: units are elements.
    constexpr std::int64_t stride = std::int64_t{threads} * scalar_unroll;
    constexpr std::int64_t reach = std::int64_t{threads} * (scalar_unroll - 1);
    std::int64_t i = unit_begin + t;
    for (; i + reach < unit_end; i += stride) {
      T xs[scalar_unroll];
      T ys[scalar_unroll];
#pragma unroll
      for (int u = 0; u < scalar_unroll; ++u) {
        xs[u] = __ldg(x + i + u * std::int64_t{threads});
        ys[u] = Kind::inputs == 2 ? __ldg(y + i + u * std::int64_t{threads}) : xs[u];
      }
      Acc values[scalar_unroll];
#pragma unroll
      for (int u = 0; u < scalar_unroll; ++u) values[u] = Kind::value(xs[u], ys[u]);
      acc = accumulator::combine(acc, accumulator::group(values));
    }
    for (; i < unit_end; i += threads) acc = accumulator::combine(acc, one(x[i], y[i]));
    return acc;
  }
};

// Block b's share, reduced to partials[b].
template <class Policy, class Kind, class T, class Storage>
__device__ __forceinline__ void norm_block_share(const T* x, const T* y, std::int64_t n,
                                                 std::int64_t units_per_block,
                                                 typename Kind::accumulator::state* partials, Storage& storage) {
  using agent = norm_agent<Policy, Kind, T>;
  using state = typename agent::state;
  const std::int64_t units = make_norm_layout(x, y, n).units;
  const std::int64_t begin = static_cast<std::int64_t>(blockIdx.x) * units_per_block;
  const std::int64_t end = begin + units_per_block < units ? begin + units_per_block : units;
  const state acc = agent::thread_share(x, y, n, begin, end, blockIdx.x == 0, blockIdx.x == gridDim.x - 1);
  const state total = block_reduce<state, Policy::threads>(storage).reduce(acc, combine_op<Kind>{});
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

// *out = finish(partials[0] + ... + partials[count - 1]), by one block, in a fixed order.
template <class Policy, class Kind, class Acc, class Storage>
__device__ __forceinline__ void norm_partials(const typename Kind::accumulator::state* partials, int count,
                                              std::int64_t n, Acc* out, Storage& storage) {
  using accumulator = typename Kind::accumulator;
  using state = typename accumulator::state;
  state acc = accumulator::zero();
  for (int i = static_cast<int>(threadIdx.x); i < count; i += Policy::threads) {
    acc = accumulator::combine(acc, partials[i]);
  }
  const state total = block_reduce<state, Policy::threads>(storage).reduce(acc, combine_op<Kind>{});
  if (threadIdx.x == 0) *out = Kind::finish(total, n);
}

// n of at most one tile: everything in one block, one launch (n == 0 included).
template <class Policy, class Kind, class T, class Acc>
__global__ void __launch_bounds__(Policy::threads)
    norm_single_block_kernel(const T* x, const T* y, std::int64_t n, Acc* out) {
  using agent = norm_agent<Policy, Kind, T>;
  using state = typename agent::state;
  __shared__ typename block_reduce<state, Policy::threads>::temp_storage storage;
  const state acc = agent::thread_share(x, y, n, 0, make_norm_layout(x, y, n).units, true, true);
  const state total = block_reduce<state, Policy::threads>(storage).reduce(acc, combine_op<Kind>{});
  if (threadIdx.x == 0) *out = Kind::finish(total, n);
}

// The whole grid, one resident wave: block partials, then (cooperative launch) a
// grid-wide barrier and block 0 finishes. Without cooperative launch (unsupported or
// refused) it stops after the partials and norm_partials_kernel follows (same code,
// same bits).
template <class Policy, class Kind, class T, class Acc>
__global__ void __launch_bounds__(Policy::threads, Policy::blocks_per_sm)
    norm_grid_kernel(const T* x, const T* y, std::int64_t n, std::int64_t units_per_block,
                     typename Kind::accumulator::state* partials, Acc* out, bool cooperative) {
  using state = typename Kind::accumulator::state;
  __shared__ typename block_reduce<state, Policy::threads>::temp_storage storage;
  norm_block_share<Policy, Kind>(x, y, n, units_per_block, partials, storage);
  if (!cooperative) return;
  // grid.sync() orders every partials store before block 0's loads and ends with a
  // __syncthreads(), so `storage` may be reused.
  cooperative_groups::this_grid().sync();
  if (blockIdx.x == 0) norm_partials<Policy, Kind>(partials, static_cast<int>(gridDim.x), n, out, storage);
}

template <class Policy, class Kind, class Acc>
__global__ void __launch_bounds__(Policy::threads)
    norm_partials_kernel(const typename Kind::accumulator::state* partials, int count, std::int64_t n, Acc* out) {
  using state = typename Kind::accumulator::state;
  __shared__ typename block_reduce<state, Policy::threads>::temp_storage storage;
  norm_partials<Policy, Kind>(partials, count, n, out, storage);
}

// ---- Dispatch ----------------------------------------------------------------------

template <class Policy, class T>
constexpr std::int64_t norm_single_block_items() {
  return std::int64_t{Policy::threads} * Policy::vectors_per_thread * vector_items<T>;
}

template <class Policy, class Kind, class T, class Acc>
cudaError_t dispatch_norm(void* d_temp, std::size_t& temp_bytes, const T* x, const T* y, Acc* out,
                          std::int64_t n, cudaStream_t stream) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "norms take float or double data");
  static_assert(std::is_same_v<Acc, float> || std::is_same_v<Acc, double>, "norms accumulate in float or double");
  static_assert(sizeof(Acc) >= sizeof(T), "the accumulator must be at least as wide as the data");
  using state = typename Kind::accumulator::state;
  if (n < 0) return cudaErrorInvalidValue;

  const auto single_block = [&]() -> cudaError_t {
    return detail::launch(norm_single_block_kernel<Policy, Kind, T, Acc>, 1, Policy::threads, 0, stream, x, y, n, out);
  };
  if (n <= norm_single_block_items<Policy, T>()) {
    if (d_temp == nullptr) {
      temp_bytes = 1;  // never a zero-byte allocation for the caller
      return cudaSuccess;
    }
    return single_block();
  }

  int max_blocks = 0;
  bool cooperative = false;
  constexpr auto kernel = norm_grid_kernel<Policy, Kind, T, Acc>;
  SCANLAB_TRY((resident_grid<kernel>(Policy::threads, Policy::blocks_per_sm, max_blocks, cooperative)));
  const std::size_t required = align_up(static_cast<std::size_t>(max_blocks) * sizeof(state));
  if (d_temp == nullptr) {
    temp_bytes = required;
    return cudaSuccess;
  }
  if (temp_bytes < required || reinterpret_cast<std::uintptr_t>(d_temp) % alignof(state) != 0) {
    return cudaErrorInvalidValue;
  }

  // As many blocks as there are tiles, at most one resident wave; equal contiguous
  // shares rounded up to whole warps of units.
  const norm_layout layout = make_norm_layout(x, y, n);
  const std::int64_t per_iteration = layout.vectorized ? Policy::vectors_per_thread / Kind::inputs
                                                       : Policy::scalar_items_per_thread;
  const std::int64_t unit_tile = std::int64_t{Policy::threads} * per_iteration;
  std::int64_t blocks = ceil_div<std::int64_t>(layout.units, unit_tile);
  if (blocks > max_blocks) blocks = max_blocks;
  if (blocks < 1) blocks = 1;
  const std::int64_t units_per_block =
      ceil_div<std::int64_t>(ceil_div<std::int64_t>(layout.units, blocks), warp_threads) * warp_threads;
  const int grid = static_cast<int>(ceil_div<std::int64_t>(layout.units, units_per_block));
  if (grid <= 1) return single_block();
  auto* partials = static_cast<state*>(d_temp);

  if (cooperative) {
    const cudaError_t status = detail::launch_cooperative(kernel, grid, Policy::threads, stream, x, y, n,
                                                          units_per_block, partials, out, true);
    if (status != cudaErrorCooperativeLaunchTooLarge) return status;
    // Refused (detail/launch.cuh): the two launches below, the same grid and the same bits.
  }
  SCANLAB_TRY(detail::launch(kernel, grid, Policy::threads, 0, stream, x, y, n, units_per_block, partials, out, false));
  return detail::launch(norm_partials_kernel<Policy, Kind, Acc>, 1, Policy::threads, 0, stream,
                        static_cast<const state*>(partials), grid, n, out);
}

}  // namespace scanlab::detail::norms

#undef SCANLAB_NORMS_DEVICE_UNROLL
