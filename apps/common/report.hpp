// The one report every scanlab app writes with --json (docs/json-schema.md,
// docs/schema/app-report.schema.json): who ran and how (app, build, command line), the
// app's own results under "result", the checks of --validate under "validation", and the
// benchmark of --bench under "bench". Host code only.
#pragma once

#include "common/bench_report.hpp"
#include "common/check.hpp"

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace scanlab {

nlohmann::json to_json(const check& c);

// The checks as a table (check, "pass: detail" or "FAIL: detail"), after a blank line.
void print_checks(std::ostream& out, const std::vector<check>& checks);

class app_report {
 public:
  // `app` as the app names itself ("scanlab-norms"); `command_line`: argv, program first.
  app_report(std::string app, std::vector<std::string> command_line);

  // The app's own fields (inputs, results, parameters): an object, documented per app.
  [[nodiscard]] nlohmann::json& result() { return result_; }
  [[nodiscard]] const nlohmann::json& result() const { return result_; }

  void add(check c) { checks_.push_back(std::move(c)); }
  [[nodiscard]] const std::vector<check>& checks() const { return checks_; }
  // Every check passed (true when there are none).
  [[nodiscard]] bool passed() const;

  void set_bench(bench::report r) { bench_ = std::move(r); }
  [[nodiscard]] const std::optional<bench::report>& bench() const { return bench_; }

  [[nodiscard]] nlohmann::json to_json() const;

 private:
  std::string app_;
  std::vector<std::string> command_line_;
  std::string timestamp_;
  nlohmann::json result_ = nlohmann::json::object();
  std::vector<check> checks_;
  std::optional<bench::report> bench_;
};

// The schema's name and version, as the "schema" and "schema_version" of every report.
inline constexpr const char* report_schema = "scanlab-app-report";
inline constexpr int report_schema_version = 1;

}  // namespace scanlab
