// scanlab-compact: the GPU side (compact_gpu.cuh, one translation unit per dtype):
// scanlab's production compaction, the three-phase version and CUB's DeviceSelect on the
// same device arrays; results and timings. Plain C++ interface, so main.cpp (spdlog, CLI,
// JSON) never sees a CUDA header.
#pragma once

#include "common/array.hpp"
#include "common/bench.hpp"
#include "compact/predicate.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace scanlab::compact_app {

struct gpu_request {
  predicate_spec predicate;
  bool indices = false;   // also the kept items' input positions
  bool compare = false;   // also run the three-phase version and CUB (for --validate)
  bool bench = false;     // time scanlab, the three-phase version and CUB
  bool tune = false;      // with bench: the production kernel's variants too
  bool production_only = false;  // with bench: scanlab and CUB only
  int repeat = 20;
  std::string dataset;    // names the input in benchmark rows
};

// One implementation's answer.
struct gpu_result {
  std::string implementation;  // "scanlab", "scanlab three-phase", "cub (DeviceSelect::If)", ...
  std::int64_t count = 0;
  io::host_array kept;         // count items of the input's dtype
  io::host_array indices;      // int64 positions (scanlab and three-phase, with indices)
};

struct gpu_report {
  std::vector<gpu_result> results;  // scanlab's first; the others with compare
  std::vector<bench::result> rows;  // with bench
  double memcpy_gbps = 0;
};

// data: the input (1-D view of any shape). flags: with --flags, one byte per element
// (0 or 1), else null. Needs a selected device. Results have the input's dtype.
gpu_report run_gpu(const io::host_array& data, const std::vector<std::uint8_t>* flags, const gpu_request& request);

// Per element type (compact_gpu_<type>.cu): `data` holds n items of T; results are
// labelled with `type`. Flags and unique on integer data run on the unsigned type of the
// same size (they only move and compare bits), so signed TUs hold only the predicates.
template <class T>
gpu_report run_typed(const T* data, std::int64_t n, io::dtype type, const std::vector<std::uint8_t>* flags,
                     const gpu_request& request);

}  // namespace scanlab::compact_app
