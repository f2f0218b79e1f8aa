// scanlab-quicksort, GPU side: scanlab's quicksort, std::sort, CUB's merge sort (the
// comparison-sort baseline), CUB's radix sort and thrust::sort on the same keys. Included
// once per key type by quicksort_gpu_<type>.cu.
#pragma once

#include "quicksort/quicksort_gpu.hpp"

#include "common/device_buffer.hpp"

#include <scanlab/algorithms/quicksort.cuh>
#include <scanlab/error.hpp>

#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/sort.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace scanlab::quicksort_app {

// --order abs-desc: descending by absolute value, NaNs last (-x and x are equivalent). A
// user-defined comparator: what a comparison sort offers and a radix sort cannot.
struct abs_greater {
  template <class T>
  __host__ __device__ bool operator()(const T& a, const T& b) const {
    const bool a_nan = a != a;
    const bool b_nan = b != b;
    if (a_nan || b_nan) return !a_nan && b_nan;
    const T abs_a = a < T(0) ? -a : a;
    const T abs_b = b < T(0) ? -b : b;
    return abs_a > abs_b;
  }
};

namespace sort_check {

template <class T, class Comp>
bool equivalent(const T& a, const T& b, Comp comp) {
  return !comp(a, b) && !comp(b, a);
}

// Positions where a and b hold keys that are not equivalent under comp: 0 means the same
// sorted order.
template <class T, class Comp>
std::int64_t mismatches(std::span<const T> a, std::span<const T> b, std::int64_t& first, Comp comp) {
  std::int64_t count = 0;
  first = -1;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!equivalent(a[i], b[i], comp)) {
      if (first < 0) first = static_cast<std::int64_t>(i);
      ++count;
    }
  }
  return count;
}

// The same multiset of bit patterns (so no key was lost, duplicated or altered).
template <class T>
bool same_bits_multiset(std::span<const T> a, std::span<const T> b) {
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  std::vector<U> x(a.size()), y(b.size());
  if (a.size() != b.size()) return false;
  if (!a.empty()) {
    std::memcpy(x.data(), a.data(), a.size_bytes());
    std::memcpy(y.data(), b.data(), b.size_bytes());
  }
  std::sort(x.begin(), x.end());
  std::sort(y.begin(), y.end());
  return x == y;
}

}  // namespace sort_check

