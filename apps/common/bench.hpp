// The benchmark harness every --bench and scanlab-bench uses.
//
// CUDA-event timing around the work, warm-up runs first, the median of at least
// 10 timed runs, L2 flushed before each run (so every run reads from HBM),
// declared bytes turned into GB/s, and a one-time measurement of device-to-device
// copy bandwidth so reports can show "% of memcpy".
#pragma once

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace scanlab::bench {

struct config {
  int warmup = 3;
  int repeat = 20;       // timed runs; at least 10 are always taken
  bool flush_l2 = true;  // overwrite a buffer larger than L2 before every run
};

struct timing {
  double median_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  int runs = 0;
};

// One benchmark row: a variant of an algorithm on one type and size.
struct result {
  std::string suite;    // "reduce", "scan", "sort", ...
  std::string variant;  // "production", "cub", "ladder/sequential", ...
  std::string type;     // "int32", "float32", ...
  std::string dataset;  // "uniform", a file name, ...
  std::int64_t n = 0;
  double bytes = 0;     // bytes a perfect algorithm must move (declared by the caller)
  timing time;
  std::string validation = "n/a";  // "pass", "FAIL: ...", "n/a"
  std::optional<double> baseline_ms;  // the reference's (CUB's) median on the same input
  [[nodiscard]] double gbps() const { return time.median_ms > 0 ? bytes / (time.median_ms * 1e6) : 0; }
  [[nodiscard]] double items_per_second() const { return time.median_ms > 0 ? static_cast<double>(n) / (time.median_ms * 1e-3) : 0; }
  // > 1 means faster than the baseline.
  [[nodiscard]] std::optional<double> speedup() const {
    if (!baseline_ms || time.median_ms <= 0) return std::nullopt;
    return *baseline_ms / time.median_ms;
  }
};

struct device_info {
  int ordinal = 0;
  std::string name;
  int sm_count = 0;
  int cc_major = 0, cc_minor = 0;
  std::int64_t l2_bytes = 0;
  std::int64_t global_bytes = 0;
  int runtime_version = 0, driver_version = 0;
};
device_info query_device(int ordinal);

// The CUB every "vs CUB" column and baseline row of this binary ran against.
struct baseline_info {
  std::string cub_version;  // "3.0.1"
  std::string headers;      // "CUDA toolkit", or the CCCL include folder it was built with
};
baseline_info baseline();
// "CUB 3.0.1 (CUDA toolkit)": for table footers.
std::string baseline_label();

class harness {
 public:
  // Uses the current device. The stream is the one timed work is enqueued on.
  explicit harness(config cfg = {}, cudaStream_t stream = nullptr);
  ~harness();
  harness(const harness&) = delete;
  harness& operator=(const harness&) = delete;

  // Runs `work(stream)` warmup + repeat times; each timed run is bracketed by
  // events on the stream (after an L2 flush). `work` must only enqueue on the
  // stream it is given (no host synchronisation inside).
  timing time(const std::function<void(cudaStream_t)>& work);

  // Device-to-device cudaMemcpy bandwidth (bytes read + written per second, in GB/s),
  // measured on first use over 512 MiB and cached.
  double memcpy_gbps();

  void flush_l2();
  [[nodiscard]] cudaStream_t stream() const { return stream_; }
  [[nodiscard]] const config& settings() const { return cfg_; }

 private:
  config cfg_;
  cudaStream_t stream_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  void* flush_buffer_ = nullptr;
  std::size_t flush_bytes_ = 0;
  std::optional<double> memcpy_gbps_;
};

// A table: rows of (variant, type, n, time, GB/s, % of memcpy, vs baseline, validation).
void print_results(std::ostream& out, const std::vector<result>& results, double memcpy_gbps);

// Machine-readable report: device, memcpy bandwidth, every row.
nlohmann::json to_json(const std::vector<result>& results, const device_info& device, double memcpy_gbps);
// Writes JSON atomically (temporary file, then rename).
void write_json(const std::filesystem::path& path, const nlohmann::json& report);

}  // namespace scanlab::bench
