// The reduce suite of scanlab-bench: every ladder rung (in ladder order), the
// production path (scanlab::reduce) and cub::DeviceReduce::Sum, on the same input.
//
// For each type and size: random input is generated once on the device (a hash
// kernel: int32 in {-1, 0, 1}, so no sum can overflow even at 2^30; float32 in
// [0, 1)); CUB runs first and gives the baseline time and the reference value; then
// each selected variant is timed (temp storage allocated outside the timed work) and
// its result, from the last timed run, compared once with CUB's.
#include "bench/fill.cuh"
#include "bench/suite.hpp"
#include "common/device_buffer.hpp"

#include <scanlab/error.hpp>
#include <scanlab/functional.cuh>
#include <scanlab/ladder/reduce_ladder.cuh>
#include <scanlab/reduce.cuh>

#include <cub/device/device_reduce.cuh>

#include <algorithm>
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

// The input: floats in [0, 1), integers in {-1, 0, 1}.
template <class T>
struct random_value {
  __device__ T operator()(std::uint64_t h) const {
    if constexpr (std::is_floating_point_v<T>) {
      return static_cast<T>(static_cast<double>(h >> 40) * 0x1.0p-24);  // [0, 1)
    } else {
      return static_cast<T>(static_cast<std::int64_t>(h % 3) - 1);  // {-1, 0, 1}
    }
  }
};

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

template <class T>
void run_type(harness& h, const suite_options& options, const type_run& what, std::vector<result>& rows) {
  for_each_size(options, "reduce", [&](std::int64_t n, std::uint64_t seed) {
    device_buffer<T> in(std::max<std::int64_t>(n, 1));
    device_buffer<T> out(1);
    fill_hashed(in, seed, random_value<T>{});
    const T* d_in = in.data();
    result shape;
    shape.suite = "reduce";
    shape.bound = ceiling::read;  // a read-only job
    shape.type = what.type_name;
    shape.dataset = what.dataset;
    shape.n = n;
    shape.bytes = static_cast<double>(n) * sizeof(T);
    size_run run(h, options, std::move(shape));

    // CUB first (cub::DeviceReduce::Sum): the baseline time and the reference value.
    run.time_cub([&](void* temp, std::size_t& temp_bytes, cudaStream_t s) {
      return with_narrowest_count(
          n, [&](auto count) { return cub::DeviceReduce::Sum(temp, temp_bytes, d_in, out.data(), count, s); });
    });
    const T reference = read_one(out);
    const auto variant = [&](const std::string& name, const auto& call) {
      run.time_variant(
          name, [&] { out.fill_bytes(0); }, call, [&] { return validate(read_one(out), reference); });
    };
    for (const ladder::rung r : ladder::all_rungs) {
      variant("ladder/" + std::string(ladder::rung_name(r)), [&](void* temp, std::size_t& temp_bytes, cudaStream_t s) {
        return ladder::reduce(r, d_in, out.data(), n, T(0), plus{}, temp, temp_bytes, ladder_block_threads, s);
      });
    }
    variant("production", [&](void* temp, std::size_t& temp_bytes, cudaStream_t s) {
      return scanlab::reduce(temp, temp_bytes, d_in, out.data(), n, T(0), plus{}, s);
    });
    run.finish(rows);
  });
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
