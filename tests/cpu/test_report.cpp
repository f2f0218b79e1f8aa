// The app report (apps/common/report.hpp, bench_report.hpp) against its JSON Schema
// (docs/schema/app-report.schema.json): reports built here, without a GPU, with and
// without benchmark rows, clocks, ceilings and errors, are written and checked by
// scripts/validate-report.py; a report broken on purpose must fail it. Also the CSV and
// Markdown tables and the statistics of the samples.
#include "common/report.hpp"

#include "common/atomic_file.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

namespace bench = scanlab::bench;

std::filesystem::path repo_dir() { return std::filesystem::path(SCANLAB_SOURCE_TEST_DATA).parent_path().parent_path(); }

std::filesystem::path temp_dir() {
  auto dir = std::filesystem::temp_directory_path() /
             ("scanlab_report_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

bench::result row(std::string variant, std::vector<double> samples, bench::ceiling bound) {
  bench::result r;
  r.suite = "reduce";
  r.variant = std::move(variant);
  r.type = "int32";
  r.dataset = "uniform, \"quoted\", with commas";
  r.n = std::int64_t{1} << 20;
  r.bytes = 4.0 * static_cast<double>(r.n);
  r.bound = bound;
  r.time = bench::from_samples(std::move(samples), 3, true);
  return r;
}

// A report as an app writes it, built by hand: two reads against the read ceiling (one
// with CUB's time as the baseline), a copy against memcpy, a whole solve against none.
bench::report sample_report(bool with_nvml) {
  bench::report r;
  r.env.device.name = "made-up GPU (not a measurement)";
  r.env.device.sm_count = 132;
  r.env.device.cc_major = 9;
  r.env.device.l2_bytes = 50 << 20;
  r.env.device.global_bytes = std::int64_t{80} << 30;
  r.env.device.runtime_version = 13000;
  r.env.device.driver_version = 13000;
  r.env.memcpy_gbps = 2900;
  r.env.read_gbps = 3200;
  r.env.nvml = with_nvml;
  if (with_nvml) r.env.driver_version = "580.0.0";
  bench::result ours = row("scanlab", {0.10, 0.11, 0.10, 0.12}, bench::ceiling::read);
  bench::result cub = row("cub", {0.11, 0.11, 0.12}, bench::ceiling::read);
  ours.baseline_ms = cub.time.median_ms;
  ours.validation = "pass";
  bench::result copy = row("copy", {0.2}, bench::ceiling::memcpy);
  bench::result solve = row("solve", {3.0, 3.5}, bench::ceiling::none);
  solve.bytes = 0;
  if (with_nvml) {
    ours.time.clocks.sm_max_mhz = 1980;
    ours.time.clocks.samples = {{1980, 2619, 0}, {1980, 2619, scanlab::clocks::reason_gpu_idle}};
    cub.time.clocks.sm_max_mhz = 1980;
    cub.time.clocks.samples = {{1200, 2619, 0x4}};  // a power cap: throttled
  }
  r.rows = {ours, cub, copy, solve};
  return r;
}

scanlab::app_report sample_app_report(bool with_bench, bool with_nvml) {
  scanlab::app_report report("scanlab-reduce", {"scanlab-reduce", "--validate", "--bench"});
  report.result() = {{"n", 1 << 20}, {"dtype", "int32"}, {"values", {"42"}}};
  report.add({"CPU reference", true, "agrees"});
  report.add({"CPU long double (compensated)", false, "relative error 1e-3, bound 1e-6", 1e-3});
  if (with_bench) report.set_bench(sample_report(with_nvml));
  return report;
}

// Runs scripts/validate-report.py on `files`; its exit status, or -1 where there is no python3.
int validate(const std::vector<std::filesystem::path>& files) {
  if (std::system("python3 -c '' > /dev/null 2>&1") != 0) return -1;
  std::string command = "python3 '" + (repo_dir() / "scripts" / "validate-report.py").string() + "' -q";
  for (const auto& f : files) command += " '" + f.string() + "'";
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

TEST(Report, SerializedReportsMatchTheSchema) {
  const auto dir = temp_dir();
  std::vector<std::filesystem::path> files;
  for (const bool with_bench : {false, true}) {
    for (const bool with_nvml : {false, true}) {
      if (!with_bench && with_nvml) continue;
      files.push_back(dir / ("report_" + std::to_string(with_bench) + std::to_string(with_nvml) + ".json"));
      bench::write_json(files.back(), sample_app_report(with_bench, with_nvml).to_json());
    }
  }
  const int rc = validate(files);
  if (rc < 0) GTEST_SKIP() << "no python3 to run scripts/validate-report.py";
  EXPECT_EQ(rc, 0) << "see the lines above";
  std::filesystem::remove_all(dir);
}

TEST(Report, BrokenReportFailsTheSchema) {
  const auto dir = temp_dir();
  nlohmann::json doc = sample_app_report(true, true).to_json();
  doc["validation"][0].erase("passed");
  doc["bench"]["rows"][0]["ceiling"] = "l2";
  bench::write_json(dir / "broken.json", doc);
  const int rc = validate({dir / "broken.json"});
  if (rc < 0) GTEST_SKIP() << "no python3 to run scripts/validate-report.py";
  EXPECT_EQ(rc, 1);
  std::filesystem::remove_all(dir);
}

TEST(Report, FixturesMatchTheSchema) {
  // The made-up app report scanlab-report's test reads, and the committed results.
  std::vector<std::filesystem::path> files = {repo_dir() / "tests" / "report" / "synthetic_app.json"};
  for (const auto& entry : std::filesystem::directory_iterator(repo_dir() / "docs" / "results")) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  const int rc = validate(files);
  if (rc < 0) GTEST_SKIP() << "no python3 to run scripts/validate-report.py";
  EXPECT_EQ(rc, 0) << "see the lines above";
}

TEST(Report, JsonFieldsFollowTheRows) {
  const nlohmann::json doc = sample_app_report(true, true).to_json();
  EXPECT_EQ(doc["schema_version"], scanlab::report_schema_version);
  EXPECT_FALSE(doc["build"]["commit"].get<std::string>().empty());
  const auto& rows = doc["bench"]["rows"];
  ASSERT_EQ(rows.size(), 4U);
  EXPECT_EQ(rows[0]["ceiling"], "read");
  EXPECT_DOUBLE_EQ(rows[0]["ceiling_gbps"].get<double>(), 3200.0);
  EXPECT_NEAR(rows[0]["pct_of_ceiling"].get<double>(), 100.0 * rows[0]["gbps"].get<double>() / 3200.0, 1e-9);
  EXPECT_EQ(rows[0]["samples_ms"].size(), 4U);
  EXPECT_FALSE(rows[0]["clocks"]["throttled"].get<bool>());  // the idle sample at a high clock is fine
  EXPECT_TRUE(rows[1]["clocks"]["throttled"].get<bool>());
  EXPECT_EQ(rows[1]["clocks"]["reasons"], nlohmann::json({"sw_power_cap"}));
  EXPECT_EQ(rows[2]["ceiling"], "memcpy");
  EXPECT_TRUE(rows[2]["clocks"].is_null());
  EXPECT_TRUE(rows[3]["ceiling"].is_null());
  EXPECT_TRUE(rows[3]["pct_of_ceiling"].is_null());
  EXPECT_TRUE(doc["bench"]["throttled"].get<bool>());
  EXPECT_TRUE(doc["validation"][0]["max_error"].is_null());
  EXPECT_DOUBLE_EQ(doc["validation"][1]["max_error"].get<double>(), 1e-3);
}

TEST(Report, Statistics) {
  const bench::timing t = bench::from_samples({4.0, 1.0, 3.0, 2.0}, 2, false);
  EXPECT_DOUBLE_EQ(t.median_ms, 2.5);
  EXPECT_DOUBLE_EQ(t.min_ms, 1.0);
  EXPECT_DOUBLE_EQ(t.max_ms, 4.0);
  EXPECT_DOUBLE_EQ(t.mean_ms, 2.5);
  EXPECT_NEAR(t.noise, std::sqrt(5.0 / 3.0) / 2.5, 1e-12);  // sample standard deviation over the mean
  EXPECT_EQ(t.samples_ms, (std::vector<double>{4.0, 1.0, 3.0, 2.0}));  // in the order run
  EXPECT_EQ(t.runs, 4);
  const bench::timing less = bench::minus(t, 1.5);
  EXPECT_DOUBLE_EQ(less.median_ms, 1.0);
  EXPECT_DOUBLE_EQ(less.min_ms, 1e-6);  // never zero or negative
  EXPECT_DOUBLE_EQ(bench::from_samples({7.0}, 0, false).noise, 0.0);
  EXPECT_THROW((void)bench::from_samples({}, 0, false), std::logic_error);
}

TEST(Report, CsvAndMarkdownTables) {
  const bench::report r = sample_report(true);
  const std::string csv = bench::to_csv(r);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "suite,variant,type,dataset,n,bytes,median_ms,min_ms,max_ms,mean_ms,noise,runs,gbps,ceiling,"
            "pct_of_ceiling,baseline_ms,speedup_vs_baseline,check,sm_mhz_median,mem_mhz_median,throttled");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 5);
  EXPECT_NE(csv.find("\"uniform, \"\"quoted\"\", with commas\""), std::string::npos);  // RFC 4180 quoting
  const std::string md = bench::to_markdown(r);
  EXPECT_EQ(md.rfind("| suite | variant |", 0), 0U);
  EXPECT_NE(md.find("% read"), std::string::npos);
  EXPECT_NE(md.find("% memcpy"), std::string::npos);
  EXPECT_NE(md.find("throttled (sw_power_cap)"), std::string::npos);
  std::ostringstream text;
  bench::print(text, r);
  EXPECT_NE(text.str().find(" !"), std::string::npos);  // the throttled row is marked
  EXPECT_NE(text.str().find("read-only kernel 3200 GB/s"), std::string::npos);
  EXPECT_NE(bench::to_markdown(sample_report(false)).find("not sampled (NVML not available)"), std::string::npos);
}

}  // namespace
