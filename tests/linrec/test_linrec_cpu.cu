// CPU tests of the linear recurrence's arithmetic (run anywhere): the element types (state
// types, tile shapes, 16-bit conversions, complex arithmetic, the references' bounds and
// the complex adjoint's convention against finite differences), the composition
// operator and its reset rule, the reference checker (forward, reverse, and the adjoint
// against finite differences), and the documented error bound,
// checked on a host tree evaluation (Kogge-Stone over the maps, depth log2 n) in float;
// and the public API's host side: the input forms' maps, and the size queries of a policy
// and of single_pass_options (no device is touched by a size query); the layouts:
// channels-last indexing (the column walk's against the reference's), offsets validation,
// the layout-general reference against the fixed-length one, and the size queries and
// host-side checks of channels-last and variable-length solves.
#include "common/test_util.hpp"
#include "linrec/linrec_reference.hpp"

#include <scanlab/algorithms/linrec.cuh>
#include <scanlab/tuning.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <vector>

namespace {

using scanlab::affine_map;
using scanlab::affine_then;
using scanlab::apply;
namespace ref = scanlab::linrec_ref;

template <class T>
std::vector<affine_map<T>> random_maps(std::size_t n, std::uint64_t seed, double lo, double hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> a(lo, hi), b(-1.0, 1.0);
  std::vector<affine_map<T>> out(n);
  for (auto& m : out) m = {static_cast<T>(a(rng)), static_cast<T>(b(rng))};
  return out;
}

TEST(linrec_operator, ComposesInOrderAndIsAssociative) {
  const affine_then op;
  const affine_map<double> f{2.0, 1.0}, g{3.0, -5.0};
  // then(f, g) = g o f: x -> 3 (2x + 1) - 5
  const auto h = op(f, g);
  EXPECT_EQ(h.a, 6.0);
  EXPECT_EQ(h.b, -2.0);
  EXPECT_EQ(apply(h, 4.0), apply(g, apply(f, 4.0)));
  const auto maps = random_maps<double>(3000, scanlab::test::test_seed(), -2.0, 2.0);
  int commuting = 0;
  for (std::size_t i = 0; i + 2 < maps.size(); i += 3) {
    const auto left = op(op(maps[i], maps[i + 1]), maps[i + 2]);
    const auto right = op(maps[i], op(maps[i + 1], maps[i + 2]));
    ASSERT_NEAR(left.a, right.a, 1e-12 * (1 + std::fabs(left.a)));
    ASSERT_NEAR(left.b, right.b, 1e-12 * (1 + std::fabs(left.b)));
    const auto ab = op(maps[i], maps[i + 1]);
    const auto ba = op(maps[i + 1], maps[i]);
    if (std::fabs(ab.b - ba.b) < 1e-9) ++commuting;
  }
  EXPECT_LT(commuting, 10);  // really not commutative: the order tests above mean something
}

TEST(linrec_operator, ZeroIsAResetEvenAfterInfAndNan) {
  const affine_then op;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(apply(affine_map<float>{0.0f, 3.0f}, nan), 3.0f);
  EXPECT_EQ(apply(affine_map<float>{-0.0f, 3.0f}, inf), 3.0f);
  EXPECT_TRUE(std::isnan(apply(affine_map<float>{0.5f, 3.0f}, nan)));
  // (NaN, NaN) then a reset: the reset.
  const auto r = op(affine_map<float>{nan, nan}, affine_map<float>{0.0f, 7.0f});
  EXPECT_EQ(r.a, 0.0f);
  EXPECT_EQ(r.b, 7.0f);
  // A reset then Inf: still a constant map (its a is 0), of value inf * b + c.
  const auto s = op(affine_map<float>{0.0f, 2.0f}, affine_map<float>{inf, 1.0f});
  EXPECT_EQ(s.a, 0.0f);
  EXPECT_EQ(s.b, inf);
  // An underflowed product of nonzero a's is not a reset: a NaN state still propagates.
  const auto u = op(affine_map<float>{1e-30f, 0.0f}, affine_map<float>{-1e-30f, 1.0f});
  EXPECT_NE(u.a, 0.0f);
  EXPECT_LT(u.a, 0.0f);
  EXPECT_TRUE(std::isnan(apply(u, nan)));
  EXPECT_EQ(apply(u, 2.0f), 1.0f);
  // A NaN coefficient without a reset poisons the map.
  const auto t = op(affine_map<float>{0.5f, 1.0f}, affine_map<float>{nan, 1.0f});
  EXPECT_TRUE(std::isnan(t.a));
  EXPECT_TRUE(std::isnan(apply(t, 1.0f)));
}

// The reference: exact on exactly representable data, and it notices wrong answers.
TEST(linrec_reference, SolvesAndDetectsErrors) {
  const std::vector<float> a = {0.5f, 2.0f, 0.0f, -1.0f};
  const std::vector<float> b = {1.0f, 1.0f, 3.0f, 0.25f};
  // x0 = 2: 0.5*2+1 = 2, 2*2+1 = 5, reset 3, -3 + 0.25 = -2.75
  std::vector<float> x = {2.0f, 5.0f, 3.0f, -2.75f};
  ref::operands<float> ops;
  ops.p = a;
  ops.q = b;
  auto r = ref::check<float>(ops, 1, 4, false, {}, 2.0f, x, false);
  EXPECT_TRUE(r.pass());
  EXPECT_EQ(r.max_relative_error, 0.0);
  x[1] = 5.001f;
  r = ref::check<float>(ops, 1, 4, false, {}, 2.0f, x, false);
  EXPECT_FALSE(r.pass());
  EXPECT_EQ(r.worst_index, 1);
  x[1] = std::numeric_limits<float>::quiet_NaN();
  r = ref::check<float>(ops, 1, 4, false, {}, 2.0f, x, false);
  EXPECT_EQ(r.special_mismatches, 1);
  EXPECT_EQ(r.first_special_mismatch, 1);
  // Final states only, and two interleaved sequences (a0 b0 | a1 b1 per row).
  const std::vector<float> fin = {-2.75f};
  EXPECT_TRUE((ref::check<float>(ops, 1, 4, false, {}, 2.0f, fin, true).pass()));
  const std::vector<float> x0s = {2.0f, 1.0f};
  // Interleaved [2, 2]: sequence 0 = (a[0], b[0]), (a[2], b[2]); sequence 1 = (a[1], b[1]), (a[3], b[3]).
  // seq 0: 0.5*2+1 = 2, reset 3; seq 1: 2*1+1 = 3, -3+0.25 = -2.75
  const std::vector<float> xi = {2.0f, 3.0f, 3.0f, -2.75f};
  EXPECT_TRUE((ref::check<float>(ops, 2, 2, true, x0s, 0.0f, xi, false).pass()));
}

// The documented bound eps * (3 L + 64 S) holds for a tree evaluation in float of depth
// log2 n (every prefix by Kogge-Stone over the maps), for contracting, near-one and
// a = 1 coefficients, and L / S behaves as documented (about 1 / (1 - rho), n / 2).
TEST(linrec_reference, TreeEvaluationStaysWithinTheBound) {
  const std::int64_t n = std::int64_t{1} << 16;
  const affine_then op;
  struct a_range {
    double lo, hi;
  };
  for (const a_range range : {a_range{-0.9, 0.9}, a_range{0.999, 1.0}, a_range{1.0, 1.0}, a_range{-1.0, 1.0}}) {
    SCOPED_TRACE("a in [" + std::to_string(range.lo) + ", " + std::to_string(range.hi) + "]");
    auto maps = random_maps<float>(static_cast<std::size_t>(n), scanlab::test::test_seed(), range.lo, range.hi);
    std::vector<float> a(maps.size()), b(maps.size());
    for (std::size_t i = 0; i < maps.size(); ++i) {
      a[i] = maps[i].a;
      b[i] = maps[i].b;
    }
    const float x0 = 0.75f;
    maps[0] = {0.0f, apply(maps[0], x0)};  // the first element as a constant map, as on the GPU
    std::vector<affine_map<float>> next(maps.size());
    for (std::int64_t offset = 1; offset < n; offset *= 2) {
      for (std::int64_t i = 0; i < n; ++i) {
        const auto u = static_cast<std::size_t>(i);
        next[u] = i >= offset ? op(maps[u - static_cast<std::size_t>(offset)], maps[u]) : maps[u];
      }
      maps.swap(next);
    }
    std::vector<float> x(maps.size());
    for (std::size_t i = 0; i < maps.size(); ++i) x[i] = apply(maps[i], 0.0f);
    ref::operands<float> ops;
    ops.p = a;
    ops.q = b;
    const auto r = ref::check<float>(ops, 1, n, false, {}, x0, x, false);
    EXPECT_TRUE(r.pass()) << "bound ratio " << r.max_bound_ratio << " at " << r.worst_index;
    EXPECT_GT(r.max_bound_ratio, 0.0);  // rounding happened: the check is not vacuous
  }
  // L / S for a constant a = rho: tends to 1 / (1 - rho); so does the reach.
  ref::state s;
  s.start(0);
  for (int i = 0; i < 10000; ++i) s.step(0.9L, 1.0L);
  EXPECT_NEAR(static_cast<double>(s.length / s.scale), 10.0, 0.01);
  EXPECT_NEAR(static_cast<double>(s.reach), 10.0, 0.01);
}

// Gradual underflow: an exponential moving average decaying through a long silence passes
// through subnormal states, where every rounding errs by up to denorm_min / 2 in absolute
// terms and those errors pile up (attenuated by a each step). A plain sequential float loop
// must stay within the bound there (a fixed floor of 4 denorm_min failed it by 12x).
TEST(linrec_reference, SequentialLoopThroughSubnormalsStaysWithinTheBound) {
  const float alpha = 0.01f;
  std::mt19937_64 rng(scanlab::test::test_seed());
  std::uniform_real_distribution<float> loud(-1.0f, 1.0f);
  std::vector<float> s;
  for (int burst = 0; burst < 4; ++burst) {
    for (int i = 0; i < 2000; ++i) s.push_back(loud(rng) * 1e-3f);
    s.insert(s.end(), 12000, 0.0f);  // 0.99^12000 ~ 1e-52: far into and below the subnormals
  }
  std::vector<float> x(s.size());
  float state = 0;
  int subnormal = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    state = std::fma(1.0f - alpha, state, alpha * s[i]);
    x[i] = state;
    if (state != 0 && std::fabs(state) < std::numeric_limits<float>::min()) ++subnormal;
  }
  ASSERT_GT(subnormal, 1000);  // the case is really exercised
  ref::operands<float> ops;
  ops.kind = ref::form::ema;
  ops.p = s;
  ops.alpha = static_cast<long double>(alpha);
  const auto r = ref::check<float>(ops, 1, static_cast<std::int64_t>(s.size()), false, {}, 0.0f, x, false);
  EXPECT_TRUE(r.pass()) << "bound ratio " << r.max_bound_ratio << " at " << r.worst_index;
  EXPECT_GT(r.max_bound_ratio, 0.0);
}

