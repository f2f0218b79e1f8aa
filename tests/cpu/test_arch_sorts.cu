// The per-architecture shapes of quicksort's leaf, radix sort's onesweep passes and the
// reduction (scanlab/arch.cuh) on the host: what each family runs, that each fits the
// family, that Hopper's values are the measured ones, and that the temp-storage sizing
// covers every family without asking a device. Runs without a GPU.
#include <scanlab/algorithms/quicksort.cuh>
#include <scanlab/algorithms/radix_sort.cuh>
#include <scanlab/arch.cuh>
#include <scanlab/device/reduce_policy.cuh>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>

namespace {

namespace arch = scanlab::arch;
namespace qs = scanlab::quicksort_detail;
namespace rs = scanlab::radix_sort_detail;
using qs::no_value;

template <class K, class V>
void expect_leaves(int hopper, int turing) {
  arch::all_families([&](auto family) {
    constexpr int f = decltype(family)::value;
    using leaf = arch::policy_for<qs::leaf_tuning<K, V>, f>;
    EXPECT_EQ(leaf::capacity, (f == 75 ? turing : hopper)) << "family " << f;
    EXPECT_TRUE(arch::fits(f, leaf::block_threads, 1, leaf::smem_bytes)) << "family " << f;
    EXPECT_EQ(leaf::block_threads, (leaf::capacity / 16 + 31) / 32 * 32) << "family " << f;
    return true;
  });
}

TEST(arch_sorts, QuicksortLeafPerFamily) {
  expect_leaves<std::uint32_t, no_value>(16384, 8192);
  expect_leaves<std::uint64_t, no_value>(8192, 4096);
  expect_leaves<std::uint32_t, std::uint32_t>(8192, 4096);
  expect_leaves<std::uint64_t, std::uint64_t>(4096, 2048);
  expect_leaves<std::uint16_t, no_value>(16384, 16384);  // 33 KB padded: fits Turing as it is
  // The reason: Hopper's largest leaf needs more than Turing's 64 KB per block.
  EXPECT_GT((qs::leaf_smem_bytes<std::uint32_t, no_value>(16384)), arch::limits_of(75).smem_per_block);
  EXPECT_EQ((qs::leaf_smem_bytes<std::uint32_t, no_value>(16384)), std::size_t{67600});
  // The default capacity (tests and apps use it) is Hopper's, the largest.
  EXPECT_EQ((qs::leaf_capacity<std::uint32_t, no_value>()), 16384);
}

// The size query answers without a device, and covers the plan of every family's leaf
// (Turing's, with the smaller leaf, is the largest).
TEST(arch_sorts, QuicksortTempCoversEveryFamily) {
  for (const std::int64_t n : {std::int64_t{1}, std::int64_t{16384}, std::int64_t{16385}, std::int64_t{1} << 20,
                               (std::int64_t{1} << 28) + 3}) {
    std::size_t bytes = 0;
    ASSERT_EQ(scanlab::quicksort(nullptr, bytes, static_cast<const std::uint32_t*>(nullptr),
                                 static_cast<std::uint32_t*>(nullptr), n),
              cudaSuccess);
    const qs::plan_sizes<std::uint32_t, no_value> hopper(n, 0, 16384);
    const qs::plan_sizes<std::uint32_t, no_value> turing(n, 0, 8192);
    EXPECT_GE(bytes, hopper.total) << "n=" << n;
    EXPECT_EQ(bytes, std::max(hopper.total, turing.total)) << "n=" << n;
  }
}

template <int K, int V>
void expect_onesweep(int hopper, int middle, int turing) {
  arch::all_families([&](auto family) {
    constexpr int f = decltype(family)::value;
    using p = arch::policy_for<rs::onesweep_tuning<K, V>, f>;
    using measured = scanlab::radix_sort_policy<K, V>;
    EXPECT_EQ(p::block_threads, measured::block_threads);
    EXPECT_EQ(p::tile_items, measured::tile_items);
    EXPECT_EQ(p::ranking, measured::ranking);
    const int expected = f == 75 ? turing : (f == 86 || f == 89 || f == 120 ? middle : hopper);
    EXPECT_EQ(p::min_blocks_per_sm, expected) << "family " << f;
    EXPECT_TRUE(arch::fits(f, p::block_threads, p::min_blocks_per_sm, p::smem_bytes, rs::onesweep_min_registers))
        << "family " << f;
    return true;
  });
  EXPECT_EQ((arch::policy_for<rs::onesweep_tuning<K, V>, 90>::min_blocks_per_sm),
            (scanlab::radix_sort_policy<K, V>::min_blocks_per_sm));
}

TEST(arch_sorts, RadixOnesweepBlocksPerFamily) {
  expect_onesweep<4, 0>(3, 2, 1);
  expect_onesweep<4, 4>(3, 2, 1);
  expect_onesweep<8, 0>(3, 2, 1);
  expect_onesweep<8, 8>(2, 2, 1);
  expect_onesweep<8, 4>(3, 2, 1);
  expect_onesweep<4, 8>(3, 2, 1);
  expect_onesweep<1, 0>(3, 3, 2);
  expect_onesweep<2, 0>(3, 3, 2);
  expect_onesweep<1, 4>(3, 2, 1);
  // Hopper's 3 blocks of 384 threads are more than Turing's SM holds (what ptxas warned of).
  EXPECT_GT(scanlab::radix_sort_policy<4>::block_threads * scanlab::radix_sort_policy<4>::min_blocks_per_sm,
            arch::limits_of(75).threads_per_sm);
}

struct match_ranking : scanlab::radix_sort_policy<4> {
  static constexpr auto ranking = scanlab::radix_sort_ranking::match;
};

// The size query of the default and of a user policy answers without a device.
TEST(arch_sorts, RadixTempWithoutDevice) {
  for (const std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{7297}, std::int64_t{1} << 24}) {
    std::size_t table_bytes = 0, user_bytes = 0;
    ASSERT_EQ(scanlab::radix_sort_keys(nullptr, table_bytes, static_cast<const std::uint32_t*>(nullptr),
                                       static_cast<std::uint32_t*>(nullptr), n),
              cudaSuccess);
    ASSERT_EQ(scanlab::radix_sort_keys<match_ranking>(nullptr, user_bytes, static_cast<const std::uint32_t*>(nullptr),
                                                      static_cast<std::uint32_t*>(nullptr), n),
              cudaSuccess);
    EXPECT_EQ(table_bytes, user_bytes) << "n=" << n << ": the same tile, the same temp storage";
    EXPECT_GE(table_bytes, static_cast<std::size_t>(n) * 4) << "n=" << n;
  }
}

TEST(arch_sorts, ReduceShapeFitsEveryFamily) {
  using p = scanlab::detail::reduce_policy_sm90;
  for (const int f : arch::families) {
    EXPECT_TRUE(arch::fits(f, p::threads, p::blocks_per_sm, scanlab::detail::reduce_smem_bound)) << "family " << f;
    EXPECT_TRUE(arch::fits(f, p::single_block::threads, 1, scanlab::detail::reduce_smem_bound)) << "family " << f;
    EXPECT_TRUE(arch::fits(f, p::tile::threads, 1, scanlab::detail::reduce_smem_bound)) << "family " << f;
  }
  EXPECT_EQ(p::threads * p::blocks_per_sm, arch::limits_of(75).threads_per_sm);  // Turing's whole SM
}

}  // namespace
