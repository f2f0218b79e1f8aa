// Typed test bodies for scanlab's norms, shared by one translation unit per element type
// (test_norms_float.cu: float data accumulated in float and in double;
// test_norms_double.cu: double). Every result is checked against a long double
// compensated CPU reference with a bound that grows with n, and dot / sum of squares
// also against cub::DeviceReduce::TransformReduce on the same device input.
#pragma once

#include "common/device_buffer.hpp"
#include "common/gpu_test.hpp"
#include "common/test_util.hpp"
#include "norms/norms_reference.hpp"

#include <scanlab/algorithms/norms.cuh>
#include <scanlab/error.hpp>

#include <cub/device/device_reduce.cuh>
#include <cublas_v2.h>
#include <gtest/gtest.h>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace scanlab::test::norms {

// Data type T, accumulator (and result) type Acc.
template <class T, class A>
struct config {
  using data = T;
  using acc = A;
};

enum class what { dot, sum_squares, l2, rms, rms_diff };
inline constexpr what all_quantities[] = {what::dot, what::sum_squares, what::l2, what::rms, what::rms_diff};

inline const char* name(what w) {
  switch (w) {
    case what::dot: return "dot";
    case what::sum_squares: return "sum_squares";
    case what::l2: return "l2_norm";
    case what::rms: return "rms";
    case what::rms_diff: return "rms_diff";
  }
  return "?";
}

// Runs one quantity on device inputs (y unused for one-input quantities): the two-phase
// temp protocol, temp storage poisoned with `poison`; returns the result.
template <class T, class Acc>
Acc run(what w, const T* x, const T* y, std::int64_t n, int poison = 0xcd) {
  device_buffer<Acc> out(1);
  std::size_t bytes = 0;
  const auto call = [&](void* temp, std::size_t& b) -> cudaError_t {
    switch (w) {
      case what::dot: return scanlab::dot(temp, b, x, y, out.data(), n);
      case what::sum_squares: return scanlab::sum_squares(temp, b, x, out.data(), n);
      case what::l2: return scanlab::l2_norm(temp, b, x, out.data(), n);
      case what::rms: return scanlab::rms(temp, b, x, out.data(), n);
      case what::rms_diff: return scanlab::rms_diff(temp, b, x, y, out.data(), n);
    }
    return cudaErrorInvalidValue;
  };
  SCANLAB_CHECK(call(nullptr, bytes));
  EXPECT_GE(bytes, 1u);
  device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
  temp.fill_bytes(poison);
  out.fill_bytes(0xff);
  SCANLAB_CHECK(call(temp.data(), bytes));
  SCANLAB_CHECK(cudaDeviceSynchronize());
  return out.to_host()[0];
}

// The reference value and the bound a correct result must be within.
struct expectation {
  long double value = 0;
  double tolerance = 0;
};

template <class T, class Acc>
expectation expect_for(what w, std::span<const T> x, std::span<const T> y) {
  const auto n = static_cast<std::int64_t>(x.size());
  const double eps = std::numeric_limits<Acc>::epsilon();
  // One rounding of the final value to Acc, plus the sum's own error.
  const auto finish = [&](norms_ref::reference_sum s, bool root, bool mean) {
    expectation e;
    if (!root) {
      e.value = s.value;
      e.tolerance = norms_ref::sum_error_bound(n, eps, s.abs_sum) + eps * std::fabs(static_cast<double>(s.value));
      return e;
    }
    e.value = mean ? norms_ref::root_mean(s.value, n) : std::sqrt(s.value);
    // sqrt halves a relative error; the root, the division by n and the scaling add a few ulps.
    // The relative bound, formed in long double: for values near the top of double's range
    // the absolute bound (and the sum itself) would overflow a double.
    const double ssq_rel =
        s.value > 0 ? norms_ref::sum_error_bound(n, eps, 1.0L) * static_cast<double>(s.abs_sum / s.value) : 0;
    e.tolerance = (0.5 * ssq_rel + 4 * eps) * std::fabs(static_cast<double>(e.value));
    return e;
  };
  switch (w) {
    case what::dot: return finish(norms_ref::dot(x, y), false, false);
    case what::sum_squares: return finish(norms_ref::sum_squares(x), false, false);
    case what::l2: return finish(norms_ref::sum_squares(x), true, false);
    case what::rms: return finish(norms_ref::sum_squares(x), true, true);
    case what::rms_diff: return finish(norms_ref::sum_squared_differences(x, y), true, true);
  }
  return {};
}