// ---- reverse solves and the backward pass: the references ----

// The reverse reference is the forward one on reversed arrays; a plain reverse loop passes it.
TEST(linrec_reference, ReverseIsTheForwardOfTheReversedArrays) {
  const std::uint64_t seed = scanlab::test::test_seed();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  const std::int64_t batch = 3, length = 500;
  for (const bool interleaved : {false, true}) {
    std::vector<float> a(batch * length), b(batch * length), x(batch * length), ra(a.size()), rb(b.size()),
        rx(x.size());
    std::vector<float> ends = {0.5f, -1.0f, 2.0f};
    const auto at = [&](std::int64_t k, std::int64_t t) {
      return static_cast<std::size_t>(interleaved ? t * batch + k : k * length + t);
    };
    for (std::size_t i = 0; i < a.size(); ++i) {
      a[i] = static_cast<float>(0.95 * unit(rng));
      b[i] = static_cast<float>(unit(rng));
    }
    a[at(1, 200)] = 0.0f;  // a reset
    for (std::int64_t k = 0; k < batch; ++k) {
      float state = ends[static_cast<std::size_t>(k)];
      for (std::int64_t t = length - 1; t >= 0; --t) {
        state = apply(affine_map<float>{a[at(k, t)], b[at(k, t)]}, state);
        x[at(k, t)] = state;
        ra[at(k, length - 1 - t)] = a[at(k, t)];
        rb[at(k, length - 1 - t)] = b[at(k, t)];
        rx[at(k, length - 1 - t)] = state;
      }
    }
    ref::operands<float> ops, rops;
    ops.p = a;
    ops.q = b;
    rops.p = ra;
    rops.q = rb;
    const auto r = ref::check<float>(ops, batch, length, interleaved, ends, 0.0f, x, false, true);
    const auto f = ref::check<float>(rops, batch, length, interleaved, ends, 0.0f, rx, false);
    EXPECT_TRUE(r.pass()) << r.max_bound_ratio;
    EXPECT_EQ(r.max_bound_ratio, f.max_bound_ratio);
    EXPECT_EQ(r.checked, batch * length);
    // Final states of the reverse solve: x[0].
    std::vector<float> firsts = {x[at(0, 0)], x[at(1, 0)], x[at(2, 0)]};
    EXPECT_TRUE((ref::check<float>(ops, batch, length, interleaved, ends, 0.0f, firsts, true, true).pass()));
    // The forward reading of the same x fails.
    EXPECT_FALSE((ref::check<float>(ops, batch, length, interleaved, ends, 0.0f, x, false).pass()));
  }
}

