// Host-only: the long double reference for test_gpu_linrec (see linrec_test_reference.hpp).
#include "linrec/linrec_test_reference.hpp"

#include "linrec/linrec_reference.hpp"

namespace scanlab::test::linrec {

namespace {
reference_result converted(const linrec_ref::check_result& r) {
  return reference_result{.checked = r.checked,
                          .max_relative_error = r.max_relative_error,
                          .max_bound_ratio = r.max_bound_ratio,
                          .worst_index = r.worst_index,
                          .special_mismatches = r.special_mismatches,
                          .first_special_mismatch = r.first_special_mismatch};
}
template <class T>
linrec_ref::operands<T> operands_of(const reference_operands_t<T>& ops) {
  linrec_ref::operands<T> o;
  o.kind = ops.kind == reference_form::ab       ? linrec_ref::form::ab
           : ops.kind == reference_form::lambda ? linrec_ref::form::lambda
                                                : linrec_ref::form::ema;
  o.p = ops.p;
  o.q = ops.q;
  o.alpha = static_cast<long double>(ops.alpha);
  return o;
}
}  // namespace

template <class T>
reference_result reference_check(const reference_operands_t<T>& ops, std::int64_t batch, std::int64_t length,
                                 bool interleaved, std::span<const T> x0s, T x0, std::span<const T> x,
                                 bool final_only, bool reverse) {
  return converted(linrec_ref::check(operands_of(ops), batch, length, interleaved, x0s, x0, x, final_only, reverse));
}

SCANLAB_LINREC_REFERENCE_TYPES(SCANLAB_LINREC_REFERENCE_CHECK)

template <class T>
reference_result reference_check_layout(const reference_operands_t<T>& ops, const sequence_layout& layout,
                                        std::span<const T> x0s, T x0, std::span<const T> x, bool final_only,
                                        bool reverse) {
  return converted(linrec_ref::check_layout(operands_of(ops), layout, x0s, x0, x, final_only, reverse));
}

template <class T>
gradient_reference_result reference_check_gradients_layout(std::span<const T> a, std::span<const T> x,
                                                           std::span<const T> grad_x, const sequence_layout& layout,
                                                           std::span<const T> x0s, T x0, std::span<const T> grad_a,
                                                           std::span<const T> grad_b, std::span<const T> grad_x0) {
  const linrec_ref::gradient_check_result r =
      linrec_ref::check_gradients(a, x, grad_x, layout, x0s, x0, grad_a, grad_b, grad_x0);
  return {converted(r.a), converted(r.b), converted(r.x0)};
}

// Every element type (the header declares float and double extern; the others are
// instantiated here only, so that adding a type does not recompile every test unit).
#define SCANLAB_LINREC_REFERENCE_LAYOUT(T)                                                                     \
  template reference_result reference_check_layout<T>(const reference_operands_t<T>&, const sequence_layout&, \
                                                      std::span<const T>, T, std::span<const T>, bool, bool);  \
  template gradient_reference_result reference_check_gradients_layout<T>(                                     \
      std::span<const T>, std::span<const T>, std::span<const T>, const sequence_layout&, std::span<const T>, \
      T, std::span<const T>, std::span<const T>, std::span<const T>);
SCANLAB_LINREC_REFERENCE_TYPES(SCANLAB_LINREC_REFERENCE_LAYOUT)

template <class T>
gradient_reference_result reference_check_gradients(std::span<const T> a, std::span<const T> x,
                                                    std::span<const T> grad_x, std::int64_t batch,
                                                    std::int64_t length, bool interleaved, std::span<const T> x0s,
                                                    T x0, std::span<const T> grad_a, std::span<const T> grad_b,
                                                    std::span<const T> grad_x0) {
  const linrec_ref::gradient_check_result r =
      linrec_ref::check_gradients(a, x, grad_x, batch, length, interleaved, x0s, x0, grad_a, grad_b, grad_x0);
  return {converted(r.a), converted(r.b), converted(r.x0)};
}

SCANLAB_LINREC_REFERENCE_TYPES(SCANLAB_LINREC_REFERENCE_GRADIENTS)

}  // namespace scanlab::test::linrec
