// scanlab-norms: dot product, sum of squares, RMS, Euclidean norm and RMS of a
// difference of arrays on the GPU, checked against a long double CPU reference, CUB and
// cuBLAS, and timed against them.
//
//   scanlab-norms                                   all five on 2^24 generated floats
//   scanlab-norms -i x.npy -y y.npy --what dot,rms-diff
//   scanlab-norms --n 2^28 --validate --bench --json norms.json
//   scanlab-norms --dtype float64 --what l2 --validate
//   scanlab-norms --accumulate double               float data, double accumulator
//
// Data types: float32 and float64 are used as they are; any other dtype (of a file or
// --dtype) is converted to float32, with a log line. A second array given with -y is
// converted to the first one's dtype. Without -y, dot and rms-diff use a generated
// second array: the same distribution, length and dtype, seed + 1.
#include "norms/norms_gpu.hpp"
#include "norms/norms_reference.hpp"

#include "common/bench_report.hpp"
#include "common/cli.hpp"
#include "common/dataset.hpp"
#include "common/generate.hpp"
#include "common/table.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using scanlab::norms_app::quantity;
namespace io = scanlab::io;

std::vector<quantity> parse_quantities(const std::string& text) {
  std::vector<quantity> out;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');) {
    if (item.empty()) continue;
    bool found = false;
    for (quantity q : scanlab::norms_app::all_quantities) {
      if (item == scanlab::norms_app::name(q)) {
        if (std::find(out.begin(), out.end(), q) == out.end()) out.push_back(q);
        found = true;
      }
    }
    if (!found) {
      throw std::invalid_argument("--what '" + item + "': choose from dot, sum-squares, rms, l2, rms-diff");
    }
  }
  if (out.empty()) throw std::invalid_argument("--what: no quantity given");
  return out;
}

// Shortest text that reads back as the same value of the result type.
std::string full_precision(double value, bool is_double) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*g", is_double ? 17 : 9, value);
  return buffer;
}

std::string scientific(double value) {
  if (std::isinf(value)) return "inf";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2e", value);
  return buffer;
}

// float32 and float64 stay as they are; other dtypes become float32 (logged).
io::host_array as_float(io::host_array array, const std::string& what) {
  if (io::is_float(array.type())) return array;
  spdlog::info("{}: converting {} to float32", what, io::name(array.type()));
  return io::convert(array, io::dtype::f32);
}

struct reference_value {
  long double value = 0;
  double bound = 0;  // the relative error a correct scanlab result stays within
};

// The long double reference of a quantity and the relative error bound for scanlab.
reference_value reference_of(quantity q, const io::host_array& x, const io::host_array* y, double eps) {
  namespace ref = scanlab::norms_ref;
  const std::int64_t n = x.size();
  return io::visit(x.type(), [&]<class T>() -> reference_value {
    if constexpr (!std::is_floating_point_v<T>) {
      throw std::logic_error("reference: float data expected");
    } else {
      const std::span<const T> xs = x.as<T>();
      const std::span<const T> ys = y != nullptr ? y->as<T>() : xs;
      ref::reference_sum sum;
      switch (q) {
        case quantity::dot: sum = ref::dot(xs, ys); break;
        case quantity::rms_diff: sum = ref::sum_squared_differences(xs, ys); break;
        default: sum = ref::sum_squares(xs); break;
      }
      const double bound_abs = ref::sum_error_bound(n, eps, sum.abs_sum);
      const double sum_rel = sum.value != 0 ? bound_abs / std::fabs(static_cast<double>(sum.value)) : 0.0;
      switch (q) {
        case quantity::dot:
        case quantity::sum_squares: return {sum.value, sum_rel + eps};
        case quantity::l2: return {std::sqrt(sum.value), 0.5 * sum_rel + 4 * eps};
        case quantity::rms:
        case quantity::rms_diff: return {ref::root_mean(sum.value, n), 0.5 * sum_rel + 4 * eps};
      }
      return {};
    }
  });
}

}  // namespace

