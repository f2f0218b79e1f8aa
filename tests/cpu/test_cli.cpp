// The CLI conventions every app shares: options, exit codes, input loading.
#include "common/cli.hpp"
#include "common/gpu.hpp"
#include "common/logging.hpp"
#include "common/npy.hpp"
#include "common/progress.hpp"

#include <dlfcn.h>
#include <spdlog/spdlog.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace {

using scanlab::cli::app;

// Runs `a` on the given arguments (argv[0] added) with `body`; returns the exit code.
int run_app(app& a, std::vector<std::string> args, const std::function<int()>& body = [] { return 0; }) {
  args.insert(args.begin(), a.name());
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  return a.run(static_cast<int>(argv.size()), argv.data(), body);
}

std::filesystem::path temp_dir() {
  auto dir = std::filesystem::temp_directory_path() /
             ("scanlab_test_cli_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(ParseCount, AcceptsTheDocumentedForms) {
  using scanlab::cli::parse_count;
  EXPECT_EQ(parse_count("0"), 0);
  EXPECT_EQ(parse_count("1000"), 1000);
  EXPECT_EQ(parse_count("1e9"), 1000000000);
  EXPECT_EQ(parse_count("2.5e6"), 2500000);
  EXPECT_EQ(parse_count("2^28"), std::int64_t{1} << 28);
  EXPECT_EQ(parse_count("2^40"), std::int64_t{1} << 40);
  EXPECT_EQ(parse_count("16M"), std::int64_t{16} << 20);
  EXPECT_EQ(parse_count("1G"), std::int64_t{1} << 30);
  EXPECT_EQ(parse_count("4k"), 4096);
}

TEST(ParseCount, RejectsNonsense) {
  using scanlab::cli::parse_count;
  for (const char* bad : {"", "abc", "-5", "1.5", "2^", "^3", "2^70", "1e30", "M", "12x", "1e-3"}) {
    EXPECT_THROW(parse_count(bad), std::invalid_argument) << bad;
  }
}

TEST(ParseBytes, SizesWithUnits) {
  using scanlab::cli::parse_bytes;
  EXPECT_EQ(parse_bytes("64K"), std::uint64_t{64} << 10);
  EXPECT_EQ(parse_bytes("512M"), std::uint64_t{512} << 20);
  EXPECT_EQ(parse_bytes("4G"), std::uint64_t{4} << 30);
  EXPECT_EQ(parse_bytes("4GiB"), std::uint64_t{4} << 30);
  EXPECT_EQ(parse_bytes("4GB"), std::uint64_t{4} << 30);
  EXPECT_EQ(parse_bytes("1.5G"), std::uint64_t{3} << 29);
  EXPECT_EQ(parse_bytes("2T"), std::uint64_t{2} << 40);
  EXPECT_EQ(parse_bytes("1000000"), 1000000u);
  EXPECT_EQ(parse_bytes("2^30"), std::uint64_t{1} << 30);
  for (const char* bad : {"", "B", "G", "abc", "-1G", "4X", "1e30", "GiB"}) {
    EXPECT_THROW(parse_bytes(bad), std::invalid_argument) << bad;
  }
}

TEST(App, HelpAndVersionExitZero) {
  app a("scanlab-test", "A test app.");
  EXPECT_EQ(run_app(a, {"--help"}), 0);
  app b("scanlab-test", "A test app.");
  EXPECT_EQ(run_app(b, {"--version"}), 0);
}

TEST(App, HelpListsTheCommonOptions) {
  app a("scanlab-test", "A test app.");
  const std::string help = a.parser().help();
  for (const char* option : {"--input", "--output", "--generate", "--n", "--dtype", "--seed", "--validate",
                             "--bench", "--repeat", "--device", "--json", "--verbose", "--quiet", "--version"}) {
    EXPECT_NE(help.find(option), std::string::npos) << option;
  }
}

TEST(App, BadCommandLineExitsTwo) {
  bool ran = false;
  const auto body = [&] {
    ran = true;
    return 0;
  };
  app a("scanlab-test", "A test app.");
  EXPECT_EQ(run_app(a, {"--no-such-option"}, body), scanlab::cli::exit_usage);
  app b("scanlab-test", "A test app.");
  EXPECT_EQ(run_app(b, {"--repeat", "zero"}, body), scanlab::cli::exit_usage);
  app c("scanlab-test", "A test app.");
  EXPECT_EQ(run_app(c, {"-i", "/no/such/file.npy"}, body), scanlab::cli::exit_usage);
  EXPECT_FALSE(ran);
}

TEST(App, ErrorsInTheBodyBecomeExitCodes) {
  app a("scanlab-test", "A test app.");
  EXPECT_EQ(run_app(a, {}, []() -> int { throw std::runtime_error("boom"); }), scanlab::cli::exit_error);
  app b("scanlab-test", "A test app.");
  EXPECT_EQ(run_app(b, {}, []() -> int { throw scanlab::no_gpu_error("no GPU"); }), scanlab::cli::exit_no_gpu);
  app c("scanlab-test", "A test app.");
  EXPECT_EQ(run_app(c, {"--n", "lots"}, [] { return 0; }), scanlab::cli::exit_usage);
}

TEST(App, GeneratesTheDefaultDatasetWithNoArguments) {
  app a("scanlab-test", "A test app.", {.dist = scanlab::gen::distribution::sorted, .n = 1000,
                                        .type = scanlab::io::dtype::i32});
  scanlab::io::host_array input;
  ASSERT_EQ(run_app(a, {"-q"}, [&] {
              input = a.load_input();
              return 0;
            }),
            0);
  ASSERT_EQ(input.size(), 1000);
  ASSERT_EQ(input.type(), scanlab::io::dtype::i32);
  const auto values = input.as<std::int32_t>();
  EXPECT_TRUE(std::is_sorted(values.begin(), values.end()));
}

TEST(App, GenerateOptionsChooseTheDataset) {
  app a("scanlab-test", "A test app.");
  scanlab::io::host_array input;
  ASSERT_EQ(run_app(a, {"-q", "--generate", "constant", "--n", "2^10", "--dtype", "uint16"}, [&] {
              input = a.load_input();
              return 0;
            }),
            0);
  EXPECT_EQ(input.size(), 1024);
  EXPECT_EQ(input.type(), scanlab::io::dtype::u16);
  app b("scanlab-test", "A test app.");
  EXPECT_EQ(run_app(b, {"-q", "--generate", "no-such-dist"}, [&] {
              input = b.load_input();
              return 0;
            }),
            scanlab::cli::exit_usage);
  app c("scanlab-test", "A test app.");
  EXPECT_EQ(run_app(c, {"-q", "--dtype", "complex128"}, [&] {
              input = c.load_input();
              return 0;
            }),
            scanlab::cli::exit_usage);
}

TEST(App, ReadsInputFilesAndConverts) {
  const auto dir = temp_dir();
  const auto file = dir / "in.npy";
  scanlab::io::host_array array(scanlab::io::dtype::f64, {4});
  const double values[] = {1.5, -2.0, 3.25, 0.0};
  std::copy(std::begin(values), std::end(values), array.as<double>().begin());
  scanlab::io::write_npy(file, array);

  app a("scanlab-test", "A test app.");
  scanlab::io::host_array input;
  ASSERT_EQ(run_app(a, {"-q", "-i", file.string()}, [&] {
              input = a.load_input(scanlab::io::dtype::f32);
              return 0;
            }),
            0);
  ASSERT_EQ(input.type(), scanlab::io::dtype::f32);
  ASSERT_EQ(input.size(), 4);
  EXPECT_EQ(input.as<float>()[2], 3.25f);

  // A malformed file is an error (exit 1) reported before any GPU work.
  const auto bad = dir / "bad.npy";
  std::ofstream(bad) << "not a numpy file";
  app b("scanlab-test", "A test app.");
  bool selected = false;
  EXPECT_EQ(run_app(b, {"-q", "-i", bad.string()}, [&] {
              input = b.load_input();
              selected = true;
              b.select_device();
              return 0;
            }),
            scanlab::cli::exit_error);
  EXPECT_FALSE(selected);

  app c("scanlab-test", "A test app.");
  EXPECT_EQ(run_app(c, {"-q", "-i", file.string(), "--generate", "uniform"}, [&] {
              input = c.load_input();
              return 0;
            }),
            scanlab::cli::exit_usage);
  std::filesystem::remove_all(dir);
}

TEST(App, WritesOutputAndReport) {
  const auto dir = temp_dir();
  app a("scanlab-test", "A test app.");
  const auto out = dir / "out.npy";
  const auto json = dir / "report.json";
  const auto csv = dir / "table.csv";
  ASSERT_EQ(run_app(a, {"-q", "-o", out.string(), "--json", json.string(), "--csv", csv.string()}, [&] {
              scanlab::io::host_array array(scanlab::io::dtype::i32, {3});
              for (int i = 0; i < 3; ++i) array.as<std::int32_t>()[static_cast<std::size_t>(i)] = i * 7;
              EXPECT_TRUE(a.write_output(array));
              scanlab::app_report report = a.new_report();
              report.result()["answer"] = 42;
              report.add({"the number", true, "six times seven"});
              a.write_report(report);
              return 0;
            }),
            0);
  const auto back = scanlab::io::read_npy(out);
  ASSERT_EQ(back.size(), 3);
  EXPECT_EQ(back.as<std::int32_t>()[2], 14);
  std::ifstream in(json);
  const auto doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc["schema"], "scanlab-app-report");
  EXPECT_EQ(doc["app"], "scanlab-test");
  EXPECT_EQ(doc["result"]["answer"], 42);
  EXPECT_EQ(doc["validation"][0]["against"], "the number");
  EXPECT_TRUE(doc["validation"][0]["max_error"].is_null());
  EXPECT_TRUE(doc["bench"].is_null());
  ASSERT_GE(doc["command_line"].size(), 5U);
  EXPECT_EQ(doc["command_line"][1], "-q");
  // No benchmark, no table: --csv is not written (a warning says so).
  EXPECT_FALSE(std::filesystem::exists(csv));
  std::filesystem::remove_all(dir);
}

