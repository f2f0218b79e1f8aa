// CPU parts of the norms apps: the Poisson matrices, the reference CG, the CPU Jacobi
// iteration and the long double references of scanlab-norms.
#include "cg/cg_cpu.hpp"
#include "cg/sparse.hpp"
#include "jacobi/jacobi.hpp"
#include "norms/norms_reference.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace {

namespace sparse = scanlab::sparse;
namespace jacobi = scanlab::jacobi;

double max_error_vs_ones(const std::vector<double>& x) {
  double worst = 0;
  for (double v : x) worst = std::max(worst, std::fabs(v - 1.0));
  return worst;
}

TEST(poisson, ShapesAndSymmetry) {
  for (std::int64_t n : {1, 2, 5, 9}) {
    const sparse::csr_matrix a2 = sparse::poisson2d(n);
    EXPECT_EQ(a2.rows, n * n);
    EXPECT_EQ(a2.nnz(), 5 * n * n - 4 * n);
    EXPECT_TRUE(sparse::is_symmetric(a2));
    const sparse::csr_matrix a3 = sparse::poisson3d(n);
    EXPECT_EQ(a3.rows, n * n * n);
    EXPECT_EQ(a3.nnz(), 7 * n * n * n - 6 * n * n);
    EXPECT_TRUE(sparse::is_symmetric(a3));
    for (std::int64_t r = 0; r < a3.rows; ++r) {
      EXPECT_TRUE(std::is_sorted(a3.col.begin() + a3.row_ptr[r], a3.col.begin() + a3.row_ptr[r + 1]));
    }
  }
  // An interior row of the 3-D matrix sums to 0; a corner row to 6 - 3 = 3.
  const sparse::csr_matrix a = sparse::poisson3d(4);
  const std::vector<double> ones(static_cast<std::size_t>(a.rows), 1.0);
  const std::vector<double> sums = sparse::multiply(a, ones);
  EXPECT_EQ(sums[0], 3.0);
  EXPECT_EQ(sums[1 + 4 * 1 + 16 * 1], 0.0);
  EXPECT_THROW((void)sparse::poisson2d(0), std::invalid_argument);
}

TEST(cg_cpu, PoissonSolvesToOnes) {
  for (const sparse::csr_matrix& a : {sparse::poisson2d(16), sparse::poisson3d(8)}) {
    const std::vector<double> ones(static_cast<std::size_t>(a.rows), 1.0);
    const std::vector<double> b = sparse::multiply(a, ones);
    const scanlab::cg::cg_result r = scanlab::cg::cg_cpu(a, b, 1e-10, 1000);
    EXPECT_TRUE(r.converged);
    EXPECT_TRUE(r.breakdown.empty());
    EXPECT_LE(r.relative_residual, 1e-10);
    EXPECT_GT(r.iterations, 1);
    EXPECT_LE(r.iterations, a.rows);  // exact arithmetic would need at most n
    EXPECT_LE(max_error_vs_ones(r.x), 1e-7);
  }
}

TEST(cg_cpu, ZeroRightHandSideAndBreakdown) {
  const sparse::csr_matrix a = sparse::poisson2d(4);
  const std::vector<double> zero(static_cast<std::size_t>(a.rows), 0.0);
  const scanlab::cg::cg_result r = scanlab::cg::cg_cpu(a, zero, 1e-8, 100);
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(r.iterations, 0);
  // diag(1, -1) is not positive definite: p.Ap = 0 for b = (1, 1).
  const sparse::csr_matrix indefinite = sparse::from_entries(2, 2, {{0, 0, 1.0}, {1, 1, -1.0}});
  const std::vector<double> b = {1.0, 1.0};
  const scanlab::cg::cg_result bad = scanlab::cg::cg_cpu(indefinite, b, 1e-8, 100);
  EXPECT_FALSE(bad.converged);
  EXPECT_FALSE(bad.breakdown.empty());
}

TEST(jacobi_cpu, OnesBoundaryConvergesToOnes) {
  const std::int64_t n = 6;
  const std::vector<double> u = jacobi::iterate_cpu<double>(n, jacobi::boundary::ones, 400);
  for (double v : u) EXPECT_NEAR(v, 1.0, 1e-12);
  const std::vector<float> f = jacobi::iterate_cpu<float>(n, jacobi::boundary::ones, 400);
  for (float v : f) EXPECT_NEAR(v, 1.0f, 1e-6f);
}

TEST(jacobi_cpu, HarmonicSolutionIsAFixedPoint) {
  // x^2 - y^2 + z is exactly discretely harmonic: a sweep of it returns it (to rounding).
  const std::int64_t n = 9;
  std::vector<double> u(static_cast<std::size_t>(n * n * n));
  for (std::int64_t k = 0; k < n; ++k) {
    for (std::int64_t j = 0; j < n; ++j) {
      for (std::int64_t i = 0; i < n; ++i) {
        u[static_cast<std::size_t>(i + n * (j + n * k))] = *jacobi::exact_value(jacobi::boundary::harmonic, n, i, j, k);
      }
    }
  }
  std::vector<double> v = u;
  jacobi::sweep_cpu(n, u.data(), v.data());
  for (std::size_t p = 0; p < u.size(); ++p) EXPECT_NEAR(v[p], u[p], 1e-14);
  // And the iteration from zero approaches it.
  const std::vector<double> w = jacobi::iterate_cpu<double>(n, jacobi::boundary::harmonic, 2000);
  for (std::size_t p = 0; p < u.size(); ++p) EXPECT_NEAR(w[p], u[p], 1e-9);
}

TEST(jacobi_cpu, FaceBoundaryObeysTheMaximumPrinciple) {
  const std::int64_t n = 8;
  const std::vector<float> u = jacobi::iterate_cpu<float>(n, jacobi::boundary::face, 50);
  for (float v : u) {
    EXPECT_GE(v, 0.0f);
    EXPECT_LE(v, 1.0f);
  }
  EXPECT_GT(u[static_cast<std::size_t>(3 + n * (3 + n * 1))], 0.0f);  // next to the hot face
}

TEST(norms_reference, CompensatedSumAndErrors) {
  namespace ref = scanlab::norms_ref;
  ref::compensated_sum s;
  s.add(1.0L);
  for (int i = 0; i < 1000; ++i) s.add(1e-20L);
  s.add(-1.0L);
  EXPECT_NEAR(static_cast<double>(s.value()), 1e-17, 1e-25);
  ref::compensated_sum inf;
  inf.add(1.0L);
  inf.add(std::numeric_limits<long double>::infinity());
  inf.add(1.0L);
  EXPECT_TRUE(std::isinf(inf.value()));
  EXPECT_EQ(ref::relative_error(1.0, 1.0), 0.0);
  EXPECT_EQ(ref::relative_error(std::nan(""), std::nanl("")), 0.0);
  EXPECT_TRUE(std::isinf(ref::relative_error(1.0, std::nanl(""))));
  // The threaded reference equals the single-threaded one to long double rounding.
  std::vector<float> x(3'000'001);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 2654435761u) % 1000) / 999.0f;
  const auto one = ref::sum_squares<float>(x, 1);
  const auto many = ref::sum_squares<float>(x, 4);
  EXPECT_NEAR(static_cast<double>(one.value), static_cast<double>(many.value), 1e-9 * static_cast<double>(one.value));
}

}  // namespace
