// The GPU solvers built on scanlab's norms: Jacobi (scanlab-jacobi) against the CPU
// iteration and known solutions, CG (scanlab-cg) on Poisson problems and a small .mtx.
#include "cg/cg_cpu.hpp"
#include "cg/cg_gpu.hpp"
#include "cg/mtx.hpp"
#include "cg/sparse.hpp"
#include "common/gpu_test.hpp"
#include "common/test_data.hpp"
#include "jacobi/jacobi.hpp"
#include "jacobi/jacobi_gpu.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <vector>

namespace {

namespace jacobi = scanlab::jacobi;
namespace cg = scanlab::cg;
namespace sparse = scanlab::sparse;

class jacobi_gpu : public scanlab::test::gpu_test {};
class cg_gpu : public scanlab::test::gpu_test {};

TEST_F(jacobi_gpu, OnesBoundaryConvergesToOnes) {
  for (const bool use_double : {false, true}) {
    jacobi::gpu_options o;
    o.use_double = use_double;
    o.n = 20;
    o.bc = jacobi::boundary::ones;
    o.tol = use_double ? 1e-12 : 1e-7;
    o.max_iters = 20000;
    o.check_every = 7;
    const jacobi::gpu_result r = jacobi::run_gpu(o, true);
    EXPECT_TRUE(r.converged) << "rms change " << r.rms_change;
    EXPECT_LT(r.rms_change, o.tol);
    EXPECT_EQ(r.iterations % 7, 0);
    for (double v : r.field) ASSERT_NEAR(v, 1.0, use_double ? 1e-9 : 2e-4);
  }
}

TEST_F(jacobi_gpu, MatchesTheCpuIterationBitwise) {
  for (const bool use_double : {false, true}) {
    for (const jacobi::boundary bc : {jacobi::boundary::harmonic, jacobi::boundary::face}) {
      jacobi::gpu_options o;
      o.use_double = use_double;
      o.n = 33;  // not a multiple of the 32 x 4 x 2 block
      o.bc = bc;
      o.tol = 1e-30;  // run exactly max_iters sweeps
      o.max_iters = 57;
      o.check_every = 10;
      const jacobi::gpu_result r = jacobi::run_gpu(o, true);
      EXPECT_FALSE(r.converged);
      ASSERT_EQ(r.iterations, 57);
      std::vector<double> cpu;
      if (use_double) {
        const auto f = jacobi::iterate_cpu<double>(o.n, bc, 57);
        cpu.assign(f.begin(), f.end());
      } else {
        const auto f = jacobi::iterate_cpu<float>(o.n, bc, 57);
        cpu.assign(f.begin(), f.end());
      }
      ASSERT_EQ(cpu.size(), r.field.size());
      std::size_t differ = 0;
      for (std::size_t p = 0; p < cpu.size(); ++p) differ += cpu[p] != r.field[p] ? 1 : 0;
      EXPECT_EQ(differ, 0u) << (use_double ? "double" : "float") << ", boundary " << jacobi::name(bc);
      // The last check's RMS change equals the one of the CPU's last two fields.
      std::vector<double> before;
      if (use_double) {
        const auto f = jacobi::iterate_cpu<double>(o.n, bc, 56);
        before.assign(f.begin(), f.end());
      } else {
        const auto f = jacobi::iterate_cpu<float>(o.n, bc, 56);
        before.assign(f.begin(), f.end());
      }
      long double ssq = 0;
      for (std::size_t p = 0; p < cpu.size(); ++p) ssq += (cpu[p] - before[p]) * (cpu[p] - before[p]);
      const double rms = std::sqrt(static_cast<double>(ssq / static_cast<long double>(cpu.size())));
      EXPECT_NEAR(r.rms_change, rms, 1e-12 * rms + 1e-300);
    }
  }
}

TEST_F(jacobi_gpu, HarmonicApproachesTheExactSolution) {
  jacobi::gpu_options o;
  o.use_double = true;
  o.n = 16;
  o.bc = jacobi::boundary::harmonic;
  o.tol = 1e-13;
  o.max_iters = 100000;
  const jacobi::gpu_result r = jacobi::run_gpu(o, true);
  ASSERT_TRUE(r.converged);
  double worst = 0;
  for (std::int64_t k = 0; k < o.n; ++k) {
    for (std::int64_t j = 0; j < o.n; ++j) {
      for (std::int64_t i = 0; i < o.n; ++i) {
        const double exact = *jacobi::exact_value(o.bc, o.n, i, j, k);
        worst = std::max(worst, std::fabs(r.field[static_cast<std::size_t>(i + o.n * (j + o.n * k))] - exact));
      }
    }
  }
  EXPECT_LT(worst, 1e-9);
}

double max_error_vs_ones(const std::vector<double>& x) {
  double worst = 0;
  for (double v : x) worst = std::max(worst, std::fabs(v - 1.0));
  return worst;
}

TEST_F(cg_gpu, PoissonSolvesToOnes) {
  for (const bool use_double : {true, false}) {
    for (const sparse::csr_matrix& a : {sparse::poisson2d(40), sparse::poisson3d(12)}) {
      const std::vector<double> ones(static_cast<std::size_t>(a.rows), 1.0);
      const std::vector<double> b = sparse::multiply(a, ones);
      cg::gpu_options o;
      o.use_double = use_double;
      o.tol = use_double ? 1e-10 : 1e-5;
      o.max_iters = 5000;
      cg::gpu_solver solver(a, b, o);
      const cg::gpu_result r = solver.solve();
      EXPECT_TRUE(r.converged) << "rows " << a.rows << ", residual " << r.relative_residual;
      EXPECT_TRUE(r.breakdown.empty()) << r.breakdown;
      EXPECT_LE(r.relative_residual, o.tol);
      EXPECT_LE(r.true_relative_residual, use_double ? 1e-9 : 1e-4);
      EXPECT_LE(max_error_vs_ones(r.x), use_double ? 1e-6 : 5e-2);
      // Double: the same iteration count as the CPU reference, give or take rounding.
      const cg::cg_result cpu = cg::cg_cpu(a, b, o.tol, o.max_iters);
      EXPECT_LE(std::abs(cpu.iterations - r.iterations), use_double ? 2 : std::max(5, cpu.iterations / 4))
          << "GPU " << r.iterations << " vs CPU " << cpu.iterations;
      // Deterministic: a second solve takes the same path to the same bits.
      const cg::gpu_result again = solver.solve();
      EXPECT_EQ(again.iterations, r.iterations);
      EXPECT_EQ(again.x, r.x);
    }
  }
}

TEST_F(cg_gpu, WarpPerRowSpmvAgrees) {
  const sparse::csr_matrix a = sparse::poisson3d(10);
  const std::vector<double> ones(static_cast<std::size_t>(a.rows), 1.0);
  const std::vector<double> b = sparse::multiply(a, ones);
  cg::gpu_options o;
  o.tol = 1e-10;
  o.spmv = cg::spmv_kind::warp_per_row;
  cg::gpu_solver warp(a, b, o);
  EXPECT_EQ(warp.spmv_used(), "warp per row");
  const cg::gpu_result r = warp.solve();
  EXPECT_TRUE(r.converged);
  EXPECT_LE(max_error_vs_ones(r.x), 1e-7);
}

TEST_F(cg_gpu, SmallMatrixMarketFile) {
  const std::filesystem::path dir = scanlab::test::data_dir();
  const sparse::csr_matrix a = scanlab::mtx::read_mtx(dir / "norms_spd6.mtx");
  const std::vector<double> ones(static_cast<std::size_t>(a.rows), 1.0);
  const std::vector<double> b = sparse::multiply(a, ones);
  cg::gpu_options o;
  o.tol = 1e-12;
  cg::gpu_solver solver(a, b, o);
  const cg::gpu_result r = solver.solve();
  EXPECT_TRUE(r.converged);
  EXPECT_LE(r.iterations, 6 + 2);
  EXPECT_LE(max_error_vs_ones(r.x), 1e-10);
}

TEST_F(cg_gpu, IndefiniteMatrixBreaksDown) {
  const sparse::csr_matrix a = sparse::from_entries(2, 2, {{0, 0, 1.0}, {1, 1, -1.0}});
  const std::vector<double> b = {1.0, 1.0};
  cg::gpu_solver solver(a, b, {});
  const cg::gpu_result r = solver.solve();
  EXPECT_FALSE(r.converged);
  EXPECT_FALSE(r.breakdown.empty());
}

}  // namespace
