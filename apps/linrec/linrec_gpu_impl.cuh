// scanlab-linrec, GPU side, for one element type (included by linrec_gpu_<type>.cu, one
// instantiation each: float, double, __half, __nv_bfloat16, complex<float>, complex<double>).
// scanlab's kernels at the default tile shapes are linked from scanlab_linrec_instances
// (instances/linrec_instances.cuh declares them); the tuning variants are compiled here.
//
// What is run:
//   scanlab   scanlab::solve_linear_recurrence on the form's source (linrec_ab, linrec_lambda,
//             linrec_ema; linrec_reverse(...) with --reverse): the fused single-pass kernel
//             (one sequence, row-major batches, offsets) or the column kernels (interleaved
//             and channels-last batches);
//             --final: final states only. --backward: the forward solve, then
//             linear_recurrence_backward_batched on its x (the fused backward pass)
//   CUB       (not for channels-last batches or offsets: cub_applies)
//             cub::DeviceScan::InclusiveScan with the affine-composition operator over a
//             transform iterator building the maps from a and b, writing x through a
//             transform output iterator (linrec_cub.cuh): the same 12 bytes per float element;
//             --reverse: the maps read from each sequence's end; --backward: the reverse scan
//             of (a[i+1], dL/dx[i]) with the gradients written by a tabulate output iterator
//   variants  (--bench --variants, float32 and bfloat16 (a, b) row-major) scanlab's kernel in
//             other tile shapes: the measurements behind the Hopper shapes (with --backward:
//             the backward pass's shapes)
#pragma once

#include "linrec/linrec_cub.cuh"
#include "linrec/linrec_gpu.hpp"
#include "linrec/linrec_types.hpp"

#include "common/device_buffer.hpp"
#include "instances/linrec_instances.cuh"

#include <scanlab/algorithms/linrec.cuh>
#include <scanlab/arch.cuh>
#include <scanlab/error.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace scanlab::linrec_app {

namespace detail_gpu {

// A variant by its Hopper shape (a variant is one policy or a table whose family-90 row it names).
template <class Tuning>
std::string policy_name() {
  using Policy = arch::policy_for<Tuning, 90>;
  return "scanlab " + std::to_string(Policy::block_threads) + "x" + std::to_string(Policy::items_per_thread) + ", " +
         std::to_string(Policy::min_blocks_per_sm) + "/SM, " + std::to_string(Policy::buffers) + " buffers, L2 +" +
         std::to_string(Policy::l2_ahead);
}

// A tuning variant (--bench --tune): Policy on the families with Hopper's limits (90, 100:
// the variants were measured on Hopper and hold their tiles in up to ~200 KB of shared
// memory), Default's row of its table on the others (whose blocks hold 64-163 KB: there
// every variant times the default kernel).
template <class Policy, class Default>
struct hopper_variant {
  template <int Family>
  struct at {
    using type = std::conditional_t<Family == 90 || Family == 100, Policy, arch::policy_for<Default, Family>>;
  };
};

// CUB's baseline covers one sequence and the row-major and interleaved batches.
inline bool cub_applies(const gpu_request& r) { return r.channels == 0 && r.offsets.empty(); }

template <class T>
class runner {
 public:
  // Launch options of the one-sequence and [batch, length] calls (--tune: the look-back
  // kernel forced by a launch mode, timed beside the automatic choice).
  single_pass_options options{};

  explicit runner(const gpu_request& r)
      : r_(r),
        n_(r.p->size()),
        d_offsets_(std::span<const std::int64_t>(r.offsets)),
        d_p_(r.p->as<T>()),
        d_q_(r.q != nullptr ? device_buffer<T>(r.q->as<T>()) : device_buffer<T>()),
        d_x0s_(r.x0s.as<T>()),
        d_x_(r.final_only ? r.batch : n_) {
    if (r.grad_x != nullptr) {
      d_gx_ = device_buffer<T>(r.grad_x->as<T>());
      d_ga_ = device_buffer<T>(n_);
      d_gb_ = device_buffer<T>(n_);
      d_gx0_ = device_buffer<T>(r.batch);
    }
  }

