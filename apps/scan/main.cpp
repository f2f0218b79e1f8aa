// scanlab-scan: prefix sums, products, minima or maxima of a dataset on the GPU, inclusive or
// exclusive, whole or restarting at segment boundaries (by key, by offsets), checked against
// a CPU reference and CUB, and timed against CUB.
//
//   scanlab-scan -i x.npy -o c.npy                          c = np.cumsum(x) (int64 for int32 data)
//   scanlab-scan -i x.npy --op max -o m.npy                 m = np.maximum.accumulate(x)
//   scanlab-scan -i x.npy --exclusive --init 5              5, 5 + x[0], 5 + x[0] + x[1], ...
//   scanlab-scan -i x.npy --keys k.npy                      restarts wherever k changes
//   scanlab-scan -i x.npy --offsets o.npy                   restarts at every offset
//   scanlab-scan --n 2^28 --dtype float32 --validate --bench
//
// Result types (NumPy's np.cumsum / np.cumprod): integer sums and products in 64 bits (int64
// for signed data, uint64 for unsigned, wrapping on overflow), floats in their own type; min
// and max in the data's type, NaN-aware (a NaN stays from where it appears), -0.0 below +0.0.
#include "scan/scan_gpu.hpp"

#include "common/bench.hpp"
#include "common/cli.hpp"
#include "common/dataset.hpp"
#include "common/report.hpp"
#include "common/values.hpp"

#include <spdlog/spdlog.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace {

namespace io = scanlab::io;
namespace ops = scanlab::ops;
using ops::op_id;

// Whether item i starts a segment, on the CPU: the first item, a changed key, or an offset.
std::vector<char> segment_heads(std::int64_t n, const scanlab::scan_app::segments& segs) {
  std::vector<char> heads(static_cast<std::size_t>(n), 0);
  if (n > 0) heads[0] = 1;
  for (const std::int64_t o : segs.keys ? io::run_offsets(*segs.keys) : segs.offsets) {
    if (o < n) heads[static_cast<std::size_t>(o)] = 1;
  }
  return heads;
}

// The CPU reference item by item, and the first item where `got` leaves it: min, max and
// integers exactly (integers wrap, as on the GPU); float sums in long double, within
// (k + 2) eps (|init| + sum |x|) for a prefix of k items in any grouping; float products
// within (k + 4) eps relative (each product rounds once).
template <class T, class Acc>
class reference {
 public:
  reference(std::span<const T> x, const std::vector<char>& heads, op_id op, bool exclusive,
            const io::host_array& init)
      : x_(x), heads_(heads), op_(op), exclusive_(exclusive), has_init_(init.size() == 1) {
    if (has_init_) init_ = init.as<Acc>()[0];
  }

  scanlab::check compare(const io::host_array& result, const std::string& who) const {
    const std::span<const Acc> got = result.as<Acc>();
    constexpr bool float_arith = std::is_floating_point_v<Acc>;
    long double exact = 0;      // float sums and products: the running value in long double
    double magnitude = 0;       // float sums: |init| + sum |x| of the prefix
    double terms = 0;
    Acc running{};              // integers, min and max: the running value in Acc
    std::int64_t segment = -1;
    for (std::size_t i = 0; i < x_.size(); ++i) {
      const Acc v = static_cast<Acc>(x_[i]);
      if (heads_[i]) {
        ++segment;
        terms = has_init_ ? 1 : 0;
        magnitude = has_init_ ? std::fabs(static_cast<double>(init_)) : 0;
        exact = has_init_ ? static_cast<long double>(init_) : 0;
        running = init_;
      }
      const bool first = heads_[i] && !has_init_;
      // The value this item's output holds (exclusive: before folding x[i] in).
      const auto fold = [&] {
        if constexpr (float_arith) {
          if (op_ == op_id::sum) {
            exact = first ? static_cast<long double>(v) : exact + static_cast<long double>(v);
            magnitude += std::fabs(static_cast<double>(v));
          } else if (op_ == op_id::prod) {
            exact = first ? static_cast<long double>(v) : exact * static_cast<long double>(v);
          }
          terms += 1;
        }
        running = first ? v : ops::apply(op_, running, v);
      };
      if (!exclusive_) fold();
      if (!agrees(got[i], running, exact, magnitude, terms)) {
        return {who, false,
                "item " + std::to_string(i) + (heads_.size() > 0 && segment > 0 ? " (segment " + std::to_string(segment) + ")" : "") +
                    ": got " + io::format_value(got[i]) + ", the CPU reference gives " +
                    io::format_value(expected(running, exact))};
      }
      if (exclusive_) fold();
    }
    return {who, true, std::to_string(x_.size()) + " items agree" +
                           (segment > 0 ? " (" + std::to_string(segment + 1) + " segments)" : "")};
  }

