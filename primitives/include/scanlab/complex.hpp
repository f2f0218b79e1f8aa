// scanlab/complex.hpp: a complex number for device code, scanlab::complex<R> (R = float or
// double), with the plain arithmetic the linear recurrence solver needs.
//
// Why scanlab's own and not cuda::std::complex: its product is the textbook formula with
// fused multiply-adds (two FMAs and a product per part), where cuda::std::complex's
// operator* follows C99 Annex G (inf/NaN recovery: tests and branches in every product);
// the solver multiplies in its innermost loops, and its NaN rule is its own (a NaN in a
// or b propagates; a == 0 resets). It has a trivial default constructor, so tiles of
// them live in shared memory and cross warp shuffles as plain words; and it compiles in
// host-only code (the apps' references), where this header needs no CUDA header.
//
// Layout: {re, im}, aligned to 2 * sizeof(R): the layout of std::complex<R>,
// cuda::std::complex<R>, cuComplex / cuDoubleComplex, NumPy's complex64 / complex128 and
// PyTorch's complex tensors, so a pointer to any of those may be reinterpret_cast to
// scanlab::complex<R>*.
#pragma once

#include <cmath>
#include <type_traits>

#if defined(__CUDACC__)
#define SCANLAB_COMPLEX_HOST_DEVICE __host__ __device__
#else
#define SCANLAB_COMPLEX_HOST_DEVICE
#endif

namespace scanlab {

template <class R>
struct alignas(2 * sizeof(R)) complex {
  static_assert(std::is_same_v<R, float> || std::is_same_v<R, double>, "complex<float> or complex<double>");
  using value_type = R;
  R re;
  R im;

  complex() = default;  // trivial: uninitialised, as a float is
  SCANLAB_COMPLEX_HOST_DEVICE constexpr complex(R real, R imag = R(0)) : re(real), im(imag) {}
};

template <class T>
inline constexpr bool is_complex_v = false;
template <class R>
inline constexpr bool is_complex_v<complex<R>> = true;

namespace complex_detail {
template <class R>
SCANLAB_COMPLEX_HOST_DEVICE inline R fma(R a, R b, R c) {
#ifdef __CUDA_ARCH__
  if constexpr (std::is_same_v<R, float>) return __fmaf_rn(a, b, c);
  else return __fma_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}
}  // namespace complex_detail

template <class R>
SCANLAB_COMPLEX_HOST_DEVICE inline bool operator==(const complex<R>& x, const complex<R>& y) {
  return x.re == y.re && x.im == y.im;
}
template <class R>
SCANLAB_COMPLEX_HOST_DEVICE inline bool operator!=(const complex<R>& x, const complex<R>& y) {
  return !(x == y);
}
template <class R>
SCANLAB_COMPLEX_HOST_DEVICE inline complex<R> operator+(const complex<R>& x, const complex<R>& y) {
  return {x.re + y.re, x.im + y.im};
}
template <class R>
SCANLAB_COMPLEX_HOST_DEVICE inline complex<R> operator-(const complex<R>& x, const complex<R>& y) {
  return {x.re - y.re, x.im - y.im};
}
// (x.re y.re - x.im y.im, x.re y.im + x.im y.re), one product and one FMA per part.
template <class R>
SCANLAB_COMPLEX_HOST_DEVICE inline complex<R> operator*(const complex<R>& x, const complex<R>& y) {
  return {complex_detail::fma(x.re, y.re, -(x.im * y.im)), complex_detail::fma(x.re, y.im, x.im * y.re)};
}
// a x + c, two FMAs per part (the recurrence's step).
template <class R>
SCANLAB_COMPLEX_HOST_DEVICE inline complex<R> fma(const complex<R>& a, const complex<R>& x, const complex<R>& c) {
  return {complex_detail::fma(a.re, x.re, complex_detail::fma(-a.im, x.im, c.re)),
          complex_detail::fma(a.re, x.im, complex_detail::fma(a.im, x.re, c.im))};
}
template <class R>
SCANLAB_COMPLEX_HOST_DEVICE inline complex<R> conj(const complex<R>& x) {
  return {x.re, -x.im};
}

}  // namespace scanlab
