// scanlab-compact, GPU side: scanlab's production compaction, the three-phase version and
// CUB's DeviceSelect on the same device arrays. Included by one compact_gpu_<type>.cu per
// element type, each instantiating run_typed<T> once.
//
// What each library is asked for:
//   predicate   scanlab::select_if          three_phase::select_if      cub::DeviceSelect::If
//   --flags     scanlab::select_flagged     three_phase::select_flagged cub::DeviceSelect::Flagged
//   --unique    scanlab::unique             three_phase::unique         cub::DeviceSelect::Unique
//   --indices   the *_pairs / unique_by_key forms with counting_iterator<int64> values
// Every library gets the same functor: the GPU form of the predicate (with_gpu_test in
// predicate.hpp: a range, x != 0 or a low-bit test, one kernel each).
#pragma once

#include "compact/compact_gpu.hpp"

#include "common/device_buffer.hpp"

#include <scanlab/algorithms/select.cuh>
#include <scanlab/algorithms/select_three_phase.cuh>
#include <scanlab/error.hpp>
#include <scanlab/iterator.cuh>
#include <scanlab/tuning.hpp>

#include <cub/device/device_select.cuh>

#include <algorithm>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace scanlab::compact_app {

namespace {

template <class T>
inline constexpr bool bitwise_type = std::is_integral_v<T> && std::is_unsigned_v<T>;
template <class T>
inline constexpr bool unique_type = bitwise_type<T> || std::is_floating_point_v<T>;

// Production variants timed by --bench --tune for uint32 (see primitives/docs/compact.md).
// Each adds a kernel to the build, so only uint32 carries them.
using tune_policies = std::tuple<select_policy<256, 16, 4, 3>, select_policy<256, 32, 4, 3, false>,
                                 select_policy<256, 32, 4, 2, false>, select_policy<256, 24, 4, 2>,
                                 select_policy<256, 32, 4, 2, true, 0, 1>>;

template <class Policy>
std::string policy_name() {
  return std::to_string(Policy::block_threads) + "x" + std::to_string(Policy::items_per_thread) + ", " +
         std::to_string(Policy::min_blocks_per_sm) + "/SM" + (Policy::prefetch ? "" : ", no prefetch") +
         (Policy::l2_ahead > 0 ? ", L2 +" + std::to_string(Policy::l2_ahead) : "");
}

template <class T>
class runner {
 public:
  using pairs_index = counting_iterator<std::int64_t>;

  runner(const T* data, std::int64_t n, const std::vector<std::uint8_t>* flags, const gpu_request& request)
      : n_(n), request_(request), d_in_(std::span<const T>(data, static_cast<std::size_t>(n))), d_out_(n),
        d_count_(1) {
    if (flags != nullptr) d_flags_ = device_buffer<std::uint8_t>(std::span<const std::uint8_t>(*flags));
    if (request.indices) d_indices_ = device_buffer<std::int64_t>(n);
    if (request.predicate.kind != test_kind::flags && request.predicate.kind != test_kind::unique) {
      test_ = make_value_test<T>(request.predicate);
    }
    std::size_t most = 1;
    const auto grow = [&](const auto& call) {
      std::size_t bytes = 0;
      SCANLAB_CHECK(call(nullptr, bytes, nullptr));
      most = std::max(most, bytes);
    };
    grow([&](void* t, std::size_t& b, cudaStream_t s) { return scanlab_keys(t, b, s); });
    if (request.indices) grow([&](void* t, std::size_t& b, cudaStream_t s) { return scanlab_pairs(t, b, s); });
    if (request.compare || request.bench) {
      grow([&](void* t, std::size_t& b, cudaStream_t s) { return three_phase_keys(t, b, s); });
      grow([&](void* t, std::size_t& b, cudaStream_t s) { return cub_keys(t, b, s); });
    }
    temp_bytes_ = most;
    d_temp_ = device_buffer<unsigned char>(static_cast<std::int64_t>(most));
  }

  // ---- the calls ----

  cudaError_t scanlab_keys(void* t, std::size_t& b, cudaStream_t s, const single_pass_options& options = {}) {
    const T* in = d_in_.data();
    T* out = d_out_.data();
    std::int64_t* c = d_count_.data();
    switch (request_.predicate.kind) {
      case test_kind::flags:
        if constexpr (bitwise_type<T>) {
          return select_flagged(t, b, in, static_cast<const std::uint8_t*>(d_flags_.data()), out, c, n_, s, options);
        }
        break;
      case test_kind::unique:
        if constexpr (unique_type<T>) return unique(t, b, in, out, c, n_, s, {}, options);  // {}: the default a == b
        break;
      default:
        return with_gpu_test(test_, [&](auto test) { return select_if(t, b, in, out, c, n_, test, s, options); });
    }
    throw std::logic_error("compact: this element type does not run this predicate");
  }