// The adjoint reference agrees with central differences in long double of L = sum(w x),
// and refuses gradients that are off by one element or miss x0.
TEST(linrec_reference, AdjointMatchesFiniteDifferences) {
  const std::uint64_t seed = scanlab::test::test_seed();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  const std::int64_t batch = 2, length = 40;
  const std::size_t n = static_cast<std::size_t>(batch * length);
  std::vector<double> a(n), b(n), w(n), x0s = {0.75, -0.5};
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = 0.9 * unit(rng);
    b[i] = unit(rng);
    w[i] = unit(rng);
  }
  a[7] = 0.0;  // a reset inside sequence 0
  a[static_cast<std::size_t>(length)] = 0.0;  // sequence 1 starts with a reset: dL/dx0 = 0
  const auto solve = [&](const std::vector<long double>& p) {  // p: a, then b, then x0s
    long double loss = 0;
    std::vector<double> x(n);
    for (std::int64_t k = 0; k < batch; ++k) {
      long double state = p[2 * n + static_cast<std::size_t>(k)];
      for (std::int64_t t = 0; t < length; ++t) {
        const auto i = static_cast<std::size_t>(k * length + t);
        state = p[i] == 0 ? p[n + i] : p[i] * state + p[n + i];
        x[i] = static_cast<double>(state);
        loss += static_cast<long double>(w[i]) * state;
      }
    }
    return std::pair{loss, x};
  };
  std::vector<long double> params;
  for (double v : a) params.push_back(v);
  for (double v : b) params.push_back(v);
  for (double v : x0s) params.push_back(v);
  const std::vector<double> x = solve(params).second;
  std::vector<double> fd(params.size());
  for (std::size_t j = 0; j < params.size(); ++j) {
    const long double saved = params[j], h = 1e-7L * (1 + std::fabs(saved));
    params[j] = saved + h;
    const long double up = solve(params).first;
    params[j] = saved - h;
    const long double down = solve(params).first;
    params[j] = saved;
    fd[j] = static_cast<double>((up - down) / (2 * h));
  }
  const std::vector<double> da(fd.begin(), fd.begin() + static_cast<std::ptrdiff_t>(n));
  const std::vector<double> db(fd.begin() + static_cast<std::ptrdiff_t>(n), fd.begin() + static_cast<std::ptrdiff_t>(2 * n));
  std::vector<double> dx0(fd.begin() + static_cast<std::ptrdiff_t>(2 * n), fd.end());
  EXPECT_NEAR(dx0[1], 0.0, 1e-9);
  dx0[1] = 0.0;  // a reset: exactly 0 (the differences give ~1e-12)
  // The plain adjoint, sequentially, in double: against the differences (which are about
  // 1e-12 off: a tolerance, not the rounding bound), then against the reference.
  std::vector<double> exact_a(n), exact_b(n), exact_x0(2);
  {
    for (std::int64_t k = 0; k < batch; ++k) {
      double g = 0;
      for (std::int64_t t = length - 1; t >= 0; --t) {
        const auto i = static_cast<std::size_t>(k * length + t);
        const double a_next = t + 1 < length ? a[i + 1] : 0.0;
        g = a_next == 0 ? w[i] : a_next * g + w[i];
        exact_b[i] = g;
        exact_a[i] = g * (t > 0 ? x[i - 1] : x0s[static_cast<std::size_t>(k)]);
      }
      const auto first = static_cast<std::size_t>(k * length);
      exact_x0[static_cast<std::size_t>(k)] = a[first] == 0 ? 0.0 : a[first] * exact_b[first];
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_NEAR(exact_a[i], da[i], 1e-6) << i;
    EXPECT_NEAR(exact_b[i], db[i], 1e-6) << i;
  }
  EXPECT_NEAR(exact_x0[0], dx0[0], 1e-6);
  EXPECT_EQ(exact_x0[1], 0.0);
  const auto plain = ref::check_gradients<double>(a, x, w, batch, length, false, x0s, 0.0, exact_a, exact_b, exact_x0);
  EXPECT_TRUE(plain.pass()) << plain.a.max_bound_ratio << " " << plain.b.max_bound_ratio << " "
                            << plain.x0.max_bound_ratio;
  // Off by one element, x[i] instead of x[i-1], or x0 left out: refused.
  std::vector<double> shifted_b(exact_b.begin() + 1, exact_b.end());
  shifted_b.push_back(0.0);
  EXPECT_FALSE((ref::check_gradients<double>(a, x, w, batch, length, false, x0s, 0.0, {}, shifted_b, {}).pass()));
  std::vector<double> wrong_a(n);
  for (std::size_t i = 0; i < n; ++i) wrong_a[i] = exact_b[i] * x[i];
  EXPECT_FALSE((ref::check_gradients<double>(a, x, w, batch, length, false, x0s, 0.0, wrong_a, {}, {}).pass()));
  std::vector<double> no_x0 = exact_a;
  no_x0[0] = 0.0;
  EXPECT_FALSE((ref::check_gradients<double>(a, x, w, batch, length, false, x0s, 0.0, no_x0, {}, {}).pass()));
  std::vector<double> wrong_x0 = {exact_x0[0], 1.0};  // not 0 after a reset
  EXPECT_FALSE((ref::check_gradients<double>(a, x, w, batch, length, false, x0s, 0.0, {}, {}, wrong_x0).pass()));
}

// ---- the public API's host side ----

TEST(linrec_public_api, InputFormsBuildTheDocumentedMaps) {
  const float a[1] = {0.5f}, b[1] = {2.0f};
  const scanlab::linrec_ab_source<float> ab = scanlab::linrec_ab(a, b);
  EXPECT_EQ(ab.p, a);
  EXPECT_EQ(ab.q, b);
  EXPECT_EQ(ab.map(0.5f, 2.0f).a, 0.5f);
  EXPECT_EQ(ab.map(0.5f, 2.0f).b, 2.0f);
  // (lambda, u) = (0.25, 8): v[i] = 0.75 v[i-1] + 2
  const scanlab::linrec_lambda_source<double> lambda = scanlab::linrec_lambda<double>(nullptr, nullptr);
  EXPECT_EQ(lambda.map(0.25, 8.0).a, 0.75);
  EXPECT_EQ(lambda.map(0.25, 8.0).b, 2.0);
  // alpha = 0.125, s = 4: y[i] = 0.875 y[i-1] + 0.5; one array read
  const scanlab::linrec_ema_source<double> ema = scanlab::linrec_ema<double>(nullptr, 0.125);
  EXPECT_EQ(ema.alpha, 0.125);
  EXPECT_EQ(ema.one_minus_alpha, 0.875);
  EXPECT_EQ(ema.q, nullptr);
  EXPECT_EQ(scanlab::linrec_ema_source<double>::arrays, 1);
  EXPECT_EQ(ema.map(4.0, 123.0).a, 0.875);
  EXPECT_EQ(ema.map(4.0, 123.0).b, 0.5);
}

