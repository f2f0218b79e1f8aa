// Benchmark reports: the rows of bench::harness measurements with everything needed to
// read them later (device, driver, build, harness settings, ceilings, clocks), printed as
// a text table and written as JSON (the "bench" object of docs/json-schema.md), CSV or
// Markdown. Host code only; the JSON shape is checked by tests/schema.
#pragma once

#include "common/bench.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace scanlab::bench {

// What the binaries were built from (generated at build time: apps/common/build_info.cmake).
struct build_info {
  std::string commit;              // git commit hash, "unknown" outside a git checkout
  bool dirty = false;              // tracked files differed from that commit
  std::string cuda_architectures;  // CMAKE_CUDA_ARCHITECTURES as built ("90", "75,80,...")
  std::string scanlab_version;
};
build_info this_build();

// Where and how a report's rows were measured.
struct environment {
  device_info device;
  std::optional<std::string> driver_version;  // "580.159.04" (NVML); nullopt without NVML
  bool nvml = false;                          // clocks were sampled
  double memcpy_gbps = 0;                     // the read + write ceiling
  std::optional<double> read_gbps;            // the read-only ceiling, measured when a row needs it
  config settings;                            // what the app asked the harness for (rows record their own)
};

struct report {
  std::vector<result> rows;
  environment env;
  [[nodiscard]] std::optional<double> ceiling_gbps(ceiling c) const;
  // A row's GB/s as a percentage of its ceiling; nullopt for ceiling::none.
  [[nodiscard]] std::optional<double> percent_of_ceiling(const result& r) const;
  [[nodiscard]] bool throttled() const;
};

// Queries the device and driver and measures the ceilings the rows are compared with
// (each once per process: a ceiling the app's harness already measured is not measured again).
// Needs the device selected.
report make_report(std::vector<result> rows, int device, config settings);

// The text table with its footer (ceilings, settings, clocks, baseline).
void print(std::ostream& out, const report& r);
// The "bench" object of an app report.
nlohmann::json to_json(const report& r);
// One line per row, raw numbers (times in ms), a header line first.
std::string to_csv(const report& r);
// The text table's cells and footer as a Markdown table.
std::string to_markdown(const report& r);

// Writes JSON atomically (temporary file, then rename).
void write_json(const std::filesystem::path& path, const nlohmann::json& document);

}  // namespace scanlab::bench
