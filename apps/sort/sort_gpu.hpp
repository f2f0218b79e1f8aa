// scanlab-sort: the GPU side (sort_gpu_impl.cuh, instantiated per key width in
// sort_gpu_<bits>.cu): scanlab's radix sorts, CUB and thrust on the same device arrays,
// the CPU reference, timings. Plain C++ interface: main.cpp never sees a CUDA header.
#pragma once

#include "common/array.hpp"
#include "common/bench.hpp"
#include "common/check.hpp"

#include <optional>
#include <string>
#include <vector>

namespace scanlab::sort_app {

enum class mode { keys, pairs, argsort };

struct gpu_request {
  mode what = mode::keys;
  bool descending = false;
  int begin_bit = 0;
  int end_bit = -1;          // -1: all bits
  bool multipass = false;    // the teaching implementation instead of onesweep
  bool want_output = false;  // copy the sorted keys / values / permutation back
  bool validate = false;     // CPU std::stable_sort and CUB
  bool bench = false;        // onesweep, multipass, CUB (and thrust::sort for keys)
  bool production_only = false;  // with bench: onesweep and CUB only
  int repeat = 20;
  std::string dataset;       // names the input in benchmark rows
};

using scanlab::check;  // {against, passed, detail}

struct gpu_result {
  io::host_array keys;                  // sorted keys (with want_output)
  std::optional<io::host_array> values;  // sorted values, or the permutation (int64) for argsort
  std::vector<check> checks;            // with validate
  std::string skipped;                  // with validate: a check not made, and why
  std::vector<bench::result> rows;      // with bench: onesweep, multipass, cub[, thrust]
  double memcpy_gbps = 0;
  double sort_ms = 0;                   // the requested sort, one untimed-harness run (events)
};

// keys: any dtype; values (pairs only): a 4- or 8-byte dtype, same length. Needs a selected
// device. Defined per key type in sort_gpu_<bits>.cu.
template <class Key>
gpu_result run_typed(const io::host_array& keys, const io::host_array* values, const gpu_request& request);

}  // namespace scanlab::sort_app
