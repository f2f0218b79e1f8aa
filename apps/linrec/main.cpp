// scanlab-linrec: first-order linear recurrences x[i] = a[i] x[i-1] + b[i] on the GPU,
// checked against a sequential long double CPU solve and CUB's generic scan, timed
// against CUB.
//
//   scanlab-linrec                                   2^24 generated (a, b), one sequence
//   scanlab-linrec -i a.npy -b b.npy -o x.npy        x; 2-D inputs are batches [batch, length]
//   scanlab-linrec -i a.npy -b b.npy --interleaved   2-D inputs are [length, batch]
//   scanlab-linrec -i a.npy -b b.npy --layout btc    3-D inputs [batch, length, channels]: one sequence per (b, c)
//   scanlab-linrec --layout btc --batch 8 --n 2^16 --channels 256     the same, generated
//   scanlab-linrec -i a.npy -b b.npy --offsets o.npy 1-D inputs holding sequences of variable lengths,
//                                                    sequence s at o[s] .. o[s+1] - 1 (int64 or int32 .npy)
//   scanlab-linrec --lambda -i lambda.npy -b u.npy   v[i] = (1 - lambda[i]) v[i-1] + lambda[i] u[i]
//   scanlab-linrec --ema 0.1 -i signal.npy           y[i] = 0.9 y[i-1] + 0.1 s[i]
//   scanlab-linrec --n 2^12 --batch 2^16 --validate --bench
//   scanlab-linrec --final -i a.npy -b b.npy         only the last state of each sequence
//   scanlab-linrec --reverse -i a.npy -b b.npy       x[i] = a[i] x[i+1] + b[i] from x[n] = x0
//   scanlab-linrec -i a.npy -b b.npy --backward g.npy --grad-a da.npy --grad-b db.npy --grad-x0 dx0.npy
//                                                    the backward pass of x = linrec(a, b, x0), g = dL/dx
//
// float32, float64, float16, bfloat16, complex64 and complex128 are used as they are (the
// 16-bit types computed in float32); other dtypes become float32 (logged). An operand that is
// not given is generated (same shape, seed + 1). bfloat16 .npy files are '<V2' (as
// ml_dtypes/JAX np.save them): read with --dtype bfloat16, written so.
#include "linrec/linrec_gpu.hpp"
#include "linrec/linrec_reference.hpp"
#include "linrec/linrec_types.hpp"

#include "common/bench_report.hpp"
#include "common/cli.hpp"
#include "common/dataset.hpp"
#include "common/generate.hpp"
#include "common/table.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace io = scanlab::io;
namespace app_gpu = scanlab::linrec_app;
namespace ref = scanlab::linrec_ref;

std::string shape_text(const io::host_array& a) {
  std::string s = "[";
  for (std::size_t i = 0; i < a.shape().size(); ++i) s += (i ? ", " : "") + std::to_string(a.shape()[i]);
  return s + "]";
}

std::string scientific(double value) {
  if (std::isinf(value)) return "inf";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2e", value);
  return buffer;
}

std::string full_precision(double value, bool is_double) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*g", is_double ? 17 : 9, value);
  return buffer;
}

// "LO,HI" -> two finite numbers with LO <= HI.
std::pair<double, double> parse_range(const std::string& text) {
  const auto comma = text.find(',');
  const auto bad = [&] { return std::invalid_argument("--a-range '" + text + "': expected LO,HI (e.g. -0.99,0.99)"); };
  if (comma == std::string::npos) throw bad();
  try {
    std::size_t used = 0;
    const double lo = std::stod(text.substr(0, comma), &used);
    if (used != comma) throw bad();
    const std::string rest = text.substr(comma + 1);
    const double hi = std::stod(rest, &used);
    if (used != rest.size() || !std::isfinite(lo) || !std::isfinite(hi) || lo > hi) throw bad();
    return {lo, hi};
  } catch (const std::logic_error&) {
    throw bad();
  }
}

// How generated complex values are drawn (real types: uniform in [lo, hi) alone).
enum class complex_draw {
  parts,          // real and imaginary parts each uniform in [lo, hi)
  polar,          // r e^(i theta), r uniform in [lo, hi), theta in [0, 2 pi): a with |a| <= max(|lo|, |hi|)
  one_minus_polar  // 1 - r e^(i theta), r in [lo, hi): lambda whose 1 - lambda is polar
};

