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
#pragma once

#include "linrec/linrec_layout.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <vector>

namespace scanlab::linrec_ref {

enum class form { ab, lambda, ema };

// Where the maps come from: (a, b), (lambda, u) or a signal with alpha.
template <class T>
struct operands {
  form kind = form::ab;
  std::span<const T> p;  // a, lambda or the signal
  std::span<const T> q;  // b or u (empty for ema)
  long double alpha = 0;
};

// The map of element i, exactly (in long double).
template <class T>
inline void map_at(const operands<T>& ops, std::int64_t i, long double& a, long double& b) {
  const auto index = static_cast<std::size_t>(i);
  const long double one = 1;
  a = 0;
  b = 0;
  switch (ops.kind) {
    case form::ab:
      a = ops.p[index];
      b = ops.q[index];
      return;
    case form::lambda:
      a = one - static_cast<long double>(ops.p[index]);
      b = static_cast<long double>(ops.p[index]) * static_cast<long double>(ops.q[index]);
      return;
    case form::ema:
      a = one - ops.alpha;
      b = ops.alpha * static_cast<long double>(ops.p[index]);
      return;
  }
}

// One step of the reference: state, scale S, weighted length L, and the reach R = the sum
// over the terms of |P_{j,i}| (how strongly absolute errors made at earlier steps still
// count at i: R_i = |a_i| R_{i-1} + 1; at most 1 / (1 - rho) for |a| <= rho < 1).
struct state {
  long double x = 0;
  long double scale = 0;
  long double length = 0;
  long double reach = 0;
  void start(long double x0) {
    x = x0;
    scale = std::fabs(x0);
    length = scale;
    reach = 1;
  }
  void step(long double a, long double b) {
    if (a == 0) {
      x = b;
      scale = std::fabs(b);
      length = scale;
      reach = 1;
      return;
    }
    const long double abs_a = std::fabs(a);
    x = a * x + b;
    length = abs_a * (length + scale) + std::fabs(b);
    scale = abs_a * scale + std::fabs(b);
    reach = abs_a * reach + 1;
  }
};

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
template <class T>
inline long double bound_of(const state& ref) {
  const long double eps = std::numeric_limits<T>::epsilon();
  // Relative rounding (eps per rounding, see primitives/docs/linrec.md) plus the underflow
  // floor: a rounding whose result is subnormal errs by up to denorm_min / 2 in absolute
  // terms, and those errors are carried forward like terms, attenuated by |a|; with 3
  // roundings per step and 64 of tree depth, as in the relative part. (A fixed floor of a
  // few denorm_min was too small: a plain sequential float loop through a silent stretch of
  // a sound, EMA alpha = 0.01, erred by 12.5 times it.)
  const long double floor = static_cast<long double>(std::numeric_limits<T>::denorm_min()) / 2 * (3 * ref.reach + 64);
  return eps * (3 * ref.length + 64 * ref.scale) + floor;
}

// Compares one computed value with a reference value of the given scale (the relative
// error's denominator) and error bound.
template <class T>
inline void compare_value(check_result& r, long double expected, long double scale, long double bound, T computed,
                          std::int64_t flat_index) {
  ++r.checked;
  const long double got = computed;
  if (!std::isfinite(expected) || !std::isfinite(got)) {
    const bool same = (std::isnan(expected) && std::isnan(got)) || (!std::isnan(expected) && expected == got);
    if (!same) {
      if (r.special_mismatches == 0) r.first_special_mismatch = flat_index;
      ++r.special_mismatches;
    }
    return;
  }
  if (!std::isfinite(scale) || !std::isfinite(bound)) return;  // no finite bound to check against
  const long double error = std::fabs(got - expected);
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
template <class T>
inline void compare(check_result& r, const state& ref, T computed, std::int64_t flat_index) {
  if (!std::isfinite(ref.scale) || !std::isfinite(ref.length)) {  // only the special values are compared
    compare_value<T>(r, ref.x, ref.scale, std::numeric_limits<long double>::infinity(), computed, flat_index);
    return;
  }
  compare_value<T>(r, ref.x, ref.scale, bound_of<T>(ref), computed, flat_index);
}

// m times the reference state (one product more: m's bound plus one rounding).
template <class T>
inline void compare_product(check_result& r, const state& ref, long double m, T computed, std::int64_t flat_index) {
  const long double eps = std::numeric_limits<T>::epsilon();
  const long double abs_m = std::fabs(m);
  const long double expected = ref.x * m;
  const long double scale = ref.scale * abs_m;
  const bool finite = std::isfinite(ref.scale) && std::isfinite(ref.length) && std::isfinite(scale);
  const long double bound = finite ? abs_m * bound_of<T>(ref) + eps * scale +
                                         static_cast<long double>(std::numeric_limits<T>::denorm_min()) / 2
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
  check_result r;
  for (std::int64_t k = 0; k < layout.sequences; ++k) {
    state s;
    s.start(x0s.empty() ? static_cast<long double>(x0) : static_cast<long double>(x0s[static_cast<std::size_t>(k)]));
    const std::int64_t length = layout.length_of(k);
    for (std::int64_t step = 0; step < length; ++step) {
      const std::int64_t e = layout.at(k, reverse ? length - 1 - step : step);
      long double a, b;
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
  const auto initial = [&](std::int64_t k) -> long double {
    return x0s.empty() ? static_cast<long double>(x0) : static_cast<long double>(x0s[static_cast<std::size_t>(k)]);
  };
  const std::int64_t expected = final_only ? batch : batch * length;
  if (static_cast<std::int64_t>(x.size()) != expected) throw std::logic_error("linrec check: wrong result size");
  check_result r;
  if (reverse || !interleaved) {  // sequence after sequence
    return check_layout(ops, interleaved ? sequence_layout::interleaved(batch, length) : sequence_layout::rows(batch, length),
                        x0s, x0, x, final_only, reverse);
  }
  // Interleaved: row after row, every sequence's state kept (the storage order).
  std::vector<state> states(static_cast<std::size_t>(batch));
  for (std::int64_t k = 0; k < batch; ++k) states[static_cast<std::size_t>(k)].start(initial(k));
  for (std::int64_t t = 0; t < length; ++t) {
    for (std::int64_t k = 0; k < batch; ++k) {
      long double a, b;
      map_at(ops, t * batch + k, a, b);
      state& s = states[static_cast<std::size_t>(k)];
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
  gradient_check_result r;
  for (std::int64_t k = 0; k < batch; ++k) {
    const std::int64_t length = layout.length_of(k);
    const auto at = [&](std::int64_t t) { return layout.at(k, t); };
    state g;
    g.start(0);
    for (std::int64_t t = length - 1; t >= 0; --t) {
      const std::int64_t e = at(t);
      const long double a_next = t + 1 < length ? static_cast<long double>(a[static_cast<std::size_t>(at(t + 1))]) : 0;
      g.step(a_next, grad_x[static_cast<std::size_t>(e)]);  // a_next == 0 (the last element): a reset
      if (!grad_b.empty()) compare(r.b, g, grad_b[static_cast<std::size_t>(e)], e);
      if (!grad_a.empty()) {
        const long double previous = t > 0 ? static_cast<long double>(x[static_cast<std::size_t>(at(t - 1))])
                                           : (x0s.empty() ? static_cast<long double>(x0)
                                                          : static_cast<long double>(x0s[static_cast<std::size_t>(k)]));
        compare_product(r.a, g, previous, grad_a[static_cast<std::size_t>(e)], e);
      }
    }
    if (!grad_x0.empty()) {
      const T computed = grad_x0[static_cast<std::size_t>(k)];
      const long double a0 = length > 0 ? static_cast<long double>(a[static_cast<std::size_t>(at(0))]) : 0;
      if (a0 == 0) {  // a reset (or an empty sequence): exactly 0
        compare_value<T>(r.x0, 0, 0, std::numeric_limits<long double>::denorm_min(), computed, k);
      } else {
        compare_product(r.x0, g, a0, computed, k);
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
