// scanlab-reduce, GPU side: scanlab's reduce / segmented_reduce / reduce by key and CUB's
// DeviceReduce / DeviceSegmentedReduce / DeviceReduce::ReduceByKey on the same device
// arrays, with the same operator and initial value. Included once per dtype by the
// generated reduce_gpu_<type>.cu (apps/reduce/CMakeLists.txt).
//
// Reduce by key has no single-pass primitive in scanlab: it is composed of two, the runs of
// equal keys (unique_by_key over (key, position): key_runs.cu) and segmented_reduce over the
// runs' bounds. segmented_reduce launches a block per segment, so the run count is read back
// to the host between the two (one synchronisation, inside the timed work of --bench too).
#pragma once

#include "reduce/key_runs.hpp"
#include "reduce/reduce_gpu.hpp"

#include "common/device_buffer.hpp"
#include "common/operators.cuh"

#include <scanlab/detail/util.cuh>
#include <scanlab/error.hpp>
#include <scanlab/functional.cuh>
#include <scanlab/iterator.cuh>
#include <scanlab/reduce.cuh>

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace scanlab::reduce_app {

namespace detail {

using ops::functor_t;
using ops::to_accumulator;

template <class Acc, class F>
Acc initial_value(const gpu_request& request) {
  return request.init ? request.init->as<Acc>()[0] : scanlab::identity<F, Acc>::value();
}

// The first `count` values of a device array, on the host.
template <class V>
io::host_array to_array(const V* d, std::int64_t count) {
  io::host_array out(io::dtype_of<V>(), {count});
  if (count > 0) {
    SCANLAB_CHECK(cudaMemcpy(out.as<V>().data(), d, static_cast<std::size_t>(count) * sizeof(V), cudaMemcpyDeviceToHost));
  }
  return out;
}

// --bench: scanlab's work timed against CUB's (its median the baseline), or alone where CUB
// has no call (cub empty). `bytes`: what a perfect reduction moves (declared per row).
template <class T, class Acc>
void bench_rows(gpu_report& report, const gpu_request& request, const std::string& suite, std::int64_t n,
                double bytes, const std::function<void(cudaStream_t)>& ours,
                const std::function<void(cudaStream_t)>& cub) {
  bench::harness harness({.warmup = 3, .repeat = request.repeat});
  report.memcpy_gbps = harness.memcpy_gbps();
  const auto row = [&](const std::string& variant, const bench::timing& t) {
    bench::result r;
    r.suite = suite;
    r.variant = variant;
    r.type = std::string(io::name(io::dtype_of<T>())) +
             (std::is_same_v<T, Acc> ? "" : " -> " + std::string(io::name(io::dtype_of<Acc>())));
    r.dataset = request.dataset;
    r.n = n;
    r.bytes = bytes;
    r.bound = bench::ceiling::read;  // a read-only job (the results are few, or as few as the runs)
    r.time = t;
    return r;
  };
  if (!cub) {
    report.rows.push_back(row("scanlab", harness.time(ours)));
    return;
  }
  const bench::timing cub_time = harness.time(cub);
  bench::result mine = row("scanlab", harness.time(ours));
  mine.baseline_ms = cub_time.median_ms;
  report.rows.push_back(std::move(mine));
  report.rows.push_back(row("cub", cub_time));
}

// The whole input, or segments by offsets.
template <class T, reduce_op Op>
gpu_report run(const io::host_array& x, std::span<const std::int64_t> offsets, const gpu_request& request) {
  using Acc = result_t<T, Op>;  // the accumulator too
  using F = functor_t<Op>;
  const F op{};
  const Acc init = initial_value<Acc, F>(request);
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

  gpu_report report;
  report.init = io::host_array(io::dtype_of<Acc>(), {1});
  report.init.as<Acc>()[0] = init;
  SCANLAB_CHECK(ours(d_temp.data(), most, nullptr));
  report.result = to_array(d_out.data(), segments);
  if (request.compare) {
    SCANLAB_CHECK(cub(d_temp.data(), most, nullptr));
    report.cub = to_array(d_cub.data(), segments);
  }
  report.cub_call = segmented ? "cub::DeviceSegmentedReduce::Reduce" : "cub::DeviceReduce::Reduce";

  if (request.bench) {
    // Read once (and the offsets), the results written once.
    const double moved = static_cast<double>(n) * sizeof(T) +
                         static_cast<double>(segments) * (sizeof(Acc) + (segmented ? 2 * sizeof(std::int64_t) : 0));
    bench_rows<T, Acc>(report, request, std::string(segmented ? "segmented " : "") + std::string(name(Op)), n, moved,
                       [&](cudaStream_t s) { SCANLAB_CHECK(ours(d_temp.data(), most, s)); },
                       [&](cudaStream_t s) { SCANLAB_CHECK(cub(d_temp.data(), most, s)); });
  }
  return report;
}

// Run r's bounds for segmented_reduce: starts[r] for r < runs, then n.
struct run_bound {
  const std::int64_t* starts;
  std::int64_t runs;
  std::int64_t n;
  __host__ __device__ std::int64_t operator()(std::int64_t r) const { return r < runs ? starts[r] : n; }
};

// One result per run of equal consecutive keys (K: uint32 or uint64 bits), as CUB's
// ReduceByKey; the initial value is folded into every run, as into every segment.
template <class T, reduce_op Op, class K>
gpu_report run_by_key(const io::host_array& x, const io::host_array& keys, const gpu_request& request) {
  using Acc = result_t<T, Op>;
  using F = functor_t<Op>;
  const F op{};
  const Acc init = initial_value<Acc, F>(request);
  const std::int64_t n = x.size();
  // CUB's ReduceByKey takes no initial value: it runs where ours is the identity, which
  // leaves every run's total as it is (-0.0 for float sums, so that -0.0 stays -0.0).
  const bool cub_has_call = !request.init.has_value();
  const bool with_cub = (request.compare || request.bench) && cub_has_call;

  // The data and the outputs (n runs at most).
  const device_buffer<T> d_in(x.as<T>());
  const device_buffer<K> d_keys(keys.as<K>());
  device_buffer<Acc> d_out(std::max<std::int64_t>(n, 1));
  device_buffer<K> d_run_keys(std::max<std::int64_t>(n, 1));
  device_buffer<Acc> d_cub(with_cub ? std::max<std::int64_t>(n, 1) : 1);
  device_buffer<K> d_cub_keys(with_cub ? std::max<std::int64_t>(n, 1) : 1);
  const T* in = d_in.data();
  const K* k = d_keys.data();

  const auto bounds_of = [&](const std::int64_t* starts, std::int64_t runs) {
    return scanlab::transform_iterator(scanlab::counting_iterator<std::int64_t>(0), run_bound{starts, runs, n});
  };
  const auto cub_in = thrust::make_transform_iterator(in, to_accumulator<Acc>{});
  const auto cub = [&](void* temp, std::size_t& bytes, std::int64_t* d_runs, cudaStream_t s) {
    return cub::DeviceReduce::ReduceByKey(temp, bytes, k, d_cub_keys.data(), cub_in, d_cub.data(), d_runs, op, n, s);
  };

  // Everything else in one workspace, sized up front: the temp storage every call shares,
  // the runs' starts, and the two run counts (scanlab's, CUB's).
  std::size_t temp_bytes = 1, bytes = 0;
  SCANLAB_CHECK(find_key_runs<K>(nullptr, bytes, k, nullptr, nullptr, nullptr, n, nullptr));
  temp_bytes = std::max(temp_bytes, bytes);
  SCANLAB_CHECK(scanlab::segmented_reduce(nullptr, bytes, in, d_out.data(), n, bounds_of(nullptr, 0), init, op, nullptr));
  temp_bytes = std::max(temp_bytes, bytes);
  if (with_cub) {
    SCANLAB_CHECK(cub(nullptr, bytes, nullptr, nullptr));
    temp_bytes = std::max(temp_bytes, bytes);
  }
  struct workspace {
    void* temp;
    std::int64_t* starts;
    std::int64_t* runs;
    std::int64_t* cub_runs;
  };
  const auto carve = [&](void* base, std::size_t& size) {
    scanlab::detail::temp_carver carver(base);
    const workspace w{carver.take<unsigned char>(temp_bytes), carver.take<std::int64_t>(static_cast<std::size_t>(n)),
                      carver.take<std::int64_t>(1), carver.take<std::int64_t>(1)};
    size = carver.bytes();
    return w;
  };
  std::size_t workspace_bytes = 0;
  carve(nullptr, workspace_bytes);
  device_buffer<unsigned char> d_workspace(static_cast<std::int64_t>(workspace_bytes));
  const workspace w = carve(d_workspace.data(), workspace_bytes);

  // A run count from the device (the one synchronisation of scanlab's reduce by key).
  const auto read_runs = [&](const std::int64_t* d_runs, cudaStream_t s, const char* whose) {
    std::int64_t runs = 0;
    SCANLAB_CHECK(cudaMemcpyAsync(&runs, d_runs, sizeof runs, cudaMemcpyDeviceToHost, s));
    SCANLAB_CHECK(cudaStreamSynchronize(s));
    if (runs < 0 || runs > n) {
      throw std::runtime_error(std::string(whose) + " found " + std::to_string(runs) + " runs in " + std::to_string(n) +
                               " keys");
    }
    return runs;
  };
  const auto ours = [&](cudaStream_t s) {
    std::size_t size = temp_bytes;
    SCANLAB_CHECK(find_key_runs<K>(w.temp, size, k, d_run_keys.data(), w.starts, w.runs, n, s));
    const std::int64_t runs = read_runs(w.runs, s, "scanlab's unique_by_key");
    SCANLAB_CHECK(scanlab::segmented_reduce(w.temp, size, in, d_out.data(), runs, bounds_of(w.starts, runs), init, op, s));
    return runs;
  };

  gpu_report report;
  report.init = io::host_array(io::dtype_of<Acc>(), {1});
  report.init.as<Acc>()[0] = init;
  const std::int64_t runs = ours(nullptr);
  SCANLAB_CHECK(cudaDeviceSynchronize());
  report.result = to_array(d_out.data(), runs);
  report.keys = to_array(d_run_keys.data(), runs);
  report.cub_call = cub_has_call ? "cub::DeviceReduce::ReduceByKey"
                                 : "none (cub::DeviceReduce::ReduceByKey takes no initial value)";
  if (request.compare && cub_has_call) {
    std::size_t size = temp_bytes;
    SCANLAB_CHECK(cub(w.temp, size, w.cub_runs, nullptr));
    const std::int64_t cub_runs = read_runs(w.cub_runs, nullptr, "cub::DeviceReduce::ReduceByKey");
    report.cub = to_array(d_cub.data(), cub_runs);
    report.cub_keys = to_array(d_cub_keys.data(), cub_runs);
  }

  if (request.bench) {
    // The values and keys read once, a result and a key written per run.
    const double moved = static_cast<double>(n) * static_cast<double>(sizeof(T) + sizeof(K)) +
                         static_cast<double>(runs) * static_cast<double>(sizeof(Acc) + sizeof(K));
    std::function<void(cudaStream_t)> cub_work;
    if (cub_has_call) {
      cub_work = [&](cudaStream_t s) {
        std::size_t size = temp_bytes;
        SCANLAB_CHECK(cub(w.temp, size, w.cub_runs, s));
      };
    }
    bench_rows<T, Acc>(report, request, std::string(name(Op)) + " by key", n, moved,
                       [&](cudaStream_t s) { ours(s); }, cub_work);
  }
  return report;
}

template <class T, reduce_op Op>
gpu_report run_segments(const io::host_array& x, const io::segments& segs, const gpu_request& request) {
  if (!segs.keys) return run<T, Op>(x, segs.offsets, request);
  if (segs.keys->type() == io::dtype::u64) return run_by_key<T, Op, std::uint64_t>(x, *segs.keys, request);
  return run_by_key<T, Op, std::uint32_t>(x, *segs.keys, request);
}

}  // namespace detail

template <class T>
gpu_report run_typed(const io::host_array& x, const io::segments& segs, const gpu_request& request) {
  switch (request.op) {
    case reduce_op::sum: return detail::run_segments<T, reduce_op::sum>(x, segs, request);
    case reduce_op::prod: return detail::run_segments<T, reduce_op::prod>(x, segs, request);
    case reduce_op::min: return detail::run_segments<T, reduce_op::min>(x, segs, request);
    case reduce_op::max: return detail::run_segments<T, reduce_op::max>(x, segs, request);
  }
  throw std::logic_error("bad reduce_op");
}

}  // namespace scanlab::reduce_app
