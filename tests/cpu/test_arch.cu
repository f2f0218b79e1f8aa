// The per-architecture policy layer (scanlab/arch.cuh) on the host: which family a GPU
// uses, the limits table, and that every default tuning table fits each family while the
// Hopper shapes that need more than a smaller GPU has are caught. Runs without a GPU.
#include <scanlab/algorithms/linrec.cuh>
#include <scanlab/algorithms/partition.cuh>
#include <scanlab/algorithms/select.cuh>
#include <scanlab/arch.cuh>
#include <scanlab/scan.cuh>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace {

namespace arch = scanlab::arch;

TEST(arch, FamilyOfEveryComputeCapability) {
  const std::pair<int, int> expected[] = {{75, 75},  {80, 80},  {86, 86},  {87, 86},  {89, 89},   {90, 90},
                                          {100, 100}, {103, 100}, {110, 100}, {120, 120}, {121, 120}, {130, 120}};
  for (const auto& [sm, family] : expected) EXPECT_EQ(arch::family_of(sm), family) << "sm_" << sm;
}

TEST(arch, LimitsOfTheSmallerFamilies) {
  EXPECT_EQ(arch::limits_of(75).smem_per_sm, 64u * 1024);
  EXPECT_EQ(arch::limits_of(86).smem_per_block, 99u * 1024);
  EXPECT_EQ(arch::limits_of(89).threads_per_sm, 1536);
  EXPECT_EQ(arch::limits_of(80).smem_per_block, 163u * 1024);
  EXPECT_EQ(arch::limits_of(90).smem_per_block, 227u * 1024);
  EXPECT_EQ(arch::limits_of(120).smem_per_block, 99u * 1024);
}

TEST(arch, FitsChecksEveryLimit) {
  EXPECT_TRUE(arch::fits(90, 256, 2, 33 * 1024));
  EXPECT_FALSE(arch::fits(75, 256, 2, 33 * 1024));   // two blocks need 66 KB of Turing's 64
  EXPECT_TRUE(arch::fits(75, 256, 2, 31 * 1024));
  EXPECT_FALSE(arch::fits(86, 512, 1, 198 * 1024));  // past the 99 KB a block may have
  EXPECT_FALSE(arch::fits(75, 512, 3, 1024));        // 1536 threads on a 1024-thread SM
  EXPECT_FALSE(arch::fits(90, 1024, 2, 1024));       // 32 registers a thread: below the floor
  EXPECT_FALSE(arch::fits(90, 100, 1, 1024));        // not whole warps
}

