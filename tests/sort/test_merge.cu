// The stable merges (scanlab/algorithms/merge.cuh): merge_keys, merge_pairs,
// merge_runs_keys, merge_runs_pairs.
//
// Every GPU result is compared bit for bit with the CPU: std::merge (two inputs) or
// std::stable_sort of the concatenated runs (k runs), both comparing
// scanlab::radix_ordered_bits, which is stable with the first input first. Values carry
// their origin (a's index, or na + b's index), so a wrong order among equal keys shows. One
// typed suite over every key type (each instantiated once), sizes around the tile edges,
// unbalanced and empty sides; the float special values; wrong arguments; and, named *Large*
// (left out under the sanitizers), merges past 2^31 items. Outputs are poisoned and temp
// storage filled with garbage before each run.
#include "sort/sort_test_common.cuh"  // gather, SCANLAB_EXPECT_SAME (bitwise), garbage_temp

#include <scanlab/algorithms/merge.cuh>
#include <scanlab/algorithms/radix_sort.cuh>
#include <scanlab/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using scanlab::device_buffer;
using scanlab::radix_ordered_bits;
using scanlab::test::sort::garbage_temp;
using scanlab::test::sort::gather;
using scanlab::test::max_test_n;
using scanlab::test::seed_trace;
using scanlab::test::test_seed;

template <class Key>
constexpr int tile_of = scanlab::merge_detail::policy_for<Key, scanlab::merge_detail::keys_only>::tile_items;
template <class Key, class Value>
constexpr int pair_tile_of = scanlab::merge_detail::policy_for<Key, Value>::tile_items;

template <class Key>
bool before(Key x, Key y) {
  return radix_ordered_bits(x) < radix_ordered_bits(y);
}

// ---- data ----

// n keys sorted by their ordered bits: random bit patterns (floats: any, NaNs and -0.0
// included), or drawn from `distinct` random values so that ties are common.
template <class Key>
std::vector<Key> sorted_keys(std::int64_t n, std::uint64_t seed, int distinct = 0) {
  std::mt19937_64 rng(seed);
  std::vector<Key> pool(static_cast<std::size_t>(distinct));
  const auto draw = [&] {
    const std::uint64_t bits = rng();
    Key k;
    std::memcpy(&k, &bits, sizeof(Key));
    return k;
  };
  for (auto& k : pool) k = draw();
  std::vector<Key> keys(static_cast<std::size_t>(n));
  for (auto& k : keys) k = pool.empty() ? draw() : pool[rng() % pool.size()];
  std::stable_sort(keys.begin(), keys.end(), before<Key>);
  return keys;
}

// Origins: first, first + 1, ... as Value (4 or 8 bytes).
template <class Value>
std::vector<Value> origins(std::int64_t n, std::uint64_t first) {
  std::vector<Value> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<Value>(first + i);
  return v;
}

// ---- the CPU references ----

template <class Key, class Value>
void reference_merge(const std::vector<Key>& a, const std::vector<Value>& av, const std::vector<Key>& b,
                     const std::vector<Value>& bv, std::vector<Key>& keys, std::vector<Value>& values) {
  std::vector<std::pair<Key, Value>> pa(a.size()), pb(b.size()), out(a.size() + b.size());
  for (std::size_t i = 0; i < a.size(); ++i) pa[i] = {a[i], av[i]};
  for (std::size_t i = 0; i < b.size(); ++i) pb[i] = {b[i], bv[i]};
  std::merge(pa.begin(), pa.end(), pb.begin(), pb.end(), out.begin(),
             [](const auto& x, const auto& y) { return before(x.first, y.first); });
  keys.resize(out.size());
  values.resize(out.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    keys[i] = out[i].first;
    values[i] = out[i].second;
  }
}

// The stable order of the concatenated runs (each sorted): the k-way stable merge.
template <class Key>
std::vector<std::int64_t> reference_runs_order(const std::vector<Key>& keys) {
  std::vector<std::int64_t> order(keys.size());
  std::iota(order.begin(), order.end(), std::int64_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int64_t x, std::int64_t y) { return before(keys[x], keys[y]); });
  return order;
}

