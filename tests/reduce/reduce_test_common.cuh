// Typed test bodies for the reductions, shared by one translation unit per element
// type (test_reduce_<type>.cu instantiates reduce_typed for its type).
//
// Every result is checked against a CPU reference (exact for integers and for
// min/max/product; float sums against a float64 reference with a tolerance that
// grows with n) and against cub::DeviceReduce on the same device input.
#pragma once

#include "common/device_buffer.hpp"
#include "common/gpu_test.hpp"
#include "common/test_util.hpp"

#include <scanlab/error.hpp>
#include <scanlab/functional.cuh>
#include <scanlab/iterator.cuh>
#include <scanlab/ladder/reduce_ladder.cuh>
#include <scanlab/reduce.cuh>

#include <cub/device/device_reduce.cuh>
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace scanlab::test::reduce {

// ---- Custom element types ---------------------------------------------------------

// The smallest and largest value seen: a reduction with its own operator (8 bytes,
// alignof 4: vector-loadable when 8-byte aligned, scalar path otherwise).
struct min_max {
  std::int32_t lo;
  std::int32_t hi;
  friend bool operator==(const min_max&, const min_max&) = default;
};
struct min_max_op {
  __host__ __device__ min_max operator()(const min_max& a, const min_max& b) const {
    return {a.lo < b.lo ? a.lo : b.lo, a.hi < b.hi ? b.hi : a.hi};
  }
};
inline void PrintTo(const min_max& v, std::ostream* os) { *os << "{lo " << v.lo << ", hi " << v.hi << "}"; }

// A 3-D integer vector sum (12 bytes: never vector-loadable, always the scalar path).
struct vec3i {
  std::int32_t x;
  std::int32_t y;
  std::int32_t z;
  friend bool operator==(const vec3i&, const vec3i&) = default;
};
struct vec3i_plus {
  __host__ __device__ vec3i operator()(const vec3i& a, const vec3i& b) const {
    return {a.x + b.x, a.y + b.y, a.z + b.z};
  }
};
inline void PrintTo(const vec3i& v, std::ostream* os) { *os << "(" << v.x << ", " << v.y << ", " << v.z << ")"; }

// ---- Per-type traits: the "sum" operator, its identity, an init, random data --------

template <class T>
struct traits {
  static_assert(std::is_arithmetic_v<T>);
  using op = scanlab::plus;
  static T identity() { return T(0); }
  static T init() { return T(3); }
  static std::vector<T> data(std::int64_t n, std::uint64_t seed) { return random_values<T>(n, seed); }
};

template <>
struct traits<min_max> {
  using op = min_max_op;
  static min_max identity() { return {INT_MAX, INT_MIN}; }
  static min_max init() { return {-7, 7}; }
  static std::vector<min_max> data(std::int64_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::int32_t> dist(-1000000, 1000000);
    std::vector<min_max> out(static_cast<std::size_t>(n));
    for (auto& v : out) {
      const std::int32_t a = dist(rng), b = dist(rng);
      v = {std::min(a, b), std::max(a, b)};
    }
    return out;
  }
};

template <>
struct traits<vec3i> {
  using op = vec3i_plus;
  static vec3i identity() { return {0, 0, 0}; }
  static vec3i init() { return {1, -2, 3}; }
  static std::vector<vec3i> data(std::int64_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::int32_t> dist(-100, 100);
    std::vector<vec3i> out(static_cast<std::size_t>(n));
    for (auto& v : out) v = {dist(rng), dist(rng), dist(rng)};
    return out;
  }
};

template <class T>
inline constexpr bool is_float_v = std::is_floating_point_v<T>;

// ---- References and comparisons ---------------------------------------------------

// What a float sum should be (in float64) and how far a correct answer may be from it.
struct float_reference {
  double value = 0;
  double tolerance = 0;
};

template <class T>
float_reference float_sum_reference(std::span<const T> host, T init) {
  double sum = static_cast<double>(init), sum_abs = std::fabs(static_cast<double>(init));
  for (const T& x : host) {
    sum += static_cast<double>(x);
    sum_abs += std::fabs(static_cast<double>(x));
  }
  return {sum, sum_tolerance<T>(static_cast<std::int64_t>(host.size()) + 1, sum_abs)};
}

// op(init, host[0], ..., host[n-1]) folded left to right on the CPU, in T.
template <class T, class Op>
T cpu_fold(std::span<const T> host, T init, Op op) {
  T acc = init;
  for (const T& x : host) acc = op(acc, x);
  return acc;
}

// Checks `got` against the CPU reference: exact, except float sums (tolerance).
template <class T, class Op>
void expect_matches_cpu(const T& got, std::span<const T> host, T init, Op op, const std::string& what) {
  if constexpr (is_float_v<T> && std::is_same_v<Op, scanlab::plus>) {
    const auto ref = float_sum_reference(host, init);
    EXPECT_NEAR(static_cast<double>(got), ref.value, ref.tolerance) << what << " (vs CPU float64 reference)";
  } else {
    EXPECT_EQ(got, cpu_fold(host, init, op)) << what << " (vs CPU reference)";
  }
}

// The CPU reference computed once, for checking many results (every rung) against it.
template <class T, class Op>
class cpu_reference {
 public:
  cpu_reference(std::span<const T> host, T init, Op op) {
    if constexpr (is_float_v<T> && std::is_same_v<Op, scanlab::plus>) {
      approx_ = float_sum_reference(host, init);
    } else {
      exact_ = cpu_fold(host, init, op);
    }
  }
  void check(const T& got, const std::string& what) const {
    if constexpr (is_float_v<T> && std::is_same_v<Op, scanlab::plus>) {
      EXPECT_NEAR(static_cast<double>(got), approx_.value, approx_.tolerance) << what << " (vs CPU float64 reference)";
    } else {
      EXPECT_EQ(got, exact_) << what << " (vs CPU reference)";
    }
  }
  // Tolerance between two correct float sums (each within the tolerance of the truth).
  [[nodiscard]] double pair_tolerance() const { return 2 * approx_.tolerance; }

 private:
  T exact_{};
  float_reference approx_{};
};

// cub::DeviceReduce::Reduce on the same device input.
template <class T, class Op>
T cub_reduce(const T* d_in, std::int64_t n, T init, Op op) {
  device_buffer<T> out(1);
  std::size_t bytes = 0;
  const int count = static_cast<int>(n);  // test sizes checked against CUB are below 2^31
  SCANLAB_CHECK(cub::DeviceReduce::Reduce(nullptr, bytes, d_in, out.data(), count, op, init));
  device_buffer<unsigned char> temp(static_cast<std::int64_t>(std::max<std::size_t>(bytes, 1)));
  SCANLAB_CHECK(cub::DeviceReduce::Reduce(temp.data(), bytes, d_in, out.data(), count, op, init));
  return out.to_host()[0];
}

// Checks `got` against CUB's answer: exact, except float sums (the two sum in
// different orders; each is within the tolerance of the exact value).
template <class T, class Op>
void expect_matches_cub(const T& got, const T& cub, std::span<const T> host, T init, const std::string& what) {
  if constexpr (is_float_v<T> && std::is_same_v<Op, scanlab::plus>) {
    const auto ref = float_sum_reference(host, init);
    EXPECT_NEAR(static_cast<double>(got), static_cast<double>(cub), 2 * ref.tolerance) << what << " (vs CUB)";
  } else {
    EXPECT_EQ(got, cub) << what << " (vs CUB)";
  }
}

// ---- Running the production path and the ladder -----------------------------------

// scanlab::reduce with the two-phase protocol; temp storage and output are poisoned
// first, as a fresh allocation would be.
template <class InputIt, class T, class Op>
T run_reduce(InputIt d_in, std::int64_t n, T init, Op op, int poison = 0xA5) {
  std::size_t bytes = 0;
  SCANLAB_CHECK(scanlab::reduce(nullptr, bytes, d_in, static_cast<T*>(nullptr), n, init, op));
  EXPECT_GE(bytes, 1u);
  device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
  temp.fill_bytes(poison);
  device_buffer<T> out(1);
  out.fill_bytes(0x5A);
  SCANLAB_CHECK(scanlab::reduce(temp.data(), bytes, d_in, out.data(), n, init, op));
  SCANLAB_CHECK(cudaGetLastError());
  return out.to_host()[0];
}

// One ladder rung; returns its status (cudaErrorNotSupported is a valid answer for
// the atomic rung) and the result through `result`.
template <class T, class Op>
cudaError_t run_ladder(scanlab::ladder::rung r, const T* d_in, std::int64_t n, T identity, Op op, int block,
                       T& result) {
  std::size_t bytes = 0;
  const cudaError_t query =
      scanlab::ladder::reduce(r, d_in, static_cast<T*>(nullptr), n, identity, op, nullptr, bytes, block);
  if (query != cudaSuccess) return query;
  EXPECT_GE(bytes, 1u);
  device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
  temp.fill_bytes(0xA5);
  device_buffer<T> out(1);
  out.fill_bytes(0x5A);
  const cudaError_t status = scanlab::ladder::reduce(r, d_in, out.data(), n, identity, op, temp.data(), bytes, block);
  if (status != cudaSuccess) return status;
  SCANLAB_CHECK(cudaDeviceSynchronize());
  result = out.to_host()[0];
  return cudaSuccess;
}

// The largest n the production path reduces with its single-block kernel.
template <class T>
std::int64_t production_tile() {
  return scanlab::detail::single_block_items<scanlab::detail::reduce_policy_sm90::single_block, const T*>();
}

// Items per block per iteration of the production path's grid kernel.
template <class T>
std::int64_t production_grid_tile() {
  return scanlab::detail::tile_items<scanlab::detail::reduce_policy_sm90, const T*>();
}

inline int sm_count() {
  int device = 0, sms = 0;
  SCANLAB_CHECK(cudaGetDevice(&device));
  SCANLAB_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

// Sizes for the production path: tiny, around the vector width, around the
// single-block tile, around one full resident wave of tiles, random, and large.
template <class T>
std::vector<std::int64_t> production_sizes(std::uint64_t seed) {
  const std::int64_t tile = production_tile<T>();
  std::vector<std::int64_t> sizes = {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 511, 512, 513, 4097};
  for (std::int64_t s : boundary_sizes(tile, 3)) sizes.push_back(s);
  const std::int64_t single_round =
      scanlab::detail::tile_items<scanlab::detail::reduce_policy_sm90::single_block, const T*>();
  for (std::int64_t d : {-1, 0, 1}) sizes.push_back(single_round + d);
  // The one-round tile kernel's limit (small inputs).
  const std::int64_t one_tile = scanlab::detail::tile_kernel_items<scanlab::detail::reduce_policy_sm90::tile, const T*>();
  for (std::int64_t d : {-1, 0, 1}) sizes.push_back(one_tile + d);
  const std::int64_t grid_tile = production_grid_tile<T>();
  for (std::int64_t s : boundary_sizes(grid_tile, 7)) sizes.push_back(s);
  const std::int64_t wave = std::int64_t{sm_count()} * scanlab::detail::reduce_policy_sm90::blocks_per_sm * grid_tile;
  for (std::int64_t d : {-17, -1, 0, 1, 4099}) sizes.push_back(wave + d);
  for (std::int64_t s : random_sizes(8, std::int64_t{1} << 22, seed)) sizes.push_back(s);
  sizes.push_back((std::int64_t{1} << 24) + 3);
  return capped(sizes);
}

inline std::string at(std::int64_t n) { return "n = " + std::to_string(n); }

// Data for product tests: mostly 1, some -1 (signed types), a few 2: exact in every type.
template <class T>
std::vector<T> product_data(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> out(static_cast<std::size_t>(n), T(1));
  if (n == 0) return out;
  std::uniform_int_distribution<std::int64_t> pos(0, n - 1);
  if constexpr (std::is_signed_v<T>) {
    for (std::int64_t k = 0; k < n / 3; ++k) out[static_cast<std::size_t>(pos(rng))] = T(-1);
  }
  for (int k = 0; k < 20 && k < n; ++k) out[static_cast<std::size_t>(pos(rng))] = T(2);
  return out;
}

// x * x in the accumulator type A.
template <class A>
struct square_to {
  template <class U>
  __host__ __device__ A operator()(const U& x) const {
    return static_cast<A>(x) * static_cast<A>(x);
  }
};

template <class T>
using square_accumulator_t =
    std::conditional_t<is_float_v<T>, double, std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>>;

// ---- The typed suite ---------------------------------------------------------------

template <class T>
class reduce_typed : public gpu_test {};

TYPED_TEST_SUITE_P(reduce_typed);

// The production path over sizes from 0 to 2^24 + 3: CPU reference and CUB.
TYPED_TEST_P(reduce_typed, ProductionSizes) {
  using T = TypeParam;
  using op_t = typename traits<T>::op;
  const auto seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const auto sizes = production_sizes<T>(seed);
  const std::int64_t largest = *std::max_element(sizes.begin(), sizes.end());
  const auto host_all = traits<T>::data(largest, seed);
  device_buffer<T> d_all{std::span<const T>(host_all)};
  for (std::int64_t n : sizes) {
    const std::span<const T> host(host_all.data(), static_cast<std::size_t>(n));
    const T got = run_reduce(static_cast<const T*>(d_all.data()), n, traits<T>::init(), op_t{});
    expect_matches_cpu(got, host, traits<T>::init(), op_t{}, at(n));
    const T cub = cub_reduce(static_cast<const T*>(d_all.data()), n, traits<T>::init(), op_t{});
    expect_matches_cub<T, op_t>(got, cub, host, traits<T>::init(), at(n));
  }
}

// Pointers that are not 16-byte aligned: the head is peeled off with scalar loads.
TYPED_TEST_P(reduce_typed, ProductionUnalignedPointers) {
  using T = TypeParam;
  using op_t = typename traits<T>::op;
  const auto seed = test_seed() + 1;
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t tile = production_tile<T>();
  const std::int64_t largest = (std::int64_t{1} << 20) + 16;
  const auto host_all = traits<T>::data(largest + 4, seed);
  device_buffer<T> d_all{std::span<const T>(host_all)};
  for (std::int64_t offset : {1, 2, 3}) {
    for (std::int64_t n : {std::int64_t{1}, std::int64_t{2}, std::int64_t{5}, std::int64_t{17}, tile - 1, tile + 1,
                           3 * tile + 7, largest - 5}) {
      const std::span<const T> host(host_all.data() + offset, static_cast<std::size_t>(n));
      const T* d_in = d_all.data() + offset;
      const std::string what = at(n) + ", offset " + std::to_string(offset);
      const T got = run_reduce(d_in, n, traits<T>::init(), op_t{});
      expect_matches_cpu(got, host, traits<T>::init(), op_t{}, what);
      expect_matches_cub<T, op_t>(got, cub_reduce(d_in, n, traits<T>::init(), op_t{}), host, traits<T>::init(), what);
    }
  }
}

// n == 0 writes init; a bad n or too little temp storage is an error, not a crash.
TYPED_TEST_P(reduce_typed, ProductionEdgeCases) {
  using T = TypeParam;
  using op_t = typename traits<T>::op;
  device_buffer<T> d_in(1);
  EXPECT_EQ(run_reduce(static_cast<const T*>(d_in.data()), 0, traits<T>::init(), op_t{}), traits<T>::init());

  std::size_t bytes = 0;
  device_buffer<T> out(1);
  EXPECT_EQ(scanlab::reduce(nullptr, bytes, static_cast<const T*>(d_in.data()), out.data(), -1, traits<T>::init(),
                            op_t{}),
            cudaErrorInvalidValue);
  const std::int64_t big = production_tile<T>() * 4;
  device_buffer<T> d_big(big);
  SCANLAB_CHECK(scanlab::reduce(nullptr, bytes, static_cast<const T*>(d_big.data()), out.data(), big,
                                traits<T>::init(), op_t{}));
  ASSERT_GT(bytes, 1u);
  device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
  std::size_t too_few = bytes - 1;
  EXPECT_EQ(scanlab::reduce(temp.data(), too_few, static_cast<const T*>(d_big.data()), out.data(), big,
                            traits<T>::init(), op_t{}),
            cudaErrorInvalidValue);
  SCANLAB_CHECK(cudaDeviceSynchronize());
}

// The caller's input is read, never written (production path and every rung).
TYPED_TEST_P(reduce_typed, InputLeftUntouched) {
  using T = TypeParam;
  using op_t = typename traits<T>::op;
  const auto seed = test_seed() + 2;
  SCOPED_TRACE(seed_trace(seed));
  for (std::int64_t n : {std::int64_t{1000}, production_tile<T>() * 40 + 3}) {
    const auto host = traits<T>::data(n, seed);
    device_buffer<T> d_in{std::span<const T>(host)};
    (void)run_reduce(static_cast<const T*>(d_in.data()), n, traits<T>::init(), op_t{});
    for (auto r : scanlab::ladder::all_rungs) {
      T result{};
      (void)run_ladder(r, static_cast<const T*>(d_in.data()), n, traits<T>::identity(), op_t{}, 96, result);
    }
    const auto after = d_in.to_host();
    ASSERT_EQ(after.size(), host.size());
    EXPECT_EQ(std::memcmp(after.data(), host.data(), host.size() * sizeof(T)), 0) << at(n);
  }
}

// min and max with the production path and every rung; product with the production path.
TYPED_TEST_P(reduce_typed, MinMaxProductOperators) {
  using T = TypeParam;
  if constexpr (!std::is_arithmetic_v<T>) {
    GTEST_SKIP() << "the custom types carry their own operator (tested everywhere else)";
  } else {
    const auto seed = test_seed() + 3;
    SCOPED_TRACE(seed_trace(seed));
    const auto host_all = traits<T>::data((std::int64_t{1} << 21) + 5, seed);
    device_buffer<T> d_all{std::span<const T>(host_all)};
    const T* d_in = d_all.data();
    for (std::int64_t n : {std::int64_t{1}, std::int64_t{33}, production_tile<T>() + 1,
                           static_cast<std::int64_t>(host_all.size())}) {
      const std::span<const T> host(host_all.data(), static_cast<std::size_t>(n));
      const auto check = [&](auto op, T init, const char* name) {
        const std::string what = at(n) + ", " + name;
        const T got = run_reduce(d_in, n, init, op);
        expect_matches_cpu(got, host, init, op, what);
        expect_matches_cub<T, decltype(op)>(got, cub_reduce(d_in, n, init, op), host, init, what);
        // The ladder has no init: its answer is the bare min/max (init is the identity).
        const cpu_reference<T, decltype(op)> bare(host, scanlab::identity<decltype(op), T>::value(), op);
        for (auto r : scanlab::ladder::all_rungs) {
          T result{};
          const cudaError_t status =
              run_ladder(r, d_in, n, scanlab::identity<decltype(op), T>::value(), op, 128, result);
          const std::string rwhat = what + ", rung " + std::string(scanlab::ladder::rung_name(r));
          if (r == scanlab::ladder::rung::warp_shuffle_atomic &&
              !scanlab::ladder::has_native_atomic_v<T, decltype(op)>) {
            EXPECT_EQ(status, cudaErrorNotSupported) << rwhat;
            continue;
          }
          ASSERT_EQ(status, cudaSuccess) << rwhat << ": " << cudaGetErrorString(status);
          bare.check(result, rwhat);
        }
      };
      // Inits inside the data range, so that they matter for some n.
      check(scanlab::minimum{}, T(1), "minimum");
      check(scanlab::maximum{}, T(0), "maximum");
    }
    for (std::int64_t n : {std::int64_t{0}, std::int64_t{7}, production_tile<T>() * 3 + 1, std::int64_t{1} << 20}) {
      const auto host = product_data<T>(n, seed + static_cast<std::uint64_t>(n));
      device_buffer<T> d_in2{std::span<const T>(host)};
      const T got = run_reduce(static_cast<const T*>(d_in2.data()), n, T(3), scanlab::multiplies{});
      EXPECT_EQ(got, cpu_fold(std::span<const T>(host), T(3), scanlab::multiplies{})) << at(n) << ", product";
    }
  }
}

// transform_reduce: the sum of squares, accumulated in a wider type.
TYPED_TEST_P(reduce_typed, TransformReduceSumOfSquares) {
  using T = TypeParam;
  if constexpr (!std::is_arithmetic_v<T>) {
    GTEST_SKIP() << "sum of squares is for arithmetic types";
  } else {
    using A = square_accumulator_t<T>;
    const auto seed = test_seed() + 4;
    SCOPED_TRACE(seed_trace(seed));
    for (std::int64_t n : {std::int64_t{0}, std::int64_t{3}, production_tile<T>() - 1, (std::int64_t{1} << 22) + 1}) {
      const auto host = traits<T>::data(n, seed);
      device_buffer<T> d_in{std::span<const T>(host)};
      device_buffer<A> out(1);
      std::size_t bytes = 0;
      SCANLAB_CHECK(scanlab::transform_reduce(nullptr, bytes, static_cast<const T*>(d_in.data()), out.data(), n, A(5),
                                              scanlab::plus{}, square_to<A>{}));
      device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
      SCANLAB_CHECK(scanlab::transform_reduce(temp.data(), bytes, static_cast<const T*>(d_in.data()), out.data(), n,
                                              A(5), scanlab::plus{}, square_to<A>{}));
      const A got = out.to_host()[0];
      if constexpr (is_float_v<T>) {
        double ref = 5;
        for (T x : host) ref += static_cast<double>(x) * static_cast<double>(x);
        EXPECT_NEAR(got, ref, sum_tolerance<double>(n + 1, ref)) << at(n);
      } else {
        A ref = 5;
        for (T x : host) ref += static_cast<A>(x) * static_cast<A>(x);
        EXPECT_EQ(got, ref) << at(n);
      }
    }
  }
}

// segmented_reduce: no segments, one segment, empty segments, many random lengths.
TYPED_TEST_P(reduce_typed, SegmentedReduce) {
  using T = TypeParam;
  using op_t = typename traits<T>::op;
  const auto seed = test_seed() + 5;
  SCOPED_TRACE(seed_trace(seed));
  std::mt19937_64 rng(seed);
  const auto run = [&](const std::vector<std::int64_t>& offsets, const std::string& what) {
    const std::int64_t segments = static_cast<std::int64_t>(offsets.size()) - 1;
    const auto host = traits<T>::data(offsets.back(), seed);
    device_buffer<T> d_in{std::span<const T>(host)};
    device_buffer<std::int64_t> d_offsets{std::span<const std::int64_t>(offsets)};
    device_buffer<T> d_out(std::max<std::int64_t>(segments, 1));
    d_out.fill_bytes(0x5A);
    std::size_t bytes = 0;
    SCANLAB_CHECK(scanlab::segmented_reduce(nullptr, bytes, static_cast<const T*>(d_in.data()), d_out.data(),
                                            segments, static_cast<const std::int64_t*>(d_offsets.data()),
                                            traits<T>::init(), op_t{}));
    EXPECT_GE(bytes, 1u);
    device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
    SCANLAB_CHECK(scanlab::segmented_reduce(temp.data(), bytes, static_cast<const T*>(d_in.data()), d_out.data(),
                                            segments, static_cast<const std::int64_t*>(d_offsets.data()),
                                            traits<T>::init(), op_t{}));
    const auto got = d_out.to_host();
    for (std::int64_t s = 0; s < segments; ++s) {
      const auto b = static_cast<std::size_t>(offsets[static_cast<std::size_t>(s)]);
      const auto e = static_cast<std::size_t>(offsets[static_cast<std::size_t>(s) + 1]);
      expect_matches_cpu(got[static_cast<std::size_t>(s)], std::span<const T>(host.data() + b, e - b),
                         traits<T>::init(), op_t{}, what + ", segment " + std::to_string(s));
    }
  };
  run({0}, "no segments");
  run({0, 0}, "one empty segment");
  run({0, 300001}, "one segment");
  run({0, 0, 0, 0}, "all empty");
  {
    std::vector<std::int64_t> offsets = {0};
    std::uniform_int_distribution<std::int64_t> length(0, 3000);
    std::bernoulli_distribution empty(0.2);
    for (int s = 0; s < 700; ++s) offsets.push_back(offsets.back() + (empty(rng) ? 0 : length(rng)));
    run(offsets, "random lengths");
  }
  {
    // Segment lengths around the vector width and the block's reach, at every alignment.
    std::vector<std::int64_t> offsets = {0};
    for (std::int64_t len : {1, 2, 3, 4, 5, 15, 16, 17, 255, 256, 257, 1023, 1024, 1025, 4095, 4096, 4097, 70000}) {
      for (int k = 0; k < 3; ++k) offsets.push_back(offsets.back() + len + k);
    }
    run(offsets, "boundary lengths");
  }
}

// Every rung of the ladder over sizes around block boundaries, with several block
// sizes (powers of two and not): CPU reference and CUB.
TYPED_TEST_P(reduce_typed, LadderAllRungs) {
  using T = TypeParam;
  using op_t = typename traits<T>::op;
  const auto seed = test_seed() + 6;
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t largest = (std::int64_t{1} << 21) + 5;
  const auto host_all = traits<T>::data(largest, seed);
  device_buffer<T> d_all{std::span<const T>(host_all)};
  const T* d_in = d_all.data();
  for (int block : {20, 96, 128, 256, 1024}) {
    std::vector<std::int64_t> sizes = {0, 1, 2};
    for (std::int64_t k : {1, 2, 4}) {
      for (std::int64_t d : {-1, 0, 1}) sizes.push_back(k * block + d);
    }
    sizes.push_back(std::int64_t{block} * block + 1);  // three passes for the one-element-per-thread rungs
    for (std::int64_t s : random_sizes(3, std::int64_t{1} << 20, seed + static_cast<std::uint64_t>(block))) {
      sizes.push_back(s);
    }
    sizes.push_back(largest);
    for (std::int64_t n : capped(sizes)) {
      const std::span<const T> host(host_all.data(), static_cast<std::size_t>(n));
      const T cub = cub_reduce(d_in, n, traits<T>::identity(), op_t{});
      const cpu_reference<T, op_t> reference(host, traits<T>::identity(), op_t{});
      for (auto r : scanlab::ladder::all_rungs) {
        const std::string what =
            at(n) + ", block " + std::to_string(block) + ", rung " + std::string(scanlab::ladder::rung_name(r));
        T got{};
        const cudaError_t status = run_ladder(r, d_in, n, traits<T>::identity(), op_t{}, block, got);
        if (r == scanlab::ladder::rung::warp_shuffle_atomic && !scanlab::ladder::has_native_atomic_v<T, op_t>) {
          EXPECT_EQ(status, cudaErrorNotSupported) << what;
          continue;
        }
        ASSERT_EQ(status, cudaSuccess) << what << ": " << cudaGetErrorString(status);
        reference.check(got, what);
        if constexpr (is_float_v<T>) {
          EXPECT_NEAR(static_cast<double>(got), static_cast<double>(cub), reference.pair_tolerance()) << what << " (vs CUB)";
        } else {
          EXPECT_EQ(got, cub) << what << " (vs CUB)";
        }
      }
    }
  }
}

// Bad arguments to the ladder are errors.
TYPED_TEST_P(reduce_typed, LadderRejectsBadArguments) {
  using T = TypeParam;
  using op_t = typename traits<T>::op;
  device_buffer<T> d_in(16), out(1);
  std::size_t bytes = 0;
  for (auto r : scanlab::ladder::all_rungs) {
    if (r == scanlab::ladder::rung::warp_shuffle_atomic && !scanlab::ladder::has_native_atomic_v<T, op_t>) {
      EXPECT_EQ(scanlab::ladder::reduce(r, static_cast<const T*>(d_in.data()), out.data(), 16, traits<T>::identity(),
                                        op_t{}, nullptr, bytes, 128),
                cudaErrorNotSupported);
      continue;
    }
    for (int block : {0, 1025}) {
      EXPECT_EQ(scanlab::ladder::reduce(r, static_cast<const T*>(d_in.data()), out.data(), 16, traits<T>::identity(),
                                        op_t{}, nullptr, bytes, block),
                cudaErrorInvalidValue);
    }
    EXPECT_EQ(scanlab::ladder::reduce(r, static_cast<const T*>(d_in.data()), out.data(), -1, traits<T>::identity(),
                                      op_t{}, nullptr, bytes, 128),
              cudaErrorInvalidValue);
  }
}

REGISTER_TYPED_TEST_SUITE_P(reduce_typed, ProductionSizes, ProductionUnalignedPointers, ProductionEdgeCases,
                            InputLeftUntouched, MinMaxProductOperators, TransformReduceSumOfSquares, SegmentedReduce,
                            LadderAllRungs, LadderRejectsBadArguments);

}  // namespace scanlab::test::reduce
