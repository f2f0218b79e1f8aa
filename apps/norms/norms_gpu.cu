// scanlab-norms, GPU side: scanlab's norms, CUB and cuBLAS on the same device arrays.
//
// What each library is asked for:
//   quantity      scanlab            CUB (TransformReduce, in Acc)      cuBLAS (in T, device pointer mode)
//   dot           dot                sum of x[i] * y[i]                 ?dot
//   sum-squares   sum_squares        sum of x[i]^2                      ?dot(x, x)
//   rms           rms                sqrt(sum of x[i]^2 / n) on host    ?nrm2 / sqrt(n) on host
//   l2            l2_norm            sqrt(sum of x[i]^2) on host        ?nrm2
//   rms-diff      rms_diff           sqrt(sum of (x-y)^2 / n) on host   copy, ?axpy, ?nrm2 (three passes:
//                                                                       cuBLAS has no fused form)
// CUB's and cuBLAS's square roots are taken on the host: they are not part of the timed work.
// cuBLAS has no float-data, double-accumulator dot or norm (cublasDotEx takes float
// execution for float data), so with --accumulate double it still accumulates in float.
#include "norms/norms_gpu.hpp"

#include "common/device_buffer.hpp"

#include <scanlab/algorithms/norms.cuh>
#include <scanlab/error.hpp>

#include <cub/device/device_reduce.cuh>
#include <cublas_v2.h>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>

namespace scanlab::norms_app {

namespace {

// Every cuBLAS status is checked: a failure throws with the call and the status name.
void check_cublas(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("cuBLAS ") + call + " failed: " + cublasGetStatusName(status));
  }
}
#define NORMS_CUBLAS(call) check_cublas((call), #call)

class cublas_context {
 public:
  cublas_context() {
    NORMS_CUBLAS(cublasCreate(&handle_));
    // Device pointer mode throughout: results land in device memory (as scanlab's and
    // CUB's do) and no call waits for the GPU, so the calls can be timed like the others.
    NORMS_CUBLAS(cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_DEVICE));
  }
  ~cublas_context() { cublasDestroy(handle_); }
  cublas_context(const cublas_context&) = delete;
  cublas_context& operator=(const cublas_context&) = delete;
  [[nodiscard]] cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

struct add_op {
  template <class A>
  __device__ A operator()(const A& a, const A& b) const {
    return a + b;
  }
};
template <class T, class Acc>
struct square_op {
  __device__ Acc operator()(T v) const {
    const Acc a = static_cast<Acc>(v);
    return a * a;
  }
};
template <class T, class Acc>
struct product_at {
  const T* x;
  const T* y;
  __device__ Acc operator()(long long i) const { return static_cast<Acc>(x[i]) * static_cast<Acc>(y[i]); }
};
template <class T, class Acc>
struct squared_difference_at {
  const T* x;
  const T* y;
  __device__ Acc operator()(long long i) const {
    const Acc d = static_cast<Acc>(x[i]) - static_cast<Acc>(y[i]);
    return d * d;
  }
};

std::string type_label(io::dtype t, bool acc_double) {
  std::string label(io::name(t));
  if (t == io::dtype::f32 && acc_double) label += " (acc float64)";
  return label;
}

template <class T, class Acc>
class runner {
 public:
  runner(const io::host_array& x, const io::host_array* y, const gpu_request& request)
      : n_(x.size()), d_x_(x.as<T>()), d_y_(y != nullptr ? device_buffer<T>(y->as<T>()) : device_buffer<T>()),
        d_out_(1), d_cub_out_(1), d_blas_out_(1) {
    if (y == nullptr) {
      for (quantity q : request.quantities) {
        if (two_inputs(q)) throw std::logic_error("norms: a two-input quantity without a second array");
      }
    }
    std::size_t most = 1;
    for (quantity q : request.quantities) {
      std::size_t bytes = 0;
      SCANLAB_CHECK(call_scanlab(q, nullptr, bytes, nullptr));
      most = std::max(most, bytes);
      if (request.compare || request.bench) {
        SCANLAB_CHECK(call_cub(q, nullptr, bytes, nullptr));
        most = std::max(most, bytes);
        if (q == quantity::rms_diff) d_blas_scratch_ = device_buffer<T>(std::max<std::int64_t>(n_, 1));
      }
    }
    temp_bytes_ = most;
    d_temp_ = device_buffer<unsigned char>(static_cast<std::int64_t>(most));
  }

  const T* x() const { return d_x_.data(); }
  const T* y() const { return d_y_.size() > 0 ? d_y_.data() : d_x_.data(); }

  cudaError_t call_scanlab(quantity q, void* temp, std::size_t& bytes, cudaStream_t s) {
    Acc* out = d_out_.data();
    switch (q) {
      case quantity::dot: return scanlab::dot(temp, bytes, x(), y(), out, n_, s);
      case quantity::sum_squares: return scanlab::sum_squares(temp, bytes, x(), out, n_, s);
      case quantity::rms: return scanlab::rms(temp, bytes, x(), out, n_, s);
      case quantity::l2: return scanlab::l2_norm(temp, bytes, x(), out, n_, s);
      case quantity::rms_diff: return scanlab::rms_diff(temp, bytes, x(), y(), out, n_, s);
    }
    return cudaErrorInvalidValue;
  }

