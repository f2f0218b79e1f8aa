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
//   scanlab-sort -i big.npy -o sorted.npy --device-memory 4G
//                                                    the streaming (external) sort, issue #24:
//                                                    also chosen when the input does not fit
#include "sort/sort_gpu.hpp"

#include "common/bench_report.hpp"
#include "common/cli.hpp"
#include "common/dataset.hpp"
#include "common/generate.hpp"
#include "common/progress.hpp"
#include "common/slices.hpp"
#include "common/stream_workspace.hpp"
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

// The dtype of the positions 0..n-1 that --pairs without --values sorts: uint32, int64 past 2^32.
io::dtype position_type(std::int64_t n) { return n <= (std::int64_t{1} << 32) ? io::dtype::u32 : io::dtype::i64; }

// Writes the positions 0..n-1 in `type` (position_type, or int64) to `out`.
void fill_positions(std::byte* out, io::dtype type, std::int64_t n) {
  if (type == io::dtype::u32) {
    auto* v = reinterpret_cast<std::uint32_t*>(out);
    std::iota(v, v + n, 0u);
  } else {
    auto* v = reinterpret_cast<std::int64_t*>(out);
    std::iota(v, v + n, std::int64_t{0});
  }
}

// The values of --pairs without --values, in memory.
io::host_array position_values(std::int64_t n) {
  io::host_array values(position_type(n), {n});
  fill_positions(values.data(), values.type(), n);
  return values;
}

// What the sort was asked, as the summary line and the report state it (both paths).
struct sort_setup {
  mode what = mode::keys;
  io::dtype key_type = io::dtype::u32;
  std::optional<io::dtype> value_type;  // pairs: the values' dtype
  bool descending = false;
  int begin_bit = 0;
  int end_bit = 0;          // resolved: the key's bits where none was given
  std::string algorithm;    // onesweep, multipass, external
  std::string input;
};

// The option the streaming path cannot honour (its external sort is ascending, on all key
// bits, with onesweep runs; --dists benchmarks the in-memory sorts), or "" when there is none.
std::string refused_when_streaming(bool descending, int begin_bit, int end_bit, const std::string& algorithm,
                                   bool dists) {
  if (descending) return "--descending";
  if (begin_bit != 0) return "--begin-bit";
  if (end_bit >= 0) return "--end-bit";
  if (algorithm != "onesweep") return "--algorithm " + algorithm;
  if (dists) return "--dists";
  return "";
}

std::string streaming_refusal(const std::string& option, const std::string& reason) {
  return option + ": not on the streaming path (" + reason +
         "), which sorts ascending on all key bits (scanlab::streaming::sort_keys, sort_pairs: onesweep runs, "
         "then a k-way merge)";
}

