// The arithmetic of scanlab's norms, on the CPU: the accumulators and kinds of
// scanlab/algorithms/norms_kernels.cuh are __host__ __device__, so their numerics (the
// scaled sum of squares of l2_norm, rms and rms_diff above all) are checked here without
// a GPU. A small emulation feeds them the way the kernels do: groups of K values summed
// in a fixed tree, per-"thread" running states, then a tree over the threads.
#include "norms/norms_reference.hpp"

#include <scanlab/algorithms/norms_kernels.cuh>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace {

namespace nk = scanlab::detail::norms;
namespace ref = scanlab::norms_ref;

// Kind::finish of the total of x (and y), accumulated as the kernels do with groups of K
// values and `threads` running states.
template <class Kind, int K, class T>
auto emulate(std::span<const T> x, std::span<const T> y, int threads = 5) {
  using accumulator = typename Kind::accumulator;
  using state = typename accumulator::state;
  using Acc = decltype(Kind::value(T(), T()));
  std::vector<state> running(static_cast<std::size_t>(threads), accumulator::zero());
  const auto n = static_cast<std::int64_t>(x.size());
  std::int64_t i = 0;
  int t = 0;
  for (; i + K <= n; i += K, t = (t + 1) % threads) {
    Acc values[K];
    for (int m = 0; m < K; ++m) values[m] = Kind::value(x[i + m], y[i + m]);
    running[t] = accumulator::combine(running[t], accumulator::group(values));
  }
  for (; i < n; ++i, t = (t + 1) % threads) {
    const Acc one[1] = {Kind::value(x[i], y[i])};
    running[t] = accumulator::combine(running[t], accumulator::group(one));
  }
  state total = accumulator::zero();
  for (const state& s : running) total = accumulator::combine(total, s);
  return Kind::finish(total, n);
}

template <class T, class Acc>
struct results {
  Acc l2, rms, rms_diff, dot, ssq;
};

template <class T, class Acc, int K>
results<T, Acc> all_of(const std::vector<T>& x, const std::vector<T>& y) {
  const std::span<const T> xs(x), ys(y);
  return {emulate<nk::l2_norm_kind<T, Acc>, K>(xs, xs), emulate<nk::rms_kind<T, Acc>, K>(xs, xs),
          emulate<nk::rms_diff_kind<T, Acc>, K>(xs, ys), emulate<nk::dot_kind<T, Acc>, K>(xs, ys),
          emulate<nk::sum_squares_kind<T, Acc>, K>(xs, xs)};
}

template <class T, class Acc>
void expect_relative(Acc got, long double want, double rel, const std::string& what) {
  if (std::isinf(want) || want > static_cast<long double>(std::numeric_limits<Acc>::max())) {
    EXPECT_TRUE(std::isinf(got)) << what << ": the true value overflows " << got;
    return;
  }
  EXPECT_LE(ref::relative_error(got, want), rel) << what << ": got " << got << ", want " << static_cast<double>(want);
}

// Values (0.5 .. 1) * scale: l2, rms and rms_diff of huge, tiny and subnormal data.
template <class T, class Acc>
void check_scale(T scale, std::int64_t n, double rel, const std::string& label) {
  std::mt19937_64 rng(1234);
  std::uniform_real_distribution<double> u(0.5, 1.0), v(-1.0, 1.0);
  std::vector<T> x(static_cast<std::size_t>(n)), y(static_cast<std::size_t>(n));
  for (auto& e : x) e = static_cast<T>(u(rng) * scale);
  for (auto& e : y) e = static_cast<T>(v(rng) * scale / 4);
  const long double ssq = ref::sum_squares<T>(x, 1).value;
  const long double dsq = ref::sum_squared_differences<T>(x, y, 1).value;
  const std::string where = label + " n=" + std::to_string(n);
  const auto r16 = all_of<T, Acc, 16>(x, y);
  const auto r4 = all_of<T, Acc, 4>(x, y);
  expect_relative<T, Acc>(r16.l2, std::sqrt(ssq), rel, "l2 (groups of 16) " + where);
  expect_relative<T, Acc>(r4.l2, std::sqrt(ssq), rel, "l2 (groups of 4) " + where);
  expect_relative<T, Acc>(r16.rms, ref::root_mean(ssq, n), rel, "rms " + where);
  expect_relative<T, Acc>(r16.rms_diff, ref::root_mean(dsq, n), rel, "rms_diff " + where);
}

