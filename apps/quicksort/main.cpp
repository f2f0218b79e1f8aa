// scanlab-quicksort: sorts a dataset on the GPU with scanlab's quicksort (each level splits
// every segment three ways around each of 31 sampled pivots; small segments merge-sorted in
// shared memory).
//
//   scanlab-quicksort                                2^24 uniform uint32
//   scanlab-quicksort -i keys.npy -o sorted.npy
//   scanlab-quicksort --pairs --indices order.npy    also the permutation (argsort, int64)
//   scanlab-quicksort --n 2^28 --generate few-unique --validate --bench
//   scanlab-quicksort --dtype float32 --order abs-desc --bench
//                                                    a user-defined order (largest |x| first)
//   scanlab-quicksort --n 2^20 --adversary --save-input adversary.npy
//                                                    the input that defeated the fixed sampler
#include "quicksort/quicksort_adversary.hpp"
#include "quicksort/quicksort_gpu.hpp"

#include "partition/app_common.hpp"

#include "common/bench_report.hpp"
#include "common/cli.hpp"
#include "common/dataset.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace {
namespace io = scanlab::io;
namespace pa = scanlab::partition_app;  // the element types and the report helpers it shares
namespace qa = scanlab::quicksort_app;

// The sort's order on the host: NaNs last.
template <class T>
bool nan_last_less(const T& a, const T& b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return !std::isnan(a) && std::isnan(b);
  }
  return a < b;
}

// data's keys rearranged as the adversary of the fixed sampler (quicksort_adversary.hpp).
io::host_array adversary_of(const io::host_array& data) {
  return pa::visit_supported(data.type(), [&]<class T>() {
    const std::vector<T> keys = qa::adversary::arrange<T>(data.as<T>(), nan_last_less<T>);
    io::host_array out(data.type(), {data.size()});
    std::copy(keys.begin(), keys.end(), out.as<T>().begin());
    return out;
  });
}
}  // namespace

