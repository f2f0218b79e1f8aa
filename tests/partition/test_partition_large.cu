// A two-way partition of more than 2^32 elements: counts past 32 bits (the 64-bit tile
// state). The input is computed (i mod 251 as uint8), so the expected output has a closed
// form; windows of the 4.3 GB output are checked (start, end, across 2^32, random places).
// (The quicksort's: tests/quicksort/test_quicksort_large.cu.)
#include "common/device_buffer.hpp"
#include "common/gpu_test.hpp"
#include "common/test_util.hpp"

#include <scanlab/algorithms/partition.cuh>
#include <scanlab/error.hpp>
#include <scanlab/iterator.cuh>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace {

struct mod251 {
  __host__ __device__ std::uint8_t operator()(std::int64_t i) const { return static_cast<std::uint8_t>(i % 251); }
};
struct below100 {
  __host__ __device__ bool operator()(std::uint8_t x) const { return x < 100; }
};

class partition_large : public scanlab::test::gpu_test {};

TEST_F(partition_large, TwoWayPast32Bits) {
  const std::int64_t n = (std::int64_t{1} << 32) + 12345;
  if (scanlab::test::max_test_n() < n) GTEST_SKIP() << "SCANLAB_TEST_MAX_N is below " << n;
  std::size_t free_bytes = 0, total = 0;
  SCANLAB_CHECK(cudaMemGetInfo(&free_bytes, &total));
  if (free_bytes < static_cast<std::size_t>(n) + (std::size_t{1} << 30)) GTEST_SKIP() << "needs about 5 GB of GPU memory";

  const scanlab::transform_iterator in(scanlab::counting_iterator<std::int64_t>(0), mod251{});
  scanlab::device_buffer<std::uint8_t> out(n);
  scanlab::device_buffer<std::int64_t> count(1);
  std::size_t bytes = 0;
  ASSERT_EQ(scanlab::partition(nullptr, bytes, in, out.data(), count.data(), n, below100{}), cudaSuccess);
  scanlab::device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
  ASSERT_EQ(scanlab::partition(temp.data(), bytes, in, out.data(), count.data(), n, below100{}), cudaSuccess);
  SCANLAB_CHECK(cudaDeviceSynchronize());

  const std::int64_t selected = n / 251 * 100 + std::min<std::int64_t>(n % 251, 100);
  ASSERT_EQ(count.to_host()[0], selected);
  // Selected j-th: j mod 100, in order. The rest, in input order, is 100 + (j mod 151); it
  // is written from the end: out[n - 1 - j].
  const auto expected = [&](std::int64_t i) -> std::uint8_t {
    if (i < selected) return static_cast<std::uint8_t>(i % 100);
    return static_cast<std::uint8_t>(100 + (n - 1 - i) % 151);
  };
  std::vector<std::int64_t> starts = {0, selected - 4096, selected, (std::int64_t{1} << 32) - 4096, n - 8192};
  std::mt19937_64 rng(scanlab::test::test_seed());
  for (int k = 0; k < 16; ++k) starts.push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n - 8192)));
  std::vector<std::uint8_t> window(8192);
  for (const std::int64_t start : starts) {
    SCANLAB_CHECK(cudaMemcpy(window.data(), out.data() + start, window.size(), cudaMemcpyDeviceToHost));
    for (std::int64_t i = 0; i < 8192; ++i) {
      ASSERT_EQ(window[static_cast<std::size_t>(i)], expected(start + i)) << "at " << start + i;
    }
  }
}

}  // namespace
