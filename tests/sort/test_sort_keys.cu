// The key transforms on the CPU (no GPU needed): for every key type, the ordered bits
// (the public scanlab::radix_ordered_bits) compare as the documented order does (NaN last
// and equal to NaN, -0.0 == +0.0, signed and float keys in numeric order), in both
// directions; and the pass plan covers exactly the requested bits. Then the public tuning
// parameter: a policy's temp-storage size and its refusal with multipass (CPU), and sorts
// with two onesweep policies (GPU).
#include "sort/sort_test_common.cuh"

#include <gtest/gtest.h>

namespace {

using scanlab::radix_sort_detail::pass_plan;

// The public function under test (descending defaults to false).
template <class Key>
auto ordered_bits(Key key, bool descending) {
  return scanlab::radix_ordered_bits(key, descending);
}
static_assert(std::is_same_v<scanlab::radix_ordered_bits_t<float>, std::uint32_t>);
static_assert(std::is_same_v<scanlab::radix_ordered_bits_t<std::int16_t>, std::uint16_t>);

template <class Key>
std::vector<Key> interesting_keys(std::uint64_t seed) {
  std::vector<Key> keys = scanlab::test::sort::random_keys<Key>(300, seed);
  const auto add = [&](auto v) { keys.push_back(static_cast<Key>(v)); };
  add(0);
  add(1);
  add(std::numeric_limits<Key>::max());
  add(std::numeric_limits<Key>::lowest());
  if constexpr (std::is_signed_v<Key>) add(-1);
  if constexpr (std::is_floating_point_v<Key>) {
    add(-Key(0));
    add(std::numeric_limits<Key>::quiet_NaN());
    add(-std::numeric_limits<Key>::quiet_NaN());
    add(std::numeric_limits<Key>::infinity());
    add(-std::numeric_limits<Key>::infinity());
    add(std::numeric_limits<Key>::denorm_min());
    add(-std::numeric_limits<Key>::denorm_min());
    add(std::numeric_limits<Key>::min());
  }
  return keys;
}

template <class Key>
void check_transform() {
  const auto keys = interesting_keys<Key>(scanlab::test::test_seed());
  for (const bool descending : {false, true}) {
    for (const Key a : keys) {
      for (const Key b : keys) {
        const bool before = scanlab::test::sort::key_before(a, b, descending);
        const bool bits_before = ordered_bits(a, descending) < ordered_bits(b, descending);
        ASSERT_EQ(before, bits_before) << "descending " << descending << ": " << +a << " vs " << +b;
        // Equal keys (including -0/+0 and NaN/NaN) have equal ordered bits.
        const bool equal = !before && !scanlab::test::sort::key_before(b, a, descending);
        ASSERT_EQ(equal, ordered_bits(a, descending) == ordered_bits(b, descending)) << +a << " vs " << +b;
      }
    }
  }
}

TEST(sort_key_transform, OrderedBitsFollowTheDocumentedOrder) {
  check_transform<std::uint8_t>();
  check_transform<std::int8_t>();
  check_transform<std::uint16_t>();
  check_transform<std::int16_t>();
  check_transform<std::uint32_t>();
  check_transform<std::int32_t>();
  check_transform<std::uint64_t>();
  check_transform<std::int64_t>();
  check_transform<float>();
  check_transform<double>();
}

TEST(sort_key_transform, NanIsLastInBothOrders) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const bool descending : {false, true}) {
    EXPECT_EQ(ordered_bits(nan, descending), 0xffffffffu);
    EXPECT_EQ(ordered_bits(-nan, descending), 0xffffffffu);
    EXPECT_LT(ordered_bits(std::numeric_limits<float>::infinity(), descending), 0xffffffffu);
    EXPECT_LT(ordered_bits(-std::numeric_limits<float>::infinity(), descending), 0xffffffffu);
  }
  EXPECT_EQ(ordered_bits(-0.0, false), ordered_bits(0.0, false));
  EXPECT_EQ(ordered_bits(-0.0, true), ordered_bits(0.0, true));
}

TEST(sort_key_transform, PassPlanCoversTheRange) {
  for (int begin = 0; begin <= 64; ++begin) {
    for (int end = begin; end <= 64; ++end) {
      const pass_plan plan{begin, end};
      std::uint64_t covered = 0;
      int bits = 0;
      for (int p = 0; p < plan.passes(); ++p) {
        const unsigned mask = plan.mask(p);
        ASSERT_LE(mask, 255u);
        if (mask == 0) continue;
        ASSERT_LT(plan.shift(p), 64);
        const std::uint64_t field = static_cast<std::uint64_t>(mask) << plan.shift(p);
        ASSERT_EQ(covered & field, 0u) << "passes overlap";
        covered |= field;
        bits += std::popcount(mask);
      }
      ASSERT_EQ(bits, end - begin) << begin << ", " << end;
      const std::uint64_t want = end - begin == 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << (end - begin)) - 1) << begin;
      ASSERT_EQ(covered, want) << begin << ", " << end;
      ASSERT_GE(plan.passes(), 1);
    }
  }
}

