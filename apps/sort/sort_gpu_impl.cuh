// scanlab-sort, GPU side: one sorter per (key type, value type) holding the device arrays,
// calling scanlab's radix sorts, CUB and thrust on them, and checking the results against
// a CPU std::stable_sort. Included by sort_gpu_<bits>.cu, which instantiate run_typed.
//
// What each library is asked for (n keys, the requested order and bit range):
//   keys     scanlab::radix_sort_keys       cub::DeviceRadixSort::SortKeys[Descending]
//            thrust::sort (bench only; in place, so each timed run copies the input first
//            and the copy's own time is subtracted)
//   pairs    scanlab::radix_sort_pairs      cub::DeviceRadixSort::SortPairs[Descending]
//   argsort  scanlab::radix_argsort (int64)  SortPairs[Descending] with the values 0..n-1
// The streaming path (stream_typed): scanlab::streaming::sort_keys / sort_pairs on host
// arrays, in the same translation unit, so that the radix sort kernels of its runs are the
// ones compiled for the in-memory path (the external sort adds its merge kernels only).
#pragma once

#include "sort/sort_check.hpp"
#include "sort/sort_gpu.hpp"

#include "common/device_buffer.hpp"
#include "common/event_timer.hpp"

#include <scanlab/algorithms/radix_sort.cuh>
#include <scanlab/error.hpp>
#include <scanlab/streaming/sort.cuh>

#include <cub/device/device_radix_sort.cuh>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/sort.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace scanlab::sort_app {

namespace impl {

template <class T>
__global__ void iota_kernel(T* out, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    out[i] = static_cast<T>(i);
  }
}

// The stable sorting permutation on the CPU (std::stable_sort). A bit range compares those
// bits of the ordered bits, which is what a bit range means.
template <class Key>
std::vector<std::int64_t> reference_permutation(std::span<const Key> keys, const gpu_request& r) {
  constexpr int width = 8 * static_cast<int>(sizeof(Key));
  const int end_bit = r.end_bit < 0 ? width : r.end_bit;
  std::vector<std::int64_t> order(keys.size());
  std::iota(order.begin(), order.end(), std::int64_t{0});
  if (r.begin_bit == 0 && end_bit == width) {
    std::stable_sort(order.begin(), order.end(),
                     [&](std::int64_t a, std::int64_t b) { return key_before(keys[a], keys[b], r.descending); });
    return order;
  }
  const int bits = end_bit - r.begin_bit;
  const std::uint64_t mask = bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
  std::vector<std::uint64_t> field(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const auto ordered = static_cast<std::uint64_t>(radix_ordered_bits(keys[i], r.descending));
    field[i] = bits == 0 ? 0 : (ordered >> r.begin_bit) & mask;
  }
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return field[a] < field[b]; });
  return order;
}

// CUB orders NaNs by their sign bit (negative NaNs first): compare with it only without NaNs.
// (-0.0 and +0.0 are equal keys for CUB too.)
template <class Key>
bool cub_order_matches(std::span<const Key> keys) {
  if constexpr (std::is_floating_point_v<Key>) {
    return std::none_of(keys.begin(), keys.end(), [](Key k) { return std::isnan(k); });
  }
  return true;
}

// Where two arrays (vectors or spans) of one element size first differ bit for bit, or -1.
template <class Got, class Want>
std::int64_t first_difference(const Got& got, const Want& want) {
  static_assert(sizeof(got[0]) == sizeof(want[0]));
  const std::size_t n = std::min(got.size(), want.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(got[0])) != 0) return static_cast<std::int64_t>(i);
  }
  return got.size() == want.size() ? -1 : static_cast<std::int64_t>(n);
}

inline check compare(const std::string& against, const std::string& what, std::int64_t difference) {
  if (difference < 0) return {against, true, what + ": identical"};
  return {against, false, what + ": first difference at position " + std::to_string(difference)};
}

// The element type a sorter holds for Value: Value itself, or unsigned char for keys only
// (void), so that spans of it can be passed either way.
template <class Value>
using value_or_byte = std::conditional_t<std::is_void_v<Value>, unsigned char, Value>;

