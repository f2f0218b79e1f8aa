// Host-only: the long double reference for test_gpu_linrec (see linrec_test_reference.hpp).
#include "linrec/linrec_test_reference.hpp"

#include "linrec/linrec_reference.hpp"

namespace scanlab::test::linrec {

template <class T>
reference_result reference_check(const reference_operands_t<T>& ops, std::int64_t batch, std::int64_t length,
                                 bool interleaved, std::span<const T> x0s, T x0, std::span<const T> x,
                                 bool final_only) {
  linrec_ref::operands<T> o;
  o.kind = ops.kind == reference_form::ab       ? linrec_ref::form::ab
           : ops.kind == reference_form::lambda ? linrec_ref::form::lambda
                                                : linrec_ref::form::ema;
  o.p = ops.p;
  o.q = ops.q;
  o.alpha = static_cast<long double>(ops.alpha);
  const linrec_ref::check_result r = linrec_ref::check(o, batch, length, interleaved, x0s, x0, x, final_only);
  return reference_result{.checked = r.checked,
                          .max_relative_error = r.max_relative_error,
                          .max_bound_ratio = r.max_bound_ratio,
                          .worst_index = r.worst_index,
                          .special_mismatches = r.special_mismatches,
                          .first_special_mismatch = r.first_special_mismatch};
}

template reference_result reference_check<float>(const reference_operands_t<float>&, std::int64_t, std::int64_t,
                                                 bool, std::span<const float>, float, std::span<const float>, bool);
template reference_result reference_check<double>(const reference_operands_t<double>&, std::int64_t, std::int64_t,
                                                  bool, std::span<const double>, double, std::span<const double>,
                                                  bool);

}  // namespace scanlab::test::linrec