// The Hopper shapes are the tuned ones; a smaller GPU gets a smaller entry where they do
// not fit, and every entry of every default table fits its family.
template <class T>
void check_tables() {
  using scan_t = scanlab::device::scan_tuning<T>;
  using scan_agent_90 = scanlab::scan_detail::scan_agent<arch::policy_for<scan_t, 90>, const T*, T*, T, scanlab::plus>;
  EXPECT_FALSE(arch::fits(75, scan_agent_90::block_threads, 2, scan_agent_90::smem_bytes));
  EXPECT_TRUE(arch::table_fits<scan_t>([](auto policy) {
    return scanlab::scan_detail::scan_agent<typename decltype(policy)::type, const T*, T*, T, scanlab::plus>::smem_bytes;
  }));
  EXPECT_LT((arch::policy_for<scan_t, 75>::tile_items), (arch::policy_for<scan_t, 90>::tile_items));
  EXPECT_EQ((arch::policy_for<scan_t, 86>::tile_items), (arch::policy_for<scan_t, 90>::tile_items));

  using linrec_t = scanlab::linrec_detail::linrec_tuning<T>;
  const auto linrec_smem = [](auto policy) {
    return scanlab::linrec_detail::linrec_agent<typename decltype(policy)::type, scanlab::linrec_detail::ab_source<T>,
                                                T>::smem_bytes;
  };
  using hopper_linrec = arch::policy_for<linrec_t, 90>;
  EXPECT_GT(linrec_smem(std::type_identity<hopper_linrec>{}), 190u * 1024);
  EXPECT_FALSE(arch::fits(86, hopper_linrec::block_threads, 1, linrec_smem(std::type_identity<hopper_linrec>{})));
  EXPECT_FALSE(arch::fits(80, hopper_linrec::block_threads, 1, linrec_smem(std::type_identity<hopper_linrec>{})));
  EXPECT_TRUE(arch::table_fits<linrec_t>(linrec_smem));
  // The backward pass: three arrays a tile; on Hopper the forward's bytes per thread in two
  // buffers: in the forward's blocks of 512 (one per SM), or for float in blocks of 256, two
  // resident per SM (linrec_gradient_shape).
  using gradient_t = scanlab::linrec_detail::linrec_gradient_tuning<T>;
  const auto gradient_smem = [](auto policy) {
    return scanlab::linrec_detail::linrec_agent<typename decltype(policy)::type,
                                                scanlab::linrec_detail::gradient_source<T>, T>::smem_bytes;
  };
  using hopper_gradient = arch::policy_for<gradient_t, 90>;
  const std::size_t hopper_gradient_smem = gradient_smem(std::type_identity<hopper_gradient>{});
  EXPECT_EQ(hopper_gradient::items_per_thread, hopper_linrec::items_per_thread);
  EXPECT_EQ(hopper_gradient::buffers, 2);
  if constexpr (std::is_same_v<T, float>) {
    EXPECT_EQ(hopper_gradient::block_threads, 256);
    EXPECT_EQ(hopper_gradient::min_blocks_per_sm, 2);
    EXPECT_TRUE(arch::fits(90, hopper_gradient::block_threads, 2, hopper_gradient_smem));
    EXPECT_GT(hopper_gradient_smem, 90u * 1024);
  } else {
    EXPECT_EQ(hopper_gradient::tile_items, hopper_linrec::tile_items);
    EXPECT_GT(hopper_gradient_smem, 190u * 1024);
  }
  EXPECT_TRUE(arch::table_fits<gradient_t>(gradient_smem));

  using two_way_t = scanlab::partition_detail::partition_tuning<T>;
  using three_way_t = scanlab::partition_detail::three_way_tuning<T>;
  EXPECT_LT((arch::policy_for<two_way_t, 75>::tile_items), (arch::policy_for<two_way_t, 90>::tile_items));
  EXPECT_LE((arch::policy_for<three_way_t, 90>::tile_items), (arch::policy_for<two_way_t, 90>::tile_items));
  // The two-way L2 prefetch: Hopper on (bulk prefetch), before it off; never the three-way.
  EXPECT_EQ((arch::policy_for<two_way_t, 90>::l2_ahead), 1);
  EXPECT_EQ((arch::policy_for<two_way_t, 80>::l2_ahead), 0);
  EXPECT_EQ((arch::policy_for<three_way_t, 90>::l2_ahead), 0);

  using select_t = scanlab::select_detail::select_tuning<T, scanlab::select_detail::none>;
  EXPECT_LT((arch::policy_for<select_t, 75>::tile_items), (arch::policy_for<select_t, 90>::tile_items));
}

TEST(arch, DefaultTablesFitEveryFamilyFloat) { check_tables<float>(); }
TEST(arch, DefaultTablesFitEveryFamilyDouble) { check_tables<double>(); }
TEST(arch, DefaultTablesFitEveryFamilyInt8) {
  using scan_t = scanlab::device::scan_tuning<std::int8_t>;
  // Under 4 bytes: at most 64 items (a register each once unpacked), no tile loaded ahead.
  EXPECT_EQ((arch::policy_for<scan_t, 90>::items_per_thread), 64);
  EXPECT_EQ((arch::policy_for<scan_t, 75>::items_per_thread), 64);
  EXPECT_FALSE((arch::policy_for<scan_t, 90>::prefetch));
  using scan16_t = scanlab::device::scan_tuning<std::int16_t>;
  EXPECT_EQ((arch::policy_for<scan16_t, 90>::items_per_thread), 64);
  EXPECT_EQ((arch::policy_for<scan16_t, 75>::items_per_thread), 32);
  EXPECT_FALSE((arch::policy_for<scan16_t, 90>::prefetch));
  EXPECT_TRUE((arch::policy_for<scanlab::device::scan_tuning<int>, 90>::prefetch));
}

// A single policy is every family's; the sizes that hold everywhere take the largest.
TEST(arch, SinglePolicyAndLargestOverPolicies) {
  using one = scanlab::device::scan_policy<128, 8, 2>;
  static_assert(!arch::is_table<one>::value);
  static_assert(arch::is_table<scanlab::device::scan_tuning<int>>::value);
  static_assert(std::is_same_v<arch::policy_for<one, 75>, one>);
  EXPECT_EQ(arch::max_over_policies<one>([](auto p) { return decltype(p)::type::tile_items; }), 1024);
  EXPECT_EQ(arch::max_over_policies<scanlab::device::scan_tuning<int>>(
                [](auto p) { return 1000000 / decltype(p)::type::tile_items; }),
            1000000 / (arch::policy_for<scanlab::device::scan_tuning<int>, 75>::tile_items));
}

}  // namespace
