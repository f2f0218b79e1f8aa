// scanlab-jacobi: Jacobi iterations for the 3-D Laplace equation on an N^3 grid, stopped
// when the RMS change of a sweep (scanlab::rms_diff of the two buffers) falls below --tol.
//
//   scanlab-jacobi                                 N = 256, float32, harmonic boundary
//   scanlab-jacobi --n 128 --dtype float64 --tol 1e-9
//   scanlab-jacobi --n 48 --validate              the same sweeps on the CPU, fields compared
//   scanlab-jacobi --n 512 --max-iters 200 --bench
//
// On a terminal, a run that takes more than half a second shows its progress on stderr at
// each check (sweeps, RMS change, elapsed time; four updates a second, cleared at the end).
//
// The problem (see jacobi/jacobi.hpp): fixed boundary values on the six faces of the unit
// cube, interior 0 at the start; --boundary harmonic (u = x^2 - y^2 + z, the default:
// also the exact discrete solution, so the error is reported), ones (u = 1: the solution
// is 1), face (u = 1 on z = 0, 0 elsewhere). There is no input file: the app takes no
// -i; --n is the grid edge N (N^3 points, the boundary included), not an element count.
#include "jacobi/jacobi.hpp"
#include "jacobi/jacobi_gpu.hpp"

#include "common/bench_report.hpp"
#include "common/cli.hpp"
#include "common/progress.hpp"
#include "common/table.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace jacobi = scanlab::jacobi;

std::string sci(double v, int digits = 3) {
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.*e", digits, v);
  return buffer;
}

constexpr std::int64_t max_validate_edge = 64;

}  // namespace