TEST(linrec_public_api, PolicySizesAndInvalidOptions) {
  namespace ld = scanlab::linrec_detail;
  using scanlab::batch_layout;
  using scanlab::launch_mode;
  using small_policy = scanlab::linrec_policy<256, 8, 4, true>;
  using tuned_policy = scanlab::default_linrec_policy<float>;
  static_assert(std::is_same_v<tuned_policy, ld::default_linrec_policy<float>>);
  const std::int64_t n = std::int64_t{1} << 24;
  const float* none = nullptr;
  float* out = nullptr;
  const auto src = scanlab::linrec_ab(none, none);
  // The sm_90 shape as one policy (the default is a per-architecture table whose temp storage
  // covers every family's tiles).
  using large_policy = scanlab::linrec_policy<512, 16, 1, true>;
  std::size_t tuned = 0, large = 0, small = 0, small_tickets = 0, named = 0, named_small = 0;
  ASSERT_EQ(scanlab::solve_linear_recurrence(nullptr, tuned, src, out, nullptr, 1, n, batch_layout::row_major),
            cudaSuccess);
  ASSERT_EQ(scanlab::solve_linear_recurrence<large_policy>(nullptr, large, src, out, nullptr, 1, n,
                                                           batch_layout::row_major),
            cudaSuccess);
  ASSERT_EQ(scanlab::solve_linear_recurrence<small_policy>(nullptr, small, src, out, nullptr, 1, n,
                                                           batch_layout::row_major),
            cudaSuccess);
  ASSERT_EQ(scanlab::solve_linear_recurrence<small_policy>(nullptr, small_tickets, src, out, nullptr, 1, n,
                                                           batch_layout::row_major, nullptr, 0.0f, nullptr,
                                                           {launch_mode::tickets, 3}),
            cudaSuccess);
  ASSERT_EQ(scanlab::linear_recurrence<float>(nullptr, named, none, none, out, n, 0.0f), cudaSuccess);
  ASSERT_EQ((scanlab::linear_recurrence<float, small_policy>(nullptr, named_small, none, none, out, n, 0.0f)),
            cudaSuccess);
  EXPECT_EQ(tuned, (ld::rows_temp_bytes<tuned_policy, float>(1, n, ld::linrec_mode::automatic)));
  EXPECT_GE(tuned, large);
  EXPECT_EQ(large, (ld::rows_temp_bytes<large_policy, float>(1, n, ld::linrec_mode::automatic)));
  EXPECT_EQ(small, (ld::rows_temp_bytes<small_policy, float>(1, n, ld::linrec_mode::automatic)));
  EXPECT_GT(small, large);  // four times the tiles
  EXPECT_EQ(small_tickets, small);
  EXPECT_EQ(named, tuned);
  EXPECT_EQ(named_small, small);

  // Reverse solves take the same tiles; the backward pass its own (smaller: three arrays).
  std::size_t reverse = 0, backward = 0, backward_columns = 0;
  ASSERT_EQ(scanlab::linear_recurrence_reverse<float>(nullptr, reverse, none, none, out, n, 0.0f), cudaSuccess);
  EXPECT_EQ(reverse, tuned);
  ASSERT_EQ(scanlab::linear_recurrence_backward<float>(nullptr, backward, none, none, none, out, out, out, n, 0.0f),
            cudaSuccess);
  EXPECT_EQ(backward, (ld::rows_temp_bytes<scanlab::default_linrec_gradient_policy<float>, float>(1, n, ld::linrec_mode::automatic)));
  EXPECT_GE(backward, tuned);  // sized for every family: the smallest tiles (Turing's) are the same

  // Short rows (a multiple of the length per tile on every architecture: 2048 floats on
  // Turing, 8192 on Hopper) take the rows kernel: no tile states, the alignment slack only;
  // a forced launch mode takes the look-back kernel and its tile states.
  std::size_t rows = 0, rows_forced = 0, rows_backward = 0;
  ASSERT_EQ(scanlab::solve_linear_recurrence(nullptr, rows, src, out, nullptr, n / 1024, 1024, batch_layout::row_major),
            cudaSuccess);
  EXPECT_EQ(rows, 256u);
  ASSERT_EQ(scanlab::solve_linear_recurrence(nullptr, rows_forced, src, out, nullptr, n / 1024, 1024,
                                             batch_layout::row_major, nullptr, 0.0f, nullptr,
                                             {launch_mode::tickets, 0}),
            cudaSuccess);
  EXPECT_EQ(rows_forced, tuned);
  ASSERT_EQ(scanlab::linear_recurrence_backward_batched<float>(nullptr, rows_backward, none, none, none, out, out, out,
                                                               n / 1024, 1024, batch_layout::row_major),
            cudaSuccess);
  EXPECT_EQ(rows_backward, 256u);
  EXPECT_TRUE((ld::whole_rows_per_tile<ld::linrec_policy<512, 16, 1, true>>(3, 1000, ld::linrec_mode::automatic)));
  EXPECT_TRUE((ld::whole_rows_per_tile<ld::linrec_policy<512, 16, 1, true>>(12288, 4096, ld::linrec_mode::automatic)));
  EXPECT_TRUE((ld::whole_rows_per_tile<ld::linrec_policy<512, 16, 1, true>>(5, 1, ld::linrec_mode::automatic)));
  EXPECT_FALSE((ld::whole_rows_per_tile<ld::linrec_policy<512, 16, 1, true>>(12288, 4095, ld::linrec_mode::automatic)));
  EXPECT_FALSE((ld::whole_rows_per_tile<ld::linrec_policy<512, 16, 1, true>>(12288, 16384, ld::linrec_mode::automatic)));
  EXPECT_FALSE((ld::whole_rows_per_tile<ld::linrec_policy<512, 16, 1, true>>(12288, 4096, ld::linrec_mode::tickets)));
  // Long rows chained: whole tiles (more than one) and at least chain_min_batch sequences,
  // in automatic mode; the hook lowers the batch, nothing else.
  using chain_shape = ld::linrec_policy<512, 16, 1, true>;  // 8192 items a tile
  constexpr auto automatic = ld::linrec_mode::automatic;
  EXPECT_TRUE((ld::chained_rows<chain_shape>(ld::chain_min_batch, 2 * 8192, automatic)));
  EXPECT_TRUE((ld::chained_rows<chain_shape>(12288, 65536, automatic)));
  EXPECT_FALSE((ld::chained_rows<chain_shape>(ld::chain_min_batch - 1, 65536, automatic)));
  EXPECT_FALSE((ld::chained_rows<chain_shape>(12288, 8192, automatic)));       // one tile: whole rows
  EXPECT_FALSE((ld::chained_rows<chain_shape>(12288, 3 * 8192 + 1, automatic)));  // not whole tiles
  EXPECT_FALSE((ld::chained_rows<chain_shape>(12288, 65536, ld::linrec_mode::tickets)));
  EXPECT_TRUE((ld::chained_rows<chain_shape>(1, 2 * 8192, automatic, 1)));
  EXPECT_FALSE((ld::chained_rows<chain_shape>(1, 2 * 8192 + 8, automatic, 1)));
  // Length 8192: not a divisor of Hopper's rows tile (4096 floats): the look-back kernel
  // and its tile states, even though its own tile (8192) would take whole rows.
  using hopper_rows = ld::linrec_rows_shape<float, 90>::policy;
  using hopper_tiles = ld::linrec_shape<float, 90>::policy;
  static_assert(hopper_rows::tile_items == 4096 && hopper_tiles::tile_items == 8192);
  EXPECT_GT((ld::rows_temp_bytes<hopper_tiles, float, hopper_rows>(6144, 8192, ld::linrec_mode::automatic)), 256u);
  EXPECT_EQ((ld::rows_temp_bytes<hopper_tiles, float, hopper_rows>(6144, 4096, ld::linrec_mode::automatic)), 256u);
  EXPECT_GT((ld::rows_temp_bytes<hopper_tiles, float, hopper_rows>(6144, 16384, ld::linrec_mode::automatic)), 256u);
  ASSERT_EQ(scanlab::linear_recurrence_backward_batched<float>(nullptr, backward_columns, none, none, none, out, out,
                                                               out, 4, n / 4, batch_layout::interleaved),
            cudaSuccess);
  EXPECT_GT(backward_columns, 1u);  // the segment maps of 4 long sequences
  EXPECT_EQ(scanlab::linear_recurrence_backward<float>(nullptr, backward, none, none, none, out, out, out, -1, 0.0f),
            cudaErrorInvalidValue);

  const scanlab::single_pass_options invalid[] = {{launch_mode::automatic, -1}, {static_cast<launch_mode>(7), 0}};
  for (const auto& o : invalid) {
    std::size_t bytes = 0;
    for (const batch_layout layout : {batch_layout::row_major, batch_layout::interleaved}) {
      EXPECT_EQ(scanlab::solve_linear_recurrence(nullptr, bytes, src, out, nullptr, 4, n / 4, layout, nullptr, 0.0f,
                                                 nullptr, o),
                cudaErrorInvalidValue);
      EXPECT_EQ(scanlab::linear_recurrence_batched<float>(nullptr, bytes, none, none, out, 4, n / 4, layout, nullptr,
                                                          nullptr, o),
                cudaErrorInvalidValue);
      EXPECT_EQ(scanlab::linear_recurrence_final_batched<float>(nullptr, bytes, none, none, out, 4, n / 4, layout,
                                                                nullptr, nullptr, o),
                cudaErrorInvalidValue);
    }
    EXPECT_EQ(scanlab::linear_recurrence(nullptr, bytes, none, none, out, n, 0.0f, nullptr, o), cudaErrorInvalidValue);
    EXPECT_EQ(scanlab::linear_recurrence_lambda(nullptr, bytes, none, none, out, n, 0.0f, nullptr, o),
              cudaErrorInvalidValue);
    EXPECT_EQ(scanlab::exponential_moving_average(nullptr, bytes, none, out, n, 0.5f, 0.0f, nullptr, o),
              cudaErrorInvalidValue);
    EXPECT_EQ(scanlab::linear_recurrence_final(nullptr, bytes, none, none, out, n, 0.0f, nullptr, o),
              cudaErrorInvalidValue);
    EXPECT_EQ(scanlab::linear_recurrence_reverse(nullptr, bytes, none, none, out, n, 0.0f, nullptr, o),
              cudaErrorInvalidValue);
    EXPECT_EQ(scanlab::linear_recurrence_backward(nullptr, bytes, none, none, none, out, out, out, n, 0.0f, nullptr, o),
              cudaErrorInvalidValue);
  }
}

