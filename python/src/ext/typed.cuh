// What the .cu files of the bindings share: the run-time element type turned into a C++
// type (visit), the accumulator types of reductions and scans, host scalars read as an
// element type, and the closed-range test that compaction and partition run on the device.
// Included by the .cu files only (it names CUDA qualifiers); module.cpp sees ops.hpp alone.
#pragma once

#include "ops.hpp"

#include <cstdint>
#include <type_traits>

namespace scanlab_py {

template <class T>
struct type_tag {
  using type = T;
};

// f(type_tag<T>{}) for the C++ type of `t`, returning what f returns: the integer types,
// float32 and float64 (cudaErrorInvalidValue for float16, bfloat16 and codes outside the
// enum, which the Python side never passes here).
template <class F>
cudaError_t visit(dtype t, F&& f) {
  switch (t) {
    case dtype::int32: return f(type_tag<std::int32_t>{});
    case dtype::int64: return f(type_tag<std::int64_t>{});
    case dtype::uint32: return f(type_tag<std::uint32_t>{});
    case dtype::uint64: return f(type_tag<std::uint64_t>{});
    case dtype::float32: return f(type_tag<float>{});
    case dtype::float64: return f(type_tag<double>{});
    case dtype::float16:
    case dtype::bfloat16: break;  // the linear recurrence's storage types only (linrec.cu)
  }
  return cudaErrorInvalidValue;
}

// The accumulator of sums and products (ops.hpp: accumulator): 64-bit for integers.
template <class T>
using wide_t = std::conditional_t<std::is_floating_point_v<T>, T,
                                  std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>>;

// A host scalar as T (the member the Python side filled for T's kind).
template <class T>
T read_scalar(const scalar& s) {
  if constexpr (std::is_floating_point_v<T>) return static_cast<T>(s.f);
  else if constexpr (std::is_signed_v<T>) return static_cast<T>(s.i);
  else return static_cast<T>(s.u);
}

// lo <= x <= hi: select's and the two-way partition's test. The Python side turns every
// bound (x > a, x < b, a <= x <= b, strict or not, rounded to T) into this one closed
// range, so that each element type costs one kernel. Empty when lo > hi; NaN is in no range.
template <class T>
struct in_range {
  T lo;
  T hi;
  __host__ __device__ bool operator()(const T& x) const { return lo <= x && x <= hi; }
};

template <class T>
in_range<T> read_range(const scalar& lo, const scalar& hi) {
  return {read_scalar<T>(lo), read_scalar<T>(hi)};
}

}  // namespace scanlab_py
