// scanlab-compact: stream compaction on the GPU. Keeps the elements that satisfy a
// predicate, in order; prints how many; writes them (and their input positions) as .npy;
// checks them against std::copy_if and CUB (--validate) and times them against CUB (--bench).
//
//   scanlab-compact                                      2^24 generated uint32, --nonzero
//   scanlab-compact -i x.npy --gt 0.5 -o kept.npy --indices where.npy
//   scanlab-compact -i x.npy --finite --validate
//   scanlab-compact -i x.npy --flags mask.npy -o kept.npy
//   scanlab-compact --generate few-unique --dtype int32 --unique
//   scanlab-compact --n 2^28 --lt 2147483648 --validate --bench --json compact.json
#include "compact/compact_gpu.hpp"
#include "compact/compact_stream.hpp"
#include "compact/predicate.hpp"

#include "common/bench_report.hpp"
#include "common/cli.hpp"
#include "common/dataset.hpp"
#include "common/slices.hpp"
#include "common/table.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <iterator>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace io = scanlab::io;
using namespace scanlab::compact_app;

// Flags from any dtype: nonzero (NaN included) keeps.
std::vector<std::uint8_t> to_flags(const io::host_array& array) {
  std::vector<std::uint8_t> flags(static_cast<std::size_t>(array.size()));
  io::visit(array.type(), [&]<class T>() {
    const auto values = array.as<T>();
    for (std::size_t i = 0; i < flags.size(); ++i) flags[i] = values[i] != T(0) ? 1 : 0;
  });
  return flags;
}

// The CPU reference: the kept values (std::copy_if, std::unique_copy, or the flags) and
// their positions.
struct reference {
  io::host_array kept;
  std::vector<std::int64_t> positions;
};

reference cpu_reference(const io::host_array& data, const predicate_spec& spec, const std::vector<std::uint8_t>* flags) {
  return io::visit(data.type(), [&]<class T>() {
    const auto x = data.as<T>();
    const auto n = static_cast<std::int64_t>(x.size());
    std::vector<T> kept;
    std::vector<std::int64_t> positions;
    if (spec.kind == test_kind::unique) {
      std::unique_copy(x.begin(), x.end(), std::back_inserter(kept));
      for (std::int64_t i = 0; i < n; ++i) {
        if (i == 0 || !(x[i - 1] == x[i])) positions.push_back(i);
      }
    } else if (spec.kind == test_kind::flags) {
      for (std::int64_t i = 0; i < n; ++i) {
        if ((*flags)[static_cast<std::size_t>(i)] != 0) positions.push_back(i);
      }
      for (const std::int64_t i : positions) kept.push_back(x[i]);
    } else {
      const value_test<T> test = make_value_test<T>(spec);
      std::copy_if(x.begin(), x.end(), std::back_inserter(kept), test);
      std::vector<std::int64_t> all(static_cast<std::size_t>(n));
      std::iota(all.begin(), all.end(), std::int64_t{0});
      std::copy_if(all.begin(), all.end(), std::back_inserter(positions), [&](std::int64_t i) { return test(x[i]); });
    }
    reference ref{io::host_array(data.type(), {static_cast<std::int64_t>(kept.size())}), std::move(positions)};
    if (!kept.empty()) std::memcpy(ref.kept.data(), kept.data(), kept.size() * sizeof(T));
    return ref;
  });
}

// "" when equal, else where they first differ.
std::string difference(const io::host_array& got, const io::host_array& want) {
  if (got.size() != want.size()) {
    return "count " + std::to_string(got.size()) + ", want " + std::to_string(want.size());
  }
  const std::size_t item = io::size_of(want.type());
  for (std::int64_t i = 0; i < want.size(); ++i) {
    if (std::memcmp(got.data() + i * item, want.data() + i * item, item) != 0) {
      return "kept item " + std::to_string(i) + " differs";
    }
  }
  return "";
}

std::string percent(double fraction) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3f %%", 100.0 * fraction);
  return buffer;
}

