// Test bodies for the radix sort, shared by one translation unit per key width
// (test_sort_<bits>.cu stamps SCANLAB_SORT_TESTS for each key type it holds).
//
// Every GPU result is compared bit for bit with std::stable_sort on the CPU under the
// documented order (NaN last, -0.0 == +0.0, bit ranges on the ordered bits), and keys with
// cub::DeviceRadixSort on the same device input where CUB's order is the same (no NaN and
// no -0.0 in the data). Both implementations (onesweep, multipass), both orders. Output
// buffers are poisoned and temp storage filled with garbage before each run.
#pragma once

#include "common/device_buffer.hpp"
#include "common/generate.hpp"
#include "common/gpu_test.hpp"
#include "common/test_util.hpp"

#include <scanlab/algorithms/radix_sort.cuh>
#include <scanlab/error.hpp>

#include <cub/device/device_radix_sort.cuh>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace scanlab::test::sort {

using radix_sort_detail::key_bits_t;

inline constexpr radix_sort_algorithm all_algorithms[] = {radix_sort_algorithm::onesweep,
                                                         radix_sort_algorithm::multipass};

inline const char* name(radix_sort_algorithm a) { return a == radix_sort_algorithm::onesweep ? "onesweep" : "multipass"; }

inline std::string describe(const radix_sort_options& o, std::int64_t n) {
  return std::string(name(o.algorithm)) + (o.descending ? " descending" : " ascending") + " bits [" +
         std::to_string(o.begin_bit) + ", " + std::to_string(o.end_bit) + ") n = " + std::to_string(n);
}

// ---- the CPU reference ----

// The documented order on whole keys, written independently of the library's transform.
template <class Key>
bool key_before(Key a, Key b, bool descending) {
  if constexpr (std::is_floating_point_v<Key>) {
    if (std::isnan(a)) return false;  // NaN: after everything, equal to NaN
    if (std::isnan(b)) return true;
  }
  return descending ? b < a : a < b;  // -0.0 < +0.0 is false both ways: equal
}

// The stable sorting permutation under `o`: whole keys use key_before; a bit range
// compares those bits of the ordered bits (the definition of a bit range).
template <class Key>
std::vector<std::int64_t> reference_permutation(const std::vector<Key>& keys, const radix_sort_options& o) {
  constexpr int width = 8 * static_cast<int>(sizeof(Key));
  const int end_bit = o.end_bit < 0 ? width : o.end_bit;
  std::vector<std::int64_t> order(keys.size());
  std::iota(order.begin(), order.end(), std::int64_t{0});
  if (o.begin_bit == 0 && end_bit == width) {
    std::stable_sort(order.begin(), order.end(),
                     [&](std::int64_t a, std::int64_t b) { return key_before(keys[a], keys[b], o.descending); });
  } else {
    using Bits = key_bits_t<Key>;
    const int bits = end_bit - o.begin_bit;
    const std::uint64_t mask = bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
    const auto field = [&](std::int64_t i) -> std::uint64_t {
      const Bits ordered = radix_sort_detail::ordered_bits(keys[i], o.descending);
      return bits == 0 ? 0 : (static_cast<std::uint64_t>(ordered) >> o.begin_bit) & mask;
    };
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return field(a) < field(b); });
  }
  return order;
}

template <class T>
bool same_bits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// The first position where got differs from want (bitwise), or -1.
template <class T>
std::int64_t first_difference(const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size()) return 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!same_bits(got[i], want[i])) return static_cast<std::int64_t>(i);
  }
  return -1;
}

template <class T>
std::string show(const std::vector<T>& v, std::int64_t at) {
  if (at < 0 || at >= static_cast<std::int64_t>(v.size())) return "(none)";
  if constexpr (sizeof(T) == 1) return std::to_string(static_cast<int>(v[at]));
  else return std::to_string(v[at]);
}

#define SCANLAB_EXPECT_SAME(got, want, what)                                                                       \
  do {                                                                                                             \
    const std::int64_t at_ = ::scanlab::test::sort::first_difference(got, want);                                   \
    EXPECT_EQ(at_, -1) << (what) << ": first difference at " << at_ << ": got "                                    \
                       << ::scanlab::test::sort::show(got, at_) << ", want " << ::scanlab::test::sort::show(want, at_); \
  } while (0)

