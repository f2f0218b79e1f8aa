// The GPU Jacobi iteration of scanlab-jacobi (jacobi_gpu.cu), behind a plain C++
// interface. Two device buffers, swapped after every sweep; every `check_every` sweeps,
// scanlab::rms_diff of the two buffers (the RMS change of the last sweep over all N^3
// points, accumulated in double; boundary points never change and contribute zeros)
// decides whether it fell below `tol`.
#pragma once

#include "jacobi/jacobi.hpp"

#include "common/bench.hpp"

#include <cstdint>
#include <functional>
#include <vector>

namespace scanlab::jacobi {

struct gpu_options {
  bool use_double = false;
  std::int64_t n = 256;  // grid edge N (N^3 points, boundary included)
  boundary bc = boundary::harmonic;
  double tol = 1e-6;     // on the RMS change of one sweep
  int max_iters = 100000;
  int check_every = 10;
};

struct gpu_result {
  int iterations = 0;
  double rms_change = 0;     // of the last sweep, at the last check
  bool converged = false;
  double time_ms = 0;        // all sweeps and checks, CUDA events
  std::vector<double> field; // the final field, when asked for
};

struct gpu_timings {
  bench::timing sweep;       // one sweep, L2 flushed
  bench::timing rms_diff;    // one rms_diff of the two buffers, L2 flushed
  double sweep_bytes = 0;    // 2 N^3 sizeof(T): each point read once and written once, ideally
  double rms_diff_bytes = 0; // 2 N^3 sizeof(T)
};

// Called at every check (every `check_every` sweeps, where the host synchronises with the GPU
// anyway) with the sweeps done and the RMS change of the last one: scanlab-jacobi's progress
// line. It runs inside the timed iteration, so it must be cheap.
using progress_fn = std::function<void(int iterations, double rms_change)>;

gpu_result run_gpu(const gpu_options& options, bool return_field, const progress_fn& progress = {});
gpu_timings bench_gpu(const gpu_options& options, int repeat);

}  // namespace scanlab::jacobi
