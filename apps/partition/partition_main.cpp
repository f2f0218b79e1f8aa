// scanlab-partition: partitions a dataset around a pivot on the GPU, single pass.
//
//   scanlab-partition                              three-way around the median, 2^24 uint32
//   scanlab-partition -i x.npy --pivot 0.5 -o parts.npy
//   scanlab-partition --ways 2 --pivot 1000 --stable
//   scanlab-partition --n 2^28 --validate --bench --json partition.json
//
// Three-way (default): out = [x < pivot | x == pivot | x > pivot]; two-way: out = [x < pivot |
// the rest]. The last part is in reverse input order unless --stable (see
// scanlab/algorithms/partition.cuh). Floats compare with NaNs above every number.
#include "partition/app_common.hpp"
#include "partition/partition_gpu.hpp"

#include "common/bench_report.hpp"
#include "common/cli.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace {

namespace io = scanlab::io;
namespace pa = scanlab::partition_app;

template <class T>
bool less_nan_last(const T& a, const T& b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return !std::isnan(a) && std::isnan(b);
  }
  return a < b;
}

// The pivot as one element of the data's dtype: parsed from text, or the data's (lower) median.
io::host_array make_pivot(const std::string& text, const io::host_array& data) {
  io::host_array pivot(data.type(), {1});
  pa::visit_supported(data.type(), [&]<class T>() {
    T value{};
    if (text == "median") {
      std::vector<T> copy(data.as<T>().begin(), data.as<T>().end());
      if (!copy.empty()) {
        const auto mid = copy.begin() + static_cast<std::ptrdiff_t>((copy.size() - 1) / 2);
        std::nth_element(copy.begin(), mid, copy.end(), less_nan_last<T>);
        value = *mid;
      }
    } else if (std::is_floating_point_v<T> && (text == "nan" || text == "NaN")) {
      value = static_cast<T>(NAN);
    } else {
      const char* end = text.data() + text.size();
      const auto [ptr, ec] = std::from_chars(text.data(), end, value);
      if (ec != std::errc() || ptr != end) {
        throw std::invalid_argument("--pivot '" + text + "' is not a " + std::string(io::name(data.type())) +
                                    " value (or 'median')");
      }
    }
    pivot.as<T>()[0] = value;
  });
  return pivot;
}

std::string pivot_text(const io::host_array& pivot) {
  return pa::visit_supported(pivot.type(), [&]<class T>() -> std::string {
    const T v = pivot.as<T>()[0];
    if constexpr (std::is_floating_point_v<T>) {
      char buffer[64];
      std::snprintf(buffer, sizeof buffer, "%.17g", static_cast<double>(v));
      return buffer;
    } else {
      return std::to_string(v);
    }
  });
}

}  // namespace

int main(int argc, char** argv) {
  scanlab::cli::app app("scanlab-partition",
                        "Partitions a dataset around a pivot on the GPU in one pass (decoupled look-back): three-way "
                        "(less | equal | greater) or two-way (less | the rest). Prints the counts, writes the "
                        "partitioned array (-o); --validate checks it against std::stable_partition, std::partition "
                        "and CUB's DevicePartition::If, --bench times it against CUB.",
                        {.dist = scanlab::gen::distribution::uniform, .n = std::int64_t{1} << 24,
                         .type = io::dtype::u32});
  CLI::App& parser = app.parser();
  std::string pivot_option = "median";
  int ways = 3;
  bool stable = false;
  parser.add_option("--pivot", pivot_option, "Pivot: a value of the data's dtype ('nan' for floats), or 'median'")
      ->capture_default_str();
  parser.add_option("--ways", ways, "3: less | equal | greater; 2: less | the rest")
      ->check(CLI::IsMember({2, 3}))
      ->capture_default_str();
  parser.add_flag("--stable", stable, "Keep the last part in input order too (one more pass over that part)");
  app.footer(
      "Data types: int32, uint32, int64, float32, float64. Floats: NaNs count as greater than every "
      "number.\nWithout --stable the last part (two-way: the rest, three-way: greater) is in REVERSE "
      "input order.");

  return app.run(argc, argv, [&] {
    const auto& o = app.options();
    io::host_array data = app.load_input();
    pa::require_supported(data.type());
    if (data.shape().size() > 1) spdlog::info("input is {}-D: partitioning its {} elements in C order", data.shape().size(), data.size());
    const io::host_array pivot = make_pivot(pivot_option, data);
    spdlog::info("pivot: {}{}", pivot_text(pivot), pivot_option == "median" ? " (the median)" : "");

    app.select_device();
    pa::partition_request request;
    request.ways = ways;
    request.stable = stable;
    request.validate = o.validate;
    request.bench = o.bench;
    request.production_only = o.production_only;
    request.repeat = o.repeat;
    request.dataset = app.dataset_name();
    if (o.bench) spdlog::info("benchmarking two-way and three-way partitions against CUB ({} runs each)", o.repeat);
    const pa::partition_report report = pa::visit_supported(data.type(), [&]<class T>() {
      return pa::run_partition<T>(data, pivot, request);
    });

    scanlab::app_report out = app.new_report();
    nlohmann::json& json = out.result();
    json["n"] = data.size();
    json["dtype"] = std::string(io::name(data.type()));
    json["pivot"] = pivot_text(pivot);
    json["ways"] = ways;
    json["stable"] = stable;
    if (ways == 3) {
      std::cout << "less    = " << report.counts[0] << "\nequal   = " << report.counts[1]
                << "\ngreater = " << report.counts[2] << '\n';
      json["counts"] = {{"less", report.counts[0]}, {"equal", report.counts[1]}, {"greater", report.counts[2]}};
    } else {
      std::cout << "selected (less than the pivot) = " << report.counts[0]
                << "\nrest                           = " << report.counts[1] << '\n';
      json["counts"] = {{"selected", report.counts[0]}, {"rest", report.counts[1]}};
    }
    if (o.validate) pa::report_checks(report.checks, out);
    if (o.bench) out.set_bench(app.print_bench(report.rows));
    app.write_output(report.output);
    return app.finish(out, "a validation failed (see the table)");
  });
}