// ---- running the GPU sorts ----

// Temp storage of the asked size filled with garbage (nothing may rely on zeros).
inline device_buffer<unsigned char> garbage_temp(std::size_t bytes) {
  device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
  temp.fill_bytes(0x5b);
  return temp;
}

template <class Key>
std::vector<Key> gpu_sort_keys(const std::vector<Key>& keys, const radix_sort_options& o) {
  const auto n = static_cast<std::int64_t>(keys.size());
  device_buffer<Key> in{std::span<const Key>(keys)};
  device_buffer<Key> out(n);
  out.fill_bytes(0xa5);
  std::size_t bytes = 0;
  SCANLAB_CHECK(radix_sort_keys(nullptr, bytes, in.data(), out.data(), n, o));
  auto temp = garbage_temp(bytes);
  SCANLAB_CHECK(radix_sort_keys(temp.data(), bytes, in.data(), out.data(), n, o));
  SCANLAB_CHECK(cudaDeviceSynchronize());
  return out.to_host();
}

template <class Key, class Value>
std::pair<std::vector<Key>, std::vector<Value>> gpu_sort_pairs(const std::vector<Key>& keys,
                                                               const std::vector<Value>& values,
                                                               const radix_sort_options& o) {
  const auto n = static_cast<std::int64_t>(keys.size());
  device_buffer<Key> in{std::span<const Key>(keys)};
  device_buffer<Value> values_in{std::span<const Value>(values)};
  device_buffer<Key> out(n);
  device_buffer<Value> values_out(n);
  out.fill_bytes(0xa5);
  values_out.fill_bytes(0xa5);
  std::size_t bytes = 0;
  SCANLAB_CHECK(radix_sort_pairs(nullptr, bytes, in.data(), out.data(), values_in.data(), values_out.data(), n, o));
  auto temp = garbage_temp(bytes);
  SCANLAB_CHECK(radix_sort_pairs(temp.data(), bytes, in.data(), out.data(), values_in.data(), values_out.data(), n, o));
  SCANLAB_CHECK(cudaDeviceSynchronize());
  return {out.to_host(), values_out.to_host()};
}

template <class Index, class Key>
std::vector<Index> gpu_argsort(const std::vector<Key>& keys, const radix_sort_options& o,
                               std::vector<Key>* sorted_keys = nullptr) {
  const auto n = static_cast<std::int64_t>(keys.size());
  device_buffer<Key> in{std::span<const Key>(keys)};
  device_buffer<Index> permutation(n);
  device_buffer<Key> out(sorted_keys != nullptr ? n : 0);
  permutation.fill_bytes(0xa5);
  out.fill_bytes(0xa5);
  Key* keys_out = sorted_keys != nullptr ? out.data() : nullptr;
  std::size_t bytes = 0;
  SCANLAB_CHECK(radix_argsort(nullptr, bytes, in.data(), permutation.data(), n, o, nullptr, keys_out));
  auto temp = garbage_temp(bytes);
  SCANLAB_CHECK(radix_argsort(temp.data(), bytes, in.data(), permutation.data(), n, o, nullptr, keys_out));
  SCANLAB_CHECK(cudaDeviceSynchronize());
  if (sorted_keys != nullptr) *sorted_keys = out.to_host();
  return permutation.to_host();
}

// CUB's keys for the same input (whole keys; the bit range maps to CUB's begin/end bits).
template <class Key>
std::vector<Key> cub_sort_keys(const std::vector<Key>& keys, const radix_sort_options& o) {
  const auto n = static_cast<std::int64_t>(keys.size());
  device_buffer<Key> in{std::span<const Key>(keys)};
  device_buffer<Key> out(n);
  const int end_bit = o.end_bit < 0 ? 8 * static_cast<int>(sizeof(Key)) : o.end_bit;
  std::size_t bytes = 0;
  const auto call = [&](void* temp) {
    return o.descending ? cub::DeviceRadixSort::SortKeysDescending(temp, bytes, in.data(), out.data(), n,
                                                                   o.begin_bit, end_bit)
                        : cub::DeviceRadixSort::SortKeys(temp, bytes, in.data(), out.data(), n, o.begin_bit, end_bit);
  };
  SCANLAB_CHECK(call(nullptr));
  device_buffer<unsigned char> temp(static_cast<std::int64_t>(std::max<std::size_t>(bytes, 1)));
  SCANLAB_CHECK(call(temp.data()));
  SCANLAB_CHECK(cudaDeviceSynchronize());
  return out.to_host();
}

