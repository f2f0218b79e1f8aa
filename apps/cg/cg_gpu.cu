// The GPU conjugate gradient solver of scanlab-cg: CSR SpMV kernels, the fused vector
// updates, and the iteration (see cg_gpu.hpp).
#include "cg/cg_gpu.hpp"

#include "common/bench.hpp"
#include "common/device_buffer.hpp"
#include "common/event_timer.hpp"

#include <scanlab/algorithms/norms.cuh>
#include <scanlab/error.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

namespace scanlab::cg {

namespace {

constexpr int block_threads = 256;
constexpr int warp_threads = 32;

// Enough blocks to fill the GPU a few times over; the kernels stride over the rest.
int grid_for(std::int64_t items, int per_block = block_threads) {
  const std::int64_t blocks = (std::max<std::int64_t>(items, 1) + per_block - 1) / per_block;
  return static_cast<int>(std::min<std::int64_t>(blocks, 132 * 32));
}

// y = A x, one thread per row: for short rows (Poisson: 5 or 7 nonzeros) a warp covers
// 32 consecutive rows, whose entries are contiguous in memory.
template <class T>
__global__ void __launch_bounds__(block_threads)
    spmv_thread_per_row_kernel(std::int64_t rows, const std::int64_t* __restrict__ row_ptr,
                               const std::int32_t* __restrict__ col, const T* __restrict__ val,
                               const T* __restrict__ x, T* __restrict__ y) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < rows; r += stride) {
    T sum = 0;
    const std::int64_t end = row_ptr[r + 1];
    for (std::int64_t k = row_ptr[r]; k < end; ++k) sum += val[k] * __ldg(x + col[k]);
    y[r] = sum;
  }
}

// y = A x, one warp per row: lanes stride along the row (coalesced for long rows), then a
// shuffle tree; lane 0 writes.
template <class T>
__global__ void __launch_bounds__(block_threads)
    spmv_warp_per_row_kernel(std::int64_t rows, const std::int64_t* __restrict__ row_ptr,
                             const std::int32_t* __restrict__ col, const T* __restrict__ val,
                             const T* __restrict__ x, T* __restrict__ y) {
  constexpr int warps_per_block = block_threads / warp_threads;
  const int lane = static_cast<int>(threadIdx.x) % warp_threads;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * warps_per_block;
  for (std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * warps_per_block + threadIdx.x / warp_threads;
       r < rows; r += stride) {
    T sum = 0;
    const std::int64_t end = row_ptr[r + 1];
    for (std::int64_t k = row_ptr[r] + lane; k < end; k += warp_threads) sum += val[k] * __ldg(x + col[k]);
#pragma unroll
    for (int offset = warp_threads / 2; offset > 0; offset /= 2) {
      sum += __shfl_down_sync(0xffffffffu, sum, offset);
    }
    if (lane == 0) y[r] = sum;
  }
}

// alpha = rr / pAp (device scalars); x += alpha p; r -= alpha Ap.
template <class T>
__global__ void __launch_bounds__(block_threads)
    update_x_r_kernel(std::int64_t n, T* __restrict__ x, T* __restrict__ r, const T* __restrict__ p,
                      const T* __restrict__ ap, const double* rr, const double* p_ap) {
  const T alpha = static_cast<T>(*rr / *p_ap);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    x[i] += alpha * p[i];
    r[i] -= alpha * ap[i];
  }
}

// beta = rr_new / rr_old (device scalars); p = r + beta p.
template <class T>
__global__ void __launch_bounds__(block_threads)
    update_p_kernel(std::int64_t n, T* __restrict__ p, const T* __restrict__ r, const double* rr_new,
                    const double* rr_old) {
  const T beta = static_cast<T>(*rr_new / *rr_old);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    p[i] = r[i] + beta * p[i];
  }
}

// out = b - ax.
template <class T>
__global__ void __launch_bounds__(block_threads)
    subtract_kernel(std::int64_t n, const T* __restrict__ b, const T* __restrict__ ax, T* __restrict__ out) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = b[i] - ax[i];
  }
}

template <class T>
std::vector<T> convert_to(std::span<const double> values) {
  std::vector<T> out(values.size());
  std::transform(values.begin(), values.end(), out.begin(), [](double v) { return static_cast<T>(v); });
  return out;
}

// Pinned host memory for the per-iteration scalars (a pageable copy would be slower).
class pinned_scalars {
 public:
  pinned_scalars() { SCANLAB_CHECK(cudaMallocHost(&ptr_, 4 * sizeof(double))); }
  ~pinned_scalars() { cudaFreeHost(ptr_); }
  pinned_scalars(const pinned_scalars&) = delete;
  pinned_scalars& operator=(const pinned_scalars&) = delete;
  double* get() { return ptr_; }

 private:
  double* ptr_ = nullptr;
};

}  // namespace

class gpu_solver::impl {
 public:
  virtual ~impl() = default;
  virtual gpu_result solve(const progress_fn& progress) = 0;
  virtual gpu_timings bench(int repeat) = 0;
  [[nodiscard]] virtual std::string spmv_used() const = 0;
};