// ---- the GPU calls ----

template <class T>
device_buffer<T> poisoned(std::int64_t n) {
  device_buffer<T> buffer(n);
  buffer.fill_bytes(0xa5);
  return buffer;
}

template <class Key>
std::vector<Key> gpu_merge_keys(const std::vector<Key>& a, const std::vector<Key>& b) {
  const auto na = static_cast<std::int64_t>(a.size());
  const auto nb = static_cast<std::int64_t>(b.size());
  device_buffer<Key> d_a{std::span<const Key>(a)};
  device_buffer<Key> d_b{std::span<const Key>(b)};
  auto out = poisoned<Key>(na + nb);
  std::size_t bytes = 0;
  SCANLAB_CHECK(scanlab::merge_keys(nullptr, bytes, d_a.data(), na, d_b.data(), nb, out.data()));
  EXPECT_GE(bytes, 1u);
  auto temp = garbage_temp(bytes);
  SCANLAB_CHECK(scanlab::merge_keys(temp.data(), bytes, d_a.data(), na, d_b.data(), nb, out.data()));
  SCANLAB_CHECK(cudaDeviceSynchronize());
  return out.to_host();
}

template <class Key, class Value>
void gpu_merge_pairs(const std::vector<Key>& a, const std::vector<Value>& av, const std::vector<Key>& b,
                     const std::vector<Value>& bv, std::vector<Key>& keys, std::vector<Value>& values) {
  const auto na = static_cast<std::int64_t>(a.size());
  const auto nb = static_cast<std::int64_t>(b.size());
  device_buffer<Key> d_a{std::span<const Key>(a)};
  device_buffer<Key> d_b{std::span<const Key>(b)};
  device_buffer<Value> d_av{std::span<const Value>(av)};
  device_buffer<Value> d_bv{std::span<const Value>(bv)};
  auto out = poisoned<Key>(na + nb);
  auto out_values = poisoned<Value>(na + nb);
  std::size_t bytes = 0;
  const auto call = [&](void* temp) {
    return scanlab::merge_pairs(temp, bytes, d_a.data(), d_av.data(), na, d_b.data(), d_bv.data(), nb, out.data(),
                                out_values.data());
  };
  SCANLAB_CHECK(call(nullptr));
  auto temp = garbage_temp(bytes);
  SCANLAB_CHECK(call(temp.data()));
  SCANLAB_CHECK(cudaDeviceSynchronize());
  keys = out.to_host();
  values = out_values.to_host();
}

// merge_runs_keys, or merge_runs_pairs when values is given (its output replaces it).
// Also checks that the input is left unchanged.
template <class Key, class Value = std::uint32_t>
std::vector<Key> gpu_merge_runs(const std::vector<Key>& keys, std::span<const std::int64_t> offsets,
                                std::vector<Value>* values = nullptr) {
  const auto n = static_cast<std::int64_t>(keys.size());
  device_buffer<Key> in{std::span<const Key>(keys)};
  auto out = poisoned<Key>(n);
  device_buffer<Value> values_in;
  auto values_out = poisoned<Value>(values != nullptr ? n : 0);
  if (values != nullptr) values_in = device_buffer<Value>{std::span<const Value>(*values)};
  std::size_t bytes = 0;
  const auto call = [&](void* temp) {
    return values != nullptr ? scanlab::merge_runs_pairs(temp, bytes, in.data(), values_in.data(), offsets,
                                                         out.data(), values_out.data())
                             : scanlab::merge_runs_keys(temp, bytes, in.data(), offsets, out.data());
  };
  SCANLAB_CHECK(call(nullptr));
  EXPECT_GE(bytes, 1u);
  auto temp = garbage_temp(bytes);
  SCANLAB_CHECK(call(temp.data()));
  SCANLAB_CHECK(cudaDeviceSynchronize());
  const auto keys_after = in.to_host();
  SCANLAB_EXPECT_SAME(keys_after, keys, "the input keys after merge_runs");
  if (values != nullptr) {
    const auto values_after = values_in.to_host();
    SCANLAB_EXPECT_SAME(values_after, *values, "the input values after merge_runs");
    *values = values_out.to_host();
  }
  return out.to_host();
}