  template <class Policy>
  cudaError_t scanlab_keys_with(void* t, std::size_t& b, cudaStream_t s) {
    return select_if<Policy>(t, b, static_cast<const T*>(d_in_.data()), d_out_.data(), d_count_.data(), n_,
                             range_of(test_), s);
  }

  cudaError_t scanlab_pairs(void* t, std::size_t& b, cudaStream_t s) {
    const T* in = d_in_.data();
    const pairs_index index(0);
    switch (request_.predicate.kind) {
      case test_kind::flags:
        if constexpr (bitwise_type<T>) {
          return select_flagged_pairs(t, b, in, index, static_cast<const std::uint8_t*>(d_flags_.data()),
                                      d_out_.data(), d_indices_.data(), d_count_.data(), n_, s);
        }
        break;
      case test_kind::unique:
        if constexpr (unique_type<T>) {
          return unique_by_key(t, b, in, index, d_out_.data(), d_indices_.data(), d_count_.data(), n_, s);
        }
        break;
      default:
        return with_gpu_test(test_, [&](auto test) {
          return select_if_pairs(t, b, in, index, d_out_.data(), d_indices_.data(), d_count_.data(), n_, test, s);
        });
    }
    throw std::logic_error("compact: this element type does not run this predicate");
  }

  cudaError_t three_phase_keys(void* t, std::size_t& b, cudaStream_t s) {
    const T* in = d_in_.data();
    switch (request_.predicate.kind) {
      case test_kind::flags:
        if constexpr (bitwise_type<T>) {
          return three_phase::select_flagged(t, b, in, static_cast<const std::uint8_t*>(d_flags_.data()),
                                             d_out_.data(), d_count_.data(), n_, s);
        }
        break;
      case test_kind::unique:
        if constexpr (unique_type<T>) return three_phase::unique(t, b, in, d_out_.data(), d_count_.data(), n_, s);
        break;
      default:
        return with_gpu_test(test_, [&](auto test) {
          return three_phase::select_if(t, b, in, d_out_.data(), d_count_.data(), n_, test, s);
        });
    }
    throw std::logic_error("compact: this element type does not run this predicate");
  }

  cudaError_t cub_keys(void* t, std::size_t& b, cudaStream_t s) {
    const T* in = d_in_.data();
    switch (request_.predicate.kind) {
      case test_kind::flags:
        if constexpr (bitwise_type<T>) {
          return cub::DeviceSelect::Flagged(t, b, in, static_cast<const std::uint8_t*>(d_flags_.data()),
                                            d_out_.data(), d_count_.data(), n_, s);
        }
        break;
      case test_kind::unique:
        if constexpr (unique_type<T>) return cub::DeviceSelect::Unique(t, b, in, d_out_.data(), d_count_.data(), n_, s);
        break;
      default:
        return with_gpu_test(test_, [&](auto test) {
          return cub::DeviceSelect::If(t, b, in, d_out_.data(), d_count_.data(), n_, test, s);
        });
    }
    throw std::logic_error("compact: this element type does not run this predicate");
  }

  std::string cub_name() const {
    switch (request_.predicate.kind) {
      case test_kind::flags: return "cub DeviceSelect::Flagged";
      case test_kind::unique: return "cub DeviceSelect::Unique";
      default: return "cub DeviceSelect::If";
    }
  }

  // ---- running ----

  // Runs `call` with the shared temp storage, waits, and collects the result.
  template <class Call>
  gpu_result collect(const std::string& name, io::dtype type, bool with_indices, Call call) {
    d_count_.fill_bytes(0xff);
    SCANLAB_CHECK(call(d_temp_.data(), temp_bytes_, nullptr));
    SCANLAB_CHECK(cudaDeviceSynchronize());
    gpu_result r;
    r.implementation = name;
    r.count = d_count_.to_host()[0];
    if (r.count < 0 || r.count > n_) throw std::runtime_error(name + ": count " + std::to_string(r.count) + " out of range");
    r.kept = io::host_array(type, {r.count});
    if (r.count > 0) {
      SCANLAB_CHECK(cudaMemcpy(r.kept.data(), d_out_.data(), static_cast<std::size_t>(r.count) * sizeof(T),
                               cudaMemcpyDeviceToHost));
    }
    if (with_indices) {
      r.indices = io::host_array(io::dtype::i64, {r.count});
      if (r.count > 0) {
        SCANLAB_CHECK(cudaMemcpy(r.indices.data(), d_indices_.data(), static_cast<std::size_t>(r.count) * 8,
                                 cudaMemcpyDeviceToHost));
      }
    }
    return r;
  }

  void enqueue(const std::function<cudaError_t(void*, std::size_t&, cudaStream_t)>& call, cudaStream_t s) {
    SCANLAB_CHECK(call(d_temp_.data(), temp_bytes_, s));
  }

  // Temp storage for a variant not sized in the constructor.
  void reserve(std::size_t bytes) {
    if (bytes > temp_bytes_) {
      d_temp_ = device_buffer<unsigned char>(static_cast<std::int64_t>(bytes));
      temp_bytes_ = bytes;
    }
  }

