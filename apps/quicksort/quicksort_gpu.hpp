// scanlab-quicksort: the GPU side (quicksort_gpu_<type>.cu, one translation unit per element
// type, generated from quicksort_gpu_type.cu.in), behind a plain C++ interface so the main
// (spdlog, CLI, JSON) never sees a CUDA header. The element types are scanlab-partition's
// (partition/partition_gpu.hpp): the quicksort is built on its partitions.
#pragma once

#include "partition/partition_gpu.hpp"

#include "common/array.hpp"
#include "common/bench.hpp"
#include "common/check.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace scanlab::quicksort_app {

using partition_app::supported;
using scanlab::check;

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

}  // namespace scanlab::quicksort_app