 private:
  [[nodiscard]] bool uses_long_double() const {
    return std::is_floating_point_v<Acc> && (op_ == op_id::sum || op_ == op_id::prod);
  }
  [[nodiscard]] Acc expected(Acc running, long double exact) const {
    return uses_long_double() ? static_cast<Acc>(exact) : running;
  }
  [[nodiscard]] bool agrees(Acc got, Acc running, long double exact, double magnitude, double terms) const {
    if constexpr (std::is_floating_point_v<Acc>) {
      const Acc want = expected(running, exact);
      if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
      if (!uses_long_double()) return got == want && std::signbit(got) == std::signbit(want);
      if (std::isinf(want) || std::isinf(got)) {
        // Near the type's range the rounding may tip a value over: compare with the running value too.
        return got == want || got == running;
      }
      constexpr double eps = std::numeric_limits<Acc>::epsilon();
      const double slack = op_ == op_id::sum
                               ? (terms + 2) * eps * magnitude + std::numeric_limits<Acc>::denorm_min()
                               : (terms + 4) * eps * std::fabs(static_cast<double>(want)) +
                                     (terms + 1) * std::numeric_limits<Acc>::min();
      return std::fabs(static_cast<double>(got) - static_cast<double>(exact)) <= slack;
    } else {
      return got == running;
    }
  }

  std::span<const T> x_;
  const std::vector<char>& heads_;
  op_id op_;
  bool exclusive_;
  bool has_init_;
  Acc init_{};
};

// scanlab's result (and CUB's) against the CPU reference.
std::vector<scanlab::check> validate(const io::host_array& x, const scanlab::scan_app::segments& segs,
                                   const scanlab::scan_app::gpu_report& report, op_id op, bool exclusive) {
  const std::vector<char> heads = segment_heads(x.size(), segs);
  return io::visit(x.type(), [&]<class T>() {
    const auto check = [&]<class Acc>() {
      const reference<T, Acc> want(x.as<T>(), heads, op, exclusive, report.init);
      std::vector<scanlab::check> checks{want.compare(report.result, "CPU reference")};
      if (report.cub) checks.push_back(want.compare(*report.cub, "CPU reference (" + report.cub_call + "'s result)"));
      return checks;
    };
    if (ops::keeps_type(op)) return check.template operator()<ops::result_t<T, op_id::max>>();
    return check.template operator()<ops::result_t<T, op_id::sum>>();
  });
}

}  // namespace