// ---- channels-last batches and variable-length sequences ----

// The column walk's origin of each sequence (linrec_kernels.cuh) plus t * channels is the
// reference's index of (sequence, t): for channels-last shapes and for interleaved ones.
TEST(linrec_layouts, ColumnIndexingMatchesTheReference) {
  namespace ld = scanlab::linrec_detail;
  struct btc {
    std::int64_t b, t, c;
  };
  for (const btc s : {btc{3, 5, 4}, btc{1, 7, 6}, btc{4, 1, 3}, btc{2, 9, 1}, btc{5, 3, 7}}) {
    const auto shape = ld::make_column_shape<float>(s.b * s.c, s.t, s.c, 1, nullptr, 0.0f);
    const auto layout = ref::sequence_layout::channels_last(s.b, s.t, s.c);
    std::vector<int> seen(static_cast<std::size_t>(s.b * s.t * s.c), 0);
    for (std::int64_t k = 0; k < s.b * s.c; ++k) {
      for (std::int64_t t = 0; t < s.t; ++t) {
        const std::int64_t e = ld::column_origin(shape, k) + t * s.c;
        EXPECT_EQ(e, layout.at(k, t));
        EXPECT_EQ(e, ((k / s.c) * s.t + t) * s.c + k % s.c);  // (b * length + t) * channels + c
        ++seen[static_cast<std::size_t>(e)];
      }
    }
    for (const int count : seen) EXPECT_EQ(count, 1);  // every element belongs to one sequence
  }
  // Interleaved [length, batch]: one group of `batch` channels.
  const auto interleaved = ld::make_column_shape<float>(6, 4, 6, 1, nullptr, 0.0f);
  const auto layout = ref::sequence_layout::interleaved(6, 4);
  for (std::int64_t k = 0; k < 6; ++k) {
    EXPECT_EQ(ld::column_origin(interleaved, k), k);
    for (std::int64_t t = 0; t < 4; ++t) EXPECT_EQ(layout.at(k, t), t * 6 + k);
  }
}

TEST(linrec_layouts, OffsetsProblemsAreNamed) {
  using V = std::vector<std::int64_t>;
  const auto problem = [](const V& offsets, std::int64_t n) { return ref::offsets_problem(offsets, n); };
  EXPECT_EQ(problem(V{0, 3, 3, 10}, 10), "");
  EXPECT_EQ(problem(V{0}, 0), "");
  EXPECT_EQ(problem(V{0, 0, 0}, 0), "");
  EXPECT_NE(problem(V{}, 0).find("no values"), std::string::npos);
  EXPECT_NE(problem(V{1, 3, 10}, 10).find("offsets[0] is 1, not 0"), std::string::npos);
  EXPECT_NE(problem(V{0, 5, 4, 10}, 10).find("not nondecreasing: offsets[2] = 4 < offsets[1] = 5"), std::string::npos);
  EXPECT_NE(problem(V{0, 5, 9}, 10).find("offsets[2] = 9, is not n = 10"), std::string::npos);
  EXPECT_NE(problem(V{0, 5, 11}, 10).find("is not n = 10"), std::string::npos);
  const V offsets{0, 3, 3, 10};
  const auto layout = ref::sequence_layout::varlen(offsets);
  EXPECT_EQ(layout.sequences, 3);
  EXPECT_EQ(layout.elements(), 10);
  EXPECT_EQ(layout.length_of(1), 0);
  EXPECT_EQ(layout.at(2, 4), 7);
}

// check_layout (any layout, sequence after sequence) agrees with check() on the fixed-length
// layouts, and on offsets with the check of each sequence alone.
TEST(linrec_layouts, LayoutReferenceAgreesWithTheFixedOne) {
  const std::int64_t batch = 5, length = 37, n = batch * length;
  std::mt19937_64 rng(scanlab::test::test_seed());
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::vector<double> a(n), b(n), x0s(batch);
  for (auto& v : a) v = 0.9 * unit(rng);
  for (auto& v : b) v = unit(rng);
  for (auto& v : x0s) v = unit(rng);
  ref::operands<double> ops;
  ops.p = a;
  ops.q = b;
  for (const bool interleaved : {false, true}) {
    for (const bool reverse : {false, true}) {
      // A solution: the reference's own, written by a plain loop in the layout.
      const auto layout = interleaved ? ref::sequence_layout::interleaved(batch, length)
                                      : ref::sequence_layout::rows(batch, length);
      std::vector<double> x(n), fin(batch);
      for (std::int64_t k = 0; k < batch; ++k) {
        double state = x0s[static_cast<std::size_t>(k)];
        for (std::int64_t step = 0; step < length; ++step) {
          const auto e = static_cast<std::size_t>(layout.at(k, reverse ? length - 1 - step : step));
          state = a[e] == 0 ? b[e] : std::fma(a[e], state, b[e]);
          x[e] = state;
        }
        fin[static_cast<std::size_t>(k)] = state;
      }
      const auto fixed = ref::check<double>(ops, batch, length, interleaved, x0s, 0.0, x, false, reverse);
      const auto general = ref::check_layout<double>(ops, layout, x0s, 0.0, x, false, reverse);
      EXPECT_TRUE(fixed.pass());
      EXPECT_TRUE(general.pass());
      EXPECT_EQ(fixed.checked, general.checked);
      EXPECT_EQ(fixed.max_bound_ratio, general.max_bound_ratio);
      const auto general_final = ref::check_layout<double>(ops, layout, x0s, 0.0, fin, true, reverse);
      EXPECT_TRUE(general_final.pass());
      x[7] += 1e-3;  // caught
      EXPECT_FALSE(ref::check_layout<double>(ops, layout, x0s, 0.0, x, false, reverse).pass());
    }
  }
  // Offsets: row-major with lengths 0, 3, 0, 40, 1 is the concatenation of the sequences.
  const std::vector<std::int64_t> offsets{0, 0, 3, 3, 43, 44};
  const auto layout = ref::sequence_layout::varlen(offsets);
  std::vector<double> x(44), fin(5);
  for (std::int64_t k = 0; k < 5; ++k) {
    double state = x0s[static_cast<std::size_t>(k)];
    for (std::int64_t t = 0; t < layout.length_of(k); ++t) {
      const auto e = static_cast<std::size_t>(layout.at(k, t));
      state = std::fma(a[e], state, b[e]);
      x[e] = state;
    }
    fin[static_cast<std::size_t>(k)] = state;
  }
  ref::operands<double> head = ops;
  head.p = std::span<const double>(a).first(44);
  head.q = std::span<const double>(b).first(44);
  EXPECT_TRUE((ref::check_layout<double>(head, layout, x0s, 0.0, x, false).pass()));
  EXPECT_TRUE((ref::check_layout<double>(head, layout, x0s, 0.0, fin, true).pass()));
  EXPECT_EQ(fin[0], x0s[0]);  // an empty sequence ends in its initial state
  fin[2] = 1.0 + x0s[2];
  EXPECT_FALSE((ref::check_layout<double>(head, layout, x0s, 0.0, fin, true).pass()));
}

