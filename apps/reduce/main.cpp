// scanlab-reduce: the sum, product, minimum or maximum of a dataset on the GPU (one value, or
// one per segment, or one per run of equal keys), checked against a CPU reference and CUB,
// and timed against CUB.
//
//   scanlab-reduce -i x.npy                           the sum (int64 for int32 data, as np.sum)
//   scanlab-reduce -i x.npy --op max -o m.npy         the maximum, written as a 1-element array
//   scanlab-reduce -i x.npy --offsets o.npy -o s.npy  one sum per segment x[o[s], o[s + 1])
//   scanlab-reduce -i x.npy --keys k.npy -o s.npy --keys-out u.npy
//                                                     one sum per run of equal consecutive keys
//                                                     (CUB's ReduceByKey), u the key of each run
//   scanlab-reduce --n 2^28 --dtype float32 --validate --bench
//
// Result types (NumPy's np.sum / np.prod): integer sums and products in 64 bits (int64 for
// signed data, uint64 for unsigned, wrapping on overflow), floats in their own type; min
// and max in the data's type. min and max follow NumPy with NaNs: a NaN anywhere gives NaN.
#include "reduce/reduce_gpu.hpp"
#include "reduce/reduce_stream.hpp"

#include "common/bench_report.hpp"
#include "common/cli.hpp"
#include "common/dataset.hpp"
#include "common/slices.hpp"
#include "common/table.hpp"
#include "common/values.hpp"

#include <spdlog/spdlog.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
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
using scanlab::reduce_app::reduce_op;

// The CPU reference of one segment, in the result type, and how far a correct GPU result may
// lie from it: min, max and integers exactly (integers wrap on the unsigned 64-bit pattern,
// which C++ defines); float sums in long double, within n * eps * sum |x| (any summation
// order); float products within (n + 4) * eps relative (each product rounds once).
template <class Acc>
struct reference {
  Acc value;
  double slack = 0;  // absolute; exact (bits, or both NaN) when 0 and not `approximate`
  bool approximate = false;
};

// The CPU reference fed in pieces (the streaming path checks each slice while it is in memory).
template <class T, class Acc>
class cpu_reduce {
 public:
  cpu_reduce(reduce_op op, Acc init)
      : op_(op), value_(init), exact_(init), magnitude_(std::fabs(static_cast<long double>(init))) {
    if constexpr (std::is_integral_v<Acc>) bits_ = static_cast<std::uint64_t>(init);
  }

  void add(std::span<const T> x) {
    if constexpr (std::is_same_v<T, Acc>) {  // min and max keep the data's type
      if (op_ == reduce_op::min || op_ == reduce_op::max) {
        for (const T v : x) value_ = scanlab::ops::apply(op_, value_, v);  // NaN-aware, -0.0 below +0.0
        return;
      }
    }
    terms_ += static_cast<double>(x.size());
    if constexpr (std::is_floating_point_v<Acc>) {
      for (const T v : x) {
        if (op_ == reduce_op::sum) {
          exact_ += v;
          magnitude_ += std::fabs(static_cast<long double>(v));
        } else {
          exact_ *= v;
        }
      }
    } else {
      for (const T v : x) {
        const auto u = static_cast<std::uint64_t>(static_cast<Acc>(v));
        bits_ = op_ == reduce_op::sum ? bits_ + u : bits_ * u;
      }
    }
  }

  [[nodiscard]] reference<Acc> result() const {
    if (op_ == reduce_op::min || op_ == reduce_op::max) return {value_};
    if constexpr (std::is_floating_point_v<Acc>) {
      constexpr double eps = std::numeric_limits<Acc>::epsilon();
      const double terms = terms_ + 1;
      const auto value = static_cast<Acc>(exact_);
      const double slack = op_ == reduce_op::sum
                               ? terms * eps * static_cast<double>(magnitude_) + std::numeric_limits<Acc>::denorm_min()
                               : (terms + 4) * eps * std::fabs(static_cast<double>(value)) +
                                     terms * std::numeric_limits<Acc>::min();
      return {value, slack, true};
    } else {
      return {static_cast<Acc>(bits_)};
    }
  }

 private:
  reduce_op op_;
  Acc value_;               // min, max
  std::uint64_t bits_ = 0;  // integer sums and products, on the unsigned 64-bit pattern
  long double exact_;   // float sums and products
  long double magnitude_;
  double terms_ = 0;
};

template <class T, class Acc>
reference<Acc> reduce_cpu(std::span<const T> x, reduce_op op, Acc init) {
  cpu_reduce<T, Acc> cpu(op, init);
  cpu.add(x);
  return cpu.result();
}