// The streaming path (--device-memory, or an input larger than the GPU's free memory): the
// input (memory-mapped where it is a file) compacted slice by slice with the streaming library;
// each slice's kept items checked against std::copy_if with --validate and appended to -o
// (stream_writer: the .npy header, written first for the most items, is rewritten with the
// count at the end, and the temporary file renamed over -o). Value predicates only.
int run_streaming(scanlab::cli::app& app, const io::input_array& x, const predicate_spec& spec,
                  const scanlab::cli::path_choice& path) {
  const auto& o = app.options();
  const std::int64_t n = x.size();
  spdlog::info("compacting {} x {} ({}), streamed through at most {} of device memory ({})", n, io::name(x.type()),
               describe(spec), scanlab::cli::show_bytes(static_cast<double>(path.device_bytes)), path.reason);
  std::optional<io::stream_writer> writer;
  if (!o.output.empty()) writer.emplace(o.output, x.type(), std::vector<std::int64_t>{n}, false);
  scanlab::cli::catch_interrupts();
  scanlab::stream_workspace ws(path.device_bytes);
  std::int64_t kept = 0;
  std::string problem;  // the first difference from std::copy_if
  const scanlab::cli::stream_timing timing = io::visit(x.type(), [&]<class T>() {
    const value_test<T> test = make_value_test<T>(spec);
    const std::span<const T> xs = x.as<T>();
    const auto slice_items = std::max<std::uint64_t>(1, app.stream_slice_bytes() / sizeof(T));
    scanlab::host_buffer buffer(
        static_cast<std::size_t>(std::min<std::uint64_t>(slice_items, static_cast<std::uint64_t>(n))) * sizeof(T));
    auto* out = reinterpret_cast<T*>(buffer.data());
    std::vector<T> want;
    const auto step = [&](std::int64_t begin, std::int64_t count) {
      const std::span<const T> slice = xs.subspan(static_cast<std::size_t>(begin), static_cast<std::size_t>(count));
      std::int64_t got = 0;
      const double seconds =
          scanlab::cli::timed([&] { got = scanlab::compact_app::stream_select<T>(ws, test, slice.data(), out, count); });
      if (o.validate && problem.empty()) {
        want.clear();
        std::copy_if(slice.begin(), slice.end(), std::back_inserter(want), test);
        if (static_cast<std::size_t>(got) != want.size()) {
          problem = "input items " + std::to_string(begin) + ".." + std::to_string(begin + count - 1) + ": kept " +
                    std::to_string(got) + ", want " + std::to_string(want.size());
        } else if (got > 0 && std::memcmp(out, want.data(), want.size() * sizeof(T)) != 0) {
          problem = "a kept item among " + std::to_string(kept) + ".." + std::to_string(kept + got - 1) + " differs";
        }
      }
      if (writer) writer->write(out, static_cast<std::size_t>(got) * sizeof(T));
      kept += got;
      return seconds;
    };
    return scanlab::cli::for_each_slice(app.name(), !o.quiet, n, sizeof(T), app.stream_slice_bytes(), step);
  });
  if (writer) writer->commit_with_length(kept);

  const double selectivity = n > 0 ? static_cast<double>(kept) / static_cast<double>(n) : 0.0;
  std::cout << "kept " << kept << " of " << n << " (" << describe(spec) << "), selectivity " << percent(selectivity)
            << '\n';
  scanlab::app_report report = app.new_report();
  nlohmann::json& json = report.result();
  json["input"] = o.input.empty() ? "generated " + app.dataset_name() : o.input;
  json["n"] = n;
  json["dtype"] = std::string(io::name(x.type()));
  json["predicate"] = describe(spec);
  json["count"] = kept;
  json["selectivity"] = selectivity;
  const std::uint64_t host_bytes = x.bytes() + static_cast<std::uint64_t>(kept) * io::size_of(x.type());
  json["streaming"] = scanlab::cli::stream_summary(path, ws, timing, host_bytes, o.bench, std::cout);
  if (writer) spdlog::info("wrote {} ({} x {})", o.output, kept, io::name(x.type()));
  if (o.validate) {
    report.add({"CPU std::copy_if", problem.empty(),
                problem.empty() ? "kept " + std::to_string(kept) + " of " + std::to_string(n) +
                                      ", pass (streamed slice by slice; CUB is not run on the streaming path)"
                                : "FAIL: " + problem});
    scanlab::print_checks(std::cout, report.checks());
  }
  return app.finish(report, "a result differs from the CPU reference");
}

}  // namespace