// The calls of one sort on device arrays (all null: sizing only, the two-phase query).
// Value: void (keys), std::uint32_t / std::uint64_t (pairs, the values' bits), std::int64_t (argsort).
template <class Key, class Value>
struct sort_calls {
  static constexpr bool has_values = !std::is_void_v<Value>;
  using value_t = value_or_byte<Value>;
  // A tuning variant, benchmarked for uint32 keys only: onesweep ranking with one
  // match.any per key instead of the default eight ballots.
  struct match_policy : radix_sort_policy<4> {
    static constexpr auto ranking = radix_sort_ranking::match;
  };
  static constexpr bool has_match_variant = std::is_same_v<Key, std::uint32_t> && !has_values;

  std::int64_t n = 0;
  mode what = mode::keys;
  radix_sort_options options{};
  const Key* keys_in = nullptr;
  Key* keys_out = nullptr;
  const value_t* values_in = nullptr;
  value_t* values_out = nullptr;

  sort_calls(std::int64_t count, const gpu_request& request) : n(count), what(request.what) {
    options.descending = request.descending;
    options.begin_bit = request.begin_bit;
    options.end_bit = request.end_bit;
  }

  cudaError_t call_scanlab(radix_sort_algorithm algorithm, void* temp, std::size_t& bytes, cudaStream_t s) const {
    radix_sort_options o = options;
    o.algorithm = algorithm;
    if constexpr (!has_values) {
      return radix_sort_keys(temp, bytes, keys_in, keys_out, n, o, s);
    } else if (what == mode::argsort) {
      return radix_argsort(temp, bytes, keys_in, values_out, n, o, s, keys_out);
    } else {
      return radix_sort_pairs(temp, bytes, keys_in, keys_out, values_in, values_out, n, o, s);
    }
  }

  cudaError_t call_cub(void* temp, std::size_t& bytes, cudaStream_t s) const {
    const int begin = options.begin_bit;
    const int end = options.end_bit < 0 ? 8 * static_cast<int>(sizeof(Key)) : options.end_bit;
    if constexpr (has_values) {
      if (options.descending) {
        return cub::DeviceRadixSort::SortPairsDescending(temp, bytes, keys_in, keys_out, values_in, values_out, n,
                                                         begin, end, s);
      }
      return cub::DeviceRadixSort::SortPairs(temp, bytes, keys_in, keys_out, values_in, values_out, n, begin, end, s);
    } else {
      if (options.descending) {
        return cub::DeviceRadixSort::SortKeysDescending(temp, bytes, keys_in, keys_out, n, begin, end, s);
      }
      return cub::DeviceRadixSort::SortKeys(temp, bytes, keys_in, keys_out, n, begin, end, s);
    }
  }

  cudaError_t call_scanlab_match(void* temp, std::size_t& bytes, cudaStream_t s) const {
    radix_sort_options o = options;
    o.algorithm = radix_sort_algorithm::onesweep;  // a policy tunes onesweep only
    return radix_sort_keys<match_policy>(temp, bytes, keys_in, keys_out, n, o, s);
  }

  // Temp storage for everything `request` runs: both algorithms, CUB with --validate or
  // --bench, the match variant with --bench (at least 1 byte).
  [[nodiscard]] std::size_t temp_bytes(const gpu_request& request) const {
    std::size_t most = 1;
    for (const auto algorithm : {radix_sort_algorithm::onesweep, radix_sort_algorithm::multipass}) {
      std::size_t bytes = 0;
      SCANLAB_CHECK(call_scanlab(algorithm, nullptr, bytes, nullptr));
      most = std::max(most, bytes);
    }
    if (request.validate || request.bench) {
      std::size_t bytes = 0;
      SCANLAB_CHECK(call_cub(nullptr, bytes, nullptr));
      most = std::max(most, bytes);
    }
    if constexpr (has_match_variant) {
      if (request.bench) {
        std::size_t bytes = 0;
        SCANLAB_CHECK(call_scanlab_match(nullptr, bytes, nullptr));
        most = std::max(most, bytes);
      }
    }
    return most;
  }

  // Device bytes of the in-memory path: keys in and out, values in and out (argsort: the
  // positions for CUB, and the permutation), the temp storage.
  [[nodiscard]] std::uint64_t device_bytes(const gpu_request& request) const {
    const std::uint64_t item = sizeof(Key) + (has_values ? sizeof(value_t) : 0);
    return 2 * static_cast<std::uint64_t>(n) * item + temp_bytes(request);
  }
};

