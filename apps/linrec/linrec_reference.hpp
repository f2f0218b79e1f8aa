// The CPU reference of scanlab-linrec and its tests: the sequential recurrence in long
// double, and the error bound a GPU result must stay within.
//
// For each sequence (x0 counting as b_{-1}, P_{j,i} = a_{j+1} ... a_i):
//   x_i = a_i x_{i-1} + b_i                   (x_i = b_i when a_i == 0: a reset)
//   S_i = |a_i| S_{i-1} + |b_i|              = sum_j |P_{j,i}| |b_j|, the scale of x_i
//   L_i = |a_i| (L_{i-1} + S_{i-1}) + |b_i|  = sum_j |P_{j,i}| |b_j| (i - j + 1)
// A term b_j P_{j,i} goes through i - j multiplications of a's and, in any tree of
// compositions, at most about 30 further roundings (the depth of scanlab's tree: chunk,
// warp, slot, block, window and state steps). So
//   |x_i(gpu) - x_i| <= eps * (3 L_i + 64 S_i)
// (3: one rounding for the product, one for the sum, one for forming (1 - lambda) or
// alpha * s in the other forms). L_i / S_i is the "memory" of the recurrence at i: about
// 1 / (1 - rho) when |a| <= rho < 1, i / 2 for a prefix sum (a = 1).
// Relative errors are reported as |x_i(gpu) - x_i| / S_i: relative to the size of the
// terms, which stays meaningful where x_i itself cancels to near zero.
//
// Reverse solves (x_i = a_i x_{i+1} + b_i, x_n = x0) are the same walk from the end. The
// backward pass of a forward solve (check_gradients) is checked the same way: its adjoint
// g_i = dL/dx_i + a_{i+1} g_{i+1} is a reverse recurrence (bound as above), and
// dL/da_i = g_i x_{i-1}, dL/dx0 = a_0 g_0 are one product more: |m| times g's bound plus
// one rounding, m the given x_{i-1} (or x0) or a_0.
//
// Element types (element_traits): float and double as above (eps of the type). The 16-bit
// storage types (__half, __nv_bfloat16) are computed in float: the bound is float's plus the
// one rounding of each result to the stored type, u_s S_i (u_s = 2^-11 for float16, 2^-8 for
// bfloat16: half an ulp relative), plus half its smallest subnormal. The inputs are the
// stored values, exact here: the reference solves what the GPU read. Complex
// (scanlab::complex<R>): the same walk in complex long double with |.| the modulus; a
// complex product or FMA errs by up to about 2 eps of its size (normwise), so the relative
// part of the bound is doubled. The backward pass of complex recurrences is PyTorch's
// convention: g_i = dL/dx_i + conj(a_{i+1}) g_{i+1}, dL/da_i = g_i conj(x_{i-1}),
// dL/dx0 = conj(a_0) g_0.
#pragma once

#include "linrec/linrec_layout.hpp"

#include <scanlab/complex.hpp>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace scanlab::linrec_ref {

// How the reference reads an element type T and what the bound charges for it.
template <class T>
struct element_traits {  // float, double
  using value = long double;
  using state_type = T;  // the type the GPU computes in
  static value to_value(T v) { return static_cast<long double>(v); }
  static T from_value(value v) { return static_cast<T>(v); }
  static constexpr long double storage_unit = 0;     // relative rounding of a stored result beyond the state's
  static constexpr long double storage_denorm = 0;   // the stored type's smallest subnormal (if it is not the state's)
  static constexpr long double arithmetic = 1;       // roundings per real operation, relative to a real type's
};
template <>
struct element_traits<__half> {
  using value = long double;
  using state_type = float;
  static value to_value(__half v) { return static_cast<long double>(__half2float(v)); }
  static __half from_value(value v) { return __float2half_rn(static_cast<float>(v)); }
  static constexpr long double storage_unit = 1.0L / 2048;                    // 2^-11
  static constexpr long double storage_denorm = 1.0L / 16777216;              // 2^-24
  static constexpr long double arithmetic = 1;
};
template <>
struct element_traits<__nv_bfloat16> {
  using value = long double;
  using state_type = float;
  static value to_value(__nv_bfloat16 v) { return static_cast<long double>(__bfloat162float(v)); }
  static __nv_bfloat16 from_value(value v) { return __float2bfloat16_rn(static_cast<float>(v)); }
  static constexpr long double storage_unit = 1.0L / 256;                     // 2^-8
  static constexpr long double storage_denorm = 9.18354961579912115600575419705e-41L;  // 2^-133
  static constexpr long double arithmetic = 1;
};
template <class R>
struct element_traits<complex<R>> {
  using value = std::complex<long double>;
  using state_type = R;  // eps and the subnormals of the parts
  static value to_value(complex<R> v) { return {static_cast<long double>(v.re), static_cast<long double>(v.im)}; }
  static complex<R> from_value(value v) { return {static_cast<R>(v.real()), static_cast<R>(v.imag())}; }
  static constexpr long double storage_unit = 0;
  static constexpr long double storage_denorm = 0;
  static constexpr long double arithmetic = 2;
};

