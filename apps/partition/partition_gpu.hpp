// scanlab-partition: the GPU side (partition_gpu_<type>.cu, one translation unit per element
// type, generated), behind a plain C++ interface so the main (spdlog, CLI, JSON) never sees a
// CUDA header. scanlab-quicksort (apps/quicksort) takes the same element types.
#pragma once

#include "common/array.hpp"
#include "common/bench.hpp"
#include "common/check.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace scanlab::partition_app {

// The element types scanlab-partition and scanlab-quicksort take.
inline bool supported(io::dtype t) {
  return t == io::dtype::i32 || t == io::dtype::u32 || t == io::dtype::i64 || t == io::dtype::f32 ||
         t == io::dtype::f64;
}

using scanlab::check;  // {against, passed, detail}

struct partition_request {
  int ways = 3;          // 2: x < pivot selected; 3: less | equal | greater
  bool stable = false;   // the last part in input order too
  bool validate = false;
  bool bench = false;
  bool production_only = false;  // with bench: partition, partition_three_way and CUB only
  int repeat = 20;
  std::string dataset;   // names the input in benchmark rows
};

struct partition_report {
  io::host_array output;       // the partitioned array
  std::int64_t counts[3] = {};  // two-way: selected, rejected, 0; three-way: less, equal, greater
  std::vector<check> checks;
  std::vector<bench::result> rows;
  double memcpy_gbps = 0;
};

// pivot: one element of data's dtype. Needs a selected device.
template <class T>
partition_report run_partition(const io::host_array& data, const io::host_array& pivot, const partition_request& r);

}  // namespace scanlab::partition_app
