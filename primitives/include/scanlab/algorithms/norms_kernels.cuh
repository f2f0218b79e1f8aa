// What scanlab's norms (scanlab/algorithms/norms.cuh) compute, as kinds of
// scanlab::transform_reduce: each entry point is one call of the reduction engine
// (device/reduce_kernels.cuh, reduce.cuh) with
//   - an input: the array x, or zip(x, y) (two arrays read side by side, each with
//     16-byte vector loads when they share their alignment),
//   - a transform: the product x * y, the square of x or of x - y formed in Acc, or the
//     scaled square of l2_norm below (a three-part state),
//   - the accumulator, summed with scanlab::plus: Acc, or that three-part state,
//   - an epilogue run on the device by the thread that writes the result (the square
//     root, the mean; NaN for the RMS of nothing), through with_epilogue.
// So the norms have the engine's launches, tuning, determinism, temp-storage protocol,
// cooperative-launch fallback and graph capture, and nothing of their own but the
// arithmetic here. Everything below is __host__ __device__: the CPU tests
// (tests/norms/test_norm_arithmetic.cu) run the same arithmetic without a GPU.
#pragma once

#include <scanlab/functional.cuh>
#include <scanlab/reduce.cuh>

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

template <class T>
__host__ __device__ __forceinline__ T abs_value(T a) {
  return a < T(0) ? -a : a;  // -0 -> -0 (harmless: only squared); NaN stays NaN
}

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

// The order of detail::tree_reduce (block/block_reduce.cuh), which the engine uses for
// the items of a unit: rounds that combine values[i] with values[i + half], half =
// ceil(width / 2), until one value is left. Written as a recursion over compile-time
// indices (registers, no pragma) so that the host runs it too. Call as tree_fold<N>(v, op).
template <int Width, int I = 0, class V, int N, class Op>
__host__ __device__ __forceinline__ V tree_fold(V (&values)[N], Op op) {
  static_assert(Width >= 1 && Width <= N, "the tree covers a prefix of the array");
  if constexpr (Width == 1) {
    return values[0];
  } else if constexpr (I + (Width + 1) / 2 < Width) {
    values[I] = op(values[I], values[I + (Width + 1) / 2]);
    return tree_fold<Width, I + 1>(values, op);
  } else {
    return tree_fold<(Width + 1) / 2, 0>(values, op);
  }
}

// ---- The values that are multiplied or squared ---------------------------------------
// Each element is converted to Acc before anything else is done with it.

template <class Acc>
struct element {  // x
  template <class T>
  __host__ __device__ __forceinline__ Acc operator()(T x) const {
    return static_cast<Acc>(x);
  }
};

template <class Acc>
struct difference {  // x - y, formed in Acc (exact for float data accumulated in double)
  template <class T>
  __host__ __device__ __forceinline__ Acc operator()(const zip_item<T>& item) const {
    return static_cast<Acc>(item.x) - static_cast<Acc>(item.y);
  }
};

// ---- Plain transforms: dot, sum_squares, and the norms when squares fit (below) -------

template <class Acc>
struct product {  // x * y
  template <class T>
  __host__ __device__ __forceinline__ Acc operator()(const zip_item<T>& item) const {
    return static_cast<Acc>(item.x) * static_cast<Acc>(item.y);
  }
};

template <class Acc, class Value>
struct square {  // value(item)^2
  template <class Item>
  __host__ __device__ __forceinline__ Acc operator()(const Item& item) const {
    const Acc v = Value{}(item);
    return v * v;
  }
};

// ---- The scaled sum of squares of l2_norm, rms and rms_diff -------------------------
//
// Three sums, of the squares of the small, the medium and the big values, each scaled by
// a constant power of two so that no square overflows or underflows (Blue 1978; the
// "safe scaling" of Anderson 2017, which the reference BLAS nrm2 uses since LAPACK
// 3.10). Scaling by a power of two is exact, the three sums combine by addition
// (associative, so the engine's trees apply: one pass, no division per element), and
// only the epilogue mixes them.
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
// Each value goes to exactly one sum; zero to the small one (its square is +0 in any sum).
//
// When Acc is so much wider than the data type In that no square of an In (or of a
// difference of two) can leave Acc's normal range (float data accumulated in double),
// no scaling is needed: the kinds below then sum plain squares in Acc (squares_fit_v).
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

// The state the engine sums (with scanlab::plus: operator+ below).
template <class Acc>
struct scaled_ssq {
  Acc small;
  Acc medium;
  Acc big;
};

template <class Acc>
__host__ __device__ __forceinline__ scaled_ssq<Acc> operator+(const scaled_ssq<Acc>& a, const scaled_ssq<Acc>& b) {
  return {a.small + b.small, a.medium + b.medium, a.big + b.big};
}

// value(item) -> its scaled square, in the one sum its magnitude belongs to.
template <class Acc, class Value>
struct scaled_square {
  using k = scaled_constants<Acc>;
  using state = scaled_ssq<Acc>;

  __host__ __device__ __forceinline__ static state of_magnitude(Acc a) {
    if (a > k::t_big) {
      const Acc scaled = a * k::s_big;
      return {Acc(0), Acc(0), scaled * scaled};
    }
    if (a < k::t_small) {
      const Acc scaled = a * k::s_small;
      return {scaled * scaled, Acc(0), Acc(0)};
    }
    return {Acc(0), a * a, Acc(0)};  // medium, and NaN (every comparison with NaN is false)
  }

  template <class Item>
  __host__ __device__ __forceinline__ state operator()(const Item& item) const {
    return of_magnitude(abs_value(Value{}(item)));
  }

