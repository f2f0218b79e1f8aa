// scanlab-reduce, GPU side: scanlab's reduce / segmented_reduce and CUB's DeviceReduce /
// DeviceSegmentedReduce on the same device arrays, with the same operator and initial value.
// Included once per dtype by the generated reduce_gpu_<type>.cu (apps/reduce/CMakeLists.txt).
#pragma once

#include "reduce/reduce_gpu.hpp"

#include "common/device_buffer.hpp"
#include "common/operators.cuh"

#include <scanlab/error.hpp>
#include <scanlab/functional.cuh>
#include <scanlab/reduce.cuh>

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>

namespace scanlab::reduce_app {

namespace detail {

using ops::functor_t;
using ops::to_accumulator;

template <class T, reduce_op Op>
gpu_report run(const io::host_array& x, std::span<const std::int64_t> offsets, const gpu_request& request) {
  using Acc = result_t<T, Op>;  // the accumulator too
  using F = functor_t<Op>;
  const F op{};
  const Acc init = request.init ? request.init->as<Acc>()[0] : scanlab::identity<F, Acc>::value();
  const std::int64_t n = x.size();
  const bool segmented = !offsets.empty();
  const std::int64_t segments = segmented ? static_cast<std::int64_t>(offsets.size()) - 1 : 1;

  const device_buffer<T> d_in(x.as<T>());
  const device_buffer<std::int64_t> d_offsets(offsets);
  device_buffer<Acc> d_out(std::max<std::int64_t>(segments, 1));
  device_buffer<Acc> d_cub(request.compare || request.bench ? std::max<std::int64_t>(segments, 1) : 1);
  const T* in = d_in.data();
  const std::int64_t* begin = d_offsets.data();
  const std::int64_t* end = segmented ? d_offsets.data() + 1 : nullptr;

  const auto ours = [&](void* temp, std::size_t& bytes, cudaStream_t s) {
    if (segmented) return scanlab::segmented_reduce(temp, bytes, in, d_out.data(), segments, begin, init, op, s);
    return scanlab::reduce(temp, bytes, in, d_out.data(), n, init, op, s);
  };
  const auto cub_in = thrust::make_transform_iterator(in, to_accumulator<Acc>{});
  const auto cub = [&](void* temp, std::size_t& bytes, cudaStream_t s) {
    if (segmented) {
      return cub::DeviceSegmentedReduce::Reduce(temp, bytes, cub_in, d_cub.data(), segments, begin, end, op, init, s);
    }
    return cub::DeviceReduce::Reduce(temp, bytes, cub_in, d_cub.data(), n, op, init, s);
  };

  // One temp allocation for every call made here.
  std::size_t most = 1, bytes = 0;
  SCANLAB_CHECK(ours(nullptr, bytes, nullptr));
  most = std::max(most, bytes);
  if (request.compare || request.bench) {
    SCANLAB_CHECK(cub(nullptr, bytes, nullptr));
    most = std::max(most, bytes);
  }
  device_buffer<unsigned char> d_temp(static_cast<std::int64_t>(most));

  const auto to_array = [&](const device_buffer<Acc>& d) {
    io::host_array out(io::dtype_of<Acc>(), {segments});
    const std::vector<Acc> values = d.to_host();
    std::copy_n(values.begin(), segments, out.as<Acc>().begin());
    return out;
  };

  gpu_report report;
  report.init = io::host_array(io::dtype_of<Acc>(), {1});
  report.init.as<Acc>()[0] = init;
  SCANLAB_CHECK(ours(d_temp.data(), most, nullptr));
  report.result = to_array(d_out);
  if (request.compare) {
    SCANLAB_CHECK(cub(d_temp.data(), most, nullptr));
    report.cub = to_array(d_cub);
  }
  report.cub_call = segmented ? "cub::DeviceSegmentedReduce::Reduce" : "cub::DeviceReduce::Reduce";

  if (request.bench) {
    bench::harness harness({.warmup = 3, .repeat = request.repeat});
    report.memcpy_gbps = harness.memcpy_gbps();
    const auto row = [&](const std::string& variant, const bench::timing& t) {
      bench::result r;
      r.suite = std::string(segmented ? "segmented " : "") + std::string(name(Op));
      r.variant = variant;
      r.type = std::string(io::name(io::dtype_of<T>())) +
               (std::is_same_v<T, Acc> ? "" : " -> " + std::string(io::name(io::dtype_of<Acc>())));
      r.dataset = request.dataset;
      r.n = n;
      // Read once (and the offsets), the results written once.
      r.bytes = static_cast<double>(n) * sizeof(T) +
                static_cast<double>(segments) * (sizeof(Acc) + (segmented ? 2 * sizeof(std::int64_t) : 0));
      r.bound = bench::ceiling::read;  // a read-only job
      r.time = t;
      return r;
    };
    const bench::timing cub_time = harness.time([&](cudaStream_t s) { SCANLAB_CHECK(cub(d_temp.data(), most, s)); });
    bench::result mine = row("scanlab", harness.time([&](cudaStream_t s) { SCANLAB_CHECK(ours(d_temp.data(), most, s)); }));
    mine.baseline_ms = cub_time.median_ms;
    report.rows.push_back(std::move(mine));
    report.rows.push_back(row("cub", cub_time));
  }
  return report;
}

}  // namespace detail

template <class T>
gpu_report run_typed(const io::host_array& x, std::span<const std::int64_t> offsets, const gpu_request& request) {
  switch (request.op) {
    case reduce_op::sum: return detail::run<T, reduce_op::sum>(x, offsets, request);
    case reduce_op::prod: return detail::run<T, reduce_op::prod>(x, offsets, request);
    case reduce_op::min: return detail::run<T, reduce_op::min>(x, offsets, request);
    case reduce_op::max: return detail::run<T, reduce_op::max>(x, offsets, request);
  }
  throw std::logic_error("bad reduce_op");
}

}  // namespace scanlab::reduce_app
