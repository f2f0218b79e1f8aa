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

// Of two NaNs, the one whose bits read as the larger unsigned integer: a choice that does
// not depend on the operands' order, so the NaN a reduction returns is the same whatever
// order its tree combines them in.
template <class T>
__host__ __device__ constexpr const T& nan_of(const T& a, const T& b) {
  if (!is_nan(a)) return b;
  if (!is_nan(b)) return a;
  using Bits = cuda::std::conditional_t<sizeof(T) == 8, unsigned long long,
                                        cuda::std::conditional_t<sizeof(T) == 4, unsigned, unsigned short>>;
  static_assert(sizeof(Bits) == sizeof(T), "NaN-aware min/max: floating-point types of 2, 4 or 8 bytes");
  return cuda::std::bit_cast<Bits>(b) > cuda::std::bit_cast<Bits>(a) ? b : a;
}

// -0.0 orders before +0.0 (the IEEE 754-2019 minimum/maximum rule); a and b compare equal.
template <class T>
__host__ __device__ constexpr bool negative_zero_first(const T& a, const T& b) {
  return cuda::std::signbit(b) && !cuda::std::signbit(a);
}

}  // namespace detail

// The smaller of two values, as NumPy's and PyTorch's min: for floating-point types a NaN
// operand gives a NaN (wherever it sits; of two NaNs, a fixed one: detail::nan_of), and
// -0.0 is smaller than +0.0. With those two rules the operator is commutative and
// associative on every input, so a reduction or scan with it returns the same bits
// whatever order its tree combines the operands in. For integers and other types: b < a ? b : a.
struct minimum {
  template <class T>
  __host__ __device__ constexpr T operator()(const T& a, const T& b) const {
    if constexpr (detail::has_nan_v<T>) {
      if (detail::is_nan(a) || detail::is_nan(b)) return detail::nan_of(a, b);
      if (a == b) return detail::negative_zero_first(a, b) ? b : a;
    }
    return b < a ? b : a;
  }
};

// The larger of two values; NaN and signed zeros as minimum (+0.0 is larger than -0.0).
struct maximum {
  template <class T>
  __host__ __device__ constexpr T operator()(const T& a, const T& b) const {
    if constexpr (detail::has_nan_v<T>) {
      if (detail::is_nan(a) || detail::is_nan(b)) return detail::nan_of(a, b);
      if (a == b) return detail::negative_zero_first(a, b) ? a : b;
    }
    return a < b ? b : a;
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
