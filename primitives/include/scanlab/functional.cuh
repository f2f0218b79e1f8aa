// Binary operators for reductions and scans, usable on host and device.
//
// Reductions need an associative and commutative operator; scans need only
// associativity (operators are applied as op(earlier, later), never swapped).
#pragma once

#include <cuda/std/limits>
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

// Returns the first argument on ties and when the second is NaN.
struct minimum {
  template <class T>
  __host__ __device__ constexpr T operator()(const T& a, const T& b) const { return b < a ? b : a; }
};

struct maximum {
  template <class T>
  __host__ __device__ constexpr T operator()(const T& a, const T& b) const { return a < b ? b : a; }
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