  // CUB's sum for the quantity (the root, where there is one, is taken on the host).
  cudaError_t call_cub(quantity q, void* temp, std::size_t& bytes, cudaStream_t s) {
    Acc* out = d_cub_out_.data();
    const thrust::counting_iterator<long long> first(0);
    const auto count = static_cast<long long>(n_);
    switch (q) {
      case quantity::dot:
        return cub::DeviceReduce::TransformReduce(temp, bytes, first, out, count, add_op{},
                                                  product_at<T, Acc>{x(), y()}, Acc(0), s);
      case quantity::sum_squares:
      case quantity::rms:
      case quantity::l2:
        return cub::DeviceReduce::TransformReduce(temp, bytes, x(), out, count, add_op{}, square_op<T, Acc>{}, Acc(0),
                                                  s);
      case quantity::rms_diff:
        return cub::DeviceReduce::TransformReduce(temp, bytes, first, out, count, add_op{},
                                                  squared_difference_at<T, Acc>{x(), y()}, Acc(0), s);
    }
    return cudaErrorInvalidValue;
  }

  void enqueue_scanlab(quantity q, cudaStream_t s) { SCANLAB_CHECK(call_scanlab(q, d_temp_.data(), temp_bytes_, s)); }
  void enqueue_cub(quantity q, cudaStream_t s) { SCANLAB_CHECK(call_cub(q, d_temp_.data(), temp_bytes_, s)); }

  // cuBLAS's part for the quantity, on the stream the handle is set to.
  void enqueue_cublas(const cublas_context& blas, quantity q, cudaStream_t s) {
    cublasHandle_t h = blas.get();
    NORMS_CUBLAS(cublasSetStream(h, s));
    T* out = d_blas_out_.data();
    constexpr bool f32 = sizeof(T) == 4;
    switch (q) {
      case quantity::dot:
        if constexpr (f32) NORMS_CUBLAS(cublasSdot_64(h, n_, x(), 1, y(), 1, out));
        else NORMS_CUBLAS(cublasDdot_64(h, n_, x(), 1, y(), 1, out));
        return;
      case quantity::sum_squares:
        if constexpr (f32) NORMS_CUBLAS(cublasSdot_64(h, n_, x(), 1, x(), 1, out));
        else NORMS_CUBLAS(cublasDdot_64(h, n_, x(), 1, x(), 1, out));
        return;
      case quantity::rms:
      case quantity::l2:
        if constexpr (f32) NORMS_CUBLAS(cublasSnrm2_64(h, n_, x(), 1, out));
        else NORMS_CUBLAS(cublasDnrm2_64(h, n_, x(), 1, out));
        return;
      case quantity::rms_diff: {
        // scratch = x; scratch -= y; nrm2(scratch). alpha = -1 lives on the device
        // (device pointer mode).
        T* scratch = d_blas_scratch_.data();
        if (n_ > 0) SCANLAB_CHECK(cudaMemcpyAsync(scratch, x(), static_cast<std::size_t>(n_) * sizeof(T),
                                                  cudaMemcpyDeviceToDevice, s));
        const T* minus_one = minus_one_on_device();
        if constexpr (f32) {
          NORMS_CUBLAS(cublasSaxpy_64(h, n_, minus_one, y(), 1, scratch, 1));
          NORMS_CUBLAS(cublasSnrm2_64(h, n_, scratch, 1, out));
        } else {
          NORMS_CUBLAS(cublasDaxpy_64(h, n_, minus_one, y(), 1, scratch, 1));
          NORMS_CUBLAS(cublasDnrm2_64(h, n_, scratch, 1, out));
        }
        return;
      }
    }
  }

  // The finished values (synchronises the device).
  double scanlab_value() const { return static_cast<double>(read(d_out_)); }
  double cub_value(quantity q) const {
    const auto sum = static_cast<double>(read(d_cub_out_));
    switch (q) {
      case quantity::rms:
      case quantity::rms_diff: return n_ == 0 ? std::nan("") : std::sqrt(sum / static_cast<double>(n_));
      case quantity::l2: return std::sqrt(sum);
      default: return sum;
    }
  }
  double cublas_value(quantity q) const {
    const auto v = static_cast<double>(read(d_blas_out_));
    if (q == quantity::rms || q == quantity::rms_diff) {
      return n_ == 0 ? std::nan("") : v / std::sqrt(static_cast<double>(n_));
    }
    return v;
  }