// CUB orders NaNs by their sign bit and may not treat -0.0 as +0.0: compare only without them.
template <class Key>
bool cub_comparable(const std::vector<Key>& keys) {
  if constexpr (std::is_floating_point_v<Key>) {
    for (const Key k : keys) {
      if (std::isnan(k) || (k == Key(0) && std::signbit(k))) return false;
    }
  }
  return true;
}

template <class T>
std::vector<T> gather(const std::vector<T>& v, const std::vector<std::int64_t>& order) {
  std::vector<T> out(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) out[i] = v[static_cast<std::size_t>(order[i])];
  return out;
}

// ---- data ----

// Keys over the whole bit range of Key (floats: random bit patterns that are numbers,
// both signs, wide exponents), with a share of repeats so that ties are common.
template <class Key>
std::vector<Key> random_keys(std::int64_t n, std::uint64_t seed, int distinct = 0) {
  std::mt19937_64 rng(seed);
  using Bits = key_bits_t<Key>;
  std::vector<Key> pool;
  if (distinct > 0) {
    for (int i = 0; i < distinct; ++i) pool.push_back(random_keys<Key>(1, rng())[0]);
  }
  std::vector<Key> out(static_cast<std::size_t>(n));
  for (auto& k : out) {
    if (!pool.empty()) {
      k = pool[rng() % pool.size()];
      continue;
    }
    Bits bits = static_cast<Bits>(rng());
    if constexpr (std::is_floating_point_v<Key>) {
      std::memcpy(&k, &bits, sizeof(Key));
      while (std::isnan(k) || (k == Key(0) && std::signbit(k))) {
        bits = static_cast<Bits>(rng());
        std::memcpy(&k, &bits, sizeof(Key));
      }
    } else {
      std::memcpy(&k, &bits, sizeof(Key));
    }
  }
  return out;
}

template <class Value>
std::vector<Value> random_values(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Value> out(static_cast<std::size_t>(n));
  for (auto& v : out) v = static_cast<Value>(rng());
  return out;
}

// Tile sizes of the two implementations for Key: sizes around their boundaries matter.
template <class Key>
std::vector<std::int64_t> test_sizes(std::uint64_t seed) {
  constexpr int key_bytes = static_cast<int>(sizeof(Key));
  std::vector<std::int64_t> sizes = boundary_sizes(radix_sort_detail::onesweep_policy<key_bytes>::tile_items, 3);
  // Pairs and argsort use other onesweep tiles.
  for (std::int64_t s : boundary_sizes(radix_sort_detail::onesweep_policy<key_bytes, 4>::tile_items, 2)) sizes.push_back(s);
  for (std::int64_t s : boundary_sizes(radix_sort_detail::onesweep_policy<key_bytes, 8>::tile_items, 2)) sizes.push_back(s);
  for (std::int64_t s : boundary_sizes(radix_sort_detail::multipass_policy::tile_items, 2)) sizes.push_back(s);
  for (std::int64_t s : random_sizes(4, 400000, seed)) sizes.push_back(s);
  sizes.push_back(3000017);  // hundreds of tiles: long look-back chains
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return capped(sizes);
}

// ---- test bodies ----