// ---- test bodies ----

struct sides {
  std::int64_t na;
  std::int64_t nb;
};

std::string describe(sides s, int distinct) {
  return "na = " + std::to_string(s.na) + ", nb = " + std::to_string(s.nb) +
         (distinct > 0 ? ", " + std::to_string(distinct) + " distinct keys" : std::string(", random keys"));
}

// Sizes around the tile edges (tile: a kernel's items per tile), empty and unbalanced
// sides, and one of about a million items.
std::vector<sides> test_sides(std::int64_t tile) {
  std::vector<sides> all = {{0, 0},        {0, 1},       {1, 0},          {1, 1},        {0, 1000},
                            {1000, 0},     {tile - 1, 0}, {0, tile + 1},  {tile, tile},  {tile - 1, tile + 1},
                            {tile + 1, tile - 2}, {2 * tile - 1, 1}, {1, 2 * tile}, {3 * tile, 2 * tile + 1},
                            {1, 1000000}, {1000000, 1}, {500001, 500002}, {1000003, 0}, {0, 1000003}};
  std::vector<sides> kept;
  for (const sides s : all) {
    if (s.na + s.nb <= max_test_n()) kept.push_back(s);
  }
  return kept;
}

template <class Key>
class merge_typed : public scanlab::test::gpu_test {};

using key_types = ::testing::Types<std::uint8_t, std::int8_t, std::uint16_t, std::int16_t, std::uint32_t,
                                   std::int32_t, std::uint64_t, std::int64_t, float, double>;
TYPED_TEST_SUITE(merge_typed, key_types);

// Keys alone: random keys and keys with many ties.
TYPED_TEST(merge_typed, Keys) {
  using Key = TypeParam;
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  for (const sides s : test_sides(tile_of<Key>)) {
    for (const int distinct : {0, 5}) {
      const auto a = sorted_keys<Key>(s.na, seed + static_cast<std::uint64_t>(s.na), distinct);
      const auto b = sorted_keys<Key>(s.nb, seed ^ static_cast<std::uint64_t>(s.nb) << 20, distinct);
      std::vector<Key> want(a.size() + b.size());
      std::merge(a.begin(), a.end(), b.begin(), b.end(), want.begin(), before<Key>);
      const auto got = gpu_merge_keys(a, b);
      SCANLAB_EXPECT_SAME(got, want, describe(s, distinct));
    }
  }
}

// Pairs with 4- and 8-byte values holding each item's origin: stability is visible.
TYPED_TEST(merge_typed, Pairs) {
  using Key = TypeParam;
  const std::uint64_t seed = test_seed() + 1;
  SCOPED_TRACE(seed_trace(seed));
  const auto run = [&]<class Value>(sides s, int distinct) {
    const auto a = sorted_keys<Key>(s.na, seed + static_cast<std::uint64_t>(s.na), distinct);
    const auto b = sorted_keys<Key>(s.nb, seed ^ static_cast<std::uint64_t>(s.nb) << 20, distinct);
    // 8-byte integers: high bits set, which must move too.
    const std::uint64_t tag = std::is_integral_v<Value> && sizeof(Value) == 8 ? std::uint64_t{0xabcd} << 40 : 0;
    const auto av = origins<Value>(s.na, tag);
    const auto bv = origins<Value>(s.nb, tag + static_cast<std::uint64_t>(s.na));
    std::vector<Key> want_keys, keys;
    std::vector<Value> want_values, values;
    reference_merge(a, av, b, bv, want_keys, want_values);
    gpu_merge_pairs(a, av, b, bv, keys, values);
    const std::string what = describe(s, distinct) + ", " + std::to_string(sizeof(Value)) + "-byte values";
    SCANLAB_EXPECT_SAME(keys, want_keys, what + ": keys");
    SCANLAB_EXPECT_SAME(values, want_values, what + ": values");
  };
  for (const sides s : test_sides(pair_tile_of<Key, std::uint32_t>)) run.template operator()<std::uint32_t>(s, 5);
  for (const sides s : test_sides(pair_tile_of<Key, double>)) run.template operator()<double>(s, 0);
  for (const sides s : test_sides(pair_tile_of<Key, std::uint64_t>)) run.template operator()<std::uint64_t>(s, 3);
}

