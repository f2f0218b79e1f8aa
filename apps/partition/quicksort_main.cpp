// scanlab-quicksort: sorts a dataset on the GPU with scanlab's quicksort (each level splits
// every segment three ways around each of 31 sampled pivots; small segments merge-sorted in
// shared memory).
//
//   scanlab-quicksort                                2^24 uniform uint32
//   scanlab-quicksort -i keys.npy -o sorted.npy
//   scanlab-quicksort --pairs --indices order.npy    also the permutation (argsort)
//   scanlab-quicksort --n 2^28 --generate few-unique --validate --bench
#include "partition/app_common.hpp"
#include "partition/partition_gpu.hpp"

#include "common/bench.hpp"
#include "common/cli.hpp"
#include "common/dataset.hpp"

#include <spdlog/spdlog.h>

#include <cstdint>
#include <iostream>
#include <limits>
#include <stdexcept>
#include <string>

namespace {
namespace io = scanlab::io;
namespace pa = scanlab::partition_app;
}  // namespace

int main(int argc, char** argv) {
  scanlab::cli::app app("scanlab-quicksort",
                        "Sorts a dataset on the GPU with scanlab's quicksort: 31 pivots per segment from 512 samples, "
                        "every large segment split three ways around each pivot at once (63 buckets, all segments "
                        "of a level in one pass), small segments merge-sorted by one block in shared memory. Writes the sorted keys (-o); --validate checks them against std::sort "
                        "and CUB's radix sort, --bench times them against CUB, thrust::sort (and std::sort with --cpu).",
                        {.dist = scanlab::gen::distribution::uniform, .n = std::int64_t{1} << 24,
                         .type = io::dtype::u32});
  CLI::App& parser = app.parser();
  bool pairs = false;
  bool cpu = false;
  std::string indices_path;
  std::int64_t leaf = 0;
  parser.add_flag("--pairs", pairs, "Sort (key, original index) pairs: the values ride along with their keys");
  parser.add_option("--indices", indices_path, "With --pairs: write the original indices (uint32 .npy), i.e. the argsort");
  parser.add_flag("--cpu", cpu, "With --bench: also time std::sort on one CPU thread (slow for large n)");
  parser.add_option("--leaf", leaf, "Segments up to this size are sorted in shared memory (0: the largest that fits)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 20))
      ->capture_default_str();
  parser.footer(
      "Data types: int32, uint32, int64, float32, float64; floats sort with every NaN last.\n"
      "The sort is not stable; equal keys (-0.0 and +0.0 too) end in an unspecified but fixed order.\n"
      "Exit codes: 0 success, 1 error (also: a validation failed), 2 bad command line, 3 no usable GPU.");

  return app.run(argc, argv, [&] {
    const auto& o = app.options();
    if (!indices_path.empty() && !pairs) throw std::invalid_argument("--indices needs --pairs");
    io::host_array data = app.load_input();
    pa::require_supported(data.type());
    if (pairs && data.size() > static_cast<std::int64_t>(std::numeric_limits<std::uint32_t>::max())) {
      throw std::invalid_argument("--pairs takes at most 2^32 - 1 elements (the indices are uint32)");
    }
    if (data.shape().size() > 1) spdlog::info("input is 2-D: sorting its {} elements in C order", data.size());

    app.select_device();
    pa::sort_request request;
    request.pairs = pairs;
    request.validate = o.validate;
    request.bench = o.bench;
    request.cpu_bench = cpu;
    request.repeat = o.repeat;
    request.leaf = leaf;
    request.dataset = o.input.empty() ? (o.generate.empty() ? "uniform" : o.generate) : o.input;
    if (o.validate) spdlog::info("validating against std::sort and CUB (the CPU sort takes a while for large n)");
    if (o.bench) spdlog::info("benchmarking against CUB radix sort and thrust::sort ({} runs each)", o.repeat);
    const pa::sort_report report =
        pa::visit_supported(data.type(), [&]<class T>() { return pa::run_quicksort<T>(data, request); });

    nlohmann::json json;
    json["n"] = data.size();
    json["dtype"] = std::string(io::name(data.type()));
    json["pairs"] = pairs;
    std::cout << "sorted " << data.size() << " x " << io::name(data.type()) << (pairs ? " (with indices)" : "")
              << '\n';
    bool ok = true;
    if (o.validate) ok = pa::report_checks(report.checks, json);
    if (o.bench) {
      std::cout << '\n';
      scanlab::bench::print_results(std::cout, report.rows, report.memcpy_gbps);
      json["bench"] = scanlab::bench::to_json(report.rows, scanlab::bench::query_device(o.device), report.memcpy_gbps);
    }
    app.write_output(report.keys);
    if (!indices_path.empty() && report.indices) {
      io::write_dataset(indices_path, *report.indices);
      spdlog::info("wrote {} ({} x uint32)", indices_path, report.indices->size());
    }
    app.write_json(json);
    if (!ok) {
      std::cerr << "scanlab-quicksort: a validation failed (see the table)\n";
      return scanlab::cli::exit_error;
    }
    return scanlab::cli::exit_ok;
  });
}
