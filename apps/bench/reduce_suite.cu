// The reduce suite of scanlab-bench: every ladder rung (in ladder order), the
// production path (scanlab::reduce) and cub::DeviceReduce::Sum, on the same input.
//
// For each type and size: random input is generated once on the device (a hash
// kernel: int32 in {-1, 0, 1}, so no sum can overflow even at 2^30; float32 in
// [0, 1)); CUB runs first and gives the baseline time and the reference value; then
// each selected variant is timed (temp storage allocated outside the timed work) and
// its result, from the last timed run, compared once with CUB's.
#include "bench/suite.hpp"
#include "common/device_buffer.hpp"

#include <scanlab/error.hpp>
#include <scanlab/functional.cuh>
#include <scanlab/ladder/reduce_ladder.cuh>
#include <scanlab/mix64.hpp>
#include <scanlab/reduce.cuh>

#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace scanlab::bench {

namespace {

// Block size of the ladder rungs in the benchmark (the classic choice).
constexpr int ladder_block_threads = 256;

std::vector<std::string> reduce_variant_names() {
  std::vector<std::string> names;
  for (std::string_view rung : ladder::rung_names) names.push_back("ladder/" + std::string(rung));
  names.emplace_back("production");
  names.emplace_back("cub");
  return names;
}

using scanlab::mix64;  // splitmix64's finaliser: every input bit affects every output bit

template <class T>
__global__ void fill_random_kernel(T* out, std::int64_t n, std::uint64_t seed) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const std::uint64_t h = mix64(seed + static_cast<std::uint64_t>(i));
    if constexpr (std::is_floating_point_v<T>) {
      out[i] = static_cast<T>(static_cast<double>(h >> 40) * 0x1.0p-24);  // [0, 1)
    } else {
      out[i] = static_cast<T>(static_cast<std::int64_t>(h % 3) - 1);  // {-1, 0, 1}
    }
  }
}

template <class T>
void fill_random(device_buffer<T>& buffer, std::uint64_t seed) {
  if (buffer.size() == 0) return;
  fill_random_kernel<<<1024, 256>>>(buffer.data(), buffer.size(), seed);
  SCANLAB_CHECK_LAUNCH();
  SCANLAB_CHECK(cudaDeviceSynchronize());
}

template <class T>
T read_one(const device_buffer<T>& out) {
  T value{};
  SCANLAB_CHECK(cudaMemcpy(&value, out.data(), sizeof(T), cudaMemcpyDeviceToHost));
  return value;
}

// ints: exact. floats: the data is in [0, 1), so the sum is positive and a relative
// tolerance is meaningful; 1e-4 covers the longest per-thread float chains of the
// coarsened rungs at 2^30 (a few thousand additions) with room to spare.
template <class T>
std::string validate(T got, T reference) {
  std::ostringstream message;
  if constexpr (std::is_floating_point_v<T>) {
    const double diff = std::fabs(static_cast<double>(got) - static_cast<double>(reference));
    const double tolerance = 1e-4 * std::fabs(static_cast<double>(reference)) + 1e-6;
    if (std::isfinite(static_cast<double>(got)) && diff <= tolerance) return "pass";
    message << "FAIL: " << got << " vs CUB " << reference << " (|diff| " << diff << " > " << tolerance << ")";
  } else {
    if (got == reference) return "pass";
    message << "FAIL: " << got << " vs CUB " << reference;
  }
  return message.str();
}

// cub::DeviceReduce::Sum with the narrowest count type that holds n (what CUB's own
// benchmarks and users do).
template <class T>
cudaError_t cub_sum(void* temp, std::size_t& bytes, const T* in, T* out, std::int64_t n, cudaStream_t stream) {
  if (n <= INT_MAX) return cub::DeviceReduce::Sum(temp, bytes, in, out, static_cast<int>(n), stream);
  return cub::DeviceReduce::Sum(temp, bytes, in, out, n, stream);
}