int main(int argc, char** argv) {
  scanlab::cli::app app("scanlab-compact",
                        "Stream compaction on the GPU: keeps the elements that satisfy a predicate, in order, and "
                        "says how many (one pass with decoupled look-back). Checked against std::copy_if and CUB "
                        "(--validate), timed against CUB's DeviceSelect (--bench).",
                        {.dist = scanlab::gen::distribution::uniform, .n = std::int64_t{1} << 24, .type = io::dtype::u32});
  CLI::App& parser = app.parser();
  predicate_options p;
  std::string gt, lt;
  std::string indices_path;
  bool tune = false;
  parser.add_option("--gt", gt, "Keep x > X (the bound in the data's dtype; NaN is dropped)");
  parser.add_option("--lt", lt, "Keep x < X");
  parser.add_option("--between", p.between, "Keep A <= x <= B")->expected(2)->type_name("A B");
  parser.add_flag("--nonzero", p.nonzero, "Keep x != 0 (the default predicate; NaN is kept)");
  parser.add_flag("--finite", p.finite, "Drop NaN and +-Inf (integer data: keep everything)");
  parser.add_flag("--odd", p.odd, "Keep odd integers");
  parser.add_flag("--even", p.even, "Keep even integers");
  parser.add_option("--flags", p.flags_file, "Keep x[i] where FILE's element i is nonzero (any dtype, same length)")
      ->check(CLI::ExistingFile);
  parser.add_flag("--unique", p.unique, "Drop elements equal to their predecessor (consecutive duplicates)");
  parser.add_option("--indices", indices_path, "Also write the kept elements' input positions here (int64 .npy)");
  parser.add_flag("--tune", tune, "With --bench: also time the production kernel's variants (launch modes; "
                                  "tile shapes for uint32 with --gt/--lt/--between/--finite)");
  app.add_streaming_options();
  app.footer(
      "Give one predicate (none: --nonzero). -o writes the kept values in the input's dtype.\n"
      "Inputs larger than GPU memory: a .npy or raw file is memory-mapped, not read, and streamed through "
      "the GPU in slices (scanlab::streaming::select_if) when the input and the kept values would not fit in "
      "the free device memory, or whatever their size with --device-memory LIMIT; the kept values go to -o "
      "(a .npy or raw file, not standard output: the count is known only at the end) as they come, into a "
      "temporary file renamed over it at the end; a progress bar shows on a terminal; --validate checks every "
      "slice against std::copy_if (CUB is not run); --bench reports the GB/s of host data. The value "
      "predicates only (not --flags, --unique, --indices).");

  return app.run(argc, argv, [&] {
    const auto& o = app.options();
    if (parser.count("--gt") > 0) p.gt = gt;
    if (parser.count("--lt") > 0) p.lt = lt;
    if (tune && !o.bench) spdlog::warn("--tune is used with --bench only");
    const predicate_spec spec = choose_predicate(p);

    // Inputs and bounds first: a bad file, flag length or bound is reported before the GPU is touched.
    // A .npy or raw file is mapped, not read: read (input.take) only for the in-memory path.
    io::input_array input = app.open_input();
    check_dtype(spec, input.type());
    if (input.shape().size() > 1) spdlog::info("the input is {}-D: compacting its {} elements in C order",
                                               input.shape().size(), input.size());
    if (spec.kind != test_kind::flags && spec.kind != test_kind::unique) {
      io::visit(input.type(), [&]<class T>() { (void)make_value_test<T>(spec); });
    }
    std::optional<std::vector<std::uint8_t>> flags;
    if (spec.kind == test_kind::flags) {
      const io::host_array flag_array = app.load_file(spec.flags_file);
      if (flag_array.size() != input.size()) {
        throw std::runtime_error("--flags " + spec.flags_file + " has " + std::to_string(flag_array.size()) +
                                 " elements, the input has " + std::to_string(input.size()));
      }
      flags = to_flags(flag_array);
    }

    app.select_device();
    // The in-memory path holds the input, the kept items (twice with --validate or --bench:
    // CUB's), their positions with --indices, the flags.
    const std::uint64_t n_items = static_cast<std::uint64_t>(input.size());
    const scanlab::cli::path_choice path =
        app.choose_path(input.bytes() * (o.validate || o.bench ? 3 : 2) + (indices_path.empty() ? 0 : n_items * 8) +
                        (flags ? n_items : 0));
    if (path.streaming) {
      const std::string unsupported = spec.kind == test_kind::flags    ? "--flags"
                                      : spec.kind == test_kind::unique ? "--unique"
                                      : !indices_path.empty()          ? "--indices"
                                                                       : "";
      if (!unsupported.empty()) {
        throw std::runtime_error(unsupported + ": not on the streaming path (" + path.reason +
                                 "), which compacts by the value predicates only (--gt, --lt, --between, --nonzero, "
                                 "--finite, --odd, --even)");
      }
      if (tune) spdlog::warn("--tune is ignored on the streaming path");
      return run_streaming(app, input, spec, path);
    }
    io::host_array data = input.take(o.input);
    gpu_request request;
    request.predicate = spec;
    request.indices = !indices_path.empty();
    request.compare = o.validate;
    request.bench = o.bench;
    request.production_only = o.production_only;
    request.tune = tune;
    request.repeat = o.repeat;
    request.dataset = app.dataset_name();
    if (o.bench || o.validate) spdlog::info("running scanlab{}{}", o.validate ? ", three-phase and CUB" : "",
                                            o.bench ? " (then timing)" : "");
    const gpu_report report = run_gpu(data, flags ? &*flags : nullptr, request);
    const gpu_result& result = report.results.front();
    const double selectivity = data.size() > 0 ? static_cast<double>(result.count) / static_cast<double>(data.size()) : 0.0;

    std::cout << "kept " << result.count << " of " << data.size() << " (" << describe(spec) << "), selectivity "
              << percent(selectivity) << '\n';
    scanlab::app_report out = app.new_report();
    nlohmann::json& json = out.result();
    json["input"] = o.input.empty() ? "generated " + request.dataset : o.input;
    json["n"] = data.size();
    json["dtype"] = std::string(io::name(data.type()));
    json["predicate"] = describe(spec);
    json["count"] = result.count;
    json["selectivity"] = selectivity;

    app.write_output(result.kept);
    if (!indices_path.empty()) {
      io::write_dataset(indices_path, result.indices);
      spdlog::info("wrote {} ({} x int64)", indices_path, result.indices.size());
    }

    if (o.validate) {
      spdlog::info("validating against the CPU (std::copy_if)");
      const reference ref = cpu_reference(data, spec, flags ? &*flags : nullptr);
      scanlab::text_table table({"implementation", "count", "check"});
      const std::string ref_name = spec.kind == test_kind::unique ? "CPU std::unique_copy" : "CPU std::copy_if";
      table.add_row({ref_name, std::to_string(ref.kept.size()), "reference"});
      for (const gpu_result& r : report.results) {
        std::string problem = difference(r.kept, ref.kept);
        if (problem.empty() && r.indices.size() > 0) {
          if (static_cast<std::size_t>(r.indices.size()) != ref.positions.size() ||
              std::memcmp(r.indices.data(), ref.positions.data(), ref.positions.size() * 8) != 0) {
            problem = "indices differ";
          }
        }
        const std::string check = problem.empty() ? (r.indices.size() > 0 ? "pass (values and indices)" : "pass")
                                                  : "FAIL: " + problem;
        table.add_row({r.implementation, std::to_string(r.count), check});
        // The first result is scanlab's; the others (CUB's) are checked against the same reference.
        out.add({&r == &report.results.front() ? ref_name : ref_name + " (" + r.implementation + "'s result)",
                 problem.empty(),
                 r.implementation + ": kept " + std::to_string(r.count) + " of " + std::to_string(data.size()) +
                     ", " + check});
      }
      std::cout << '\n';
      table.print(std::cout);
    }

    if (o.bench) {
      scanlab::bench::report bench = app.print_bench(report.rows);
      std::cout << "bytes: the input read once (and the flags), the kept items written once (and their indices); "
                   "selectivity "
                << percent(selectivity) << "\n";
      out.set_bench(std::move(bench));
    }
    return app.finish(out, "a result differs from the CPU reference (see the check column)");
  });
}
