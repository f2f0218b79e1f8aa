// The reference conjugate gradient solver, on the CPU in double: scanlab-cg --validate
// compares the GPU solve with it, and the CPU tests check it on Poisson problems.
//
// Plain CG from x0 = 0 (r0 = b, p0 = r0), the same recurrence as the GPU solver:
//   alpha = (r.r) / (p.Ap); x += alpha p; r -= alpha Ap; beta = (r'.r') / (r.r); p = r' + beta p
// stopping when ||r|| / ||b|| <= tol (the recurrence residual) or after max_iters
// iterations. b = 0 gives x = 0 after 0 iterations.
#pragma once

#include "cg/sparse.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace scanlab::cg {

struct cg_result {
  std::vector<double> x;
  int iterations = 0;
  double relative_residual = 0;  // ||r|| / ||b|| of the recurrence when it stopped
  bool converged = false;
  std::string breakdown;         // non-empty if p.Ap <= 0 or not finite stopped it (not SPD?)
};

cg_result cg_cpu(const sparse::csr_matrix& a, std::span<const double> b, double tol, int max_iters);

}  // namespace scanlab::cg
