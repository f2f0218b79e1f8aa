// A quicksort of more than 2^32 keys: segments, buckets, equal runs, leaves and the merge-sort
// fallback at offsets past 2^32. The keys are computed, so the sorted output has a closed
// form; windows of it are checked (start, across 2^32, end, random places).
#include "common/device_buffer.hpp"
#include "common/gpu_test.hpp"
#include "common/test_util.hpp"

#include <scanlab/algorithms/quicksort.cuh>
#include <scanlab/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

// Key i of the quicksort test: i times an odd number, mod 2^16 (each block of 2^16 keys holds
// every value once).
constexpr std::uint32_t key_multiplier = 40503;

__global__ void fill_keys(std::uint16_t* keys, std::int64_t n) {
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    keys[i] = static_cast<std::uint16_t>(static_cast<std::uint64_t>(i) * key_multiplier);
  }
}

class quicksort_large : public scanlab::test::gpu_test {};

// 2^32 + 4097 uint16 keys sorted in place, with the default level budget (four partition
// levels: equal runs, segments and leaves past 2^32) and with budget 1 (one level, then the
// merge sort of 32 segments of about 2^27 keys each, 13 passes).
TEST_F(quicksort_large, KeysPast32Bits) {
  const std::int64_t n = (std::int64_t{1} << 32) + 4097;
  if (scanlab::test::max_test_n() < n) GTEST_SKIP() << "SCANLAB_TEST_MAX_N is below " << n;
  std::size_t bytes = 0;
  scanlab::device_buffer<std::uint16_t> keys(1);  // only to name the type in the size query
  ASSERT_EQ(scanlab::quicksort(nullptr, bytes, static_cast<const std::uint16_t*>(keys.data()), keys.data(), n),
            cudaSuccess);
  std::size_t free_bytes = 0, total = 0;
  SCANLAB_CHECK(cudaMemGetInfo(&free_bytes, &total));
  if (free_bytes < bytes + static_cast<std::size_t>(n) * 2 + (std::size_t{1} << 30)) {
    GTEST_SKIP() << "needs about " << (bytes + static_cast<std::size_t>(n) * 2) / 1000000000 + 2 << " GB of GPU memory";
  }
  keys = scanlab::device_buffer<std::uint16_t>(n);
  scanlab::device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));

  // Value v appears q times, once more if it is among the keys of the last, partial block.
  const std::int64_t q = n >> 16;
  const std::int64_t r = n & 0xffff;
  std::vector<std::int64_t> start(65537, 0);  // where value v starts in the sorted output
  std::vector<std::int64_t> count(65536, q);
  for (std::int64_t j = 0; j < r; ++j) ++count[static_cast<std::uint16_t>(static_cast<std::uint64_t>(j) * key_multiplier)];
  for (std::size_t v = 0; v < 65536; ++v) start[v + 1] = start[v] + count[v];
  ASSERT_EQ(start[65536], n);
  const auto expected = [&](std::int64_t i) {
    return static_cast<std::uint16_t>(std::upper_bound(start.begin(), start.end(), i) - start.begin() - 1);
  };

  for (const int budget : {-1, 1}) {
    SCOPED_TRACE("level budget " + std::to_string(budget));
    fill_keys<<<4096, 256>>>(keys.data(), n);
    SCANLAB_CHECK(cudaGetLastError());
    scanlab::quicksort_profile profile;
    const scanlab::quicksort_options options{.profile = &profile, .level_budget = budget};
    ASSERT_EQ(scanlab::quicksort(temp.data(), bytes, static_cast<const std::uint16_t*>(keys.data()), keys.data(), n,
                                 nullptr, scanlab::nan_last_less{}, options),
              cudaSuccess);
    SCANLAB_CHECK(cudaDeviceSynchronize());
    if (budget == 1) EXPECT_GT(profile.fallback_keys, n / 100 * 99);  // all but 31 equal runs
    std::vector<std::int64_t> starts = {0, (std::int64_t{1} << 32) - 4096, n - 8192};
    std::mt19937_64 rng(scanlab::test::test_seed());
    for (int k = 0; k < 24; ++k) starts.push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n - 8192)));
    std::vector<std::uint16_t> window(8192);
    for (const std::int64_t first : starts) {
      SCANLAB_CHECK(cudaMemcpy(window.data(), keys.data() + first, window.size() * 2, cudaMemcpyDeviceToHost));
      for (std::int64_t i = 0; i < 8192; ++i) {
        ASSERT_EQ(window[static_cast<std::size_t>(i)], expected(first + i)) << "at " << first + i;
      }
    }
  }
}

}  // namespace
