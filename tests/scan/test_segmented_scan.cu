// Segmented scans (scan by key, scan by offsets): integer sums against the CPU and CUB, a
// wider accumulator with an initial value, one-byte values, float sums, NaN-aware maxima,
// a non-commutative operator, hostile offsets and keys, in place, determinism, the API
// contract.
#include "scan/segmented_scan_test_common.cuh"

#include <limits>

namespace {

using namespace scanlab::test::segmented;
using scanlab::device_buffer;
using scanlab::test::random_values;

class segmented_scan : public scanlab::test::gpu_test {};

template <class T>
std::vector<T> bounded(std::int64_t n, std::uint64_t seed) {
  return random_values<T>(n, seed);
}
template <class T>
std::vector<T> full_range(std::int64_t n, std::uint64_t seed) {
  return random_values<T>(n, seed, false);
}
// Floats with a NaN in about one item of 500 and signed zeros.
std::vector<double> with_nans(std::int64_t n, std::uint64_t seed) {
  std::vector<double> x = random_values<double>(n, seed);
  std::mt19937_64 rng(seed + 7);
  for (auto& v : x) {
    const auto r = rng() % 1000;
    if (r < 2) v = std::numeric_limits<double>::quiet_NaN();
    else if (r < 4) v = r == 2 ? 0.0 : -0.0;
  }
  return x;
}

// 2x2 matrices mod 2^32, multiplied earlier * later: exact, associative, not commutative
// (flagged, 20 bytes: element-wise loads and the item-by-item parking).
struct mat2u {
  std::uint32_t m00, m01, m10, m11;
  friend bool operator==(const mat2u&, const mat2u&) = default;
};
struct mat2u_multiply {
  __host__ __device__ mat2u operator()(const mat2u& l, const mat2u& r) const {
    return {l.m00 * r.m00 + l.m01 * r.m10, l.m00 * r.m01 + l.m01 * r.m11, l.m10 * r.m00 + l.m11 * r.m10,
            l.m10 * r.m01 + l.m11 * r.m11};
  }
};
std::vector<mat2u> matrices(std::int64_t n, std::uint64_t seed) {
  const std::vector<std::uint32_t> raw = random_values<std::uint32_t>(4 * n, seed, false);
  std::vector<mat2u> m(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < m.size(); ++i) m[i] = {raw[4 * i], raw[4 * i + 1], raw[4 * i + 2], raw[4 * i + 3]};
  return m;
}

TEST_F(segmented_scan, Int32SumsAgainstCpuAndCub) {
  shapes_test<std::int32_t, std::int32_t, std::int32_t>(-17, scanlab::plus{}, true, false, bounded<std::int32_t>);
}

// int32 data summed in int64 from an initial value no int32 holds; uint8 keys (wrapping).
TEST_F(segmented_scan, Int32IntoInt64WithInit) {
  shapes_test<std::int32_t, std::int64_t, std::uint8_t>(std::int64_t{5'000'000'000}, scanlab::plus{}, false, false,
                                                        full_range<std::int32_t>);
}

// One-byte values and results (sums wrap mod 256, as in CUB); 64-bit keys.
TEST_F(segmented_scan, Uint8SumsWrap) {
  shapes_test<std::uint8_t, std::uint8_t, std::int64_t>(std::uint8_t{200}, scanlab::plus{}, true, false,
                                                        full_range<std::uint8_t>);
}

TEST_F(segmented_scan, FloatSums) {
  shapes_test<float, float, std::uint32_t>(0.25f, scanlab::plus{}, false, true, bounded<float>);
}

// NaN-aware maxima of doubles with NaNs and signed zeros, 16-bit keys (wrapping).
TEST_F(segmented_scan, DoubleMaxWithNans) {
  shapes_test<double, double, std::uint16_t>(-std::numeric_limits<double>::infinity(), scanlab::maximum{}, true,
                                             false, with_nans);
}

TEST_F(segmented_scan, NonCommutativeMatrices) {
  shapes_test<mat2u, mat2u, std::uint32_t>(mat2u{3, 1, 4, 1}, mat2u_multiply{}, false, false, matrices);
}

// Float keys are compared with ==: a NaN key is a segment of its own, -0.0 and +0.0 are one
// key.
TEST_F(segmented_scan, FloatKeysWithNans) {
  const std::int64_t n = 100003;
  std::vector<float> keys(n);
  std::mt19937_64 rng(scanlab::test::test_seed());
  for (std::int64_t i = 0; i < n; ++i) {
    const auto r = rng() % 10;
    keys[i] = r == 0 ? std::numeric_limits<float>::quiet_NaN() : r == 1 ? -0.0f : r == 2 ? 0.0f : float(i / 50);
  }
  std::vector<char> heads(n);
  for (std::int64_t i = 0; i < n; ++i) heads[i] = i == 0 || !(keys[i - 1] == keys[i]);
  const std::vector<std::int32_t> x = bounded<std::int32_t>(n, 3);
  device_buffer<float> d_keys{std::span<const float>(keys)};
  device_buffer<std::int32_t> d_in{std::span<const std::int32_t>(x)}, d_out(n);
  const auto want = reference<std::int32_t>(x, heads, kind::inclusive, 0, scanlab::plus{});
  expect_matches(run<std::int32_t>(d_in.data(), d_out.data(), n, d_keys.data(),
                                   static_cast<const std::int64_t*>(nullptr), 0, kind::inclusive, 0, scanlab::plus{},
                                   {}),
                 want, x, heads, false, "float keys");
  expect_matches(run_cub(d_in.data(), d_out.data(), n, d_keys.data(), kind::inclusive, 0, scanlab::plus{}), want, x,
                 heads, false, "CUB, float keys");
}

// Offsets out of order, repeated, negative, at and past n: each value in [0, n) marks a
// boundary, the others nothing.
TEST_F(segmented_scan, HostileOffsets) {
  const std::int64_t n = 70001;
  const std::vector<std::int64_t> offsets = {n,     -5,    40000, 3,  3,    n + 9, 4096, 0,  69999,
                                             40000, 12345, 1,     -1, 8191, 8192,  4095, 70000};
  std::vector<char> heads(n, 0);
  heads[0] = 1;
  for (const std::int64_t o : offsets) {
    if (o >= 0 && o < n) heads[o] = 1;
  }
  const std::vector<std::int32_t> x = bounded<std::int32_t>(n, 11);
  device_buffer<std::int32_t> d_in{std::span<const std::int32_t>(x)}, d_out(n);
  device_buffer<std::int64_t> d_offsets{std::span<const std::int64_t>(offsets)};
  for (const kind k : all_kinds) {
    const auto want = reference<std::int32_t>(x, heads, k, 9, scanlab::plus{});
    expect_matches(run<std::int32_t>(d_in.data(), d_out.data(), n, static_cast<const std::int32_t*>(nullptr),
                                     d_offsets.data(), static_cast<std::int64_t>(offsets.size()) - 1, k, 9,
                                     scanlab::plus{}, {}),
                   want, x, heads, false, std::string("hostile offsets, ") + name(k));
  }
  // No segments at all (one offset, n: it marks nothing): one segment from 0.
  std::vector<char> one(n, 0);
  one[0] = 1;
  expect_matches(run<std::int32_t>(d_in.data(), d_out.data(), n, static_cast<const std::int32_t*>(nullptr),
                                   d_offsets.data(), 0, kind::exclusive, 9, scanlab::plus{}, {}),
                 reference<std::int32_t>(x, one, kind::exclusive, 9, scanlab::plus{}), x, one, false,
                 "zero segments");
}

// Inclusive scans in place (d_out == d_in), by key and by offsets.
TEST_F(segmented_scan, InPlaceInclusive) {
  const std::int64_t n = 123457;
  const std::vector<char> heads = make_heads(n, 50, 5);
  const std::vector<std::int64_t> x = bounded<std::int64_t>(n, 6);
  const auto keys = keys_from_heads<std::int32_t>(heads);
  const auto offsets = offsets_from_heads(heads);
  const auto want = reference<std::int64_t>(x, heads, kind::inclusive, 0, scanlab::plus{});
  device_buffer<std::int32_t> d_keys{std::span<const std::int32_t>(keys)};
  device_buffer<std::int64_t> d_offsets{std::span<const std::int64_t>(offsets)};
  for (const bool by_key : {true, false}) {
    device_buffer<std::int64_t> d_x{std::span<const std::int64_t>(x)};
    std::size_t bytes = 0;
    const auto call = [&](void* temp) {
      return by_key ? scanlab::inclusive_scan_by_key(temp, bytes, d_keys.data(), d_x.data(), d_x.data(), n,
                                                     scanlab::plus{})
                    : scanlab::inclusive_segmented_scan(temp, bytes, d_x.data(), d_x.data(), n,
                                                        static_cast<std::int64_t>(offsets.size()) - 1,
                                                        d_offsets.data(), scanlab::plus{});
    };
    SCANLAB_CHECK(call(nullptr));
    device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
    SCANLAB_CHECK(call(temp.data()));
    expect_matches(d_x.to_host(), want, x, heads, false, by_key ? "in place, by key" : "in place, by offsets");
  }
}

// Float sums give the same bits in every launch mode and on every run.
TEST_F(segmented_scan, FloatBitsAreDeterministic) {
  const std::int64_t n = 3'000'017;
  const std::vector<char> heads = make_heads(n, 20000, 8);
  const std::vector<float> x = random_values<float>(n, 9);
  const auto keys = keys_from_heads<std::int32_t>(heads);
  device_buffer<std::int32_t> d_keys{std::span<const std::int32_t>(keys)};
  device_buffer<float> d_in{std::span<const float>(x)}, d_out(n);
  const auto first = run<float>(d_in.data(), d_out.data(), n, d_keys.data(), static_cast<const std::int64_t*>(nullptr),
                                0, kind::inclusive, 0.0f, scanlab::plus{}, {});
  for (int r = 0; r < 3; ++r) {
    for (const auto& [mode, options] : modes()) {
      const auto again = run<float>(d_in.data(), d_out.data(), n, d_keys.data(),
                                    static_cast<const std::int64_t*>(nullptr), 0, kind::inclusive, 0.0f,
                                    scanlab::plus{}, options);
      ASSERT_EQ(std::memcmp(first.data(), again.data(), first.size() * sizeof(float)), 0) << mode << ", run " << r;
    }
  }
}

TEST_F(segmented_scan, ApiContract) {
  const std::int32_t* in = nullptr;
  std::int32_t* out = nullptr;
  const std::int32_t* keys = nullptr;
  const std::int64_t* offsets = nullptr;
  const scanlab::plus op{};
  std::size_t bytes = 0;
  EXPECT_EQ(scanlab::inclusive_scan_by_key(nullptr, bytes, keys, in, out, -1, op), cudaErrorInvalidValue);
  EXPECT_EQ(scanlab::exclusive_segmented_scan(nullptr, bytes, in, out, 10, -1, offsets, 0, op),
            cudaErrorInvalidValue);
  EXPECT_EQ(scanlab::inclusive_scan_by_key(nullptr, bytes, keys, in, out, 10, op, nullptr, {scanlab::launch_mode::tickets, -2}),
            cudaErrorInvalidValue);
  // n = 0: a non-zero size, success, nothing launched or written.
  bytes = 0;
  ASSERT_EQ(scanlab::exclusive_scan_by_key(nullptr, bytes, keys, in, out, 0, 0, op), cudaSuccess);
  EXPECT_GE(bytes, 1u);
  device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
  EXPECT_EQ(scanlab::exclusive_scan_by_key(temp.data(), bytes, keys, in, out, 0, 0, op), cudaSuccess);
  // Too little temp storage is refused before anything runs.
  std::size_t need = 0;
  ASSERT_EQ(scanlab::inclusive_segmented_scan(nullptr, need, in, out, 1 << 20, 4, offsets, op), cudaSuccess);
  std::size_t less = need - 1;
  EXPECT_EQ(scanlab::inclusive_segmented_scan(temp.data(), less, in, out, 1 << 20, 4, offsets, op),
            cudaErrorInvalidValue);
  SCANLAB_CHECK(cudaDeviceSynchronize());
}

}  // namespace