int main(int argc, char** argv) {
  scanlab::cli::app app("scanlab-quicksort",
                        "Sorts a dataset on the GPU with scanlab's quicksort: 31 pivots per segment from 512 samples, "
                        "every large segment split three ways around each pivot at once (63 buckets, all segments "
                        "of a level in one pass), small segments merge-sorted by one block in shared memory. Writes the sorted keys (-o); --validate checks them against std::sort "
                        "and CUB's merge and radix sorts, --bench times them against CUB's merge sort (the "
                        "comparison-sort baseline: 'vs CUB'), CUB's radix sort, thrust::sort (and std::sort with --cpu).",
                        {.dist = scanlab::gen::distribution::uniform, .n = std::int64_t{1} << 24,
                         .type = io::dtype::u32});
  CLI::App& parser = app.parser();
  bool pairs = false;
  bool cpu = false;
  std::string indices_path;
  std::int64_t leaf = 0;
  bool adversary = false;
  std::string save_input_path;
  std::optional<std::uint64_t> sort_seed;
  int level_budget = -1;
  bool fixed_sampling = false;
  std::string order = "ascending";
  parser.add_flag("--pairs", pairs,
                  "Sort (key, original index) pairs: the values ride along with their keys (uint32 indices up to "
                  "2^32 keys, int64 beyond)");
  parser.add_option("--indices", indices_path, "With --pairs: write the original indices (int64 .npy), i.e. the argsort");
  parser.add_option("--order", order,
                    "ascending (NaNs last), or abs-desc: by absolute value, largest first, NaNs last (float32 and "
                    "float64 keys; a user-defined comparator, where radix sort does not apply)")
      ->check(CLI::IsMember({"ascending", "abs-desc"}))
      ->capture_default_str();
  parser.add_flag("--cpu", cpu, "With --bench: also time std::sort on one CPU thread (slow for large n)");
  parser.add_option("--leaf", leaf, "Segments up to this size are sorted in shared memory (0: the largest that fits)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 20))
      ->capture_default_str();
  parser.add_flag("--adversary", adversary,
                  "Rearrange the input (generated or read) into the adversary of the fixed sampler of the first "
                  "versions: the smallest keys where every level samples (n < 2^32; about 0.5 s per 2^20 keys)");
  parser.add_option("--save-input", save_input_path,
                    "Write the input that is sorted (after --adversary) to this .npy file, e.g. to replay it with "
                    "another build");
  parser.add_option("--sort-seed", sort_seed,
                    "Sampling seed of the sort (default: a fresh one per call; with a seed, pairs come out the same "
                    "on every run)");
  parser.add_option("--level-budget", level_budget,
                    "Partition levels after which the segments left are merge-sorted (-1: 2 ceil(log32(n / leaf)) + "
                    "2; 0: merge sort only; a large number: no budget)")
      ->check(CLI::Range(-1, 1 << 30))
      ->capture_default_str();
  parser.add_flag("--fixed-sampling", fixed_sampling,
                  "Sample positions a fixed function of the segment, as the first versions did (with --adversary "
                  "and --level-budget 1000000000: the old worst case)");
  app.footer(
      "Data types: int32, uint32, int64, float32, float64; floats sort with every NaN last.\n'vs CUB' "
      "is CUB DeviceMergeSort's time over the quicksort's, with the same comparator.\nThe sort is not "
      "stable: the values of equal keys (with --pairs) come out in an order that may differ\nfrom run "
      "to run (the pivots are sampled with a fresh seed per call) unless --sort-seed is given.");

  return app.run(argc, argv, [&] {
    const auto& o = app.options();
    if (!indices_path.empty() && !pairs) throw std::invalid_argument("--indices needs --pairs");
    io::host_array data = app.load_input();
    pa::require_supported(data.type());
    if (order == "abs-desc" && data.type() != io::dtype::f32 && data.type() != io::dtype::f64) {
      throw std::invalid_argument("--order abs-desc sorts float32 and float64 keys, not " +
                                  std::string(io::name(data.type())));
    }
    if (data.shape().size() > 1) spdlog::info("input is {}-D: sorting its {} elements in C order", data.shape().size(), data.size());
    if (adversary) {
      if (data.size() >= (std::int64_t{1} << 32)) throw std::invalid_argument("--adversary takes fewer than 2^32 keys");
      data = adversary_of(data);
      // The leaf the sort will use: --leaf, else the largest power of two up to 16384 whose keys
      // (and uint32 indices) fit in 64 KB (quicksort.cuh: leaf_capacity).
      const std::int64_t item = static_cast<std::int64_t>(io::size_of(data.type())) + (pairs ? 4 : 0);
      std::int64_t sort_leaf = 1;
      while (sort_leaf * 2 * item <= 64 * 1024 && sort_leaf < 16384) sort_leaf *= 2;
      if (leaf > 0 && leaf < sort_leaf) sort_leaf = std::max<std::int64_t>(leaf, 2);
      spdlog::info("input rearranged as the fixed sampler's adversary: {} partition levels with --fixed-sampling "
                   "and no level budget",
                   qa::adversary::planned_levels(data.size(), sort_leaf));
    }
    if (!save_input_path.empty()) {
      io::write_dataset(save_input_path, data);
      spdlog::info("wrote the input to {}", save_input_path);
    }

    app.select_device();
    qa::sort_request request;
    request.pairs = pairs;
    request.order = order == "abs-desc" ? qa::sort_order::abs_descending : qa::sort_order::ascending;
    request.validate = o.validate;
    request.bench = o.bench;
    request.cpu_bench = cpu;
    request.production_only = o.production_only;
    request.repeat = o.repeat;
    request.leaf = leaf;
    request.sort_seed = sort_seed;
    request.level_budget = level_budget;
    request.fixed_sampling = fixed_sampling;
    request.dataset = app.dataset_name();
    if (adversary) request.dataset += " (adversary)";
    if (o.validate) spdlog::info("validating against std::sort and CUB (the CPU sort takes a while for large n)");
    if (o.bench) {
      spdlog::info("benchmarking against CUB merge sort{} ({} runs each)",
                   request.order == qa::sort_order::ascending ? ", CUB radix sort and thrust::sort" : "", o.repeat);
    }
    const qa::sort_report report =
        pa::visit_supported(data.type(), [&]<class T>() { return qa::run_quicksort<T>(data, request); });

    scanlab::app_report out = app.new_report();
    nlohmann::json& json = out.result();
    json["n"] = data.size();
    json["dtype"] = std::string(io::name(data.type()));
    json["pairs"] = pairs;
    std::cout << "sorted " << data.size() << " x " << io::name(data.type()) << (pairs ? " (with indices)" : "")
              << '\n';
    if (o.validate) pa::report_checks(report.checks, out);
    if (o.bench) out.set_bench(app.print_bench(report.rows));
    app.write_output(report.keys);
    if (!indices_path.empty() && report.indices) {
      io::write_dataset(indices_path, *report.indices);
      spdlog::info("wrote {} ({} x int64)", indices_path, report.indices->size());
    }
    return app.finish(out, "a validation failed (see the table)");
  });
}