template <class T>
using value_t = typename element_traits<T>::value;

inline bool finite_value(long double v) { return std::isfinite(v); }
inline bool finite_value(const std::complex<long double>& v) {
  return std::isfinite(v.real()) && std::isfinite(v.imag());
}
inline bool nan_value(long double v) { return std::isnan(v); }
inline bool nan_value(const std::complex<long double>& v) { return std::isnan(v.real()) || std::isnan(v.imag()); }
inline long double conj_value(long double v) { return v; }
inline std::complex<long double> conj_value(const std::complex<long double>& v) { return std::conj(v); }

enum class form { ab, lambda, ema };

// Where the maps come from: (a, b), (lambda, u) or a signal with alpha.
template <class T>
struct operands {
  form kind = form::ab;
  std::span<const T> p;  // a, lambda or the signal
  std::span<const T> q;  // b or u (empty for ema)
  long double alpha = 0;
};

// The map of element i, exactly (in long double; complex long double for complex T).
template <class T, class V = value_t<T>>
inline void map_at(const operands<T>& ops, std::int64_t i, V& a, V& b) {
  using traits = element_traits<T>;
  const auto index = static_cast<std::size_t>(i);
  const V one = 1;
  a = 0;
  b = 0;
  switch (ops.kind) {
    case form::ab:
      a = traits::to_value(ops.p[index]);
      b = traits::to_value(ops.q[index]);
      return;
    case form::lambda:
      a = one - traits::to_value(ops.p[index]);
      b = traits::to_value(ops.p[index]) * traits::to_value(ops.q[index]);
      return;
    case form::ema:
      a = one - V(ops.alpha);
      b = V(ops.alpha) * traits::to_value(ops.p[index]);
      return;
  }
}

// One step of the reference: state, scale S, weighted length L, and the reach R = the sum
// over the terms of |P_{j,i}| (how strongly absolute errors made at earlier steps still
// count at i: R_i = |a_i| R_{i-1} + 1; at most 1 / (1 - rho) for |a| <= rho < 1).
// (V: long double, or std::complex<long double> with |.| the modulus.)
template <class V>
struct basic_state {
  V x = 0;
  long double scale = 0;
  long double length = 0;
  long double reach = 0;
  void start(V x0) {
    x = x0;
    scale = std::abs(x0);
    length = scale;
    reach = 1;
  }
  void step(V a, V b) {
    if (a == V(0)) {
      x = b;
      scale = std::abs(b);
      length = scale;
      reach = 1;
      return;
    }
    const long double abs_a = std::abs(a);
    x = a * x + b;
    length = abs_a * (length + scale) + std::abs(b);
    scale = abs_a * scale + std::abs(b);
    reach = abs_a * reach + 1;
  }
};
using state = basic_state<long double>;

