// scanlab-gen: writes a synthetic dataset as a .npy file, of any size.
//
// The array is never held whole: it is generated in chunks of 8 MiB on worker threads
// (scanlab::gen is counter-based, so chunks are independent) while the main thread streams the
// finished chunks to an npy_writer; the file appears under its name only when complete.
//
// Where it goes: -o FILE.npy; -o - (standard output, e.g. into another app's -i -). Without
// -o: standard output when that is not a terminal (scanlab-gen | scanlab-norms -i -), else a
// file in the current directory named after the dataset, DIST-DTYPE-N-seedS.npy. So with no
// arguments at all it writes the default dataset (16M uniform float32, seed 42), as every app
// with no arguments runs on its default dataset.
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <future>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/atomic_file.hpp"
#include "common/cli.hpp"
#include "common/generate.hpp"
#include "common/logging.hpp"
#include "common/npy.hpp"
#include "common/progress.hpp"

#include <spdlog/spdlog.h>

namespace {

using namespace scanlab;
using clock_type = std::chrono::steady_clock;

constexpr const char* program = "scanlab-gen";

// 8 MiB per chunk: large enough that thread hand-offs cost nothing, and a whole number of
// nearly-sorted blocks (2^16 elements) for every dtype, so no block is set up twice.
constexpr std::size_t chunk_bytes = std::size_t{8} << 20;
static_assert(chunk_bytes % (static_cast<std::size_t>(gen::nearly_sorted_block) * 8) == 0);

// Generates the dataset chunk by chunk on `threads` workers and streams it to `path`.
void write_dataset(const gen::spec& s, io::dtype t, std::int64_t n, const std::filesystem::path& path,
                   unsigned threads, cli::progress_bar& progress) {
  io::npy_writer writer(path, t, {n});
  const std::size_t element = io::size_of(t);
  const auto chunk = static_cast<std::int64_t>(chunk_bytes / element);
  const std::int64_t chunks = (n + chunk - 1) / chunk;

  // While chunk c is written, chunks c+1 .. c+threads are being generated: threads + 1 buffers.
  const std::size_t buffer_count = threads + 1;
  const auto buffer_bytes = static_cast<std::size_t>(std::min(chunk, std::max<std::int64_t>(n, 1))) * element;
  std::vector<std::unique_ptr<std::byte[]>> buffers;
  for (std::size_t b = 0; b < buffer_count && static_cast<std::int64_t>(b) < chunks; ++b) {
    buffers.push_back(std::make_unique_for_overwrite<std::byte[]>(buffer_bytes));
  }
  // Declared after the buffers: on an error the futures are waited for before the buffers go.
  std::deque<std::future<void>> pending;
  const auto launch = [&](std::int64_t c) {
    std::byte* buffer = buffers[static_cast<std::size_t>(c) % buffer_count].get();
    const std::int64_t first = c * chunk;
    const std::int64_t count = std::min(chunk, n - first);
    pending.push_back(std::async(std::launch::async, [&s, t, n, first, count, buffer] {
      gen::generate(s, t, n, first, count, buffer);
    }));
  };
  for (std::int64_t c = 0; c < chunks && c < static_cast<std::int64_t>(threads); ++c) launch(c);

  std::uint64_t written = 0;
  for (std::int64_t c = 0; c < chunks; ++c) {
    pending.front().get();
    pending.pop_front();
    if (c + threads < chunks) launch(c + threads);
    if (cli::interrupted()) throw std::runtime_error("interrupted; nothing written");
    const std::int64_t count = std::min(chunk, n - c * chunk);
    const std::size_t bytes = static_cast<std::size_t>(count) * element;
    writer.write(buffers[static_cast<std::size_t>(c) % buffer_count].get(), bytes);
    written += bytes;
    progress.update(written);
  }
  progress.syncing();
  writer.commit();
}

std::string help_footer() {
  std::string text = "Distributions (--dist):\n";
  for (gen::distribution d : gen::all_distributions) {
    std::string name(gen::name(d));
    name.resize(std::max<std::size_t>(name.size() + 2, 18), ' ');
    text += "  " + name + std::string(gen::summary(d)) + "\n";
  }
  text +=
      "\nIntegers draw from their whole range; floats from [0, 1) on a grid of 2^24 (float32) or 2^53\n"
      "(float64) points, except normal (N(0, 1)), zipf (the rank) and constant (the value).\n"
      "Integer normal is centred in the range with standard deviation range/8, rounded and clamped.\n"
      "sorted: element i = floor((i + u_i) * R / n) steps up the R grid values, u_i uniform in [0, 1).\n"
      "nearly-sorted moves elements only within their block of 65536. few-unique needs k <= the number\n"
      "of values of the dtype.\n"
      "\nElement types (--dtype): " +
      io::dtype_choices() +
      ";\nalso u16 ... i64, f32, f64, float, double and NumPy codes (u1, i4, <f8, ...).\n"
      "Element counts (--n): 1000, 1e9, 2.5e6, 2^28; the suffixes K, M, G are powers of 1024\n"
      "(16M = 2^24 = 16777216, 1G = 2^30).\n"
      "\nThe bytes depend only on the distribution, its parameters, the seed, the dtype and n: the\n"
      "same command writes the same file with any thread count, and on any machine (normal and zipf\n"
      "use the C math library, whose last bits may differ elsewhere). The file appears only when\n"
      "complete. Without -o: standard output if it is not a terminal, else DIST-DTYPE-N-seedS.npy here.\n"
      "Log: -q shows errors only; otherwise SPDLOG_LEVEL (e.g. warn, off) sets what is shown.\n"
      "Exit codes: 0 success, 1 error, 2 bad command line.";
  return text;
}

// Where the dataset goes when no -o is given (see the top of this file).
std::string default_output(const gen::spec& s, io::dtype t, std::int64_t n) {
  if (isatty(STDOUT_FILENO) != 1) return "-";
  return std::string(gen::name(s.dist)) + "-" + std::string(io::name(t)) + "-" + std::to_string(n) + "-seed" +
         std::to_string(s.seed) + ".npy";
}

int run(int argc, char** argv) {
  std::string dist_text = "uniform";
  std::string count_text = "16M";
  std::string dtype_text = "float32";
  std::string output;
  gen::spec s;
  bool quiet = false;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());

