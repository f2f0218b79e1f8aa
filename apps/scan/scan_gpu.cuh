// scanlab-scan, GPU side: scanlab's scans (scan.cuh, segmented_scan.cuh) and CUB's DeviceScan
// (InclusiveScan, InclusiveScanInit, ExclusiveScan, InclusiveScanByKey, ExclusiveScanByKey)
// on the same device arrays, with the same operator and initial value. Included once per
// dtype by the generated scan_gpu_<type>.cu (apps/scan/CMakeLists.txt).
//
// CUB 3.0 has no scan by offsets (DeviceSegmentedScan came in CUB 3.3): for --offsets CUB
// runs its scan by key on segment ids made on the host (one per item, uint32 or uint64), so
// its row reads n keys that scanlab's does not.
#pragma once

#include "scan/scan_gpu.hpp"

#include "common/device_buffer.hpp"
#include "common/operators.cuh"

#include <scanlab/error.hpp>
#include <scanlab/functional.cuh>
#include <scanlab/scan.cuh>
#include <scanlab/segmented_scan.cuh>

#include <cub/device/device_scan.cuh>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace scanlab::scan_app {

namespace detail {

using ops::functor_t;
using ops::to_accumulator;

// One segment id per item from offsets (ids rise by one at every boundary): CUB's keys for
// --offsets.
template <class K>
std::vector<K> segment_ids(std::span<const std::int64_t> offsets, std::int64_t n) {
  std::vector<K> ids(static_cast<std::size_t>(n));
  std::size_t next = 0;
  K id = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    bool boundary = false;
    for (; next < offsets.size() && offsets[next] <= i; ++next) boundary = boundary || offsets[next] == i;
    if (boundary && i > 0) ++id;
    ids[static_cast<std::size_t>(i)] = id;
  }
  return ids;
}