template <class T, class Acc>
void expect_near_reference(what w, Acc got, std::span<const T> x, std::span<const T> y, const std::string& where) {
  const expectation e = expect_for<T, Acc>(w, x, y);
  if (std::isnan(e.value)) {
    EXPECT_TRUE(std::isnan(got)) << name(w) << " " << where << ": expected NaN, got " << got;
    return;
  }
  const long double diff = std::fabs(static_cast<long double>(got) - e.value);
  EXPECT_LE(static_cast<double>(diff), e.tolerance)
      << name(w) << " " << where << ": got " << static_cast<double>(got) << ", reference "
      << static_cast<double>(e.value) << " (n = " << x.size() << ")";
}

// ---- CUB on the same device input ----------------------------------------------------

template <class T, class Acc>
struct product_at {
  const T* x;
  const T* y;
  __device__ Acc operator()(long long i) const { return static_cast<Acc>(x[i]) * static_cast<Acc>(y[i]); }
};
struct add_op {
  template <class A>
  __device__ A operator()(const A& a, const A& b) const {
    return a + b;
  }
};

// CUB's sum of x[i] * y[i] (y = x: sum of squares), accumulated in Acc.
template <class T, class Acc>
Acc cub_dot(const T* x, const T* y, std::int64_t n) {
  device_buffer<Acc> out(1);
  std::size_t bytes = 0;
  const thrust::counting_iterator<long long> first(0);
  SCANLAB_CHECK(cub::DeviceReduce::TransformReduce(nullptr, bytes, first, out.data(), static_cast<long long>(n),
                                                   add_op{}, product_at<T, Acc>{x, y}, Acc(0)));
  device_buffer<unsigned char> temp(static_cast<std::int64_t>(std::max<std::size_t>(bytes, 1)));
  SCANLAB_CHECK(cub::DeviceReduce::TransformReduce(temp.data(), bytes, first, out.data(), static_cast<long long>(n),
                                                   add_op{}, product_at<T, Acc>{x, y}, Acc(0)));
  SCANLAB_CHECK(cudaDeviceSynchronize());
  return out.to_host()[0];
}

// ---- Helpers --------------------------------------------------------------------------

template <class T>
std::vector<T> random_data(std::int64_t n, std::uint64_t seed) {
  return random_values<T>(n, seed);  // uniform in [-1, 1)
}

template <class T>
std::vector<T> positive_data(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<T> dist(T(0), T(1));
  std::vector<T> out(static_cast<std::size_t>(n));
  for (auto& v : out) v = dist(rng);
  return out;
}

// Checks all five quantities on host data (copied to the device at element offsets
// x_offset and y_offset, to exercise the vector head, the scalar path and the tail).
template <class T, class Acc>
void check_all(std::span<const T> x, std::span<const T> y, int x_offset, int y_offset, const std::string& where,
               bool with_cub = true) {
  const auto n = static_cast<std::int64_t>(x.size());
  std::vector<T> hx(static_cast<std::size_t>(n + x_offset) + 1, T(7)), hy(static_cast<std::size_t>(n + y_offset) + 1, T(7));
  std::copy(x.begin(), x.end(), hx.begin() + x_offset);
  std::copy(y.begin(), y.end(), hy.begin() + y_offset);
  device_buffer<T> dx{std::span<const T>(hx)}, dy{std::span<const T>(hy)};
  const T* px = dx.data() + x_offset;
  const T* py = dy.data() + y_offset;
  for (what w : all_quantities) {
    const Acc got = run<T, Acc>(w, px, py, n);
    expect_near_reference<T, Acc>(w, got, x, y, where);
  }
  if (with_cub && n > 0) {
    const Acc ours = run<T, Acc>(what::dot, px, py, n);
    const Acc cub = cub_dot<T, Acc>(px, py, n);
    const expectation e = expect_for<T, Acc>(what::dot, x, y);
    EXPECT_LE(std::fabs(static_cast<double>(ours) - static_cast<double>(cub)), 2 * e.tolerance)
        << "dot vs CUB " << where << ": " << ours << " vs " << cub;
    const Acc ours_ssq = run<T, Acc>(what::sum_squares, px, py, n);
    const Acc cub_ssq = cub_dot<T, Acc>(px, px, n);
    const expectation e2 = expect_for<T, Acc>(what::sum_squares, x, y);
    EXPECT_LE(std::fabs(static_cast<double>(ours_ssq) - static_cast<double>(cub_ssq)), 2 * e2.tolerance)
        << "sum_squares vs CUB " << where << ": " << ours_ssq << " vs " << cub_ssq;
  }
}

