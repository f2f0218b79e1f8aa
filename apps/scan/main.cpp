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
#include "scan/scan_stream.hpp"

#include "common/bench.hpp"
#include "common/cli.hpp"
#include "common/dataset.hpp"
#include "common/report.hpp"
#include "common/slices.hpp"
#include "common/values.hpp"

#include <spdlog/spdlog.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <optional>
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
// within (k + 4) eps relative (each product rounds once). Fed in pieces (the streaming path
// checks each slice while it is in memory): the running values carry from one to the next.
template <class T, class Acc>
class reference {
 public:
  // heads: whether each item starts a segment (segment_heads), or empty: one segment.
  reference(const std::vector<char>& heads, op_id op, bool exclusive, const io::host_array& init)
      : heads_(heads), op_(op), exclusive_(exclusive), has_init_(init.size() == 1) {
    if (has_init_) init_ = init.as<Acc>()[0];
  }

  // Checks the next x.size() items, whose results are `got`; false from the first difference on.
  bool compare_next(std::span<const T> x, std::span<const Acc> got) {
    constexpr bool float_arith = std::is_floating_point_v<Acc>;
    for (std::size_t j = 0; j < x.size() && problem_.empty(); ++j) {
      const std::int64_t i = done_ + static_cast<std::int64_t>(j);
      const Acc v = static_cast<Acc>(x[j]);
      const bool head = heads_.empty() ? i == 0 : heads_[static_cast<std::size_t>(i)] != 0;
      if (head) {
        ++segment_;
        terms_ = has_init_ ? 1 : 0;
        magnitude_ = has_init_ ? std::fabs(static_cast<double>(init_)) : 0;
        exact_ = has_init_ ? static_cast<long double>(init_) : 0;
        running_ = init_;
      }
      const bool first = head && !has_init_;
      // The value this item's output holds (exclusive: before folding x[i] in).
      const auto fold = [&] {
        if constexpr (float_arith) {
          if (op_ == op_id::sum) {
            exact_ = first ? static_cast<long double>(v) : exact_ + static_cast<long double>(v);
            magnitude_ += std::fabs(static_cast<double>(v));
          } else if (op_ == op_id::prod) {
            exact_ = first ? static_cast<long double>(v) : exact_ * static_cast<long double>(v);
          }
          terms_ += 1;
        }
        running_ = first ? v : ops::apply(op_, running_, v);
      };
      if (!exclusive_) fold();
      if (!agrees(got[j])) {
        problem_ = "item " + std::to_string(i) + (segment_ > 0 ? " (segment " + std::to_string(segment_) + ")" : "") +
                   ": got " + io::format_value(got[j]) + ", the CPU reference gives " +
                   io::format_value(expected());
        return false;
      }
      if (exclusive_) fold();
    }
    if (!problem_.empty()) return false;
    done_ += static_cast<std::int64_t>(x.size());
    return true;
  }

  // The verdict on everything compared so far.
  [[nodiscard]] scanlab::check verdict(const std::string& who) const {
    if (!problem_.empty()) return {who, false, problem_};
    return {who, true, std::to_string(done_) + " items agree" +
                           (segment_ > 0 ? " (" + std::to_string(segment_ + 1) + " segments)" : "")};
  }

  // The whole input at once.
  scanlab::check compare(std::span<const T> x, const io::host_array& result, const std::string& who) {
    compare_next(x, result.as<Acc>());
    return verdict(who);
  }

 private:
  [[nodiscard]] bool uses_long_double() const {
    return std::is_floating_point_v<Acc> && (op_ == op_id::sum || op_ == op_id::prod);
  }
  [[nodiscard]] Acc expected() const { return uses_long_double() ? static_cast<Acc>(exact_) : running_; }
  [[nodiscard]] bool agrees(Acc got) const {
    if constexpr (std::is_floating_point_v<Acc>) {
      const Acc want = expected();
      if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
      if (!uses_long_double()) return got == want && std::signbit(got) == std::signbit(want);
      if (std::isinf(want) || std::isinf(got)) {
        // Near the type's range the rounding may tip a value over: compare with the running value too.
        return got == want || got == running_;
      }
      constexpr double eps = std::numeric_limits<Acc>::epsilon();
      const double slack = op_ == op_id::sum
                               ? (terms_ + 2) * eps * magnitude_ + std::numeric_limits<Acc>::denorm_min()
                               : (terms_ + 4) * eps * std::fabs(static_cast<double>(want)) +
                                     (terms_ + 1) * std::numeric_limits<Acc>::min();
      return std::fabs(static_cast<double>(got) - static_cast<double>(exact_)) <= slack;
    } else {
      return got == running_;
    }
  }

  const std::vector<char>& heads_;
  op_id op_;
  bool exclusive_;
  bool has_init_;
  Acc init_{};
  // The running state: items compared, the segment, the running value in Acc (integers, min,
  // max), and for float sums and products in long double, with |init| + sum |x| and the terms.
  std::int64_t done_ = 0;
  std::int64_t segment_ = -1;
  Acc running_{};
  long double exact_ = 0;
  double magnitude_ = 0;
  double terms_ = 0;
  std::string problem_;
};