template <class Acc>
bool agrees(Acc got, const reference<Acc>& want) {
  if constexpr (std::is_floating_point_v<Acc>) {
    if (std::isnan(want.value) || std::isnan(got)) return std::isnan(want.value) && std::isnan(got);
    if (!want.approximate || std::isinf(want.value) || std::isinf(got)) {
      return got == want.value && (want.approximate || std::signbit(got) == std::signbit(want.value));
    }
    return std::fabs(static_cast<double>(got) - static_cast<double>(want.value)) <= want.slack;
  } else {
    return got == want.value;
  }
}


// What the results are checked by: the whole input, segments by offsets, or the runs of
// equal keys that the CPU finds (their offsets and the key of each run).
struct segmentation {
  std::vector<std::int64_t> offsets;      // empty: the whole input
  std::optional<io::key_array> run_keys;  // by key: the key of each run
};

// The runs of keys `bits` (io::load_keys) as the CPU finds them; `type`: the keys' file dtype.
segmentation runs_of(const io::host_array& bits, io::dtype type) {
  segmentation by{io::run_offsets(bits), std::nullopt};
  const std::int64_t runs = static_cast<std::int64_t>(by.offsets.size()) - 1;
  io::host_array run_keys(bits.type(), {runs});
  io::visit(bits.type(), [&]<class K>() {
    for (std::size_t r = 0; r < static_cast<std::size_t>(runs); ++r) {
      run_keys.as<K>()[r] = bits.as<K>()[static_cast<std::size_t>(by.offsets[r])];
    }
  });
  by.run_keys = io::key_array{std::move(run_keys), type};
  return by;
}

// Where a run's key differs (bit patterns of one type), or -1.
std::int64_t first_key_difference(const io::host_array& got, const io::host_array& want) {
  return io::visit(want.type(), [&]<class K>() {
    for (std::int64_t r = 0; r < want.size(); ++r) {
      if (got.as<K>()[static_cast<std::size_t>(r)] != want.as<K>()[static_cast<std::size_t>(r)]) return r;
    }
    return std::int64_t{-1};
  });
}

// scanlab's values (and CUB's) against the CPU reference, segment by segment (by key: the
// number of runs and each run's key first).
template <class T, class Acc>
std::vector<scanlab::check> validate_typed(std::span<const T> xs, const segmentation& by,
                                         const scanlab::reduce_app::gpu_report& report, reduce_op op) {
  const std::vector<std::int64_t>& offsets = by.offsets;
  const std::int64_t segments = offsets.empty() ? 1 : static_cast<std::int64_t>(offsets.size()) - 1;
  const std::string unit = by.run_keys ? "run" : "segment";
  const Acc init = report.init.as<Acc>()[0];
  std::vector<reference<Acc>> want;
  for (std::int64_t s = 0; s < segments; ++s) {
    const std::int64_t b = offsets.empty() ? 0 : offsets[static_cast<std::size_t>(s)];
    const auto e = offsets.empty() ? static_cast<std::int64_t>(xs.size()) : offsets[static_cast<std::size_t>(s) + 1];
    want.push_back(
        reduce_cpu<T, Acc>(xs.subspan(static_cast<std::size_t>(b), static_cast<std::size_t>(e - b)), op, init));
  }
  const auto compare = [&](const io::host_array& got, const io::host_array* got_keys, const std::string& who) {
    if (by.run_keys) {
      if (got.size() != segments || got_keys == nullptr || got_keys->size() != segments) {
        return scanlab::check{who, false,
                              "got " + std::to_string(got.size()) + " runs, the CPU reference finds " +
                                  std::to_string(segments)};
      }
      if (const std::int64_t r = first_key_difference(*got_keys, by.run_keys->bits); r >= 0) {
        return scanlab::check{who, false,
                              "run " + std::to_string(r) + ": key " +
                                  io::text_of(io::keys_as(*got_keys, by.run_keys->type), r) +
                                  ", the CPU reference gives " +
                                  io::text_of(io::keys_as(by.run_keys->bits, by.run_keys->type), r)};
      }
    }
    const std::span<const Acc> g = got.as<Acc>();
    for (std::int64_t s = 0; s < segments; ++s) {
      const auto i = static_cast<std::size_t>(s);
      if (!agrees(g[i], want[i])) {
        return scanlab::check{who, false,
                              (segments > 1 || by.run_keys ? unit + " " + std::to_string(s) + ": " : std::string()) +
                                  "got " + io::text_of(got, s) + ", the CPU reference gives " +
                                  io::format_value(want[i].value)};
      }
    }
    if (by.run_keys) return scanlab::check{who, true, std::to_string(segments) + " runs agree (count, keys, values)"};
    return scanlab::check{who, true, segments > 1 ? std::to_string(segments) + " segments agree" : "agrees"};
  };
  const auto keys_of = [](const std::optional<io::host_array>& keys) { return keys ? &*keys : nullptr; };
  std::vector<scanlab::check> checks{compare(report.result, keys_of(report.keys), "CPU reference")};
  if (report.cub) {
    checks.push_back(compare(*report.cub, keys_of(report.cub_keys), "CPU reference (" + report.cub_call + "'s result)"));
  }
  return checks;
}