struct check_result {
  std::int64_t checked = 0;
  double max_relative_error = 0;  // max |err| / S_i over finite references
  double max_bound_ratio = 0;     // max |err| / bound_i (<= 1: within the bound)
  std::int64_t worst_index = -1;  // flat index of the largest bound ratio
  std::int64_t special_mismatches = 0;  // NaN / Inf where the reference has none, or the reverse
  std::int64_t first_special_mismatch = -1;
  [[nodiscard]] bool pass() const { return special_mismatches == 0 && max_bound_ratio <= 1.0; }
};

// The error bound of a state (see the top of this file).
template <class T, class V>
inline long double bound_of(const basic_state<V>& ref) {
  using traits = element_traits<T>;
  using S = typename traits::state_type;
  const long double eps = std::numeric_limits<S>::epsilon() * traits::arithmetic;
  // Relative rounding (eps per rounding, see primitives/docs/linrec.md) plus the underflow
  // floor: a rounding whose result is subnormal errs by up to denorm_min / 2 in absolute
  // terms, and those errors are carried forward like terms, attenuated by |a|; with 3
  // roundings per step and 64 of tree depth, as in the relative part. (A fixed floor of a
  // few denorm_min was too small: a plain sequential float loop through a silent stretch of
  // a sound, EMA alpha = 0.01, erred by 12.5 times it.)
  const long double floor = static_cast<long double>(std::numeric_limits<S>::denorm_min()) / 2 * (3 * ref.reach + 64);
  // The 16-bit types: each result rounded once more, to the stored type.
  const long double stored = traits::storage_unit * ref.scale + traits::storage_denorm / 2;
  return eps * (3 * ref.length + 64 * ref.scale) + floor + stored;
}

// Compares one computed value with a reference value of the given scale (the relative
// error's denominator) and error bound.
// (Complex: any non-finite value matches any other; their NaN and Inf parts depend on the
// product formula.)
template <class T, class V = value_t<T>>
inline void compare_value(check_result& r, V expected, long double scale, long double bound, T computed,
                          std::int64_t flat_index) {
  ++r.checked;
  const V got = element_traits<T>::to_value(computed);
  if (!finite_value(expected) || !finite_value(got)) {
    const bool same = std::is_same_v<V, long double>
                          ? ((nan_value(expected) && nan_value(got)) || (!nan_value(expected) && expected == got))
                          : (!finite_value(expected) && !finite_value(got));
    if (!same) {
      if (r.special_mismatches == 0) r.first_special_mismatch = flat_index;
      ++r.special_mismatches;
    }
    return;
  }
  if (!std::isfinite(scale) || !std::isfinite(bound)) return;  // no finite bound to check against
  const long double error = std::abs(got - expected);
  const double ratio = static_cast<double>(error / bound);
  if (r.worst_index < 0 || ratio > r.max_bound_ratio) {
    r.max_bound_ratio = ratio;
    r.worst_index = flat_index;
  }
  if (scale > 0) {
    const double relative = static_cast<double>(error / scale);
    if (relative > r.max_relative_error) r.max_relative_error = relative;
  } else if (error > 0) {
    r.max_relative_error = std::numeric_limits<double>::infinity();
  }
}

// Compares one computed value with the reference state.
template <class T, class V>
inline void compare(check_result& r, const basic_state<V>& ref, T computed, std::int64_t flat_index) {
  if (!std::isfinite(ref.scale) || !std::isfinite(ref.length)) {  // only the special values are compared
    compare_value<T>(r, ref.x, ref.scale, std::numeric_limits<long double>::infinity(), computed, flat_index);
    return;
  }
  compare_value<T>(r, ref.x, ref.scale, bound_of<T>(ref), computed, flat_index);
}

// m times the reference state (one product more: m's bound plus one rounding).
template <class T, class V>
inline void compare_product(check_result& r, const basic_state<V>& ref, V m, T computed, std::int64_t flat_index) {
  using traits = element_traits<T>;
  using S = typename traits::state_type;
  const long double eps = std::numeric_limits<S>::epsilon() * traits::arithmetic;
  const long double abs_m = std::abs(m);
  const V expected = ref.x * m;
  const long double scale = ref.scale * abs_m;
  const bool finite = std::isfinite(ref.scale) && std::isfinite(ref.length) && std::isfinite(scale);
  // (bound_of's stored part, u_s S + denorm_s / 2, times |m|; the product's own rounding to
  // the stored type: u_s |m| S and denorm_s / 2 again)
  const long double bound = finite ? abs_m * bound_of<T>(ref) + eps * scale +
                                         static_cast<long double>(std::numeric_limits<S>::denorm_min()) / 2 +
                                         traits::storage_unit * scale + traits::storage_denorm / 2
                                   : std::numeric_limits<long double>::infinity();
  compare_value<T>(r, expected, scale, bound, computed, flat_index);
}

