// Binary operators for reductions and scans, usable on host and device.
//
// Reductions need an associative and commutative operator; scans need only
// associativity (operators are applied as op(earlier, later), never swapped).
#pragma once

#include <cuda/std/bit>
#include <cuda/std/cmath>
#include <cuda/std/limits>
#include <cuda/std/type_traits>
#include <type_traits>

namespace scanlab {

struct plus {
  template <class T>
  __host__ __device__ constexpr T operator()(const T& a, const T& b) const { return a + b; }
};

struct multiplies {
  template <class T>
  __host__ __device__ constexpr T operator()(const T& a, const T& b) const { return a * b; }
};

namespace detail {

// Floating-point types (float, double, and any T whose numeric_limits has a quiet NaN).
template <class T>
inline constexpr bool has_nan_v = cuda::std::numeric_limits<T>::has_quiet_NaN;

template <class T>
__host__ __device__ constexpr bool is_nan(const T& x) { return !(x == x); }

// NaN-aware min (Min) or max of two floating-point values, with selects only: a branch
// per call compiled into branches with reconvergence in every reduction that folds with it
// (the float max reduction of 2^28 ran at 41 % of memcpy, its grid kernel spilling).
//   - a NaN operand gives a NaN; of two NaNs, the one whose bits read as the larger unsigned
//     integer: a choice that does not depend on the operands' order, so the NaN a reduction
//     returns is the same whatever order its tree combines them in;
//   - equal operands differ in their bits only as -0.0 and +0.0: min takes the set sign bit
//     (the OR of the bits: -0.0 orders before +0.0, IEEE 754-2019), max the clear one (AND).
template <bool Min, class T>
__host__ __device__ constexpr T nan_aware_min_max(const T& a, const T& b) {
  using Bits = cuda::std::conditional_t<sizeof(T) == 8, unsigned long long,
                                        cuda::std::conditional_t<sizeof(T) == 4, unsigned, unsigned short>>;
  static_assert(sizeof(Bits) == sizeof(T), "NaN-aware min/max: floating-point types of 2, 4 or 8 bytes");
  const Bits ab = cuda::std::bit_cast<Bits>(a);
  const Bits bb = cuda::std::bit_cast<Bits>(b);
  const T equal = cuda::std::bit_cast<T>(static_cast<Bits>(Min ? (ab | bb) : (ab & bb)));
  const T ordered = Min ? (b < a ? b : a) : (a < b ? b : a);
  const T numbers = a == b ? equal : ordered;
  const bool a_nan = is_nan(a);
  const bool b_nan = is_nan(b);
  const T nan = a_nan && b_nan ? (bb > ab ? b : a) : (a_nan ? a : b);
  return a_nan || b_nan ? nan : numbers;
}

}  // namespace detail

// The smaller of two values, as NumPy's and PyTorch's min: for floating-point types a NaN
// operand gives a NaN (wherever it sits; of two NaNs, a fixed one: detail::nan_aware_min_max), and
// -0.0 is smaller than +0.0. With those two rules the operator is commutative and
// associative on every input, so a reduction or scan with it returns the same bits
// whatever order its tree combines the operands in. For integers and other types: b < a ? b : a.
struct minimum {
  template <class T>
  __host__ __device__ constexpr T operator()(const T& a, const T& b) const {
    if constexpr (detail::has_nan_v<T>) {
      return detail::nan_aware_min_max<true>(a, b);
    } else {
      return b < a ? b : a;
    }
  }
};

// The larger of two values; NaN and signed zeros as minimum (+0.0 is larger than -0.0).
struct maximum {
  template <class T>
  __host__ __device__ constexpr T operator()(const T& a, const T& b) const {
    if constexpr (detail::has_nan_v<T>) {
      return detail::nan_aware_min_max<false>(a, b);
    } else {
      return a < b ? b : a;
    }
  }
};

// The identity element of an operator for arithmetic T (identity<Op, T>::value()),
// where one exists. Ladder kernels pad partial tiles with it; production code
// never needs one.
template <class Op, class T>
struct identity;

template <class T>
struct identity<plus, T> {
  __host__ __device__ static constexpr T value() { return T(0); }
};
template <class T>
struct identity<multiplies, T> {
  __host__ __device__ static constexpr T value() { return T(1); }
};
template <class T>
struct identity<minimum, T> {
  __host__ __device__ static constexpr T value() {
    if constexpr (cuda::std::numeric_limits<T>::has_infinity) return cuda::std::numeric_limits<T>::infinity();
    else return cuda::std::numeric_limits<T>::max();
  }
};
template <class T>
struct identity<maximum, T> {
  __host__ __device__ static constexpr T value() {
    if constexpr (cuda::std::numeric_limits<T>::has_infinity) return -cuda::std::numeric_limits<T>::infinity();
    else return cuda::std::numeric_limits<T>::lowest();
  }
};

}  // namespace scanlab
