// The adversary of the quicksort's fixed sampler (apps/quicksort/quicksort_adversary.hpp), on
// the CPU: through a host emulation of the partition levels with the library's own sampler,
// it takes the levels its construction plans against the fixed sampler (salt 0: the sampler
// of the first versions), and no more than random keys against the seeded one. Runs without
// a GPU (what the GPU tests quicksort_<type>.Hostile and .FixedSamplerAdversary measure on
// the real sort, this shows on any machine).
#include "quicksort/quicksort_emulation.cuh"

#include "common/test_util.hpp"
#include "quicksort/quicksort_adversary.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

namespace {

namespace adversary = scanlab::quicksort_app::adversary;
using scanlab::test::quicksort::emulate_quicksort_levels;

const auto less = [](std::uint32_t a, std::uint32_t b) { return a < b; };

TEST(quicksort_adversary, RanksArePermutations) {
  for (const std::int64_t n : {0, 1, 2, 1023, 1024, 1025, 5000, 100003}) {
    std::vector<std::uint32_t> rank = adversary::ranks(n);
    ASSERT_EQ(static_cast<std::int64_t>(rank.size()), n);
    std::sort(rank.begin(), rank.end());
    for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(rank[static_cast<std::size_t>(i)], static_cast<std::uint32_t>(i));
  }
}

// The same construction as the generator's, checked against an emulation that partitions the
// keys for real (63 buckets, stable), sampling with the library's sample_index.
TEST(quicksort_adversary, DefeatsTheFixedSamplerOnly) {
  const std::int64_t n = std::int64_t{1} << 17;
  const std::int64_t leaf = 16384;  // uint32 keys alone
  const std::vector<std::uint32_t> keys = adversary::ranks(n);
  const int fixed = emulate_quicksort_levels(keys, leaf, [](int) { return std::uint64_t{0}; }, 1 << 20, less);
  EXPECT_EQ(fixed, adversary::planned_levels(n, leaf));
  EXPECT_EQ(fixed, 232);  // (2^17 - 16384) / 496, rounded up

  std::mt19937_64 rng(scanlab::test::test_seed());
  // Duplicates (4096 values, 32 copies each): keys equal to pivot 30 leave with their level,
  // and the construction places them so that it keeps its hold.
  std::vector<std::uint32_t> few(static_cast<std::size_t>(n));
  for (auto& x : few) x = static_cast<std::uint32_t>(rng() % 4096);
  const std::vector<std::uint32_t> arranged = adversary::arrange<std::uint32_t>(few, less);
  const int with_duplicates = emulate_quicksort_levels(arranged, leaf, [](int) { return std::uint64_t{0}; }, 1 << 20, less);
  EXPECT_GE(with_duplicates, adversary::planned_levels(n, leaf) * 9 / 10);

  std::vector<std::uint32_t> random(static_cast<std::size_t>(n));
  for (auto& x : random) x = static_cast<std::uint32_t>(rng());
  const int uniform = emulate_quicksort_levels(random, leaf, [](int) { return std::uint64_t{0}; }, 1 << 20, less);
  EXPECT_LE(uniform, 2);
  for (int trial = 0; trial < 4; ++trial) {
    const std::uint64_t seed = rng();
    const int seeded = emulate_quicksort_levels(
        keys, leaf, [seed](int level) { return scanlab::mix64(seed + static_cast<std::uint64_t>(level)); },
        1 << 20, less);
    EXPECT_LE(seeded, uniform + 1) << "seed " << seed;
  }
}

}  // namespace