  // The engine's unit shortcut (detail::unit_reducer): the K items of one 16-byte unit.
  // When every value is medium or zero (the common case) the small and big sums of the
  // unit are +0 and its medium sum is a tree of plain squares: one compare per value
  // more than a plain sum of squares. A unit holding a huge, tiny, Inf or NaN value
  // takes the per-item states. Either way the bits are those of tree_reduce over
  // operator()(items[m]): +0 + +0 is +0, a zero's square is +0 in whichever sum it
  // lands, and the medium squares meet in the same tree (test_norm_arithmetic checks it).
  template <class Item, int K>
  __host__ __device__ __forceinline__ state reduce_unit(const Item (&items)[K], plus op) const {
    Acc a[K];
    bool all_medium = true;
    SCANLAB_NORMS_DEVICE_UNROLL
    for (int j = 0; j < K; ++j) {
      a[j] = abs_value(Value{}(items[j]));
      all_medium &= ((a[j] >= k::t_small) & (a[j] <= k::t_big)) | (a[j] == Acc(0));
    }
    if (all_medium) {
      SCANLAB_NORMS_DEVICE_UNROLL
      for (int j = 0; j < K; ++j) a[j] = a[j] * a[j];
      return {Acc(0), tree_fold<K>(a, op), Acc(0)};
    }
    state s[K];
    SCANLAB_NORMS_DEVICE_UNROLL
    for (int j = 0; j < K; ++j) s[j] = of_magnitude(a[j]);
    return tree_fold<K>(s, op);
  }
};

// ---- Epilogues ----------------------------------------------------------------------

// sqrt(total / divisor) (divisor: 1 for the norm, n for the RMS), from a plain sum of
// squares or from the three scaled sums; NaN where `undefined` (the RMS of nothing).
template <class Acc>
struct root_epilogue {
  Acc divisor;
  bool undefined;

  __host__ __device__ Acc operator()(Acc sum) const {
    if (undefined || sum != sum) return quiet_nan<Acc>();
    return square_root(sum) / square_root(divisor);
  }

  __host__ __device__ Acc operator()(const scaled_ssq<Acc>& s) const {
    using k = scaled_constants<Acc>;
    if (undefined || s.medium != s.medium) return quiet_nan<Acc>();
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

struct no_epilogue {};

// ---- Kinds: what each entry point computes ------------------------------------------
// inputs: 1 (x) or 2 (zip(x, y)); transform; state: the accumulator the engine sums
// with plus, from state{} (zero); epilogue(n): the final step, or no_epilogue.

template <class T, class Acc>
struct dot_kind {
  static constexpr int inputs = 2;
  using transform = product<Acc>;
  using state = Acc;
  __host__ __device__ static no_epilogue epilogue(std::int64_t) { return {}; }
};

template <class T, class Acc>
struct sum_squares_kind {  // unscaled: it overflows when the true value does
  static constexpr int inputs = 1;
  using transform = square<Acc, element<Acc>>;
  using state = Acc;
  __host__ __device__ static no_epilogue epilogue(std::int64_t) { return {}; }
};

// sqrt(sum of value^2 [/ n]), scaled unless the squares fit Acc (squares_fit_v holds
// for differences too: the +1 in its max exponent).
template <class T, class Acc, int Inputs, class Value, bool Mean>
struct root_kind {
  static constexpr int inputs = Inputs;
  static constexpr bool scaled = !squares_fit_v<T, Acc>;
  using transform = std::conditional_t<scaled, scaled_square<Acc, Value>, square<Acc, Value>>;
  using state = std::conditional_t<scaled, scaled_ssq<Acc>, Acc>;
  __host__ __device__ static root_epilogue<Acc> epilogue(std::int64_t n) {
    return {Mean ? static_cast<Acc>(n) : Acc(1), Mean && n == 0};
  }
};

template <class T, class Acc>
using l2_norm_kind = root_kind<T, Acc, 1, element<Acc>, false>;
template <class T, class Acc>
using rms_kind = root_kind<T, Acc, 1, element<Acc>, true>;
template <class T, class Acc>
using rms_diff_kind = root_kind<T, Acc, 2, difference<Acc>, true>;

// One entry point: transform_reduce of Kind over x (or zip(x, y)) into *out.
template <class Kind, class T, class Acc>
cudaError_t run_kind(void* d_temp, std::size_t& temp_bytes, const T* x, const T* y, Acc* out, std::int64_t n,
                     cudaStream_t stream) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "norms take float or double data");
  static_assert(std::is_same_v<Acc, float> || std::is_same_v<Acc, double>, "norms accumulate in float or double");
  static_assert(sizeof(Acc) >= sizeof(T), "the accumulator must be at least as wide as the data");
  const auto reduce_into = [&](auto in) {
    const auto epilogue = Kind::epilogue(n);
    if constexpr (std::is_same_v<decltype(epilogue), const no_epilogue>) {
      return transform_reduce(d_temp, temp_bytes, in, out, n, typename Kind::state{}, plus{},
                              typename Kind::transform{}, stream);
    } else {
      return transform_reduce(d_temp, temp_bytes, in, with_epilogue(out, epilogue), n, typename Kind::state{},
                              plus{}, typename Kind::transform{}, stream);
    }
  };
  if constexpr (Kind::inputs == 2) return reduce_into(zip(x, y));
  else return reduce_into(x);
}

}  // namespace scanlab::detail::norms

#undef SCANLAB_NORMS_DEVICE_UNROLL