// Size queries (no device touched) and what the host rejects.
TEST(linrec_layouts, SizeQueriesAndHostChecks) {
  namespace ld = scanlab::linrec_detail;
  const float* none = nullptr;
  float* out = nullptr;
  const std::int64_t* no_offsets = nullptr;
  const auto* fake_offsets = reinterpret_cast<const std::int64_t*>(16);  // never read by a size query
  const std::int64_t n = std::int64_t{1} << 24;
  using tuned = scanlab::default_linrec_policy<float>;
  // Variable lengths: the tile states and one bracket per tile, whatever the sequences.
  std::size_t varlen = 0, varlen_many = 0, varlen_final = 0, varlen_backward = 0;
  ASSERT_EQ(scanlab::linear_recurrence_varlen<float>(nullptr, varlen, none, none, out, nullptr, fake_offsets, 1, n),
            cudaSuccess);
  ASSERT_EQ(scanlab::linear_recurrence_varlen<float>(nullptr, varlen_many, none, none, out, out, fake_offsets,
                                                     n / 100, n),
            cudaSuccess);
  ASSERT_EQ(scanlab::solve_linear_recurrence(nullptr, varlen_final, scanlab::linrec_ema(none, 0.5f), nullptr, out,
                                             scanlab::linrec_varlen{fake_offsets, 7, n}),
            cudaSuccess);
  ASSERT_EQ(scanlab::linear_recurrence_backward_varlen<float>(nullptr, varlen_backward, none, none, none, out, out,
                                                              out, fake_offsets, 3, n),
            cudaSuccess);
  EXPECT_EQ(varlen, (ld::offsets_temp_bytes<tuned, float>(n)));
  EXPECT_EQ(varlen_many, varlen);
  EXPECT_EQ(varlen_final, varlen);
  EXPECT_GT(varlen, (ld::rows_temp_bytes<tuned, float>(1, n, ld::linrec_mode::automatic)));  // the brackets
  EXPECT_LT(varlen, (ld::rows_temp_bytes<tuned, float>(1, n, ld::linrec_mode::automatic)) + 256 + (n / 1024 + 1) * 8);
  EXPECT_EQ(varlen_backward, (ld::offsets_temp_bytes<scanlab::default_linrec_gradient_policy<float>, float>(n)));
  // 16-bit storage: the kernel publishes float maps, so the tile states before the brackets
  // are float's (placed after __half maps' states, they overran into the brackets: illegal
  // addresses and wrong sequences on the H100, found by linrec_layout_float16.Varlen*).
  for (const std::int64_t tiles : {std::int64_t{1}, std::int64_t{37}, std::int64_t{100000}}) {
    EXPECT_GE(ld::offsets_states_bytes<__half>(tiles),
              scanlab::device::tile_state<affine_map<float>>::storage_bytes(tiles));
    EXPECT_GE(ld::offsets_states_bytes<__nv_bfloat16>(tiles),
              scanlab::device::tile_state<affine_map<float>>::storage_bytes(tiles));
  }
  std::size_t bytes = 0;
  EXPECT_EQ(scanlab::linear_recurrence_varlen<float>(nullptr, bytes, none, none, out, out, no_offsets, 2, n),
            cudaErrorInvalidValue);
  EXPECT_EQ(scanlab::linear_recurrence_varlen<float>(nullptr, bytes, none, none, out, out, fake_offsets, 0, n),
            cudaErrorInvalidValue);
  EXPECT_EQ(scanlab::linear_recurrence_varlen<float>(nullptr, bytes, none, none, out, out, fake_offsets, -2, n),
            cudaErrorInvalidValue);
  EXPECT_EQ(scanlab::linear_recurrence_reverse_varlen<float>(nullptr, bytes, none, none, out, out, fake_offsets, 2,
                                                             -1),
            cudaErrorInvalidValue);
  EXPECT_EQ(scanlab::linear_recurrence_varlen<float>(nullptr, bytes, none, none, out, out, no_offsets, 0, 0),
            cudaSuccess);
  // Channels-last: the interleaved batches' column walks; one group of C channels is an
  // interleaved batch of C, one channel a row-major batch.
  std::size_t btc = 0, interleaved = 0, rows = 0, one_channel = 0;
  ASSERT_EQ(scanlab::linear_recurrence_channels_last<float>(nullptr, btc, none, none, out, 1, n / 8, 8),
            cudaSuccess);
  ASSERT_EQ(scanlab::linear_recurrence_batched<float>(nullptr, interleaved, none, none, out, 8, n / 8,
                                                      scanlab::batch_layout::interleaved),
            cudaSuccess);
  EXPECT_EQ(btc, interleaved);
  ASSERT_EQ(scanlab::linear_recurrence_channels_last<float>(nullptr, one_channel, none, none, out, 8, n / 8, 1),
            cudaSuccess);
  ASSERT_EQ(scanlab::linear_recurrence_batched<float>(nullptr, rows, none, none, out, 8, n / 8,
                                                      scanlab::batch_layout::row_major),
            cudaSuccess);
  EXPECT_EQ(one_channel, rows);
  std::size_t backward = 0;
  ASSERT_EQ(scanlab::linear_recurrence_backward_channels_last<float>(nullptr, backward, none, none, none, out, out,
                                                                     out, 4, n / 32, 8),
            cudaSuccess);
  EXPECT_GT(backward, 1u);  // 32 long sequences: segment maps
  EXPECT_EQ(scanlab::linear_recurrence_channels_last<float>(nullptr, bytes, none, none, out, 4, -1, 8),
            cudaErrorInvalidValue);
  EXPECT_EQ(scanlab::linear_recurrence_channels_last<float>(nullptr, bytes, none, none, out, std::int64_t{1} << 40,
                                                            std::int64_t{1} << 30, 8),
            cudaErrorInvalidValue);
  EXPECT_EQ(scanlab::linear_recurrence_backward_channels_last<float>(nullptr, bytes, none, none, none, out, out, out,
                                                                     INT64_MAX, 1, 2),
            cudaErrorInvalidValue);
  const scanlab::single_pass_options invalid{scanlab::launch_mode::automatic, -1};
  EXPECT_EQ(scanlab::linear_recurrence_channels_last<float>(nullptr, bytes, none, none, out, 4, 16, 8, nullptr,
                                                            nullptr, invalid),
            cudaErrorInvalidValue);
  EXPECT_EQ(scanlab::linear_recurrence_backward_varlen<float>(nullptr, bytes, none, none, none, out, out, out,
                                                              fake_offsets, 3, n, nullptr, nullptr, invalid),
            cudaErrorInvalidValue);
}

