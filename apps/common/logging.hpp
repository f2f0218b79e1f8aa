// The apps' log: spdlog on standard error, one line a message, "<app>: <level>: <message>",
// so that standard output holds only results (or, with -o -, only the data).
//
// The level, first rule that applies:
//   1. the command line: -q/--quiet (warnings and errors; scanlab-gen: errors only) or
//      -v/--verbose (debug);
//   2. SPDLOG_LEVEL, in spdlog's own syntax (spdlog/cfg/env.h): a level for every logger
//      ("debug", "warn", "off", ...), and/or `name=level` for one: each app's logger is named
//      after the app, so SPDLOG_LEVEL="scanlab-cg=debug" reaches scanlab-cg alone. A `name=level`
//      for this app wins over a bare level; unknown level words are ignored, as spdlog does;
//   3. info.
#pragma once

#include <spdlog/common.h>

#include <optional>
#include <string>

namespace scanlab::cli {

// The level SPDLOG_LEVEL's text `spec` gives the logger `app_name`, if it gives one.
[[nodiscard]] std::optional<spdlog::level::level_enum> level_from_spec(const std::string& spec,
                                                                      const std::string& app_name);

// The rule above: `command_line` is what -q/-v chose (nullopt: neither), `spec` SPDLOG_LEVEL
// (nullptr: unset).
[[nodiscard]] spdlog::level::level_enum log_level(const std::string& app_name,
                                                  std::optional<spdlog::level::level_enum> command_line,
                                                  const char* spec);

// Makes the stderr logger named `app_name` the default one, at log_level() with the
// environment's SPDLOG_LEVEL.
void setup_logging(const std::string& app_name, std::optional<spdlog::level::level_enum> command_line);

}  // namespace scanlab::cli
