// The benchmark harness every --bench and scanlab-bench uses.
//
// CUDA-event timing around the work, warm-up runs first, at least 10 timed runs kept
// as samples (median, min, max, noise), L2 flushed before each run (so every run reads
// from HBM), the GPU's clocks sampled through NVML while the runs are in flight (a
// throttled measurement is flagged), declared bytes turned into GB/s, and one-time
// measurements of the two bandwidth ceilings rows are compared with: device-to-device
// memcpy (read + write) and a read-only kernel (for jobs that only read).
//
// Reports (tables, JSON, CSV, Markdown) are written by common/bench_report.hpp.
#pragma once

#include "common/clocks.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
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
  double mean_ms = 0;
  double noise = 0;  // relative standard deviation of the samples (0.01: 1 %)
  int runs = 0;
  int warmup = 0;         // the harness settings this measurement ran with
  bool flush_l2 = false;
  std::vector<double> samples_ms;  // every timed run, in the order run
  clocks::record clocks;           // NVML readings while the runs were in flight
};

// The statistics of `samples_ms` (at least one), with the settings they were taken with.
timing from_samples(std::vector<double> samples_ms, int warmup, bool flush_l2);
// `t` with `ms` taken off every sample (at least 1 ns stays), e.g. a copy timed with the work.
timing minus(const timing& t, double ms);

// The bandwidth a row's GB/s is compared with.
enum class ceiling {
  memcpy,  // device-to-device cudaMemcpy, bytes read + written: jobs that read and write
  read,    // a read-only kernel: jobs that only read (reductions, norms)
  none,    // no comparison (latency-bound parts, whole solves)
};
std::string_view name(ceiling c);

// One benchmark row: a variant of an algorithm on one type and size.
struct result {
  std::string suite;    // "reduce", "scan", "sort", ...
  std::string variant;  // "production", "cub", "ladder/sequential", ...
  std::string type;     // "int32", "float32", ...
  std::string dataset;  // "uniform", a file name, ...
  std::int64_t n = 0;
  double bytes = 0;     // bytes a perfect algorithm must move (declared by the caller)
  ceiling bound = ceiling::memcpy;  // what its GB/s is a fraction of
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
  // events on the stream (after an L2 flush) and the clocks are read while it is in
  // flight. `work` must only enqueue on the stream it is given (no host
  // synchronisation inside), unless the job itself needs one, as scanlab-reduce --keys
  // reads its run count back between two calls: the wait is then timed with the work, and
  // the clocks are read after it.
  timing time(const std::function<void(cudaStream_t)>& work);

  // Device-to-device cudaMemcpy bandwidth (bytes read + written per second, in GB/s),
  // measured on first use over 512 MiB and cached for the process (per device).
  double memcpy_gbps();
  // Read-only bandwidth (bytes read per second, GB/s) of a kernel that reads 1 GiB with
  // 16-byte loads and writes nothing of it back; measured on first use and cached likewise.
  double read_gbps();

  void flush_l2();
  [[nodiscard]] cudaStream_t stream() const { return stream_; }
  [[nodiscard]] const config& settings() const { return cfg_; }

 private:
  config cfg_;
  cudaStream_t stream_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  void* flush_buffer_ = nullptr;
  std::size_t flush_bytes_ = 0;
  int device_ = 0;
};

}  // namespace scanlab::bench
