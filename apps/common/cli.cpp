#include "common/cli.hpp"

#include "common/atomic_file.hpp"
#include "common/bench_report.hpp"
#include "common/dataset.hpp"
#include "common/gpu.hpp"
#include "common/logging.hpp"
#include "common/npy.hpp"
#include "common/progress.hpp"

#include <scanlab/error.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <iostream>
#include <limits>
#include <string_view>

namespace scanlab::cli {

std::int64_t parse_count(const std::string& text) {
  const auto bad = [&] {
    return std::invalid_argument("'" + text + "' is not an element count (examples: 1000, 1e9, 2^28, 16M, 1G)");
  };
  if (text.empty()) throw bad();
  if (const auto caret = text.find('^'); caret != std::string::npos) {
    std::int64_t base = 0, exponent = 0;
    const auto* end = text.data() + text.size();
    const auto [base_end, base_ec] = std::from_chars(text.data(), text.data() + caret, base);
    const auto [exp_end, exp_ec] = std::from_chars(text.data() + caret + 1, end, exponent);
    if (base_ec != std::errc() || base_end != text.data() + caret || exp_ec != std::errc() || exp_end != end ||
        base < 0 || exponent < 0) {
      throw bad();
    }
    const double value = std::pow(static_cast<double>(base), static_cast<double>(exponent));
    if (value > 9.2e18) throw bad();
    std::int64_t result = 1;
    for (std::int64_t i = 0; i < exponent; ++i) result *= base;
    return result;
  }
  std::int64_t multiplier = 1;
  std::string digits = text;
  switch (text.back()) {
    case 'K': case 'k': multiplier = std::int64_t{1} << 10; digits.pop_back(); break;
    case 'M': case 'm': multiplier = std::int64_t{1} << 20; digits.pop_back(); break;
    case 'G': case 'g': multiplier = std::int64_t{1} << 30; digits.pop_back(); break;
    default: break;
  }
  if (digits.empty()) throw bad();
  std::int64_t integer = 0;
  const auto* end = digits.data() + digits.size();
  if (auto [ptr, ec] = std::from_chars(digits.data(), end, integer); ec == std::errc() && ptr == end) {
    if (integer < 0 || integer > std::numeric_limits<std::int64_t>::max() / multiplier) throw bad();
    return integer * multiplier;
  }
  double real = 0;  // 1e9, 2.5e6
  if (auto [ptr, ec] = std::from_chars(digits.data(), end, real); ec != std::errc() || ptr != end) throw bad();
  const double value = real * static_cast<double>(multiplier);
  if (!(value >= 0) || value > 9.2e18 || value != std::floor(value)) throw bad();
  return static_cast<std::int64_t>(value);
}

std::uint64_t parse_bytes(const std::string& text) {
  std::string count = text;  // 4GiB and 4GB read as 4G, 1000B as 1000
  if (count.size() > 3 && count.ends_with("iB") && std::isalpha(static_cast<unsigned char>(count[count.size() - 3]))) {
    count.resize(count.size() - 2);
  } else if (count.size() > 1 && count.ends_with("B")) {
    count.pop_back();
  }
  std::int64_t multiplier = 1;
  if (!count.empty() && (count.back() == 'T' || count.back() == 't')) {
    multiplier = std::int64_t{1} << 40;
    count.pop_back();
  }
  try {
    const std::int64_t value = parse_count(count);
    if (value > std::numeric_limits<std::int64_t>::max() / multiplier) throw std::invalid_argument(text);
    return static_cast<std::uint64_t>(value * multiplier);
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument("'" + text + "' is not a size in bytes (examples: 4G, 512M, 64K, 1000000)");
  }
}

app::app(std::string name, std::string description, defaults d, bool dataset_options)
    : name_(std::move(name)), defaults_(d), parser_(std::move(description), name_) {
  auto& o = options_;
  parser_.set_version_flag("--version", name_ + " (scanlab) " + SCANLAB_VERSION);
  if (dataset_options) add_dataset_options();
  parser_.add_option("--repeat", o.repeat, "Timed runs per measurement (at least 10)")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  parser_.add_option("--device", o.device, "CUDA device ordinal")->check(CLI::Range(0, 1023))->capture_default_str();
  parser_.add_option("--json", o.json, "Write a machine-readable report (JSON; docs/json-schema.md) here");
  parser_.add_option("--csv", o.csv, "With --bench: also write the benchmark table as CSV here");
  parser_.add_option("--markdown", o.markdown, "With --bench: also write the benchmark table as Markdown here");
  parser_.add_flag("-v,--verbose", o.verbose, "More log output");
  parser_.add_flag("-q,--quiet", o.quiet, "Only errors and the result");
  footer("", "");
}

void app::add_dataset_options() {
  auto& o = options_;
  parser_.add_option("-i,--input", o.input,
                     "Input dataset: .npy (recognised by its first bytes), raw binary (.bin/.raw/.dat, needs "
                     "--dtype) or text (.txt/.csv/.tsv); - reads a .npy or text from standard input")
      ->check(CLI::Validator([](std::string& path) { return path == "-" ? std::string() : CLI::ExistingFile(path); },
                             "FILE or -"));
  parser_.add_option("-o,--output", o.output,
                     "Write the result here (.npy, .bin, .txt); - writes a .npy to standard output (and what "
                     "the app prints goes to stderr)");
  parser_.add_option("--generate", generate_text_,
                     "Generate the input instead of reading one: " + gen::distribution_choices() +
                         " (default: " + std::string(gen::name(defaults_.dist)) + ")");
  parser_.add_option("--n", count_text_,
                     "Elements to generate, e.g. 1000, 1e9, 2^28, 16M (default: " + std::to_string(defaults_.n) + ")");
  parser_.add_option("--dtype", o.dtype,
                     "Element type (" + io::dtype_choices(defaults_.linrec_types) + "; default " +
                         std::string(io::name(defaults_.type)) + "); also the type of raw binary input" +
                         (defaults_.linrec_types ? "; bfloat16 also reads a .npy of 2-byte void ('<V2', as "
                                                   "ml_dtypes/JAX save bfloat16)"
                                                 : ""));
  parser_.add_option("--seed", o.seed, "Seed of the generated input")->capture_default_str();
  parser_.add_option("--column", o.column, "Text/CSV input: column name or 0-based index (default: the first)");
  parser_.add_flag("--validate", o.validate, "Check the result against a CPU reference and CUB");
  parser_.add_flag("--bench", o.bench, "Time scanlab against CUB (median of --repeat runs, L2 flushed)");
  parser_.add_option_function<std::string>(
             "--variants", [&o](const std::string& v) { o.production_only = v == "production"; },
             "With --bench: all (default: also the teaching and tuning variants and other libraries) or "
             "production (scanlab's production path and CUB only: the quick comparison)")
      ->check(CLI::IsMember({"all", "production"}));
}

void app::add_op_option() {
  std::vector<std::string> names;
  for (const ops::op_id op : ops::all) names.emplace_back(ops::name(op));
  parser_.add_option("--op", op_text_, "sum, prod, min or max")->check(CLI::IsMember(names))->capture_default_str();
}

void app::add_streaming_options(bool slices) {
  // Checked as the command line is parsed (exit 2 before anything is read or a GPU is looked for).
  const auto size_check = [](std::uint64_t least, std::string least_text) {
    return CLI::Validator(
        [least, least_text](std::string& text) {
          try {
            if (parse_bytes(text) < least) return text + " is too small: at least " + least_text;
            return std::string();
          } catch (const std::invalid_argument& e) {
            return std::string(e.what());
          }
        },
        "");
  };
  parser_
      .add_option("--device-memory", device_memory_text_,
                  "Stream the input through the GPU within LIMIT bytes of device memory (e.g. 4G, 512M, 64K; at "
                  "least 16K), whatever its size; without it the streaming path is taken only when the input (and "
                  "output) would not fit in the free device memory")
      ->check(size_check(std::uint64_t{16} << 10, "16K"))
      ->type_name("LIMIT");
  if (!slices) return;
  parser_
      .add_option("--stream-slice", stream_slice_text_,
                  "Streaming path: input bytes per call of the streaming library (default 1G): the granularity of "
                  "the progress bar and the size of the host buffer for the output")
      ->check(size_check(1, "1"))
      ->type_name("SIZE");
}

std::uint64_t app::stream_slice_bytes() const {
  return stream_slice_text_.empty() ? std::uint64_t{1} << 30 : parse_bytes(stream_slice_text_);
}

void app::footer(const std::string& notes, const std::string& also_errors) {
  parser_.footer(notes + (notes.empty() ? "" : "\n") + "Exit codes: 0 success, 1 error" +
                 (also_errors.empty() ? "" : " (also: " + also_errors + ")") + ", 2 bad command line, 3 no usable GPU.");
}

int app::run(int argc, char** argv, const std::function<int()>& body) {
  command_line_.assign(argv, argv + argc);
  try {
    parser_.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return parser_.exit(e);  // --help, --version
  } catch (const CLI::ParseError& e) {
    parser_.exit(e);
    if (std::string_view(e.what()).ends_with("File does not exist: -")) {
      std::cerr << name_ << ": standard input ('-') is read by -i only: give this option a file\n";
    }
    return exit_usage;
  }
  setup_logging(name_, options_.quiet     ? std::optional(spdlog::level::warn)
                       : options_.verbose ? std::optional(spdlog::level::debug)
                                          : std::nullopt);
  try {
    reserve_standard_output_for_data();
    if (!count_text_.empty()) options_.n = parse_count(count_text_);
    options_.generate = generate_text_;
    return body();
  } catch (const no_gpu_error& e) {
    std::cerr << name_ << ": " << e.what() << '\n';
    return exit_no_gpu;
  } catch (const std::invalid_argument& e) {
    std::cerr << name_ << ": error: " << e.what() << '\n';
    return exit_usage;
  } catch (const std::exception& e) {
    std::cerr << name_ << ": error: " << e.what() << '\n';
    return interrupted() ? exit_interrupted : exit_error;
  }
}

void app::reserve_standard_output_for_data() const {
  // Every option given "-", -i apart, writes to standard output: one at most.
  std::string writers;
  int count = 0;
  for (const CLI::Option* option : parser_.get_options()) {
    if (option->check_lname("input") || option->count() == 0) continue;
    const auto& values = option->results();
    if (std::find(values.begin(), values.end(), "-") == values.end()) continue;
    writers += (count++ == 0 ? "" : " and ") + option->get_name();
  }
  if (count > 1) throw std::invalid_argument(writers + " both write to standard output ('-'): only one can");
  if (count == 1) io::reserve_standard_output();
}

io::dtype app::chosen_dtype() const {
  if (options_.dtype.empty()) return defaults_.type;
  if (auto t = io::parse_dtype(options_.dtype)) {
    if (io::is_linrec_only(*t) && !defaults_.linrec_types) {
      throw std::invalid_argument("--dtype '" + options_.dtype + "': " + name_ + " does not take " +
                                  std::string(io::name(*t)) + " (only scanlab-linrec does); choose one of " +
                                  io::dtype_choices());
    }
    return *t;
  }
  throw std::invalid_argument("--dtype '" + options_.dtype + "': choose one of " +
                              io::dtype_choices(defaults_.linrec_types));
}

void app::refuse_foreign_type(const std::string& path, io::dtype type) const {
  if (io::is_linrec_only(type) && !defaults_.linrec_types) {
    throw io::io_error(path, std::string(io::name(type)) + " data: " + name_ +
                                 " does not take it (only scanlab-linrec does; convert it to float32 or "
                                 "float64, e.g. numpy's a.astype(np.float32))");
  }
}

io::host_array app::load_file(const std::string& path, std::optional<io::dtype> type) const {
  io::read_options read;
  if (!options_.dtype.empty()) read.type = chosen_dtype();
  read.column = options_.column;
  return io::guard_allocation(path, [&] {
    io::host_array array = io::read_dataset(path, read);
    refuse_foreign_type(path, array.type());
    spdlog::debug("read {}: {} x {}", path, array.size(), io::name(array.type()));
    if (type && array.type() != *type) array = io::convert(array, *type, path);
    return array;
  });
}

io::host_array app::load_input(std::optional<io::dtype> type) const {
  if (!options_.input.empty()) {
    if (!options_.generate.empty()) throw std::invalid_argument("give either --input or --generate, not both");
    return load_file(options_.input, type);
  }
  gen::spec spec;
  spec.dist = defaults_.dist;
  if (!options_.generate.empty()) {
    auto dist = gen::parse_distribution(options_.generate);
    if (!dist) {
      throw std::invalid_argument("--generate '" + options_.generate + "': choose one of " + gen::distribution_choices());
    }
    spec.dist = *dist;
  }
  spec.seed = options_.seed;
  const std::int64_t n = options_.n > 0 || !count_text_.empty() ? options_.n : defaults_.n;
  const io::dtype t = type ? *type : chosen_dtype();
  gen::validate(spec, t, n);
  spdlog::info("input: {} generated {} x {} (seed {})", gen::name(spec.dist), n, io::name(t), spec.seed);
  return gen::generate_array(spec, t, n);
}

io::input_array app::open_input() const {
  if (!options_.input.empty() && !io::is_standard_stream(options_.input)) {
    if (!options_.generate.empty()) throw std::invalid_argument("give either --input or --generate, not both");
    io::read_options read;
    if (!options_.dtype.empty()) read.type = chosen_dtype();
    read.column = options_.column;
    io::input_array array = io::open_dataset(options_.input, read);
    refuse_foreign_type(options_.input, array.type());
    spdlog::debug("{} {}: {} x {}", array.is_mapped() ? "mapped" : "read", options_.input, array.size(),
                  io::name(array.type()));
    return array;
  }
  return io::input_array(load_input());
}

path_choice app::choose_path(std::uint64_t in_memory_bytes) const {
  if (!device_memory_text_.empty()) {
    const std::uint64_t budget = parse_bytes(device_memory_text_);
    return {true, budget, "--device-memory " + device_memory_text_};
  }
  const std::uint64_t free = free_device_memory();
  const std::uint64_t margin = (std::uint64_t{256} << 20) + free / 16;
  const std::uint64_t usable = free > margin ? free - margin : 0;
  if (in_memory_bytes <= usable) return {false, 0, "fits in device memory"};
  return {true, std::max<std::uint64_t>(usable, std::uint64_t{64} << 20),
          "the in-memory path needs " + show_bytes(static_cast<double>(in_memory_bytes)) + " of device memory, " +
              show_bytes(static_cast<double>(free)) + " are free"};
}

void app::select_device() const {
  const std::string device = select_gpu(options_.device);
  spdlog::info("GPU {}: {}", options_.device, device);
}

bool app::write_output(const io::host_array& array) const {
  if (options_.output.empty()) return false;
  io::write_dataset(options_.output, array);
  spdlog::info("wrote {} ({} x {})", options_.output, array.size(), io::name(array.type()));
  return true;
}

bench::report app::bench_report(std::vector<bench::result> rows) const {
  return bench::make_report(std::move(rows), options_.device, {.warmup = 3, .repeat = std::max(options_.repeat, 10)});
}

void app::write_report(const app_report& report) const {
  if (!options_.json.empty()) {
    bench::write_json(options_.json, report.to_json());
    spdlog::info("wrote {}", options_.json);
  }
  for (const auto& [path, markdown] : {std::pair{options_.csv, false}, std::pair{options_.markdown, true}}) {
    if (path.empty()) continue;
    if (!report.bench()) {
      spdlog::warn("{} is not written: there is no benchmark table without --bench", path);
      continue;
    }
    io::write_file_atomically(path, markdown ? bench::to_markdown(*report.bench()) : bench::to_csv(*report.bench()));
    spdlog::info("wrote {}", path);
  }
}

int app::finish(const app_report& report, const std::string& failure, bool ok) const {
  write_report(report);
  if (ok && report.passed()) return exit_ok;
  if (!failure.empty()) std::cerr << name_ << ": " << failure << '\n';
  return exit_error;
}

bench::report app::print_bench(std::vector<bench::result> rows) const {
  bench::report report = bench_report(std::move(rows));
  std::cout << '\n';
  bench::print(std::cout, report);
  return report;
}

std::string app::dataset_name() const {
  if (!options_.input.empty()) return options_.input;
  return options_.generate.empty() ? "uniform" : options_.generate;
}

}  // namespace scanlab::cli