  CLI::App parser("Writes a synthetic dataset of any size as a .npy file.", program);
  parser.set_version_flag("--version", std::string(program) + " (scanlab) " + SCANLAB_VERSION);
  parser.add_option("--dist", dist_text, "Distribution: " + gen::distribution_choices())->capture_default_str();
  parser.add_option("--n", count_text, "Number of elements, e.g. 1000, 1e9, 2^28, 16M")->capture_default_str();
  parser.add_option("--dtype", dtype_text, "Element type: " + io::dtype_choices())->capture_default_str();
  std::string seed_text = std::to_string(s.seed);
  parser.add_option("--seed", seed_text, "Seed, an integer in [0, 2^64): the same seed gives the same bytes")
      ->capture_default_str();
  parser.add_option("-o,--output", output,
                    "The .npy file to write; - for standard output (default: standard output if it is not a "
                    "terminal, else DIST-DTYPE-N-seedS.npy in the current directory)");
  auto* swap_option = parser.add_option("--swap-fraction", s.swap_fraction,
                                        "nearly-sorted: fraction of the elements moved by swaps, in [0, 1]")
                          ->capture_default_str();
  auto* unique_option =
      parser.add_option("--unique", s.unique, "few-unique: number of distinct values k >= 1")->capture_default_str();
  auto* zipf_s_option = parser.add_option("--zipf-s", s.zipf_s, "zipf: exponent s > 0")->capture_default_str();
  auto* zipf_ranks_option =
      parser.add_option("--zipf-ranks", s.zipf_ranks, "zipf: ranks 1..K (capped at what the dtype holds exactly)")
          ->capture_default_str();
  auto* and_option =
      parser.add_option("--and-count", s.and_count, "entropy-reduced: AND of k uniform words, 1 <= k <= 64")
          ->capture_default_str();
  auto* value_option =
      parser.add_option("--value", s.value, "constant: the value of every element")->capture_default_str();
  parser.add_option("--threads", threads, "Generator threads (default: all cores)")->check(CLI::Range(1u, 1024u));
  parser.add_flag("-q,--quiet", quiet, "No progress bar, warnings or summary line (errors only)");
  parser.footer(help_footer());

