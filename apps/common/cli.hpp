// The command-line conventions every scanlab app shares, written once.
//
//   --help, --version, -i/--input FILE, -o/--output FILE, --generate DIST with
//   --n, --dtype, --seed (an embedded default dataset: every app runs with no
//   arguments), --column, --validate, --bench, --repeat N, --device N,
//   --variants all|production, --json FILE, --csv FILE, --markdown FILE, -v/--verbose,
//   -q/--quiet.
//
// An app builds a scanlab::cli::app, adds its own options to parser(), and calls
// run() with its body. Inside the body: load_input() first (a bad file is
// reported before the GPU is touched), then select_device().
//
// Standard streams: -i - reads the input from standard input, -o - writes the output as a .npy
// to standard output (common/dataset.hpp). Given an output "-", run() points stdout at stderr
// before the body runs (io::reserve_standard_output), so that the results and tables an app
// prints stay readable and the stream stays a valid .npy. Logging: common/logging.hpp
// (-q/-v, then SPDLOG_LEVEL).
//
// Exit codes: 0 success, 1 error, 2 bad command line, 3 no usable GPU.
#pragma once

#include "common/array.hpp"
#include "common/generate.hpp"
#include "common/mapped_input.hpp"
#include "common/operators.hpp"
#include "common/report.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace scanlab::cli {

inline constexpr int exit_ok = 0;
inline constexpr int exit_error = 1;
inline constexpr int exit_usage = 2;
inline constexpr int exit_no_gpu = 3;

struct common_options {
  std::string input;     // -i: .npy, .bin/.raw/.dat (with --dtype), .txt/.csv/.tsv
  std::string output;    // -o
  std::string generate;  // --generate DIST (used when no --input)
  std::int64_t n = 0;    // --n
  std::string dtype;     // --dtype
  std::uint64_t seed = 42;
  std::string column;    // --column: CSV column name or 0-based index
  bool validate = false;
  bool bench = false;
  bool production_only = false;  // --variants production: with --bench, scanlab's production path and CUB only
  int repeat = 20;
  int device = 0;
  std::string json;      // --json FILE: the app report (docs/json-schema.md)
  std::string csv;       // --csv FILE: the benchmark table, one line per row
  std::string markdown;  // --markdown FILE: the benchmark table in Markdown
  bool verbose = false;
  bool quiet = false;
};

// What an app generates when it is given no input.
struct defaults {
  gen::distribution dist = gen::distribution::uniform;
  std::int64_t n = std::int64_t{1} << 24;
  io::dtype type = io::dtype::f32;
  // Whether the app takes the linrec-only dtypes (float16, bfloat16, complex64, complex128:
  // io::linrec_only_dtypes); the others refuse them in --dtype and in files, naming the type.
  bool linrec_types = false;
};

// Parses "1000", "1e9", "2^28", "16M", "1G" (K/M/G are powers of 1024) into a count;
// throws std::invalid_argument with the offending text.
std::int64_t parse_count(const std::string& text);

// Parses a size in bytes: "4G", "512M", "64K", "1000000", "1.5G", "2^30" (K, M, G, T are powers
// of 1024; "4GiB", "4GB" and "64KB" read the same); throws std::invalid_argument with the text.
std::uint64_t parse_bytes(const std::string& text);

// Which path an app with a streaming form takes (app::choose_path).
struct path_choice {
  bool streaming = false;
  std::uint64_t device_bytes = 0;  // streaming: the budget (--device-memory, or the free memory less the margin)
  std::string reason;              // for the log: why
};

class app {
 public:
  // dataset_options = false leaves out the options about one input dataset
  // (-i, -o, --generate, --n, --dtype, --seed, --column, --validate, --bench): for
  // tools such as scanlab-bench that define their own.
  app(std::string name, std::string description, defaults d = {}, bool dataset_options = true);

  [[nodiscard]] CLI::App& parser() { return parser_; }

  // --op sum|prod|min|max (default sum; common/operators.hpp), for the apps that take an
  // operator; the chosen one after parsing: op().
  void add_op_option();
  [[nodiscard]] ops::op_id op() const { return *ops::parse(op_text_); }

