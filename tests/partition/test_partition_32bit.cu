// Partitions of the 4-byte types, std::int32_t, std::uint32_t and float (bodies in
// partition_test_common.cuh, each type instantiated here only), and the public tuning knobs of
// the partitions (a policy, single_pass_options) on uint32.
#include "partition/partition_test_common.cuh"

#include <scanlab/tuning.hpp>

namespace {
SCANLAB_PARTITION_TESTS(partition_int32, std::int32_t)
SCANLAB_PARTITION_TESTS(partition_uint32, std::uint32_t)
SCANLAB_PARTITION_TESTS(partition_float, float)

using T = std::uint32_t;
using scanlab::test::partition::below;
using scanlab::test::partition::first_difference;

// 128 x 8 = 1024 items per tile (the default two-way tile is 8192): a few thousand items
// make several tiles and take the look-back.
using small_policy = scanlab::partition_policy<128, 8, 4>;
static_assert(std::is_same_v<scanlab::default_partition_policy<T>,
                             scanlab::partition_detail::default_two_way_policy<T>>);
static_assert(std::is_same_v<scanlab::default_three_way_partition_policy<T>,
                             scanlab::partition_detail::default_three_way_policy<T>>);

const scanlab::single_pass_options launch_configs[] = {
    {},
    {scanlab::launch_mode::cooperative, 2},
    {scanlab::launch_mode::tickets, 0},
    {scanlab::launch_mode::tickets, 3},
};

// The five partitions through their public entry points with the small policy and each
// launch configuration, against the CPU reference.
TEST_F(partition_uint32, PublicPolicyAndOptions) {
  const std::uint64_t seed = scanlab::test::test_seed();
  SCOPED_TRACE(scanlab::test::seed_trace(seed));
  const std::int64_t tile = small_policy::tile_items;
  for (const std::int64_t n : scanlab::test::capped({tile - 1, tile, 3 * tile + 1, 33 * tile - 1})) {
    std::mt19937_64 rng(seed + static_cast<std::uint64_t>(n));
    std::vector<T> h_in(static_cast<std::size_t>(n));
    for (T& x : h_in) x = static_cast<T>(rng() % 64);  // duplicates: an equal part for three ways
    const T pivot = 21;
    const below<T> pred{pivot};
    std::vector<T> sel, rej, less, equal, greater;
    for (const T x : h_in) {
      (pred(x) ? sel : rej).push_back(x);
      (x < pivot ? less : x > pivot ? greater : equal).push_back(x);
    }
    const std::vector<T> rej_reversed(rej.rbegin(), rej.rend());
    const std::vector<T> greater_reversed(greater.rbegin(), greater.rend());
    scanlab::device_buffer<T> d_in{std::span<const T>(h_in)};
    scanlab::device_buffer<T> d_out(n), d_rej(n);
    scanlab::device_buffer<std::int64_t> d_counts(3);
    const T* in = d_in.data();
    for (const auto& config : launch_configs) {
      for (int form = 0; form < 5; ++form) {
        SCOPED_TRACE("form " + std::to_string(form) + ", n = " + std::to_string(n) + ", mode " +
                     std::to_string(static_cast<int>(config.mode)) + ", max_blocks " +
                     std::to_string(config.max_blocks));
        const auto call = [&](void* temp, std::size_t& bytes) -> cudaError_t {
          T* out = d_out.data();
          std::int64_t* c = d_counts.data();
          switch (form) {
            case 0: return scanlab::partition<small_policy>(temp, bytes, in, out, c, n, pred, nullptr, config);
            case 1: return scanlab::stable_partition<small_policy>(temp, bytes, in, out, c, n, pred, nullptr, config);
            case 2:
              return scanlab::partition_copy<small_policy>(temp, bytes, in, out, d_rej.data(), c, n, pred, nullptr,
                                                           config);
            case 3:
              return scanlab::partition_three_way<small_policy>(temp, bytes, in, out, c, n, pivot, {}, nullptr,
                                                                config);
            default:
              return scanlab::stable_partition_three_way<small_policy>(temp, bytes, in, out, c, n, pivot, {},
                                                                       nullptr, config);
          }
        };
        std::size_t bytes = 0;
        ASSERT_EQ(call(nullptr, bytes), cudaSuccess);
        scanlab::device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
        temp.fill_bytes(0xa7);
        d_out.fill_bytes(0x5b);
        d_counts.fill_bytes(0x3c);
        ASSERT_EQ(call(temp.data(), bytes), cudaSuccess);
        SCANLAB_CHECK(cudaDeviceSynchronize());
        const std::vector<std::int64_t> c = d_counts.to_host();
        const std::vector<T> out = d_out.to_host();
        const std::span<const T> o(out);
        if (form < 3) {
          const auto count = static_cast<std::int64_t>(sel.size());
          ASSERT_EQ(c[0], count);
          EXPECT_EQ(first_difference<T>(o.first(count), sel), -1) << "selected";
          if (form == 2) {
            const std::vector<T> r = d_rej.to_host();
            EXPECT_EQ(first_difference<T>(std::span<const T>(r).first(rej.size()), rej), -1) << "rejected output";
          } else {
            EXPECT_EQ(first_difference<T>(o.subspan(count), form == 0 ? rej_reversed : rej), -1) << "rest";
          }
        } else {
          ASSERT_EQ(c[0], static_cast<std::int64_t>(less.size()));
          ASSERT_EQ(c[1], static_cast<std::int64_t>(equal.size()));
          ASSERT_EQ(c[2], static_cast<std::int64_t>(greater.size()));
          EXPECT_EQ(first_difference<T>(o.first(less.size()), less), -1) << "less";
          EXPECT_EQ(first_difference<T>(o.subspan(less.size(), equal.size()), equal), -1) << "equal";
          EXPECT_EQ(first_difference<T>(o.subspan(less.size() + equal.size()), form == 3 ? greater_reversed : greater),
                    -1)
              << "greater";
        }
      }
    }
  }
}

// Size queries only (no device is touched, so this runs without a GPU): the policy reaches
// the dispatchers (the temp storage of its tile count), the options change no size, and
// invalid options are refused by every partition.
TEST(partition_public_api, PolicySizesAndInvalidOptions) {
  namespace pd = scanlab::partition_detail;
  using scanlab::launch_mode;
  const std::int64_t n = std::int64_t{1} << 24;
  const T* in = nullptr;
  T* out = nullptr;
  std::int64_t* counts = nullptr;
  const below<T> pred{T(1)};
  // The sm_90 two-way shape as one policy (the default is a per-architecture table whose temp
  // storage covers every family's tiles).
  using large_policy = scanlab::partition_policy<256, 32, 2>;
  std::size_t tuned = 0, large = 0, small = 0, small_tickets = 0, small3 = 0;
  ASSERT_EQ(scanlab::partition(nullptr, tuned, in, out, counts, n, pred), cudaSuccess);
  ASSERT_EQ(scanlab::partition<large_policy>(nullptr, large, in, out, counts, n, pred), cudaSuccess);
  ASSERT_EQ(scanlab::partition<small_policy>(nullptr, small, in, out, counts, n, pred), cudaSuccess);
  ASSERT_EQ(scanlab::partition<small_policy>(nullptr, small_tickets, in, out, counts, n, pred, nullptr,
                                             {launch_mode::tickets, 3}),
            cudaSuccess);
  ASSERT_EQ(scanlab::partition_three_way<small_policy>(nullptr, small3, in, out, counts, n, T(1)), cudaSuccess);
  using narrow = pd::class_counts<std::uint32_t, 1>;
  using narrow3 = pd::class_counts<std::uint32_t, 2>;
  const auto tiles = [&](std::int64_t tile) { return (n + tile - 1) / tile; };
  EXPECT_GE(tuned, large);
  EXPECT_EQ(large, pd::state_bytes<narrow>(tiles(large_policy::tile_items)));
  EXPECT_EQ(small, pd::state_bytes<narrow>(tiles(small_policy::tile_items)));
  EXPECT_GT(small, large);
  EXPECT_EQ(small_tickets, small);
  EXPECT_EQ(small3, pd::state_bytes<narrow3>(tiles(small_policy::tile_items)) +
                        scanlab::detail::align_up(static_cast<std::size_t>(n) * sizeof(T)));

  const scanlab::single_pass_options invalid[] = {{launch_mode::automatic, -1},
                                                  {static_cast<launch_mode>(7), 0}};
  for (const auto& o : invalid) {
    std::size_t bytes = 0;
    EXPECT_EQ(scanlab::partition(nullptr, bytes, in, out, counts, n, pred, nullptr, o), cudaErrorInvalidValue);
    EXPECT_EQ(scanlab::stable_partition(nullptr, bytes, in, out, counts, n, pred, nullptr, o), cudaErrorInvalidValue);
    EXPECT_EQ(scanlab::partition_copy(nullptr, bytes, in, out, out, counts, n, pred, nullptr, o),
              cudaErrorInvalidValue);
    EXPECT_EQ(scanlab::partition_three_way(nullptr, bytes, in, out, counts, n, T(1), {}, nullptr, o),
              cudaErrorInvalidValue);
    EXPECT_EQ(scanlab::stable_partition_three_way(nullptr, bytes, in, out, counts, n, T(1), {}, nullptr, o),
              cudaErrorInvalidValue);
  }
}

}  // namespace
