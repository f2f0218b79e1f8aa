// scanlab-bench: every variant of a primitive, the production path and CUB, side by side.
//
//   scanlab-bench reduce                  all reduction variants, 2^10 ... 2^30, int32 and float32
//   scanlab-bench scan --list             the scan variants, one per line
//   scanlab-bench scan --sizes 2^20,2^28 --types int32 --variants production --json scan.json
#include "suite.hpp"

#include "common/bench_report.hpp"
#include "common/cli.hpp"
#include "common/table.hpp"

#include <scanlab/error.hpp>

#include <spdlog/spdlog.h>

#include <iostream>
#include <sstream>
#include <unistd.h>

namespace {

using scanlab::bench::suite;

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// "2^10..2^30" expands to every power of two in between (step: every second exponent
// unless ":1" follows, e.g. "2^10..2^20:1"); other items are single counts.
std::vector<std::int64_t> parse_sizes(const std::string& text) {
  std::vector<std::int64_t> sizes;
  for (const std::string& item : split_list(text)) {
    const auto dots = item.find("..");
    if (dots == std::string::npos) {
      sizes.push_back(scanlab::cli::parse_count(item));
      continue;
    }
    std::string hi_text = item.substr(dots + 2);
    int step = 2;
    if (const auto colon = hi_text.find(':'); colon != std::string::npos) {
      step = std::stoi(hi_text.substr(colon + 1));
      hi_text = hi_text.substr(0, colon);
    }
    const std::int64_t lo = scanlab::cli::parse_count(item.substr(0, dots));
    const std::int64_t hi = scanlab::cli::parse_count(hi_text);
    if (lo <= 0 || (lo & (lo - 1)) != 0 || hi < lo || step < 1) {
      throw std::invalid_argument("--sizes '" + item + "': a range is 2^a..2^b[:step] with a <= b");
    }
    for (std::int64_t n = lo; n <= hi; n <<= step) sizes.push_back(n);
  }
  if (sizes.empty()) throw std::invalid_argument("--sizes: no sizes given");
  return sizes;
}

}  // namespace

int main(int argc, char** argv) {
  scanlab::cli::app app("scanlab-bench",
                        "Benchmarks scanlab's primitives (every teaching variant and the production path) "
                        "against CUB on the same input.",
                        {}, /*dataset_options=*/false);
  CLI::App& parser = app.parser();
  parser.require_subcommand(1);
  parser.fallthrough();  // --repeat, --json, --device, -v, -q also work after the subcommand

  std::vector<suite> suites = {scanlab::bench::reduce_suite(), scanlab::bench::scan_suite()};
  std::string sizes_text = "2^10..2^30";
  std::string types_text = "int32,float32";
  std::string variants_text;
  bool list = false;
  bool no_validate = false;
  for (const suite& s : suites) {
    CLI::App* sub = parser.add_subcommand(s.name, s.description);
    sub->add_flag("--list", list, "Print the variant names, one per line, and exit");
    sub->add_option("--sizes", sizes_text,
                    "Element counts: a list (1e6,2^20) and/or ranges 2^a..2^b (every second power; "
                    "2^a..2^b:1 for all)")
        ->capture_default_str();
    sub->add_option("--types", types_text, "Element types: int32, float32")->capture_default_str();
    sub->add_option("--variants", variants_text, "Only these variants (comma-separated; see --list); CUB always runs");
    sub->add_flag("--no-validate", no_validate, "Skip checking each variant's result against CUB");
  }

  return app.run(argc, argv, [&] {
    const suite* chosen = nullptr;
    for (const suite& s : suites) {
      if (parser.got_subcommand(s.name)) chosen = &s;
    }
    if (list) {
      for (const std::string& v : chosen->variants) std::cout << v << '\n';
      return 0;
    }
    scanlab::bench::suite_options opts;
    opts.sizes = parse_sizes(sizes_text);
    opts.types = split_list(types_text);
    for (const std::string& t : opts.types) {
      if (t != "int32" && t != "float32") throw std::invalid_argument("--types: '" + t + "' (choose int32, float32)");
    }
    opts.variants = split_list(variants_text);
    for (const std::string& v : opts.variants) {
      if (std::find(chosen->variants.begin(), chosen->variants.end(), v) == chosen->variants.end()) {
        throw std::invalid_argument("--variants: no variant '" + v + "' in " + chosen->name + " (see --list)");
      }
    }
    opts.validate = !no_validate;
    const bool terminal = isatty(STDERR_FILENO) != 0 && !app.options().quiet;
    std::size_t row = 0;
    opts.progress = [&](const std::string& label) {
      ++row;
      if (terminal) {
        std::cerr << "\r\033[K" << chosen->name << " [" << row << "] " << label << std::flush;
      } else {
        spdlog::debug("{}", label);
      }
    };

    app.select_device();
    const auto device = scanlab::bench::query_device(app.options().device);
    scanlab::bench::harness harness({.warmup = 3, .repeat = app.options().repeat});
    const double memcpy = harness.memcpy_gbps();
    spdlog::info("{}: {} SMs, {} MB L2; memcpy {} GB/s", device.name, device.sm_count, device.l2_bytes >> 20,
                 scanlab::format_fixed(memcpy, 0));
    auto results = chosen->run(harness, opts);
    if (terminal) std::cerr << "\r\033[K" << std::flush;
    scanlab::app_report out = app.new_report();
    out.result() = {{"suite", chosen->name}, {"sizes", opts.sizes}, {"types", opts.types}, {"variants", opts.variants}};
    // Each variant's output, compared once with CUB's on the same input: one check per row that was compared.
    for (const auto& r : results) {
      if (r.validation == "pass" || r.validation.rfind("FAIL", 0) == 0) {
        out.add({"CUB (same input)", r.validation == "pass",
                 r.suite + " " + r.variant + " " + r.type + " n=" + std::to_string(r.n) + ": " + r.validation});
      }
    }
    scanlab::bench::report report = app.bench_report(std::move(results));
    scanlab::bench::print(std::cout, report);
    out.set_bench(std::move(report));
    return app.finish(out, "some variants gave a wrong result (see the check column)");
  });
}
