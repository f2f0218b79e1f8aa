// The GPU conjugate gradient solver of scanlab-cg (cg_gpu.cu), behind a plain C++
// interface: main.cpp and the tests never see a CUDA header.
//
// The same recurrence as cg_cpu.hpp, from x0 = 0, on vectors of float or double. Per
// iteration: one CSR SpMV (Ap = A p), two scanlab::dot products (p.Ap and r.r,
// accumulated in double for float vectors too: the scalars alpha and beta live in device
// memory as doubles, and the update kernels read them there), two fused vector updates,
// and one 24-byte copy to the host to test convergence (||r|| / ||b|| <= tol) and
// breakdown (p.Ap <= 0). ||b|| comes from scanlab::l2_norm; after the solve the true
// residual ||b - Ax|| is measured with scanlab::l2_norm as well.
//
// SpMV: one thread per row (rows of a few nonzeros, such as the Poisson matrices: a warp
// reads 32 consecutive rows) or one warp per row (long rows: the lanes stride along the
// row, then a shuffle tree). "auto" picks a warp per row when rows average more than 16
// nonzeros.
#pragma once

#include "cg/sparse.hpp"

#include "common/bench.hpp"

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace scanlab::cg {

enum class spmv_kind { automatic, thread_per_row, warp_per_row };

struct gpu_options {
  bool use_double = true;  // vector and matrix type: double, or float
  double tol = 1e-8;       // on ||r|| / ||b||
  int max_iters = 10000;
  spmv_kind spmv = spmv_kind::automatic;
};

struct gpu_result {
  std::vector<double> x;
  int iterations = 0;
  double relative_residual = 0;       // ||r|| / ||b|| of the recurrence when it stopped
  double true_relative_residual = 0;  // ||b - A x|| / ||b||, computed on the GPU afterwards
  bool converged = false;
  std::string breakdown;              // non-empty if p.Ap <= 0 or not finite stopped it
  double solve_ms = 0;                // this solve, CUDA events (includes the per-iteration checks)
};

// Whole solves and the parts, for the shares of a solve: vectors stay in L2 between
// the parts of an iteration, so the parts are timed without flushing L2.
struct gpu_timings {
  bench::timing solve;    // one solve per sample (its own events; no warm-up, no flush)
  int iterations = 0;
  bench::timing spmv;
  bench::timing dot;      // one dot product of two vectors
  bench::timing update;   // both vector updates of one iteration
  double spmv_bytes = 0;  // the bytes one SpMV must move (matrix, x once, y)
  std::string spmv_used;  // "thread per row" or "warp per row"
};

// Called after every iteration's convergence check (the host has just synchronised with the
// GPU there) with the iteration number and ||r|| / ||b||: scanlab-cg's progress line. It runs
// inside the timed solve, so it must be cheap (status_line::due() is one clock read).
using progress_fn = std::function<void(int iteration, double relative_residual)>;

class gpu_solver {
 public:
  // Copies the matrix (as float or double) and b to the current device.
  gpu_solver(const sparse::csr_matrix& a, std::span<const double> b, const gpu_options& options);
  ~gpu_solver();
  gpu_solver(const gpu_solver&) = delete;
  gpu_solver& operator=(const gpu_solver&) = delete;

  gpu_result solve(const progress_fn& progress = {});
  // Solves `repeat` times (at least 3) and times the parts (median of `repeat` runs each).
  gpu_timings bench(int repeat);
  [[nodiscard]] std::string spmv_used() const;

  class impl;

 private:
  std::unique_ptr<impl> impl_;
};

}  // namespace scanlab::cg