TEST(App, NoGpuIsOneLineAndExitThree) {
  if (!scanlab::gpu_unavailable_reason().empty()) {
    app a("scanlab-test", "A test app.");
    EXPECT_EQ(run_app(a, {"-q"}, [&] {
                a.select_device();
                return 0;
              }),
              scanlab::cli::exit_no_gpu);
  } else {
    app a("scanlab-test", "A test app.");
    EXPECT_EQ(run_app(a, {"-q", "--device", "999"}, [&] {
                a.select_device();
                return 0;
              }),
              scanlab::cli::exit_usage);
  }
}

TEST(App, StandardStreamOptions) {
  // -i - is accepted (standard input is read only when the body asks for the input).
  app a("scanlab-test", "A test app.");
  EXPECT_EQ(run_app(a, {"-q", "-i", "-"}), 0);
  EXPECT_EQ(a.options().input, "-");
  // Two outputs to standard output: a usage error before the body runs (and before standard
  // output is touched).
  bool ran = false;
  app b("scanlab-test", "A test app.");
  std::string indices;
  b.parser().add_option("--indices", indices);
  EXPECT_EQ(run_app(b, {"-q", "-o", "-", "--indices", "-"}, [&] {
              ran = true;
              return 0;
            }),
            scanlab::cli::exit_usage);
  EXPECT_FALSE(ran);
  // An app's own input file option keeps wanting a file.
  app c("scanlab-test", "A test app.");
  std::string flags;
  c.parser().add_option("--flags", flags)->check(CLI::ExistingFile);
  testing::internal::CaptureStderr();
  EXPECT_EQ(run_app(c, {"-q", "--flags", "-"}), scanlab::cli::exit_usage);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("standard input ('-') is read by -i only"), std::string::npos);
}