// The device arrays of one sort, and its calls on them.
template <class Key, class Value>
class sorter {
 public:
  using calls_t = sort_calls<Key, Value>;
  static constexpr bool has_values = calls_t::has_values;
  static constexpr bool has_match_variant = calls_t::has_match_variant;
  using value_t = typename calls_t::value_t;

  sorter(std::span<const Key> keys, std::span<const value_t> values, const gpu_request& request)
      : keys_in_(keys), keys_out_(static_cast<std::int64_t>(keys.size())),
        calls_(static_cast<std::int64_t>(keys.size()), request) {
    const std::int64_t n = calls_.n;
    if constexpr (has_values) {
      values_out_ = device_buffer<value_t>(n);
      if (request.what == mode::argsort) {
        values_in_ = device_buffer<value_t>(n);  // 0..n-1, for CUB
        if (n > 0) {
          iota_kernel<<<1024, 256>>>(values_in_.data(), n);
          SCANLAB_CHECK_LAUNCH();
        }
      } else {
        values_in_ = device_buffer<value_t>(values);
      }
      calls_.values_in = values_in_.data();
      calls_.values_out = values_out_.data();
    }
    calls_.keys_in = keys_in_.data();
    calls_.keys_out = keys_out_.data();
    temp_bytes_ = calls_.temp_bytes(request);
    temp_ = device_buffer<unsigned char>(static_cast<std::int64_t>(temp_bytes_));
  }

  void scanlab(radix_sort_algorithm algorithm, cudaStream_t s) {
    SCANLAB_CHECK(calls_.call_scanlab(algorithm, temp_.data(), temp_bytes_, s));
  }
  void scanlab_match(cudaStream_t s) {
    if constexpr (has_match_variant) SCANLAB_CHECK(calls_.call_scanlab_match(temp_.data(), temp_bytes_, s));
  }
  void cub(cudaStream_t s) { SCANLAB_CHECK(calls_.call_cub(temp_.data(), temp_bytes_, s)); }

  // thrust sorts in place: the input is copied to the output buffer first.
  void copy_input(cudaStream_t s) {
    if (calls_.n > 0) {
      SCANLAB_CHECK(cudaMemcpyAsync(keys_out_.data(), keys_in_.data(), keys_in_.bytes(), cudaMemcpyDeviceToDevice, s));
    }
  }
  void thrust_sort(cudaStream_t s) {
    copy_input(s);
    Key* first = keys_out_.data();
    if (calls_.options.descending) {
      thrust::sort(thrust::cuda::par.on(s), first, first + calls_.n, thrust::greater<Key>());
    } else {
      thrust::sort(thrust::cuda::par.on(s), first, first + calls_.n);
    }
  }

  std::vector<Key> keys() const {
    SCANLAB_CHECK(cudaDeviceSynchronize());
    return keys_out_.to_host();
  }
  std::vector<value_t> values() const {
    SCANLAB_CHECK(cudaDeviceSynchronize());
    return values_out_.to_host();
  }
  [[nodiscard]] std::int64_t n() const { return calls_.n; }

 private:
  device_buffer<Key> keys_in_;
  device_buffer<Key> keys_out_;
  device_buffer<value_t> values_in_;
  device_buffer<value_t> values_out_;
  calls_t calls_;
  device_buffer<unsigned char> temp_;
  std::size_t temp_bytes_ = 0;
};

template <class T>
std::vector<T> gather(std::span<const T> v, const std::vector<std::int64_t>& order) {
  std::vector<T> out(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) out[i] = v[static_cast<std::size_t>(order[i])];
  return out;
}

// The sorted keys (and values) against the CPU's stable sort of the input (the in-memory and
// the streaming paths' check): the keys bit for bit; the values as the input's values gathered
// in that order, or, with `values` empty (they were the positions 0..n-1: argsort, and the
// streaming path's --pairs without --values, sorted in place), as the permutation itself.
template <class Key, class Value>
std::vector<check> check_cpu(std::span<const Key> keys, std::span<const value_or_byte<Value>> values,
                             std::span<const Key> sorted_keys, std::span<const value_or_byte<Value>> sorted_values,
                             const gpu_request& request) {
  const auto order = reference_permutation(keys, request);
  const std::string cpu = "CPU std::stable_sort";
  std::vector<check> checks{compare(cpu, "keys", first_difference(sorted_keys, gather(keys, order)))};
  if constexpr (!std::is_void_v<Value>) {
    const std::string what = request.what == mode::argsort ? "permutation" : "values";
    if (values.empty()) {
      const std::vector<Value> permutation(order.begin(), order.end());
      checks.push_back(compare(cpu, what, first_difference(sorted_values, permutation)));
    } else {
      checks.push_back(compare(cpu, what, first_difference(sorted_values, gather(values, order))));
    }
  }
  return checks;
}