// The summary line, the report's result fields and the checks: what both paths print and report.
scanlab::app_report report_sort(scanlab::cli::app& app, const sort_setup& s, std::int64_t n,
                                const scanlab::sort_app::gpu_result& result) {
  const double seconds = result.sort_ms * 1e-3;
  std::cout << "sorted " << n << " " << io::name(s.key_type) << " keys"
            << (s.what == mode::pairs ? " with " + std::string(io::name(*s.value_type)) + " values"
                : s.what == mode::argsort ? " (argsort)"
                                          : "")
            << (s.descending ? ", descending" : ", ascending") << ", " << s.algorithm << ": "
            << scanlab::format_time_ms(result.sort_ms) << " ("
            << scanlab::format_fixed(seconds > 0 ? static_cast<double>(n) / seconds * 1e-9 : 0, 2)
            << " Gkeys/s, one run)\n";

  scanlab::app_report out = app.new_report();
  nlohmann::json& json = out.result();
  json["n"] = n;
  json["dtype"] = std::string(io::name(s.key_type));
  json["mode"] = s.what == mode::keys ? "keys" : s.what == mode::pairs ? "pairs" : "argsort";
  json["descending"] = s.descending;
  json["begin_bit"] = s.begin_bit;
  json["end_bit"] = s.end_bit;
  json["algorithm"] = s.algorithm;
  json["input"] = s.input;
  json["sort_ms"] = result.sort_ms;
  if (app.options().validate) {
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
  return out;
}

// Where the streaming path puts sorted keys or values: the output file itself, mapped
// (io::mapped_output: preallocated, so a full disk fails here, before the sort; renamed over
// the name by commit()), or host memory (pinned where granted) where that output is not
// written.
class sorted_output {
 public:
  sorted_output(const std::string& path, io::dtype type, std::int64_t n) : type_(type), n_(n) {
    if (path.empty()) {
      memory_.emplace(static_cast<std::size_t>(n) * io::size_of(type));
    } else {
      file_.emplace(path, type, n);
    }
  }
  [[nodiscard]] std::byte* data() { return file_ ? file_->data() : memory_->data(); }
  void commit() {
    if (!file_) return;
    file_->commit();
    spdlog::info("wrote {} ({} x {})", file_->path().string(), n_, io::name(type_));
  }

 private:
  io::dtype type_;
  std::int64_t n_;
  std::optional<io::mapped_output> file_;
  std::optional<scanlab::host_buffer> memory_;
};

// The streaming path (--device-memory, or keys and values that with the sort's temp storage
// do not fit the GPU's free memory): the keys (memory-mapped where they are a .npy or raw file)
// sorted by scanlab::streaming::sort_keys / sort_pairs straight into the output files, mapped
// and preallocated (sorted_output); the positions of --pairs without --values and of --argsort
// written into the values' output first and sorted in place. A progress bar over both passes;
// --validate: the in-memory path's CPU check; Ctrl-C: the run stops after the sort, before
// anything is renamed into place.
int run_streaming(scanlab::cli::app& app, const io::input_array& keys, const io::input_array* values,
                  const std::string& values_out_path, sort_setup setup,
                  const scanlab::sort_app::gpu_request& request, const scanlab::cli::path_choice& path) {
  const auto& o = app.options();
  const std::int64_t n = keys.size();
  const bool positions = setup.what == mode::argsort || (setup.what == mode::pairs && values == nullptr);
  const io::dtype value_type = setup.what == mode::argsort ? io::dtype::i64
                               : values != nullptr         ? values->type()
                                                           : position_type(n);
  const std::size_t value_bytes = setup.what == mode::keys ? 0 : io::size_of(value_type);
  const std::uint64_t bytes = static_cast<std::uint64_t>(n) * (io::size_of(keys.type()) + value_bytes);
  spdlog::info("sorting {} x {}{}, streamed through at most {} of device memory ({})", n, io::name(keys.type()),
               setup.what == mode::keys ? "" : " with " + std::string(io::name(value_type)) + " values",
               scanlab::cli::show_bytes(static_cast<double>(path.device_bytes)), path.reason);

  // The outputs before the sort: a full disk or a bad name is reported before any work.
  // --argsort writes the permutation (its values) to -o; its sorted keys are not kept.
  sorted_output keys_out(setup.what == mode::argsort ? std::string() : o.output, keys.type(), n);
  std::optional<sorted_output> values_out;
  if (setup.what != mode::keys) {
    values_out.emplace(setup.what == mode::argsort ? o.output : values_out_path, value_type, n);
    if (positions) fill_positions(values_out->data(), value_type, n);
  }
  scanlab::cli::catch_interrupts();
  scanlab::stream_workspace ws(path.device_bytes);
  scanlab::sort_app::stream_arrays arrays;
  arrays.keys_in = keys.data();
  arrays.keys_out = keys_out.data();
  if (values_out) {
    arrays.values_out = values_out->data();
    arrays.values_in = positions ? values_out->data() : values->data();
  }
  arrays.value_bytes = value_bytes;
  arrays.positions = positions;
  arrays.n = n;

  // The bar covers both passes (run formation, then the merge), each moving all the data; one
  // run (no merge) fills it in one pass.
  scanlab::cli::progress_bar bar(app.name(), 2 * bytes, !o.quiet);
  const scanlab::sort_app::stream_progress progress = [&](int pass, std::int64_t done, std::int64_t total,
                                                          std::int64_t runs) {
    const double fraction = total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
    const double at = runs <= 1 ? fraction : (pass - 1 + fraction) / 2;
    bar.update(static_cast<std::uint64_t>(at * 2.0 * static_cast<double>(bytes)));
  };
  scanlab::sort_app::gpu_result result;
  const double seconds = scanlab::cli::timed([&] {
    result = io::visit(keys.type(), [&]<class Key>() {
      return scanlab::sort_app::stream_typed<Key>(ws, arrays, request, progress);
    });
    if (scanlab::cli::interrupted()) throw std::runtime_error("interrupted: nothing written");
    bar.syncing();
    keys_out.commit();
    if (values_out) values_out->commit();
  });
  spdlog::info("{} run(s), {} merge step(s)", ws.num_chunks(), ws.merge_steps());

  setup.value_type = value_type;
  setup.algorithm = "external";
  scanlab::app_report out = report_sort(app, setup, n, result);
  const scanlab::cli::stream_timing timing{seconds, result.sort_ms * 1e-3, 1};
  nlohmann::json streaming = scanlab::cli::stream_summary(path, ws, timing, 2 * bytes, o.bench, std::cout);
  streaming["runs"] = ws.num_chunks();
  streaming["merge_steps"] = ws.merge_steps();
  out.result()["streaming"] = std::move(streaming);
  return app.finish(out, "a check failed (see the table above)");
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
  app.add_streaming_options(false);
  app.footer(
      "Order: stable; floats: -0.0 and +0.0 are equal keys (input order kept), NaNs come last in both "
      "orders, in input order. A bit range [--begin-bit, --end-bit) selects bits of the key's ordered "
      "bits (the key itself for unsigned types, sign bit flipped for signed ones).\n"
      "Inputs larger than GPU memory: a .npy or raw file (keys, and --values) is memory-mapped, not read, "
      "and sorted by the external sort (scanlab::streaming::sort_keys, sort_pairs: sorted runs, then a k-way "
      "merge; the same order as the in-memory sort, bit for bit) when the keys, values and the sort's temp "
      "storage would not fit in the free device memory, or whatever their size with --device-memory LIMIT. "
      "The outputs (-o, --values-out: .npy or raw, not text or standard output) are preallocated (a full disk "
      "fails before the sort), written in place through a mapping of a temporary file, and renamed over the "
      "name at the end (a failed or interrupted run leaves no file under it); a progress bar over both passes "
      "shows on a terminal; --validate checks against std::stable_sort up to 2^27 keys and beyond that in linear time without a second sort (keys in order, the input's multiset of keys by hashes, positions each once and stable, (key, value) pairs by hashes; CUB is not run); --bench reports the "
      "GB/s of host data. It sorts ascending on all key bits: --descending, --begin-bit, --end-bit, "
      "--algorithm multipass and --dists are refused there (with --device-memory before anything is read).");

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
    const std::string refused = refused_when_streaming(descending, begin_bit, end_bit, algorithm, !dists.empty());
    if (app.device_memory_given() && !refused.empty()) {
      throw std::invalid_argument(streaming_refusal(refused, "--device-memory"));
    }

    // Inputs first: a bad file, a bad bit range or a length mismatch is reported before the GPU is touched.
    // A .npy or raw file is mapped, not read: read (take) only for the in-memory path.
    io::input_array input = app.open_input();
    const int key_bits = io::visit(input.type(), []<class Key>() { return 8 * static_cast<int>(sizeof(Key)); });
    if (begin_bit > key_bits || (end_bit >= 0 && (end_bit > key_bits || end_bit < begin_bit))) {
      throw std::invalid_argument("bit range [" + std::to_string(begin_bit) + ", " +
                                  (end_bit < 0 ? std::to_string(key_bits) : std::to_string(end_bit)) +
                                  ") does not fit " + std::string(io::name(input.type())) + " keys (" +
                                  std::to_string(key_bits) + " bits)");
    }
    if (input.shape().size() > 1) {
      spdlog::info("keys are {}-D: sorting their {} elements in C order", input.shape().size(), input.size());
    }
    std::optional<io::input_array> values_file;
    if (!values_path.empty()) {
      values_file = io::open_dataset(values_path, {});
      const std::size_t width = io::size_of(values_file->type());
      if (width != 4 && width != 8) {
        throw std::runtime_error(values_path + ": values must be 4 or 8 bytes wide, not " +
                                 std::string(io::name(values_file->type())));
      }
      if (values_file->size() != input.size()) {
        throw std::runtime_error("keys and values differ in length: " + std::to_string(input.size()) + " keys, " +
                                 std::to_string(values_file->size()) + " values in " + values_path);
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
    sort_setup setup{what,     input.type(), std::nullopt, descending, begin_bit, end_bit < 0 ? key_bits : end_bit,
                     algorithm, input_name};

    const std::size_t value_bytes = what != mode::pairs ? 0
                                    : values_file      ? io::size_of(values_file->type())
                                                       : io::size_of(position_type(input.size()));
    const scanlab::cli::path_choice path = app.choose_path(io::visit(input.type(), [&]<class Key>() {
      return scanlab::sort_app::in_memory_device_bytes<Key>(input.size(), value_bytes, request);
    }));
    if (path.streaming) {
      if (!refused.empty()) throw std::runtime_error(streaming_refusal(refused, path.reason));
      return run_streaming(app, input, values_file ? &*values_file : nullptr, values_out, setup, request, path);
    }

    const io::host_array keys = input.take(o.input);
    std::optional<io::host_array> values;
    if (what == mode::pairs) values = values_file ? values_file->take(values_path) : position_values(keys.size());
    if (values) setup.value_type = values->type();
    const auto result = run_gpu(keys, values ? &*values : nullptr, request);
    if (request.want_output) {
      if (what == mode::argsort) {
        app.write_output(*result.values);
      } else {
        app.write_output(result.keys);
        if (!values_out.empty()) io::write_dataset(values_out, *result.values);
      }
    }
    scanlab::app_report out = report_sort(app, setup, keys.size(), result);

    bool failed = false;
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
