// scanlab-cg: conjugate gradients on the GPU for a sparse symmetric positive definite
// system, with scanlab's dot products and norms.
//
//   scanlab-cg                                   the 3-D Poisson matrix on a 64^3 grid, double
//   scanlab-cg --poisson2d 1024 --dtype float32
//   scanlab-cg -i matrix.mtx --rhs b.npy --tol 1e-10 --validate
//   scanlab-cg --poisson3d 128 --bench --json cg.json
//
// On a terminal, a solve that takes more than half a second shows its progress on stderr
// (iteration, ||r|| / ||b||, elapsed time; four updates a second, cleared at the end).
//
// The matrix: -i FILE.mtx (Matrix Market coordinate real/integer/pattern, general or
// symmetric; see cg/mtx.hpp), or --poisson2d N / --poisson3d N (the 5- and 7-point
// Laplacians of an N^2 or N^3 grid). The right-hand side: --rhs FILE (any dataset format
// of the other apps, converted to float64), or by default b = A * ones, so that the exact
// solution is all ones and the report gives the largest error against it.
// Inputs are read and checked before the GPU is touched.
#include "cg/cg_cpu.hpp"
#include "cg/cg_gpu.hpp"
#include "cg/mtx.hpp"
#include "cg/sparse.hpp"

#include "common/bench_report.hpp"
#include "common/cli.hpp"
#include "common/progress.hpp"
#include "common/table.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace cg = scanlab::cg;
namespace sparse = scanlab::sparse;

std::string sci(double v, int digits = 3) {
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.*e", digits, v);
  return buffer;
}

double max_abs_difference(std::span<const double> a, std::span<const double> b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]));
  return worst;
}

double max_abs(std::span<const double> a) {
  double worst = 0;
  for (double v : a) worst = std::max(worst, std::fabs(v));
  return worst;
}

double norm2(std::span<const double> a) {
  double s = 0;
  for (double v : a) s += v * v;
  return std::sqrt(s);
}

}  // namespace

