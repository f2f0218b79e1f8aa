// scanlab-bench suites: each primitive registers its variants here.
#pragma once

#include "common/bench.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <stdexcept>
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

// Whether `name` is to run: every variant when none were named.
inline bool is_selected(const suite_options& options, const std::string& name) {
  return options.variants.empty() ||
         std::find(options.variants.begin(), options.variants.end(), name) != options.variants.end();
}

// Tells options.progress (if any) which row comes next.
inline void report_progress(const suite_options& options, const std::string& variant, const std::string& type,
                            std::int64_t n) {
  if (options.progress) options.progress(variant + " " + type + " n=" + std::to_string(n));
}

// The type a suite runs, as shown in its rows, and how its input data is described.
struct type_run {
  std::string type_name;
  std::string dataset;
};

// Runs run.template operator()<T>(type) for each of options.types, T being the C++ type
// of the name (scanlab-bench has already checked that each is int32 or float32).
template <class Run>
void for_each_type(const suite_options& options, Run run) {
  for (const std::string& type : options.types) {
    if (type == "int32") {
      run.template operator()<std::int32_t>(type);
    } else if (type == "float32") {
      run.template operator()<float>(type);
    } else {
      throw std::invalid_argument("unknown type '" + type + "' (choose int32, float32)");
    }
  }
}

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
