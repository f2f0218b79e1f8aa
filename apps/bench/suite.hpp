// scanlab-bench suites: each primitive registers its variants here.
#pragma once

#include "common/bench.hpp"
#include "common/device_buffer.hpp"

#include <scanlab/error.hpp>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
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

// Calls body(n, seed) for each of options.sizes in order, refusing negative ones; the seeds
// of a type's inputs are 20261122, 20261123, ... (each size its own input).
template <class Body>
void for_each_size(const suite_options& options, const std::string& suite_name, const Body& body) {
  std::uint64_t seed = 20261122;
  for (const std::int64_t n : options.sizes) {
    if (n < 0) throw std::invalid_argument(suite_name + " suite: negative size");
    body(n, seed++);
  }
}

// call(count) with n as the narrowest count type that holds it (int, else std::int64_t): how
// CUB's own benchmarks and users call it.
template <class Call>
cudaError_t with_narrowest_count(std::int64_t n, const Call& call) {
  if (n <= INT_MAX) return call(static_cast<int>(n));
  return call(n);
}

// The rows of one type and size of a suite, timed on the same input. CUB runs first and is
// every row's baseline; each selected variant is then timed (temp storage allocated outside the
// timed work) and, with options.validate, its output from the last timed run checked once.
// A call `call(temp, temp_bytes, stream)` runs a variant (temp == nullptr: the size query).
class size_run {
 public:
  // `shape`: what every row of this run shares (suite, bound, type, dataset, n, bytes).
  size_run(harness& h, const suite_options& options, result shape)
      : h_(h), options_(options), shape_(std::move(shape)) {}

  // Times CUB: the baseline of every row, and the last row (its output is the reference).
  template <class Call>
  void time_cub(const Call& call) {
    report_progress(options_, "cub", shape_.type, shape_.n);
    std::size_t bytes = 0;
    SCANLAB_CHECK(call(nullptr, bytes, nullptr));
    device_buffer<unsigned char> temp(static_cast<std::int64_t>(std::max<std::size_t>(bytes, 1)));
    const timing t = h_.time([&](cudaStream_t s) { SCANLAB_CHECK(call(temp.data(), bytes, s)); });
    cub_ = row("cub", t, t.median_ms);
    cub_.validation = "n/a";  // the reference itself
  }

  // Times the variant `name` if it is selected: `prepare()` before the timed runs (poison its
  // output), `check()` after them, returning the row's validation ("pass", "FAIL: ...").
  template <class Call, class Prepare, class Check>
  void time_variant(const std::string& name, const Prepare& prepare, const Call& call, const Check& check) {
    if (!is_selected(options_, name)) return;
    report_progress(options_, name, shape_.type, shape_.n);
    std::size_t bytes = 0;
    SCANLAB_CHECK(call(nullptr, bytes, nullptr));
    device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
    prepare();
    const timing t = h_.time([&](cudaStream_t s) { SCANLAB_CHECK(call(temp.data(), bytes, s)); });
    result r = row(name, t, cub_.time.median_ms);
    if (options_.validate) r.validation = check();
    rows_.push_back(std::move(r));
  }

  // The variants' rows, then CUB's, appended to `out`.
  void finish(std::vector<result>& out) {
    for (result& r : rows_) out.push_back(std::move(r));
    out.push_back(std::move(cub_));
  }

 private:
  result row(const std::string& variant, const timing& t, double baseline_ms) const {
    result r = shape_;
    r.variant = variant;
    r.time = t;
    r.baseline_ms = baseline_ms;
    return r;
  }

  harness& h_;
  const suite_options& options_;
  result shape_;
  result cub_;
  std::vector<result> rows_;
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