TEST(sort_key_transform, AscendingIsTheDefault) {
  EXPECT_EQ(scanlab::radix_ordered_bits(-1), 0x7fffffffu);
  EXPECT_EQ(scanlab::radix_ordered_bits(std::uint8_t{7}), std::uint8_t{7});
  EXPECT_EQ(scanlab::radix_ordered_bits(std::uint8_t{7}, true), std::uint8_t{0xf8});
  EXPECT_EQ(scanlab::radix_ordered_bits(1.0f), 0xbf800000u);
}

// ---- the public policy parameter ----

// Warp multi-split ranking by one match.any per key instead of eight ballots (same tiles).
struct match_ranking : scanlab::radix_sort_policy<4> {
  static constexpr auto ranking = scanlab::radix_sort_ranking::match;
};
// Smaller tiles than the default 384 x 19: 256 x 8 (four times the tiles, more look-back).
struct small_tiles : scanlab::radix_sort_policy<4> {
  static constexpr int block_threads = 256;
  static constexpr int items_per_thread = 8;
  static constexpr int tile_items = block_threads * items_per_thread;
};

// Size queries only (no device is touched): the policy reaches onesweep (more tiles, more
// temp storage), a policy with multipass is refused, a same-shape policy sizes the same.
TEST(sort_public_api, PolicySizesAndMultipassRefusal) {
  const std::int64_t n = std::int64_t{1} << 24;
  const std::uint32_t* in = nullptr;
  std::uint32_t* out = nullptr;
  std::size_t tuned = 0, match = 0, small = 0;
  ASSERT_EQ(scanlab::radix_sort_keys(nullptr, tuned, in, out, n), cudaSuccess);
  ASSERT_EQ(scanlab::radix_sort_keys<match_ranking>(nullptr, match, in, out, n), cudaSuccess);
  ASSERT_EQ(scanlab::radix_sort_keys<small_tiles>(nullptr, small, in, out, n), cudaSuccess);
  EXPECT_EQ(match, tuned);
  EXPECT_GT(small, tuned);  // the digit state grows with the tile count
  scanlab::radix_sort_options multipass;
  multipass.algorithm = scanlab::radix_sort_algorithm::multipass;
  std::size_t bytes = 0;
  EXPECT_EQ(scanlab::radix_sort_keys(nullptr, bytes, in, out, n, multipass), cudaSuccess);
  EXPECT_EQ(scanlab::radix_sort_keys<small_tiles>(nullptr, bytes, in, out, n, multipass), cudaErrorInvalidValue);
  std::int64_t* permutation = nullptr;
  EXPECT_EQ(scanlab::radix_argsort<small_tiles>(nullptr, bytes, in, permutation, n, multipass), cudaErrorInvalidValue);
  EXPECT_EQ(scanlab::radix_sort_pairs<small_tiles>(nullptr, bytes, in, out, in, out, n, multipass),
            cudaErrorInvalidValue);
}

class sort_public_policy : public scanlab::test::gpu_test {};

template <class Policy>
std::vector<std::uint32_t> sort_with(const std::vector<std::uint32_t>& keys, const scanlab::radix_sort_options& o) {
  const auto n = static_cast<std::int64_t>(keys.size());
  scanlab::device_buffer<std::uint32_t> in{std::span<const std::uint32_t>(keys)};
  scanlab::device_buffer<std::uint32_t> out(n);
  out.fill_bytes(0xa5);
  std::size_t bytes = 0;
  SCANLAB_CHECK(scanlab::radix_sort_keys<Policy>(nullptr, bytes, in.data(), out.data(), n, o));
  auto temp = scanlab::test::sort::garbage_temp(bytes);
  SCANLAB_CHECK(scanlab::radix_sort_keys<Policy>(temp.data(), bytes, in.data(), out.data(), n, o));
  SCANLAB_CHECK(cudaDeviceSynchronize());
  return out.to_host();
}

// Both policies sort as the CPU reference does: both orders, a bit range, sizes around
// their tiles, few distinct keys (match.any's best case) and random ones.
TEST_F(sort_public_policy, OnesweepWithPolicies) {
  namespace ts = scanlab::test::sort;
  const std::uint64_t seed = scanlab::test::test_seed();
  SCOPED_TRACE(scanlab::test::seed_trace(seed));
  for (const std::int64_t n : scanlab::test::capped({1, 2047, 2049, 7297, 7 * 7296 + 5, 300000})) {
    for (const int distinct : {0, 3}) {
      const auto keys = ts::random_keys<std::uint32_t>(n, seed + static_cast<std::uint64_t>(n + distinct), distinct);
      for (const bool descending : {false, true}) {
        for (const int end_bit : {-1, 20}) {
          scanlab::radix_sort_options o;
          o.descending = descending;
          o.end_bit = end_bit;
          const auto want = ts::gather(keys, ts::reference_permutation(keys, o));
          SCANLAB_EXPECT_SAME(sort_with<match_ranking>(keys, o), want, "match ranking, " + ts::describe(o, n));
          SCANLAB_EXPECT_SAME(sort_with<small_tiles>(keys, o), want, "256 x 8 tiles, " + ts::describe(o, n));
        }
      }
    }
  }
}

}  // namespace