// Stability spelled out: all keys equal, or two values only; every a before every b of the
// same key, each side in its own order (the origins rise along each run of equal keys).
TYPED_TEST(merge_typed, Stability) {
  using Key = TypeParam;
  const std::uint64_t seed = test_seed() + 2;
  SCOPED_TRACE(seed_trace(seed));
  for (const sides s : std::vector<sides>{{5000, 7000}, {1, 30000}, {30000, 1}, {12345, 12345}}) {
    for (const int distinct : {1, 2}) {
      const auto a = sorted_keys<Key>(s.na, seed, distinct);
      const auto b = sorted_keys<Key>(s.nb, seed, distinct);  // the same seed: the same pool of keys
      const auto av = origins<std::uint32_t>(s.na, 0);
      const auto bv = origins<std::uint32_t>(s.nb, static_cast<std::uint64_t>(s.na));
      std::vector<Key> keys;
      std::vector<std::uint32_t> values;
      gpu_merge_pairs(a, av, b, bv, keys, values);
      ASSERT_EQ(keys.size(), a.size() + b.size());
      for (std::size_t i = 1; i < keys.size(); ++i) {
        ASSERT_FALSE(before(keys[i], keys[i - 1])) << "not sorted at " << i << ", " << describe(s, distinct);
        if (radix_ordered_bits(keys[i]) == radix_ordered_bits(keys[i - 1])) {
          ASSERT_LT(values[i - 1], values[i]) << "equal keys out of order at " << i << ", " << describe(s, distinct);
        }
      }
      std::vector<Key> want_keys;
      std::vector<std::uint32_t> want_values;
      reference_merge(a, av, b, bv, want_keys, want_values);
      SCANLAB_EXPECT_SAME(values, want_values, describe(s, distinct));
    }
  }
}

// k sorted runs back to back, empty runs among them; keys and pairs.
TYPED_TEST(merge_typed, Runs) {
  using Key = TypeParam;
  const std::uint64_t seed = test_seed() + 3;
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t tile = tile_of<Key>;
  // Run lengths; each list is one call.
  const std::vector<std::vector<std::int64_t>> layouts = {
      {},
      {0},
      {1},
      {100000},
      {0, 0},
      {tile + 1, 0},
      {1, tile - 1},
      {3 * tile, 2 * tile + 5},
      {0, 1000, 0},
      {7, 1, 50000},
      {tile, 0, tile, 0, tile},
      {1, 2, 3, 4, 5},
      {30000, 1, 0, 20000, 77777},
      {0, 0, 0, 0, 0, 0, 0, 123},
      {100, 0, 4000, 1, 12345, 0, 999, 2 * tile + 1},
      {200000, 150000, 100000, 50000, 1, 2, 3, 250000},
  };
  for (const auto& lengths : layouts) {
    std::vector<std::int64_t> offsets{0};
    for (const std::int64_t length : lengths) offsets.push_back(offsets.back() + length);
    if (offsets.back() > max_test_n()) continue;
    for (const int distinct : {0, 4}) {
      std::vector<Key> keys;
      for (std::size_t r = 0; r < lengths.size(); ++r) {
        const auto run = sorted_keys<Key>(lengths[r], seed + 977 * r, distinct);
        keys.insert(keys.end(), run.begin(), run.end());
      }
      std::string what = "k = " + std::to_string(lengths.size()) + ", lengths";
      for (const std::int64_t length : lengths) {
        what += ' ';  // piecewise: GCC 12 warns (-Wrestrict, a false positive) on " " + to_string
        what += std::to_string(length);
      }
      what += distinct > 0 ? ", 4 distinct keys" : ", random keys";
      const auto order = reference_runs_order(keys);
      const auto want = gather(keys, order);
      const auto got = gpu_merge_runs(keys, offsets);
      SCANLAB_EXPECT_SAME(got, want, what + ": keys");
      const auto positions = origins<std::uint32_t>(static_cast<std::int64_t>(keys.size()), 0);
      auto values = positions;
      const auto pair_keys = gpu_merge_runs(keys, offsets, &values);
      SCANLAB_EXPECT_SAME(pair_keys, want, what + ": keys of the pairs");
      const auto want_values = gather(positions, order);
      SCANLAB_EXPECT_SAME(values, want_values, what + ": 4-byte values");
      if (lengths.size() == 5) {
        auto wide = origins<std::int64_t>(static_cast<std::int64_t>(keys.size()), 1ull << 33);
        const auto wide_original = wide;
        gpu_merge_runs(keys, offsets, &wide);
        const auto want_wide = gather(wide_original, order);
        SCANLAB_EXPECT_SAME(wide, want_wide, what + ": 8-byte values");
      }
    }
  }
}