namespace {

template <class T>
class typed_solver final : public gpu_solver::impl {
 public:
  typed_solver(const sparse::csr_matrix& a, std::span<const double> b, const gpu_options& options)
      : options_(options),
        n_(a.rows),
        nnz_(a.nnz()),
        row_ptr_(std::span<const std::int64_t>(a.row_ptr)),
        col_(std::span<const std::int32_t>(a.col)),
        val_(std::span<const T>(convert_to<T>(a.values))),
        b_(std::span<const T>(convert_to<T>(b))),
        x_(n_),
        r_(n_),
        p_(n_),
        ap_(n_),
        scalars_(4) {
    if (a.rows != a.cols) throw std::invalid_argument("CG needs a square matrix");
    if (static_cast<std::int64_t>(b.size()) != n_) throw std::invalid_argument("CG: b has the wrong length");
    warp_per_row_ = options.spmv == spmv_kind::warp_per_row ||
                    (options.spmv == spmv_kind::automatic && n_ > 0 && nnz_ > 16 * n_);
    std::size_t dot_bytes = 0, norm_bytes = 0;
    SCANLAB_CHECK(scanlab::dot(nullptr, dot_bytes, r_.data(), r_.data(), scalars_.data(), n_));
    SCANLAB_CHECK(scanlab::l2_norm(nullptr, norm_bytes, b_.data(), scalars_.data(), n_));
    temp_bytes_ = std::max(dot_bytes, norm_bytes);
    temp_ = device_buffer<unsigned char>(static_cast<std::int64_t>(temp_bytes_));
  }

  [[nodiscard]] std::string spmv_used() const override { return warp_per_row_ ? "warp per row" : "thread per row"; }

  void spmv(const T* in, T* out, cudaStream_t s) {
    if (n_ == 0) return;
    if (warp_per_row_) {
      constexpr int rows_per_block = block_threads / warp_threads;
      spmv_warp_per_row_kernel<T><<<grid_for(n_, rows_per_block), block_threads, 0, s>>>(
          n_, row_ptr_.data(), col_.data(), val_.data(), in, out);
    } else {
      spmv_thread_per_row_kernel<T><<<grid_for(n_), block_threads, 0, s>>>(n_, row_ptr_.data(), col_.data(),
                                                                             val_.data(), in, out);
    }
    SCANLAB_CHECK_LAUNCH();
  }
  void dot(const T* u, const T* v, double* out, cudaStream_t s) {
    SCANLAB_CHECK(scanlab::dot(temp_.data(), temp_bytes_, u, v, out, n_, s));
  }
  void update_x_r(const double* rr, const double* p_ap, cudaStream_t s) {
    if (n_ == 0) return;
    update_x_r_kernel<T><<<grid_for(n_), block_threads, 0, s>>>(n_, x_.data(), r_.data(), p_.data(), ap_.data(), rr,
                                                                 p_ap);
    SCANLAB_CHECK_LAUNCH();
  }
  void update_p(const double* rr_new, const double* rr_old, cudaStream_t s) {
    if (n_ == 0) return;
    update_p_kernel<T><<<grid_for(n_), block_threads, 0, s>>>(n_, p_.data(), r_.data(), rr_new, rr_old);
    SCANLAB_CHECK_LAUNCH();
  }

