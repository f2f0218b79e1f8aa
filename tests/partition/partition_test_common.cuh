// Test bodies for the partitions, shared by one translation unit per key width
// (test_partition_32bit.cu and test_partition_64bit.cu stamp SCANLAB_PARTITION_TESTS for each
// of their types). The quicksort's are in tests/quicksort; both draw their inputs from
// common/key_patterns.cuh.
//
// Every result is checked against a CPU reference (std::stable_partition and the stated
// order of each part) on seeded data of awkward sizes; outputs are poisoned and temp storage
// filled with garbage before each call. Inputs: random, sorted, reverse, all equal, two
// values, organ pipe, many duplicates, sawtooth, NaNs (floats).
#pragma once

#include "common/device_buffer.hpp"
#include "common/gpu_test.hpp"
#include "common/key_patterns.cuh"
#include "common/test_util.hpp"

#include <scanlab/algorithms/partition.cuh>
#include <scanlab/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace scanlab::test::partition {

using namespace scanlab::test::key_patterns;

// Index of the first difference (bitwise), or -1.
template <class T>
std::int64_t first_difference(std::span<const T> a, std::span<const T> b) {
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0) return static_cast<std::int64_t>(i);
  }
  return a.size() == b.size() ? -1 : static_cast<std::int64_t>(std::min(a.size(), b.size()));
}

// Sizes: around tile boundaries, a few random ones, a larger one.
template <class T>
std::vector<std::int64_t> test_sizes(std::uint64_t seed) {
  std::vector<std::int64_t> sizes = boundary_sizes(tile_items<T>(), 3);
  for (const std::int64_t extra : {std::int64_t{31}, std::int64_t{33}, 32 * tile_items<T>() + 1,
                                   33 * tile_items<T>() - 1, std::int64_t{1} << 20}) {
    sizes.push_back(extra);
  }
  for (const std::int64_t r : random_sizes(3, 200000, seed)) sizes.push_back(r);
  return capped(sizes);
}

// A predicate object for the two-way partitions: x < pivot (NaNs last).
template <class T>
struct below {
  T pivot;
  __host__ __device__ bool operator()(const T& x) const { return scanlab::nan_last_less{}(x, pivot); }
};

// The pivot of a test: a sample of the data (or a fixed value for tiny inputs).
template <class T>
T pick_pivot(const std::vector<T>& data, std::uint64_t seed) {
  if (data.empty()) return T(1);
  return data[static_cast<std::size_t>(seed % data.size())];
}

// ---- two-way -----------------------------------------------------------------------------

