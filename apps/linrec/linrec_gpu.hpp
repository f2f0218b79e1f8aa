// scanlab-linrec: the GPU side (linrec_gpu_float.cu, linrec_gpu_double.cu): scanlab's
// linear recurrence solver (forward, reverse, the backward pass) and CUB's generic scan on
// the same device arrays. Plain C++
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
  std::int64_t batch = 1;             // sequences (channels-last: groups * channels; offsets: their count)
  std::int64_t length = 0;            // of every sequence (not with offsets)
  bool interleaved = false;           // [length, batch] instead of [batch, length]
  std::int64_t channels = 0;          // > 0: channels-last [batch / channels, length, channels]
  std::vector<std::int64_t> offsets;  // non-empty: variable lengths, batch + 1 values over p's elements
  std::vector<double> x0s;            // one initial state per sequence
  bool final_only = false;            // only the last state of each sequence
  bool reverse = false;               // x[i] = a[i] x[i+1] + b[i] from x[n] = x0 (the final state is x[0])
  const io::host_array* grad_x = nullptr;  // the backward pass (form ab, forward): dL/dx, same shape and dtype as p
  bool compare = false;               // also CUB's solution (and gradients); not for channels-last or offsets
  bool bench = false;                 // time scanlab and CUB
  bool variants = false;              // with bench: scanlab's tuning variants too (float32, row-major)
  int repeat = 20;
  std::string dataset;                // names the input in benchmark rows
};

// The backward pass's results: dL/da and dL/db in the shape of the input, dL/dx0 [batch].
struct gradient_arrays {
  io::host_array a, b, x0;
};

struct gpu_report {
  io::host_array x;                    // the solution, or the final states ([batch])
  std::optional<io::host_array> cub_x;  // CUB's, same shape as x (with compare)
  std::optional<gradient_arrays> gradients;      // with grad_x: scanlab's (of scanlab's x)
  std::optional<gradient_arrays> cub_gradients;  // with grad_x and compare: CUB's (of the same x)
  std::vector<bench::result> rows;     // with bench: scanlab first, then CUB, then variants (with grad_x:
                                       // the backward pass's rows; x is not timed)
  double memcpy_gbps = 0;
};

gpu_report run_gpu_f32(const gpu_request& request);
gpu_report run_gpu_f64(const gpu_request& request);

}  // namespace scanlab::linrec_app
