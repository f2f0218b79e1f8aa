// The sequential long double reference of apps/linrec/linrec_reference.hpp as the GPU tests
// use it, behind plain declarations: its bodies are compiled in a host-only translation
// unit (linrec_test_reference.cpp), so nvcc never meets long double in a .cu (where it
// would warn that device code treats it as double, warning 20208).
#pragma once

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
// reference within the error bound. Defined for float and double.
template <class T>
reference_result reference_check(const reference_operands_t<T>& ops, std::int64_t batch, std::int64_t length,
                                 bool interleaved, std::span<const T> x0s, T x0, std::span<const T> x,
                                 bool final_only);

extern template reference_result reference_check<float>(const reference_operands_t<float>&, std::int64_t,
                                                        std::int64_t, bool, std::span<const float>, float,
                                                        std::span<const float>, bool);
extern template reference_result reference_check<double>(const reference_operands_t<double>&, std::int64_t,
                                                          std::int64_t, bool, std::span<const double>, double,
                                                          std::span<const double>, bool);

}  // namespace scanlab::test::linrec