// ---- float special values ----

template <class Key>
void float_specials_test() {
  using Bits = scanlab::radix_ordered_bits_t<Key>;
  const std::uint64_t seed = test_seed() + 4;
  SCOPED_TRACE(seed_trace(seed));
  const Key nan = std::numeric_limits<Key>::quiet_NaN();
  Bits payload_bits;
  std::memcpy(&payload_bits, &nan, sizeof(Key));
  payload_bits |= 5;
  Key payload_nan;
  std::memcpy(&payload_nan, &payload_bits, sizeof(Key));
  const Key specials[] = {Key(0), -Key(0), nan, -nan, payload_nan, std::numeric_limits<Key>::infinity(),
                          -std::numeric_limits<Key>::infinity(), std::numeric_limits<Key>::denorm_min(),
                          -std::numeric_limits<Key>::denorm_min(), Key(1), Key(-1), Key(0.5)};
  std::mt19937_64 rng(seed);
  for (const sides s : std::vector<sides>{{11, 13}, {4000, 3000}, {0, 9001}, {100003, 99999}}) {
    if (s.na + s.nb > max_test_n()) continue;
    const auto draw = [&](std::int64_t n) {
      std::vector<Key> keys(static_cast<std::size_t>(n));
      for (auto& k : keys) k = specials[rng() % std::size(specials)];
      std::stable_sort(keys.begin(), keys.end(), before<Key>);
      return keys;
    };
    const auto a = draw(s.na);
    const auto b = draw(s.nb);
    const auto av = origins<std::uint32_t>(s.na, 0);
    const auto bv = origins<std::uint32_t>(s.nb, static_cast<std::uint64_t>(s.na));
    std::vector<Key> want_keys, keys;
    std::vector<std::uint32_t> want_values, values;
    reference_merge(a, av, b, bv, want_keys, want_values);
    gpu_merge_pairs(a, av, b, bv, keys, values);
    SCANLAB_EXPECT_SAME(keys, want_keys, describe(s, 0) + ": keys");
    SCANLAB_EXPECT_SAME(values, want_values, describe(s, 0) + ": values");
    // The documented facts, independently of the ordered bits: NaNs last, -0.0 and +0.0
    // equal (in origin order, a's first), the numbers ascending.
    const auto numbers =
        static_cast<std::size_t>(std::count_if(keys.begin(), keys.end(), [](Key x) { return !std::isnan(x); }));
    for (std::size_t i = 0; i < keys.size(); ++i) {
      ASSERT_EQ(std::isnan(keys[i]), i >= numbers) << i;
      if (i > 0 && i < numbers) {
        ASSERT_LE(keys[i - 1], keys[i]) << i;
        if (keys[i - 1] == keys[i]) ASSERT_LT(values[i - 1], values[i]) << "equal keys out of order at " << i;
      }
      if (i > numbers) ASSERT_LT(values[i - 1], values[i]) << "NaNs out of order at " << i;
    }
  }
}