// ---- the element types: storage and state, conversions, complex arithmetic ----

TEST(linrec_types, StateTypesAndTileShapes) {
  namespace ld = scanlab::linrec_detail;
  static_assert(std::is_same_v<scanlab::linrec_state_t<__half>, float>);
  static_assert(std::is_same_v<scanlab::linrec_state_t<__nv_bfloat16>, float>);
  static_assert(std::is_same_v<scanlab::linrec_state_t<float>, float>);
  static_assert(std::is_same_v<scanlab::linrec_state_t<double>, double>);
  static_assert(std::is_same_v<scanlab::linrec_state_t<scanlab::complex<float>>, scanlab::complex<float>>);
  static_assert(scanlab::is_linrec_element_v<__half> && !scanlab::is_linrec_element_v<int>);
  static_assert(sizeof(scanlab::complex<float>) == 8 && alignof(scanlab::complex<float>) == 8);
  static_assert(sizeof(scanlab::complex<double>) == 16 && alignof(scanlab::complex<double>) == 16);
  static_assert(std::is_trivially_copyable_v<scanlab::complex<float>> &&
                std::is_trivially_default_constructible_v<scanlab::complex<double>>);
  // Items per thread count states (64 bytes of them on Hopper), at least one 16-byte word of storage.
  EXPECT_EQ(ld::linrec_items<float>(64), 16);
  EXPECT_EQ(ld::linrec_items<double>(64), 8);
  EXPECT_EQ(ld::linrec_items<__half>(64), 16);
  EXPECT_EQ(ld::linrec_items<__nv_bfloat16>(64), 16);
  EXPECT_EQ(ld::linrec_items<__half>(16), 8);  // Turing: one word of 8 halves
  // The rows kernel's count storage: the 16-bit types twice float's items.
  EXPECT_EQ(ld::linrec_stored_items<float>(64), 16);
  EXPECT_EQ(ld::linrec_stored_items<__nv_bfloat16>(64), 32);
  EXPECT_EQ(ld::linrec_stored_items<__half>(32), 16);
  EXPECT_EQ(ld::linrec_stored_items<__half>(8), 8);  // at least one word
  EXPECT_EQ((ld::linrec_rows_shape<__nv_bfloat16, 90>::policy::items_per_thread), 32);
  EXPECT_EQ((ld::linrec_rows_gradient_shape<__half, 90>::policy::items_per_thread), 16);
  EXPECT_EQ((ld::linrec_shape<__nv_bfloat16, 90>::policy::items_per_thread), 16);
  EXPECT_EQ(ld::linrec_items<scanlab::complex<float>>(64), 8);
  EXPECT_EQ(ld::linrec_items<scanlab::complex<double>>(64), 4);
  EXPECT_EQ(ld::linrec_items<scanlab::complex<double>>(16), 1);
  // float's and double's shapes as before.
  EXPECT_EQ((ld::linrec_shape<float, 90>::policy::items_per_thread), 16);
  EXPECT_EQ((ld::linrec_shape<double, 90>::policy::items_per_thread), 8);
  EXPECT_EQ((ld::linrec_gradient_shape<float, 80>::policy::block_threads), 512);
  EXPECT_EQ((ld::linrec_gradient_shape<scanlab::complex<double>, 80>::policy::block_threads), 256);
}

TEST(linrec_types, WidenIsExactAndNarrowRoundsToNearestEven) {
  namespace ld = scanlab::linrec_detail;
  // bfloat16: 8 significant bits. 1 + 2^-8 is a tie between 1 and 1 + 2^-7: to even, 1.
  EXPECT_EQ(ld::widen(ld::narrow<__nv_bfloat16>(1.0f + 0x1p-8f)), 1.0f);
  EXPECT_EQ(ld::widen(ld::narrow<__nv_bfloat16>(1.0f + 0x1p-8f + 0x1p-20f)), 1.0f + 0x1p-7f);
  EXPECT_EQ(ld::widen(ld::narrow<__nv_bfloat16>(1.0f + 3 * 0x1p-8f)), 1.0f + 0x1p-6f);  // tie: to even
  // float16: 11 significant bits, largest finite 65504.
  EXPECT_EQ(ld::widen(ld::narrow<__half>(1.0f + 0x1p-11f)), 1.0f);
  EXPECT_EQ(ld::widen(ld::narrow<__half>(1.0f + 0x1p-10f)), 1.0f + 0x1p-10f);
  EXPECT_EQ(ld::widen(ld::narrow<__half>(65504.0f)), 65504.0f);
  EXPECT_TRUE(std::isinf(ld::widen(ld::narrow<__half>(70000.0f))));
  EXPECT_TRUE(std::isnan(ld::widen(ld::narrow<__nv_bfloat16>(std::numeric_limits<float>::quiet_NaN()))));
  // Every 16-bit value widens exactly and narrows back to itself.
  for (unsigned bits = 0; bits < 0x10000u; bits += 7) {
    __half_raw raw_h;
    __nv_bfloat16_raw raw_bf;
    raw_h.x = static_cast<unsigned short>(bits);
    raw_bf.x = static_cast<unsigned short>(bits);
    const __half h = raw_h;
    const __nv_bfloat16 bf = raw_bf;
    const float fh = ld::widen(h), fb = ld::widen(bf);
    if (std::isnan(fh) || std::isnan(fb)) continue;
    const __half h2 = ld::narrow<__half>(fh);
    const __nv_bfloat16 bf2 = ld::narrow<__nv_bfloat16>(fb);
    EXPECT_EQ(0, std::memcmp(&h2, &h, 2)) << bits;
    EXPECT_EQ(0, std::memcmp(&bf2, &bf, 2)) << bits;
  }
}

