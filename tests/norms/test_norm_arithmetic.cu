// The arithmetic of scanlab's norms, on the CPU: the transforms, the scaled sum of
// squares and the epilogues of scanlab/algorithms/norms_kernels.cuh are __host__
// __device__, so their numerics (the scaling of l2_norm, rms and rms_diff above all) are
// checked here without a GPU. A small emulation feeds them the way the reduction engine
// does: units of K items (the transform's reduce_unit shortcut where it has one), groups
// of units summed in a tree, per-"thread" running sums, a tree over the threads, then the
// epilogue. Also checked here: that the shortcut gives exactly the bits of the per-item
// path it replaces, and that tree_fold has detail::tree_reduce's order.
#include "norms/norms_reference.hpp"

#include <scanlab/algorithms/norms_kernels.cuh>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace {

namespace nk = scanlab::detail::norms;
namespace ref = scanlab::norms_ref;

template <class Kind>
using state_of = typename Kind::state;

// The item i of Kind's input: x[i], or {x[i], y[i]} for a two-input kind.
template <class Kind, class T>
auto item_at(std::span<const T> x, std::span<const T> y, std::int64_t i) {
  const auto k = static_cast<std::size_t>(i);
  if constexpr (Kind::inputs == 2) return scanlab::zip_item<T>{x[k], y[k]};
  else return x[k];
}

template <class Kind, class Item>
state_of<Kind> one_item(const Item& item) {
  return static_cast<state_of<Kind>>(typename Kind::transform{}(item));
}

// One unit: the transform's shortcut where it has one (detail::unit_reducer), else the
// tree of the per-item values, as the engine's reduce_unit does.
template <class Kind, int K, class Item>
state_of<Kind> one_unit(const Item (&items)[K]) {
  const typename Kind::transform tf{};
  if constexpr (scanlab::detail::unit_reducer<typename Kind::transform, Item, K, state_of<Kind>, scanlab::plus>) {
    return tf.reduce_unit(items, scanlab::plus{});
  } else {
    state_of<Kind> values[K];
    for (int m = 0; m < K; ++m) values[m] = one_item<Kind>(items[m]);
    return nk::tree_fold<K>(values, scanlab::plus{});
  }
}

// What Kind writes for a total.
template <class Kind>
auto finish(const state_of<Kind>& total, std::int64_t n) {
  const auto epilogue = Kind::epilogue(n);
  if constexpr (std::is_same_v<decltype(epilogue), const nk::no_epilogue>) return total;
  else return epilogue(total);
}

// Kind's result on x (and y), accumulated as the engine does with units of K items,
// groups of `group` units, and `threads` running sums.
template <class Kind, int K, class T>
auto emulate(std::span<const T> x, std::span<const T> y, int threads = 5, int group = 4) {
  using state = state_of<Kind>;
  using Item = decltype(item_at<Kind>(x, y, 0));
  std::vector<state> running(static_cast<std::size_t>(threads), state{});
  const auto n = static_cast<std::int64_t>(x.size());
  std::int64_t i = 0;
  int t = 0;
  for (; i + std::int64_t{K} * group <= n; t = (t + 1) % threads) {
    std::vector<state> units;
    for (int g = 0; g < group; ++g, i += K) {
      Item items[K];
      for (int m = 0; m < K; ++m) items[m] = item_at<Kind>(x, y, i + m);
      units.push_back(one_unit<Kind>(items));
    }
    state tree = units[0];  // a tree over the group's units (its shape does not matter here)
    for (int g = 1; g < group; ++g) tree = tree + units[static_cast<std::size_t>(g)];
    running[static_cast<std::size_t>(t)] = running[static_cast<std::size_t>(t)] + tree;
  }
  for (; i < n; ++i, t = (t + 1) % threads) {
    state& run = running[static_cast<std::size_t>(t)];
    run = run + one_item<Kind>(item_at<Kind>(x, y, i));
  }
  state total{};
  for (const state& s : running) total = total + s;
  return finish<Kind>(total, n);
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
  expect_relative<T, Acc>(r16.l2, std::sqrt(ssq), rel, "l2 (units of 16) " + where);
  expect_relative<T, Acc>(r4.l2, std::sqrt(ssq), rel, "l2 (units of 4) " + where);
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
  EXPECT_FALSE((nk::l2_norm_kind<float, double>::scaled));
  EXPECT_FALSE((nk::rms_diff_kind<float, double>::scaled));
  EXPECT_TRUE((nk::l2_norm_kind<float, float>::scaled));
  EXPECT_TRUE((nk::rms_diff_kind<double, double>::scaled));
}

// tree_fold (norms_kernels.cuh) must combine in the order of detail::tree_reduce
// (block/block_reduce.cuh), which is device-only: its loop, transcribed here, on an
// operator that neither commutes nor associates, so any other order shows.
std::uint64_t tree_reduce_transcribed(std::vector<std::uint64_t> values) {
  const auto op = [](std::uint64_t a, std::uint64_t b) { return a * 1000003u + b + 7; };
  for (int width = static_cast<int>(values.size()); width > 1; width = (width + 1) / 2) {
    const int half = (width + 1) / 2;
    for (int i = 0; i + half < width; ++i) {
      const auto k = static_cast<std::size_t>(i);
      values[k] = op(values[k], values[k + static_cast<std::size_t>(half)]);
    }
  }
  return values[0];
}

