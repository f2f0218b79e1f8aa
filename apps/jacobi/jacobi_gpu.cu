// The GPU Jacobi iteration of scanlab-jacobi (see jacobi_gpu.hpp and jacobi.hpp).
#include "jacobi/jacobi_gpu.hpp"

#include "common/bench.hpp"
#include "common/device_buffer.hpp"
#include "common/event_timer.hpp"

#include <scanlab/algorithms/norms.cuh>
#include <scanlab/error.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <utility>

namespace scanlab::jacobi {

namespace {

// A block covers 32 consecutive i (one warp: a 128- or 256-byte row segment, aligned
// because i starts at 0), 4 j and 2 k; the neighbours along j and k of a warp's points
// are mostly found in L1 by the neighbouring warps' loads.
constexpr int block_x = 32, block_y = 4, block_z = 2;

// Blocks of `per_block` covering `items` (items >= 0, per_block > 0), as a grid extent.
unsigned blocks_for(std::int64_t items, int per_block) {
  return static_cast<unsigned>((items + per_block - 1) / per_block);
}

// One sweep: v = update of u at the interior points. The sum's order is jacobi.hpp's.
template <class T>
__global__ void __launch_bounds__(block_x* block_y* block_z)
    jacobi_sweep_kernel(std::int64_t n, const T* __restrict__ u, T* __restrict__ v) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * block_x + threadIdx.x;
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.y) * block_y + threadIdx.y + 1;
  const std::int64_t k = static_cast<std::int64_t>(blockIdx.z) * block_z + threadIdx.z + 1;
  if (i == 0 || i >= n - 1 || j >= n - 1 || k >= n - 1) return;
  const std::int64_t sy = n, sz = n * n;
  const std::int64_t p = i + sy * j + sz * k;
  const T sixth = T(1) / T(6);
  v[p] = (u[p - 1] + u[p + 1] + u[p - sy] + u[p + sy] + u[p - sz] + u[p + sz]) * sixth;
}

template <class T>
class solver {
 public:
  explicit solver(const gpu_options& o) : o_(o), points_(o.n * o.n * o.n) {
    if (o.n < 1) throw std::invalid_argument("Jacobi: the grid edge must be at least 1");
    const std::vector<T> initial = initial_field<T>(o.n, o.bc);
    a_ = device_buffer<T>(std::span<const T>(initial));
    b_ = device_buffer<T>(std::span<const T>(initial));
    SCANLAB_CHECK(scanlab::rms_diff(nullptr, temp_bytes_, a_.data(), b_.data(), rms_.data(), points_));
    temp_ = device_buffer<unsigned char>(static_cast<std::int64_t>(temp_bytes_));
  }

  void sweep(const T* u, T* v, cudaStream_t s) {
    if (o_.n < 3) return;  // no interior
    const std::int64_t interior = o_.n - 2;
    const dim3 grid(blocks_for(o_.n, block_x), blocks_for(interior, block_y), blocks_for(interior, block_z));
    jacobi_sweep_kernel<T><<<grid, dim3(block_x, block_y, block_z), 0, s>>>(o_.n, u, v);
    SCANLAB_CHECK_LAUNCH();
  }
  void rms_change(const T* now, const T* before, cudaStream_t s) {
    SCANLAB_CHECK(scanlab::rms_diff(temp_.data(), temp_bytes_, now, before, rms_.data(), points_, s));
  }

  gpu_result run(bool return_field, const progress_fn& progress) {
    if (o_.check_every < 1) throw std::invalid_argument("Jacobi: --check-every must be at least 1");
    cudaStream_t s = nullptr;
    event_timer timer;
    gpu_result result;
    T* now = a_.data();
    T* before = b_.data();
    timer.start(s);
    for (int it = 1; it <= o_.max_iters; ++it) {
      sweep(now, before, s);  // before := sweep(now)
      std::swap(now, before);
      result.iterations = it;
      if (it % o_.check_every == 0 || it == o_.max_iters) {
        rms_change(now, before, s);
        SCANLAB_CHECK(cudaMemcpyAsync(&result.rms_change, rms_.data(), sizeof(double), cudaMemcpyDeviceToHost, s));
        SCANLAB_CHECK(cudaStreamSynchronize(s));
        if (progress) progress(it, result.rms_change);
        if (result.rms_change < o_.tol) {
          result.converged = true;
          break;
        }
      }
    }
    result.time_ms = timer.stop_ms(s);
    if (return_field) {
      std::vector<T> host(static_cast<std::size_t>(points_));
      SCANLAB_CHECK(cudaMemcpy(host.data(), now, host.size() * sizeof(T), cudaMemcpyDeviceToHost));
      result.field.assign(host.begin(), host.end());
    }
    return result;
  }

  gpu_timings bench(int repeat) {
    bench::harness h({.warmup = 3, .repeat = repeat});
    gpu_timings t;
    t.sweep = h.time([&](cudaStream_t s) { sweep(a_.data(), b_.data(), s); });
    t.rms_diff = h.time([&](cudaStream_t s) { rms_change(a_.data(), b_.data(), s); });
    t.sweep_bytes = 2.0 * static_cast<double>(points_) * sizeof(T);
    t.rms_diff_bytes = 2.0 * static_cast<double>(points_) * sizeof(T);
    return t;
  }

 private:
  gpu_options o_;
  std::int64_t points_;
  device_buffer<T> a_, b_;
  device_buffer<double> rms_{1};
  device_buffer<unsigned char> temp_;
  std::size_t temp_bytes_ = 0;
};

}  // namespace

gpu_result run_gpu(const gpu_options& options, bool return_field, const progress_fn& progress) {
  if (options.use_double) return solver<double>(options).run(return_field, progress);
  return solver<float>(options).run(return_field, progress);
}

gpu_timings bench_gpu(const gpu_options& options, int repeat) {
  if (options.use_double) return solver<double>(options).bench(repeat);
  return solver<float>(options).bench(repeat);
}

}  // namespace scanlab::jacobi