TEST(linrec_types, ComplexArithmeticAndTheResetRule) {
  using C = scanlab::complex<double>;
  const C a(0.5, -2.0), x(3.0, 0.25), b(-1.0, 4.0);
  const C p = a * x;  // (1.5 + 0.5) + i (0.125 - 6)
  EXPECT_EQ(p.re, 2.0);
  EXPECT_EQ(p.im, -5.875);
  const C f = fma(a, x, b);
  EXPECT_EQ(f.re, 1.0);
  EXPECT_EQ(f.im, -1.875);
  EXPECT_EQ(conj(a).im, 2.0);
  EXPECT_TRUE(C(0.0, -0.0) == C(0.0));
  // a == 0 (both parts) resets, also after a NaN state; an imaginary a does not.
  const C nan(std::numeric_limits<double>::quiet_NaN(), 0.0);
  EXPECT_EQ(apply(affine_map<C>{C(0.0), b}, nan).re, -1.0);
  EXPECT_TRUE(std::isnan(apply(affine_map<C>{C(0.0, 1.0), b}, nan).re));
  // Composition in order: then(e, l) = l o e.
  const affine_map<C> e{a, b}, l{C(0.0, 1.0), C(2.0)};
  const affine_map<C> el = affine_then{}(e, l);
  const C direct = apply(l, apply(e, x));
  const C composed = apply(el, x);
  EXPECT_NEAR(composed.re, direct.re, 1e-14);
  EXPECT_NEAR(composed.im, direct.im, 1e-14);
  // An underflowed product of nonzero a's stays nonzero (not a reset).
  const affine_map<C> tiny{C(1e-200, 1e-200), C(0.0)};
  EXPECT_FALSE(affine_then{}(tiny, tiny).a == C(0.0));
  EXPECT_TRUE(affine_then{}(affine_map<C>{C(0.0), C(1.0)}, tiny).a == C(0.0));
}

// The reference's bound for the 16-bit types: a float solve rounded once to the stored type
// passes; a result one rounding step further off (two ulps of the stored type) fails.
TEST(linrec_types, SixteenBitReferenceChargesOneRounding) {
  namespace ld = scanlab::linrec_detail;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  const std::size_t n = 4000;
  std::vector<__nv_bfloat16> a(n), b(n), x(n), off(n);
  float state = 0.5f;
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = ld::narrow<__nv_bfloat16>(static_cast<float>(0.9 * unit(rng)));
    b[i] = ld::narrow<__nv_bfloat16>(static_cast<float>(unit(rng)));
    state = std::fma(ld::widen(a[i]), state, ld::widen(b[i]));
    x[i] = ld::narrow<__nv_bfloat16>(state);
    off[i] = ld::narrow<__nv_bfloat16>(state * (1 + 0x1p-6f));  // 2 to 4 ulps of bfloat16 off
  }
  ref::operands<__nv_bfloat16> ops;
  ops.p = a;
  ops.q = b;
  const __nv_bfloat16 x0 = ld::narrow<__nv_bfloat16>(0.5f);
  const auto good = ref::check<__nv_bfloat16>(ops, 1, static_cast<std::int64_t>(n), false, {}, x0, x, false);
  EXPECT_TRUE(good.pass()) << good.max_bound_ratio;
  EXPECT_GT(good.max_relative_error, 0.0);
  EXPECT_LE(good.max_relative_error, 1.0 / 256 + 1e-5);
  const auto bad = ref::check<__nv_bfloat16>(ops, 1, static_cast<std::int64_t>(n), false, {}, x0, off, false);
  EXPECT_FALSE(bad.pass());
}

// The complex reference: a complex sequential solve passes its own check; the adjoint is
// PyTorch's (conj of a and x): for L = Re(sum(conj(w) x)), dL/d conj(b) = g with the
// conjugated recurrence, checked against central differences of L in b's parts.
TEST(linrec_types, ComplexReferenceAndAdjointConvention) {
  using C = scanlab::complex<double>;
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  const std::size_t n = 40;
  std::vector<C> a(n), b(n), w(n), x(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = C(0.6 * unit(rng), 0.6 * unit(rng));
    b[i] = C(unit(rng), unit(rng));
    w[i] = C(unit(rng), unit(rng));
  }
  const C x0(0.3, -0.7);
  const auto solve = [&](const std::vector<C>& bb, const std::vector<C>& aa, C start) {
    std::vector<std::complex<long double>> out(n);
    std::complex<long double> s(start.re, start.im);
    for (std::size_t i = 0; i < n; ++i) {
      s = std::complex<long double>(aa[i].re, aa[i].im) * s + std::complex<long double>(bb[i].re, bb[i].im);
      out[i] = s;
    }
    return out;
  };
  const auto exact = solve(b, a, x0);
  for (std::size_t i = 0; i < n; ++i) x[i] = C(static_cast<double>(exact[i].real()), static_cast<double>(exact[i].imag()));
  ref::operands<C> ops;
  ops.p = a;
  ops.q = b;
  EXPECT_TRUE((ref::check<C>(ops, 1, static_cast<std::int64_t>(n), false, {}, x0, x, false).pass()));
  // L = Re(sum conj(w_i) x_i): dL/dx = w (as dL/d conj(x)); the gradients PyTorch's way.
  const auto loss = [&](const std::vector<C>& bb, const std::vector<C>& aa, C start) {
    long double sum = 0;
    const auto xs = solve(bb, aa, start);
    for (std::size_t i = 0; i < n; ++i) sum += (std::conj(std::complex<long double>(w[i].re, w[i].im)) * xs[i]).real();
    return sum;
  };
  std::vector<C> ga(n), gb(n), gx0(1);
  std::complex<long double> g = 0;
  for (std::size_t t = n; t-- > 0;) {
    const std::complex<long double> a_next = t + 1 < n ? std::complex<long double>(a[t + 1].re, a[t + 1].im) : 0.0L;
    g = std::complex<long double>(w[t].re, w[t].im) + std::conj(a_next) * g;
    gb[t] = C(static_cast<double>(g.real()), static_cast<double>(g.imag()));
    const std::complex<long double> previous = t > 0 ? exact[t - 1] : std::complex<long double>(x0.re, x0.im);
    const auto da = g * std::conj(previous);
    ga[t] = C(static_cast<double>(da.real()), static_cast<double>(da.imag()));
  }
  const auto dx0 = std::conj(std::complex<long double>(a[0].re, a[0].im)) * g;
  gx0[0] = C(static_cast<double>(dx0.real()), static_cast<double>(dx0.imag()));
  const auto r = ref::check_gradients<C>(a, x, w, 1, static_cast<std::int64_t>(n), false, {}, x0, ga, gb, gx0);
  EXPECT_TRUE(r.pass());
  // PyTorch's gradient of a real L in z is dL/dRe(z) + i dL/dIm(z): central differences in
  // the parts of b[i] and a[i] (L is affine in each, so they are exact up to rounding).
  const double h = 1e-6;
  for (const std::size_t i : {std::size_t{5}, std::size_t{7}}) {
    std::vector<C> bp = b, bm = b, bi = b, bj = b;
    bp[i].re += h;
    bm[i].re -= h;
    bi[i].im += h;
    bj[i].im -= h;
    const double d_re = static_cast<double>((loss(bp, a, x0) - loss(bm, a, x0)) / (2 * h));
    const double d_im = static_cast<double>((loss(bi, a, x0) - loss(bj, a, x0)) / (2 * h));
    EXPECT_NEAR(gb[i].re, d_re, 1e-7);
    EXPECT_NEAR(gb[i].im, d_im, 1e-7);
    std::vector<C> ap = a, am = a, ai = a, aj = a;
    ap[i].re += h;
    am[i].re -= h;
    ai[i].im += h;
    aj[i].im -= h;
    EXPECT_NEAR(ga[i].re, static_cast<double>((loss(b, ap, x0) - loss(b, am, x0)) / (2 * h)), 1e-7);
    EXPECT_NEAR(ga[i].im, static_cast<double>((loss(b, ai, x0) - loss(b, aj, x0)) / (2 * h)), 1e-7);
  }
}

}  // namespace