template <int N>
void check_tree_fold() {
  std::uint64_t values[N];
  std::vector<std::uint64_t> copy;
  for (int i = 0; i < N; ++i) {
    values[i] = 0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(i + 1);
    copy.push_back(values[i]);
  }
  const auto op = [](std::uint64_t a, std::uint64_t b) { return a * 1000003u + b + 7; };
  EXPECT_EQ(nk::tree_fold<N>(values, op), tree_reduce_transcribed(copy)) << "N = " << N;
}

TEST(norm_arithmetic, TreeFoldHasTreeReduceOrder) {
  check_tree_fold<1>();
  check_tree_fold<2>();
  check_tree_fold<3>();
  check_tree_fold<4>();
  check_tree_fold<5>();
  check_tree_fold<7>();
  check_tree_fold<8>();
  check_tree_fold<11>();
  check_tree_fold<16>();
  check_tree_fold<17>();
}

// The engine's promise for a unit shortcut (detail::unit_reducer): reduce_unit returns
// the bits of the tree of the per-item values. Random units mixing ordinary values with
// zeros of both signs, huge, tiny, subnormal, infinite and NaN ones.
template <class T>
T random_magnitude(std::mt19937_64& rng) {
  using lim = std::numeric_limits<T>;
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> pick(0, 19);
  const T v = static_cast<T>(u(rng));
  switch (pick(rng)) {
    case 0: return T(0);
    case 1: return -T(0);
    case 2: return v * (sizeof(T) == 4 ? T(1e30) : T(1e300));
    case 3: return v * (sizeof(T) == 4 ? T(1e-30) : T(1e-300));
    case 4: return v * lim::denorm_min() * T(1000);
    case 5: return v < 0 ? -lim::infinity() : lim::infinity();
    case 6: return lim::quiet_NaN();
    case 7: return lim::max() * v;
    case 8: return v * (sizeof(T) == 4 ? T(0x1p43) : T(0x1p491));  // around t_big
    case 9: return v * (sizeof(T) == 4 ? T(0x1p-63) : T(0x1p-511));  // around t_small
    default: return v;
  }
}

template <class State>
std::vector<unsigned char> bits_of(const State& s) {
  std::vector<unsigned char> b(sizeof(State));
  std::memcpy(b.data(), &s, sizeof(State));
  return b;
}

template <class Kind, int K, class T>
void check_shortcut(std::uint64_t seed) {
  static_assert(Kind::scaled, "the scaled kinds are the ones with a shortcut");
  using state = state_of<Kind>;
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution ordinary_unit(0.5);
  std::uniform_real_distribution<double> ordinary(-3.0, 3.0);
  int fast = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    std::vector<T> x(K), y(K);
    // Half the units: ordinary values and zeros only (the fast path), whose sums round
    // differently in another order.
    const bool plain = ordinary_unit(rng);
    for (int m = 0; m < K; ++m) {
      x[static_cast<std::size_t>(m)] = plain ? (m == 1 ? T(0) : T(ordinary(rng))) : random_magnitude<T>(rng);
      y[static_cast<std::size_t>(m)] = plain ? T(ordinary(rng)) : random_magnitude<T>(rng);
    }
    using Item = decltype(item_at<Kind>(std::span<const T>(x), std::span<const T>(y), 0));
    Item items[K];
    state per_item[K];
    for (int m = 0; m < K; ++m) {
      items[m] = item_at<Kind>(std::span<const T>(x), std::span<const T>(y), m);
      per_item[m] = one_item<Kind>(items[m]);
    }
    const state shortcut = typename Kind::transform{}.reduce_unit(items, scanlab::plus{});
    const state tree = nk::tree_fold<K>(per_item, scanlab::plus{});
    ASSERT_EQ(bits_of(shortcut), bits_of(tree)) << "trial " << trial << ", K = " << K;
    fast += plain;
  }
  EXPECT_GT(fast, 1000);
}

TEST(norm_arithmetic, UnitShortcutKeepsTheBits) {
  check_shortcut<nk::l2_norm_kind<float, float>, 4, float>(1);
  check_shortcut<nk::rms_diff_kind<float, float>, 4, float>(2);
  check_shortcut<nk::l2_norm_kind<double, double>, 2, double>(3);
  check_shortcut<nk::rms_diff_kind<double, double>, 2, double>(4);
  check_shortcut<nk::rms_kind<float, float>, 16, float>(5);
  // The engine takes the shortcut exactly where the transform offers one for plus.
  static_assert(scanlab::detail::unit_reducer<nk::scaled_square<float, nk::element<float>>, float, 4,
                                              nk::scaled_ssq<float>, scanlab::plus>);
  static_assert(!scanlab::detail::unit_reducer<nk::square<float, nk::element<float>>, float, 4, float, scanlab::plus>);
}

}  // namespace
