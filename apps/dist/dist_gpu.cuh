// scanlab-dist, GPU side: one job on the ranks (scanlab/distributed.cuh), the same job on one
// GPU with the single-GPU primitive (the reference of --validate and the baseline of
// --bench), and the weak-scaling benchmark. Included once per dtype by the generated
// dist_gpu_<type>.cu (apps/dist/CMakeLists.txt).
#pragma once

#include "dist/dist_gpu.hpp"
#include "dist/ranks.hpp"

#include "common/clocks.hpp"
#include "common/device_buffer.hpp"
#include "common/operators.cuh"
#include "common/values.hpp"

#include <scanlab/algorithms/radix_sort.cuh>
#include <scanlab/algorithms/select.cuh>
#include <scanlab/distributed.cuh>
#include <scanlab/error.hpp>
#include <scanlab/reduce.cuh>
#include <scanlab/scan.cuh>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace scanlab::dist_app {

namespace detail {

namespace dist = scanlab::distributed;

template <class T>
struct greater_than {
  T bound;
  __host__ __device__ bool operator()(const T& v) const { return v > bound; }
};

// f.template operator()<Op>() for the run-time operator.
template <class F>
decltype(auto) with_op(ops::op_id op, F&& f) {
  switch (op) {
    case ops::op_id::sum: return f.template operator()<ops::op_id::sum>();
    case ops::op_id::prod: return f.template operator()<ops::op_id::prod>();
    case ops::op_id::min: return f.template operator()<ops::op_id::min>();
    case ops::op_id::max: return f.template operator()<ops::op_id::max>();
  }
  throw std::logic_error("bad op");
}

// f(init, op) with the accumulator's identity and scanlab's functor for the run-time --op,
// accumulating in ops::result_t (reduce and scan).
template <class T, class F>
decltype(auto) with_accumulator(ops::op_id op, F&& f) {
  return with_op(op, [&]<ops::op_id Op>() {
    using Acc = ops::result_t<T, Op>;
    return f(ops::identity<Acc>(Op), ops::functor_t<Op>{});
  });
}

// The size of one output item.
template <class T>
std::size_t out_item_bytes(const request& r) {
  if (r.what == job::compact || r.what == job::sort) return sizeof(T);
  return with_op(r.op, [&]<ops::op_id Op>() { return sizeof(ops::result_t<T, Op>); });
}

// What the single-GPU primitives need between calls: temp storage (grown as needed) and
// the selected count of select_if.
struct single_gpu {
  device_buffer<std::byte> temp;
  device_buffer<std::int64_t> count{1};
};

// The job on d_in[0, n), results at d_out (room for n items, at least one); returns how many
// it wrote. With `comm`, this rank's share of the distributed job (scanlab/distributed.cuh);
// without, the single-GPU primitive on the current GPU (the reference and the baseline).
template <class T>
std::int64_t run_job(const request& r, const dist::communicator* comm, single_gpu* one, const T* d_in, std::int64_t n,
                     void* d_out, cudaStream_t stream, dist::sort_timing* timing = nullptr) {
  const auto local = [&](auto&& call) {  // the single-GPU two-phase call
    std::size_t bytes = 0;
    SCANLAB_CHECK(call(nullptr, bytes));
    if (static_cast<std::int64_t>(bytes) > one->temp.size()) one->temp = device_buffer<std::byte>(static_cast<std::int64_t>(bytes));
    SCANLAB_CHECK(call(one->temp.data(), bytes));
  };
  switch (r.what) {
    case job::reduce:
    case job::scan:
      return with_accumulator<T>(r.op, [&]<class Acc, class Op>(Acc init, Op op) -> std::int64_t {
        auto* out = static_cast<Acc*>(d_out);
        if (r.what == job::reduce) {
          if (comm) require(dist::reduce(*comm, d_in, n, out, init, op, stream), "distributed reduce");
          else local([&](void* t, std::size_t& b) { return scanlab::reduce(t, b, d_in, out, n, init, op, stream); });
          return 1;
        }
        if (r.exclusive) {
          if (comm) require(dist::exclusive_scan(*comm, d_in, out, n, init, op, stream), "distributed exclusive scan");
          else local([&](void* t, std::size_t& b) { return scanlab::exclusive_scan(t, b, d_in, out, n, init, op, stream); });
        } else {
          if (comm) require(dist::inclusive_scan_init(*comm, d_in, out, n, init, op, stream), "distributed inclusive scan");
          else local([&](void* t, std::size_t& b) { return scanlab::inclusive_scan_init(t, b, d_in, out, n, init, op, stream); });
        }
        return n;
      });
    case job::compact: {
      const greater_than<T> pred{static_cast<T>(r.greater_than)};
      auto* out = static_cast<T*>(d_out);
      if (comm) {
        dist::selection s;
        require(dist::select_if(*comm, d_in, n, out, pred, s, stream), "distributed select_if");
        return s.count;
      }
      local([&](void* t, std::size_t& b) { return scanlab::select_if(t, b, d_in, out, one->count.data(), n, pred, stream); });
      return one->count.to_host(stream)[0];
    }
    case job::sort:
      if (comm) require(dist::sort_keys(*comm, d_in, static_cast<T*>(d_out), n, stream, timing), "distributed sort");
      else local([&](void* t, std::size_t& b) { return scanlab::radix_sort_keys(t, b, d_in, static_cast<T*>(d_out), n, {}, stream); });
      return n;
  }
  return 0;
}

inline io::dtype out_dtype(io::dtype in, const request& r) {
  return (r.what == job::compact || r.what == job::sort) ? in : ops::result_dtype(in, r.op);
}

// Distributed result vs the single-GPU one: bit for bit, except float sums and products
// (other groupings): within n * eps * (the sum of |x|, or 1 for products, relative).
template <class T>
check compare(const request& r, const io::host_array& x, const io::host_array& got, const io::host_array& want) {
  check c;
  c.against = "the single-GPU scanlab result (GPU 0)";
  if (got.size() != want.size()) {
    c.detail = std::to_string(got.size()) + " items, the single GPU gave " + std::to_string(want.size());
    return c;
  }
  const auto item = got.bytes() / static_cast<std::size_t>(std::max<std::int64_t>(got.size(), 1));
  const bool approximate = (r.what == job::reduce || r.what == job::scan) &&
                           (r.op == ops::op_id::sum || r.op == ops::op_id::prod) && std::is_floating_point_v<T>;
  if (!approximate) {
    for (std::int64_t i = 0; i < got.size(); ++i) {
      if (std::memcmp(got.data() + i * item, want.data() + i * item, item) != 0) {
        c.detail = "first difference at item " + std::to_string(i) + ": " + std::string(io::text_of(got, i)) +
                   " vs " + std::string(io::text_of(want, i));
        return c;
      }
    }
    c.passed = true;
    c.max_error = 0;
    c.detail = std::to_string(got.size()) + " items, bit for bit";
    return c;
  }
  double scale = 0;
  for (const T v : x.as<T>()) scale += std::fabs(static_cast<double>(v));
  const auto g = got.as<T>();
  const auto w = want.as<T>();
  const double eps = std::numeric_limits<T>::epsilon();
  const double bound = static_cast<double>(x.size() + 1) * eps * (r.op == ops::op_id::sum ? scale : 1.0);
  double worst = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const double a = g[i], b = w[i];
    if (std::isnan(a) != std::isnan(b)) {
      c.detail = "item " + std::to_string(i) + ": NaN on one side only";
      return c;
    }
    if (std::isnan(a) || (std::isinf(a) && a == b)) continue;
    const double err = r.op == ops::op_id::sum ? std::fabs(a - b) : std::fabs(a - b) / std::max(std::fabs(b), 1e-300);
    worst = std::max(worst, err);
  }
  c.max_error = worst;
  c.passed = worst <= bound;
  c.detail = std::to_string(g.size()) + " items, largest difference " + std::to_string(worst) + " (bound " +
             std::to_string(bound) + ")";
  return c;
}