int main(int argc, char** argv) {
  scanlab::cli::app app("scanlab-scan",
                        "Prefix sums, products, minima or maxima of a dataset on the GPU (inclusive or --exclusive), "
                        "whole or restarting at segment boundaries (--keys, --offsets), checked against a CPU "
                        "reference and CUB (--validate) and timed against CUB (--bench).");
  CLI::App& parser = app.parser();
  std::string init_text;
  std::string keys_path;
  std::string offsets_path;
  bool exclusive = false;
  app.add_op_option();
  parser.add_flag("--exclusive", exclusive,
                  "Exclusive scan: item i holds init op x[0] op ... op x[i - 1] (the first item: init)");
  parser.add_option("--init", init_text,
                    "Initial value, in the result's type, that every scan (every segment) starts from (default: "
                    "none for inclusive scans; the operator's identity for exclusive ones: 0, 1, +inf or the "
                    "type's largest value, -inf or its lowest)");
  auto* keys_option =
      parser.add_option("--keys", keys_path,
                        "Segment keys, one integer per item: a segment starts wherever the key changes (scan by key)")
          ->check(CLI::ExistingFile);
  parser
      .add_option("--offsets", offsets_path,
                  "Segment boundaries (integers, non-decreasing, within [0, n]): the scan restarts at every offset")
      ->check(CLI::ExistingFile)
      ->excludes(keys_option);
  app.footer(
      "Result types follow NumPy's np.cumsum/np.cumprod: integer sums and products in int64 (signed "
      "data) or uint64 (unsigned data), wrapping on overflow; floats in their own type; min and max "
      "in the data's type, NaN-aware. -o writes the n results as a 1-D array (a 2-D input is scanned "
      "in C order).");

  return app.run(argc, argv, [&] {
    const auto& o = app.options();
    const op_id op = app.op();
    const std::string op_text(ops::name(op));
    // Inputs first: a bad file, key, offset or initial value is reported before the GPU is touched.
    const io::host_array x = app.load_input();
    if (x.shape().size() > 1) spdlog::info("the input is {}-D: scanning its {} elements in C order", x.shape().size(), x.size());
    scanlab::scan_app::segments segs;
    if (!keys_path.empty()) segs.keys = io::load_keys(keys_path, x.size()).bits;
    if (!offsets_path.empty()) segs.offsets = io::load_offsets(offsets_path, x.size());
    const io::dtype result_type = ops::result_dtype(x.type(), op);
    scanlab::scan_app::gpu_request request;
    request.op = op;
    request.exclusive = exclusive;
    if (!init_text.empty()) request.init = io::parse_value("--init", init_text, result_type);

    app.select_device();
    request.compare = o.validate;
    request.bench = o.bench;
    request.repeat = o.repeat;
    request.dataset = app.dataset_name();
    const std::string kind = std::string(exclusive ? "exclusive " : "inclusive ") + op_text;
    const std::string segmenting = segs.keys      ? " by key"
                                   : !segs.offsets.empty() ? ", " + std::to_string(segs.offsets.size() - 1) + " segments by offsets"
                                                  : "";
    spdlog::info("{} of {} x {} ({}){}", kind, x.size(), io::name(x.type()), io::name(result_type), segmenting);
    const auto report = scanlab::scan_app::run_gpu(x, segs, request);

    const std::int64_t n = x.size();
    std::cout << kind << segmenting << " of " << n << " x " << io::name(x.type()) << " (" << io::name(result_type)
              << ")";
    if (n > 0) {
      std::cout << ":";
      for (std::int64_t i = 0; i < std::min<std::int64_t>(n, 4); ++i) std::cout << ' ' << io::text_of(report.result, i);
      if (n > 5) std::cout << " ...";
      if (n > 4) std::cout << ' ' << io::text_of(report.result, n - 1);
    }
    std::cout << '\n';

    scanlab::app_report out = app.new_report();
    nlohmann::json& json = out.result();
    json["n"] = n;
    json["dtype"] = io::name(x.type());
    json["op"] = op_text;
    json["exclusive"] = exclusive;
    json["result_dtype"] = io::name(result_type);
    json["segmented_by"] = segs.keys              ? nlohmann::json("keys")
                           : !segs.offsets.empty() ? nlohmann::json("offsets")
                                                   : nlohmann::json(nullptr);
    json["init"] = report.init.size() == 1 ? nlohmann::json(io::text_of(report.init, 0)) : nlohmann::json(nullptr);
    json["last"] = n > 0 ? nlohmann::json(io::text_of(report.result, n - 1)) : nlohmann::json(nullptr);
    json["cub_call"] = report.cub_call;
    if (o.validate) {
      for (auto& c : validate(x, segs, report, op, exclusive)) out.add(std::move(c));
      scanlab::print_checks(std::cout, out.checks());
      if (!report.cub) std::cout << "CUB: not run: " << report.cub_call << "\n";
    }
    if (o.bench) {
      scanlab::bench::report bench = app.print_bench(report.rows);
      std::cout << "bytes: the values read once, the results written once"
                << (segs.keys ? ", the keys read once" : !segs.offsets.empty() ? ", the offsets read once" : "")
                << ".\n";
      if (!segs.offsets.empty()) {
        std::cout << "CUB 3.0 has no scan by offsets: its row scans by key on segment ids made on the host "
                     "(n more keys read).\n";
      }
      out.set_bench(std::move(bench));
    }
    if (!o.output.empty()) {
      io::write_dataset(o.output, report.result);
      spdlog::info("wrote {} ({} x {})", o.output, n, io::name(result_type));
    }
    return app.finish(out);
  });
}
