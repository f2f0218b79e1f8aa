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
#pragma once

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

// Compares one computed value with the reference state.
template <class T>
inline void compare(check_result& r, const state& ref, T computed, std::int64_t flat_index) {
  ++r.checked;
  const long double got = computed;
  const bool ref_finite = std::isfinite(ref.x);
  if (!ref_finite || !std::isfinite(got)) {
    const bool same = (std::isnan(ref.x) && std::isnan(got)) || (!std::isnan(ref.x) && ref.x == got);
    if (!same) {
      if (r.special_mismatches == 0) r.first_special_mismatch = flat_index;
      ++r.special_mismatches;
    }
    return;
  }
  if (!std::isfinite(ref.scale) || !std::isfinite(ref.length)) return;  // no finite bound to check against
  const long double eps = std::numeric_limits<T>::epsilon();
  const long double error = std::fabs(got - ref.x);
  // Relative rounding (eps per rounding, see primitives/docs/linrec.md) plus the underflow
  // floor: a rounding whose result is subnormal errs by up to denorm_min / 2 in absolute
  // terms, and those errors are carried forward like terms, attenuated by |a|; with 3
  // roundings per step and 64 of tree depth, as in the relative part. (A fixed floor of a
  // few denorm_min was too small: a plain sequential float loop through a silent stretch of
  // a sound, EMA alpha = 0.01, erred by 12.5 times it.)
  const long double floor = static_cast<long double>(std::numeric_limits<T>::denorm_min()) / 2 * (3 * ref.reach + 64);
  const long double bound = eps * (3 * ref.length + 64 * ref.scale) + floor;
  const double ratio = static_cast<double>(error / bound);
  if (r.worst_index < 0 || ratio > r.max_bound_ratio) {
    r.max_bound_ratio = ratio;
    r.worst_index = flat_index;
  }
  if (ref.scale > 0) {
    const double relative = static_cast<double>(error / ref.scale);
    if (relative > r.max_relative_error) r.max_relative_error = relative;
  } else if (error > 0) {
    r.max_relative_error = std::numeric_limits<double>::infinity();
  }
}

// Checks x (the whole solution, same layout as the operands) or, with final_only, the
// final states (one per sequence) against the sequential reference. x0s: one per sequence,
// or empty for x0.
template <class T>
check_result check(const operands<T>& ops, std::int64_t batch, std::int64_t length, bool interleaved,
                   std::span<const T> x0s, T x0, std::span<const T> x, bool final_only) {
  const auto initial = [&](std::int64_t k) -> long double {
    return x0s.empty() ? static_cast<long double>(x0) : static_cast<long double>(x0s[static_cast<std::size_t>(k)]);
  };
  const std::int64_t expected = final_only ? batch : batch * length;
  if (static_cast<std::int64_t>(x.size()) != expected) throw std::logic_error("linrec check: wrong result size");
  check_result r;
  if (!interleaved) {
    for (std::int64_t k = 0; k < batch; ++k) {
      state s;
      s.start(initial(k));
      for (std::int64_t t = 0; t < length; ++t) {
        long double a, b;
        map_at(ops, k * length + t, a, b);
        s.step(a, b);
        if (!final_only) compare(r, s, x[static_cast<std::size_t>(k * length + t)], k * length + t);
      }
      if (final_only) compare(r, s, x[static_cast<std::size_t>(k)], k);
    }
    return r;
  }
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

}  // namespace scanlab::linrec_ref