  // scanlab on the request's form, layout and direction, with the given policy.
  template <class Policy>
  cudaError_t scanlab_call(void* temp, std::size_t& bytes, cudaStream_t s) {
    switch (r_.kind) {
      case form::ab: return directed<Policy>(linrec_ab(d_p_.data(), d_q_.data()), temp, bytes, s);
      case form::lambda:
      case form::ema:
        // Built for float and double only (all_forms_type: main.cpp refuses the others).
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
          if (r_.kind == form::lambda) return directed<Policy>(linrec_lambda(d_p_.data(), d_q_.data()), temp, bytes, s);
          return directed<Policy>(linrec_ema(d_p_.data(), from_double<T>(r_.alpha)), temp, bytes, s);
        }
        break;
    }
    return cudaErrorInvalidValue;
  }

  // The backward pass of the forward (a, b) solve, on its x (run scanlab_call first).
  template <class Policy>
  cudaError_t backward_call(void* temp, std::size_t& bytes, cudaStream_t s) {
    if (!r_.offsets.empty()) {
      return linear_recurrence_backward_varlen<T, Policy>(temp, bytes, d_p_.data(), d_x_.data(), d_gx_.data(),
                                                          d_ga_.data(), d_gb_.data(), d_gx0_.data(),
                                                          d_offsets_.data(), r_.batch, n_, d_x0s_.data(), s);
    }
    if (r_.channels > 0) {
      return linear_recurrence_backward_channels_last<T, Policy>(
          temp, bytes, d_p_.data(), d_x_.data(), d_gx_.data(), d_ga_.data(), d_gb_.data(), d_gx0_.data(),
          r_.batch / r_.channels, r_.length, r_.channels, d_x0s_.data(), s);
    }
    const batch_layout layout = r_.interleaved ? batch_layout::interleaved : batch_layout::row_major;
    return linear_recurrence_backward_batched<T, Policy>(temp, bytes, d_p_.data(), d_x_.data(), d_gx_.data(),
                                                         d_ga_.data(), d_gb_.data(), d_gx0_.data(), r_.batch,
                                                         r_.length, layout, d_x0s_.data(), s, options);
  }

  cudaError_t cub_call(void* temp, std::size_t& bytes, T* out, cudaStream_t s) const {
    linrec_cub::problem<T> pr;
    pr.kind = r_.kind == form::ab ? linrec_cub::form::ab
              : r_.kind == form::lambda ? linrec_cub::form::lambda
                                        : linrec_cub::form::ema;
    pr.p = d_p_.data();
    pr.q = d_q_.data();
    pr.alpha = from_double<T>(r_.alpha);
    pr.x0s = d_x0s_.data();
    pr.batch = r_.batch;
    pr.length = r_.length;
    pr.interleaved = r_.interleaved;
    pr.reverse = r_.reverse;
    return linrec_cub::solve(temp, bytes, pr, out, s);
  }

  // CUB's backward pass on scanlab's x, into its own gradient arrays.
  cudaError_t cub_backward_call(void* temp, std::size_t& bytes, cudaStream_t s) {
    linrec_cub::gradient_problem<T> pr;
    pr.a = d_p_.data();
    pr.x = d_x_.data();
    pr.grad_x = d_gx_.data();
    pr.grad_a = d_cub_ga_.data();
    pr.grad_b = d_cub_gb_.data();
    pr.grad_x0 = d_cub_gx0_.data();
    pr.x0s = d_x0s_.data();
    pr.batch = r_.batch;
    pr.length = r_.length;
    pr.interleaved = r_.interleaved;
    return linrec_cub::solve_gradient(temp, bytes, pr, s);
  }

  // Temp storage for everything that will run (the largest need).
  void reserve(std::size_t bytes) {
    if (bytes > temp_bytes_) {
      temp_ = device_buffer<unsigned char>(static_cast<std::int64_t>(bytes));
      temp_bytes_ = bytes;
    }
  }
  template <class Policy>
  void reserve_scanlab() {
    std::size_t bytes = 0;
    SCANLAB_CHECK(scanlab_call<Policy>(nullptr, bytes, nullptr));
    reserve(bytes);
  }
  void reserve_cub() {
    std::size_t bytes = 0;
    SCANLAB_CHECK(cub_call(nullptr, bytes, nullptr, nullptr));
    reserve(std::max<std::size_t>(bytes, 1));
    if (d_cub_.size() != n_) d_cub_ = device_buffer<T>(n_);
  }
  template <class Policy>
  void reserve_backward() {
    std::size_t bytes = 0;
    SCANLAB_CHECK(backward_call<Policy>(nullptr, bytes, nullptr));
    reserve(bytes);
  }
  void reserve_cub_backward() {
    if (d_cub_ga_.size() != n_) {
      d_cub_ga_ = device_buffer<T>(n_);
      d_cub_gb_ = device_buffer<T>(n_);
      d_cub_gx0_ = device_buffer<T>(r_.batch);
    }
    std::size_t bytes = 0;
    SCANLAB_CHECK(cub_backward_call(nullptr, bytes, nullptr));
    reserve(std::max<std::size_t>(bytes, 1));
  }

