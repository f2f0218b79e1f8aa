// What scanlab-partition and scanlab-quicksort (apps/quicksort) share on the host: the type
// dispatch and the validation table.
#pragma once

#include "partition/partition_gpu.hpp"

#include "common/report.hpp"
#include "common/table.hpp"

#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace scanlab::partition_app {

// A clear error for the dtypes the apps do not take.
inline void require_supported(io::dtype t) {
  if (!supported(t)) {
    throw std::invalid_argument("dtype " + std::string(io::name(t)) +
                                " is not supported: use int32, uint32, int64, float32 or float64");
  }
}

// Calls f.template operator()<T>() for the supported dtype t.
template <class F>
decltype(auto) visit_supported(io::dtype t, F&& f) {
  switch (t) {
    case io::dtype::i32: return f.template operator()<std::int32_t>();
    case io::dtype::u32: return f.template operator()<std::uint32_t>();
    case io::dtype::i64: return f.template operator()<std::int64_t>();
    case io::dtype::f32: return f.template operator()<float>();
    case io::dtype::f64: return f.template operator()<double>();
    default: break;
  }
  require_supported(t);
  throw std::logic_error("unreachable");
}

// Prints the checks and adds them to the report's validation.
inline void report_checks(const std::vector<check>& checks, app_report& out) {
  text_table table({"against", "result", "what was compared"});
  for (const check& c : checks) {
    table.add_row({c.against, c.passed ? "pass" : "FAIL", c.detail});
    out.add(c);
  }
  std::cout << '\n';
  table.print(std::cout);
}

}  // namespace scanlab::partition_app