template <class T, class Acc>
void check_all_scales() {
  const bool f = sizeof(T) == 4;
  for (const std::int64_t n : {std::int64_t{1}, std::int64_t{7}, std::int64_t{1000}, std::int64_t{100003}}) {
    // Rounding of the sums: a random walk over chains of up to n / 80 group totals.
    const double rel = (std::sqrt(static_cast<double>(n)) + 64) * static_cast<double>(std::numeric_limits<Acc>::epsilon());
    check_scale<T, Acc>(T(1), n, rel, "ordinary");
    check_scale<T, Acc>(f ? T(1e30) : T(1e300), n, rel, "huge");
    check_scale<T, Acc>(f ? T(1e-30) : T(1e-300), n, rel, "tiny");
    check_scale<T, Acc>(std::numeric_limits<T>::max() / T(4), n, rel, "largest");
    // Subnormal data keeps fewer significant bits, but the values are what they are:
    // the result is still accurate for them (scaling by a power of two is exact).
    check_scale<T, Acc>(f ? T(1e-40) : T(1e-310), n, 1e-5, "subnormal");
    check_scale<T, Acc>(f ? T(0x1p-63) : T(0x1p-511), n, rel, "at t_small");
    check_scale<T, Acc>(f ? T(0x1p43) : T(0x1p491), n, rel, "at t_big");
  }
}

TEST(norm_arithmetic, ScalesFloatInFloat) { check_all_scales<float, float>(); }
TEST(norm_arithmetic, ScalesFloatInDouble) { check_all_scales<float, double>(); }
TEST(norm_arithmetic, ScalesDoubleInDouble) { check_all_scales<double, double>(); }

TEST(norm_arithmetic, NaiveSumOfSquaresWouldFail) {
  // The point of the scaling: 1e30^2 overflows float, 1e-30^2 underflows to 0.
  const std::vector<float> huge(100, 1e30f), tiny(100, 1e-30f);
  EXPECT_TRUE(std::isinf((all_of<float, float, 16>(huge, huge).ssq)));
  EXPECT_EQ((all_of<float, float, 16>(tiny, tiny).ssq), 0.0f);
  expect_relative<float, float>(all_of<float, float, 16>(huge, huge).l2, 1e31L * (1e30f / 1e30L), 4e-7, "l2 huge");
  expect_relative<float, float>(all_of<float, float, 16>(tiny, tiny).l2, 1e-29L * (1e-30f / 1e-30L), 4e-7, "l2 tiny");
}

TEST(norm_arithmetic, MixedMagnitudesInOneGroup) {
  for (const float big : {1e30f, 3.0f}) {
    std::vector<float> x(37, 0.25f);
    x[0] = big;
    x[1] = 1e-30f;
    x[2] = 0.0f;
    x[3] = -1e-41f;
    x[20] = -big / 3;
    long double ssq = 0;
    for (float v : x) ssq += static_cast<long double>(v) * v;
    expect_relative<float, float>((all_of<float, float, 16>(x, x).l2), std::sqrt(ssq), 4e-7, "mixed l2");
    expect_relative<float, float>((all_of<float, float, 16>(x, x).rms), std::sqrt(ssq / 37), 4e-7, "mixed rms");
  }
  // Only small values and one ordinary one (the small and medium sums both count).
  std::vector<double> s(500, 1e-300);
  s[17] = 1e-160;  // medium for double (above 2^-511)
  long double ssq = 0;
  for (double v : s) ssq += static_cast<long double>(v) * v;
  expect_relative<double, double>((all_of<double, double, 8>(s, s).l2), std::sqrt(ssq), 1e-14, "small + medium");
}