// Keys, both orders, both implementations, every size: CPU reference and CUB.
template <class Key>
void keys_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  for (const std::int64_t n : test_sizes<Key>(seed)) {
    const auto keys = random_keys<Key>(n, seed + static_cast<std::uint64_t>(n));
    for (const bool descending : {false, true}) {
      radix_sort_options o;
      o.descending = descending;
      const auto want = gather(keys, reference_permutation(keys, o));
      const auto cub = cub_sort_keys(keys, o);
      SCANLAB_EXPECT_SAME(cub, want, "CUB vs CPU " + describe(o, n));
      for (const auto algorithm : all_algorithms) {
        o.algorithm = algorithm;
        SCANLAB_EXPECT_SAME(gpu_sort_keys(keys, o), want, describe(o, n));
      }
    }
  }
}

// Pairs with many equal keys: the values (input positions, and random 8-byte values) must
// come out in the stable order.
template <class Key>
void pairs_stability_test() {
  const std::uint64_t seed = test_seed() + 1;
  SCOPED_TRACE(seed_trace(seed));
  for (const std::int64_t n : capped({1, 2, 33, 4095, 4097, 100003, 1000003})) {
    const auto keys = random_keys<Key>(n, seed + static_cast<std::uint64_t>(n), 7);
    std::vector<std::uint32_t> positions(static_cast<std::size_t>(n));
    std::iota(positions.begin(), positions.end(), 0u);
    const auto wide = random_values<std::uint64_t>(n, seed ^ 0x9e37u);
    for (const bool descending : {false, true}) {
      for (const auto algorithm : all_algorithms) {
        radix_sort_options o;
        o.descending = descending;
        o.algorithm = algorithm;
        const auto order = reference_permutation(keys, o);
        const auto [k4, v4] = gpu_sort_pairs(keys, positions, o);
        SCANLAB_EXPECT_SAME(k4, gather(keys, order), "keys, 4-byte values, " + describe(o, n));
        SCANLAB_EXPECT_SAME(v4, gather(positions, order), "4-byte values, " + describe(o, n));
        const auto [k8, v8] = gpu_sort_pairs(keys, wide, o);
        SCANLAB_EXPECT_SAME(k8, gather(keys, order), "keys, 8-byte values, " + describe(o, n));
        SCANLAB_EXPECT_SAME(v8, gather(wide, order), "8-byte values, " + describe(o, n));
      }
    }
  }
}

// The permutation, 32- and 64-bit indices, with and without the sorted keys.
template <class Key>
void argsort_test() {
  const std::uint64_t seed = test_seed() + 2;
  SCOPED_TRACE(seed_trace(seed));
  for (const std::int64_t n : capped({1, 5, 4096, 12289, 250001})) {
    const auto keys = random_keys<Key>(n, seed + static_cast<std::uint64_t>(n), n > 100 ? 50 : 0);
    for (const bool descending : {false, true}) {
      for (const auto algorithm : all_algorithms) {
        radix_sort_options o;
        o.descending = descending;
        o.algorithm = algorithm;
        const auto order = reference_permutation(keys, o);
        std::vector<Key> sorted;
        const auto p64 = gpu_argsort<std::int64_t>(keys, o, &sorted);
        SCANLAB_EXPECT_SAME(p64, order, "int64 permutation, " + describe(o, n));
        SCANLAB_EXPECT_SAME(sorted, gather(keys, order), "keys with argsort, " + describe(o, n));
        const auto p32 = gpu_argsort<std::uint32_t>(keys, o);
        std::vector<std::uint32_t> order32(order.begin(), order.end());
        SCANLAB_EXPECT_SAME(p32, order32, "uint32 permutation, " + describe(o, n));
      }
    }
  }
}