template <class T>
std::vector<unsigned char> bytes_of(T value) {
  std::vector<unsigned char> b(sizeof(T));
  std::memcpy(b.data(), &value, sizeof(T));
  return b;
}

// The sizes where the reduction engine changes launch or round for one array (const T*)
// and for two (zip_input<T>): the one-round tile kernel's limit, one round and the whole
// of the single block, one tile of the grid.
template <class T>
std::vector<std::int64_t> launch_boundaries() {
  namespace d = scanlab::detail;
  using policy = d::reduce_policy_sm90;
  using one = const T*;
  using two = scanlab::zip_input<T>;
  return {d::tile_kernel_items<policy::tile, one>(),        d::tile_kernel_items<policy::tile, two>(),
          d::tile_items<policy::single_block, one>(),        d::tile_items<policy::single_block, two>(),
          d::single_block_items<policy::single_block, one>(), d::single_block_items<policy::single_block, two>(),
          d::tile_items<policy, one>(),                     d::tile_items<policy, two>()};
}

// ---- cuBLAS, for the accuracy comparison ------------------------------------------------

class cublas_handle {
 public:
  cublas_handle() {
    if (cublasCreate(&handle_) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasCreate failed");
    // Device pointer mode: results land in device memory, as scanlab's do.
    cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_DEVICE);
  }
  ~cublas_handle() { cublasDestroy(handle_); }
  cublas_handle(const cublas_handle&) = delete;
  cublas_handle& operator=(const cublas_handle&) = delete;
  [[nodiscard]] cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

inline void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string(what) + ": " + cublasGetStatusName(status));
  }
}

template <class T>
T cublas_dot(const cublas_handle& h, const T* x, const T* y, std::int64_t n) {
  device_buffer<T> out(1);
  if constexpr (sizeof(T) == 4) check_cublas(cublasSdot_64(h.get(), n, x, 1, y, 1, out.data()), "cublasSdot_64");
  else check_cublas(cublasDdot_64(h.get(), n, x, 1, y, 1, out.data()), "cublasDdot_64");
  SCANLAB_CHECK(cudaDeviceSynchronize());
  return out.to_host()[0];
}

template <class T>
T cublas_nrm2(const cublas_handle& h, const T* x, std::int64_t n) {
  device_buffer<T> out(1);
  if constexpr (sizeof(T) == 4) check_cublas(cublasSnrm2_64(h.get(), n, x, 1, out.data()), "cublasSnrm2_64");
  else check_cublas(cublasDnrm2_64(h.get(), n, x, 1, out.data()), "cublasDnrm2_64");
  SCANLAB_CHECK(cudaDeviceSynchronize());
  return out.to_host()[0];
}

// Relative errors of scanlab (accumulating in Acc) and cuBLAS against the long double
// reference on n uniform [0, 1) values (dot: x . y; norm: ||x||). Printed, and scanlab's
// must be at most twice cuBLAS's (or within 8 ulps of Acc, whichever is larger).
template <class T, class Acc>
void compare_accuracy_with_cublas(std::int64_t n, std::uint64_t seed) {
  const auto x = positive_data<T>(n, seed);
  const auto y = positive_data<T>(n, seed + 1);
  device_buffer<T> dx{std::span<const T>(x)}, dy{std::span<const T>(y)};
  const cublas_handle h;
  const long double ref_dot = norms_ref::dot<T>(x, y).value;
  const long double ref_l2 = std::sqrt(norms_ref::sum_squares<T>(x).value);
  const double ours_dot = norms_ref::relative_error(run<T, Acc>(what::dot, dx.data(), dy.data(), n), ref_dot);
  const double ours_l2 = norms_ref::relative_error(run<T, Acc>(what::l2, dx.data(), dx.data(), n), ref_l2);
  const double blas_dot = norms_ref::relative_error(cublas_dot<T>(h, dx.data(), dy.data(), n), ref_dot);
  const double blas_l2 = norms_ref::relative_error(cublas_nrm2<T>(h, dx.data(), n), ref_l2);
  std::cout << "[ accuracy ] n = " << n << ", " << (sizeof(T) == 4 ? "float" : "double") << " data, "
            << (sizeof(Acc) == 4 ? "float" : "double") << " accumulator: relative error dot scanlab " << ours_dot
            << " cuBLAS " << blas_dot << "; l2 scanlab " << ours_l2 << " cuBLAS " << blas_l2 << "\n";
  const double floor = 8 * static_cast<double>(std::numeric_limits<Acc>::epsilon());
  EXPECT_LE(ours_dot, std::max(2 * blas_dot, floor));
  EXPECT_LE(ours_l2, std::max(2 * blas_l2, floor));
}

