// scanlab-sort's linear-time checks (apps/sort/sort_check.hpp): what the streaming path's
// --validate runs beyond linear_check_items. Each check passes on a correct sort and names
// what is wrong in a broken one.
#include "sort/sort_check.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace {

using scanlab::sort_app::key_before;
using scanlab::sort_app::linear_checks;

template <class Key>
std::vector<std::int64_t> stable_order(const std::vector<Key>& keys) {
  std::vector<std::int64_t> order(keys.size());
  std::iota(order.begin(), order.end(), std::int64_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int64_t a, std::int64_t b) { return key_before(keys[a], keys[b], false); });
  return order;
}

template <class Key>
std::vector<Key> gather(const std::vector<Key>& v, const std::vector<std::int64_t>& order) {
  std::vector<Key> out;
  for (const std::int64_t i : order) out.push_back(v[static_cast<std::size_t>(i)]);
  return out;
}

template <class Key>
std::vector<scanlab::check> keys_only(const std::vector<Key>& keys, const std::vector<Key>& sorted) {
  return linear_checks<Key, unsigned char>(keys, {}, sorted, {}, false);
}

std::vector<std::uint32_t> random_keys(std::size_t n, std::uint32_t range, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint32_t> keys(n);
  for (auto& k : keys) k = static_cast<std::uint32_t>(rng() % range);
  return keys;
}

TEST(sort_linear_check, keys_in_order_and_the_same_multiset) {
  const auto keys = random_keys(100003, 1000, 1);  // many equal keys
  auto sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  const auto ok = keys_only(keys, sorted);
  ASSERT_EQ(ok.size(), 1u);
  EXPECT_TRUE(ok[0].passed) << ok[0].detail;

  auto swapped = sorted;
  std::swap(swapped[500], swapped[90000]);
  const auto bad_order = keys_only(keys, swapped);
  EXPECT_FALSE(bad_order[0].passed);
  EXPECT_NE(bad_order[0].detail.find("out of order at position"), std::string::npos) << bad_order[0].detail;

  auto lost = sorted;  // still in order, one key replaced by its neighbour
  const auto at = static_cast<std::size_t>(std::upper_bound(lost.begin(), lost.end(), lost[50000]) - lost.begin());
  lost[at] = lost[at - 1];
  const auto bad_multiset = keys_only(keys, lost);
  EXPECT_FALSE(bad_multiset[0].passed);
  EXPECT_NE(bad_multiset[0].detail.find("multisets differ"), std::string::npos) << bad_multiset[0].detail;

  EXPECT_FALSE(keys_only(keys, std::vector<std::uint32_t>(sorted.begin(), sorted.end() - 1))[0].passed);
  EXPECT_TRUE(keys_only(std::vector<std::uint32_t>{}, std::vector<std::uint32_t>{})[0].passed);
}

TEST(sort_linear_check, float_order_nan_last_and_signed_zeros) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> keys{3.0f, nan, -0.0f, 1.0f, 0.0f, -2.5f, nan, -0.0f};
  const auto sorted = gather(keys, stable_order(keys));
  EXPECT_TRUE(std::isnan(sorted.back()));
  EXPECT_TRUE(keys_only(keys, sorted)[0].passed) << keys_only(keys, sorted)[0].detail;
  auto nan_early = sorted;  // a NaN before a number
  std::swap(nan_early[0], nan_early[sorted.size() - 1]);
  EXPECT_FALSE(keys_only(keys, nan_early)[0].passed);
  // -0.0 and +0.0 are equal keys: either order of them is in order, and the bits still count.
  auto zeros = sorted;
  const auto first_zero = static_cast<std::size_t>(std::find(zeros.begin(), zeros.end(), 0.0f) - zeros.begin());
  std::swap(zeros[first_zero], zeros[first_zero + 1]);
  EXPECT_TRUE(keys_only(keys, zeros)[0].passed);
  auto positive_zero = sorted;
  for (auto& z : positive_zero) {
    if (z == 0.0f) z = 0.0f;  // every -0.0 written as +0.0: in order, but not the input's bits
  }
  EXPECT_FALSE(keys_only(keys, positive_zero)[0].passed);
}

TEST(sort_linear_check, positions_each_once_their_key_stable) {
  const auto keys = random_keys(20011, 50, 2);
  const auto order = stable_order(keys);
  const auto sorted = gather(keys, order);
  const auto check = [&](const std::vector<std::int64_t>& permutation) {
    return linear_checks<std::uint32_t, std::int64_t>(keys, {}, sorted, permutation, true);
  };
  const auto ok = check(order);
  ASSERT_EQ(ok.size(), 2u);
  EXPECT_TRUE(ok[0].passed && ok[1].passed) << ok[1].detail;

  auto unstable = order;  // two equal keys' positions exchanged
  std::swap(unstable[10], unstable[11]);
  ASSERT_EQ(keys[static_cast<std::size_t>(order[10])], keys[static_cast<std::size_t>(order[11])]);
  EXPECT_NE(check(unstable)[1].detail.find("not stable"), std::string::npos) << check(unstable)[1].detail;

  auto twice = order;
  twice[12] = twice[11];
  EXPECT_FALSE(check(twice)[1].passed);
  auto wrong_key = order;  // a position whose key is another
  std::swap(wrong_key[0], wrong_key[order.size() - 1]);
  EXPECT_NE(check(wrong_key)[1].detail.find("is not the sorted key"), std::string::npos) << check(wrong_key)[1].detail;
  auto out_of_range = order;
  out_of_range[3] = static_cast<std::int64_t>(order.size());
  EXPECT_NE(check(out_of_range)[1].detail.find("out of range"), std::string::npos);
}

TEST(sort_linear_check, given_values_as_pairs) {
  const auto keys = random_keys(30011, 100, 3);
  const auto values = random_keys(30011, 1u << 31, 4);
  const auto order = stable_order(keys);
  const auto sorted = gather(keys, order);
  const auto sorted_values = gather(values, order);
  const auto check = [&](const std::vector<std::uint32_t>& got) {
    return linear_checks<std::uint32_t, std::uint32_t>(keys, values, sorted, got, false);
  };
  EXPECT_TRUE(check(sorted_values)[1].passed) << check(sorted_values)[1].detail;
  auto moved = sorted_values;  // a value moved to another key
  std::swap(moved[0], moved[moved.size() - 1]);
  EXPECT_FALSE(check(moved)[1].passed);
  auto changed = sorted_values;
  changed[77] ^= 1u;
  EXPECT_FALSE(check(changed)[1].passed);
  EXPECT_FALSE(check(std::vector<std::uint32_t>(sorted_values.begin(), sorted_values.end() - 1))[1].passed);
}

}  // namespace