class merge_floats : public scanlab::test::gpu_test {};
TEST_F(merge_floats, FloatSpecials) { float_specials_test<float>(); }
TEST_F(merge_floats, DoubleSpecials) { float_specials_test<double>(); }

// ---- arguments ----

class merge_arguments : public scanlab::test::gpu_test {};

TEST_F(merge_arguments, Refused) {
  using Key = std::uint32_t;
  device_buffer<Key> a(100), b(100), out(200);
  device_buffer<std::uint64_t> av(100), bv(100), out_values(200);
  std::size_t bytes = 0;
  // Negative sizes, also on a size query.
  EXPECT_EQ(scanlab::merge_keys(nullptr, bytes, a.data(), -1, b.data(), 100, out.data()), cudaErrorInvalidValue);
  EXPECT_EQ(scanlab::merge_keys(nullptr, bytes, a.data(), 100, b.data(), -5, out.data()), cudaErrorInvalidValue);
  EXPECT_EQ(scanlab::merge_pairs(nullptr, bytes, a.data(), av.data(), -1, b.data(), bv.data(), 0, out.data(),
                                 out_values.data()),
            cudaErrorInvalidValue);
  SCANLAB_CHECK(scanlab::merge_pairs(nullptr, bytes, a.data(), av.data(), 100, b.data(), bv.data(), 100, out.data(),
                                     out_values.data()));
  auto temp = garbage_temp(bytes);
  const auto pairs = [&](const Key* ka, const std::uint64_t* va, std::int64_t na, const Key* kb,
                         const std::uint64_t* vb, std::int64_t nb, Key* ko, std::uint64_t* vo) {
    return scanlab::merge_pairs(temp.data(), bytes, ka, va, na, kb, vb, nb, ko, vo);
  };
  // Null pointers where items are read or written.
  EXPECT_EQ(pairs(nullptr, av.data(), 100, b.data(), bv.data(), 100, out.data(), out_values.data()),
            cudaErrorInvalidValue);
  EXPECT_EQ(pairs(a.data(), nullptr, 100, b.data(), bv.data(), 100, out.data(), out_values.data()),
            cudaErrorInvalidValue);
  EXPECT_EQ(pairs(a.data(), av.data(), 100, nullptr, bv.data(), 100, out.data(), out_values.data()),
            cudaErrorInvalidValue);
  EXPECT_EQ(pairs(a.data(), av.data(), 100, b.data(), nullptr, 100, out.data(), out_values.data()),
            cudaErrorInvalidValue);
  EXPECT_EQ(pairs(a.data(), av.data(), 100, b.data(), bv.data(), 100, nullptr, out_values.data()),
            cudaErrorInvalidValue);
  EXPECT_EQ(pairs(a.data(), av.data(), 100, b.data(), bv.data(), 100, out.data(), nullptr), cudaErrorInvalidValue);
  // An empty side may be null; an empty merge may be all null.
  EXPECT_EQ(pairs(nullptr, nullptr, 0, b.data(), bv.data(), 100, out.data(), out_values.data()), cudaSuccess);
  EXPECT_EQ(pairs(nullptr, nullptr, 0, nullptr, nullptr, 0, nullptr, nullptr), cudaSuccess);
  // The output overlapping an input.
  EXPECT_EQ(pairs(out.data(), av.data(), 100, b.data(), bv.data(), 100, out.data(), out_values.data()),
            cudaErrorInvalidValue);
  EXPECT_EQ(pairs(a.data(), av.data(), 100, b.data(), out_values.data() + 100, 50, out.data(), out_values.data()),
            cudaErrorInvalidValue);
  // Too little temp storage.
  std::size_t key_bytes = 0;
  SCANLAB_CHECK(scanlab::merge_keys(nullptr, key_bytes, a.data(), 100, b.data(), 100, out.data()));
  auto key_temp = garbage_temp(key_bytes);
  std::size_t short_bytes = key_bytes - 1;
  EXPECT_EQ(scanlab::merge_keys(key_temp.data(), short_bytes, a.data(), 100, b.data(), 100, out.data()),
            cudaErrorInvalidValue);
  // n = 0: temp_bytes >= 1, success, nothing written.
  std::size_t empty_bytes = 0;
  SCANLAB_CHECK(scanlab::merge_keys(nullptr, empty_bytes, a.data(), 0, b.data(), 0, out.data()));
  EXPECT_GE(empty_bytes, 1u);
  EXPECT_EQ(scanlab::merge_keys(temp.data(), empty_bytes, a.data(), 0, b.data(), 0, out.data()), cudaSuccess);

  // Run offsets: none at all, not starting at 0, decreasing.
  auto big_temp = garbage_temp(std::size_t{1} << 20);  // more than any call below asks for
  const auto runs = [&](std::vector<std::int64_t> offsets, void* d_temp, const Key* in, Key* o) {
    std::size_t run_bytes = d_temp == nullptr ? 0 : std::size_t{1} << 20;
    return scanlab::merge_runs_keys(d_temp, run_bytes, in, std::span<const std::int64_t>(offsets), o);
  };
  EXPECT_EQ(runs({}, nullptr, a.data(), out.data()), cudaErrorInvalidValue);
  EXPECT_EQ(runs({1, 50}, nullptr, a.data(), out.data()), cudaErrorInvalidValue);
  EXPECT_EQ(runs({0, 50, 40, 100}, nullptr, a.data(), out.data()), cudaErrorInvalidValue);
  EXPECT_EQ(runs({0, -1}, nullptr, a.data(), out.data()), cudaErrorInvalidValue);
  EXPECT_EQ(runs({0, 50, 40, 100}, big_temp.data(), a.data(), out.data()), cudaErrorInvalidValue);
  // Nulls, overlap; zero runs and empty runs only are an empty input.
  EXPECT_EQ(runs({0, 50, 100}, big_temp.data(), nullptr, out.data()), cudaErrorInvalidValue);
  EXPECT_EQ(runs({0, 50, 100}, big_temp.data(), a.data(), nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(runs({0, 50, 100}, big_temp.data(), out.data() + 50, out.data()), cudaErrorInvalidValue);
  EXPECT_EQ(runs({0}, big_temp.data(), nullptr, nullptr), cudaSuccess);
  EXPECT_EQ(runs({0, 0, 0}, big_temp.data(), nullptr, nullptr), cudaSuccess);
  std::size_t run_bytes = 0;
  const std::int64_t offsets[] = {0, 40, 100};
  SCANLAB_CHECK(scanlab::merge_runs_pairs(nullptr, run_bytes, a.data(), av.data(), offsets, out.data(),
                                          out_values.data()));
  ASSERT_LE(run_bytes, std::size_t{1} << 20);
  EXPECT_EQ(scanlab::merge_runs_pairs(big_temp.data(), run_bytes, a.data(), static_cast<const std::uint64_t*>(nullptr),
                                      offsets, out.data(), out_values.data()),
            cudaErrorInvalidValue);
  EXPECT_EQ(scanlab::merge_runs_pairs(big_temp.data(), run_bytes, a.data(), av.data(), offsets, out.data(),
                                      av.data() + 10),
            cudaErrorInvalidValue);
  std::size_t short_run_bytes = run_bytes - 1;
  EXPECT_EQ(scanlab::merge_runs_pairs(big_temp.data(), short_run_bytes, a.data(), av.data(), offsets, out.data(),
                                      out_values.data()),
            cudaErrorInvalidValue);
  SCANLAB_CHECK(cudaDeviceSynchronize());
}

// ---- past 2^31 items ----

// Skips unless the device has `bytes` free (with a margin).
bool enough_memory(std::size_t bytes) {
  std::size_t free = 0, total = 0;
  SCANLAB_CHECK(cudaMemGetInfo(&free, &total));
  return free > bytes + (std::size_t{1} << 30);
}

// a and b: uint8 keys rising through all 256 values, a[i] = 256 i / na. The merge holds,
// for each value v, a's items of v (origins in order), then b's.
class merge_large : public scanlab::test::gpu_test {};

TEST_F(merge_large, LargeKeysAndPairs) {
  const std::int64_t na = (std::int64_t{1} << 31) + 3;
  const std::int64_t nb = (std::int64_t{1} << 30) + 12345;
  const std::int64_t n = na + nb;
  if (!enough_memory(static_cast<std::size_t>(n) * 10)) GTEST_SKIP() << "needs about 34 GB of GPU memory";
  const auto rising = [](std::int64_t count) {
    std::vector<std::uint8_t> keys(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i) {
      keys[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i * 256 / count);
    }
    return keys;
  };
  const auto a = rising(na);
  const auto b = rising(nb);
  // first[v]: the first index with key v (first[256] = count).
  const auto firsts = [](const std::vector<std::uint8_t>& keys) {
    std::vector<std::int64_t> first(257, static_cast<std::int64_t>(keys.size()));
    for (std::size_t i = keys.size(); i-- > 0;) first[keys[i]] = static_cast<std::int64_t>(i);
    for (int v = 255; v >= 0; --v) first[v] = std::min(first[v], first[v + 1]);
    return first;
  };
  const auto fa = firsts(a);
  const auto fb = firsts(b);

  device_buffer<std::uint8_t> d_a{std::span<const std::uint8_t>(a)};
  device_buffer<std::uint8_t> d_b{std::span<const std::uint8_t>(b)};
  device_buffer<std::uint8_t> out(n);
  {
    std::size_t bytes = 0;
    SCANLAB_CHECK(scanlab::merge_keys(nullptr, bytes, d_a.data(), na, d_b.data(), nb, out.data()));
    auto temp = garbage_temp(bytes);
    SCANLAB_CHECK(scanlab::merge_keys(temp.data(), bytes, d_a.data(), na, d_b.data(), nb, out.data()));
    const auto keys = out.to_host();
    std::int64_t at = 0;
    for (int v = 0; v < 256; ++v) {
      const std::int64_t end = at + (fa[v + 1] - fa[v]) + (fb[v + 1] - fb[v]);
      for (; at < end; ++at) {
        if (keys[static_cast<std::size_t>(at)] != v) {
          FAIL() << "key at " << at << " is " << int(keys[at]) << ", want " << v;
        }
      }
    }
    ASSERT_EQ(at, n);
  }
  // Pairs: the values are origins (a: i, b: na + j), so where each item came from shows.
  {
    device_buffer<std::uint32_t> values(n);  // a's origins, then b's: one buffer, two views
    const auto all = origins<std::uint32_t>(n, 0);
    values.copy_from(std::span<const std::uint32_t>(all));
    device_buffer<std::uint32_t> out_values(n);
    out.fill_bytes(0xa5);
    std::size_t bytes = 0;
    const auto call = [&](void* temp) {
      return scanlab::merge_pairs(temp, bytes, d_a.data(), values.data(), na, d_b.data(), values.data() + na, nb,
                                  out.data(), out_values.data());
    };
    SCANLAB_CHECK(call(nullptr));
    auto temp = garbage_temp(bytes);
    SCANLAB_CHECK(call(temp.data()));
    const auto keys = out.to_host();
    const auto got = out_values.to_host();
    std::int64_t at = 0;
    for (int v = 0; v < 256; ++v) {
      for (std::int64_t i = fa[v]; i < fa[v + 1]; ++i, ++at) {
        if (keys[at] != v || got[at] != static_cast<std::uint32_t>(i)) {
          FAIL() << "at " << at << ": key " << int(keys[at]) << " value " << got[at] << ", want a's " << i;
        }
      }
      for (std::int64_t j = fb[v]; j < fb[v + 1]; ++j, ++at) {
        if (keys[at] != v || got[at] != static_cast<std::uint32_t>(na + j)) {
          FAIL() << "at " << at << ": key " << int(keys[at]) << " value " << got[at] << ", want b's " << j;
        }
      }
    }
    ASSERT_EQ(at, n);
  }
}

}  // namespace