inline const char* mode_name(mode m) {
  switch (m) {
    case mode::keys: return "sort keys";
    case mode::pairs: return "sort pairs";
    case mode::argsort: return "argsort";
  }
  return "?";
}

template <class Key, class Value>
gpu_result run(std::span<const Key> keys, std::span<const value_or_byte<Value>> values, const gpu_request& request,
               io::dtype value_type) {
  using sorter_t = sorter<Key, Value>;
  using value_t = typename sorter_t::value_t;
  constexpr bool has_values = sorter_t::has_values;
  const bool is_argsort = request.what == mode::argsort;
  sorter_t s(keys, values, request);
  const std::int64_t n = s.n();
  const auto algorithm = request.multipass ? radix_sort_algorithm::multipass : radix_sort_algorithm::onesweep;
  gpu_result result;

  // The requested sort, once warm, timed with events (one run; --bench for medians).
  s.scanlab(algorithm, nullptr);
  {
    event_timer timer;
    timer.start();
    s.scanlab(algorithm, nullptr);
    result.sort_ms = timer.stop_ms();
  }
  std::vector<Key> sorted_keys;
  std::vector<value_t> sorted_values;
  if (request.want_output || request.validate) {
    sorted_keys = s.keys();
    if constexpr (has_values) sorted_values = s.values();
  }
  if (request.want_output) {
    result.keys = io::host_array(io::dtype_of<Key>(), {n});
    if (n > 0) std::memcpy(result.keys.data(), sorted_keys.data(), static_cast<std::size_t>(n) * sizeof(Key));
    if constexpr (has_values) {
      result.values = io::host_array(is_argsort ? io::dtype::i64 : value_type, {n});
      if (n > 0) std::memcpy(result.values->data(), sorted_values.data(), static_cast<std::size_t>(n) * sizeof(value_t));
    }
  }

  if (request.validate) {
    result.checks = check_cpu<Key, Value>(keys, values, sorted_keys, sorted_values, request);
    if (cub_order_matches(keys)) {
      s.cub(nullptr);
      const auto cub_keys = s.keys();
      result.checks.push_back(compare("CUB DeviceRadixSort", "keys", first_difference(sorted_keys, cub_keys)));
      if constexpr (has_values) {
        result.checks.push_back(compare("CUB DeviceRadixSort", is_argsort ? "permutation" : "values",
                                        first_difference(sorted_values, s.values())));
      }
    } else {
      result.skipped = "CUB: the keys hold NaNs, which CUB orders by their sign bit";
    }
  }

  if (request.bench) {
    bench::harness harness({.warmup = 3, .repeat = request.repeat});
    result.memcpy_gbps = harness.memcpy_gbps();
    const std::size_t value_bytes = has_values ? sizeof(value_t) : 0;
    const double bytes = 2.0 * static_cast<double>(n) * static_cast<double>(sizeof(Key) + value_bytes);
    const std::string type = std::string(io::name(io::dtype_of<Key>())) +
                             (has_values ? (is_argsort ? " -> int64" : " + " + std::string(io::name(value_type))) : "");
    const auto row = [&](const std::string& variant, const bench::timing& t) {
      bench::result r;
      r.suite = mode_name(request.what);
      r.variant = variant;
      r.type = type;
      r.dataset = request.dataset;
      r.n = n;
      r.bytes = bytes;
      r.time = t;
      return r;
    };
    // CUB's output is the reference each variant is checked against once.
    const bool comparable = cub_order_matches(keys);
    s.cub(nullptr);
    const std::vector<Key> cub_keys = s.keys();
    std::vector<value_t> cub_values;
    if constexpr (has_values) cub_values = s.values();
    const auto validation = [&]() -> std::string {
      if (!comparable) return "n/a (NaN)";
      if (first_difference(s.keys(), cub_keys) >= 0) return "FAIL: keys differ from CUB";
      if constexpr (has_values) {
        if (first_difference(s.values(), cub_values) >= 0) return "FAIL: values differ from CUB";
      }
      return "pass";
    };
    const bench::timing cub_time = harness.time([&](cudaStream_t st) { s.cub(st); });
    for (const auto& [a, label] : {std::pair{radix_sort_algorithm::onesweep, "scanlab onesweep"},
                                   std::pair{radix_sort_algorithm::multipass, "scanlab multipass"}}) {
      if (request.production_only && a != radix_sort_algorithm::onesweep) continue;
      const bench::timing t = harness.time([&](cudaStream_t st) { s.scanlab(a, st); });
      bench::result r = row(label, t);
      r.baseline_ms = cub_time.median_ms;
      r.validation = validation();
      result.rows.push_back(std::move(r));
    }
    if constexpr (sorter_t::has_match_variant) {
      if (!request.production_only) {
        const bench::timing t = harness.time([&](cudaStream_t st) { s.scanlab_match(st); });
        bench::result r = row("onesweep, match.any ranking", t);
        r.baseline_ms = cub_time.median_ms;
        r.validation = validation();
        result.rows.push_back(std::move(r));
      }
    }
    bench::result cub_row = row("cub", cub_time);
    cub_row.validation = "reference";
    result.rows.push_back(std::move(cub_row));
    const int end_bit = request.end_bit < 0 ? 8 * static_cast<int>(sizeof(Key)) : request.end_bit;
    if (!request.production_only && !has_values && request.begin_bit == 0 &&
        end_bit == 8 * static_cast<int>(sizeof(Key))) {
      // thrust::sort is in place: time copy + sort, subtract the copy.
      const bench::timing copy = harness.time([&](cudaStream_t st) { s.copy_input(st); });
      const bench::timing both = harness.time([&](cudaStream_t st) { s.thrust_sort(st); });
      bench::result r = row("thrust::sort", bench::minus(both, copy.median_ms));
      r.baseline_ms = cub_time.median_ms;
      result.rows.push_back(std::move(r));
    }
  }
  return result;
}