  [[nodiscard]] std::int64_t n() const { return n_; }
  [[nodiscard]] bool has_flags() const { return d_flags_.size() > 0; }

 private:
  std::int64_t n_;
  const gpu_request& request_;
  device_buffer<T> d_in_;
  device_buffer<T> d_out_;
  device_buffer<std::int64_t> d_indices_;
  device_buffer<std::uint8_t> d_flags_;
  device_buffer<std::int64_t> d_count_;
  device_buffer<unsigned char> d_temp_;
  std::size_t temp_bytes_ = 0;
  value_test<T> test_{};
};

}  // namespace

template <class T>
gpu_report run_typed(const T* data, std::int64_t n, io::dtype type, const std::vector<std::uint8_t>* flags,
                     const gpu_request& request) {
  using call_t = std::function<cudaError_t(void*, std::size_t&, cudaStream_t)>;
  runner<T> r(data, n, flags, request);
  gpu_report report;
  const bool indices = request.indices;
  const call_t keys = [&](void* t, std::size_t& b, cudaStream_t s) { return r.scanlab_keys(t, b, s); };
  const call_t pairs = [&](void* t, std::size_t& b, cudaStream_t s) { return r.scanlab_pairs(t, b, s); };
  const call_t three = [&](void* t, std::size_t& b, cudaStream_t s) { return r.three_phase_keys(t, b, s); };
  const call_t cub = [&](void* t, std::size_t& b, cudaStream_t s) { return r.cub_keys(t, b, s); };

  report.results.push_back(r.collect("scanlab", type, indices, indices ? pairs : keys));
  if (request.compare) {
    report.results.push_back(r.collect("scanlab three-phase", type, false, three));
    report.results.push_back(r.collect(r.cub_name(), type, false, cub));
    if (indices) report.results.push_back(r.collect("scanlab (keys only)", type, false, keys));
  }

  if (request.bench) {
    bench::harness harness({.warmup = 3, .repeat = request.repeat});
    report.memcpy_gbps = harness.memcpy_gbps();
    const std::int64_t count = report.results.front().count;
    const std::string type_name(io::name(type));
    const double read_bytes = static_cast<double>(n) * (sizeof(T) + (r.has_flags() ? 1.0 : 0.0));
    const auto row = [&](const std::string& variant, const bench::timing& t, double extra_bytes) {
      bench::result res;
      res.suite = "compact " + describe(request.predicate);
      res.variant = variant;
      res.type = type_name;
      res.dataset = request.dataset;
      res.n = n;
      res.bytes = read_bytes + static_cast<double>(count) * sizeof(T) + extra_bytes;
      res.time = t;
      return res;
    };
    const auto time = [&](const call_t& call) { return harness.time([&](cudaStream_t s) { r.enqueue(call, s); }); };
    const bench::timing cub_time = time(cub);
    const auto versus_cub = [&](bench::result res) {
      res.baseline_ms = cub_time.median_ms;
      return res;
    };
    report.rows.push_back(versus_cub(row("scanlab", time(keys), 0)));
    if (!request.production_only) report.rows.push_back(versus_cub(row("scanlab three-phase", time(three), 0)));
    report.rows.push_back(row(r.cub_name(), cub_time, 0));
    if (indices) {
      report.rows.push_back(row("scanlab + indices", time(pairs), static_cast<double>(count) * 8));
    }
    if (request.tune) {
      const auto with = [&](single_pass_options o) -> call_t {
        return [&r, o](void* t, std::size_t& b, cudaStream_t s) { return r.scanlab_keys(t, b, s, o); };
      };
      report.rows.push_back(versus_cub(row("scanlab, tickets", time(with({.mode = launch_mode::tickets})), 0)));
      if constexpr (std::is_same_v<T, std::uint32_t>) {
        const test_kind kind = request.predicate.kind;  // variants built for range predicates only
        if (kind == test_kind::greater || kind == test_kind::less || kind == test_kind::between ||
            kind == test_kind::finite) {
          std::apply(
              [&]<class... P>(P...) {
                (
                    [&] {
                      const call_t call = [&](void* t, std::size_t& b, cudaStream_t s) {
                        return r.template scanlab_keys_with<P>(t, b, s);
                      };
                      std::size_t bytes = 0;
                      SCANLAB_CHECK(call(nullptr, bytes, nullptr));
                      r.reserve(bytes);
                      report.rows.push_back(versus_cub(row("scanlab " + policy_name<P>(), time(call), 0)));
                    }(),
                    ...);
              },
              tune_policies{});
        }
      }
    }
  }
  return report;
}

}  // namespace scanlab::compact_app

#define SCANLAB_COMPACT_INSTANTIATE(T)                                                                     \
  template scanlab::compact_app::gpu_report scanlab::compact_app::run_typed<T>(                           \
      const T*, std::int64_t, scanlab::io::dtype, const std::vector<std::uint8_t>*,                        \
      const scanlab::compact_app::gpu_request&);
