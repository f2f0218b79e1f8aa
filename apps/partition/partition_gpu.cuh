// scanlab-partition, GPU side: scanlab's two- and three-way partitions, their CPU references
// (std::partition, std::stable_partition) and CUB's DevicePartition::If on the same data.
// Included once per element type by partition_gpu_<type>.cu.
#pragma once

#include "partition/partition_gpu.hpp"

#include "common/device_buffer.hpp"

#include <scanlab/algorithms/partition.cuh>
#include <scanlab/error.hpp>

#include <cub/device/device_partition.cuh>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace scanlab::partition_app {

namespace detail {

template <class T>
struct less_than {
  T pivot;
  __host__ __device__ bool operator()(const T& x) const { return scanlab::nan_last_less{}(x, pivot); }
};
template <class T>
struct equivalent_to {
  T pivot;
  __host__ __device__ bool operator()(const T& x) const {
    return !scanlab::nan_last_less{}(x, pivot) && !scanlab::nan_last_less{}(pivot, x);
  }
};

// Bitwise equality (NaNs compare by their bits).
template <class T>
bool same(std::span<const T> a, std::span<const T> b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size_bytes()) == 0);
}
template <class T>
std::vector<T> reversed(std::span<const T> a) {
  return std::vector<T>(a.rbegin(), a.rend());
}
inline std::string counts_text(std::int64_t a, std::int64_t b) {
  return std::to_string(a) + " / " + std::to_string(b);
}

inline std::string type_name(io::dtype t) { return std::string(io::name(t)); }

}  // namespace detail

