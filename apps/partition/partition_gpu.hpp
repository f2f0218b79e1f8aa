// scanlab-partition and scanlab-quicksort: the GPU sides (partition_gpu_*.cu, quicksort_gpu_*.cu,
// one translation unit per element type), behind a plain C++ interface so the mains (spdlog,
// CLI, JSON) never see a CUDA header.
#pragma once

#include "common/array.hpp"
#include "common/bench.hpp"
#include "common/check.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace scanlab::partition_app {

// The element types both apps take.
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

// The order scanlab-quicksort sorts by (--order).
enum class sort_order {
  ascending,       // NaNs last: scanlab::nan_last_less, what radix sort gives too
  abs_descending,  // by absolute value, largest first, NaNs last: a user-defined comparator (floats)
};

struct sort_request {
  bool pairs = false;       // sort (key, original index) pairs; the indices come back too
  sort_order order = sort_order::ascending;
  bool validate = false;
  bool bench = false;
  bool cpu_bench = false;   // time std::sort too
  bool production_only = false;  // with bench: the quicksort and CUB's merge sort only
  int repeat = 20;
  std::int64_t leaf = 0;    // quicksort_options::leaf_items (0: default)
  std::optional<std::uint64_t> sort_seed;  // quicksort_options::seed (unset: a fresh one per call)
  int level_budget = -1;    // quicksort_options::level_budget (negative: the default)
  bool fixed_sampling = false;  // quicksort_options::fixed_sampling (the first versions' sampler)
  std::string dataset;
};

struct sort_report {
  io::host_array keys;                  // sorted
  std::optional<io::host_array> indices;  // with pairs: the int64 original positions (the argsort)
  std::vector<check> checks;
  std::vector<bench::result> rows;
  double memcpy_gbps = 0;
};

template <class T>
sort_report run_quicksort(const io::host_array& data, const sort_request& r);

}  // namespace scanlab::partition_app