// check() for any layout (linrec_layout.hpp: channels-last batches, variable lengths,
// and the two above), one sequence after another: x in the layout (or, with final_only,
// one final state per sequence: the initial state of an empty one).
template <class T>
check_result check_layout(const operands<T>& ops, const sequence_layout& layout, std::span<const T> x0s, T x0,
                          std::span<const T> x, bool final_only, bool reverse = false) {
  const std::int64_t expected = final_only ? layout.sequences : layout.elements();
  if (static_cast<std::int64_t>(x.size()) != expected) throw std::logic_error("linrec check: wrong result size");
  using traits = element_traits<T>;
  using V = value_t<T>;
  check_result r;
  for (std::int64_t k = 0; k < layout.sequences; ++k) {
    basic_state<V> s;
    s.start(x0s.empty() ? traits::to_value(x0) : traits::to_value(x0s[static_cast<std::size_t>(k)]));
    const std::int64_t length = layout.length_of(k);
    for (std::int64_t step = 0; step < length; ++step) {
      const std::int64_t e = layout.at(k, reverse ? length - 1 - step : step);
      V a, b;
      map_at(ops, e, a, b);
      s.step(a, b);
      if (!final_only) compare(r, s, x[static_cast<std::size_t>(e)], e);
    }
    if (final_only) compare(r, s, x[static_cast<std::size_t>(k)], k);
  }
  return r;
}

// Checks x (the whole solution, same layout as the operands) or, with final_only, the
// final states (one per sequence) against the sequential reference. x0s: one per sequence,
// or empty for x0. reverse: x_i = a_i x_{i+1} + b_i from x_n = x0 (the final state is x_0).
template <class T>
check_result check(const operands<T>& ops, std::int64_t batch, std::int64_t length, bool interleaved,
                   std::span<const T> x0s, T x0, std::span<const T> x, bool final_only, bool reverse = false) {
  using traits = element_traits<T>;
  using V = value_t<T>;
  using walk = basic_state<V>;
  const auto initial = [&](std::int64_t k) -> V {
    return x0s.empty() ? traits::to_value(x0) : traits::to_value(x0s[static_cast<std::size_t>(k)]);
  };
  const std::int64_t expected = final_only ? batch : batch * length;
  if (static_cast<std::int64_t>(x.size()) != expected) throw std::logic_error("linrec check: wrong result size");
  check_result r;
  if (reverse || !interleaved) {  // sequence after sequence
    return check_layout(ops, interleaved ? sequence_layout::interleaved(batch, length) : sequence_layout::rows(batch, length),
                        x0s, x0, x, final_only, reverse);
  }
  // Interleaved: row after row, every sequence's state kept (the storage order).
  std::vector<walk> states(static_cast<std::size_t>(batch));
  for (std::int64_t k = 0; k < batch; ++k) states[static_cast<std::size_t>(k)].start(initial(k));
  for (std::int64_t t = 0; t < length; ++t) {
    for (std::int64_t k = 0; k < batch; ++k) {
      V a, b;
      map_at(ops, t * batch + k, a, b);
      walk& s = states[static_cast<std::size_t>(k)];
      s.step(a, b);
      if (!final_only) compare(r, s, x[static_cast<std::size_t>(t * batch + k)], t * batch + k);
    }
  }
  if (final_only) {
    for (std::int64_t k = 0; k < batch; ++k) compare(r, states[static_cast<std::size_t>(k)], x[static_cast<std::size_t>(k)], k);
  }
  return r;
}

// ---- the backward pass ----