TEST(AppDeathTest, OutputToStandardOutputMovesPrintingToStderr) {
  // In a child: standard output is a file; the app prints a result line and writes -o -.
  const auto dir = temp_dir();
  const auto out = dir / "out.npy";
  EXPECT_EXIT(
      {
        std::FILE* file = std::freopen(out.c_str(), "w", stdout);
        if (file == nullptr) std::_Exit(9);
        app a("scanlab-test", "A test app.");
        const int code = run_app(a, {"-q", "-o", "-", "--generate", "sorted", "--n", "5", "--dtype", "int32"}, [&] {
          const scanlab::io::host_array x = a.load_input();
          std::cout << "the result line" << std::endl;
          return a.write_output(x) ? 0 : 5;
        });
        std::_Exit(code);
      },
      ::testing::ExitedWithCode(0), "the result line");
  const scanlab::io::host_array back = scanlab::io::read_npy(out);
  EXPECT_EQ(back.size(), 5);
  EXPECT_EQ(back.type(), scanlab::io::dtype::i32);
  std::filesystem::remove_all(dir);
}

TEST(AppDeathTest, InputFromStandardInput) {
  const auto dir = temp_dir();
  const auto in = dir / "in.bin";  // a .npy, whatever its name says
  scanlab::io::host_array array(scanlab::io::dtype::u16, {3});
  for (int i = 0; i < 3; ++i) array.as<std::uint16_t>()[static_cast<std::size_t>(i)] = static_cast<std::uint16_t>(i + 40);
  scanlab::io::write_npy(dir / "in.npy", array);
  std::filesystem::rename(dir / "in.npy", in);
  EXPECT_EXIT(
      {
        if (std::freopen(in.c_str(), "r", stdin) == nullptr) std::_Exit(9);
        app a("scanlab-test", "A test app.");
        std::_Exit(run_app(a, {"-q", "-i", "-"}, [&] {
          const scanlab::io::host_array x = a.load_input(scanlab::io::dtype::f64);
          return x.size() == 3 && x.as<double>()[2] == 42.0 ? 0 : 5;
        }));
      },
      ::testing::ExitedWithCode(0), "");
  std::filesystem::remove_all(dir);
}

