// scanlab-linrec's element types on the host: the C++ type of each dtype the app takes
// (float32, float64, and the linrec-only float16, bfloat16, complex64, complex128 of
// common/array.hpp) and the conversions the app needs around them. Host code (main.cpp, the
// reference) and the GPU translation units both include it; it needs the CUDA headers
// (cuda_fp16.h, cuda_bf16.h) but no CUDA compiler.
#pragma once

#include "common/array.hpp"

#include <scanlab/complex.hpp>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <complex>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace scanlab::io {
// host_array::as<__half>() and the others (array.hpp's dtype_for).
template <>
struct dtype_for<__half> {
  static constexpr dtype value = dtype::f16;
};
template <>
struct dtype_for<__nv_bfloat16> {
  static constexpr dtype value = dtype::bf16;
};
template <>
struct dtype_for<scanlab::complex<float>> {
  static constexpr dtype value = dtype::c64;
};
template <>
struct dtype_for<scanlab::complex<double>> {
  static constexpr dtype value = dtype::c128;
};
}  // namespace scanlab::io

namespace scanlab::linrec_app {

// Whether scanlab-linrec computes in `t` as it is stored (the other dtypes become float32).
constexpr bool is_element_type(io::dtype t) {
  return io::is_float(t) || io::is_16bit_float(t) || io::is_complex(t);
}

// Whether the app runs the (lambda, u) and EMA forms in `t` (float32 and float64; the others
// solve the (a, b) form: fewer kernels to build, the library has every form in every type).
constexpr bool all_forms_type(io::dtype t) { return t == io::dtype::f32 || t == io::dtype::f64; }

// Calls f.template operator()<T>() with the element type of `t`: float, double, __half,
// __nv_bfloat16, scanlab::complex<float>, scanlab::complex<double>. Only for the app's
// element types (is_element_type): io::visit stays over the dtypes every app takes.
template <class F>
decltype(auto) visit_element(io::dtype t, F&& f) {
  switch (t) {
    case io::dtype::f32: return f.template operator()<float>();
    case io::dtype::f64: return f.template operator()<double>();
    case io::dtype::f16: return f.template operator()<__half>();
    case io::dtype::bf16: return f.template operator()<__nv_bfloat16>();
    case io::dtype::c64: return f.template operator()<scanlab::complex<float>>();
    case io::dtype::c128: return f.template operator()<scanlab::complex<double>>();
    default: break;
  }
  throw std::logic_error("linrec: " + std::string(io::name(t)) + " is not an element type");
}

// A real value as T: rounded once to nearest even (16-bit types through io's rounding, not
// the CUDA host intrinsics' float step), complex with a zero imaginary part.
template <class T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, __half>) {
    __half_raw raw;
    raw.x = io::float16_from_double(v);
    return __half(raw);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    __nv_bfloat16_raw raw;
    raw.x = io::bfloat16_from_double(v);
    return __nv_bfloat16(raw);
  } else if constexpr (scanlab::is_complex_v<T>) {
    using R = typename T::value_type;
    return T(static_cast<R>(v), R(0));
  } else {
    return static_cast<T>(v);
  }
}

// A stored value as a complex double (exact: the 16-bit types widen exactly).
template <class T>
std::complex<double> to_complex(T v) {
  if constexpr (std::is_same_v<T, __half>) {
    return io::float16_to_double(static_cast<__half_raw>(v).x);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return io::bfloat16_to_double(static_cast<__nv_bfloat16_raw>(v).x);
  } else if constexpr (scanlab::is_complex_v<T>) {
    return {static_cast<double>(v.re), static_cast<double>(v.im)};
  } else {
    return static_cast<double>(v);
  }
}

}  // namespace scanlab::linrec_app