int main(int argc, char** argv) {
  scanlab::cli::app app("scanlab-cg",
                        "Conjugate gradients on the GPU for a sparse symmetric positive definite system (Matrix "
                        "Market file or a generated Poisson matrix), with scanlab's dot products and norms.",
                        {}, /*dataset_options=*/false);
  CLI::App& parser = app.parser();
  std::string matrix_file;
  std::string rhs_file;
  std::int64_t poisson2d = 0;
  std::int64_t poisson3d = 0;
  std::string dtype_text = "float64";
  std::optional<double> tol;
  int max_iters = 10000;
  std::string spmv_text = "auto";
  bool validate = false;
  bool bench = false;
  auto* input = parser.add_option("-i,--input", matrix_file, "Matrix Market file (.mtx, coordinate)")
                    ->check(CLI::Validator(
                        [](std::string& path) {
                          return path == "-" ? "the matrix is read from a file, not from standard input"
                                             : CLI::ExistingFile(path);
                        },
                        "FILE"));
  auto* p2 = parser.add_option("--poisson2d", poisson2d, "Generate the 5-point Laplacian of an N x N grid (N^2 rows)")
                 ->check(CLI::Range(std::int64_t{1}, std::int64_t{46340}));
  auto* p3 = parser.add_option("--poisson3d", poisson3d,
                               "Generate the 7-point Laplacian of an N x N x N grid (N^3 rows; default: 64)")
                 ->check(CLI::Range(std::int64_t{1}, std::int64_t{1290}));
  input->excludes(p2)->excludes(p3);
  p2->excludes(p3);
  parser.add_option("--rhs", rhs_file, "Right-hand side b: .npy or text (.txt/.csv), one value per row, converted to float64 (default: b = A * ones)")
      ->check(CLI::ExistingFile);
  parser.add_option("--dtype", dtype_text, "Vector and matrix type on the GPU: float32 or float64")
      ->check(CLI::IsMember({"float32", "float64", "float", "double", "f32", "f64"}))
      ->capture_default_str();
  parser.add_option("--tol", tol, "Stop when ||r|| / ||b|| <= tol (default: 1e-8 for float64, 1e-5 for float32)")
      ->check(CLI::PositiveNumber);
  parser.add_option("--max-iters", max_iters, "Iteration limit")->check(CLI::Range(1, 100000000))->capture_default_str();
  parser.add_option("--spmv", spmv_text, "SpMV kernel: auto (warp per row above 16 nonzeros per row), thread, warp")
      ->check(CLI::IsMember({"auto", "thread", "warp"}))
      ->capture_default_str();
  parser.add_flag("--validate", validate,
                  "Also solve on the CPU (double) and compare iteration counts and solutions");
  parser.add_flag("--bench", bench, "Time the GPU solve (median of --repeat solves) and its parts");
  parser.footer(
      "Exit codes: 0 converged (and validated, with --validate), 1 error (bad file, breakdown: the matrix is not "
      "SPD, no convergence within --max-iters, validation failed), 2 bad command line, 3 no usable GPU.");

  return app.run(argc, argv, [&] {
    const bool use_double = dtype_text == "float64" || dtype_text == "double" || dtype_text == "f64";
    const double tolerance = tol ? *tol : (use_double ? 1e-8 : 1e-5);

    // The matrix and b, on the host, checked before the GPU is touched.
    sparse::csr_matrix a;
    std::string source;
    const auto t0 = std::chrono::steady_clock::now();
    if (!matrix_file.empty()) {
      a = scanlab::mtx::read_mtx(matrix_file);
      source = matrix_file;
    } else if (poisson2d > 0) {
      a = sparse::poisson2d(poisson2d);
      source = "poisson2d " + std::to_string(poisson2d);
    } else {
      const std::int64_t edge = poisson3d > 0 ? poisson3d : 64;
      a = sparse::poisson3d(edge);
      source = "poisson3d " + std::to_string(edge);
    }
    if (a.rows != a.cols) {
      throw std::runtime_error(source + ": CG needs a square matrix, not " + std::to_string(a.rows) + " x " +
                               std::to_string(a.cols));
    }
    const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    spdlog::info("matrix: {}: {} rows, {} nonzeros ({:.1f} per row), read in {:.2f} s", source, a.rows, a.nnz(),
                 a.rows > 0 ? static_cast<double>(a.nnz()) / static_cast<double>(a.rows) : 0.0, load_s);
    if (!matrix_file.empty() && !sparse::is_symmetric(a)) {
      spdlog::warn("{}: the matrix is not symmetric: CG may fail to converge", matrix_file);
    }
    std::vector<double> b;
    const bool ones_solution = rhs_file.empty();
    if (ones_solution) {
      const std::vector<double> ones(static_cast<std::size_t>(a.rows), 1.0);
      b = sparse::multiply(a, ones);
      spdlog::info("b = A * ones (the exact solution is all ones)");
    } else {
      const scanlab::io::host_array rhs = app.load_file(rhs_file, scanlab::io::dtype::f64);
      if (rhs.size() != a.rows) {
        throw std::runtime_error("--rhs " + rhs_file + " has " + std::to_string(rhs.size()) + " values; the matrix has " +
                                 std::to_string(a.rows) + " rows");
      }
      const auto values = rhs.as<double>();
      b.assign(values.begin(), values.end());
    }

    app.select_device();
    cg::gpu_options options;
    options.use_double = use_double;
    options.tol = tolerance;
    options.max_iters = max_iters;
    options.spmv = spmv_text == "thread" ? cg::spmv_kind::thread_per_row
                   : spmv_text == "warp" ? cg::spmv_kind::warp_per_row
                                         : cg::spmv_kind::automatic;
    cg::gpu_solver solver(a, b, options);
    cg::gpu_result result;
    {
      // On a terminal, long solves show where they are: iteration, residual, time.
      scanlab::cli::status_line line("scanlab-cg", spdlog::should_log(spdlog::level::info));
      result = solver.solve([&](int iteration, double relative_residual) {
        if (!line.due()) return;
        line.show("iteration " + std::to_string(iteration) + " of at most " + std::to_string(max_iters) +
                  ", ||r|| / ||b|| " + sci(relative_residual, 2) + " (tol " + sci(tolerance, 1) + "), " +
                  scanlab::format_fixed(line.elapsed_seconds(), 1) + " s");
      });
    }

    const std::string type = use_double ? "float64" : "float32";
    std::cout << "matrix            " << source << " (" << a.rows << " rows, " << a.nnz() << " nonzeros)\n"
              << "precision         " << type << " (dot products accumulated in float64); SpMV "
              << solver.spmv_used() << "\n"
              << "iterations        " << result.iterations << (result.converged ? " (converged)" : " (NOT converged)")
              << "\n"
              << "||r|| / ||b||     " << sci(result.relative_residual) << " (recurrence; tol " << sci(tolerance, 1)
              << ")\n"
              << "||b - Ax|| / ||b||" << " " << sci(result.true_relative_residual) << " (true residual)\n";
    double max_error = 0;
    if (ones_solution) {
      const std::vector<double> ones(static_cast<std::size_t>(a.rows), 1.0);
      max_error = max_abs_difference(result.x, ones);
      std::cout << "max |x - 1|       " << sci(max_error) << "\n";
    }
    std::cout << "time              " << scanlab::format_time_ms(result.solve_ms) << " (one solve, "
              << (result.iterations > 0 ? scanlab::format_time_ms(result.solve_ms / result.iterations) : "-")
              << " per iteration)\n";

    scanlab::app_report out = app.new_report();
    nlohmann::json& json = out.result();
    json = {{"matrix", source},
                           {"rows", a.rows},
                           {"nonzeros", a.nnz()},
                           {"dtype", type},
                           {"spmv", solver.spmv_used()},
                           {"tol", tolerance},
                           {"iterations", result.iterations},
                           {"converged", result.converged},
                           {"relative_residual", result.relative_residual},
                           {"true_relative_residual", result.true_relative_residual},
                           {"solve_ms", result.solve_ms},
                           {"max_error_vs_ones", ones_solution ? nlohmann::json(max_error) : nlohmann::json()},
                           {"breakdown", result.breakdown.empty() ? nlohmann::json() : nlohmann::json(result.breakdown)}};

    bool ok = result.converged;
    if (!result.breakdown.empty()) {
      std::cerr << "scanlab-cg: CG broke down (" << result.breakdown
                << "): is the matrix symmetric positive definite?\n";
    } else if (!result.converged) {
      spdlog::warn("no convergence within {} iterations", max_iters);
    }

    if (validate) {
      const auto c0 = std::chrono::steady_clock::now();
      const cg::cg_result cpu = cg::cg_cpu(a, b, tolerance, max_iters);
      const double cpu_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
      // The GPU solution's true residual, recomputed on the CPU in double.
      const std::vector<double> ax = sparse::multiply(a, result.x);
      std::vector<double> residual(b.size());
      for (std::size_t i = 0; i < b.size(); ++i) residual[i] = b[i] - ax[i];
      const double b_norm = norm2(b);
      const double cpu_check = b_norm > 0 ? norm2(residual) / b_norm : 0.0;
      const double x_diff = max_abs_difference(result.x, cpu.x);
      const double x_scale = std::max(max_abs(cpu.x), 1e-300);
      // Iterations: double GPU runs follow the CPU closely (the rounding of a few dot
      // products differs); float32 ones drift more. The true residual may exceed tol by
      // the rounding of the float32 vectors, never by much more.
      const int it_slack = use_double ? std::max(2, cpu.iterations / 20) : std::max(5, cpu.iterations / 4);
      const bool it_ok = std::abs(result.iterations - cpu.iterations) <= it_slack;
      const double residual_allowed = use_double ? 10 * tolerance : 10 * tolerance + 1e-5;
      const bool residual_ok = cpu_check <= residual_allowed;
      const bool valid = it_ok && residual_ok && cpu.converged == result.converged;
      scanlab::text_table table({"check", "GPU", "CPU (float64)", "result"});
      table.add_row({"iterations", std::to_string(result.iterations), std::to_string(cpu.iterations),
                     it_ok ? "pass (within " + std::to_string(it_slack) + ")" : "FAIL"});
      table.add_row({"||b - Ax|| / ||b|| (on the CPU)", sci(cpu_check), sci(cpu.relative_residual),
                     residual_ok ? "pass (<= " + sci(residual_allowed, 1) + ")" : "FAIL"});
      table.add_row({"max |x_gpu - x_cpu| / max |x_cpu|", sci(x_diff / x_scale), "", ""});
      std::cout << '\n';
      table.print(std::cout);
      std::cout << "CPU solve: " << scanlab::format_fixed(cpu_s, 3) << " s\n";
      out.add({"CPU CG (float64)", it_ok && cpu.converged == result.converged,
               "iterations: GPU " + std::to_string(result.iterations) + ", CPU " + std::to_string(cpu.iterations) +
                   " (within " + std::to_string(it_slack) + "); converged: GPU " + (result.converged ? "yes" : "no") +
                   ", CPU " + (cpu.converged ? "yes" : "no") + "; max |x_gpu - x_cpu| / max |x_cpu| = " +
                   sci(x_diff / x_scale),
               x_diff / x_scale});
      out.add({"residual recomputed on the CPU", residual_ok,
               "||b - A x_gpu|| / ||b|| = " + sci(cpu_check) + " (allowed " + sci(residual_allowed, 1) +
                   "; the CPU solve's own: " + sci(cpu.relative_residual) + ")",
               cpu_check});
      if (!valid) std::cerr << "scanlab-cg: validation failed (see the table)\n";
    }

    if (bench) {
      const cg::gpu_timings t = solver.bench(app.options().repeat);
      const double it = std::max(t.iterations, 1);
      const double solve_ms = t.solve.median_ms;
      const double spmv_share = it * t.spmv.median_ms / solve_ms;
      const double dot_share = 2 * it * t.dot.median_ms / solve_ms;
      const double update_share = it * t.update.median_ms / solve_ms;
      const double vector_bytes = static_cast<double>(a.rows) * (use_double ? 8.0 : 4.0);
      const auto row = [&](const std::string& variant, const scanlab::bench::timing& time, double bytes,
                           scanlab::bench::ceiling bound) {
        return scanlab::bench::result{.suite = "cg", .variant = variant, .type = type, .dataset = source,
                                      .n = a.rows, .bytes = bytes, .bound = bound, .time = time, .baseline_ms = std::nullopt};
      };
      scanlab::bench::report report = app.bench_report({
          row("solve", t.solve, 0, scanlab::bench::ceiling::none),
          row("spmv (" + t.spmv_used + ")", t.spmv, t.spmv_bytes, scanlab::bench::ceiling::memcpy),
          row("dot", t.dot, 2 * vector_bytes, scanlab::bench::ceiling::read),
          // x += alpha p, r -= alpha Ap (x, r, p, Ap read; x, r written), then p = r + beta p
          // (r, p read; p written): nine vectors moved.
          row("vector updates", t.update, 9 * vector_bytes, scanlab::bench::ceiling::memcpy),
      });
      std::cout << '\n';
      scanlab::bench::print(std::cout, report);
      scanlab::text_table table({"part", "per solve", "share"});
      table.add_row({"SpMV (" + t.spmv_used + ")", scanlab::format_time_ms(it * t.spmv.median_ms),
                     scanlab::format_fixed(100 * spmv_share, 1) + "%"});
      table.add_row({"dot products (2 per iteration)", scanlab::format_time_ms(2 * it * t.dot.median_ms),
                     scanlab::format_fixed(100 * dot_share, 1) + "%"});
      table.add_row({"vector updates", scanlab::format_time_ms(it * t.update.median_ms),
                     scanlab::format_fixed(100 * update_share, 1) + "%"});
      table.add_row({"rest (convergence checks, launches)", "",
                     scanlab::format_fixed(100 * (1 - spmv_share - dot_share - update_share), 1) + "%"});
      std::cout << '\n';
      table.print(std::cout);
      std::cout << "solve: one whole solve per run (" << t.iterations << " iterations); the parts timed alone on the "
                << "solver's vectors (L2 not flushed, as within a solve); share = their time per solve over the "
                << "solve's median.\n";
      out.set_bench(std::move(report));
    }
    return app.finish(out, "", ok);
  });
}