int main(int argc, char** argv) {
  scanlab::cli::app app("scanlab-jacobi",
                        "Jacobi iterations for the 3-D Laplace equation on an N^3 grid with fixed boundary values, "
                        "stopped when the RMS change of a sweep (scanlab::rms_diff) falls below --tol.",
                        {}, /*dataset_options=*/false);
  CLI::App& parser = app.parser();
  std::int64_t n = 256;
  std::string dtype_text = "float32";
  std::string boundary_text = "harmonic";
  double tol = 1e-6;
  int max_iters = 100000;
  int check_every = 10;
  bool validate = false;
  bool bench = false;
  std::string input;  // not accepted: a hidden option, so that -i gets a clear message
  parser.add_option("-i,--input", input)->group("");
  parser.add_option("--n", n, "Grid edge N: N^3 points, the boundary included")
      ->check(CLI::Range(std::int64_t{3}, std::int64_t{4096}))
      ->capture_default_str();
  parser.add_option("--dtype", dtype_text, "Field type: float32 or float64")
      ->check(CLI::IsMember({"float32", "float64", "float", "double", "f32", "f64"}))
      ->capture_default_str();
  parser.add_option("--boundary", boundary_text,
                    "Boundary values: harmonic (u = x^2 - y^2 + z, also the exact solution), ones (u = 1), "
                    "face (u = 1 on z = 0, else 0)")
      ->check(CLI::IsMember({"harmonic", "ones", "face"}))
      ->capture_default_str();
  parser.add_option("--tol", tol, "Stop when the RMS change of a sweep over all N^3 points falls below this")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  parser.add_option("--max-iters", max_iters, "Sweep limit")->check(CLI::Range(1, 100000000))->capture_default_str();
  parser.add_option("--check-every", check_every, "Sweeps between RMS-change checks (each costs one rms_diff)")
      ->check(CLI::Range(1, 100000000))
      ->capture_default_str();
  parser.add_flag("--validate", validate,
                  "Run the same number of sweeps on the CPU and compare the fields (N <= 64 only)");
  parser.add_flag("--bench", bench, "Time one sweep and one rms_diff alone (median of --repeat, L2 flushed)");
  parser.footer(
      "No input file: the grid is generated. Exit codes: 0 success (also when --max-iters is reached first: a "
      "warning says so), 1 error or validation failure, 2 bad command line (also --validate with N > 64), 3 no "
      "usable GPU.");

  return app.run(argc, argv, [&] {
    if (!input.empty()) {
      throw std::invalid_argument("scanlab-jacobi takes no input file (-i " + input +
                                  "): the grid is generated; choose it with --n, --boundary and --dtype");
    }
    if (validate && n > max_validate_edge) {
      throw std::invalid_argument("--validate runs the same sweeps on the CPU: use --n " +
                                  std::to_string(max_validate_edge) + " or less (not " + std::to_string(n) + ")");
    }
    jacobi::gpu_options options;
    options.use_double = dtype_text == "float64" || dtype_text == "double" || dtype_text == "f64";
    options.n = n;
    options.bc = *jacobi::parse_boundary(boundary_text);
    options.tol = tol;
    options.max_iters = max_iters;
    options.check_every = check_every;
    const std::string type = options.use_double ? "float64" : "float32";
    // The error against the exact solution needs the field on the host: up to 2^27 points.
    constexpr std::int64_t max_error_points = std::int64_t{1} << 27;
    const bool has_exact = options.bc != jacobi::boundary::face && n * n * n <= max_error_points;
    const std::int64_t points = n * n * n;
    const double bytes_per_point = options.use_double ? 8.0 : 4.0;
    spdlog::info("grid {}^3 = {} points ({} MB per buffer), {}, boundary {}", n, points,
                 static_cast<std::int64_t>(static_cast<double>(points) * bytes_per_point / 1e6), type, boundary_text);

    if (options.bc != jacobi::boundary::face && !has_exact) {
      spdlog::info("the error against the exact solution is not computed above 2^27 points (N > 512)");
    }
    app.select_device();
    jacobi::gpu_result result;
    {
      // On a terminal, long runs show where they are, at each check: sweeps, RMS change, time.
      scanlab::cli::status_line line("scanlab-jacobi", spdlog::should_log(spdlog::level::info));
      result = jacobi::run_gpu(options, validate || has_exact, [&](int iterations, double rms_change) {
        if (!line.due()) return;
        line.show("sweep " + std::to_string(iterations) + " of at most " + std::to_string(max_iters) +
                  ", RMS change " + sci(rms_change, 2) + " (tol " + sci(tol, 1) + "), " +
                  scanlab::format_fixed(line.elapsed_seconds(), 1) + " s");
      });
    }
    const double sweep_gbps =
        result.time_ms > 0 ? 2.0 * static_cast<double>(points) * bytes_per_point * result.iterations / (result.time_ms * 1e6)
                           : 0.0;
    std::cout << "grid              " << n << "^3 (" << points << " points), " << type << ", boundary " << boundary_text
              << "\n"
              << "iterations        " << result.iterations
              << (result.converged ? " (converged)" : " (NOT converged: --max-iters reached)") << "\n"
              << "RMS change        " << sci(result.rms_change) << " (tol " << sci(tol, 1) << ", checked every "
              << check_every << " sweeps)\n"
              << "time              " << scanlab::format_time_ms(result.time_ms) << " ("
              << scanlab::format_time_ms(result.time_ms / std::max(result.iterations, 1)) << " per sweep, "
              << scanlab::format_fixed(sweep_gbps, 0) << " GB/s of stencil traffic counting 2 N^3 elements per sweep, "
              << "checks included)\n";
    scanlab::app_report out = app.new_report();
    nlohmann::json& json = out.result();
    json = {{"n", n},
                           {"points", points},
                           {"dtype", type},
                           {"boundary", boundary_text},
                           {"tol", tol},
                           {"check_every", check_every},
                           {"iterations", result.iterations},
                           {"converged", result.converged},
                           {"rms_change", result.rms_change},
                           {"time_ms", result.time_ms},
                           {"stencil_gbps", sweep_gbps},
                           {"max_error_vs_exact", nullptr}};
    if (!result.converged) spdlog::warn("the RMS change is still {} after {} sweeps", result.rms_change, max_iters);

    if (has_exact) {
      double worst = 0;
      for (std::int64_t k = 0; k < n; ++k) {
        for (std::int64_t j = 0; j < n; ++j) {
          for (std::int64_t i = 0; i < n; ++i) {
            const double exact = *jacobi::exact_value(options.bc, n, i, j, k);
            worst = std::max(worst, std::fabs(result.field[static_cast<std::size_t>(i + n * (j + n * k))] - exact));
          }
        }
      }
      std::cout << "max |u - exact|   " << sci(worst)
                << " (the iteration's distance from the exact discrete solution)\n";
      json["max_error_vs_exact"] = worst;
    }

    if (validate) {
      std::vector<double> cpu;
      if (options.use_double) {
        const auto f = jacobi::iterate_cpu<double>(n, options.bc, result.iterations);
        cpu.assign(f.begin(), f.end());
      } else {
        const auto f = jacobi::iterate_cpu<float>(n, options.bc, result.iterations);
        cpu.assign(f.begin(), f.end());
      }
      double worst = 0, scale = 1;
      std::int64_t equal = 0;
      for (std::size_t p = 0; p < cpu.size(); ++p) {
        worst = std::max(worst, std::fabs(result.field[p] - cpu[p]));
        scale = std::max(scale, std::fabs(cpu[p]));
        equal += result.field[p] == cpu[p] ? 1 : 0;
      }
      // Both sides add the six neighbours in the same order in the same type and multiply
      // by the same rounded 1/6: the fields should agree to the bit. The bound allows a few
      // ulps in case a compiler contracts or reorders differently.
      const double eps = options.use_double ? std::numeric_limits<double>::epsilon()
                                            : static_cast<double>(std::numeric_limits<float>::epsilon());
      const double bound = 8 * eps * scale;
      const bool ok = worst <= bound;
      std::cout << "\nvalidation        " << result.iterations << " sweeps on the CPU: max |u_gpu - u_cpu| = "
                << sci(worst) << " (bound 8 eps max|u| = " << sci(bound, 1) << "), " << equal << " of " << cpu.size()
                << " points bitwise equal: " << (ok ? "pass" : "FAIL") << "\n";
      out.add({"CPU iteration (" + std::to_string(result.iterations) + " sweeps)", ok,
               "max |u_gpu - u_cpu| = " + sci(worst) + " (bound 8 eps max|u| = " + sci(bound, 1) + "), " +
                   std::to_string(equal) + " of " + std::to_string(cpu.size()) + " points bitwise equal",
               worst});
      if (!ok) std::cerr << "scanlab-jacobi: the GPU field differs from the CPU iteration\n";
    }

    if (bench) {
      const jacobi::gpu_timings t = jacobi::bench_gpu(options, app.options().repeat);
      // bytes: 2 N^3 elements, each point read once and written once, or both buffers read once.
      const auto row = [&](const std::string& variant, const scanlab::bench::timing& time, double bytes,
                           scanlab::bench::ceiling bound) {
        return scanlab::bench::result{.suite = "jacobi", .variant = variant, .type = type,
                                      .dataset = "Laplace " + std::to_string(n) + "^3, " + boundary_text,
                                      .n = points, .bytes = bytes, .bound = bound, .time = time, .baseline_ms = std::nullopt};
      };
      scanlab::bench::report report = app.bench_report(
          {row("sweep (7-point stencil)", t.sweep, t.sweep_bytes, scanlab::bench::ceiling::memcpy),
           row("rms_diff of the two buffers", t.rms_diff, t.rms_diff_bytes, scanlab::bench::ceiling::read)});
      std::cout << '\n';
      scanlab::bench::print(std::cout, report);
      std::cout << "GB/s counts 2 N^3 elements per kernel; no CUB counterpart.\n";
      out.set_bench(std::move(report));
    }
    return app.finish(out);
  });
}
