// scanlab-sort: stable LSD radix sort of a dataset on the GPU (keys, key-value pairs, or
// the sorting permutation), checked against std::stable_sort and CUB, timed against CUB
// and thrust::sort.
//
//   scanlab-sort                                     2^24 generated uint32 keys
//   scanlab-sort -i keys.npy -o sorted.npy
//   scanlab-sort -i keys.npy --values v.npy -o k.npy --values-out v_sorted.npy
//   scanlab-sort -i keys.npy --argsort -o permutation.npy
//   scanlab-sort --dtype float32 --descending --validate
//   scanlab-sort --n 2^28 --bench --dists all --json sort.json
//   scanlab-sort --pairs --n 2^28 --bench            uint32 keys with uint32 values
#include "sort/sort_gpu.hpp"

#include "common/bench_report.hpp"
#include "common/cli.hpp"
#include "common/dataset.hpp"
#include "common/generate.hpp"
#include "common/table.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <numeric>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace io = scanlab::io;
namespace gen = scanlab::gen;
using scanlab::sort_app::mode;

// The distributions --dists all stands for: the ones a radix sort's speed depends on.
const std::vector<std::string> bench_distributions = {"uniform",  "entropy-reduced", "sorted",
                                                      "few-unique", "constant",        "zipf"};

std::vector<std::string> parse_distributions(const std::string& text) {
  if (text == "all") return bench_distributions;
  std::vector<std::string> out;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');) {
    if (item.empty()) continue;
    if (!gen::parse_distribution(item)) {
      throw std::invalid_argument("--dists '" + item + "': choose from " + gen::distribution_choices() + " or all");
    }
    out.push_back(item);
  }
  if (out.empty()) throw std::invalid_argument("--dists: no distribution given");
  return out;
}

scanlab::sort_app::gpu_result run_gpu(const io::host_array& keys, const io::host_array* values,
                                      const scanlab::sort_app::gpu_request& request) {
  return io::visit(keys.type(), [&]<class Key>() { return scanlab::sort_app::run_typed<Key>(keys, values, request); });
}

// Positions 0..n-1 as uint32 (int64 past 2^32): the values of --pairs without --values.
io::host_array position_values(std::int64_t n) {
  const bool narrow = n <= (std::int64_t{1} << 32);
  io::host_array values(narrow ? io::dtype::u32 : io::dtype::i64, {n});
  if (narrow) {
    auto v = values.as<std::uint32_t>();
    std::iota(v.begin(), v.end(), 0u);
  } else {
    auto v = values.as<std::int64_t>();
    std::iota(v.begin(), v.end(), std::int64_t{0});
  }
  return values;
}

}  // namespace