// Bit ranges: keys against the CPU and CUB, pairs against the CPU.
template <class Key>
void bit_range_test() {
  constexpr int width = 8 * static_cast<int>(sizeof(Key));
  const std::uint64_t seed = test_seed() + 3;
  SCOPED_TRACE(seed_trace(seed));
  const std::vector<std::pair<int, int>> ranges = {
      {0, 0}, {0, 3}, {3, 5}, {1, width}, {width / 2, width}, {width - 5, width}, {4, 4 + std::min(12, width - 4)},
      {width, width}};
  for (const std::int64_t n : capped({1, 7777, 70001})) {
    const auto keys = random_keys<Key>(n, seed + static_cast<std::uint64_t>(n));
    std::vector<std::uint32_t> positions(static_cast<std::size_t>(n));
    std::iota(positions.begin(), positions.end(), 0u);
    for (const auto& [begin, end] : ranges) {
      for (const bool descending : {false, true}) {
        radix_sort_options o;
        o.descending = descending;
        o.begin_bit = begin;
        o.end_bit = end;
        const auto order = reference_permutation(keys, o);
        const auto want = gather(keys, order);
        if (begin < end) SCANLAB_EXPECT_SAME(cub_sort_keys(keys, o), want, "CUB vs CPU " + describe(o, n));
        for (const auto algorithm : all_algorithms) {
          o.algorithm = algorithm;
          SCANLAB_EXPECT_SAME(gpu_sort_keys(keys, o), want, describe(o, n));
          const auto [k, v] = gpu_sort_pairs(keys, positions, o);
          SCANLAB_EXPECT_SAME(v, gather(positions, order), "values, " + describe(o, n));
          // 64-bit indices: onesweep's last pass writes them widened (one pass, an even
          // and an odd number of passes, the empty range among the ranges above).
          SCANLAB_EXPECT_SAME(gpu_argsort<std::int64_t>(keys, o), order, "int64 argsort, " + describe(o, n));
        }
      }
    }
  }
}

// Every distribution of the dataset generator.
template <class Key>
void distributions_test() {
  const std::uint64_t seed = test_seed() + 4;
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t n = std::min<std::int64_t>(300007, max_test_n());
  for (const auto dist : gen::all_distributions) {
    gen::spec spec;
    spec.dist = dist;
    spec.seed = seed;
    const auto array = gen::generate_array(spec, io::dtype_of<Key>(), n);
    const auto span = array.as<Key>();
    const std::vector<Key> keys(span.begin(), span.end());
    std::vector<std::uint32_t> positions(static_cast<std::size_t>(n));
    std::iota(positions.begin(), positions.end(), 0u);
    for (const bool descending : {false, true}) {
      radix_sort_options o;
      o.descending = descending;
      const auto order = reference_permutation(keys, o);
      const auto want = gather(keys, order);
      const std::string what = std::string(gen::name(dist)) + ", ";
      if (cub_comparable(keys)) SCANLAB_EXPECT_SAME(cub_sort_keys(keys, o), want, what + "CUB vs CPU " + describe(o, n));
      for (const auto algorithm : all_algorithms) {
        o.algorithm = algorithm;
        SCANLAB_EXPECT_SAME(gpu_sort_keys(keys, o), want, what + describe(o, n));
        const auto [k, v] = gpu_sort_pairs(keys, positions, o);
        SCANLAB_EXPECT_SAME(v, gather(positions, order), what + "values, " + describe(o, n));
      }
    }
  }
}