template <class T>
void run_type(harness& h, const suite_options& options, const type_run& what, std::vector<result>& rows) {
  const auto selected = [&](const std::string& name) { return is_selected(options, name); };
  const auto progress = [&](const std::string& variant, std::int64_t n) {
    report_progress(options, variant, what.type_name, n);
  };
  std::uint64_t seed = 20261122;
  for (const std::int64_t n : options.sizes) {
    if (n < 0) throw std::invalid_argument("reduce suite: negative size");
    device_buffer<T> in(std::max<std::int64_t>(n, 1));
    device_buffer<T> out(1);
    fill_random(in, seed++);
    const T* d_in = in.data();
    const double bytes = static_cast<double>(n) * sizeof(T);
    const auto make_row = [&](const std::string& variant, const timing& t) {
      result r;
      r.suite = "reduce";
      r.bound = ceiling::read;  // a read-only job
      r.variant = variant;
      r.type = what.type_name;
      r.dataset = what.dataset;
      r.n = n;
      r.bytes = bytes;
      r.time = t;
      return r;
    };

    // CUB first: the baseline time and the reference value.
    progress("cub", n);
    std::size_t cub_bytes = 0;
    SCANLAB_CHECK(cub_sum(nullptr, cub_bytes, d_in, out.data(), n, nullptr));
    device_buffer<unsigned char> cub_temp(static_cast<std::int64_t>(std::max<std::size_t>(cub_bytes, 1)));
    const timing cub_time = h.time([&](cudaStream_t s) {
      SCANLAB_CHECK(cub_sum(cub_temp.data(), cub_bytes, d_in, out.data(), n, s));
    });
    const T reference = read_one(out);
    result cub_row = make_row("cub", cub_time);
    cub_row.baseline_ms = cub_time.median_ms;
    cub_row.validation = "n/a";  // the reference itself

    const auto run_variant = [&](const std::string& name, const auto& query, const auto& launch) {
      if (!selected(name)) return;
      progress(name, n);
      std::size_t temp_bytes = 0;
      SCANLAB_CHECK(query(temp_bytes));
      device_buffer<unsigned char> temp(static_cast<std::int64_t>(temp_bytes));
      out.fill_bytes(0);
      const timing t = h.time([&](cudaStream_t s) { SCANLAB_CHECK(launch(temp.data(), temp_bytes, s)); });
      result row = make_row(name, t);
      row.baseline_ms = cub_time.median_ms;
      if (options.validate) row.validation = validate(read_one(out), reference);
      rows.push_back(std::move(row));
    };

    for (const ladder::rung r : ladder::all_rungs) {
      run_variant(
          "ladder/" + std::string(ladder::rung_name(r)),
          [&](std::size_t& temp_bytes) {
            return ladder::reduce(r, d_in, out.data(), n, T(0), plus{}, nullptr, temp_bytes, ladder_block_threads);
          },
          [&](void* temp, std::size_t& temp_bytes, cudaStream_t s) {
            return ladder::reduce(r, d_in, out.data(), n, T(0), plus{}, temp, temp_bytes, ladder_block_threads, s);
          });
    }
    run_variant(
        "production",
        [&](std::size_t& temp_bytes) { return scanlab::reduce(nullptr, temp_bytes, d_in, out.data(), n, T(0), plus{}); },
        [&](void* temp, std::size_t& temp_bytes, cudaStream_t s) {
          return scanlab::reduce(temp, temp_bytes, d_in, out.data(), n, T(0), plus{}, s);
        });
    rows.push_back(std::move(cub_row));
  }
}

std::vector<result> run_reduce_suite(harness& h, const suite_options& options) {
  std::vector<result> rows;
  for_each_type(options, [&]<class T>(const std::string& type) {
    run_type<T>(h, options, {type, std::is_floating_point_v<T> ? "random [0,1)" : "random {-1,0,1}"}, rows);
  });
  return rows;
}

}  // namespace

suite reduce_suite() {
  return {"reduce",
          "Sum reduction: the optimisation ladder, the production path and cub::DeviceReduce::Sum",
          reduce_variant_names(), run_reduce_suite};
}

}  // namespace scanlab::bench
