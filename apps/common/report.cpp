#include "common/report.hpp"

#include "common/table.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <ostream>

namespace scanlab {

void print_checks(std::ostream& out, const std::vector<check>& checks) {
  text_table table({"check", "result"});
  for (const check& c : checks) table.add_row({c.against, (c.passed ? "pass: " : "FAIL: ") + c.detail});
  out << '\n';
  table.print(out);
}

nlohmann::json to_json(const check& c) {
  return {{"against", c.against},
          {"passed", c.passed},
          {"max_error", c.max_error ? nlohmann::json(*c.max_error) : nlohmann::json()},
          {"detail", c.detail}};
}

app_report::app_report(std::string app, std::vector<std::string> command_line)
    : app_(std::move(app)), command_line_(std::move(command_line)) {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  timestamp_ = stamp;
}

bool app_report::passed() const {
  return std::all_of(checks_.begin(), checks_.end(), [](const check& c) { return c.passed; });
}

nlohmann::json app_report::to_json() const {
  const bench::build_info build = bench::this_build();
  nlohmann::json validation = nlohmann::json::array();
  for (const check& c : checks_) validation.push_back(scanlab::to_json(c));
  return {
      {"schema", report_schema},
      {"schema_version", report_schema_version},
      {"app", app_},
      {"scanlab_version", build.scanlab_version},
      {"build", {{"commit", build.commit}, {"dirty", build.dirty}, {"cuda_architectures", build.cuda_architectures}}},
      {"command_line", command_line_},
      {"timestamp", timestamp_},
      {"result", result_},
      {"validation", std::move(validation)},
      {"bench", bench_ ? bench::to_json(*bench_) : nlohmann::json()},
  };
}

}  // namespace scanlab
