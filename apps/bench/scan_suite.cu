// The scan suite of scanlab-bench: every ladder variant (in ladder order), the production
// path (inclusive, then exclusive) and cub::DeviceScan::InclusiveSum, on the same input.
//
// For each type and size: random input is generated once on the device (a hash kernel:
// integers in [-8, 8], stored as int32 or float32; with mean 0 every partial sum, in any
// grouping, stays far below 2^24, so float results are exact and comparable bit for bit
// up to 2^30 items). CUB runs first and gives the baseline time and the reference output;
// then each selected variant is timed (temp storage allocated outside the timed work) and
// its output, from the last timed run, compared once with CUB's on the device (ints
// exactly, floats within 1e-6 relative: a rounding difference passes, a misplaced item
// does not). Exclusive results are compared with CUB's inclusive output shifted by one.
// Declared bytes: one read and one write per item.
#include "bench/fill.cuh"
#include "bench/suite.hpp"
#include "common/device_buffer.hpp"

#include <scanlab/error.hpp>
#include <scanlab/functional.cuh>
#include <scanlab/ladder/scan_ladder.cuh>
#include <scanlab/scan.cuh>

#include <cub/device/device_scan.cuh>

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

// Block size of the ladder variants in the benchmark (the classic choice).
constexpr int ladder_block_threads = 256;

std::vector<std::string> scan_variant_names() {
  std::vector<std::string> names;
  for (const std::string_view variant : ladder::scan_variant_names) names.push_back("ladder/" + std::string(variant));
  names.emplace_back("production");
  names.emplace_back("production-exclusive");
  names.emplace_back("cub");
  return names;
}

// The input: integers in [-8, 8].
template <class T>
struct random_value {
  __device__ T operator()(std::uint64_t h) const { return static_cast<T>(static_cast<int>(h % 17) - 8); }
};

// Counts items where `got` differs from the reference: reference[i] (inclusive), or
// reference[i - 1] and 0 for i = 0 (exclusive, init 0).
template <class T>
__global__ void count_mismatches_kernel(const T* got, const T* reference, std::int64_t n, bool shifted,
                                        unsigned long long* mismatches, unsigned long long* first) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  unsigned long long local = 0;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const T want = shifted ? (i == 0 ? T(0) : reference[i - 1]) : reference[i];
    bool same = got[i] == want;
    if constexpr (std::is_floating_point_v<T>) {
      same = std::fabs(static_cast<double>(got[i]) - static_cast<double>(want)) <=
             1e-6 * std::fabs(static_cast<double>(want));
    }
    if (!same) {
      ++local;
      atomicMin(first, static_cast<unsigned long long>(i));
    }
  }
  if (local != 0) atomicAdd(mismatches, local);
}

template <class T>
std::string validate(const T* got, const T* reference, std::int64_t n, bool shifted) {
  device_buffer<unsigned long long> counters(2);
  const unsigned long long init[2] = {0, ~0ull};
  SCANLAB_CHECK(cudaMemcpy(counters.data(), init, sizeof(init), cudaMemcpyHostToDevice));
  if (n > 0) {
    count_mismatches_kernel<<<1024, 256>>>(got, reference, n, shifted, counters.data(), counters.data() + 1);
    SCANLAB_CHECK_LAUNCH();
  }
  const auto host = counters.to_host();
  if (host[0] == 0) return "pass";
  std::ostringstream message;
  message << "FAIL: " << host[0] << " items differ from CUB, first at " << host[1];
  return message.str();
}

template <class T>
void run_type(harness& h, const suite_options& options, const type_run& what, std::vector<result>& rows) {
  for_each_size(options, "scan", [&](std::int64_t n, std::uint64_t seed) {
    device_buffer<T> in(std::max<std::int64_t>(n, 1));
    device_buffer<T> out(std::max<std::int64_t>(n, 1));
    device_buffer<T> reference(std::max<std::int64_t>(n, 1));
    fill_hashed(in, seed, random_value<T>{});
    const T* d_in = in.data();
    result shape;
    shape.suite = "scan";
    shape.type = what.type_name;
    shape.dataset = what.dataset;
    shape.n = n;
    shape.bytes = 2.0 * static_cast<double>(n) * sizeof(T);
    size_run run(h, options, std::move(shape));

    // CUB first (cub::DeviceScan::InclusiveSum): the baseline time and the reference output.
    run.time_cub([&](void* temp, std::size_t& temp_bytes, cudaStream_t s) {
      return with_narrowest_count(n, [&](auto count) {
        return cub::DeviceScan::InclusiveSum(temp, temp_bytes, d_in, reference.data(), count, s);
      });
    });
    const auto variant = [&](const std::string& name, bool exclusive, const auto& call) {
      run.time_variant(
          name, [&] { out.fill_bytes(0xab); }, call,
          [&] {
            SCANLAB_CHECK(cudaDeviceSynchronize());
            return validate(out.data(), reference.data(), n, exclusive);
          });
    };
    for (const ladder::scan_variant v : ladder::scan_variants) {
      if (v == ladder::scan_variant::naive && n > ladder::naive_scan_max_items) continue;  // O(n^2): no row
      variant("ladder/" + std::string(ladder::variant_name(v)), false,
              [&](void* temp, std::size_t& temp_bytes, cudaStream_t s) {
                return ladder::scan(v, ladder::scan_kind::inclusive, temp, temp_bytes, d_in, out.data(), n, T(0),
                                    plus{}, s, ladder_block_threads);
              });
    }
    variant("production", false, [&](void* temp, std::size_t& temp_bytes, cudaStream_t s) {
      return scanlab::inclusive_scan(temp, temp_bytes, d_in, out.data(), n, plus{}, s);
    });
    variant("production-exclusive", true, [&](void* temp, std::size_t& temp_bytes, cudaStream_t s) {
      return scanlab::exclusive_scan(temp, temp_bytes, d_in, out.data(), n, T(0), plus{}, s);
    });
    run.finish(rows);
  });
}

std::vector<result> run_scan_suite(harness& h, const suite_options& options) {
  std::vector<result> rows;
  for_each_type(options, [&]<class T>(const std::string& type) {
    run_type<T>(h, options, {type, "random integers [-8,8]"}, rows);
  });
  return rows;
}

}  // namespace

suite scan_suite() {
  return {"scan",
          "Prefix scan: the ladder (naive to decoupled look-back), the production path and "
          "cub::DeviceScan::InclusiveSum",
          scan_variant_names(), run_scan_suite};
}

}  // namespace scanlab::bench