// scanlab's result (and CUB's) against the CPU reference.
std::vector<scanlab::check> validate(const io::host_array& x, const scanlab::scan_app::segments& segs,
                                   const scanlab::scan_app::gpu_report& report, op_id op, bool exclusive) {
  const std::vector<char> heads = segment_heads(x.size(), segs);
  return io::visit(x.type(), [&]<class T>() {
    const auto check = [&]<class Acc>() {
      std::vector<scanlab::check> checks{
          reference<T, Acc>(heads, op, exclusive, report.init).compare(x.as<T>(), report.result, "CPU reference")};
      if (report.cub) {
        checks.push_back(reference<T, Acc>(heads, op, exclusive, report.init)
                             .compare(x.as<T>(), *report.cub, "CPU reference (" + report.cub_call + "'s result)"));
      }
      return checks;
    };
    if (ops::keeps_type(op)) return check.template operator()<ops::result_t<T, op_id::max>>();
    return check.template operator()<ops::result_t<T, op_id::sum>>();
  });
}

// The streaming path (--device-memory, or an input larger than the GPU's free memory): the
// input (memory-mapped where it is a file) scanned slice by slice with the streaming library,
// the running value carried between slices; each slice checked against the CPU reference with
// --validate and appended to -o (stream_writer: a temporary file renamed over the output at
// the end). Whole scans only.
int run_streaming(scanlab::cli::app& app, const io::input_array& x, op_id op, bool exclusive,
                  const std::optional<io::host_array>& user_init, const scanlab::cli::path_choice& path) {
  const auto& o = app.options();
  const std::int64_t n = x.size();
  const io::dtype result_type = ops::result_dtype(x.type(), op);
  const std::string kind = std::string(exclusive ? "exclusive " : "inclusive ") + std::string(ops::name(op));
  spdlog::info("{} of {} x {} ({}), streamed through at most {} of device memory ({})", kind, n, io::name(x.type()),
               io::name(result_type), scanlab::cli::show_bytes(static_cast<double>(path.device_bytes)), path.reason);
  std::optional<io::stream_writer> writer;
  if (!o.output.empty()) writer.emplace(o.output, result_type, std::vector<std::int64_t>{n});
  scanlab::cli::catch_interrupts();
  scanlab::stream_workspace ws(path.device_bytes);
  const std::vector<char> no_segments;
  io::host_array init;          // what the CPU reference starts from, as the in-memory path reports it
  io::host_array shown;          // the first four results and the last
  std::optional<scanlab::check> cpu_check;

  const scanlab::cli::stream_timing timing = io::visit(x.type(), [&]<class T>() {
    return ops::visit(op, [&]<op_id Op>() {
      using Acc = ops::result_t<T, Op>;
      // The library's scans always take an initial value: the identity where none is given
      // (exact: identity op x == x bit for bit, -0.0 + x included).
      Acc carry = user_init ? user_init->as<Acc>()[0] : ops::identity<Acc>(Op);
      if (user_init || exclusive || !std::is_same_v<Acc, T>) {
        init = io::host_array(result_type, {1});
        init.as<Acc>()[0] = carry;
      }
      reference<T, Acc> cpu(no_segments, op, exclusive, init);
      const std::span<const T> xs = x.as<T>();
      const auto slice_items = std::max<std::uint64_t>(1, app.stream_slice_bytes() / sizeof(T));
      scanlab::host_buffer buffer(static_cast<std::size_t>(std::min<std::uint64_t>(slice_items, static_cast<std::uint64_t>(n))) * sizeof(Acc));
      auto* out = reinterpret_cast<Acc*>(buffer.data());
      std::vector<Acc> head;  // the first four results and the last, for the summary line
      Acc last{};
      const auto step = [&](std::int64_t begin, std::int64_t count) {
        const std::span<const T> slice = xs.subspan(static_cast<std::size_t>(begin), static_cast<std::size_t>(count));
        const Acc* in = nullptr;
        if constexpr (std::is_same_v<T, Acc>) {
          in = slice.data();
        } else {  // the library scans in one type: convert the slice into the output buffer, scan it in place
          for (std::size_t i = 0; i < slice.size(); ++i) out[i] = static_cast<Acc>(slice[i]);
          in = out;
        }
        const Acc last_in = in[count - 1];  // before an in-place scan overwrites it
        const double seconds = scanlab::cli::timed(
            [&] { scanlab::scan_app::stream_scan<Acc, Op>(ws, in, out, count, carry, exclusive); });
        carry = exclusive ? ops::apply(op, out[count - 1], last_in) : out[count - 1];
        if (o.validate) cpu.compare_next(slice, std::span<const Acc>(out, static_cast<std::size_t>(count)));
        for (std::int64_t i = begin; i < std::min<std::int64_t>(begin + count, 4); ++i) head.push_back(out[i - begin]);
        last = out[count - 1];
        if (writer) writer->write(out, static_cast<std::size_t>(count) * sizeof(Acc));
        return seconds;
      };
      const auto t = scanlab::cli::for_each_slice(app.name(), !o.quiet, n, sizeof(T), app.stream_slice_bytes(), step);
      if (o.validate) cpu_check = cpu.verdict("CPU reference");
      shown = io::host_array(result_type, {static_cast<std::int64_t>(head.size()) + (n > 4 ? 1 : 0)});
      for (std::size_t i = 0; i < head.size(); ++i) shown.as<Acc>()[i] = head[i];
      if (n > 4) shown.as<Acc>()[4] = last;
      return t;
    });
  });
  if (writer) writer->commit();

  std::cout << kind << " of " << n << " x " << io::name(x.type()) << " (" << io::name(result_type) << ")";
  if (n > 0) {
    std::cout << ":";
    for (std::int64_t i = 0; i < std::min<std::int64_t>(n, 4); ++i) std::cout << ' ' << io::text_of(shown, i);
    if (n > 5) std::cout << " ...";
    if (n > 4) std::cout << ' ' << io::text_of(shown, 4);
  }
  std::cout << '\n';

  scanlab::app_report out = app.new_report();
  nlohmann::json& json = out.result();
  json["n"] = n;
  json["dtype"] = io::name(x.type());
  json["op"] = std::string(ops::name(op));
  json["exclusive"] = exclusive;
  json["result_dtype"] = io::name(result_type);
  json["segmented_by"] = nullptr;
  json["init"] = init.size() == 1 ? nlohmann::json(io::text_of(init, 0)) : nlohmann::json(nullptr);
  json["last"] = n > 0 ? nlohmann::json(io::text_of(shown, shown.size() - 1)) : nlohmann::json(nullptr);
  json["cub_call"] = "not run: the streaming path has no CUB counterpart";
  const std::uint64_t host_bytes = x.bytes() + static_cast<std::uint64_t>(n) * io::size_of(result_type);
  json["streaming"] = scanlab::cli::stream_summary(path, ws, timing, host_bytes, o.bench, std::cout);
  if (cpu_check) {
    out.add(std::move(*cpu_check));
    scanlab::print_checks(std::cout, out.checks());
    std::cout << "CUB: not run on the streaming path\n";
  }
  if (writer) spdlog::info("wrote {} ({} x {})", o.output, n, io::name(result_type));
  return app.finish(out);
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
  app.add_streaming_options();
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
      "in C order).\n"
      "Inputs larger than GPU memory: a .npy or raw file is memory-mapped, not read, and streamed through "
      "the GPU in slices (scanlab::streaming scans) when the input and the result would not fit in the free "
      "device memory, or whatever their size with --device-memory LIMIT; the results go to -o (.npy or raw) as "
      "they come, into a temporary file renamed over it at the end (a failed or interrupted run leaves no "
      "file under the name); a progress bar shows on a terminal; --validate checks every slice against the "
      "CPU reference (CUB is not run); --bench reports the GB/s of host data. Whole scans only (no --keys, "
      "--offsets).");

  return app.run(argc, argv, [&] {
    const auto& o = app.options();
    const op_id op = app.op();
    const std::string op_text(ops::name(op));
    // Inputs first: a bad file, key, offset or initial value is reported before the GPU is touched.
    // A .npy or raw file is mapped, not read: read (input.take) only for the in-memory path.
    io::input_array input = app.open_input();
    if (input.shape().size() > 1) {
      spdlog::info("the input is {}-D: scanning its {} elements in C order", input.shape().size(), input.size());
    }
    scanlab::scan_app::segments segs;
    if (!keys_path.empty()) segs.keys = io::load_keys(keys_path, input.size()).bits;
    if (!offsets_path.empty()) segs.offsets = io::load_offsets(offsets_path, input.size());
    const io::dtype result_type = ops::result_dtype(input.type(), op);
    scanlab::scan_app::gpu_request request;
    request.op = op;
    request.exclusive = exclusive;
    if (!init_text.empty()) request.init = io::parse_value("--init", init_text, result_type);

    app.select_device();
    // The in-memory path holds the input, the result and, with --validate or --bench, CUB's result.
    const std::uint64_t result_bytes = static_cast<std::uint64_t>(input.size()) * io::size_of(result_type);
    const std::uint64_t segment_bytes = (segs.keys ? segs.keys->bytes() : 0) + segs.offsets.size() * sizeof(std::int64_t);
    const scanlab::cli::path_choice path =
        app.choose_path(input.bytes() + result_bytes * (o.validate || o.bench ? 2 : 1) + segment_bytes);
    if (path.streaming) {
      if (segs.keys || !segs.offsets.empty()) {
        throw std::runtime_error(std::string(segs.keys ? "--keys" : "--offsets") + ": the streaming path (" +
                                 path.reason + ") scans whole inputs only; a segmented scan needs the input in "
                                 "device memory");
      }
      return run_streaming(app, input, op, exclusive, request.init, path);
    }
    const io::host_array x = input.take(o.input);
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