TEST(Logging, LevelFromSpdlogLevelSyntax) {
  using scanlab::cli::level_from_spec;
  namespace level = spdlog::level;
  EXPECT_EQ(level_from_spec("debug", "scanlab-cg"), level::debug);
  EXPECT_EQ(level_from_spec("WARN", "scanlab-cg"), level::warn);
  EXPECT_EQ(level_from_spec("off", "scanlab-cg"), level::off);
  EXPECT_EQ(level_from_spec(" err ", "scanlab-cg"), level::err);
  EXPECT_EQ(level_from_spec("scanlab-cg=debug", "scanlab-cg"), level::debug);
  EXPECT_EQ(level_from_spec("scanlab-cg=debug", "scanlab-norms"), std::nullopt);
  EXPECT_EQ(level_from_spec("off,scanlab-cg=trace", "scanlab-cg"), level::trace);   // its own name wins
  EXPECT_EQ(level_from_spec("scanlab-cg=trace,off", "scanlab-cg"), level::trace);   // in either order
  EXPECT_EQ(level_from_spec("off,scanlab-cg=trace", "scanlab-sort"), level::off);
  EXPECT_EQ(level_from_spec("loud", "scanlab-cg"), std::nullopt);                    // unknown words ignored
  EXPECT_EQ(level_from_spec("", "scanlab-cg"), std::nullopt);
}

TEST(Logging, CommandLineWinsOverTheEnvironment) {
  using scanlab::cli::log_level;
  namespace level = spdlog::level;
  EXPECT_EQ(log_level("a", std::nullopt, nullptr), level::info);
  EXPECT_EQ(log_level("a", std::nullopt, "warn"), level::warn);
  EXPECT_EQ(log_level("a", std::nullopt, "nonsense"), level::info);
  EXPECT_EQ(log_level("a", level::debug, "off"), level::debug);  // -v
  EXPECT_EQ(log_level("a", level::warn, "trace"), level::warn);  // -q
}

