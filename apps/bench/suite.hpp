// scanlab-bench suites: each primitive registers its variants here.
#pragma once

#include "common/bench.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace scanlab::bench {

struct suite_options {
  std::vector<std::int64_t> sizes;     // element counts to run
  std::vector<std::string> types;      // "int32", "float32"
  std::vector<std::string> variants;   // empty: all; else only these names (cub always runs as the baseline)
  bool validate = true;                // check each variant's output once against CUB's
  std::function<void(const std::string&)> progress;  // called before each row, for a progress line
};

struct suite {
  std::string name;         // "reduce"
  std::string description;  // one line for --help
  std::vector<std::string> variants;  // names in ladder order, then "production", then "cub"
  // Runs every selected (variant, type, size); rows carry baseline_ms = CUB's time on the same input.
  std::function<std::vector<result>(harness&, const suite_options&)> run;
};

suite reduce_suite();
suite scan_suite();

}  // namespace scanlab::bench