// The streaming path: scanlab::streaming::sort_keys / sort_pairs from the host arrays of `a`
// (the values, where there are any, in place when they are the positions), timed on the host
// (the call is host-synchronous), then checked against the CPU as the in-memory path is.
template <class Key, class Value>
gpu_result stream(stream_workspace& ws, const stream_arrays& a, const gpu_request& request,
                  const stream_progress& progress) {
  using value_t = value_or_byte<Value>;
  const auto n = static_cast<std::size_t>(a.n);
  const auto* keys_in = static_cast<const Key*>(a.keys_in);
  auto* keys_out = static_cast<Key*>(a.keys_out);
  const auto* values_in = static_cast<const value_t*>(a.values_in);
  auto* values_out = static_cast<value_t*>(a.values_out);
  streaming::sort_options options;
  if (progress) {
    options.progress_context = const_cast<stream_progress*>(&progress);
    options.on_progress = [](void* context, const streaming::sort_progress& p) {
      try {
        (*static_cast<const stream_progress*>(context))(p.pass, p.done, p.n, p.runs);
      } catch (...) {
        // A progress bar that fails to draw does not stop the sort.
      }
    };
  }
  gpu_result result;
  const auto start = std::chrono::steady_clock::now();
  cudaError_t status = cudaSuccess;
  if constexpr (std::is_void_v<Value>) {
    status = streaming::sort_keys(ws.workspace(), keys_in, keys_out, a.n, options);
  } else {
    status = streaming::sort_pairs(ws.workspace(), keys_in, values_in, keys_out, values_out, a.n, options);
  }
  if (status == cudaErrorInvalidValue) {  // the arrays are valid host arrays: the budget is what failed
    (void)cudaGetLastError();
    const std::size_t item_bytes = sizeof(Key) + (std::is_void_v<Value> ? 0 : sizeof(value_t));
    throw std::runtime_error("device memory budget of " + std::to_string(ws.device_bytes()) +
                             " bytes too small for the external sort of " + std::to_string(a.n) + " items of " +
                             std::to_string(item_bytes) +
                             " bytes (its merge needs about budget^2 >= 8 n item_bytes^2): give more --device-memory");
  }
  SCANLAB_CHECK(status);
  result.sort_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (request.validate) {
    const std::span<const value_t> given = a.positions || values_in == nullptr ? std::span<const value_t>()
                                                                               : std::span<const value_t>(values_in, n);
    const std::span<const value_t> sorted_values = values_out == nullptr ? std::span<const value_t>()
                                                                         : std::span<const value_t>(values_out, n);
    const std::span<const Key> in(keys_in, n), out(keys_out, n);
    // Beyond linear_check_items the std::stable_sort reference would take minutes: the
    // linear checks (sort_check.hpp) instead.
    result.checks = a.n > linear_check_items
                        ? linear_checks<Key, value_t>(in, given, out, sorted_values, a.positions)
                        : check_cpu<Key, Value>(in, given, out, sorted_values, request);
    result.skipped = "CUB: not run on the streaming path (CUB sorts device arrays only)";
  }
  return result;
}