  static std::string cub_how(quantity q) {
    switch (q) {
      case quantity::dot: return "TransformReduce x[i]*y[i]";
      case quantity::sum_squares: return "TransformReduce x^2";
      case quantity::rms: return "TransformReduce x^2, sqrt(s/n)";
      case quantity::l2: return "TransformReduce x^2, sqrt(s)";
      case quantity::rms_diff: return "TransformReduce (x-y)^2, sqrt(s/n)";
    }
    return "";
  }
  static std::string cublas_how(quantity q) {
    const std::string p = sizeof(T) == 4 ? "cublasS" : "cublasD";
    switch (q) {
      case quantity::dot: return p + "dot";
      case quantity::sum_squares: return p + "dot(x, x)";
      case quantity::rms: return p + "nrm2 / sqrt(n)";
      case quantity::l2: return p + "nrm2";
      case quantity::rms_diff: return "copy, " + p + "axpy, " + p + "nrm2 / sqrt(n)";
    }
    return "";
  }

  [[nodiscard]] std::int64_t n() const { return n_; }

 private:
  template <class V>
  static V read(const device_buffer<V>& b) {
    SCANLAB_CHECK(cudaDeviceSynchronize());
    return b.to_host()[0];
  }
  const T* minus_one_on_device() {
    if (d_minus_one_.size() == 0) {
      const T minus_one[1] = {T(-1)};
      d_minus_one_ = device_buffer<T>(std::span<const T>(minus_one));
    }
    return d_minus_one_.data();
  }

  std::int64_t n_;
  device_buffer<T> d_x_;
  device_buffer<T> d_y_;
  device_buffer<Acc> d_out_;
  device_buffer<Acc> d_cub_out_;
  device_buffer<T> d_blas_out_;
  device_buffer<T> d_blas_scratch_;
  device_buffer<T> d_minus_one_;
  device_buffer<unsigned char> d_temp_;
  std::size_t temp_bytes_ = 0;
};

template <class T, class Acc>
gpu_report run_typed(const io::host_array& x, const io::host_array* y, const gpu_request& request) {
  runner<T, Acc> r(x, y, request);
  gpu_report report;
  report.result_is_double = sizeof(Acc) == 8;
  std::optional<cublas_context> blas;
  if (request.compare || request.bench) blas.emplace();

  for (quantity q : request.quantities) {
    quantity_values v;
    v.q = q;
    r.enqueue_scanlab(q, nullptr);
    v.methods.push_back({"scanlab", "", r.scanlab_value()});
    if (request.compare) {
      r.enqueue_cub(q, nullptr);
      v.methods.push_back({"cub", r.cub_how(q), r.cub_value(q)});
      r.enqueue_cublas(*blas, q, nullptr);
      v.methods.push_back({"cublas", r.cublas_how(q), r.cublas_value(q)});
    }
    report.values.push_back(std::move(v));
  }

  if (request.bench) {
    bench::harness harness({.warmup = 3, .repeat = request.repeat});
    report.memcpy_gbps = harness.memcpy_gbps();
    const std::string type = type_label(x.type(), sizeof(Acc) == 8);
    for (quantity q : request.quantities) {
      const double bytes = static_cast<double>(r.n()) * sizeof(T) * (two_inputs(q) ? 2 : 1);
      const auto row = [&](const std::string& variant, const bench::timing& t) {
        bench::result res;
        res.suite = std::string(name(q));
        res.variant = variant;
        res.type = type;
        res.dataset = request.dataset;
        res.n = r.n();
        res.bytes = bytes;
        res.bound = bench::ceiling::read;  // every quantity only reads its inputs
        res.time = t;
        return res;
      };
      const bench::timing cub_time = harness.time([&](cudaStream_t s) { r.enqueue_cub(q, s); });
      const bench::timing ours = harness.time([&](cudaStream_t s) { r.enqueue_scanlab(q, s); });
      const bench::timing theirs = harness.time([&](cudaStream_t s) { r.enqueue_cublas(*blas, q, s); });
      bench::result ours_row = row("scanlab", ours);
      ours_row.baseline_ms = cub_time.median_ms;
      bench::result blas_row = row(q == quantity::rms_diff ? "cublas (3 passes)" : "cublas", theirs);
      blas_row.baseline_ms = cub_time.median_ms;
      report.rows.push_back(std::move(ours_row));
      report.rows.push_back(row("cub", cub_time));
      report.rows.push_back(std::move(blas_row));
    }
  }
  return report;
}

}  // namespace

gpu_report run_gpu(const io::host_array& x, const io::host_array* y, const gpu_request& request) {
  if (y != nullptr && (y->type() != x.type() || y->size() != x.size())) {
    throw std::logic_error("norms: x and y differ in type or length");
  }
  switch (x.type()) {
    case io::dtype::f32:
      return request.accumulate_double ? run_typed<float, double>(x, y, request)
                                       : run_typed<float, float>(x, y, request);
    case io::dtype::f64: return run_typed<double, double>(x, y, request);
    default: throw std::logic_error("norms: the GPU side takes float32 or float64 data");
  }
}

}  // namespace scanlab::norms_app