struct gradient_check_result {
  check_result a, b, x0;  // dL/da, dL/db, dL/dx0 (those given)
  [[nodiscard]] bool pass() const { return a.pass() && b.pass() && x0.pass(); }
};

// The backward pass of x = forward solve (a, b, x0) given dL/dx (grad_x) and x, checked
// against the long double adjoint of that x: grad_b = g, grad_a[i] = g[i] x[i-1] (x0 at
// each sequence's first element), grad_x0[k] = a[0] g[0] (0 where a[0] == 0). Empty
// grad_a / grad_b / grad_x0 are not checked. Same layouts and x0 conventions as check().
template <class T>
gradient_check_result check_gradients(std::span<const T> a, std::span<const T> x, std::span<const T> grad_x,
                                      const sequence_layout& layout, std::span<const T> x0s, T x0,
                                      std::span<const T> grad_a, std::span<const T> grad_b,
                                      std::span<const T> grad_x0) {
  const std::int64_t n = layout.elements();
  const std::int64_t batch = layout.sequences;
  const auto size_is = [](std::size_t size, std::int64_t want) { return static_cast<std::int64_t>(size) == want; };
  if (!size_is(a.size(), n) || !size_is(grad_x.size(), n) || (!grad_a.empty() && !size_is(x.size(), n)) ||
      (!grad_a.empty() && !size_is(grad_a.size(), n)) || (!grad_b.empty() && !size_is(grad_b.size(), n)) ||
      (!grad_x0.empty() && !size_is(grad_x0.size(), batch))) {
    throw std::logic_error("linrec check_gradients: wrong array size");
  }
  using traits = element_traits<T>;
  using V = value_t<T>;
  const auto value = [](T v) { return traits::to_value(v); };
  gradient_check_result r;
  for (std::int64_t k = 0; k < batch; ++k) {
    const std::int64_t length = layout.length_of(k);
    const auto at = [&](std::int64_t t) { return layout.at(k, t); };
    basic_state<V> g;
    g.start(V(0));
    for (std::int64_t t = length - 1; t >= 0; --t) {
      const std::int64_t e = at(t);
      const V a_next = t + 1 < length ? conj_value(value(a[static_cast<std::size_t>(at(t + 1))])) : V(0);
      g.step(a_next, value(grad_x[static_cast<std::size_t>(e)]));  // a_next == 0 (the last element): a reset
      if (!grad_b.empty()) compare(r.b, g, grad_b[static_cast<std::size_t>(e)], e);
      if (!grad_a.empty()) {
        const V previous = t > 0 ? value(x[static_cast<std::size_t>(at(t - 1))])
                                 : (x0s.empty() ? value(x0) : value(x0s[static_cast<std::size_t>(k)]));
        compare_product(r.a, g, conj_value(previous), grad_a[static_cast<std::size_t>(e)], e);
      }
    }
    if (!grad_x0.empty()) {
      const T computed = grad_x0[static_cast<std::size_t>(k)];
      const V a0 = length > 0 ? value(a[static_cast<std::size_t>(at(0))]) : V(0);
      if (a0 == V(0)) {  // a reset (or an empty sequence): exactly 0
        compare_value<T>(r.x0, V(0), 0, std::numeric_limits<long double>::denorm_min(), computed, k);
      } else {
        compare_product(r.x0, g, conj_value(a0), computed, k);
      }
    }
  }
  return r;
}

// The same for the two fixed-length layouts of check().
template <class T>
gradient_check_result check_gradients(std::span<const T> a, std::span<const T> x, std::span<const T> grad_x,
                                      std::int64_t batch, std::int64_t length, bool interleaved,
                                      std::span<const T> x0s, T x0, std::span<const T> grad_a,
                                      std::span<const T> grad_b, std::span<const T> grad_x0) {
  return check_gradients(a, x, grad_x,
                         interleaved ? sequence_layout::interleaved(batch, length) : sequence_layout::rows(batch, length),
                         x0s, x0, grad_a, grad_b, grad_x0);
}

}  // namespace scanlab::linrec_ref