// Calls f.template operator()<Value>() for values of `value_bytes` bytes: 0, keys only (void);
// 4 or 8, the values' bits (std::uint32_t, std::uint64_t).
template <class F>
decltype(auto) with_value_bits(std::size_t value_bytes, F&& f) {
  switch (value_bytes) {
    case 0: return f.template operator()<void>();
    case 4: return f.template operator()<std::uint32_t>();
    case 8: return f.template operator()<std::uint64_t>();
    default: break;
  }
  throw std::logic_error("sort: values must be 4 or 8 bytes wide");
}

// The in-memory path's value type: the permutation (std::int64_t) for argsort, else as above.
template <class F>
decltype(auto) with_sort_types(mode what, std::size_t value_bytes, F&& f) {
  if (what == mode::argsort) return f.template operator()<std::int64_t>();
  return with_value_bits(what == mode::keys ? 0 : value_bytes, std::forward<F>(f));
}

}  // namespace impl

template <class Key>
gpu_result run_typed(const io::host_array& keys, const io::host_array* values, const gpu_request& request) {
  if (request.what == mode::pairs && (values == nullptr || values->size() != keys.size())) {
    throw std::logic_error("sort: values missing or of another length");
  }
  const std::size_t width = request.what == mode::pairs ? io::size_of(values->type()) : 0;
  return impl::with_sort_types(request.what, width, [&]<class Value>() {
    std::span<const impl::value_or_byte<Value>> v;
    if (request.what == mode::pairs) {
      v = {reinterpret_cast<const impl::value_or_byte<Value>*>(values->data()), static_cast<std::size_t>(values->size())};
    }
    const io::dtype value_type = request.what == mode::pairs ? values->type() : io::dtype::i64;
    return impl::run<Key, Value>(keys.as<Key>(), v, request, value_type);
  });
}

template <class Key>
std::uint64_t in_memory_device_bytes(std::int64_t n, std::size_t value_bytes, const gpu_request& request) {
  return impl::with_sort_types(request.what, value_bytes, [&]<class Value>() {
    return impl::sort_calls<Key, Value>(n, request).device_bytes(request);
  });
}

template <class Key>
gpu_result stream_typed(stream_workspace& ws, const stream_arrays& arrays, const gpu_request& request,
                        const stream_progress& progress) {
  return impl::with_value_bits(arrays.value_bytes, [&]<class Value>() {
    return impl::stream<Key, Value>(ws, arrays, request, progress);
  });
}

}  // namespace scanlab::sort_app

// One key type's GPU side, in the translation unit of its width (sort_gpu_<bits>.cu).
#define SCANLAB_SORT_INSTANTIATE(Key)                                                                             \
  template scanlab::sort_app::gpu_result scanlab::sort_app::run_typed<Key>(                                     \
      const scanlab::io::host_array&, const scanlab::io::host_array*, const scanlab::sort_app::gpu_request&);   \
  template std::uint64_t scanlab::sort_app::in_memory_device_bytes<Key>(std::int64_t, std::size_t,              \
                                                                        const scanlab::sort_app::gpu_request&); \
  template scanlab::sort_app::gpu_result scanlab::sort_app::stream_typed<Key>(                                  \
      scanlab::stream_workspace&, const scanlab::sort_app::stream_arrays&,                                        \
      const scanlab::sort_app::gpu_request&, const scanlab::sort_app::stream_progress&);