// options: the launch the two-way partitions are forced to take (default: their own choice).
template <class T>
void two_way_case(const std::vector<T>& h_in, T pivot, const std::string& label,
                  scanlab::partition_detail::two_way_options options = {}) {
  SCOPED_TRACE(label);
  const auto n = static_cast<std::int64_t>(h_in.size());
  const below<T> pred{pivot};
  std::vector<T> sel, rej;
  for (const T& x : h_in) (pred(x) ? sel : rej).push_back(x);
  const auto count = static_cast<std::int64_t>(sel.size());

  device_buffer<T> d_in{std::span<const T>(h_in)};
  device_buffer<T> d_out(std::max<std::int64_t>(n, 1));
  device_buffer<T> d_rej(std::max<std::int64_t>(n, 1));
  device_buffer<std::int64_t> d_count(1);
  std::size_t bytes = 0;
  ASSERT_EQ(scanlab::partition(nullptr, bytes, d_in.data(), d_out.data(), d_count.data(), n, pred), cudaSuccess);
  device_buffer<unsigned char> d_temp(static_cast<std::int64_t>(bytes));

  for (int mode = 0; mode < 3; ++mode) {
    SCOPED_TRACE(mode == 0 ? "partition" : mode == 1 ? "stable_partition" : "partition_copy");
    d_temp.fill_bytes(0xa7);
    poison(d_out);
    poison(d_rej);
    d_count.fill_bytes(0x3c);
    cudaError_t status;
    if (options.mode != scanlab::partition_detail::two_way_mode::automatic || options.max_blocks > 0) {
      using scanlab::partition_detail::two_way_layout;
      const two_way_layout layout =
          mode == 0 ? two_way_layout::reversed_rest : (mode == 1 ? two_way_layout::stable : two_way_layout::two_outputs);
      status = scanlab::partition_detail::dispatch_two_way(d_temp.data(), bytes, d_in.data(), d_out.data(),
                                                           mode == 2 ? d_rej.data() : d_out.data(), d_count.data(), n,
                                                           pred, layout, nullptr, options);
    } else if (mode == 0) status = scanlab::partition(d_temp.data(), bytes, d_in.data(), d_out.data(), d_count.data(), n, pred);
    else if (mode == 1)
      status = scanlab::stable_partition(d_temp.data(), bytes, d_in.data(), d_out.data(), d_count.data(), n, pred);
    else
      status = scanlab::partition_copy(d_temp.data(), bytes, d_in.data(), d_out.data(), d_rej.data(), d_count.data(),
                                       n, pred);
    ASSERT_EQ(status, cudaSuccess);
    SCANLAB_CHECK(cudaDeviceSynchronize());
    ASSERT_EQ(d_count.to_host()[0], count);
    std::vector<T> out = d_out.to_host();
    out.resize(static_cast<std::size_t>(n));
    const std::span<const T> o(out);
    EXPECT_EQ(first_difference<T>(o.first(count), sel), -1) << "selected part";
    if (mode == 0) {
      std::vector<T> rev(rej.rbegin(), rej.rend());
      EXPECT_EQ(first_difference<T>(o.subspan(count), rev), -1) << "rest (reversed)";
    } else if (mode == 1) {
      EXPECT_EQ(first_difference<T>(o.subspan(count), rej), -1) << "rest (in order)";
    } else {
      std::vector<T> r = d_rej.to_host();
      r.resize(rej.size());
      EXPECT_EQ(first_difference<T>(r, rej), -1) << "rejected output";
    }
  }
}

