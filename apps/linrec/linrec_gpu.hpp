// scanlab-linrec: the GPU side (linrec_gpu_<type>.cu, one translation unit per element
// type: float, double, float16, bfloat16, complex64, complex128): scanlab's
// linear recurrence solver (forward, reverse, the backward pass) and CUB's generic scan on
// the same device arrays. Plain C++
// interface, so main.cpp (spdlog, CLI, JSON) never sees a CUDA header.
#pragma once

#include "common/array.hpp"
#include "common/bench.hpp"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace scanlab::linrec_app {

enum class form { ab, lambda, ema };

struct gpu_request {
  form kind = form::ab;
  const io::host_array* p = nullptr;  // a, lambda or the signal (an element type: linrec_types.hpp)
  const io::host_array* q = nullptr;  // b or u, same dtype and size (nullptr for ema)
  double alpha = 0;                   // ema (rounded to the element type)
  std::int64_t batch = 1;             // sequences (channels-last: groups * channels; offsets: their count)
  std::int64_t length = 0;            // of every sequence (not with offsets)
  bool interleaved = false;           // [length, batch] instead of [batch, length]
  std::int64_t channels = 0;          // > 0: channels-last [batch / channels, length, channels]
  std::vector<std::int64_t> offsets;  // non-empty: variable lengths, batch + 1 values over p's elements
  io::host_array x0s;                 // one initial state per sequence: [batch], p's dtype
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
// Whether --tune's tile-shape variants were built (-DSCANLAB_LINREC_TUNE=ON).
bool tuning_variants_built();
gpu_report run_gpu_f64(const gpu_request& request);
// The 16-bit and complex types: scanlab and CUB (no tuning variants). Not yet run on a GPU
// from the app (the library's tests of these types pass on the H100).
gpu_report run_gpu_f16(const gpu_request& request);
gpu_report run_gpu_bf16(const gpu_request& request);
gpu_report run_gpu_c64(const gpu_request& request);
gpu_report run_gpu_c128(const gpu_request& request);

// By the dtype of request.p.
inline gpu_report run_gpu(const gpu_request& request) {
  switch (request.p->type()) {
    case io::dtype::f32: return run_gpu_f32(request);
    case io::dtype::f64: return run_gpu_f64(request);
    case io::dtype::f16: return run_gpu_f16(request);
    case io::dtype::bf16: return run_gpu_bf16(request);
    case io::dtype::c64: return run_gpu_c64(request);
    case io::dtype::c128: return run_gpu_c128(request);
    default: break;
  }
  throw std::logic_error("linrec: no GPU path for " + std::string(io::name(request.p->type())));
}

}  // namespace scanlab::linrec_app
