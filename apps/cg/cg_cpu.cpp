#include "cg/cg_cpu.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace scanlab::cg {

namespace {

double dot(std::span<const double> a, std::span<const double> b) {
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace

cg_result cg_cpu(const sparse::csr_matrix& a, std::span<const double> b, double tol, int max_iters) {
  if (a.rows != a.cols) throw std::invalid_argument("CG needs a square matrix");
  if (static_cast<std::int64_t>(b.size()) != a.rows) throw std::invalid_argument("CG: b has the wrong length");
  const auto n = static_cast<std::size_t>(a.rows);
  cg_result result;
  result.x.assign(n, 0.0);
  std::vector<double> r(b.begin(), b.end());
  std::vector<double> p = r;
  double rr = dot(r, r);
  const double b_norm = std::sqrt(rr);
  if (b_norm == 0) {
    result.converged = true;
    return result;
  }
  for (int k = 1; k <= max_iters; ++k) {
    const std::vector<double> ap = sparse::multiply(a, p);
    const double p_ap = dot(p, ap);
    if (!(p_ap > 0) || !std::isfinite(p_ap)) {
      std::ostringstream why;
      why << "p.Ap = " << p_ap << " at iteration " << k;
      result.breakdown = why.str();
      return result;
    }
    const double alpha = rr / p_ap;
    for (std::size_t i = 0; i < n; ++i) {
      result.x[i] += alpha * p[i];
      r[i] -= alpha * ap[i];
    }
    const double rr_new = dot(r, r);
    result.iterations = k;
    result.relative_residual = std::sqrt(rr_new) / b_norm;
    if (result.relative_residual <= tol) {
      result.converged = true;
      return result;
    }
    const double beta = rr_new / rr;
    for (std::size_t i = 0; i < n; ++i) p[i] = r[i] + beta * p[i];
    rr = rr_new;
  }
  return result;
}

}  // namespace scanlab::cg