TEST(Logging, AppsHonourSpdlogLevel) {
  const auto level_after = [](std::vector<std::string> args, const char* spec) {
    if (spec != nullptr) ::setenv("SPDLOG_LEVEL", spec, 1);
    app a("scanlab-test", "A test app.");
    spdlog::level::level_enum seen = spdlog::level::n_levels;
    run_app(a, std::move(args), [&] {
      seen = spdlog::default_logger()->level();
      return 0;
    });
    ::unsetenv("SPDLOG_LEVEL");
    return seen;
  };
  EXPECT_EQ(level_after({}, nullptr), spdlog::level::info);
  EXPECT_EQ(level_after({}, "error"), spdlog::level::err);
  EXPECT_EQ(level_after({}, "scanlab-test=debug,warn"), spdlog::level::debug);
  EXPECT_EQ(level_after({"-v"}, "error"), spdlog::level::debug);
  EXPECT_EQ(level_after({"-q"}, "trace"), spdlog::level::warn);
}

TEST(NoGpuReason, SaysWhatIsMissing) {
  scanlab::cuda_probe probe;
  probe.status = 35;
  probe.status_text = "CUDA driver version is insufficient for CUDA runtime version";
  probe.insufficient_driver = true;
  probe.driver_loaded = false;
  probe.load_error = "cannot open shared object file: No such file or directory";
  probe.runtime_version = 13000;
  const std::string none = scanlab::no_gpu_reason(probe);
  EXPECT_EQ(none.rfind("no NVIDIA driver found (libcuda.so.1 could not be loaded: cannot open shared object file", 0), 0)
      << none;
  EXPECT_EQ(none.find("insufficient"), std::string::npos) << none;

  probe.driver_loaded = true;
  probe.driver_version = 12040;
  const std::string old = scanlab::no_gpu_reason(probe);
  EXPECT_NE(old.find("the NVIDIA driver is too old"), std::string::npos) << old;
  EXPECT_NE(old.find("CUDA up to 12.4"), std::string::npos) << old;
  EXPECT_NE(old.find("runtime is 13.0"), std::string::npos) << old;

  probe.insufficient_driver = false;
  probe.status = 100;
  probe.status_text = "no CUDA-capable device is detected";
  EXPECT_EQ(scanlab::no_gpu_reason(probe), "no CUDA-capable GPU found (no CUDA-capable device is detected)");
  scanlab::cuda_probe fine;
  EXPECT_EQ(scanlab::no_gpu_reason(fine), "no CUDA-capable GPU found");  // no error, no device
  fine.device_count = 1;
  EXPECT_EQ(scanlab::no_gpu_reason(fine), "");
  EXPECT_EQ(scanlab::cuda_version_text(13000), "13.0");
  EXPECT_EQ(scanlab::cuda_version_text(12090), "12.9");
}

TEST(NoGpuReason, ThisMachineWithoutADriver) {
  if (void* handle = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL)) {
    ::dlclose(handle);
    GTEST_SKIP() << "libcuda.so.1 is installed here";
  }
  const std::string reason = scanlab::gpu_unavailable_reason();
  EXPECT_EQ(reason.rfind("no NVIDIA driver found (libcuda.so.1 could not be loaded", 0), 0) << reason;
}

TEST(StatusLine, SilentWhereStderrIsNoTerminal) {
  if (scanlab::cli::stderr_is_terminal()) GTEST_SKIP() << "stderr is a terminal";
  testing::internal::CaptureStderr();
  {
    scanlab::cli::status_line line("scanlab-test", true, 4, std::chrono::milliseconds(0));
    EXPECT_FALSE(line.enabled());
    EXPECT_FALSE(line.due());
    line.show("iteration 1", true);
    line.append(", more");
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

}  // namespace