// The whole job on `gpus` ranks, the input cut evenly; results gathered in rank order.
template <class T>
io::host_array run_distributed(const request& r, const io::host_array& x, report& rep) {
  const auto comms = make_ranks(r.gpus);
  rep.pieces = dist::detail::balanced_counts(x.size(), r.gpus);
  const auto starts = dist::detail::exclusive_offsets(rep.pieces);
  const std::size_t item = out_item_bytes<T>(r);
  std::vector<std::vector<std::byte>> outs(comms.size());
  std::vector<std::int64_t> written(comms.size(), 0);
  on_ranks(comms, [&](int rank, const dist::communicator& comm) {
    const auto me = static_cast<std::size_t>(rank);
    const auto piece = x.as<T>().subspan(static_cast<std::size_t>(starts[me]), static_cast<std::size_t>(rep.pieces[me]));
    const device_buffer<T> d_in(piece);
    device_buffer<std::byte> d_out(static_cast<std::int64_t>(item) * std::max<std::int64_t>(rep.pieces[me], 1));
    written[me] = run_job<T>(r, &comm, nullptr, d_in.data(), d_in.size(), d_out.data(), nullptr);
    outs[me] = d_out.to_host();
    outs[me].resize(static_cast<std::size_t>(written[me]) * item);
  });
  // reduce: every rank holds the total; the output is rank 0's.
  const std::size_t keep = r.what == job::reduce ? 1 : comms.size();
  std::int64_t total = 0;
  for (std::size_t q = 0; q < keep; ++q) total += written[q];
  io::host_array out(out_dtype(x.type(), r), {total});
  std::size_t at = 0;
  for (std::size_t q = 0; q < keep; ++q) {
    std::memcpy(out.data() + at, outs[q].data(), outs[q].size());
    at += outs[q].size();
    rep.out_pieces.push_back(written[q]);
  }
  if (r.what == job::reduce) {
    for (std::size_t q = 1; q < comms.size(); ++q) {
      if (std::memcmp(outs[q].data(), outs[0].data(), item) != 0) {
        rep.checks.push_back({"every rank's total", false, "rank " + std::to_string(q) + " differs from rank 0", std::nullopt});
      }
    }
  }
  return out;
}