  template <class Policy>
  void enqueue_scanlab(cudaStream_t s) {
    std::size_t bytes = temp_bytes_;
    SCANLAB_CHECK(scanlab_call<Policy>(temp_.data(), bytes, s));
  }
  // A tuning variant: the (a, b) form only (the other forms' kernels are not built for it).
  template <class Policy>
  cudaError_t variant_call(void* temp, std::size_t& bytes, cudaStream_t s) {
    return directed<Policy>(linrec_ab(d_p_.data(), d_q_.data()), temp, bytes, s);
  }
  template <class Policy>
  void reserve_variant() {
    std::size_t bytes = 0;
    SCANLAB_CHECK(variant_call<Policy>(nullptr, bytes, nullptr));
    reserve(bytes);
  }
  template <class Policy>
  void enqueue_variant(cudaStream_t s) {
    std::size_t bytes = temp_bytes_;
    SCANLAB_CHECK(variant_call<Policy>(temp_.data(), bytes, s));
  }
  void enqueue_cub(cudaStream_t s) {
    std::size_t bytes = temp_bytes_;
    SCANLAB_CHECK(cub_call(temp_.data(), bytes, d_cub_.data(), s));
  }
  template <class Policy>
  void enqueue_backward(cudaStream_t s) {
    std::size_t bytes = temp_bytes_;
    SCANLAB_CHECK(backward_call<Policy>(temp_.data(), bytes, s));
  }
  void enqueue_cub_backward(cudaStream_t s) {
    std::size_t bytes = temp_bytes_;
    SCANLAB_CHECK(cub_backward_call(temp_.data(), bytes, s));
  }

  // The gradients (scanlab's, or CUB's) in the input's shape and [batch].
  gradient_arrays result_gradients(const io::host_array& shape_like, bool cub) const {
    SCANLAB_CHECK(cudaDeviceSynchronize());
    io::host_array per_sequence(io::dtype_of<T>(), {r_.batch});
    return {to_array(cub ? d_cub_ga_ : d_ga_, shape_like), to_array(cub ? d_cub_gb_ : d_gb_, shape_like),
            to_array(cub ? d_cub_gx0_ : d_gx0_, per_sequence)};
  }

  io::host_array result_x(const io::host_array& shape_like) const {
    SCANLAB_CHECK(cudaDeviceSynchronize());
    return to_array(d_x_, shape_like);
  }
  // CUB's solution in the shape of the result: the whole x, or its final states.
  io::host_array result_cub(const io::host_array& shape_like) const {
    SCANLAB_CHECK(cudaDeviceSynchronize());
    if (!r_.final_only) return to_array(d_cub_, shape_like);
    const std::vector<T> all = d_cub_.to_host();
    io::host_array out(io::dtype_of<T>(), {r_.batch});
    auto view = out.as<T>();
    for (std::int64_t k = 0; k < r_.batch; ++k) {
      T value = r_.x0s.as<T>()[static_cast<std::size_t>(k)];
      if (r_.length > 0) {
        const std::int64_t t = r_.reverse ? 0 : r_.length - 1;  // the last state solved
        const std::int64_t last = r_.interleaved ? t * r_.batch + k : k * r_.length + t;
        value = all[static_cast<std::size_t>(last)];
      }
      view[static_cast<std::size_t>(k)] = value;
    }
    return out;
  }

  [[nodiscard]] std::int64_t n() const { return n_; }

 private:
  static io::host_array to_array(const device_buffer<T>& d, const io::host_array& shape_like) {
    io::host_array out(io::dtype_of<T>(), shape_like.shape());
    if (out.size() != d.size()) throw std::logic_error("linrec: result size differs from its shape");
    const std::vector<T> host = d.to_host();
    std::copy(host.begin(), host.end(), out.as<T>().begin());
    return out;
  }