// The sort with positions of type I as values (with request.pairs): uint32 while every
// position fits (n <= 2^32: four-byte values, the larger leaves), else int64; under the order
// comp. CUB and thrust are compared with the uint32 form only (past 2^32 pairs a sort needs
// more than 80 GB anyway; instantiating them for int64 would double the build of these
// files); CUB's radix sort and thrust::sort under the default order only (they take no
// comparator here), CUB's merge sort under every order.
template <class T, class I, class Comp>
sort_report run_quicksort_with(const io::host_array& data, const sort_request& request, Comp comp) {
  constexpr bool compare_others = std::is_same_v<I, std::uint32_t>;
  constexpr bool default_order = std::is_same_v<Comp, scanlab::nan_last_less>;
  constexpr bool compare_radix = compare_others && default_order;
  const std::span<const T> h_in = data.as<T>();
  const std::int64_t n = data.size();
  const std::int64_t alloc = std::max<std::int64_t>(n, 1);
  scanlab::quicksort_options options{.leaf_items = request.leaf, .bitonic_leaves = false};
  options.seed = request.sort_seed;
  options.level_budget = request.level_budget;
  options.fixed_sampling = request.fixed_sampling;

  device_buffer<T> d_in(h_in);
  device_buffer<T> d_out(alloc);
  device_buffer<I> d_index;
  device_buffer<I> d_index_out;
  if (request.pairs) {
    std::vector<I> index(static_cast<std::size_t>(n));
    std::iota(index.begin(), index.end(), I{0});
    d_index = device_buffer<I>(std::span<const I>(index));
    d_index_out = device_buffer<I>(alloc);
  }
  const bool others = compare_others && (request.validate || request.bench);
  const bool radix = compare_radix && (request.validate || request.bench);
  device_buffer<T> d_merge_out(others ? alloc : 1);
  device_buffer<I> d_merge_index_out(others && request.pairs ? alloc : 1);
  device_buffer<T> d_cub_out(radix ? alloc : 1);
  device_buffer<I> d_cub_index_out(radix && request.pairs ? alloc : 1);
  device_buffer<T> d_thrust(radix && request.bench ? alloc : 1);
  device_buffer<I> d_thrust_index(radix && request.bench && request.pairs ? alloc : 1);

  // The calls, each with (temp, bytes, stream): a null temp asks for the size.
  const auto quicksort_call = [&](void* temp, std::size_t& bytes, cudaStream_t s, const scanlab::quicksort_options& o) {
    if (request.pairs) {
      SCANLAB_CHECK(scanlab::quicksort_pairs(temp, bytes, static_cast<const T*>(d_in.data()), d_out.data(),
                                             static_cast<const I*>(d_index.data()), d_index_out.data(), n, s, comp, o));
    } else {
      SCANLAB_CHECK(scanlab::quicksort(temp, bytes, static_cast<const T*>(d_in.data()), d_out.data(), n, s, comp, o));
    }
  };
  [[maybe_unused]] const auto merge_call = [&](void* temp, std::size_t& bytes, cudaStream_t s) {
    if constexpr (compare_others) {
      if (request.pairs) {
        SCANLAB_CHECK(cub::DeviceMergeSort::SortPairsCopy(temp, bytes, static_cast<const T*>(d_in.data()),
                                                          static_cast<const I*>(d_index.data()), d_merge_out.data(),
                                                          d_merge_index_out.data(), n, comp, s));
      } else {
        SCANLAB_CHECK(cub::DeviceMergeSort::SortKeysCopy(temp, bytes, static_cast<const T*>(d_in.data()),
                                                         d_merge_out.data(), n, comp, s));
      }
    }
  };
  [[maybe_unused]] const auto radix_call = [&](void* temp, std::size_t& bytes, cudaStream_t s) {
    if constexpr (compare_radix) {
      if (request.pairs) {
        SCANLAB_CHECK(cub::DeviceRadixSort::SortPairs(temp, bytes, d_in.data(), d_cub_out.data(), d_index.data(),
                                                      d_cub_index_out.data(), n, 0, static_cast<int>(sizeof(T) * 8),
                                                      s));
      } else {
        SCANLAB_CHECK(cub::DeviceRadixSort::SortKeys(temp, bytes, d_in.data(), d_cub_out.data(), n, 0,
                                                     static_cast<int>(sizeof(T) * 8), s));
      }
    }
  };

  // One temp allocation, the largest any of them asks for.
  std::size_t most = 1, bytes = 0;
  quicksort_call(nullptr, bytes, nullptr, options);
  most = std::max(most, bytes);
  if (others) {
    merge_call(nullptr, bytes, nullptr);
    most = std::max(most, bytes);
  }
  if (radix) {
    radix_call(nullptr, bytes, nullptr);
    most = std::max(most, bytes);
  }
  device_buffer<unsigned char> d_temp(static_cast<std::int64_t>(most));
  std::size_t temp_bytes = most;

  const auto sort_with = [&](cudaStream_t s, const scanlab::quicksort_options& o) {
    quicksort_call(d_temp.data(), temp_bytes, s, o);
  };
  const auto ours = [&](cudaStream_t s) { sort_with(s, options); };
  [[maybe_unused]] const auto merge_sort = [&](cudaStream_t s) { merge_call(d_temp.data(), temp_bytes, s); };
  [[maybe_unused]] const auto cub_sort = [&](cudaStream_t s) { radix_call(d_temp.data(), temp_bytes, s); };
  // thrust::sort sorts in place: each run copies the input first (timed with it; the copy
  // is about 4% of a sort's traffic, stated in the row's name).
  [[maybe_unused]] const auto thrust_sort = [&](cudaStream_t s) {
    if constexpr (compare_radix) {
      if (n == 0) return;
      SCANLAB_CHECK(cudaMemcpyAsync(d_thrust.data(), d_in.data(), d_in.bytes(), cudaMemcpyDeviceToDevice, s));
      const thrust::device_ptr<T> first(d_thrust.data());
      if (request.pairs) {
        SCANLAB_CHECK(
            cudaMemcpyAsync(d_thrust_index.data(), d_index.data(), d_index.bytes(), cudaMemcpyDeviceToDevice, s));
        thrust::sort_by_key(thrust::cuda::par.on(s), first, first + n, thrust::device_ptr<I>(d_thrust_index.data()));
      } else {
        thrust::sort(thrust::cuda::par.on(s), first, first + n);
      }
      SCANLAB_CHECK(cudaGetLastError());
    }
  };

  sort_report report;
  ours(nullptr);
  SCANLAB_CHECK(cudaDeviceSynchronize());
  const std::vector<T> sorted = d_out.to_host();
  report.keys = io::host_array(data.type(), {n});
  if (n > 0) std::memcpy(report.keys.data(), sorted.data(), static_cast<std::size_t>(n) * sizeof(T));
  std::vector<I> index_out;
  if (request.pairs) {
    index_out = d_index_out.to_host();
    index_out.resize(static_cast<std::size_t>(n));
    // The argsort as int64 whatever the device used: positions past 2^32 need it, and it is
    // what numpy.argsort gives.
    report.indices = io::host_array(io::dtype::i64, {n});
    const std::span<std::int64_t> positions = report.indices->as<std::int64_t>();
    for (std::size_t i = 0; i < index_out.size(); ++i) positions[i] = static_cast<std::int64_t>(index_out[i]);
  }
  const std::span<const T> got(sorted.data(), static_cast<std::size_t>(n));

  if (request.validate) {
    // std::sort with the same order.
    std::vector<T> ref(h_in.begin(), h_in.end());
    std::sort(ref.begin(), ref.end(), comp);
    std::int64_t first = -1;
    const std::int64_t bad = sort_check::mismatches<T>(got, ref, first, comp);
    const bool multiset = sort_check::same_bits_multiset<T>(got, h_in);
    report.checks.push_back({"std::sort", bad == 0 && multiset,
                             bad == 0 ? (multiset ? "same order; the same keys, bit for bit"
                                                  : "order matches but the keys differ bit-wise")
                                      : std::to_string(bad) + " positions differ, first at " + std::to_string(first)});
    if (request.pairs) {
      bool ok = true;
      std::vector<char> seen(static_cast<std::size_t>(n), 0);
      for (std::int64_t i = 0; ok && i < n; ++i) {
        const auto j = static_cast<std::uint64_t>(index_out[static_cast<std::size_t>(i)]);
        ok = j < static_cast<std::uint64_t>(n) && !seen[j] &&
             std::memcmp(&h_in[j], &sorted[static_cast<std::size_t>(i)], sizeof(T)) == 0;
        if (ok) seen[j] = 1;
      }
      report.checks.push_back({"pairs", ok, "values are a permutation and each travelled with its key"});
    }
    // A CUB sort's keys against ours: equivalent at every position.
    const auto against = [&](const char* name, device_buffer<T>& theirs_d, const auto& call, const char* why) {
      call(nullptr);
      SCANLAB_CHECK(cudaDeviceSynchronize());
      const std::vector<T> theirs = theirs_d.to_host();
      const std::int64_t differ =
          sort_check::mismatches<T>(got, std::span<const T>(theirs.data(), static_cast<std::size_t>(n)), first, comp);
      report.checks.push_back({name, differ == 0,
                               differ == 0 ? "same order (equivalent keys at every position)"
                                           : std::to_string(differ) + " positions differ, first at " +
                                                 std::to_string(first) + why});
    };
    if constexpr (compare_others) against("CUB DeviceMergeSort", d_merge_out, merge_sort, "");
    if constexpr (compare_radix) {
      against("CUB DeviceRadixSort", d_cub_out, cub_sort, " (CUB puts NaNs with the sign bit first)");
    }
  }

  if (request.bench) {
    bench::harness harness({.warmup = 2, .repeat = request.repeat});
    report.memcpy_gbps = harness.memcpy_gbps();
    const double item = static_cast<double>(sizeof(T)) + (request.pairs ? static_cast<double>(sizeof(I)) : 0.0);
    const std::string order = default_order ? "" : " (|x| descending)";
    const auto row = [&](const std::string& variant, const bench::timing& t, std::optional<double> baseline) {
      bench::result r;
      r.suite = (request.pairs ? "sort pairs" : "sort") + order;
      r.variant = variant;
      r.type = std::string(io::name(data.type())) + (request.pairs ? (compare_others ? " + u32" : " + i64") : "");
      r.dataset = request.dataset;
      r.n = n;
      r.bytes = 2.0 * item * static_cast<double>(n);  // one read and one write: the least a sort moves
      r.time = t;
      r.baseline_ms = baseline;
      return r;
    };
    // The baseline: CUB's merge sort, the comparison sort (the same comparator).
    std::optional<double> merge_ms;
    bench::timing merge_t{};
    if constexpr (compare_others) {
      merge_t = harness.time(merge_sort);
      merge_ms = merge_t.median_ms;
    }
    report.rows.push_back(row("scanlab quicksort", harness.time(ours), merge_ms));
    if constexpr (std::is_same_v<T, std::uint32_t> && default_order) {
      // The leaf sort the merge sort replaced (bitonic network), and the sort the level budget
      // falls back to (here for the whole input: budget 0), keys only, for comparison.
      if (!request.pairs && !request.production_only) {
        scanlab::quicksort_options bitonic = options;
        bitonic.bitonic_leaves = true;
        report.rows.push_back(
            row("scanlab quicksort (bitonic leaves)", harness.time([&](cudaStream_t s) { sort_with(s, bitonic); }),
                merge_ms));
        scanlab::quicksort_options merge_only = options;
        merge_only.level_budget = 0;
        report.rows.push_back(row("scanlab quicksort, level budget 0 (all merge sort)",
                                  harness.time([&](cudaStream_t s) { sort_with(s, merge_only); }), merge_ms));
      }
    }
    if constexpr (compare_others) report.rows.push_back(row("cub DeviceMergeSort", merge_t, std::nullopt));
    // CUB's radix sort: not a comparison sort, faster where it applies; its own ratio column
    // stays empty (the ratio is to the merge sort).
    if constexpr (compare_radix) {
      if (!request.production_only) report.rows.push_back(row("cub DeviceRadixSort", harness.time(cub_sort), std::nullopt));
    }
    if (!request.production_only) {
      // Where one sort's time goes (each step synchronised, so the parts add up to a little
      // more than the timed sort); one run, reported as rows without a ratio.
      scanlab::quicksort_profile profile;
      scanlab::quicksort_options profiled = options;
      profiled.profile = &profile;
      sort_with(nullptr, profiled);
      const auto part = [&](const std::string& what, double ms) {
        report.rows.push_back(row("  quicksort part: " + what, bench::from_samples({ms}, 0, false), std::nullopt));
      };
      part(std::to_string(profile.levels) + " partition levels", profile.levels_ms);
      part("planning the next level", profile.plan_ms);
      part("equal runs to the output", profile.copy_ms);
      part(std::to_string(profile.leaves) + " leaves sorted", profile.leaves_ms);
      if (profile.fallback_segments > 0) {
        part("merge sort past the level budget: " + std::to_string(profile.fallback_segments) + " segments, " +
                 std::to_string(profile.fallback_keys) + " keys, " + std::to_string(profile.merge_passes) + " passes",
             profile.fallback_ms);
      }
    }
    if constexpr (compare_radix) {
      if (!request.production_only)
        report.rows.push_back(row("thrust::sort (+ input copy)", harness.time(thrust_sort), merge_ms));
    }
    if (request.cpu_bench && !request.pairs) {
      std::vector<T> work(h_in.begin(), h_in.end());
      const auto start = std::chrono::steady_clock::now();
      std::sort(work.begin(), work.end(), comp);
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      report.rows.push_back(row("std::sort (CPU, 1 thread, 1 run)", bench::from_samples({ms}, 0, false), merge_ms));
    }
  }
  return report;
}

template <class T, class Comp>
sort_report run_quicksort_in(const io::host_array& data, const sort_request& request, Comp comp) {
  if (request.pairs && data.size() > (std::int64_t{1} << 32)) {
    return run_quicksort_with<T, std::int64_t>(data, request, comp);
  }
  return run_quicksort_with<T, std::uint32_t>(data, request, comp);
}

template <class T>
sort_report run_quicksort(const io::host_array& data, const sort_request& request) {
  if (request.order == sort_order::abs_descending) {
    if constexpr (std::is_floating_point_v<T>) {
      return run_quicksort_in<T>(data, request, abs_greater{});
    } else {
      throw std::invalid_argument("--order abs-desc sorts float32 and float64 keys");
    }
  }
  return run_quicksort_in<T>(data, request, scanlab::nan_last_less{});
}

}  // namespace scanlab::quicksort_app