// ---- The typed suite ------------------------------------------------------------------

template <class Config>
class norms_typed : public gpu_test {};
TYPED_TEST_SUITE_P(norms_typed);

TYPED_TEST_P(norms_typed, EmptyInput) {
  using T = typename TypeParam::data;
  using Acc = typename TypeParam::acc;
  device_buffer<T> d(1);
  const auto empty = [&](what w) { return run<T, Acc>(w, d.data(), d.data(), 0); };
  EXPECT_EQ(empty(what::dot), Acc(0));
  EXPECT_EQ(empty(what::sum_squares), Acc(0));
  EXPECT_EQ(empty(what::l2), Acc(0));
  EXPECT_TRUE(std::isnan(empty(what::rms)));
  EXPECT_TRUE(std::isnan(empty(what::rms_diff)));
}

TYPED_TEST_P(norms_typed, NegativeCountIsInvalid) {
  using T = typename TypeParam::data;
  using Acc = typename TypeParam::acc;
  std::size_t bytes = 0;
  EXPECT_EQ(scanlab::dot(nullptr, bytes, static_cast<const T*>(nullptr), static_cast<const T*>(nullptr),
                         static_cast<Acc*>(nullptr), -1),
            cudaErrorInvalidValue);
}

TYPED_TEST_P(norms_typed, BoundarySizes) {
  using T = typename TypeParam::data;
  using Acc = typename TypeParam::acc;
  const auto seed = test_seed() + 1;
  SCOPED_TRACE(seed_trace(seed));
  std::vector<std::int64_t> sizes = {0, 1, 2, 3, 5, 31, std::int64_t{1} << 20, (std::int64_t{1} << 20) + 7};
  for (const std::int64_t b : launch_boundaries<T>()) {
    for (const std::int64_t d : {-1, 0, 1}) sizes.push_back(b + d);
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  for (const std::int64_t n : capped(sizes)) {
    const auto x = random_data<T>(n, seed + static_cast<std::uint64_t>(n));
    const auto y = random_data<T>(n, seed + static_cast<std::uint64_t>(n) + 1000);
    check_all<T, Acc>(x, y, 0, 0, "aligned, n = " + std::to_string(n));
  }
}

TYPED_TEST_P(norms_typed, MisalignedStarts) {
  using T = typename TypeParam::data;
  using Acc = typename TypeParam::acc;
  const auto seed = test_seed() + 2;
  SCOPED_TRACE(seed_trace(seed));
  const std::vector<std::int64_t> bounds = launch_boundaries<T>();
  for (const std::int64_t n : capped({std::int64_t{3}, std::int64_t{1000}, bounds[0] + 5, bounds[1] + 5, bounds[5] + 5,
                                      std::int64_t{300001}})) {
    const auto x = random_data<T>(n, seed + static_cast<std::uint64_t>(n));
    const auto y = random_data<T>(n, seed + static_cast<std::uint64_t>(n) + 99);
    // Same misalignment (vectors with a head), and different (the scalar path).
    check_all<T, Acc>(x, y, 1, 1, "offsets 1/1, n = " + std::to_string(n));
    check_all<T, Acc>(x, y, 1, 0, "offsets 1/0, n = " + std::to_string(n));
    check_all<T, Acc>(x, y, 0, 1, "offsets 0/1, n = " + std::to_string(n));
  }
}

TYPED_TEST_P(norms_typed, RandomSizes) {
  using T = typename TypeParam::data;
  using Acc = typename TypeParam::acc;
  const auto seed = test_seed() + 3;
  SCOPED_TRACE(seed_trace(seed));
  for (const std::int64_t n : random_sizes(12, std::min<std::int64_t>(std::int64_t{1} << 22, max_test_n()), seed)) {
    const auto x = positive_data<T>(n, seed + static_cast<std::uint64_t>(n));
    const auto y = random_data<T>(n, seed + static_cast<std::uint64_t>(n) + 5);
    check_all<T, Acc>(x, y, 0, 0, "random size " + std::to_string(n));
  }
}

TYPED_TEST_P(norms_typed, NanPropagates) {
  using T = typename TypeParam::data;
  using Acc = typename TypeParam::acc;
  const auto seed = test_seed() + 4;
  SCOPED_TRACE(seed_trace(seed));
  for (const std::int64_t n : capped({std::int64_t{1}, std::int64_t{777}, std::int64_t{1} << 20})) {
    for (const std::int64_t at : {std::int64_t{0}, n / 2, n - 1}) {
      auto x = random_data<T>(n, seed);
      const auto y = random_data<T>(n, seed + 1);
      x[static_cast<std::size_t>(at)] = std::numeric_limits<T>::quiet_NaN();
      device_buffer<T> dx{std::span<const T>(x)}, dy{std::span<const T>(y)};
      for (what w : all_quantities) {
        const Acc got = run<T, Acc>(w, dx.data(), dy.data(), n);
        EXPECT_TRUE(std::isnan(got)) << name(w) << ": NaN at " << at << " of " << n << " gave " << got;
      }
    }
  }
}

TYPED_TEST_P(norms_typed, InfPropagates) {
  using T = typename TypeParam::data;
  using Acc = typename TypeParam::acc;
  const auto seed = test_seed() + 5;
  SCOPED_TRACE(seed_trace(seed));
  const T inf = std::numeric_limits<T>::infinity();
  for (const std::int64_t n : capped({std::int64_t{1}, std::int64_t{777}, std::int64_t{1} << 20})) {
    for (const std::int64_t at : {std::int64_t{0}, n / 2, n - 1}) {
      auto x = positive_data<T>(n, seed);
      auto y = positive_data<T>(n, seed + 1);
      x[static_cast<std::size_t>(at)] = -inf;
      y[static_cast<std::size_t>(at)] = T(0.5);
      device_buffer<T> dx{std::span<const T>(x)}, dy{std::span<const T>(y)};
      const std::string where = "Inf at " + std::to_string(at) + " of " + std::to_string(n);
      const auto go = [&](what w) { return run<T, Acc>(w, dx.data(), dy.data(), n); };
      const Acc inf_acc = std::numeric_limits<Acc>::infinity();
      EXPECT_EQ(go(what::dot), -inf_acc) << where;
      EXPECT_EQ(go(what::sum_squares), inf_acc) << where;
      EXPECT_EQ(go(what::l2), inf_acc) << where;
      EXPECT_EQ(go(what::rms), inf_acc) << where;
      EXPECT_EQ(go(what::rms_diff), inf_acc) << where;
      // Inf and NaN together: NaN.
      x[static_cast<std::size_t>(n - 1 - at)] = std::numeric_limits<T>::quiet_NaN();
      dx.copy_from(x);
      EXPECT_TRUE(std::isnan(go(what::l2))) << where << " and a NaN";
    }
  }
}

// Huge and tiny magnitudes: the naive sum of squares overflows (1e30^2 in float) or
// underflows (1e-30^2); l2_norm, rms and rms_diff must not.
TYPED_TEST_P(norms_typed, HugeAndTinyMagnitudes) {
  using T = typename TypeParam::data;
  using Acc = typename TypeParam::acc;
  const auto seed = test_seed() + 6;
  SCOPED_TRACE(seed_trace(seed));
  const bool is_float = sizeof(T) == 4;
  const T huge = is_float ? T(1e30) : T(1e300);
  const T tiny = is_float ? T(1e-30) : T(1e-300);
  const T subnormal = is_float ? T(1e-40) : T(1e-310);
  const T largest = std::numeric_limits<T>::max() / T(4);
  for (const std::int64_t n : capped({std::int64_t{1}, std::int64_t{1000}, std::int64_t{1} << 20})) {
    for (const T scale : {huge, tiny, subnormal, largest}) {
      auto x = positive_data<T>(n, seed);
      auto y = random_data<T>(n, seed + 1);
      for (auto& v : x) v = (T(0.5) + v / 2) * scale;  // [0.5, 1) * scale: no cancellation, no zero
      for (auto& v : y) v = v * scale / T(4);
      const std::string where = "scale " + std::to_string(static_cast<double>(scale)) + ", n = " + std::to_string(n);
      device_buffer<T> dx{std::span<const T>(x)}, dy{std::span<const T>(y)};
      for (what w : {what::l2, what::rms, what::rms_diff}) {
        const Acc got = run<T, Acc>(w, dx.data(), dy.data(), n);
        const expectation e = expect_for<T, Acc>(w, x, y);
        if (w == what::l2 && !(e.value <= static_cast<long double>(std::numeric_limits<Acc>::max()))) {
          EXPECT_EQ(got, std::numeric_limits<Acc>::infinity()) << name(w) << " " << where << " (true value overflows)";
          continue;
        }
        EXPECT_TRUE(std::isfinite(got) && got > 0) << name(w) << " " << where << ": " << got;
        // Subnormal data in Acc == T: the scaled squares of the smallest values keep
        // fewer bits; allow a relative 1e-6 (float) there.
        const double rel = std::fabs(static_cast<double>((static_cast<long double>(got) - e.value) / e.value));
        const double allowed = scale == subnormal ? 1e-5 : e.tolerance / static_cast<double>(e.value) + 1e-12;
        EXPECT_LE(rel, allowed) << name(w) << " " << where << ": got " << got << ", reference "
                                << static_cast<double>(e.value);
      }
    }
  }
  // Mixed: a few huge values among ordinary and tiny ones, in one vector group.
  std::vector<T> mixed = positive_data<T>(4099, seed + 9);
  mixed[0] = huge;
  mixed[1] = tiny;
  mixed[2] = T(0);
  mixed[4098] = huge / T(3);
  device_buffer<T> dm{std::span<const T>(mixed)};
  for (what w : {what::l2, what::rms}) {
    const Acc got = run<T, Acc>(w, dm.data(), dm.data(), 4099);
    expect_near_reference<T, Acc>(w, got, mixed, mixed, "mixed magnitudes");
  }
  // All tiny with one ordinary value: the small sum is negligible, but present.
  std::vector<T> small_and_one(5000, tiny);
  small_and_one[17] = T(3);
  device_buffer<T> ds{std::span<const T>(small_and_one)};
  expect_near_reference<T, Acc>(what::l2, run<T, Acc>(what::l2, ds.data(), ds.data(), 5000), small_and_one,
                                small_and_one, "tiny values and one 3");
}

// The same input gives the same bits on every run, whatever the temp storage held.
TYPED_TEST_P(norms_typed, DeterministicBits) {
  using T = typename TypeParam::data;
  using Acc = typename TypeParam::acc;
  const auto seed = test_seed() + 7;
  SCOPED_TRACE(seed_trace(seed));
  // 2^24 (or the sanitizer's cap): the grid path, one cooperative launch.
  const std::int64_t n = std::min<std::int64_t>(std::int64_t{1} << 24, std::max<std::int64_t>(max_test_n(), 100000));
  const auto x = random_data<T>(n + 1, seed);
  const auto y = random_data<T>(n + 1, seed + 1);
  device_buffer<T> dx{std::span<const T>(x)}, dy{std::span<const T>(y)};
  for (const int offset : {0, 1}) {
    for (what w : all_quantities) {
      const auto first = bytes_of(run<T, Acc>(w, dx.data() + offset, dy.data() + offset, n - offset, 0x00));
      for (int r = 1; r < 5; ++r) {
        const auto again = bytes_of(run<T, Acc>(w, dx.data() + offset, dy.data() + offset, n - offset, 0x11 * r + 0x40));
        EXPECT_EQ(again, first) << name(w) << ", run " << r << ", offset " << offset;
      }
    }
  }
}

// The scaled sum of squares of l2_norm, rms and rms_diff reduces each 16-byte unit with
// its shortcut (scaled_square::reduce_unit), promised to give the bits of the per-item
// path. On the device, through the whole engine: the same input reduced with the
// shortcut and with the same transform stripped of it gives the same three sums, bit for
// bit, at the sizes of the tile kernel, the single block and the grid.
template <class Tf>
struct without_shortcut {
  Tf tf;
  template <class Item>
  __host__ __device__ auto operator()(const Item& item) const {
    return tf(item);
  }
};

template <class State, class Input, class Tf>
std::vector<unsigned char> reduced_bits(Input in, std::int64_t n, Tf tf) {
  device_buffer<State> out(1);
  std::size_t bytes = 0;
  SCANLAB_CHECK(scanlab::transform_reduce(nullptr, bytes, in, out.data(), n, State{}, scanlab::plus{}, tf));
  device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
  SCANLAB_CHECK(scanlab::transform_reduce(temp.data(), bytes, in, out.data(), n, State{}, scanlab::plus{}, tf));
  SCANLAB_CHECK(cudaDeviceSynchronize());
  return bytes_of(out.to_host()[0]);
}

TYPED_TEST_P(norms_typed, UnitShortcutKeepsTheBits) {
  using T = typename TypeParam::data;
  using Acc = typename TypeParam::acc;
  namespace nk = scanlab::detail::norms;
  using state = nk::scaled_ssq<Acc>;
  using one = nk::scaled_square<Acc, nk::element<Acc>>;
  using two = nk::scaled_square<Acc, nk::difference<Acc>>;
  const auto seed = test_seed() + 8;
  SCOPED_TRACE(seed_trace(seed));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> pick(0, 99);
  const T huge = sizeof(T) == 4 ? T(1e30) : T(1e300);
  const T tiny = sizeof(T) == 4 ? T(1e-30) : T(1e-300);
  for (const std::int64_t n : capped({std::int64_t{3000}, std::int64_t{30000}, std::int64_t{1} << 20})) {
    // Mostly ordinary values (whole units take the fast path), some zeros, and about one
    // value in 60 huge or tiny (their units take the per-item path).
    auto x = random_data<T>(n, seed + static_cast<std::uint64_t>(n));
    auto y = random_data<T>(n, seed + static_cast<std::uint64_t>(n) + 1);
    for (auto& v : x) {
      const int p = pick(rng);
      v = p < 5 ? T(0) : p == 5 ? v * huge : p == 6 ? v * tiny : v;
    }
    device_buffer<T> dx{std::span<const T>(x)}, dy{std::span<const T>(y)};
    const std::string where = "n = " + std::to_string(n);
    EXPECT_EQ(reduced_bits<state>(dx.data(), n, one{}), reduced_bits<state>(dx.data(), n, without_shortcut<one>{}))
        << "one input, " << where;
    const auto zipped = scanlab::zip(static_cast<const T*>(dx.data()), static_cast<const T*>(dy.data()));
    EXPECT_EQ(reduced_bits<state>(zipped, n, two{}), reduced_bits<state>(zipped, n, without_shortcut<two>{}))
        << "two inputs, " << where;
  }
}

TYPED_TEST_P(norms_typed, MismatchedLengthsRejected) {
  using T = typename TypeParam::data;
  using Acc = typename TypeParam::acc;
  device_buffer<T> dx(10), dy(11);
  device_buffer<Acc> out(1);
  std::size_t bytes = 0;
  const std::span<const T> sx(dx.data(), 10), sy(dy.data(), 11);
  EXPECT_EQ(scanlab::dot(nullptr, bytes, sx, sy, out.data()), cudaErrorInvalidValue);
  EXPECT_EQ(scanlab::rms_diff(nullptr, bytes, sx, sy, out.data()), cudaErrorInvalidValue);
  // Equal lengths through the span form work as the pointer form does.
  const std::span<const T> sy10(dy.data(), 10);
  ASSERT_EQ(scanlab::dot(nullptr, bytes, sx, sy10, out.data()), cudaSuccess);
  EXPECT_GE(bytes, 1u);
}

REGISTER_TYPED_TEST_SUITE_P(norms_typed, EmptyInput, NegativeCountIsInvalid, BoundarySizes, MisalignedStarts,
                            RandomSizes, NanPropagates, InfPropagates, HugeAndTinyMagnitudes, DeterministicBits,
                            UnitShortcutKeepsTheBits, MismatchedLengthsRejected);

}  // namespace scanlab::test::norms