  gpu_result solve(const progress_fn& progress) override {
    cudaStream_t s = nullptr;
    gpu_result result;
    event_timer timer;
    double* host = pinned_.get();
    double* d_scalars = scalars_.data();  // [0], [1]: r.r (old and new, alternating); [2]: p.Ap; [3]: ||b||
    timer.start(s);
    // x = 0, r = p = b.
    const std::size_t bytes = static_cast<std::size_t>(n_) * sizeof(T);
    if (n_ > 0) {
      SCANLAB_CHECK(cudaMemsetAsync(x_.data(), 0, bytes, s));
      SCANLAB_CHECK(cudaMemcpyAsync(r_.data(), b_.data(), bytes, cudaMemcpyDeviceToDevice, s));
      SCANLAB_CHECK(cudaMemcpyAsync(p_.data(), b_.data(), bytes, cudaMemcpyDeviceToDevice, s));
    }
    double* rr_old = d_scalars;
    double* rr_new = d_scalars + 1;
    double* p_ap = d_scalars + 2;
    SCANLAB_CHECK(scanlab::l2_norm(temp_.data(), temp_bytes_, b_.data(), d_scalars + 3, n_, s));
    dot(r_.data(), r_.data(), rr_old, s);
    SCANLAB_CHECK(cudaMemcpyAsync(host, d_scalars, 4 * sizeof(double), cudaMemcpyDeviceToHost, s));
    SCANLAB_CHECK(cudaStreamSynchronize(s));
    const double b_norm = host[3];
    if (b_norm == 0 || n_ == 0) {
      result.converged = true;
    } else {
      for (int k = 1; k <= options_.max_iters; ++k) {
        spmv(p_.data(), ap_.data(), s);
        dot(p_.data(), ap_.data(), p_ap, s);
        update_x_r(rr_old, p_ap, s);
        dot(r_.data(), r_.data(), rr_new, s);
        SCANLAB_CHECK(cudaMemcpyAsync(host, d_scalars, 3 * sizeof(double), cudaMemcpyDeviceToHost, s));
        SCANLAB_CHECK(cudaStreamSynchronize(s));
        const double pap = host[2];
        const double rr = host[rr_new - d_scalars];
        result.iterations = k;
        if (!(pap > 0) || !std::isfinite(pap) || !std::isfinite(rr)) {
          std::ostringstream why;
          why << "p.Ap = " << pap << ", r.r = " << rr << " at iteration " << k;
          result.breakdown = why.str();
          break;
        }
        result.relative_residual = std::sqrt(rr) / b_norm;
        if (progress) progress(k, result.relative_residual);
        if (result.relative_residual <= options_.tol) {
          result.converged = true;
          break;
        }
        update_p(rr_new, rr_old, s);
        std::swap(rr_old, rr_new);
      }
    }
    result.solve_ms = timer.stop_ms(s);
    // The true residual, b - A x, measured apart from the timed solve.
    spmv(x_.data(), ap_.data(), s);
    if (n_ > 0) {
      subtract_kernel<T><<<grid_for(n_), block_threads, 0, s>>>(n_, b_.data(), ap_.data(), r_.data());
      SCANLAB_CHECK_LAUNCH();
    }
    SCANLAB_CHECK(scanlab::l2_norm(temp_.data(), temp_bytes_, r_.data(), d_scalars + 2, n_, s));
    SCANLAB_CHECK(cudaMemcpyAsync(host, d_scalars, 4 * sizeof(double), cudaMemcpyDeviceToHost, s));
    SCANLAB_CHECK(cudaStreamSynchronize(s));
    result.true_relative_residual = b_norm > 0 ? host[2] / b_norm : 0.0;
    const std::vector<T> x = x_.to_host();
    result.x.assign(x.begin(), x.end());
    return result;
  }

  gpu_timings bench(int repeat) override {
    gpu_timings t;
    t.spmv_used = spmv_used();
    const int runs = std::max(repeat, 3);
    std::vector<double> solves;
    for (int i = 0; i < runs; ++i) {
      const gpu_result r = solve({});
      solves.push_back(r.solve_ms);
      t.iterations = r.iterations;
    }
    t.solve = bench::from_samples(std::move(solves), 0, false);
    // The parts, on the solver's own vectors, L2 not flushed (as inside a solve).
    bench::harness h({.warmup = 3, .repeat = repeat, .flush_l2 = false});
    double* d_scalars = scalars_.data();
    t.spmv = h.time([&](cudaStream_t s) { spmv(p_.data(), ap_.data(), s); });
    t.dot = h.time([&](cudaStream_t s) { dot(p_.data(), ap_.data(), d_scalars + 2, s); });
    // The updates read the current scalars; give them harmless values first.
    const double harmless[4] = {1.0, 1.0, 1.0, 1.0};
    SCANLAB_CHECK(cudaMemcpy(d_scalars, harmless, sizeof harmless, cudaMemcpyHostToDevice));
    t.update = h.time([&](cudaStream_t s) {
                     update_x_r(d_scalars, d_scalars + 2, s);
                     update_p(d_scalars + 1, d_scalars, s);
                   });
    t.spmv_bytes = static_cast<double>(nnz_) * (sizeof(T) + sizeof(std::int32_t)) +
                   static_cast<double>(n_ + 1) * sizeof(std::int64_t) + 2.0 * static_cast<double>(n_) * sizeof(T);
    return t;
  }

 private:
  gpu_options options_;
  std::int64_t n_;
  std::int64_t nnz_;
  bool warp_per_row_ = false;
  device_buffer<std::int64_t> row_ptr_;
  device_buffer<std::int32_t> col_;
  device_buffer<T> val_;
  device_buffer<T> b_;
  device_buffer<T> x_, r_, p_, ap_;
  device_buffer<double> scalars_;
  device_buffer<unsigned char> temp_;
  std::size_t temp_bytes_ = 0;
  pinned_scalars pinned_;
};

}  // namespace

gpu_solver::gpu_solver(const sparse::csr_matrix& a, std::span<const double> b, const gpu_options& options) {
  if (options.use_double) impl_ = std::make_unique<typed_solver<double>>(a, b, options);
  else impl_ = std::make_unique<typed_solver<float>>(a, b, options);
}
gpu_solver::~gpu_solver() = default;
gpu_result gpu_solver::solve(const progress_fn& progress) { return impl_->solve(progress); }
gpu_timings gpu_solver::bench(int repeat) { return impl_->bench(repeat); }
std::string gpu_solver::spmv_used() const { return impl_->spmv_used(); }

}  // namespace scanlab::cg