// Uniform values in [lo, hi) of `type` in the given shape (the generator's uniform [0, 1), scaled).
// The 16-bit types: drawn in float64, rounded once; complex: as `draw` says (the imaginary
// parts or angles from seed + 2^32).
io::host_array generate_operand(io::dtype type, const std::vector<std::int64_t>& shape, std::uint64_t seed, double lo,
                                double hi, complex_draw draw = complex_draw::parts) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  const auto uniform = [&](std::uint64_t s) {
    scanlab::gen::spec spec;
    spec.seed = s;
    io::host_array flat = scanlab::gen::generate_array(spec, io::dtype::f64, n);
    for (double& v : flat.as<double>()) v = lo + (hi - lo) * v;
    return flat;
  };
  if (!io::is_linrec_only(type)) {
    scanlab::gen::spec spec;
    spec.seed = seed;
    const io::host_array flat = scanlab::gen::generate_array(spec, type, n);
    io::host_array out(type, shape);
    std::memcpy(out.data(), flat.data(), flat.bytes());
    io::visit(type, [&]<class T>() {
      if constexpr (std::is_floating_point_v<T>) {
        for (T& v : out.as<T>()) v = static_cast<T>(lo + (hi - lo) * static_cast<double>(v));
      }
    });
    return out;
  }
  const io::host_array first = uniform(seed);
  io::host_array out(type, shape);
  scanlab::linrec_app::visit_element(type, [&]<class T>() {
    const auto in = first.as<double>();
    const auto view = out.as<T>();
    if constexpr (scanlab::is_complex_v<T>) {
      using R = typename T::value_type;
      scanlab::gen::spec spec;
      spec.seed = seed + (std::uint64_t{1} << 32);
      const io::host_array second = scanlab::gen::generate_array(spec, io::dtype::f64, n);
      const auto u = second.as<double>();
      for (std::size_t i = 0; i < view.size(); ++i) {
        std::complex<double> z{in[i], lo + (hi - lo) * u[i]};
        if (draw != complex_draw::parts) {  // r (possibly negative: the sign turns the angle) times e^(i theta)
          const double theta = 2 * 3.14159265358979323846 * u[i];
          z = in[i] * std::complex<double>(std::cos(theta), std::sin(theta));
        }
        if (draw == complex_draw::one_minus_polar) z = 1.0 - z;
        view[i] = T(static_cast<R>(z.real()), static_cast<R>(z.imag()));
      }
    } else {
      for (std::size_t i = 0; i < view.size(); ++i) view[i] = scanlab::linrec_app::from_double<T>(in[i]);
    }
  });
  return out;
}

io::host_array as_float(io::host_array array, const std::string& what) {
  if (scanlab::linrec_app::is_element_type(array.type())) return array;
  spdlog::info("{}: converting {} to float32", what, io::name(array.type()));
  return io::convert(array, io::dtype::f32);
}

// Whether `path` is written as text (write_dataset: .txt, .csv, .tsv), which complex is not.
bool is_text_output(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".txt" || ext == ".csv" || ext == ".tsv";
}

// A value for the console: real, or "re+imj" as NumPy prints complex.
std::string value_text(std::complex<double> v, bool is_complex, bool is_double) {
  if (!is_complex) return full_precision(v.real(), is_double);
  const std::string im = full_precision(v.imag(), is_double);
  return full_precision(v.real(), is_double) + (im.starts_with('-') ? "" : "+") + im + "j";
}

}  // namespace

