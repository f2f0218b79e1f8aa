// scanlab-linrec: the GPU side (linrec_gpu_float.cu, linrec_gpu_double.cu): scanlab's
// linear recurrence solver and CUB's generic scan on the same device arrays. Plain C++
// interface, so main.cpp (spdlog, CLI, JSON) never sees a CUDA header.
#pragma once

#include "common/array.hpp"
#include "common/bench.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace scanlab::linrec_app {

enum class form { ab, lambda, ema };

struct gpu_request {
  form kind = form::ab;
  const io::host_array* p = nullptr;  // a, lambda or the signal (float32 or float64)
  const io::host_array* q = nullptr;  // b or u, same dtype and size (nullptr for ema)
  double alpha = 0;                   // ema
  std::int64_t batch = 1;
  std::int64_t length = 0;
  bool interleaved = false;           // [length, batch] instead of [batch, length]
  std::vector<double> x0s;            // one initial state per sequence
  bool final_only = false;            // only the last state of each sequence
  bool compare = false;               // also CUB's solution
  bool bench = false;                 // time scanlab and CUB
  bool variants = false;              // with bench: scanlab's tuning variants too (float32, row-major)
  int repeat = 20;
  std::string dataset;                // names the input in benchmark rows
};

struct gpu_report {
  io::host_array x;                    // the solution, or the final states ([batch])
  std::optional<io::host_array> cub_x;  // CUB's, same shape as x (with compare)
  std::vector<bench::result> rows;     // with bench: scanlab first, then CUB, then variants
  double memcpy_gbps = 0;
};

gpu_report run_gpu_f32(const gpu_request& request);
gpu_report run_gpu_f64(const gpu_request& request);

}  // namespace scanlab::linrec_app