template <class T, op_id Op, class K>
gpu_report run(const io::host_array& x, const segments& segs, const gpu_request& request) {
  using Acc = ops::result_t<T, Op>;
  using F = functor_t<Op>;
  const F op{};
  const std::int64_t n = x.size();
  const bool by_key = segs.keys.has_value();
  const bool by_offsets = !segs.offsets.empty();
  const std::int64_t num_segments = by_offsets ? static_cast<std::int64_t>(segs.offsets.size()) - 1 : 0;
  // The kind of scan: an inclusive scan without an initial value keeps to that where the
  // result is in the data's type; elsewhere the identity seeds it (exact: integers).
  constexpr bool in_type = std::is_same_v<Acc, T>;
  const bool has_init = request.exclusive || request.init.has_value() || !in_type;
  const Acc init = request.init ? request.init->as<Acc>()[0] : ops::identity<Acc>(Op);
  const bool with_cub = request.compare || request.bench;

  const device_buffer<T> d_in(x.as<T>());
  device_buffer<Acc> d_out(std::max<std::int64_t>(n, 1));
  device_buffer<Acc> d_cub(with_cub ? std::max<std::int64_t>(n, 1) : 1);
  device_buffer<K> d_keys;
  if (by_key) d_keys = device_buffer<K>(segs.keys->as<K>());
  const device_buffer<std::int64_t> d_offsets(std::span<const std::int64_t>(segs.offsets));
  if (by_offsets && with_cub) d_keys = device_buffer<K>(std::span<const K>(segment_ids<K>(segs.offsets, n)));
  const T* in = d_in.data();
  const K* keys = d_keys.data();
  const std::int64_t* offsets = d_offsets.data();

  // The forms without an initial value accumulate in T, so they are compiled only where the
  // result is in T (elsewhere has_init holds): no kernel that cannot run is built.
  const auto ours = [&](void* temp, std::size_t& bytes, cudaStream_t s) -> cudaError_t {
    Acc* out = d_out.data();
    if (by_key) {
      if (request.exclusive) return scanlab::exclusive_scan_by_key(temp, bytes, keys, in, out, n, init, op, s);
      if constexpr (in_type) {
        if (!has_init) return scanlab::inclusive_scan_by_key(temp, bytes, keys, in, out, n, op, s);
      }
      return scanlab::inclusive_scan_by_key_init(temp, bytes, keys, in, out, n, init, op, s);
    }
    if (by_offsets) {
      if (request.exclusive) {
        return scanlab::exclusive_segmented_scan(temp, bytes, in, out, n, num_segments, offsets, init, op, s);
      }
      if constexpr (in_type) {
        if (!has_init) return scanlab::inclusive_segmented_scan(temp, bytes, in, out, n, num_segments, offsets, op, s);
      }
      return scanlab::inclusive_segmented_scan_init(temp, bytes, in, out, n, num_segments, offsets, init, op, s);
    }
    if (request.exclusive) return scanlab::exclusive_scan(temp, bytes, in, out, n, init, op, s);
    if constexpr (in_type) {
      if (!has_init) return scanlab::inclusive_scan(temp, bytes, in, out, n, op, s);
    }
    return scanlab::inclusive_scan_init(temp, bytes, in, out, n, init, op, s);
  };

  // CUB: the input as Acc; an inclusive scan by key with a user's initial value has no CUB form.
  const bool cub_has_call = !(by_key || by_offsets) || request.exclusive || !request.init.has_value();
  const auto cub = [&](void* temp, std::size_t& bytes, cudaStream_t s) -> cudaError_t {
    Acc* out = d_cub.data();
    const auto call = [&](auto values) -> cudaError_t {
      if (by_key || by_offsets) {
        if (request.exclusive) return cub::DeviceScan::ExclusiveScanByKey(temp, bytes, keys, values, out, op, init, n, cuda::std::equal_to<>{}, s);
        return cub::DeviceScan::InclusiveScanByKey(temp, bytes, keys, values, out, op, n, cuda::std::equal_to<>{}, s);
      }
      if (request.exclusive) return cub::DeviceScan::ExclusiveScan(temp, bytes, values, out, op, init, n, s);
      if (request.init) return cub::DeviceScan::InclusiveScanInit(temp, bytes, values, out, op, init, n, s);
      return cub::DeviceScan::InclusiveScan(temp, bytes, values, out, op, n, s);
    };
    if constexpr (in_type) {
      return call(in);
    } else {
      return call(thrust::make_transform_iterator(in, to_accumulator<Acc>{}));
    }
  };

  // One temp allocation for every call made here.
  std::size_t most = 1, bytes = 0;
  SCANLAB_CHECK(ours(nullptr, bytes, nullptr));
  most = std::max(most, bytes);
  if (with_cub && cub_has_call) {
    SCANLAB_CHECK(cub(nullptr, bytes, nullptr));
    most = std::max(most, bytes);
  }
  device_buffer<unsigned char> d_temp(static_cast<std::int64_t>(most));

  const auto to_array = [&](const device_buffer<Acc>& d) {
    io::host_array out(io::dtype_of<Acc>(), {n});
    if (n > 0) {
      SCANLAB_CHECK(cudaMemcpy(out.as<Acc>().data(), d.data(), static_cast<std::size_t>(n) * sizeof(Acc),
                               cudaMemcpyDeviceToHost));
    }
    return out;
  };

  gpu_report report;
  if (has_init) {
    report.init = io::host_array(io::dtype_of<Acc>(), {1});
    report.init.as<Acc>()[0] = init;
  }
  SCANLAB_CHECK(ours(d_temp.data(), most, nullptr));
  SCANLAB_CHECK(cudaDeviceSynchronize());
  report.result = to_array(d_out);
  const std::string what = std::string(by_key || by_offsets ? (request.exclusive ? "ExclusiveScanByKey" : "InclusiveScanByKey")
                                                            : (request.exclusive ? "ExclusiveScan"
                                                               : request.init    ? "InclusiveScanInit"
                                                                                 : "InclusiveScan"));
  report.cub_call = cub_has_call ? "cub::DeviceScan::" + what + (by_offsets ? " (on segment ids)" : "")
                                 : "none (CUB has no inclusive scan by key with an initial value)";
  if (request.compare && cub_has_call) {
    SCANLAB_CHECK(cub(d_temp.data(), most, nullptr));
    SCANLAB_CHECK(cudaDeviceSynchronize());
    report.cub = to_array(d_cub);
  }

  if (request.bench) {
    bench::harness harness({.warmup = 3, .repeat = request.repeat});
    report.memcpy_gbps = harness.memcpy_gbps();
    const auto row = [&](const std::string& variant, const bench::timing& t) {
      bench::result r;
      r.suite = std::string(request.exclusive ? "exclusive " : "inclusive ") + std::string(ops::name(Op)) +
                (by_key ? " by key" : by_offsets ? " by offsets" : "");
      r.variant = variant;
      r.type = std::string(io::name(io::dtype_of<T>())) +
               (std::is_same_v<T, Acc> ? "" : " -> " + std::string(io::name(io::dtype_of<Acc>())));
      r.dataset = request.dataset;
      r.n = n;
      // The values read once and the results written once; the keys (or offsets) read once.
      r.bytes = static_cast<double>(n) * static_cast<double>(sizeof(T) + sizeof(Acc) + (by_key ? sizeof(K) : 0)) +
                static_cast<double>(segs.offsets.size() * sizeof(std::int64_t));
      r.time = t;
      return r;
    };
    bench::result mine =
        row("scanlab", harness.time([&](cudaStream_t s) { SCANLAB_CHECK(ours(d_temp.data(), most, s)); }));
    if (cub_has_call) {
      const bench::timing cub_time =
          harness.time([&](cudaStream_t s) { SCANLAB_CHECK(cub(d_temp.data(), most, s)); });
      mine.baseline_ms = cub_time.median_ms;
      report.rows.push_back(std::move(mine));
      report.rows.push_back(row(by_offsets ? "cub (segment ids)" : "cub", cub_time));
    } else {
      report.rows.push_back(std::move(mine));
    }
  }
  return report;
}

// The key type of the call: the keys' (uint32 or uint64), else segment ids for CUB, 32 bits
// where they fit.
template <class T, op_id Op>
gpu_report with_keys(const io::host_array& x, const segments& segs, const gpu_request& request) {
  const bool wide = segs.keys ? segs.keys->type() == io::dtype::u64
                              : static_cast<std::int64_t>(segs.offsets.size()) > (std::int64_t{1} << 32);
  if (wide) return run<T, Op, std::uint64_t>(x, segs, request);
  return run<T, Op, std::uint32_t>(x, segs, request);
}

}  // namespace detail

template <class T>
gpu_report run_typed(const io::host_array& x, const segments& segs, const gpu_request& request) {
  return ops::visit(request.op, [&]<op_id Op>() { return detail::with_keys<T, Op>(x, segs, request); });
}

}  // namespace scanlab::scan_app
