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
#pragma once

#include "sort/sort_gpu.hpp"

#include "common/device_buffer.hpp"
#include "common/event_timer.hpp"

#include <scanlab/algorithms/radix_sort.cuh>
#include <scanlab/error.hpp>

#include <cub/device/device_radix_sort.cuh>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/sort.h>

#include <algorithm>
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

// The documented order on whole keys (NaN last and equal to NaN, -0.0 == +0.0), written
// independently of the library's bit transform.
template <class Key>
bool key_before(Key a, Key b, bool descending) {
  if constexpr (std::is_floating_point_v<Key>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return descending ? b < a : a < b;
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

template <class T>
std::int64_t first_difference(const std::vector<T>& got, const std::vector<T>& want) {
  const std::size_t n = std::min(got.size(), want.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0) return static_cast<std::int64_t>(i);
  }
  return got.size() == want.size() ? -1 : static_cast<std::int64_t>(n);
}

inline check compare(const std::string& against, const std::string& what, std::int64_t difference) {
  if (difference < 0) return {against, true, what + ": identical"};
  return {against, false, what + ": first difference at position " + std::to_string(difference)};
}

// Value: void (keys), std::uint32_t / std::uint64_t (pairs, the values' bits), std::int64_t (argsort).
template <class Key, class Value>
class sorter {
 public:
  static constexpr bool has_values = !std::is_void_v<Value>;
  using value_t = std::conditional_t<has_values, Value, unsigned char>;

  sorter(std::span<const Key> keys, std::span<const value_t> values, const gpu_request& request)
      : n_(static_cast<std::int64_t>(keys.size())), request_(request), keys_in_(keys), keys_out_(n_) {
    options_.descending = request.descending;
    options_.begin_bit = request.begin_bit;
    options_.end_bit = request.end_bit;
    if constexpr (has_values) {
      values_out_ = device_buffer<value_t>(n_);
      if (request.what == mode::argsort) {
        values_in_ = device_buffer<value_t>(n_);  // 0..n-1, for CUB
        if (n_ > 0) {
          iota_kernel<<<1024, 256>>>(values_in_.data(), n_);
          SCANLAB_CHECK_LAUNCH();
        }
      } else {
        values_in_ = device_buffer<value_t>(values);
      }
    }
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
    temp_bytes_ = most;
    temp_ = device_buffer<unsigned char>(static_cast<std::int64_t>(most));
  }

  cudaError_t call_scanlab(radix_sort_algorithm algorithm, void* temp, std::size_t& bytes, cudaStream_t s) {
    radix_sort_options o = options_;
    o.algorithm = algorithm;
    if constexpr (!has_values) {
      return radix_sort_keys(temp, bytes, keys_in_.data(), keys_out_.data(), n_, o, s);
    } else if (request_.what == mode::argsort) {
      return radix_argsort(temp, bytes, keys_in_.data(), values_out_.data(), n_, o, s, keys_out_.data());
    } else {
      return radix_sort_pairs(temp, bytes, keys_in_.data(), keys_out_.data(), values_in_.data(), values_out_.data(),
                              n_, o, s);
    }
  }

  cudaError_t call_cub(void* temp, std::size_t& bytes, cudaStream_t s) {
    const int begin = options_.begin_bit;
    const int end = options_.end_bit < 0 ? 8 * static_cast<int>(sizeof(Key)) : options_.end_bit;
    if constexpr (has_values) {
      if (options_.descending) {
        return cub::DeviceRadixSort::SortPairsDescending(temp, bytes, keys_in_.data(), keys_out_.data(),
                                                         values_in_.data(), values_out_.data(), n_, begin, end, s);
      }
      return cub::DeviceRadixSort::SortPairs(temp, bytes, keys_in_.data(), keys_out_.data(), values_in_.data(),
                                             values_out_.data(), n_, begin, end, s);
    } else {
      if (options_.descending) {
        return cub::DeviceRadixSort::SortKeysDescending(temp, bytes, keys_in_.data(), keys_out_.data(), n_, begin,
                                                        end, s);
      }
      return cub::DeviceRadixSort::SortKeys(temp, bytes, keys_in_.data(), keys_out_.data(), n_, begin, end, s);
    }
  }

  void scanlab(radix_sort_algorithm algorithm, cudaStream_t s) {
    SCANLAB_CHECK(call_scanlab(algorithm, temp_.data(), temp_bytes_, s));
  }
  // A tuning variant, benchmarked for uint32 keys only: onesweep ranking with one
  // match.any per key instead of the default eight ballots.
  struct match_policy : radix_sort_policy<4> {
    static constexpr auto ranking = radix_sort_ranking::match;
  };
  static constexpr bool has_match_variant = std::is_same_v<Key, std::uint32_t> && !has_values;
  cudaError_t call_scanlab_match(void* temp, std::size_t& bytes, cudaStream_t s) {
    radix_sort_options o = options_;
    o.algorithm = radix_sort_algorithm::onesweep;  // a policy tunes onesweep only
    return radix_sort_keys<match_policy>(temp, bytes, keys_in_.data(), keys_out_.data(), n_, o, s);
  }
  void scanlab_match(cudaStream_t s) {
    if constexpr (has_match_variant) SCANLAB_CHECK(call_scanlab_match(temp_.data(), temp_bytes_, s));
  }
  void cub(cudaStream_t s) { SCANLAB_CHECK(call_cub(temp_.data(), temp_bytes_, s)); }

  // thrust sorts in place: the input is copied to the output buffer first.
  void copy_input(cudaStream_t s) {
    if (n_ > 0) {
      SCANLAB_CHECK(cudaMemcpyAsync(keys_out_.data(), keys_in_.data(), keys_in_.bytes(), cudaMemcpyDeviceToDevice, s));
    }
  }
  void thrust_sort(cudaStream_t s) {
    copy_input(s);
    Key* first = keys_out_.data();
    if (options_.descending) {
      thrust::sort(thrust::cuda::par.on(s), first, first + n_, thrust::greater<Key>());
    } else {
      thrust::sort(thrust::cuda::par.on(s), first, first + n_);
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
  [[nodiscard]] std::int64_t n() const { return n_; }

 private:
  std::int64_t n_;
  gpu_request request_;
  radix_sort_options options_;
  device_buffer<Key> keys_in_;
  device_buffer<Key> keys_out_;
  device_buffer<value_t> values_in_;
  device_buffer<value_t> values_out_;
  device_buffer<unsigned char> temp_;
  std::size_t temp_bytes_ = 0;
};

template <class T>
std::vector<T> gather(std::span<const T> v, const std::vector<std::int64_t>& order) {
  std::vector<T> out(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) out[i] = v[static_cast<std::size_t>(order[i])];
  return out;
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
gpu_result run(std::span<const Key> keys, std::span<const std::conditional_t<std::is_void_v<Value>, unsigned char, Value>> values,
               const gpu_request& request, io::dtype value_type) {
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
    const auto order = reference_permutation(keys, request);
    const std::string cpu = "CPU std::stable_sort";
    result.checks.push_back(compare(cpu, "keys", first_difference(sorted_keys, gather(keys, order))));
    if constexpr (has_values) {
      if (is_argsort) {
        std::vector<value_t> permutation(order.begin(), order.end());
        result.checks.push_back(compare(cpu, "permutation", first_difference(sorted_values, permutation)));
      } else {
        result.checks.push_back(compare(cpu, "values", first_difference(sorted_values, gather(values, order))));
      }
    }
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

}  // namespace impl

template <class Key>
gpu_result run_typed(const io::host_array& keys, const io::host_array* values, const gpu_request& request) {
  const std::span<const Key> k = keys.as<Key>();
  switch (request.what) {
    case mode::keys: return impl::run<Key, void>(k, {}, request, io::dtype::u8);
    case mode::argsort: return impl::run<Key, std::int64_t>(k, {}, request, io::dtype::i64);
    case mode::pairs: {
      if (values == nullptr || values->size() != keys.size()) throw std::logic_error("sort: values missing or of another length");
      const std::size_t width = io::size_of(values->type());
      const auto n = static_cast<std::size_t>(values->size());
      if (width == 4) {
        const std::span<const std::uint32_t> v(reinterpret_cast<const std::uint32_t*>(values->data()), n);
        return impl::run<Key, std::uint32_t>(k, v, request, values->type());
      }
      if (width == 8) {
        const std::span<const std::uint64_t> v(reinterpret_cast<const std::uint64_t*>(values->data()), n);
        return impl::run<Key, std::uint64_t>(k, v, request, values->type());
      }
      throw std::logic_error("sort: values must be 4 or 8 bytes wide");
    }
  }
  throw std::logic_error("sort: bad mode");
}

}  // namespace scanlab::sort_app