// Floats: -0.0 and +0.0 keep their input order; NaNs of both signs and any payload come
// last in input order; infinities and subnormals in their places.
template <class Key>
void float_specials_test() {
  static_assert(std::is_floating_point_v<Key>);
  using Bits = key_bits_t<Key>;
  const std::uint64_t seed = test_seed() + 5;
  SCOPED_TRACE(seed_trace(seed));
  const Key nan = std::numeric_limits<Key>::quiet_NaN();
  Key negative_nan = -nan;
  Bits payload_bits;
  std::memcpy(&payload_bits, &nan, sizeof(Key));
  payload_bits |= 5;  // a NaN with a payload
  Key payload_nan;
  std::memcpy(&payload_nan, &payload_bits, sizeof(Key));
  const Key specials[] = {Key(0), -Key(0), nan, negative_nan, payload_nan, std::numeric_limits<Key>::infinity(),
                          -std::numeric_limits<Key>::infinity(), std::numeric_limits<Key>::denorm_min(),
                          -std::numeric_limits<Key>::denorm_min(), Key(1), Key(-1)};
  std::mt19937_64 rng(seed);
  for (const std::int64_t n : capped({11, 4000, 9001, 200003})) {
    std::vector<Key> keys(static_cast<std::size_t>(n));
    for (auto& k : keys) k = specials[rng() % std::size(specials)];
    std::vector<std::uint32_t> positions(static_cast<std::size_t>(n));
    std::iota(positions.begin(), positions.end(), 0u);
    for (const bool descending : {false, true}) {
      for (const auto algorithm : all_algorithms) {
        radix_sort_options o;
        o.descending = descending;
        o.algorithm = algorithm;
        const auto order = reference_permutation(keys, o);
        const auto [k, v] = gpu_sort_pairs(keys, positions, o);
        SCANLAB_EXPECT_SAME(k, gather(keys, order), "keys, " + describe(o, n));
        SCANLAB_EXPECT_SAME(v, gather(positions, order), "values, " + describe(o, n));
        // The documented facts, spelled out: NaNs last, zeros in input order.
        const std::size_t numbers =
            static_cast<std::size_t>(std::count_if(keys.begin(), keys.end(), [](Key x) { return !std::isnan(x); }));
        for (std::size_t i = 0; i < k.size(); ++i) ASSERT_EQ(std::isnan(k[i]), i >= numbers) << describe(o, n);
        std::uint32_t last_zero = 0;
        bool seen_zero = false;
        for (std::size_t i = 0; i < k.size(); ++i) {
          if (k[i] == Key(0)) {
            if (seen_zero) ASSERT_LT(last_zero, v[i]) << "zeros out of input order, " << describe(o, n);
            last_zero = v[i];
            seen_zero = true;
          }
        }
      }
    }
  }
}

// Wrong arguments are reported, not run.
template <class Key>
void argument_test() {
  constexpr int width = 8 * static_cast<int>(sizeof(Key));
  std::size_t bytes = 0;
  const Key* in = nullptr;
  Key* out = nullptr;
  for (const auto& [begin, end] : std::vector<std::pair<int, int>>{{-1, 8}, {5, 4}, {0, width + 1}}) {
    radix_sort_options o;
    o.begin_bit = begin;
    o.end_bit = end;
    EXPECT_EQ(radix_sort_keys(nullptr, bytes, in, out, 100, o), cudaErrorInvalidValue) << begin << ", " << end;
  }
  EXPECT_EQ(radix_sort_keys(nullptr, bytes, in, out, -1), cudaErrorInvalidValue);
  std::uint32_t* permutation = nullptr;
  EXPECT_EQ(radix_argsort(nullptr, bytes, in, permutation, (std::int64_t{1} << 32) + 1), cudaErrorInvalidValue);
  // Too little temp storage.
  device_buffer<Key> keys(1000);
  device_buffer<Key> sorted(1000);
  SCANLAB_CHECK(radix_sort_keys(nullptr, bytes, keys.data(), sorted.data(), 1000));
  device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
  std::size_t short_bytes = bytes - 1;
  EXPECT_EQ(radix_sort_keys(temp.data(), short_bytes, keys.data(), sorted.data(), 1000), cudaErrorInvalidValue);
  // n = 0: nothing to do, success.
  SCANLAB_CHECK(radix_sort_keys(nullptr, bytes, keys.data(), sorted.data(), 0));
  EXPECT_GE(bytes, 1u);
  EXPECT_EQ(radix_sort_keys(temp.data(), bytes, keys.data(), sorted.data(), 0), cudaSuccess);
}

}  // namespace scanlab::test::sort

#define SCANLAB_SORT_TESTS(Fixture, Key)                                                   \
  class Fixture : public ::scanlab::test::gpu_test {};                                     \
  TEST_F(Fixture, Keys) { ::scanlab::test::sort::keys_test<Key>(); }                       \
  TEST_F(Fixture, PairsStability) { ::scanlab::test::sort::pairs_stability_test<Key>(); }  \
  TEST_F(Fixture, Argsort) { ::scanlab::test::sort::argsort_test<Key>(); }                 \
  TEST_F(Fixture, BitRanges) { ::scanlab::test::sort::bit_range_test<Key>(); }             \
  TEST_F(Fixture, Distributions) { ::scanlab::test::sort::distributions_test<Key>(); }     \
  TEST_F(Fixture, Arguments) { ::scanlab::test::sort::argument_test<Key>(); }