int main(int argc, char** argv) {
  scanlab::cli::defaults defaults;
  defaults.n = std::int64_t{1} << 24;
  defaults.linrec_types = true;
  scanlab::cli::app app("scanlab-linrec",
                        "First-order linear recurrences x[i] = a[i] x[i-1] + b[i] (x[-1] = x0) on the GPU: one fused "
                        "single-pass scan over affine maps, for one sequence or batches of them; checked against a "
                        "sequential long double solve and CUB's generic scan (--validate), timed against CUB "
                        "(--bench).",
                        defaults);
  CLI::App& parser = app.parser();
  std::string second;
  bool lambda_form = false;
  std::optional<double> ema_alpha;
  double x0 = 0;
  std::string x0_file;
  std::string batch_text;
  bool interleaved = false;
  std::string layout_text;
  std::string channels_text;
  std::string offsets_file;
  bool final_only = false;
  bool reverse = false;
  std::string backward_file;
  std::string grad_a_file, grad_b_file, grad_x0_file;
  std::string a_range_text = "-0.99,0.99";
  bool variants = false;
  parser.add_option("-b,--b", second, "The second operand: b (or u with --lambda); 2-D for batches, like -i")
      ->check(CLI::ExistingFile);
  parser.add_flag("--lambda", lambda_form,
                  "The (lambda, u) form: -i is lambda, -b is u; v[i] = (1 - lambda[i]) v[i-1] + lambda[i] u[i]");
  parser.add_option("--ema", ema_alpha, "Exponential moving average of the signal -i: y[i] = (1-ALPHA) y[i-1] + ALPHA s[i]");
  parser.add_option("--x0", x0, "Initial state of every sequence")->capture_default_str();
  parser.add_option("--x0-file", x0_file, "Initial states, one per sequence (overrides --x0)")->check(CLI::ExistingFile);
  parser.add_option("--batch", batch_text, "Generated data: this many sequences of --n elements each (default 1)");
  parser.add_flag("--interleaved", interleaved,
                  "2-D arrays are [length, batch] (sequence k at k, k + batch, ...) instead of [batch, length]");
  parser
      .add_option("--layout", layout_text,
                  "How batches lie in memory: rows ([batch, length], the default for 2-D), interleaved ([length, "
                  "batch], as --interleaved) or btc ([batch, length, channels]: each (b, c) pair one sequence, "
                  "element t at (b * length + t) * channels + c; 3-D inputs, or generated with --channels)")
      ->check(CLI::IsMember({"rows", "interleaved", "btc"}));
  parser.add_option("--channels", channels_text, "Generated data with --layout btc: channels per batch entry (default 1)");
  parser
      .add_option("--offsets", offsets_file,
                  "Variable-length sequences: FILE holds S + 1 offsets (int64 or int32; 0, nondecreasing, ending at "
                  "the number of elements); sequence s is elements offsets[s] .. offsets[s+1] - 1 of the 1-D inputs "
                  "(generated: as many elements as the last offset)")
      ->check(CLI::ExistingFile);
  parser.add_flag("--final", final_only,
                  "Only the final state of each sequence (written with -o, shape [sequences]; an empty sequence's is "
                  "its initial state)");
  parser.add_flag("--reverse", reverse,
                  "Solve from the end: x[i] = a[i] x[i+1] + b[i] with x[n] = x0 (the state after each sequence; "
                  "--final gives x[0]); every form");
  CLI::Option* backward_option =
      parser
          .add_option("--backward", backward_file,
                      "The backward pass of x = linrec(a, b, x0) (forward, (a, b) form): dL/dx from FILE (the shape "
                      "of a), or generated (uniform in [-1, 1), seed + 2) without FILE; solves x, then dL/da, dL/db "
                      "and dL/dx0 in one fused pass (--grad-a, --grad-b, --grad-x0)")
          ->expected(0, 1)
          ->type_name("[FILE]");
  parser.add_option("--grad-a", grad_a_file, "With --backward: write dL/da (the shape of a; .npy, .bin, .txt)");
  parser.add_option("--grad-b", grad_b_file, "With --backward: write dL/db (the shape of b)");
  parser.add_option("--grad-x0", grad_x0_file, "With --backward: write dL/dx0, one per sequence (shape [batch])");
  parser.add_option("--a-range", a_range_text, "Generated a: uniform in LO,HI")->capture_default_str();
  parser.add_flag("--tune", variants,
                  "With --bench: also time the look-back kernel forced, and scanlab's tile-shape variants (float32 "
                  "and bfloat16, (a, b), row-major; the variants only in a build configured with "
                  "-DSCANLAB_LINREC_TUNE=ON)");
  app.footer(
      "-o writes x as .npy (or .bin, .txt) in the inputs' shape and type. --n is the length of each generated "
      "sequence.\nElement types (--dtype for generated data; a file's own dtype otherwise): float32, float64, "
      "float16 and bfloat16 (stored in 16 bits, computed in float32, each result rounded once), complex64 and "
      "complex128 (--lambda and --ema: float32 and float64 only); other dtypes are converted to float32, and -b, --backward and --x0-file files to the type of "
      "-i. bfloat16 .npy files are the 2-byte void '<V2' that ml_dtypes/JAX np.save writes: read with --dtype "
      "bfloat16, and written so (numpy: np.load(f).view(ml_dtypes.bfloat16)). float16/bfloat16 text is read as "
      "float64 and rounded once; complex text is refused (use .npy). Generated complex a: modulus uniform in "
      "--a-range, angle uniform (lambda: 1 - that); b: both parts uniform in [-1, 1).\na[i] == 0 resets the sequence: x[i] = b[i] "
      "whatever came before.\n--reverse solves x[i] = a[i] x[i+1] + b[i] from the end (--x0: the state after "
      "it). --backward [G.npy]: given dL/dx = G, the gradients of x = linrec(a, b, x0): dL/db = g with "
      "g[i] = G[i] + a[i+1] g[i+1], dL/da[i] = g[i] x[i-1], dL/dx0 = a[0] g[0], written with --grad-a, "
      "--grad-b, --grad-x0 (-o still writes x); --validate checks them against a long double adjoint of the "
      "same x, --bench times the fused backward pass (5 arrays moved) against CUB's reversed scan with the "
      "same epilogue.\n--layout btc (3-D [batch, length, channels]) and --offsets FILE (variable lengths) work with "
      "every option; their initial and final states, --x0-file and --grad-x0 have one value per sequence (b * "
      "channels + c, or s). CUB's baseline covers one sequence and [batch, length] / [length, batch] batches: it is "
      "not run for them (--validate checks against the long double solve alone, --bench times scanlab alone).",
      "operand shapes differ, a validation failed");

  return app.run(argc, argv, [&] {
    const auto& o = app.options();
    if (lambda_form && ema_alpha) throw std::invalid_argument("--lambda and --ema exclude each other");
    const app_gpu::form kind = ema_alpha ? app_gpu::form::ema : lambda_form ? app_gpu::form::lambda : app_gpu::form::ab;
    if (ema_alpha && !std::isfinite(*ema_alpha)) throw std::invalid_argument("--ema: ALPHA must be finite");
    if (ema_alpha && (*ema_alpha < 0 || *ema_alpha > 1)) spdlog::warn("--ema {}: outside [0, 1]", *ema_alpha);
    if (ema_alpha && !second.empty()) throw std::invalid_argument("--ema takes one array (-i), not -b");
    const bool backward = backward_option->count() > 0;
    if (backward && kind != app_gpu::form::ab) {
      throw std::invalid_argument("--backward is the backward pass of the (a, b) form: not with --lambda or --ema");
    }
    if (backward && (reverse || final_only)) {
      throw std::invalid_argument(std::string("--backward differentiates the forward solve of x: not with ") +
                                  (reverse ? "--reverse" : "--final"));
    }
    for (const auto& [file, flag] : {std::pair{&grad_a_file, "--grad-a"}, std::pair{&grad_b_file, "--grad-b"},
                                     std::pair{&grad_x0_file, "--grad-x0"}}) {
      if (file->empty()) continue;
      if (!backward) throw std::invalid_argument(std::string(flag) + " needs --backward");
      if (*file == "-") throw std::invalid_argument(std::string(flag) + " -: the gradients are written to files");
    }
    if (backward && !backward_file.empty() && !std::filesystem::exists(backward_file)) {
      throw std::invalid_argument("--backward: " + backward_file + " does not exist");
    }
    const auto [a_lo, a_hi] = parse_range(a_range_text);
    const std::int64_t generated_batch = batch_text.empty() ? 1 : scanlab::cli::parse_count(batch_text);
    if (generated_batch < 1) throw std::invalid_argument("--batch must be at least 1");
    if (layout_text == "interleaved") interleaved = true;
    if (interleaved && layout_text == "btc") throw std::invalid_argument("--interleaved and --layout btc exclude each other");
    const bool channels_last = layout_text == "btc";
    const bool by_offsets = !offsets_file.empty();
    if (by_offsets && (channels_last || interleaved)) {
      throw std::invalid_argument("--offsets concatenates sequences of variable lengths in 1-D inputs: not with " +
                                  std::string(channels_last ? "--layout btc" : "--interleaved"));
    }
    if (!channels_text.empty() && !channels_last) throw std::invalid_argument("--channels needs --layout btc");
    const std::int64_t generated_channels = channels_text.empty() ? 1 : scanlab::cli::parse_count(channels_text);
    if (generated_channels < 1) throw std::invalid_argument("--channels must be at least 1");
    if (by_offsets && offsets_file == "-") throw std::invalid_argument("--offsets -: the offsets are read from a file");
    // The offsets first: their last value sizes generated operands.
    std::vector<std::int64_t> offsets;
    if (by_offsets) {
      const io::host_array raw = app.load_file(offsets_file);
      if (raw.type() != io::dtype::i64 && raw.type() != io::dtype::i32) {
        throw std::runtime_error("--offsets " + offsets_file + ": " + std::string(io::name(raw.type())) +
                                 " values, int64 or int32 expected");
      }
      if (raw.shape().size() != 1) {
        throw std::runtime_error("--offsets " + offsets_file + " has shape " + shape_text(raw) + ": 1-D expected");
      }
      const io::host_array wide = io::convert(raw, io::dtype::i64, offsets_file);
      const auto view = wide.as<std::int64_t>();
      offsets.assign(view.begin(), view.end());
      if (offsets.empty()) throw std::runtime_error("--offsets " + offsets_file + ": no values (S sequences need S + 1)");
      if (!batch_text.empty()) spdlog::warn("--batch is not used with --offsets: the offsets decide the sequences");
    }

    // Inputs first: bad files and shape mismatches are reported before the GPU is touched.
    const char* p_name = kind == app_gpu::form::ab ? "a" : kind == app_gpu::form::lambda ? "lambda" : "signal";
    const char* q_name = kind == app_gpu::form::lambda ? "u" : "b";
    io::host_array p;
    std::string p_label;
    if (!o.input.empty()) {
      p = as_float(app.load_file(o.input), p_name);
      p_label = std::string(p_name) + " (" + o.input + ")";
      if (!batch_text.empty()) spdlog::warn("--batch is for generated data: the shape of {} decides", o.input);
    } else {
      if (!o.generate.empty()) spdlog::warn("--generate is not used: scanlab-linrec generates uniform operands");
      const std::int64_t length = o.n > 0 ? o.n : defaults.n;
      const io::dtype type =
          scanlab::linrec_app::is_element_type(app.chosen_dtype()) ? app.chosen_dtype() : io::dtype::f32;
      std::vector<std::int64_t> shape = {length};
      if (generated_batch > 1) shape = interleaved ? std::vector{length, generated_batch} : std::vector{generated_batch, length};
      if (channels_last) shape = {generated_batch, length, generated_channels};
      if (by_offsets) {
        if (o.n > 0) spdlog::warn("--n is not used with --offsets: the last offset is the number of elements");
        shape = {offsets.back()};
        if (offsets.back() < 0) {
          throw std::runtime_error("--offsets " + offsets_file + ": " + ref::offsets_problem(offsets, 0));
        }
      }
      double lo = -1, hi = 1;
      if (kind == app_gpu::form::ab) lo = a_lo, hi = a_hi;
      if (kind == app_gpu::form::lambda) lo = 0, hi = 1;
      p = generate_operand(type, shape, o.seed, lo, hi,
                           kind == app_gpu::form::ab       ? complex_draw::polar
                           : kind == app_gpu::form::lambda ? complex_draw::one_minus_polar
                                                           : complex_draw::parts);
      p_label = std::string(p_name) + " (generated)";
      spdlog::info("{}: uniform in [{}, {}), shape {}, {} (seed {})", p_name, lo, hi, shape_text(p), io::name(type), o.seed);
    }
    if (kind != app_gpu::form::ab && !app_gpu::all_forms_type(p.type())) {
      throw std::invalid_argument(std::string(kind == app_gpu::form::lambda ? "--lambda" : "--ema") + " with " +
                                  std::string(io::name(p.type())) + " " + p_name +
                                  ": this app runs the (lambda, u) and EMA forms in float32 and float64 only (the "
                                  "library solves them in every type; each form is another set of kernels to build)");
    }
    if (channels_last && p.shape().size() != 3) {
      throw std::runtime_error(p_label + " has shape " + shape_text(p) +
                               ": --layout btc needs 3 dimensions [batch, length, channels]");
    }
    if (p.shape().size() == 3 && !channels_last) {
      throw std::runtime_error(p_label + " has 3 dimensions: give --layout btc for [batch, length, channels]");
    }
    if (p.shape().size() > 3) throw std::runtime_error(p_label + " has " + std::to_string(p.shape().size()) + " dimensions: 1 or 2 expected (3 with --layout btc)");
    if (by_offsets && p.shape().size() != 1) {
      throw std::runtime_error(p_label + " has shape " + shape_text(p) + ": --offsets needs 1-D inputs");
    }
    if (by_offsets) {
      const std::string problem = ref::offsets_problem(offsets, p.size());
      if (!problem.empty()) throw std::runtime_error("--offsets " + offsets_file + " for " + p_label + ": " + problem);
    }
    std::int64_t batch = 1, length = p.size(), channels = 0;
    if (by_offsets) {
      batch = static_cast<std::int64_t>(offsets.size()) - 1;
      length = 0;
    } else if (channels_last) {
      if (p.size() == 0) {  // its dimensions may name any number of sequences: not sized by them
        throw std::runtime_error(p_label + " has shape " + shape_text(p) +
                                 " and no elements (an empty input must be 1-D)");
      }
      channels = p.shape()[2];
      batch = p.shape()[0] * channels;  // one sequence per (b, c)
      length = p.shape()[1];
    } else if (p.shape().size() == 2) {
      batch = interleaved ? p.shape()[1] : p.shape()[0];
      length = interleaved ? p.shape()[0] : p.shape()[1];
    } else if (interleaved) {
      spdlog::info("--interleaved with a 1-D input: one sequence");
    }
    // Each sequence has its own initial (and with --final, final) state. A 2-D shape with no
    // elements may still name any number of sequences, e.g. (2^60, 0) of a 128-byte file:
    // refuse it before sizing anything by it, so that per-sequence memory stays bounded by
    // the elements the files hold.
    if (!by_offsets && p.size() == 0 && (batch > 1 || length > 0 || channels_last)) {
      throw std::runtime_error(p_label + " has shape " + shape_text(p) + " and no elements: " +
                               (batch > 1 ? std::to_string(batch) + " sequences of length 0" : "no sequences") +
                               " (an empty input must be 1-D)");
    }
    // Where each sequence's steps lie (the reference's view of the layout).
    const ref::sequence_layout layout =
        by_offsets      ? ref::sequence_layout::varlen(offsets)
        : channels_last ? ref::sequence_layout::channels_last(p.shape()[0], length, channels)
        : interleaved && p.shape().size() == 2 ? ref::sequence_layout::interleaved(batch, length)
                                               : ref::sequence_layout::rows(batch, length);
    std::optional<io::host_array> q;
    if (kind != app_gpu::form::ema) {
      std::string q_label;
      if (!second.empty()) {
        q = app.load_file(second);
        q_label = std::string(q_name) + " (" + second + ")";
        if (q->type() != p.type()) {
          spdlog::info("{}: converting {} to {}", q_name, io::name(q->type()), io::name(p.type()));
          *q = io::convert(*q, p.type(), second);
        }
      } else {
        q = generate_operand(p.type(), p.shape(), o.seed + 1, -1, 1);
        q_label = std::string(q_name) + " (generated)";
        spdlog::info("{}: uniform in [-1, 1), shape {} (seed {})", q_name, shape_text(*q), o.seed + 1);
      }
      if (q->shape() != p.shape()) {
        throw std::runtime_error(std::string(p_name) + " and " + q_name + " must have the same shape: " + p_label +
                                 " has shape " + shape_text(p) + ", " + q_label + " has shape " + shape_text(*q));
      }
    }
    // dL/dx for the backward pass: the shape of a (and x).
    std::optional<io::host_array> grad_x;
    if (backward) {
      std::string g_label;
      if (!backward_file.empty()) {
        grad_x = app.load_file(backward_file);
        g_label = "dL/dx (" + backward_file + ")";
        if (grad_x->type() != p.type()) {
          spdlog::info("dL/dx: converting {} to {}", io::name(grad_x->type()), io::name(p.type()));
          *grad_x = io::convert(*grad_x, p.type(), backward_file);
        }
      } else {
        grad_x = generate_operand(p.type(), p.shape(), o.seed + 2, -1, 1);
        g_label = "dL/dx (generated)";
        spdlog::info("dL/dx: uniform in [-1, 1), shape {} (seed {})", shape_text(*grad_x), o.seed + 2);
      }
      if (grad_x->shape() != p.shape()) {
        throw std::runtime_error("a and dL/dx must have the same shape: " + p_label + " has shape " + shape_text(p) +
                                 ", " + g_label + " has shape " + shape_text(*grad_x));
      }
    }
    // One initial state per sequence, in the element type.
    io::host_array x0s(p.type(), {batch});
    if (!x0_file.empty()) {
      io::host_array states = app.load_file(x0_file);
      if (states.size() != batch) {
        throw std::runtime_error("--x0-file " + x0_file + " has " + std::to_string(states.size()) + " values, " +
                                 std::to_string(batch) + " sequence(s) need one each");
      }
      if (states.type() != p.type()) states = io::convert(states, p.type(), x0_file);
      std::memcpy(x0s.data(), states.data(), x0s.bytes());
    } else {
      scanlab::linrec_app::visit_element(p.type(), [&]<class T>() {
        const auto states = x0s.as<T>();
        std::fill(states.begin(), states.end(), scanlab::linrec_app::from_double<T>(x0));
      });
    }
    const bool is_double = p.type() == io::dtype::f64 || p.type() == io::dtype::c128;
    const bool is_complex = io::is_complex(p.type());
    if (is_complex) {
      for (const std::string* path :
           std::initializer_list<const std::string*>{&o.output, &grad_a_file, &grad_b_file, &grad_x0_file}) {
        if (!path->empty() && is_text_output(*path)) {
          throw std::invalid_argument(*path + ": text output of " + std::string(io::name(p.type())) +
                                      " is not supported (write .npy or .bin)");
        }
      }
    }

    app.select_device();
    app_gpu::gpu_request request;
    request.kind = kind;
    request.p = &p;
    request.q = q ? &*q : nullptr;
    request.alpha = ema_alpha.value_or(0);
    request.batch = batch;
    request.length = length;
    request.interleaved = interleaved && p.shape().size() == 2;
    request.channels = channels;
    request.offsets = offsets;
    request.x0s = std::move(x0s);
    request.final_only = final_only;
    request.reverse = reverse;
    request.grad_x = grad_x ? &*grad_x : nullptr;
    request.compare = o.validate;
    request.bench = o.bench;
    request.variants = variants;
    if (variants && !app_gpu::tuning_variants_built()) {
      spdlog::warn("--tune: this build has no tile-shape variants (configure with -DSCANLAB_LINREC_TUNE=ON); "
                   "timing the look-back kernel's row only");
    }
    request.repeat = o.repeat;
    request.dataset = o.input.empty() ? "uniform" : o.input;
    const std::string layout_name = by_offsets          ? "offsets"
                                    : channels_last      ? "channels-last"
                                    : request.interleaved ? "interleaved"
                                                          : "row-major";
    if (by_offsets) {
      spdlog::info("solving {} sequence(s) of variable lengths ({} elements), by offsets{}", batch, p.size(),
                   reverse ? ", from the end" : backward ? ", then the backward pass" : "");
    } else {
      spdlog::info("solving {} sequence(s) of length {}{}{}", batch, length,
                   channels_last ? ", channels-last [batch, length, channels] = " + shape_text(p)
                   : batch > 1   ? (request.interleaved ? ", interleaved [length, batch]" : ", row-major [batch, length]")
                                 : "",
                   reverse ? ", from the end" : backward ? ", then the backward pass" : "");
    }
    const app_gpu::gpu_report report = app_gpu::run_gpu(request);
    app.write_output(report.x);
    if (report.gradients) {
      for (const auto& [file, array] : {std::pair{&grad_a_file, &report.gradients->a},
                                        std::pair{&grad_b_file, &report.gradients->b},
                                        std::pair{&grad_x0_file, &report.gradients->x0}}) {
        if (file->empty()) continue;
        io::write_dataset(*file, *array);
        spdlog::info("wrote {} ({} x {})", *file, array->size(), io::name(array->type()));
      }
    }

    scanlab::app_report out = app.new_report();
    nlohmann::json& json = out.result();
    json["form"] = kind == app_gpu::form::ab ? "ab" : kind == app_gpu::form::lambda ? "lambda" : "ema";
    json["dtype"] = std::string(io::name(p.type()));
    json["batch"] = batch;
    json["length"] = length;
    json["layout"] = layout_name;
    json["sequences"] = batch;
    if (channels_last) json["channels"] = channels;
    json["final_only"] = final_only;
    json["direction"] = reverse ? "reverse" : "forward";
    json["backward"] = backward;
    json["input"] = p_label;

    // The last state of the first sequence, full precision (with -o: every value); complex
    // values go to the JSON report as [re, im].
    const auto value_json = [&](std::complex<double> v) -> nlohmann::json {
      if (is_complex) return nlohmann::json::array({v.real(), v.imag()});
      return v.real();
    };
    const auto element = [&](const io::host_array& x, std::size_t i) {
      return scanlab::linrec_app::visit_element(
          x.type(), [&]<class T>() { return scanlab::linrec_app::to_complex(x.as<T>()[i]); });
    };
    const auto last_of_first = [&](const io::host_array& x) -> std::optional<std::complex<double>> {
      if (x.size() == 0) return std::nullopt;
      if (final_only) return element(x, 0);
      const std::int64_t t = reverse ? 0 : layout.length_of(0) - 1;  // the last state solved
      return element(x, static_cast<std::size_t>(layout.at(0, t)));
    };
    json["last_of_first"] = nullptr;
    const bool first_has_states = final_only || (batch > 0 && layout.length_of(0) > 0);
    if (const auto value = first_has_states ? last_of_first(report.x) : std::nullopt) {
      std::cout << "x[" << (reverse ? 0 : layout.length_of(0) - 1)
                << "] of sequence 0 = " << value_text(*value, is_complex, is_double) << '\n';
      json["last_of_first"] = value_json(*value);
    }
    if (report.gradients && report.gradients->x0.size() > 0) {
      const std::complex<double> first = element(report.gradients->x0, 0);
      std::cout << "dL/dx0 of sequence 0 = " << value_text(first, is_complex, is_double) << '\n';
      json["grad_x0_of_first"] = value_json(first);
    }

    if (o.validate) {
      scanlab::text_table table({"method", "max rel. error", "max err / bound", "NaN/Inf mismatches", "check"});
      nlohmann::json compared = nlohmann::json::array();  // CUB's errors, shown, not judged
      const auto check_one = [&](const std::string& method, const io::host_array& x, bool must_pass) {
        const ref::check_result r = scanlab::linrec_app::visit_element(p.type(), [&]<class T>() -> ref::check_result {
          ref::operands<T> ops;
          ops.kind = kind == app_gpu::form::ab ? ref::form::ab : kind == app_gpu::form::lambda ? ref::form::lambda
                                                                                                : ref::form::ema;
          ops.p = p.as<T>();
          if (q) ops.q = q->as<T>();
          // alpha as the GPU has it: rounded to T (its real part)
          ops.alpha = static_cast<long double>(
              scanlab::linrec_app::to_complex(scanlab::linrec_app::from_double<T>(request.alpha)).real());
          const auto states = request.x0s.as<T>();
          const T zero = scanlab::linrec_app::from_double<T>(0);
          if (by_offsets || channels_last) {
            return ref::check_layout<T>(ops, layout, states, zero, x.as<T>(), final_only, reverse);
          }
          return ref::check<T>(ops, batch, length, request.interleaved, states, zero, x.as<T>(), final_only, reverse);
        });
        const bool ok = r.pass();
        table.add_row({method, scientific(r.max_relative_error), scientific(r.max_bound_ratio),
                       std::to_string(r.special_mismatches), ok ? "pass" : (must_pass ? "FAIL" : "outside bound")});
        const std::string detail = method + ": max error / bound " + scientific(r.max_bound_ratio) + " (worst at " +
                                   std::to_string(r.worst_index) + "), " + std::to_string(r.special_mismatches) +
                                   " NaN/Inf mismatches in " + std::to_string(r.checked) + " values";
        if (must_pass) {
          out.add({"sequential long double solve", ok, detail, r.max_relative_error});
        } else {
          compared.push_back({{"method", method}, {"max_relative_error", r.max_relative_error},
                              {"within_bound", ok}, {"detail", detail}});
        }
      };
      // The backward pass: each gradient against the long double adjoint of scanlab's x.
      const auto check_gradients = [&](const std::string& method, const app_gpu::gradient_arrays& g, bool must_pass) {
        const ref::gradient_check_result r =
            scanlab::linrec_app::visit_element(p.type(), [&]<class T>() -> ref::gradient_check_result {
              return ref::check_gradients<T>(p.as<T>(), report.x.as<T>(), grad_x->as<T>(), layout, request.x0s.as<T>(),
                                             scanlab::linrec_app::from_double<T>(0), g.a.as<T>(), g.b.as<T>(),
                                             g.x0.as<T>());
            });
        for (const auto& [what, c] : {std::pair{"dL/da", &r.a}, std::pair{"dL/db", &r.b}, std::pair{"dL/dx0", &r.x0}}) {
          const bool ok = c->pass();
          const std::string name = method + " " + what;
          table.add_row({name, scientific(c->max_relative_error), scientific(c->max_bound_ratio),
                         std::to_string(c->special_mismatches), ok ? "pass" : (must_pass ? "FAIL" : "outside bound")});
          const std::string detail = name + ": max error / bound " + scientific(c->max_bound_ratio) + " (worst at " +
                                     std::to_string(c->worst_index) + "), " + std::to_string(c->special_mismatches) +
                                     " NaN/Inf mismatches in " + std::to_string(c->checked) + " values";
          if (must_pass) {
            out.add({std::string("long double adjoint (") + what + ")", ok, detail, c->max_relative_error});
          } else {
            compared.push_back({{"method", name}, {"max_relative_error", c->max_relative_error},
                                {"within_bound", ok}, {"detail", detail}});
          }
        }
      };
      spdlog::info("validating against the sequential long double solve ({} elements)", p.size());
      if (by_offsets || channels_last) {
        spdlog::info("CUB: not run ({} is outside its baseline: one sequence, [batch, length] and [length, batch])",
                     by_offsets ? "--offsets" : "--layout btc");
      }
      check_one("scanlab", report.x, true);
      if (report.cub_x) check_one(reverse ? "cub InclusiveScan (affine maps, reversed)" : "cub InclusiveScan (affine maps)",
                                  *report.cub_x, false);
      if (report.gradients) {
        spdlog::info("validating the gradients against the long double adjoint of x");
        check_gradients("scanlab", *report.gradients, true);
        if (report.cub_gradients) check_gradients("cub", *report.cub_gradients, false);
      }
      std::cout << '\n';
      table.print(std::cout);
      std::cout << "Errors against the sequential long double solve; rel. error = |err| / sum_j |a_j+1..a_i| |b_j| "
                   "(the size of the terms), bound = eps (3 L + 64 S), see primitives/docs/linrec.md.\n";
      if (report.gradients) {
        std::cout << "Gradients against the long double adjoint of scanlab's x: dL/db = g (the reverse recurrence's "
                     "bound), dL/da and dL/dx0 one product more.\n";
      }
      json["compared"] = compared;
    }

    if (o.bench) {
      scanlab::bench::report bench = app.print_bench(report.rows);
      scanlab::text_table summary({"variant", "time", "Gitems/s", "GB/s", "% of memcpy", "vs CUB"});
      for (const auto& row : bench.rows) {
        const auto speedup = row.speedup();
        const auto pct = bench.percent_of_ceiling(row);
        summary.add_row({row.variant, scanlab::format_time_ms(row.time.median_ms),
                         scanlab::format_fixed(row.items_per_second() / 1e9, 1), scanlab::format_fixed(row.gbps(), 0),
                         pct ? scanlab::format_fixed(*pct, 1) : "", speedup ? scanlab::format_fixed(*speedup, 2) + "x" : ""});
      }
      std::cout << '\n';
      summary.print(std::cout);
      if (backward) {
        std::cout << "Bytes: a, x and dL/dx read once, dL/da and dL/db written once (" << 5 * io::size_of(p.type())
                  << " bytes per element), x0 read and dL/dx0 written per sequence; x (solved before) is not "
                     "timed.\n";
      } else {
        std::cout << "Bytes: every operand read once and x written once ("
                  << (kind == app_gpu::form::ema ? 2 : 3) * io::size_of(p.type())
                  << " bytes per element" << (final_only ? ", minus the write with --final" : "") << ").\n";
      }
      out.set_bench(std::move(bench));
    }
    return app.finish(out, "the result is outside its error bound (see the check column)");
  });
}