  try {
    parser.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return parser.exit(e);  // --help, --version
  } catch (const CLI::ParseError& e) {
    std::cerr << program << ": error: " << e.what() << " (see --help)\n";
    return cli::exit_usage;
  }
  cli::setup_logging(program, quiet ? std::optional(spdlog::level::err) : std::nullopt);
  const bool chatty = spdlog::should_log(spdlog::level::info);

  const auto dist = gen::parse_distribution(dist_text);
  if (!dist) {
    throw std::invalid_argument("unknown distribution '" + dist_text + "' (choose one of " +
                                gen::distribution_choices() + ")");
  }
  s.dist = *dist;
  const auto type = io::parse_dtype(dtype_text);
  if (!type) throw std::invalid_argument("unknown dtype '" + dtype_text + "' (choose one of " + io::dtype_choices() + ")");
  if (io::is_linrec_only(*type)) {
    throw std::invalid_argument("dtype '" + dtype_text + "': scanlab-gen does not generate " +
                                std::string(io::name(*type)) + " (choose one of " + io::dtype_choices() + ")");
  }
  if (!count_text.empty() && count_text.front() == '-') {
    throw std::invalid_argument("--n " + count_text + ": the element count must be >= 0");
  }
  const std::int64_t n = cli::parse_count(count_text);
  const auto* seed_end = seed_text.data() + seed_text.size();
  if (const auto [ptr, ec] = std::from_chars(seed_text.data(), seed_end, s.seed);
      ec != std::errc() || ptr != seed_end || seed_text.empty()) {
    throw std::invalid_argument("--seed " + seed_text + ": not an integer in [0, 2^64)");
  }
  if (output.empty()) output = default_output(s, *type, n);
  const std::filesystem::path path = output;
  const bool to_stdout = io::is_standard_stream(path);
  if (path.extension() != ".npy" && !to_stdout) {
    throw std::invalid_argument("-o " + output + ": scanlab-gen writes .npy files (or - for standard output)");
  }
  gen::validate(s, *type, n);
  if (to_stdout) io::reserve_standard_output();

  {
    // A parameter another distribution uses is most likely a mistake: say it is ignored.
    const std::pair<CLI::Option*, gen::distribution> parameters[] = {
        {swap_option, gen::distribution::nearly_sorted}, {unique_option, gen::distribution::few_unique},
        {zipf_s_option, gen::distribution::zipf},        {zipf_ranks_option, gen::distribution::zipf},
        {and_option, gen::distribution::entropy_reduced}, {value_option, gen::distribution::constant}};
    for (const auto& [option, user] : parameters) {
      if (option->count() > 0 && user != s.dist) {
        spdlog::warn("{} is ignored by {}", option->get_name(), gen::name(s.dist));
      }
    }
  }

  cli::catch_interrupts();
  const auto start = clock_type::now();
  {
    cli::progress_bar progress(program, static_cast<std::uint64_t>(n) * io::size_of(*type), chatty);
    write_dataset(s, *type, n, path, threads, progress);
  }
  const double seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  const std::uint64_t bytes = io::make_npy_header(*type, {n}).size() + static_cast<std::uint64_t>(n) * io::size_of(*type);
  spdlog::info("wrote {} x {}, {}, seed {} to {}: {} bytes in {:.2f} s", n, io::name(*type), gen::describe(s, *type),
               s.seed, to_stdout ? std::string(io::standard_output_name) : output, bytes, seconds);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::invalid_argument& e) {  // a bad parameter: the same exit code as every app
    std::cerr << program << ": error: " << e.what() << '\n';
    return cli::exit_usage;
  } catch (const std::exception& e) {
    std::cerr << program << ": error: " << e.what() << '\n';
  } catch (...) {
    std::cerr << program << ": error: unknown exception\n";
  }
  return cli::interrupted() ? cli::exit_interrupted : cli::exit_error;
}