  // --device-memory LIMIT and --stream-slice SIZE, for the apps with a streaming path over
  // inputs larger than GPU memory (scanlab-reduce, -scan, -compact, -sort; issue #24).
  // slices = false: --device-memory only (scanlab-sort: its external sort is one call over the
  // whole input, which cannot be cut into slices).
  void add_streaming_options(bool slices = true);
  // Whether --device-memory was given (the streaming path forced): known at parse time, so an
  // app can refuse what its streaming path cannot do before it reads anything.
  [[nodiscard]] bool device_memory_given() const { return !device_memory_text_.empty(); }
  // --stream-slice: the input bytes processed per call of the streaming library (default 1 GiB).
  [[nodiscard]] std::uint64_t stream_slice_bytes() const;
  // The input without reading it where it can be mapped: -i FILE through io::open_dataset
  // (a .npy or raw file mapped, text read), -i - read, else generated as load_input() does.
  [[nodiscard]] io::input_array open_input() const;
  // Streaming or in memory: streaming with --device-memory's budget where it was given, else
  // where `in_memory_bytes` (what the in-memory path allocates on the device) does not fit in
  // the free device memory less a margin (256 MiB + 1/16 of it; the budget is then the free
  // memory less the margin). Needs select_device().
  [[nodiscard]] path_choice choose_path(std::uint64_t in_memory_bytes) const;

  // The --help footer: `notes` (may be empty), then the exit codes, naming what else makes a
  // run exit 1.
  void footer(const std::string& notes, const std::string& also_errors = "a validation failed");
  [[nodiscard]] common_options& options() { return options_; }
  [[nodiscard]] const std::string& name() const { return name_; }

  // Parses the command line, sets up logging, runs `body`, and turns every
  // failure into one line on stderr and the exit codes above. Returns the exit code.
  int run(int argc, char** argv, const std::function<int()>& body);

  // The input dataset: -i FILE if given, else --generate DIST (default distribution,
  // --n, --dtype, --seed). With `type` set, the data is converted to it (io::convert: a value
  // without a counterpart in `type` is an error naming the file). Reading or converting a
  // file that does not fit in memory is an io_error naming it.
  [[nodiscard]] io::host_array load_input(std::optional<io::dtype> type = std::nullopt) const;
  // Reads a further input file (a second operand, flags, ...) the same way.
  [[nodiscard]] io::host_array load_file(const std::string& path, std::optional<io::dtype> type = std::nullopt) const;
  // The dtype chosen on the command line, or the app's default.
  [[nodiscard]] io::dtype chosen_dtype() const;

  // Selects --device; throws no_gpu_error where there is none. Logs the device name.
  void select_device() const;

  // Writes `array` to -o if one was given (atomically). Returns whether it wrote.
  bool write_output(const io::host_array& array) const;
  // The command line run() was given, program first.
  [[nodiscard]] const std::vector<std::string>& command_line() const { return command_line_; }
  // An empty report of this run (the app's name and command line filled in).
  [[nodiscard]] app_report new_report() const { return app_report(name_, command_line_); }
  // The benchmark report of `rows`, measured on --device with the harness settings of --repeat.
  [[nodiscard]] bench::report bench_report(std::vector<bench::result> rows) const;
  // Writes `report` to --json and its benchmark table to --csv and --markdown, each if
  // given (atomically). A table asked for without a benchmark is a warning.
  void write_report(const app_report& report) const;
  // The end of a run: write_report(report), then exit_ok; or, where a check of the report failed
  // or `ok` is false, one line on stderr ("<app>: <failure>", none when `failure` is empty)
  // and exit_error.
  [[nodiscard]] int finish(const app_report& report, const std::string& failure = "", bool ok = true) const;
  // The benchmark report of `rows`, printed after a blank line (an app may print its own
  // summary below it before it puts the report in its app_report).
  bench::report print_bench(std::vector<bench::result> rows) const;
  // The input as benchmark rows name it: -i FILE, else the --generate distribution ("uniform"
  // when none was named).
  [[nodiscard]] std::string dataset_name() const;

 private:
  // io_error naming `path` for a dtype only scanlab-linrec takes, in the other apps (read or
  // mapped inputs alike).
  void refuse_foreign_type(const std::string& path, io::dtype type) const;
  void add_dataset_options();
  // With an option (-o, or an app's own output) given "-": keeps standard output for its data.
  void reserve_standard_output_for_data() const;

  std::string name_;
  defaults defaults_;
  common_options options_;
  std::string op_text_ = "sum";  // add_op_option()
  std::string device_memory_text_;  // add_streaming_options()
  std::string stream_slice_text_;
  std::string count_text_;
  std::string generate_text_;
  std::vector<std::string> command_line_;
  CLI::App parser_;
};

}  // namespace scanlab::cli