template <class T>
partition_report run_partition(const io::host_array& data, const io::host_array& pivot_array,
                               const partition_request& request) {
  const std::span<const T> h_in = data.as<T>();
  const T pivot = pivot_array.as<T>()[0];
  const std::int64_t n = data.size();
  const detail::less_than<T> pred{pivot};
  const detail::equivalent_to<T> equal_pred{pivot};

  device_buffer<T> d_in(h_in);
  device_buffer<T> d_out(std::max<std::int64_t>(n, 1));
  device_buffer<T> d_second(std::max<std::int64_t>(n, 1));  // partition_copy's rejected, CUB's parts
  device_buffer<T> d_third(std::max<std::int64_t>(n, 1));
  device_buffer<std::int64_t> d_counts(3);

  // One temp allocation for every call made here.
  std::size_t most = 1, bytes = 0;
  SCANLAB_CHECK(scanlab::partition(nullptr, bytes, d_in.data(), d_out.data(), d_counts.data(), n, pred));
  most = std::max(most, bytes);
  SCANLAB_CHECK(scanlab::partition_three_way(nullptr, bytes, static_cast<const T*>(d_in.data()), d_out.data(),
                                             d_counts.data(), n, pivot));
  most = std::max(most, bytes);
  if (request.validate || request.bench) {
    SCANLAB_CHECK(cub::DevicePartition::If(nullptr, bytes, d_in.data(), d_out.data(), d_counts.data(), n, pred));
    most = std::max(most, bytes);
    SCANLAB_CHECK(cub::DevicePartition::If(nullptr, bytes, d_in.data(), d_out.data(), d_second.data(),
                                           d_third.data(), d_counts.data(), n, pred, equal_pred));
    most = std::max(most, bytes);
  }
  // Tuning candidates, timed for uint32 only (--bench): tile shapes besides the default.
  using variant_a = scanlab::partition_policy<256, 16, 3>;
  using variant_b = scanlab::partition_policy<256, 24, 2>;
  using variant_c = scanlab::partition_policy<128, 16, 8>;  // the smallest tiles: the most temp storage
  using variant_d = scanlab::partition_policy<256, 16, 2, 1>;  // three-way's shape, L2 one tile further
  // Instantiated for uint32 alone (if constexpr): the shapes are checked against the GPU's
  // limits at compile time, and they do not all fit 8-byte elements (128 x 16 at 8 per SM).
  constexpr bool tune = std::is_same_v<T, std::uint32_t>;
  if constexpr (tune) {
    if (request.bench) {
      SCANLAB_CHECK(scanlab::partition<variant_c>(nullptr, bytes, d_in.data(), d_out.data(), d_counts.data(), n, pred));
      most = std::max(most, bytes);
      SCANLAB_CHECK(scanlab::partition_three_way<variant_c>(nullptr, bytes, static_cast<const T*>(d_in.data()),
                                                            d_out.data(), d_counts.data(), n, pivot));
      most = std::max(most, bytes);
    }
  }
  device_buffer<unsigned char> d_temp(static_cast<std::int64_t>(most));
  std::size_t temp_bytes = most;

  // The operations, each enqueued on a stream.
  const auto two_way = [&](cudaStream_t s, bool stable) {
    if (stable) {
      SCANLAB_CHECK(scanlab::stable_partition(d_temp.data(), temp_bytes, d_in.data(), d_out.data(), d_counts.data(),
                                              n, pred, s));
    } else {
      SCANLAB_CHECK(
          scanlab::partition(d_temp.data(), temp_bytes, d_in.data(), d_out.data(), d_counts.data(), n, pred, s));
    }
  };
  const auto two_outputs = [&](cudaStream_t s) {
    SCANLAB_CHECK(scanlab::partition_copy(d_temp.data(), temp_bytes, d_in.data(), d_out.data(), d_second.data(),
                                          d_counts.data(), n, pred, s));
  };
  const auto three_way = [&](cudaStream_t s, bool stable) {
    const T* in = d_in.data();
    if (stable) {
      SCANLAB_CHECK(scanlab::stable_partition_three_way(d_temp.data(), temp_bytes, in, d_out.data(), d_counts.data(),
                                                        n, pivot, scanlab::nan_last_less{}, s));
    } else {
      SCANLAB_CHECK(scanlab::partition_three_way(d_temp.data(), temp_bytes, in, d_out.data(), d_counts.data(), n,
                                                 pivot, scanlab::nan_last_less{}, s));
    }
  };
  const auto cub_two_way = [&](cudaStream_t s) {
    SCANLAB_CHECK(
        cub::DevicePartition::If(d_temp.data(), temp_bytes, d_in.data(), d_out.data(), d_counts.data(), n, pred, s));
  };
  const auto cub_three_way = [&](cudaStream_t s) {
    SCANLAB_CHECK(cub::DevicePartition::If(d_temp.data(), temp_bytes, d_in.data(), d_out.data(), d_second.data(),
                                           d_third.data(), d_counts.data(), n, pred, equal_pred, s));
  };
  const auto counts = [&] {
    SCANLAB_CHECK(cudaDeviceSynchronize());
    return d_counts.to_host();
  };
  const auto output = [&](std::int64_t count) {
    std::vector<T> all = d_out.to_host();
    all.resize(static_cast<std::size_t>(count));
    return all;
  };

  partition_report report;
  report.output = io::host_array(data.type(), {n});
  if (request.ways == 2) {
    two_way(nullptr, request.stable);
    const auto c = counts();
    report.counts[0] = c[0];
    report.counts[1] = n - c[0];
  } else {
    three_way(nullptr, request.stable);
    const auto c = counts();
    for (int i = 0; i < 3; ++i) report.counts[i] = c[static_cast<std::size_t>(i)];
  }
  const std::vector<T> result = output(n);
  if (n > 0) std::memcpy(report.output.data(), result.data(), static_cast<std::size_t>(n) * sizeof(T));

  if (request.validate) {
    // The CPU references: the parts in input order.
    std::vector<T> less, equal, greater;
    for (const T& x : h_in) {
      if (pred(x)) less.push_back(x);
      else if (equal_pred(x)) equal.push_back(x);
      else greater.push_back(x);
    }
    const std::span<const T> out(result);
    if (request.ways == 2) {
      std::vector<T> rest = equal;
      rest.insert(rest.end(), greater.begin(), greater.end());
      {
        std::vector<T> rest_in_order;  // std::stable_partition keeps the rejected in order
        std::vector<T> copy(h_in.begin(), h_in.end());
        const auto mid = std::stable_partition(copy.begin(), copy.end(), pred);
        const auto count = static_cast<std::int64_t>(mid - copy.begin());
        const std::span<const T> ref(copy);
        const bool ok = count == report.counts[0] && detail::same(out.first(count), ref.first(count)) &&
                        (request.stable ? detail::same(out.subspan(count), ref.subspan(count))
                                        : detail::same<T>(out.subspan(count), detail::reversed(ref.subspan(count))));
        report.checks.push_back({"std::stable_partition", ok,
                                 request.stable ? "same order of both parts"
                                                : "same selected order; the rest is its reverse (documented)"});
      }
      {
        std::vector<T> copy(h_in.begin(), h_in.end());
        const auto mid = std::partition(copy.begin(), copy.end(), pred);
        const auto count = static_cast<std::int64_t>(mid - copy.begin());
        bool ok = count == report.counts[0];
        for (std::int64_t i = 0; ok && i < n; ++i) ok = pred(result[static_cast<std::size_t>(i)]) == (i < count);
        report.checks.push_back({"std::partition", ok, "same count, every selected element before every other"});
      }
      cub_two_way(nullptr);
      const auto c = counts();
      std::vector<T> theirs = output(n);
      const std::span<const T> t(theirs);
      const std::int64_t count = c[0];
      const bool ok = count == report.counts[0] && detail::same(out.first(count), t.first(count)) &&
                      (request.stable ? detail::same<T>(out.subspan(count), detail::reversed(t.subspan(count)))
                                      : detail::same(out.subspan(count), t.subspan(count)));
      report.checks.push_back({"CUB DevicePartition::If", ok,
                               request.stable ? "same selected part; CUB's rest is ours reversed"
                                              : "identical output (same layout)"});
      // partition_copy: both parts in order, one pass.
      two_outputs(nullptr);
      const auto c2 = counts();
      const std::vector<T> sel = output(c2[0]);
      std::vector<T> rej = d_second.to_host();
      rej.resize(static_cast<std::size_t>(n - c2[0]));
      std::vector<T> ref_sel(h_in.size()), ref_rej(h_in.size());
      const auto ends = std::partition_copy(h_in.begin(), h_in.end(), ref_sel.begin(), ref_rej.begin(), pred);
      ref_sel.resize(static_cast<std::size_t>(ends.first - ref_sel.begin()));
      ref_rej.resize(static_cast<std::size_t>(ends.second - ref_rej.begin()));
      report.checks.push_back({"std::partition_copy (scanlab::partition_copy)",
                               detail::same<T>(sel, ref_sel) && detail::same<T>(rej, ref_rej),
                               "both outputs in input order"});
    } else {
      const auto L = static_cast<std::int64_t>(less.size());
      const auto E = static_cast<std::int64_t>(equal.size());
      const bool counts_ok = report.counts[0] == L && report.counts[1] == E &&
                             report.counts[2] == static_cast<std::int64_t>(greater.size());
      const bool ok = counts_ok && detail::same<T>(out.first(L), less) && detail::same<T>(out.subspan(L, E), equal) &&
                      (request.stable ? detail::same<T>(out.subspan(L + E), greater)
                                      : detail::same<T>(out.subspan(L + E), detail::reversed<T>(greater)));
      report.checks.push_back({"std::stable_partition (twice)", ok,
                               request.stable ? "less, equal and greater in input order"
                                              : "less and equal in input order, greater reversed (documented)"});
      cub_three_way(nullptr);
      const auto c = counts();
      std::vector<T> first = d_out.to_host(), second = d_second.to_host(), third = d_third.to_host();
      first.resize(static_cast<std::size_t>(c[0]));
      second.resize(static_cast<std::size_t>(c[1]));
      third.resize(static_cast<std::size_t>(n - c[0] - c[1]));
      const bool greater_ok =
          detail::same<T>(third, greater) || detail::same<T>(third, detail::reversed<T>(greater));
      report.checks.push_back({"CUB DevicePartition::If (three-way)",
                               c[0] == L && c[1] == E && detail::same<T>(first, less) &&
                                   detail::same<T>(second, equal) && greater_ok,
                               "same counts and parts"});
    }
  }

  if (request.bench) {
    bench::harness harness({.warmup = 3, .repeat = request.repeat});
    report.memcpy_gbps = harness.memcpy_gbps();
    const double bytes_moved = 2.0 * static_cast<double>(n) * sizeof(T);
    const auto row = [&](const std::string& suite, const std::string& variant, const bench::timing& t,
                         std::optional<double> baseline) {
      bench::result r;
      r.suite = suite;
      r.variant = variant;
      r.type = detail::type_name(data.type());
      r.dataset = request.dataset;
      r.n = n;
      r.bytes = bytes_moved;
      r.time = t;
      r.baseline_ms = baseline;
      return r;
    };
    const bench::timing cub2 = harness.time(cub_two_way);
    report.rows.push_back(row("partition", "scanlab partition", harness.time([&](cudaStream_t s) { two_way(s, false); }),
                              cub2.median_ms));
    if (!request.production_only) {
      report.rows.push_back(row("partition", "scanlab stable_partition",
                                harness.time([&](cudaStream_t s) { two_way(s, true); }), cub2.median_ms));
      report.rows.push_back(row("partition", "scanlab partition_copy", harness.time(two_outputs), cub2.median_ms));
    }
    report.rows.push_back(row("partition", "cub DevicePartition::If", cub2, std::nullopt));
    const bench::timing cub3 = harness.time(cub_three_way);
    report.rows.push_back(row("partition3", "scanlab partition_three_way",
                              harness.time([&](cudaStream_t s) { three_way(s, false); }), cub3.median_ms));
    if (!request.production_only) {
      report.rows.push_back(row("partition3", "scanlab stable_partition_three_way",
                                harness.time([&](cudaStream_t s) { three_way(s, true); }), cub3.median_ms));
    }
    report.rows.push_back(row("partition3", "cub DevicePartition::If (3-way)", cub3, std::nullopt));
    if constexpr (tune) {
      const auto variant = [&]<class Policy>(const std::string& name) {
        const T* in = d_in.data();
        report.rows.push_back(row("partition", "scanlab partition " + name, harness.time([&](cudaStream_t s) {
          SCANLAB_CHECK(scanlab::partition<Policy>(d_temp.data(), temp_bytes, in, d_out.data(), d_counts.data(), n,
                                                   pred, s));
        }), cub2.median_ms));
        report.rows.push_back(row("partition3", "scanlab partition_three_way " + name, harness.time([&](cudaStream_t s) {
          SCANLAB_CHECK(scanlab::partition_three_way<Policy>(d_temp.data(), temp_bytes, in, d_out.data(),
                                                             d_counts.data(), n, pivot, scanlab::nan_last_less{}, s));
        }), cub3.median_ms));
      };
      if (!request.production_only) {
        variant.template operator()<variant_a>("256x16/3");
        variant.template operator()<variant_b>("256x24/2");
        variant.template operator()<variant_c>("128x16/8");
        variant.template operator()<variant_d>("256x16/2, L2 +1");
      }
    }
  }
  return report;
}

}  // namespace scanlab::partition_app
