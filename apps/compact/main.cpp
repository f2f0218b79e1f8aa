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
#include "compact/predicate.hpp"

#include "common/bench_report.hpp"
#include "common/cli.hpp"
#include "common/dataset.hpp"
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
  app.footer(
      "Give one predicate (none: --nonzero). -o writes the kept values in the input's dtype.");

  return app.run(argc, argv, [&] {
    const auto& o = app.options();
    if (parser.count("--gt") > 0) p.gt = gt;
    if (parser.count("--lt") > 0) p.lt = lt;
    if (tune && !o.bench) spdlog::warn("--tune is used with --bench only");
    const predicate_spec spec = choose_predicate(p);

    // Inputs and bounds first: a bad file, flag length or bound is reported before the GPU is touched.
    io::host_array data = app.load_input();
    check_dtype(spec, data.type());
    if (data.shape().size() > 1) spdlog::info("the input is {}-D: compacting its {} elements in C order",
                                              data.shape().size(), data.size());
    if (spec.kind != test_kind::flags && spec.kind != test_kind::unique) {
      io::visit(data.type(), [&]<class T>() { (void)make_value_test<T>(spec); });
    }
    std::optional<std::vector<std::uint8_t>> flags;
    if (spec.kind == test_kind::flags) {
      const io::host_array flag_array = app.load_file(spec.flags_file);
      if (flag_array.size() != data.size()) {
        throw std::runtime_error("--flags " + spec.flags_file + " has " + std::to_string(flag_array.size()) +
                                 " elements, the input has " + std::to_string(data.size()));
      }
      flags = to_flags(flag_array);
    }

    app.select_device();
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