std::vector<scanlab::check> validate(const io::host_array& x, const segmentation& by,
                                   const scanlab::reduce_app::gpu_report& report, reduce_op op) {
  return io::visit(x.type(), [&]<class T>() {
    if (op == reduce_op::min || op == reduce_op::max) {
      return validate_typed<T, scanlab::reduce_app::result_t<T, reduce_op::max>>(x.as<T>(), by, report, op);
    }
    return validate_typed<T, scanlab::reduce_app::result_t<T, reduce_op::sum>>(x.as<T>(), by, report, op);
  });
}

// The first eight values of an array, after `label`: "label: v0 v1 ... v7 ...".
void print_first(const std::string& label, const io::host_array& values) {
  std::cout << label << ":";
  for (std::int64_t i = 0; i < std::min<std::int64_t>(values.size(), 8); ++i) std::cout << ' ' << io::text_of(values, i);
  std::cout << (values.size() > 8 ? " ...\n" : "\n");
}

// The values as text, up to 1024 of them (null beyond: see -o).
nlohmann::json first_values(const io::host_array& values) {
  if (values.size() > 1024) return nullptr;
  nlohmann::json texts = nlohmann::json::array();
  for (std::int64_t i = 0; i < values.size(); ++i) texts.push_back(io::text_of(values, i));
  return texts;
}

// The report's fields that both paths fill alike (docs/json-schema.md).
nlohmann::json& report_fields(scanlab::app_report& report, std::int64_t n, io::dtype type, const std::string& op_text,
                              io::dtype result_type) {
  nlohmann::json& json = report.result();
  json["n"] = n;
  json["dtype"] = io::name(type);
  json["op"] = op_text;
  json["result_dtype"] = io::name(result_type);
  return json;
}

// The streaming path (--device-memory, or an input larger than the GPU's free memory): the
// input (memory-mapped where it is a file) reduced slice by slice with the streaming library,
// each slice fed to the CPU reference too with --validate. Whole reductions only.
int run_streaming(scanlab::cli::app& app, const io::input_array& x, reduce_op op,
                  const std::optional<io::host_array>& init, const scanlab::cli::path_choice& path) {
  const auto& o = app.options();
  const std::string op_text(scanlab::ops::name(op));
  const io::dtype result_type = scanlab::reduce_app::result_dtype(x.type(), op);
  spdlog::info("{} of {} x {} ({}), streamed through at most {} of device memory ({})", op_text, x.size(),
               io::name(x.type()), io::name(result_type),
               scanlab::cli::show_bytes(static_cast<double>(path.device_bytes)), path.reason);
  scanlab::cli::catch_interrupts();
  scanlab::stream_workspace ws(path.device_bytes);
  io::host_array result(result_type, {1});
  std::optional<scanlab::check> cpu_check;
  const scanlab::cli::stream_timing timing = io::visit(x.type(), [&]<class T>() {
    return scanlab::ops::visit(op, [&]<reduce_op Op>() {
      using Acc = scanlab::reduce_app::result_t<T, Op>;
      const Acc start = init ? init->as<Acc>()[0] : scanlab::ops::identity<Acc>(Op);
      Acc acc = start;
      cpu_reduce<T, Acc> cpu(op, start);
      const std::span<const T> xs = x.as<T>();
      const auto step = [&](std::int64_t begin, std::int64_t count) {
        const std::span<const T> slice = xs.subspan(static_cast<std::size_t>(begin), static_cast<std::size_t>(count));
        const double seconds = scanlab::cli::timed(
            [&] { scanlab::reduce_app::stream_reduce<T, Op>(ws, slice.data(), count, acc); });
        if (o.validate) cpu.add(slice);
        return seconds;
      };
      const auto t = scanlab::cli::for_each_slice(app.name(), !o.quiet, x.size(), sizeof(T), app.stream_slice_bytes(), step);
      result.as<Acc>()[0] = acc;
      if (o.validate) {
        const reference<Acc> want = cpu.result();
        const bool ok = agrees(acc, want);
        cpu_check = scanlab::check{"CPU reference", ok,
                               ok ? "agrees (streamed slice by slice)"
                                  : "got " + io::text_of(result, 0) + ", the CPU reference gives " +
                                        io::format_value(want.value)};
      }
      return t;
    });
  });
  std::cout << op_text << " = " << io::text_of(result, 0) << " (" << io::name(result_type) << ")\n";

  scanlab::app_report out = app.new_report();
  nlohmann::json& json = report_fields(out, x.size(), x.type(), op_text, result_type);
  json["segments"] = nullptr;
  json["runs"] = nullptr;
  json["values"] = first_values(result);
  json["keys"] = nullptr;
  json["cub_call"] = "not run: the streaming path has no CUB counterpart";
  json["streaming"] = scanlab::cli::stream_summary(path, ws, timing, x.bytes(), o.bench, std::cout);
  if (cpu_check) {
    out.add(std::move(*cpu_check));
    scanlab::print_checks(std::cout, out.checks());
    std::cout << "CUB: not run on the streaming path\n";
  }
  if (!o.output.empty()) {
    io::write_dataset(o.output, result);
    spdlog::info("wrote {} (1 x {})", o.output, io::name(result_type));
  }
  return app.finish(out);
}

}  // namespace

