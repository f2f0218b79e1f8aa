// scanlab-norms: the GPU side (norms_gpu.cu): scanlab's norms, CUB and cuBLAS on the same
// device arrays, values and timings. Plain C++ interface, so main.cpp (spdlog, CLI,
// JSON) never sees a CUDA header.
#pragma once

#include "common/array.hpp"
#include "common/bench.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace scanlab::norms_app {

enum class quantity { dot, sum_squares, rms, l2, rms_diff };

inline constexpr quantity all_quantities[] = {quantity::dot, quantity::sum_squares, quantity::rms, quantity::l2,
                                              quantity::rms_diff};

// The names --what takes: "dot", "sum-squares", "rms", "l2", "rms-diff".
constexpr std::string_view name(quantity q) {
  switch (q) {
    case quantity::dot: return "dot";
    case quantity::sum_squares: return "sum-squares";
    case quantity::rms: return "rms";
    case quantity::l2: return "l2";
    case quantity::rms_diff: return "rms-diff";
  }
  return "?";
}

constexpr bool two_inputs(quantity q) { return q == quantity::dot || q == quantity::rms_diff; }

struct gpu_request {
  std::vector<quantity> quantities;
  bool accumulate_double = false;  // float data: accumulate in double (double data always is)
  bool compare = false;            // also compute CUB's and cuBLAS's values
  bool bench = false;              // time scanlab, CUB and cuBLAS
  int repeat = 20;
  std::string dataset;             // names the input in benchmark rows
};

struct method_value {
  std::string method;  // "scanlab", "cub", "cublas"
  std::string how;     // what was called, e.g. "cublasSnrm2 / sqrt(n)"
  double value = 0;
};

struct quantity_values {
  quantity q = quantity::dot;
  std::vector<method_value> methods;  // scanlab first; CUB and cuBLAS with compare
};

struct gpu_report {
  std::vector<quantity_values> values;
  std::vector<bench::result> rows;  // with bench: scanlab, cub, cublas per quantity (baseline: CUB)
  double memcpy_gbps = 0;
  bool result_is_double = false;    // the accumulator (and result) type
};

// x and y: float32 or float64 of the same dtype and length (y is used only by dot and
// rms-diff; pass nullptr when neither is asked for). Needs a selected device.
gpu_report run_gpu(const io::host_array& x, const io::host_array* y, const gpu_request& request);

}  // namespace scanlab::norms_app
