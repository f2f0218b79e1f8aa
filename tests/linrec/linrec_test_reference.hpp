// The sequential long double reference of apps/linrec/linrec_reference.hpp as the GPU tests
// use it, behind plain declarations: its bodies are compiled in a host-only translation
// unit (linrec_test_reference.cpp), so nvcc never meets long double in a .cu (where it
// would warn that device code treats it as double, warning 20208).
#pragma once

#include "linrec/linrec_layout.hpp"

#include <scanlab/complex.hpp>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <span>

namespace scanlab::test::linrec {

enum class reference_form { ab, lambda, ema };

// Where the maps come from: (a, b), (lambda, u) or a signal with alpha.
template <class T>
struct reference_operands_t {
  reference_form kind = reference_form::ab;
  std::span<const T> p;  // a, lambda or the signal
  std::span<const T> q;  // b or u (empty for ema)
  double alpha = 0;      // ema only (every float and double alpha is exact here)
};

// As linrec_ref::check_result.
struct reference_result {
  std::int64_t checked = 0;
  double max_relative_error = 0;
  double max_bound_ratio = 0;
  std::int64_t worst_index = -1;
  std::int64_t special_mismatches = 0;
  std::int64_t first_special_mismatch = -1;
  [[nodiscard]] bool pass() const { return special_mismatches == 0 && max_bound_ratio <= 1.0; }
};

// linrec_ref::check: x (or, with final_only, the final states) against the sequential
// reference within the error bound; reverse: x_i = a_i x_{i+1} + b_i from x_n = x0.
// Defined for float and double.
template <class T>
reference_result reference_check(const reference_operands_t<T>& ops, std::int64_t batch, std::int64_t length,
                                 bool interleaved, std::span<const T> x0s, T x0, std::span<const T> x,
                                 bool final_only, bool reverse = false);

// (Defined for float, double, __half, __nv_bfloat16, scanlab::complex<float> and
// scanlab::complex<double>: SCANLAB_LINREC_REFERENCE_TYPES.)
#define SCANLAB_LINREC_REFERENCE_TYPES(X) \
  X(float) X(double) X(__half) X(__nv_bfloat16) X(scanlab::complex<float>) X(scanlab::complex<double>)

#define SCANLAB_LINREC_REFERENCE_CHECK(T)                                                                          \
  template reference_result reference_check<T>(const reference_operands_t<T>&, std::int64_t, std::int64_t, bool, \
                                               std::span<const T>, T, std::span<const T>, bool, bool);
#define SCANLAB_LINREC_EXTERN_REFERENCE_CHECK(T) extern SCANLAB_LINREC_REFERENCE_CHECK(T)
SCANLAB_LINREC_REFERENCE_TYPES(SCANLAB_LINREC_EXTERN_REFERENCE_CHECK)

using linrec_ref::sequence_layout;

// The same for any layout (linrec_layout.hpp: channels-last, variable lengths).
template <class T>
reference_result reference_check_layout(const reference_operands_t<T>& ops, const sequence_layout& layout,
                                        std::span<const T> x0s, T x0, std::span<const T> x, bool final_only,
                                        bool reverse = false);

extern template reference_result reference_check_layout<float>(const reference_operands_t<float>&,
                                                              const sequence_layout&, std::span<const float>, float,
                                                              std::span<const float>, bool, bool);
extern template reference_result reference_check_layout<double>(const reference_operands_t<double>&,
                                                               const sequence_layout&, std::span<const double>,
                                                               double, std::span<const double>, bool, bool);

struct gradient_reference_result {
  reference_result a, b, x0;  // dL/da, dL/db, dL/dx0
  [[nodiscard]] bool pass() const { return a.pass() && b.pass() && x0.pass(); }
};

// linrec_ref::check_gradients: the backward pass of a forward solve (a, x0s or x0; x its
// result, grad_x = dL/dx) against the long double adjoint of that x. Empty grad_* are not
// checked.
template <class T>
gradient_reference_result reference_check_gradients(std::span<const T> a, std::span<const T> x,
                                                    std::span<const T> grad_x, std::int64_t batch,
                                                    std::int64_t length, bool interleaved, std::span<const T> x0s,
                                                    T x0, std::span<const T> grad_a, std::span<const T> grad_b,
                                                    std::span<const T> grad_x0);

#define SCANLAB_LINREC_REFERENCE_GRADIENTS(T)                                                                 \
  template gradient_reference_result reference_check_gradients<T>(                                            \
      std::span<const T>, std::span<const T>, std::span<const T>, std::int64_t, std::int64_t, bool,          \
      std::span<const T>, T, std::span<const T>, std::span<const T>, std::span<const T>);
#define SCANLAB_LINREC_EXTERN_REFERENCE_GRADIENTS(T) extern SCANLAB_LINREC_REFERENCE_GRADIENTS(T)
SCANLAB_LINREC_REFERENCE_TYPES(SCANLAB_LINREC_EXTERN_REFERENCE_GRADIENTS)

// The same for any layout.
template <class T>
gradient_reference_result reference_check_gradients_layout(std::span<const T> a, std::span<const T> x,
                                                           std::span<const T> grad_x, const sequence_layout& layout,
                                                           std::span<const T> x0s, T x0, std::span<const T> grad_a,
                                                           std::span<const T> grad_b, std::span<const T> grad_x0);

extern template gradient_reference_result reference_check_gradients_layout<float>(
    std::span<const float>, std::span<const float>, std::span<const float>, const sequence_layout&,
    std::span<const float>, float, std::span<const float>, std::span<const float>, std::span<const float>);
extern template gradient_reference_result reference_check_gradients_layout<double>(
    std::span<const double>, std::span<const double>, std::span<const double>, const sequence_layout&,
    std::span<const double>, double, std::span<const double>, std::span<const double>, std::span<const double>);

}  // namespace scanlab::test::linrec