int main(int argc, char** argv) {
  scanlab::cli::app app("scanlab-norms",
                        "Dot product, sum of squares, RMS, Euclidean norm (scaled, like BLAS nrm2) and RMS of a "
                        "difference on the GPU: one deterministic pass each, checked against a long double CPU "
                        "reference, CUB and cuBLAS (--validate) and timed against them (--bench).");
  CLI::App& parser = app.parser();
  std::string second;
  std::string what_text = "dot,sum-squares,rms,l2,rms-diff";
  std::string accumulate = "native";
  parser.add_option("-y,--second", second,
                    "Second array, for dot and rms-diff (converted to the first one's dtype; default: generated "
                    "like the first with seed + 1)")
      ->check(CLI::ExistingFile);
  parser.add_option("--what", what_text, "Quantities, comma-separated: dot, sum-squares, rms, l2, rms-diff")
      ->capture_default_str();
  parser.add_option("--accumulate", accumulate,
                    "Accumulator for float32 data: native (float32) or double (float64 data always uses double)")
      ->check(CLI::IsMember({"native", "double"}))
      ->capture_default_str();
  app.footer(
      "Other dtypes are converted to float32. n = 0 gives dot = sum-squares = l2 = 0 and rms = "
      "rms-diff = NaN.",
      "lengths differ, a validation failed");

  return app.run(argc, argv, [&] {
    const auto& o = app.options();
    if (!o.output.empty()) spdlog::warn("-o {} is not used: scanlab-norms writes its results with --json", o.output);
    const std::vector<quantity> quantities = parse_quantities(what_text);
    const bool needs_second =
        std::any_of(quantities.begin(), quantities.end(), scanlab::norms_app::two_inputs);

    // Inputs first: a bad file or a length mismatch is reported before the GPU is touched.
    io::host_array x = as_float(app.load_input(), "x");
    const std::string x_name = o.input.empty() ? "x (generated)" : "x (" + o.input + ")";
    std::optional<io::host_array> y;
    std::string y_name;
    if (!second.empty() && !needs_second) {
      spdlog::warn("-y {} is not used by {}", second, what_text);
    }
    if (needs_second) {
      if (!second.empty()) {
        y = app.load_file(second);
        y_name = "y (" + second + ")";
        if (y->type() != x.type()) {
          spdlog::info("y: converting {} to {}", io::name(y->type()), io::name(x.type()));
          *y = io::convert(*y, x.type(), second);
        }
      } else {
        scanlab::gen::spec spec;
        if (!o.generate.empty()) {
          if (auto dist = scanlab::gen::parse_distribution(o.generate)) spec.dist = *dist;
        }
        spec.seed = o.seed + 1;
        y = scanlab::gen::generate_array(spec, x.type(), x.size());
        y_name = "y (generated, seed " + std::to_string(spec.seed) + ")";
        spdlog::info("y: {} generated {} x {} (seed {})", scanlab::gen::name(spec.dist), x.size(),
                     io::name(x.type()), spec.seed);
      }
      if (y->size() != x.size()) {
        throw std::runtime_error("dot and rms-diff need two arrays of the same length: " + x_name + " has " +
                                 std::to_string(x.size()) + " elements, " + y_name + " has " +
                                 std::to_string(y->size()));
      }
    }
    if (x.shape().size() > 1) spdlog::info("x is {}-D: using its {} elements in C order", x.shape().size(), x.size());

    app.select_device();
    scanlab::norms_app::gpu_request request;
    request.quantities = quantities;
    request.accumulate_double = accumulate == "double" || x.type() == io::dtype::f64;
    request.compare = o.validate;
    request.bench = o.bench;
    request.repeat = o.repeat;
    request.dataset = app.dataset_name();
    const auto report = scanlab::norms_app::run_gpu(x, y ? &*y : nullptr, request);
    const bool is_double = report.result_is_double;

    scanlab::app_report out = app.new_report();
    nlohmann::json& json = out.result();
    json["n"] = x.size();
    json["dtype"] = std::string(io::name(x.type()));
    json["accumulator"] = is_double ? "float64" : "float32";
    json["input"] = x_name;
    json["second"] = y ? nlohmann::json(y_name) : nlohmann::json();
    json["values"] = nlohmann::json::object();

    // The values, full precision.
    for (const auto& v : report.values) {
      const double value = v.methods.front().value;
      std::cout << std::string(scanlab::norms_app::name(v.q)) << std::string(12 - scanlab::norms_app::name(v.q).size(), ' ')
                << "= " << full_precision(value, is_double) << '\n';
      json["values"][std::string(scanlab::norms_app::name(v.q))] = value;
    }

    if (o.validate) {
      const double eps = is_double ? std::numeric_limits<double>::epsilon() : std::numeric_limits<float>::epsilon();
      scanlab::text_table table({"quantity", "method", "value", "rel. error", "check"});
      nlohmann::json compared = nlohmann::json::array();  // CUB's and cuBLAS's values, shown, not judged
      for (const auto& v : report.values) {
        const reference_value ref = reference_of(v.q, x, y ? &*y : nullptr, eps);
        const std::string qname(scanlab::norms_app::name(v.q));
        table.add_row({qname, "CPU long double (compensated)", full_precision(static_cast<double>(ref.value), true),
                       "", ""});
        for (const auto& m : v.methods) {
          const double err = scanlab::norms_ref::relative_error(m.value, ref.value);
          std::string check;
          if (m.method == "scanlab") {
            const bool ok = err <= ref.bound;
            check = ok ? "pass (bound " + scientific(ref.bound) + ")" : "FAIL (bound " + scientific(ref.bound) + ")";
            out.add({"CPU long double (compensated)", ok,
                     qname + ": relative error " + scientific(err) + ", bound " + scientific(ref.bound) +
                         ", reference " + full_precision(static_cast<double>(ref.value), true),
                     err});
          } else {
            compared.push_back({{"quantity", qname}, {"method", m.method}, {"how", m.how}, {"value", m.value},
                                {"relative_error", err}});
          }
          table.add_row({qname, m.how.empty() ? m.method : m.method + ": " + m.how, full_precision(m.value, is_double),
                         scientific(err), check});
        }
      }
      std::cout << '\n';
      table.print(std::cout);
      json["compared"] = compared;
    }

    if (o.bench) {
      scanlab::bench::report bench = app.print_bench(report.rows);
      const auto& rows = bench.rows;
      // scanlab against the faster of CUB and cuBLAS, per quantity.
      scanlab::text_table summary({"quantity", "scanlab", "CUB", "cuBLAS", "scanlab vs faster"});
      for (std::size_t i = 0; i + 2 < rows.size(); i += 3) {
        const double ours = rows[i].time.median_ms;
        const double cub = rows[i + 1].time.median_ms;
        const double blas = rows[i + 2].time.median_ms;
        summary.add_row({rows[i].suite, scanlab::format_time_ms(ours), scanlab::format_time_ms(cub),
                         scanlab::format_time_ms(blas), scanlab::format_fixed(std::min(cub, blas) / ours, 3) + "x"});
      }
      std::cout << '\n';
      summary.print(std::cout);
      std::cout << "'scanlab vs faster' > 1 means scanlab is faster than both CUB and cuBLAS.\n";
      out.set_bench(std::move(bench));
    }
    return app.finish(out, "a result is outside its error bound (see the check column)");
  });
}