template <class T>
io::host_array run_on_one_gpu(const request& r, const io::host_array& x) {
  SCANLAB_CHECK(cudaSetDevice(0));
  const device_buffer<T> d_in(x.as<T>());
  const std::size_t item = out_item_bytes<T>(r);
  device_buffer<std::byte> d_out(static_cast<std::int64_t>(item) * std::max<std::int64_t>(x.size(), 1));
  single_gpu one;
  const std::int64_t written = run_job<T>(r, nullptr, &one, d_in.data(), d_in.size(), d_out.data(), nullptr);
  SCANLAB_CHECK(cudaDeviceSynchronize());
  auto bytes = d_out.to_host();
  io::host_array out(out_dtype(x.type(), r), {written});
  std::memcpy(out.data(), bytes.data(), static_cast<std::size_t>(written) * item);
  return out;
}

// Weak scaling: every rank's piece is the whole input (n items per GPU), for 1, 2, 4, ...
// ranks up to r.gpus, timed end to end on the host (all ranks start together; the time is
// until the last one is done), against the single-GPU primitive on n items.
template <class T>
void bench(const request& r, const io::host_array& x, report& rep) {
  using clock = std::chrono::steady_clock;
  const std::int64_t n = x.size();
  const std::size_t item = out_item_bytes<T>(r);
  const int repeat = std::max(r.repeat, 3);
  const auto bytes_per_rank = [&](std::int64_t written) {
    switch (r.what) {
      case job::reduce: return static_cast<double>(n) * sizeof(T);
      case job::scan: return static_cast<double>(n) * (sizeof(T) + item);
      case job::compact: return static_cast<double>(n + written) * sizeof(T);
      case job::sort: return 2.0 * static_cast<double>(n) * sizeof(T);
    }
    return 0.0;
  };
  // NVML readings of GPU 0 taken right after each timed call returns (work may still be in
  // flight): the clocks the rows report.
  const auto read_clocks = [](clocks::record& into) {
    if (into.sm_max_mhz == 0) into.sm_max_mhz = clocks::max_sm_mhz(0).value_or(0);
    if (const auto s = clocks::read(0)) into.samples.push_back(*s);
  };
  const auto row = [&](std::string variant, int ranks, std::vector<double> samples, std::int64_t written,
                       clocks::record clock_readings) {
    bench::result row;
    row.suite = "dist-" + std::string(name(r.what));
    row.variant = std::move(variant);
    row.type = std::string(io::name(x.type()));
    row.dataset = r.dataset;
    row.n = n * ranks;
    row.bytes = bytes_per_rank(written) * ranks;
    row.bound = r.what == job::reduce ? bench::ceiling::read : bench::ceiling::memcpy;
    row.time = bench::from_samples(std::move(samples), 1, false);
    row.time.clocks = std::move(clock_readings);
    return row;
  };

  // The single-GPU primitive on GPU 0.
  std::vector<double> samples;
  std::int64_t written = 0;
  clocks::record one_gpu_clocks;
  {
    SCANLAB_CHECK(cudaSetDevice(0));
    const device_buffer<T> d_in(x.as<T>());
    device_buffer<std::byte> d_out(static_cast<std::int64_t>(item) * std::max<std::int64_t>(n, 1));
    single_gpu one;
    for (int i = -1; i < repeat; ++i) {
      SCANLAB_CHECK(cudaDeviceSynchronize());
      const auto t0 = clock::now();
      written = run_job<T>(r, nullptr, &one, d_in.data(), n, d_out.data(), nullptr);
      if (i >= 0) read_clocks(one_gpu_clocks);
      SCANLAB_CHECK(cudaDeviceSynchronize());
      if (i >= 0) samples.push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
    }
  }
  rep.rows.push_back(row("one GPU (single-GPU primitive)", 1, samples, written, one_gpu_clocks));
  const double one_gpu_ms = rep.rows.back().time.median_ms;
  rep.rows.back().baseline_ms = one_gpu_ms;

  std::vector<int> counts;
  for (int g = 1; g < r.gpus; g *= 2) counts.push_back(g);
  counts.push_back(r.gpus);
  for (const int g : counts) {
    const auto comms = make_ranks(g);
    std::barrier sync(g);
    std::vector<double> ms;
    std::vector<dist::sort_timing> phases(static_cast<std::size_t>(g));
    std::int64_t rank0_written = 0;
    clock::time_point t0;
    clocks::record rank0_clocks;
    on_ranks(comms, [&](int rank, const dist::communicator& comm) {
      const device_buffer<T> d_in(x.as<T>());
      device_buffer<std::byte> d_out(static_cast<std::int64_t>(item) * std::max<std::int64_t>(n, 1));
      for (int i = -1; i < repeat; ++i) {
        SCANLAB_CHECK(cudaDeviceSynchronize());
        sync.arrive_and_wait();
        if (rank == 0) t0 = clock::now();
        const std::int64_t w = run_job<T>(r, &comm, nullptr, d_in.data(), n, d_out.data(), nullptr,
                                          r.what == job::sort ? &phases[static_cast<std::size_t>(rank)] : nullptr);
        if (rank == 0 && i >= 0) read_clocks(rank0_clocks);
        SCANLAB_CHECK(cudaDeviceSynchronize());
        sync.arrive_and_wait();
        if (rank == 0) {
          rank0_written = w;
          if (i >= 0) ms.push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
        }
      }
    });
    auto result = row(std::to_string(g) + (g == 1 ? " rank" : " ranks"), g, ms, rank0_written, rank0_clocks);
    result.baseline_ms = one_gpu_ms * g;  // g GPUs doing g times the work in one GPU's time: speedup 1 = linear
    const double efficiency = one_gpu_ms / result.time.median_ms;
    std::string note = std::to_string(g) + " GPU" + (g == 1 ? "" : "s") + ": " + std::to_string(result.time.median_ms) +
                       " ms for " + std::to_string(n) + " items per GPU, " +
                       std::to_string(result.items_per_second() / 1e9) + " G items/s, " +
                       std::to_string(efficiency) + "x of linear scaling from one GPU";
    if (r.what == job::sort && g > 1) {
      // The last repetition's phases on rank 0, and NCCL's own all-to-all of even shares of
      // the same bytes for comparison.
      const auto& p = phases[0];
      note += "; rank 0: local sort " + std::to_string(p.local_sort_ms) + " ms, splitters " +
              std::to_string(p.splitters_ms) + " ms, exchange " + std::to_string(p.exchange_ms) + " ms (" +
              std::to_string(static_cast<double>(p.sent_bytes) / (p.exchange_ms * 1e6)) + " GB/s sent), merge " +
              std::to_string(p.merge_ms) + " ms";
      std::vector<double> a2a_ms;
      on_ranks(comms, [&](int rank, const dist::communicator& comm) {
        const auto even = dist::detail::balanced_counts(n, g);
        const device_buffer<T> d_send(x.as<T>());
        device_buffer<T> d_recv(std::max<std::int64_t>(g * even[0], 1));
        dist::detail::exchange_plan plan;
        std::int64_t at = 0;
        for (int q = 0; q < g; ++q) {
          plan.send_counts.push_back(even[static_cast<std::size_t>(q)]);
          plan.send_displs.push_back(at);
          plan.recv_counts.push_back(even[static_cast<std::size_t>(rank)]);
          plan.recv_displs.push_back(static_cast<std::int64_t>(q) * even[static_cast<std::size_t>(rank)]);
          at += even[static_cast<std::size_t>(q)];
        }
        for (int i = -1; i < repeat; ++i) {
          SCANLAB_CHECK(cudaDeviceSynchronize());
          sync.arrive_and_wait();
          if (rank == 0) t0 = clock::now();
          require(dist::detail::all_to_all(comm, plan, static_cast<const T*>(d_send.data()), d_recv.data(), nullptr),
                "all-to-all");
          SCANLAB_CHECK(cudaDeviceSynchronize());
          sync.arrive_and_wait();
          if (rank == 0 && i >= 0) a2a_ms.push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
        }
      });
      if (!a2a_ms.empty()) {
        std::sort(a2a_ms.begin(), a2a_ms.end());
        const double median = a2a_ms[a2a_ms.size() / 2];
        const double sent = static_cast<double>(n) * sizeof(T) * (g - 1) / g;
        note += "; NCCL all-to-all of even shares: " + std::to_string(median) + " ms, " +
                std::to_string(sent / (median * 1e6)) + " GB/s sent per GPU";
      }
    }
    rep.notes.push_back(note);
    rep.rows.push_back(std::move(result));
  }
}

}  // namespace detail

template <class T>
report run_typed(const io::host_array& x, const request& r) {
  report rep;
  rep.output = detail::run_distributed<T>(r, x, rep);
  if (r.validate) rep.checks.push_back(detail::compare<T>(r, x, rep.output, detail::run_on_one_gpu<T>(r, x)));
  if (r.bench) detail::bench<T>(r, x, rep);
  return rep;
}

}  // namespace scanlab::dist_app
