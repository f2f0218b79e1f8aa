#include "common/logging.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sstream>
#include <string_view>

namespace scanlab::cli {
namespace {

std::string trimmed(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())) != 0) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())) != 0) text.remove_suffix(1);
  return std::string(text);
}

std::optional<spdlog::level::level_enum> parse_level(std::string word) {
  std::transform(word.begin(), word.end(), word.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const spdlog::level::level_enum level = spdlog::level::from_str(word);
  if (level == spdlog::level::off && word != "off") return std::nullopt;  // from_str's "unknown"
  return level;
}

}  // namespace

std::optional<spdlog::level::level_enum> level_from_spec(const std::string& spec, const std::string& app_name) {
  std::optional<spdlog::level::level_enum> everyone, mine;
  std::istringstream items(spec);
  for (std::string item; std::getline(items, item, ',');) {
    const std::size_t equals = item.find('=');
    const std::string name = equals == std::string::npos ? std::string() : trimmed(item.substr(0, equals));
    const auto level = parse_level(trimmed(equals == std::string::npos ? item : item.substr(equals + 1)));
    if (!level) continue;
    if (name.empty()) everyone = level;
    else if (name == app_name) mine = level;
  }
  return mine ? mine : everyone;
}

spdlog::level::level_enum log_level(const std::string& app_name,
                                    std::optional<spdlog::level::level_enum> command_line, const char* spec) {
  if (command_line) return *command_line;
  if (spec != nullptr) {
    if (const auto level = level_from_spec(spec, app_name)) return *level;
  }
  return spdlog::level::info;
}

void setup_logging(const std::string& app_name, std::optional<spdlog::level::level_enum> command_line) {
  spdlog::drop(app_name);
  auto logger = spdlog::stderr_color_mt(app_name);
  logger->set_pattern("%n: %^%l%$: %v");
  logger->set_level(log_level(app_name, command_line, std::getenv("SPDLOG_LEVEL")));
  spdlog::set_default_logger(logger);
}

}  // namespace scanlab::cli