TEST(norm_arithmetic, NanAndInf) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x(50, 0.5f), y(50, 0.25f);
  x[9] = nan;
  auto r = all_of<float, float, 16>(x, y);
  EXPECT_TRUE(std::isnan(r.l2));
  EXPECT_TRUE(std::isnan(r.rms));
  EXPECT_TRUE(std::isnan(r.rms_diff));
  EXPECT_TRUE(std::isnan(r.dot));
  EXPECT_TRUE(std::isnan(r.ssq));
  x[9] = -inf;
  r = all_of<float, float, 16>(x, y);
  EXPECT_EQ(r.l2, inf);
  EXPECT_EQ(r.rms, inf);
  EXPECT_EQ(r.rms_diff, inf);
  EXPECT_EQ(r.dot, -inf);
  x[30] = nan;  // Inf and NaN: NaN
  r = all_of<float, float, 16>(x, y);
  EXPECT_TRUE(std::isnan(r.l2));
  EXPECT_TRUE(std::isnan(r.rms_diff));
  // Double accumulator for float data (no scaling needed): the same propagation.
  x[30] = 0.5f;
  const auto d = all_of<float, double, 16>(x, y);
  EXPECT_EQ(d.l2, std::numeric_limits<double>::infinity());
  EXPECT_EQ(d.dot, -std::numeric_limits<double>::infinity());
}

TEST(norm_arithmetic, EmptyAndZero) {
  const std::vector<float> none;
  const auto e = all_of<float, float, 16>(none, none);
  EXPECT_EQ(e.l2, 0.0f);
  EXPECT_EQ(e.dot, 0.0f);
  EXPECT_EQ(e.ssq, 0.0f);
  EXPECT_TRUE(std::isnan(e.rms));
  EXPECT_TRUE(std::isnan(e.rms_diff));
  const std::vector<double> zeros(33, 0.0);
  const auto z = all_of<double, double, 8>(zeros, zeros);
  EXPECT_EQ(z.l2, 0.0);
  EXPECT_EQ(z.rms, 0.0);
  EXPECT_EQ(z.rms_diff, 0.0);
}

TEST(norm_arithmetic, ScalingConstantsAreConsistent) {
  // Powers of two whose products are what the comments in norms_kernels.cuh claim.
  using kf = nk::scaled_constants<float>;
  using kd = nk::scaled_constants<double>;
  EXPECT_EQ(kf::s_big * kf::inv_s_big, 1.0f);
  EXPECT_EQ(kf::s_small * kf::inv_s_small, 1.0f);
  EXPECT_EQ(kd::s_big * kd::inv_s_big, 1.0);
  EXPECT_EQ(kd::s_small * kd::inv_s_small, 1.0);
  // A medium square is normal; the smallest big value's scaled square is normal; the
  // smallest subnormal's scaled square is normal.
  EXPECT_GE(kf::t_small * kf::t_small, std::numeric_limits<float>::min());
  EXPECT_GE((kf::t_big * kf::s_big) * (kf::t_big * kf::s_big), std::numeric_limits<float>::min());
  const float sub = std::numeric_limits<float>::denorm_min() * kf::s_small;
  EXPECT_GE(sub * sub, std::numeric_limits<float>::min());
  EXPECT_GE(kd::t_small * kd::t_small, std::numeric_limits<double>::min());
  const double subd = std::numeric_limits<double>::denorm_min() * kd::s_small;
  EXPECT_GE(subd * subd, std::numeric_limits<double>::min());
  // 2^40 largest scaled squares stay finite.
  const float top = std::numeric_limits<float>::max() * kf::s_big;
  EXPECT_TRUE(std::isfinite(top * top * 0x1p40f));
  const double topd = std::numeric_limits<double>::max() * kd::s_big;
  EXPECT_TRUE(std::isfinite(topd * topd * 0x1p40));
  EXPECT_TRUE(std::isfinite(kf::t_big * kf::t_big * 0x1p40f));
  // Float data in a double accumulator needs no scaling; float in float and double in double do.
  EXPECT_FALSE((nk::scaled_ssq_accumulator<float, double>::needs_scaling));
  EXPECT_TRUE((nk::scaled_ssq_accumulator<float, float>::needs_scaling));
  EXPECT_TRUE((nk::scaled_ssq_accumulator<double, double>::needs_scaling));
}

}  // namespace