  template <class Policy, class Source>
  cudaError_t directed(const Source& src, void* temp, std::size_t& bytes, cudaStream_t s) {
    if (r_.reverse) return call<Policy>(linrec_reverse(src), temp, bytes, s);
    return call<Policy>(src, temp, bytes, s);
  }

  template <class Policy, class Source>
  cudaError_t call(const Source& src, void* temp, std::size_t& bytes, cudaStream_t s) {
    T* x = r_.final_only ? nullptr : d_x_.data();
    T* fin = r_.final_only ? d_x_.data() : nullptr;
    if (!r_.offsets.empty()) {
      return solve_linear_recurrence<Policy>(temp, bytes, src, x, fin, linrec_varlen{d_offsets_.data(), r_.batch, n_},
                                             d_x0s_.data(), from_double<T>(0), s);
    }
    if (r_.channels > 0) {
      return solve_linear_recurrence<Policy>(temp, bytes, src, x, fin,
                                             linrec_channels_last{r_.batch / r_.channels, r_.length, r_.channels},
                                             d_x0s_.data(), from_double<T>(0), s);
    }
    const batch_layout layout = r_.interleaved ? batch_layout::interleaved : batch_layout::row_major;
    return solve_linear_recurrence<Policy>(temp, bytes, src, x, fin, r_.batch, r_.length, layout, d_x0s_.data(),
                                           from_double<T>(0), s, options);
  }

  const gpu_request& r_;
  std::int64_t n_;
  device_buffer<std::int64_t> d_offsets_;  // variable lengths, or empty
  device_buffer<T> d_p_;
  device_buffer<T> d_q_;
  device_buffer<T> d_x0s_;
  device_buffer<T> d_x_;
  device_buffer<T> d_gx_, d_ga_, d_gb_, d_gx0_;              // the backward pass
  device_buffer<T> d_cub_ga_, d_cub_gb_, d_cub_gx0_;         // CUB's gradients
  device_buffer<T> d_cub_;
  device_buffer<unsigned char> temp_;
  std::size_t temp_bytes_ = 0;
};

}  // namespace detail_gpu

