// The key transforms on the CPU (no GPU needed): for every key type, the ordered bits
// compare as the documented order does (NaN last and equal to NaN, -0.0 == +0.0, signed
// and float keys in numeric order), in both directions; and the pass plan covers exactly
// the requested bits.
#include "sort/sort_test_common.cuh"

#include <gtest/gtest.h>

namespace {

using scanlab::radix_sort_detail::ordered_bits;
using scanlab::radix_sort_detail::pass_plan;

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

}  // namespace