int main(int argc, char** argv) {
  scanlab::cli::app app("scanlab-reduce",
                        "Sum, product, minimum or maximum of a dataset on the GPU, whole, by segments "
                        "(--offsets) or by runs of equal keys (--keys), checked against a CPU reference and CUB "
                        "(--validate) and timed against CUB (--bench).");
  CLI::App& parser = app.parser();
  std::string init_text;
  std::string offsets_path;
  std::string keys_path;
  std::string keys_out_path;
  app.add_op_option();
  parser.add_option("--init", init_text,
                    "Initial value, in the result's type (default: the operator's identity: 0, 1, +inf or the "
                    "type's largest value, -inf or its lowest)");
  auto* offsets_option =
      parser
          .add_option("--offsets", offsets_path,
                      "Segment boundaries (integers, non-decreasing, within [0, n]): one result per segment "
                      "x[o[s], o[s + 1]); an empty segment gives the initial value")
          ->check(CLI::ExistingFile);
  auto* keys_option =
      parser
          .add_option("--keys", keys_path,
                      "Segment keys, one integer per item: one result per run of equal consecutive keys (reduce "
                      "by key, as CUB's ReduceByKey; the initial value is folded into every run; n = 0: no runs)")
          ->check(CLI::ExistingFile)
          ->excludes(offsets_option);
  parser
      .add_option("--keys-out", keys_out_path,
                  "With --keys: writes the key of each run (in the keys' dtype), one per result of -o")
      ->needs(keys_option);
  app.add_streaming_options();
  app.footer(
      "Result types follow NumPy's np.sum/np.prod: integer sums and products in int64 (signed data) "
      "or uint64 (unsigned data), wrapping on overflow; floats in their own type; min and max in the "
      "data's type, a NaN anywhere giving NaN. -o writes the result as an array (one element, or one "
      "per segment or run).\n"
      "Inputs larger than GPU memory: a .npy or raw file is memory-mapped, not read, and streamed through "
      "the GPU in slices (scanlab::streaming::reduce) when it would not fit in the free device memory, or "
      "whatever its size with --device-memory LIMIT; a progress bar shows on a terminal; --validate checks "
      "against the CPU reference computed slice by slice (CUB is not run); --bench reports the GB/s of host "
      "data. The streaming path reduces whole inputs only (no --offsets, --keys).");

  return app.run(argc, argv, [&] {
    const auto& o = app.options();
    const reduce_op op = app.op();
    const std::string op_text(scanlab::ops::name(op));
    // Inputs first: a bad file, key, offset or initial value is reported before the GPU is touched.
    // A .npy or raw file is mapped, not read: read (input.take) only for the in-memory path.
    io::input_array input = app.open_input();
    if (input.shape().size() > 1) {
      spdlog::info("the input is {}-D: using its {} elements in C order", input.shape().size(), input.size());
    }
    io::segments segs;
    std::optional<io::dtype> key_type;  // --keys: the keys' dtype (--keys-out writes it)
    if (!keys_path.empty()) {
      io::key_array keys = io::load_keys(keys_path, input.size());
      key_type = keys.type;
      segs.keys = std::move(keys.bits);
    }
    if (!offsets_path.empty()) segs.offsets = io::load_offsets(offsets_path, input.size());
    const std::vector<std::int64_t>& offsets = segs.offsets;
    const io::dtype result_type = scanlab::reduce_app::result_dtype(input.type(), op);
    scanlab::reduce_app::gpu_request request;
    request.op = op;
    if (!init_text.empty()) request.init = io::parse_value("--init", init_text, result_type);

    app.select_device();
    const std::uint64_t segment_bytes = (segs.keys ? segs.keys->bytes() : 0) + offsets.size() * sizeof(std::int64_t);
    const scanlab::cli::path_choice path = app.choose_path(input.bytes() + segment_bytes);
    if (path.streaming) {
      if (segs.keys || !offsets.empty()) {
        throw std::runtime_error(std::string(segs.keys ? "--keys" : "--offsets") +
                                 ": the streaming path (" + path.reason +
                                 ") reduces whole inputs only; reduce by segments or by key needs the input in "
                                 "device memory");
      }
      return run_streaming(app, input, op, request.init, path);
    }
    const io::host_array x = input.take(o.input);
    request.compare = o.validate;
    request.bench = o.bench;
    request.repeat = o.repeat;
    request.dataset = o.input.empty() ? (o.generate.empty() ? "uniform" : o.generate) : o.input;
    spdlog::info("{} of {} x {} ({}){}", op_text, x.size(), io::name(x.type()), io::name(result_type),
                 key_type            ? " by key (" + std::string(io::name(*key_type)) + " keys)"
                 : offsets.empty() ? ""
                                   : ", " + std::to_string(offsets.size() - 1) + " segments");
    const auto report = scanlab::reduce_app::run_gpu(x, segs, request);

    const std::int64_t segments = report.result.size();
    std::optional<io::host_array> run_keys;  // by key: scanlab's key of each run, in the keys' dtype
    if (key_type) {
      run_keys = io::keys_as(*report.keys, *key_type);
      print_first(std::to_string(segments) + " runs of equal keys, " + op_text + " of each (" +
                      std::string(io::name(result_type)) + ")",
                  report.result);
      print_first("the key of each run (" + std::string(io::name(*key_type)) + ")", *run_keys);
    } else if (offsets.empty()) {
      std::cout << op_text << " = " << io::text_of(report.result, 0) << " (" << io::name(result_type) << ")\n";
    } else {
      print_first(std::to_string(segments) + " segments, " + op_text + " of each (" + std::string(io::name(result_type)) + ")",
                  report.result);
    }

    scanlab::app_report out = app.new_report();
    nlohmann::json& json = report_fields(out, x.size(), x.type(), op_text, result_type);
    json["segments"] = offsets.empty() ? nlohmann::json(nullptr) : nlohmann::json(segments);
    json["runs"] = key_type ? nlohmann::json(segments) : nlohmann::json(nullptr);
    json["values"] = first_values(report.result);  // more than 1024 segments or runs: null (see -o)
    json["keys"] = run_keys ? first_values(*run_keys) : nlohmann::json(nullptr);
    json["cub_call"] = report.cub_call;
    if (o.validate) {
      const segmentation by = key_type ? runs_of(*segs.keys, *key_type) : segmentation{offsets, std::nullopt};
      for (auto& c : validate(x, by, report, op)) out.add(std::move(c));
      scanlab::print_checks(std::cout, out.checks());
      if (!report.cub) std::cout << "CUB: not run: " << report.cub_call << "\n";
    }
    if (o.bench) {
      std::cout << '\n';
      scanlab::bench::report bench = app.bench_report(report.rows);
      scanlab::bench::print(std::cout, bench);
      if (key_type) {
        std::cout << "bytes: the values and keys read once, a result and a key written per run.\n"
                     "scanlab's reduce by key is two passes, the runs (unique_by_key) and segmented_reduce (a block "
                     "per run), with the run count read back to the host between them: its time includes that.\n";
      } else {
        std::cout << "bytes: the input read once (and the offsets), the results written once.\n";
      }
      out.set_bench(std::move(bench));
    }
    if (!o.output.empty()) {
      io::write_dataset(o.output, report.result);
      spdlog::info("wrote {} ({} x {})", o.output, segments, io::name(result_type));
    }
    if (!keys_out_path.empty()) {
      io::write_dataset(keys_out_path, *run_keys);
      spdlog::info("wrote {} ({} x {})", keys_out_path, segments, io::name(*key_type));
    }
    app.write_report(out);
    return out.passed() ? scanlab::cli::exit_ok : scanlab::cli::exit_error;
  });
}