// Variants: further linrec_policy types, timed with --variants ((a, b) row-major only; the
// float32 and bfloat16 files name them): Variants for the solves, GradientVariants (a
// std::tuple of them) for the backward pass.
template <class T, class GradientVariants = std::tuple<>, class... Variants>
gpu_report run_typed(const gpu_request& request) {
  if (request.batch < 1 && request.length > 0) throw std::logic_error("linrec: batch must be at least 1");
  const bool backward = request.grad_x != nullptr;
  if (backward && (request.kind != form::ab || request.reverse || request.final_only)) {
    throw std::logic_error("linrec: the backward pass is of the forward (a, b) solve");
  }
  detail_gpu::runner<T> r(request);
  r.template reserve_scanlab<default_policy>();
  if (backward) r.template reserve_backward<default_policy>();
  const bool with_cub = (request.compare || request.bench) && detail_gpu::cub_applies(request);
  if (with_cub) {
    if (backward) {
      r.reserve_cub_backward();
    } else {
      r.reserve_cub();
    }
  }

  // The shape of x: the input's own shape, or [batch] for the final states.
  io::host_array shape_like(io::dtype_of<T>(), request.final_only ? std::vector<std::int64_t>{request.batch}
                                                                   : request.p->shape());
  gpu_report report;
  r.template enqueue_scanlab<default_policy>(nullptr);
  report.x = r.result_x(shape_like);
  if (backward) {
    r.template enqueue_backward<default_policy>(nullptr);
    report.gradients = r.result_gradients(shape_like, false);
  }
  if (with_cub) {
    if (backward) {
      r.enqueue_cub_backward(nullptr);
      report.cub_gradients = r.result_gradients(shape_like, true);
    } else {
      r.enqueue_cub(nullptr);
      report.cub_x = r.result_cub(shape_like);
    }
  }
  if (!request.bench) return report;

  bench::harness harness({.warmup = 3, .repeat = request.repeat});
  report.memcpy_gbps = harness.memcpy_gbps();
  const int arrays = request.kind == form::ema ? 1 : 2;
  // The backward pass: a, x and dL/dx read, dL/da and dL/db written, x0 read and dL/dx0
  // written per sequence.
  const double bytes = backward ? (5.0 * static_cast<double>(r.n()) + 2.0 * static_cast<double>(request.batch)) * sizeof(T)
                                : static_cast<double>(r.n()) * sizeof(T) * (arrays + (request.final_only ? 0 : 1));
  const std::string suite = backward ? std::string("linrec-backward")
                                     : std::string(request.kind == form::ab       ? "linrec"
                                                   : request.kind == form::lambda ? "linrec-lambda"
                                                                                  : "linrec-ema") +
                                           (request.reverse ? "-reverse" : "") + (request.final_only ? "-final" : "");
  const std::string shape = !request.offsets.empty() ? " offsets"
                            : request.channels > 0  ? " [batch, length, channels]"
                            : request.batch == 1    ? ""
                                                    : (request.interleaved ? " [length, batch]" : " [batch, length]");
  const auto row = [&](const std::string& variant, const bench::timing& t) {
    bench::result res;
    res.suite = suite;
    res.variant = variant;
    res.type = std::string(io::name(io::dtype_of<T>())) + shape;
    res.dataset = request.dataset;
    res.n = r.n();
    res.bytes = bytes;
    res.time = t;
    return res;
  };
  const std::string cub_name = backward           ? "cub InclusiveScan (affine maps, reversed, gradient epilogue)"
                               : request.reverse ? "cub InclusiveScan (affine maps, reversed)"
                                                 : "cub InclusiveScan (affine maps)";
  // CUB's time where its baseline applies (one sequence, row-major and interleaved batches).
  std::optional<bench::timing> cub_time;
  if (with_cub) {
    cub_time = harness.time([&](cudaStream_t s) {
      if (backward) {
        r.enqueue_cub_backward(s);
      } else {
        r.enqueue_cub(s);
      }
    });
  }
  const bench::timing ours = harness.time([&](cudaStream_t s) {
    if (backward) {
      r.template enqueue_backward<default_policy>(s);
    } else {
      r.template enqueue_scanlab<default_policy>(s);
    }
  });
  bench::result ours_row = row("scanlab", ours);
  if (cub_time) ours_row.baseline_ms = cub_time->median_ms;
  report.rows.push_back(std::move(ours_row));
  if (!cub_time) return report;
  report.rows.push_back(row(cub_name, *cub_time));
  if (request.variants && !request.interleaved && detail_gpu::cub_applies(request)) {
    // The single-pass look-back kernel forced (a launch mode), for the shapes whose automatic
    // choice is the rows kernel (short rows: primitives/docs/linrec.md); the same otherwise.
    r.options = single_pass_options{launch_mode::cooperative, 0};
    if (backward) {
      r.template reserve_backward<default_policy>();
    } else {
      r.template reserve_scanlab<default_policy>();
    }
    const bench::timing t = harness.time([&](cudaStream_t s) {
      if (backward) {
        r.template enqueue_backward<default_policy>(s);
      } else {
        r.template enqueue_scanlab<default_policy>(s);
      }
    });
    r.options = single_pass_options{};
    bench::result res = row("scanlab look-back kernel (cooperative)", t);
    res.baseline_ms = cub_time->median_ms;
    report.rows.push_back(std::move(res));
  }
  if (request.variants && request.kind == form::ab && !request.interleaved && detail_gpu::cub_applies(request)) {
    if (backward) {
      const auto time_variant = [&]<class Policy>() {
        r.template reserve_backward<Policy>();
        const bench::timing t = harness.time([&](cudaStream_t s) { r.template enqueue_backward<Policy>(s); });
        bench::result res = row(detail_gpu::policy_name<Policy>(), t);
        res.baseline_ms = cub_time->median_ms;
        report.rows.push_back(std::move(res));
      };
      [&]<class... Policies>(std::tuple<Policies...>*) {
        (time_variant.template operator()<Policies>(), ...);
      }(static_cast<GradientVariants*>(nullptr));
    } else if constexpr (sizeof...(Variants) > 0) {
      const auto time_variant = [&]<class Policy>() {
        r.template reserve_variant<Policy>();
        const bench::timing t = harness.time([&](cudaStream_t s) { r.template enqueue_variant<Policy>(s); });
        bench::result res = row(detail_gpu::policy_name<Policy>(), t);
        res.baseline_ms = cub_time->median_ms;
        report.rows.push_back(std::move(res));
      };
      (time_variant.template operator()<Variants>(), ...);
    }
  }
  return report;
}

}  // namespace scanlab::linrec_app