int main(int argc, char** argv) {
  scanlab::cli::app app("scanlab-sort",
                        "Stable LSD radix sort on the GPU: keys (8- to 64-bit integers, float32, float64), key-value "
                        "pairs (values of 4 or 8 bytes) or the sorting permutation (--argsort), ascending or "
                        "descending, on all key bits or a bit range. --validate checks against std::stable_sort and "
                        "CUB; --bench times scanlab's onesweep and multi-pass sorts against CUB DeviceRadixSort and "
                        "thrust::sort.",
                        {.dist = gen::distribution::uniform, .n = std::int64_t{1} << 24, .type = io::dtype::u32});
  CLI::App& parser = app.parser();
  std::string values_path;
  std::string values_out;
  bool pairs = false;
  bool argsort = false;
  bool descending = false;
  int begin_bit = 0;
  int end_bit = -1;
  std::string algorithm = "onesweep";
  std::string dists_text;
  parser.add_option("--values", values_path, "Values to sort with the keys (a 4- or 8-byte dtype, same length)")
      ->check(CLI::ExistingFile);
  parser.add_flag("--pairs", pairs, "Sort key-value pairs; without --values the values are the positions 0..n-1");
  parser.add_option("--values-out", values_out, "Write the sorted values here (pairs)");
  parser.add_flag("--argsort", argsort, "Compute the stable sorting permutation (int64); -o writes it");
  parser.add_flag("--descending", descending, "Largest key first (still stable; NaNs still last)");
  parser.add_option("--begin-bit", begin_bit, "First key bit to sort on (of the ordered bits)")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  parser.add_option("--end-bit", end_bit, "One past the last key bit to sort on (default: all bits)")
      ->check(CLI::Range(0, 64));
  parser.add_option("--algorithm", algorithm, "onesweep (production) or multipass (teaching)")
      ->check(CLI::IsMember({"onesweep", "multipass"}))
      ->capture_default_str();
  parser.add_option("--dists", dists_text,
                    "With --bench: generate and time each of these distributions (comma-separated, or all = "
                    "uniform,entropy-reduced,sorted,few-unique,constant,zipf) with --n, --dtype, --seed");
  app.footer(
      "Order: stable; floats: -0.0 and +0.0 are equal keys (input order kept), NaNs come last in both "
      "orders, in input order. A bit range [--begin-bit, --end-bit) selects bits of the key's ordered "
      "bits (the key itself for unsigned types, sign bit flipped for signed ones).");

  return app.run(argc, argv, [&] {
    const auto& o = app.options();
    if (argsort && (pairs || !values_path.empty())) {
      throw std::invalid_argument("--argsort computes the permutation: it takes no --values or --pairs");
    }
    if (!values_path.empty()) pairs = true;
    if (!values_out.empty() && !pairs) throw std::invalid_argument("--values-out needs --pairs or --values");
    const mode what = argsort ? mode::argsort : pairs ? mode::pairs : mode::keys;
    std::vector<std::string> dists;
    if (!dists_text.empty()) {
      if (!o.bench) throw std::invalid_argument("--dists is for --bench");
      if (!o.input.empty()) throw std::invalid_argument("--dists generates its inputs: it takes no --input");
      dists = parse_distributions(dists_text);
    }

    // Inputs first: a bad file, a bad bit range or a length mismatch is reported before the GPU is touched.
    io::host_array keys = app.load_input();
    const int key_bits = 8 * static_cast<int>(io::size_of(keys.type()));
    if (begin_bit > key_bits || (end_bit >= 0 && (end_bit > key_bits || end_bit < begin_bit))) {
      throw std::invalid_argument("bit range [" + std::to_string(begin_bit) + ", " +
                                  (end_bit < 0 ? std::to_string(key_bits) : std::to_string(end_bit)) +
                                  ") does not fit " + std::string(io::name(keys.type())) + " keys (" +
                                  std::to_string(key_bits) + " bits)");
    }
    if (keys.shape().size() > 1) spdlog::info("keys are {}-D: sorting their {} elements in C order", keys.shape().size(), keys.size());
    std::optional<io::host_array> values;
    if (what == mode::pairs) {
      if (!values_path.empty()) {
        values = io::read_dataset(values_path, {});
        const std::size_t width = io::size_of(values->type());
        if (width != 4 && width != 8) {
          throw std::runtime_error(values_path + ": values must be 4 or 8 bytes wide, not " +
                                   std::string(io::name(values->type())));
        }
        if (values->size() != keys.size()) {
          throw std::runtime_error("keys and values differ in length: " + std::to_string(keys.size()) + " keys, " +
                                   std::to_string(values->size()) + " values in " + values_path);
        }
      } else {
        values = position_values(keys.size());
      }
    }

    app.select_device();
    scanlab::sort_app::gpu_request request;
    request.what = what;
    request.descending = descending;
    request.begin_bit = begin_bit;
    request.end_bit = end_bit;
    request.multipass = algorithm == "multipass";
    request.want_output = !o.output.empty() || !values_out.empty();
    request.validate = o.validate;
    request.repeat = o.repeat;
    const std::string input_name = app.dataset_name();
    request.dataset = input_name;
    // With --dists the benchmarks run on the generated distributions, not on this input.
    request.bench = o.bench && dists.empty();
    request.production_only = o.production_only;

    const auto result = run_gpu(keys, values ? &*values : nullptr, request);
    const double seconds = result.sort_ms * 1e-3;
    std::cout << "sorted " << keys.size() << " " << io::name(keys.type()) << " keys"
              << (what == mode::pairs ? " with " + std::string(io::name(values->type())) + " values"
                                      : what == mode::argsort ? " (argsort)" : "")
              << (descending ? ", descending" : ", ascending") << ", " << algorithm << ": "
              << scanlab::format_time_ms(result.sort_ms) << " ("
              << scanlab::format_fixed(seconds > 0 ? static_cast<double>(keys.size()) / seconds * 1e-9 : 0, 2)
              << " Gkeys/s, one run)\n";

    scanlab::app_report out = app.new_report();
    nlohmann::json& json = out.result();
    json["n"] = keys.size();
    json["dtype"] = std::string(io::name(keys.type()));
    json["mode"] = what == mode::keys ? "keys" : what == mode::pairs ? "pairs" : "argsort";
    json["descending"] = descending;
    json["begin_bit"] = begin_bit;
    json["end_bit"] = end_bit < 0 ? key_bits : end_bit;
    json["algorithm"] = algorithm;
    json["input"] = input_name;
    json["sort_ms"] = result.sort_ms;

    if (request.want_output) {
      if (what == mode::argsort) {
        app.write_output(*result.values);
      } else {
        app.write_output(result.keys);
        if (!values_out.empty()) io::write_dataset(values_out, *result.values);
      }
    }

    bool failed = false;
    if (o.validate) {
      scanlab::text_table table({"against", "result"});
      for (const auto& c : result.checks) {
        table.add_row({c.against, (c.passed ? "pass: " : "FAIL: ") + c.detail});
        out.add(c);
      }
      if (!result.skipped.empty()) table.add_row({"(skipped)", result.skipped});
      json["skipped_check"] = result.skipped.empty() ? nlohmann::json() : nlohmann::json(result.skipped);
      std::cout << '\n';
      table.print(std::cout);
    }

    std::vector<scanlab::bench::result> rows = result.rows;
    if (o.bench && !dists.empty()) {
      scanlab::sort_app::gpu_request bench_request = request;
      bench_request.bench = true;
      bench_request.validate = false;
      bench_request.want_output = false;
      for (std::size_t i = 0; i < dists.size(); ++i) {
        gen::spec spec;
        spec.dist = *gen::parse_distribution(dists[i]);
        spec.seed = o.seed;
        spdlog::info("[{}/{}] {}: generating {} x {}", i + 1, dists.size(), dists[i], keys.size(), io::name(keys.type()));
        const io::host_array data = gen::generate_array(spec, keys.type(), keys.size());
        bench_request.dataset = dists[i];
        const auto r = run_gpu(data, values ? &*values : nullptr, bench_request);
        rows.insert(rows.end(), r.rows.begin(), r.rows.end());
      }
    }
    if (!rows.empty()) {
      scanlab::bench::report bench = app.print_bench(rows);
      // Keys per second, and each variant's time against its own uniform time.
      std::map<std::string, double> uniform_ms;
      for (const auto& r : rows) {
        if (r.dataset == "uniform") uniform_ms[r.variant] = r.time.median_ms;
      }
      scanlab::text_table summary({"variant", "dataset", "time", "Gkeys/s", "vs CUB", "vs its uniform"});
      for (const auto& r : rows) {
        const auto speedup = r.speedup();
        const auto u = uniform_ms.find(r.variant);
        summary.add_row({r.variant, r.dataset, scanlab::format_time_ms(r.time.median_ms),
                         scanlab::format_fixed(r.items_per_second() * 1e-9, 2),
                         speedup ? scanlab::format_fixed(*speedup, 3) + "x" : "",
                         u != uniform_ms.end() ? scanlab::format_fixed(r.time.median_ms / u->second, 2) + "x" : ""});
      }
      std::cout << '\n';
      summary.print(std::cout);
      std::cout << "'vs CUB' > 1: faster than CUB. 'vs its uniform': this variant's time over its time on uniform "
                   "keys (> 1: slower).\n";
      for (const auto& r : rows) failed = failed || r.validation.rfind("FAIL", 0) == 0;
      out.set_bench(std::move(bench));
    }
    return app.finish(out, "a check failed (see the tables above)", !failed);
  });
}