template <class T>
void two_way_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  for (const std::int64_t n : test_sizes<T>(seed)) {
    for (const pattern p : {pattern::random, pattern::sorted, pattern::two_values, pattern::many_duplicates}) {
      const auto data = make_data<T>(p, n, seed + static_cast<std::uint64_t>(n));
      two_way_case<T>(data, pick_pivot(data, seed ^ static_cast<std::uint64_t>(n)),
                      std::string(pattern_name(p)) + " n=" + std::to_string(n));
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  // Everything selected, nothing selected.
  const std::int64_t n = std::min<std::int64_t>(3 * tile_items<T>() + 5, max_test_n());
  auto data = make_data<T>(pattern::many_duplicates, n, seed);
  two_way_case<T>(data, T(100), "all selected");
  two_way_case<T>(data, T(0), "none selected");
  // Both launch modes with small grids: each block takes several tiles, so small inputs go
  // through the deferred look-back (and round one, in cooperative mode).
  using scanlab::partition_detail::two_way_mode;
  const std::int64_t two_way_tile = tile_items<T>();
  for (const std::int64_t m : capped({5 * two_way_tile + 77, 8 * two_way_tile, 13 * two_way_tile - 1})) {
    const auto d = make_data<T>(pattern::random, m, seed + 7 * static_cast<std::uint64_t>(m));
    for (const two_way_mode mode : {two_way_mode::cooperative, two_way_mode::tickets}) {
      for (const int blocks : {1, 3}) {
        two_way_case<T>(d, pick_pivot(d, seed + static_cast<std::uint64_t>(blocks)),
                        std::string(mode == two_way_mode::cooperative ? "cooperative" : "tickets") +
                            " blocks=" + std::to_string(blocks) + " n=" + std::to_string(m),
                        {mode, blocks});
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

// ---- three-way ---------------------------------------------------------------------------

// options: the launch the partitions are forced to take (default: their own choice).
template <class T>
void three_way_case(const std::vector<T>& h_in, T pivot, const std::string& label,
                    scanlab::partition_detail::two_way_options options = {}) {
  SCOPED_TRACE(label);
  const auto n = static_cast<std::int64_t>(h_in.size());
  std::vector<T> less, equal, greater;
  for (const T& x : h_in) {
    if (host_less(x, pivot)) less.push_back(x);
    else if (host_less(pivot, x)) greater.push_back(x);
    else equal.push_back(x);
  }
  device_buffer<T> d_in{std::span<const T>(h_in)};
  device_buffer<T> d_out(std::max<std::int64_t>(n, 1));
  device_buffer<std::int64_t> d_counts(3);
  std::size_t bytes = 0;
  const T* in = d_in.data();
  ASSERT_EQ(scanlab::partition_three_way(nullptr, bytes, in, d_out.data(), d_counts.data(), n, pivot), cudaSuccess);
  device_buffer<unsigned char> d_temp(static_cast<std::int64_t>(bytes));
  for (const bool stable : {false, true}) {
    SCOPED_TRACE(stable ? "stable_partition_three_way" : "partition_three_way");
    d_temp.fill_bytes(0xa7);
    poison(d_out);
    d_counts.fill_bytes(0x3c);
    cudaError_t status = cudaSuccess;
    if (options.mode != scanlab::partition_detail::two_way_mode::automatic || options.max_blocks > 0) {
      status = scanlab::partition_detail::dispatch_three_way(d_temp.data(), bytes, in, d_out.data(), d_counts.data(), n,
                                                             pivot, scanlab::nan_last_less{}, stable, nullptr, options);
    } else {
      status = stable
                   ? scanlab::stable_partition_three_way(d_temp.data(), bytes, in, d_out.data(), d_counts.data(), n, pivot)
                   : scanlab::partition_three_way(d_temp.data(), bytes, in, d_out.data(), d_counts.data(), n, pivot);
    }
    ASSERT_EQ(status, cudaSuccess);
    SCANLAB_CHECK(cudaDeviceSynchronize());
    const std::vector<std::int64_t> c = d_counts.to_host();
    ASSERT_EQ(c[0], static_cast<std::int64_t>(less.size()));
    ASSERT_EQ(c[1], static_cast<std::int64_t>(equal.size()));
    ASSERT_EQ(c[2], static_cast<std::int64_t>(greater.size()));
    std::vector<T> out = d_out.to_host();
    out.resize(static_cast<std::size_t>(n));
    const std::span<const T> o(out);
    EXPECT_EQ(first_difference<T>(o.first(less.size()), less), -1) << "less";
    EXPECT_EQ(first_difference<T>(o.subspan(less.size(), equal.size()), equal), -1) << "equal";
    std::vector<T> g = greater;
    if (!stable) std::reverse(g.begin(), g.end());
    EXPECT_EQ(first_difference<T>(o.subspan(less.size() + equal.size()), g), -1) << "greater";
  }
}

template <class T>
void three_way_test() {
  const std::uint64_t seed = test_seed() + 1;
  SCOPED_TRACE(seed_trace(seed));
  for (const std::int64_t n : test_sizes<T>(seed)) {
    for (const pattern p : patterns_for(std::is_floating_point_v<T>)) {
      const auto data = make_data<T>(p, n, seed + static_cast<std::uint64_t>(n));
      three_way_case<T>(data, pick_pivot(data, seed ^ static_cast<std::uint64_t>(n)),
                        std::string(pattern_name(p)) + " n=" + std::to_string(n));
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  if constexpr (std::is_floating_point_v<T>) {  // NaN as the pivot: all NaNs equal, numbers less
    const std::int64_t n = std::min<std::int64_t>(2 * tile_items<T>() + 3, max_test_n());
    three_way_case<T>(make_data<T>(pattern::nans, n, seed), std::numeric_limits<T>::quiet_NaN(), "nan pivot");
  }
  // Both launch modes with small grids (the deferred look-back and round one on small
  // inputs), on data with many keys equal to the pivot.
  using scanlab::partition_detail::two_way_mode;
  for (const std::int64_t m : capped({5 * tile_items<T>() + 77, 13 * tile_items<T>() - 1})) {
    const auto d = make_data<T>(pattern::many_duplicates, m, seed + 5 * static_cast<std::uint64_t>(m));
    for (const two_way_mode mode : {two_way_mode::cooperative, two_way_mode::tickets}) {
      for (const int blocks : {1, 3}) {
        three_way_case<T>(d, pick_pivot(d, seed + static_cast<std::uint64_t>(blocks)),
                          std::string(mode == two_way_mode::cooperative ? "cooperative" : "tickets") +
                              " blocks=" + std::to_string(blocks) + " n=" + std::to_string(m),
                          {mode, blocks});
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

// Bad arguments are refused; n = 0 writes zero counts.
template <class T>
void api_contract_test() {
  const below<T> pred{T(1)};
  std::size_t bytes = 0;
  const T* none = nullptr;
  T* out = nullptr;
  std::int64_t* no_count = nullptr;
  EXPECT_EQ(scanlab::partition(nullptr, bytes, none, out, no_count, -1, pred), cudaErrorInvalidValue);
  EXPECT_EQ(scanlab::partition_three_way(nullptr, bytes, none, out, no_count, -1, T(1)), cudaErrorInvalidValue);

  device_buffer<std::int64_t> d_counts(3);
  d_counts.fill_bytes(0x11);
  ASSERT_EQ(scanlab::partition(nullptr, bytes, none, out, d_counts.data(), 0, pred), cudaSuccess);
  EXPECT_GE(bytes, 1u);
  device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
  EXPECT_EQ(scanlab::partition(temp.data(), bytes, none, out, d_counts.data(), 0, pred), cudaSuccess);
  EXPECT_EQ(scanlab::partition(temp.data(), bytes, none, out, no_count, 0, pred), cudaErrorInvalidValue);
  SCANLAB_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(d_counts.to_host()[0], 0);

  std::size_t bytes3 = 0;
  ASSERT_EQ(scanlab::partition_three_way(nullptr, bytes3, none, out, d_counts.data(), 0, T(1)), cudaSuccess);
  device_buffer<unsigned char> temp3(static_cast<std::int64_t>(bytes3));
  d_counts.fill_bytes(0x11);
  EXPECT_EQ(scanlab::partition_three_way(temp3.data(), bytes3, none, out, d_counts.data(), 0, T(1)), cudaSuccess);
  SCANLAB_CHECK(cudaDeviceSynchronize());
  for (const std::int64_t c : d_counts.to_host()) EXPECT_EQ(c, 0);

  // Too little temp storage.
  const std::int64_t n = 100000;
  device_buffer<T> data(n), result(n);
  std::size_t need = 0;
  ASSERT_EQ(scanlab::partition(nullptr, need, data.data(), result.data(), d_counts.data(), n, pred), cudaSuccess);
  std::size_t less_than_needed = need - 1;
  EXPECT_EQ(scanlab::partition(temp.data(), less_than_needed, data.data(), result.data(), d_counts.data(), n, pred),
            cudaErrorInvalidValue);
}

}  // namespace scanlab::test::partition

#define SCANLAB_PARTITION_TESTS(suite, T)                                    \
  class suite : public scanlab::test::gpu_test {};                           \
  TEST_F(suite, TwoWay) { scanlab::test::partition::two_way_test<T>(); }     \
  TEST_F(suite, ThreeWay) { scanlab::test::partition::three_way_test<T>(); } \
  TEST_F(suite, ApiContract) { scanlab::test::partition::api_contract_test<T>(); }
