// Test bodies for the scans, shared by one translation unit per element type
// (test_scan_<type>.cu stamps SCANLAB_SCAN_TESTS for its case).
//
// Every result is checked against a sequential CPU scan (exact for integers, custom
// structs and integer-valued floats; float sums against a float64 reference with
// Higham's n-aware tolerance; affine maps against a float64 composition) and against
// cub::DeviceScan on the same device input. Output buffers are poisoned before each
// run, temp storage is filled with garbage: nothing may rely on zeroed memory.
#pragma once

#include "common/device_buffer.hpp"
#include "common/gpu_test.hpp"
#include "common/test_util.hpp"

#include <scanlab/block/block_scan.cuh>
#include <scanlab/device/tile_state.cuh>
#include <scanlab/error.hpp>
#include <scanlab/functional.cuh>
#include <scanlab/iterator.cuh>
#include <scanlab/ladder/scan_ladder.cuh>
#include <scanlab/scan.cuh>
#include <scanlab/warp/warp_scan.cuh>

#include <cub/device/device_scan.cuh>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace scanlab::test::scan {

// ---- Custom element types and operators -------------------------------------------

// Three counters summed component-wise: 12 bytes, neither a divisor nor a multiple of
// 16 (element-wise loads; separate flag and value in the tile state).
struct vec3i {
  std::int32_t x, y, z;
  friend bool operator==(const vec3i&, const vec3i&) = default;
};
inline std::ostream& operator<<(std::ostream& os, const vec3i& v) {
  return os << "(" << v.x << ", " << v.y << ", " << v.z << ")";
}
struct vec3i_add {
  __host__ __device__ vec3i operator()(const vec3i& a, const vec3i& b) const {
    return {a.x + b.x, a.y + b.y, a.z + b.z};
  }
};

// The affine map x -> a x + b. Scanning composes maps: apply `earlier` first, then
// `later`. Associative, not commutative: a linear recurrence as a scan (8 bytes).
struct affine {
  float a, b;
};
inline std::ostream& operator<<(std::ostream& os, const affine& f) { return os << "(" << f.a << ", " << f.b << ")"; }
struct affine_compose {
  __host__ __device__ affine operator()(const affine& earlier, const affine& later) const {
    return {later.a * earlier.a, later.a * earlier.b + later.b};
  }
};

// 2x2 matrices over uint32 (arithmetic mod 2^32: exact and associative, not
// commutative); the scan multiplies earlier * later (16 bytes: one vector per item).
struct mat2u {
  std::uint32_t m00, m01, m10, m11;
  friend bool operator==(const mat2u&, const mat2u&) = default;
};
inline std::ostream& operator<<(std::ostream& os, const mat2u& m) {
  return os << "[" << m.m00 << " " << m.m01 << "; " << m.m10 << " " << m.m11 << "]";
}
struct mat2u_multiply {
  __host__ __device__ mat2u operator()(const mat2u& l, const mat2u& r) const {
    return {l.m00 * r.m00 + l.m01 * r.m10, l.m00 * r.m01 + l.m01 * r.m11, l.m10 * r.m00 + l.m11 * r.m10,
            l.m10 * r.m01 + l.m11 * r.m11};
  }
};

}  // namespace scanlab::test::scan

// The ladder pads partial sections with the operator's identity.
template <>
struct scanlab::identity<scanlab::test::scan::vec3i_add, scanlab::test::scan::vec3i> {
  __host__ __device__ static constexpr scanlab::test::scan::vec3i value() { return {0, 0, 0}; }
};
template <>
struct scanlab::identity<scanlab::test::scan::affine_compose, scanlab::test::scan::affine> {
  __host__ __device__ static constexpr scanlab::test::scan::affine value() { return {1.0f, 0.0f}; }
};
template <>
struct scanlab::identity<scanlab::test::scan::mat2u_multiply, scanlab::test::scan::mat2u> {
  __host__ __device__ static constexpr scanlab::test::scan::mat2u value() { return {1, 0, 0, 1}; }
};

namespace scanlab::test::scan {

// ---- Cases: element type, operator, data, how results are compared -------------------

enum class check_kind { exact, float_sum, affine_approx };

template <class T, class Op, check_kind Kind>
struct case_base {
  using value_type = T;
  using op_type = Op;
  static constexpr check_kind kind = Kind;
};

struct int32_case : case_base<std::int32_t, plus, check_kind::exact> {
  static std::int32_t init() { return 7; }
  static std::vector<std::int32_t> values(std::int64_t n, std::uint64_t seed) {
    return random_values<std::int32_t>(n, seed);
  }
};

// Full-range values: sums wrap mod 2^32, exactly as on the CPU.
struct uint32_case : case_base<std::uint32_t, plus, check_kind::exact> {
  static std::uint32_t init() { return 4000000000u; }
  static std::vector<std::uint32_t> values(std::int64_t n, std::uint64_t seed) {
    return random_values<std::uint32_t>(n, seed, false);
  }
};

// Values up to 2^40: sums of a few million cannot overflow int64.
struct int64_case : case_base<std::int64_t, plus, check_kind::exact> {
  static std::int64_t init() { return -(std::int64_t{1} << 45); }
  static std::vector<std::int64_t> values(std::int64_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::int64_t> dist(-(std::int64_t{1} << 40), std::int64_t{1} << 40);
    std::vector<std::int64_t> out(static_cast<std::size_t>(n));
    for (auto& v : out) v = dist(rng);
    return out;
  }
};

template <class F>
struct float_case : case_base<F, plus, check_kind::float_sum> {
  static F init() { return F(0.5); }
  static std::vector<F> values(std::int64_t n, std::uint64_t seed) { return random_values<F>(n, seed); }
};

// Small integers stored as floats: every partial sum of up to 2^21 of them is exact in
// float, in any order, so results compare exactly (catches a misplaced item that a
// rounding tolerance would hide).
struct float_exact_case : case_base<float, plus, check_kind::exact> {
  static float init() { return 0.5f; }
  static std::vector<float> values(std::int64_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> dist(-8, 8);
    std::vector<float> out(static_cast<std::size_t>(n));
    for (auto& v : out) v = static_cast<float>(dist(rng));
    return out;
  }
};

struct vec3_case : case_base<vec3i, vec3i_add, check_kind::exact> {
  static vec3i init() { return {1, -2, 3}; }
  static std::vector<vec3i> values(std::int64_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::int32_t> dist(-100, 100);
    std::vector<vec3i> out(static_cast<std::size_t>(n));
    for (auto& v : out) v = {dist(rng), dist(rng), dist(rng)};
    return out;
  }
};

// Slopes in [0.5, 1]: compositions stay bounded, errors stay at float rounding.
struct affine_case : case_base<affine, affine_compose, check_kind::affine_approx> {
  static affine init() { return {0.75f, 0.5f}; }
  static std::vector<affine> values(std::int64_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> slope(0.5f, 1.0f);
    std::uniform_real_distribution<float> offset(-1.0f, 1.0f);
    std::vector<affine> out(static_cast<std::size_t>(n));
    for (auto& v : out) v = {slope(rng), offset(rng)};
    return out;
  }
};

struct mat2u_case : case_base<mat2u, mat2u_multiply, check_kind::exact> {
  static mat2u init() { return {3, 1, 4, 1}; }
  static std::vector<mat2u> values(std::int64_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<mat2u> out(static_cast<std::size_t>(n));
    for (auto& v : out) {
      v = {static_cast<std::uint32_t>(rng()), static_cast<std::uint32_t>(rng()), static_cast<std::uint32_t>(rng()),
           static_cast<std::uint32_t>(rng())};
    }
    return out;
  }
};

// ---- Host helpers --------------------------------------------------------------------

template <class T>
std::vector<T> copy_to_host(const T* d_data, std::int64_t n) {
  std::vector<T> host(static_cast<std::size_t>(n));
  if (n > 0) SCANLAB_CHECK(cudaMemcpy(host.data(), d_data, host.size() * sizeof(T), cudaMemcpyDeviceToHost));
  return host;
}

template <class T>
void poison(T* d_data, std::int64_t n) {
  if (n > 0) SCANLAB_CHECK(cudaMemset(d_data, 0xab, static_cast<std::size_t>(n) * sizeof(T)));
}

template <class T>
bool bitwise_equal(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

template <class Case>
std::vector<typename Case::value_type> sequential_scan(const std::vector<typename Case::value_type>& in,
                                                       bool exclusive) {
  using T = typename Case::value_type;
  typename Case::op_type op;
  std::vector<T> out(in.size());
  if (in.empty()) return out;
  if (exclusive) {
    T acc = Case::init();
    for (std::size_t i = 0; i < in.size(); ++i) {
      out[i] = acc;
      acc = op(acc, in[i]);
    }
  } else {
    T acc = in[0];
    out[0] = acc;
    for (std::size_t i = 1; i < in.size(); ++i) {
      acc = op(acc, in[i]);
      out[i] = acc;
    }
  }
  return out;
}

inline std::string where(std::size_t i, std::size_t n) {
  return "at index " + std::to_string(i) + " of " + std::to_string(n);
}

// Checks `got` (and CUB's result, if given) against the CPU reference.
template <class Case>
::testing::AssertionResult check_scan(const std::vector<typename Case::value_type>& in,
                                      const std::vector<typename Case::value_type>& got, bool exclusive,
                                      const std::vector<typename Case::value_type>* cub = nullptr) {
  using T = typename Case::value_type;
  const std::size_t n = in.size();
  if (got.size() != n) return ::testing::AssertionFailure() << "result has " << got.size() << " items, want " << n;
  if (cub != nullptr && cub->size() != n) return ::testing::AssertionFailure() << "CUB result has wrong size";
  if constexpr (Case::kind == check_kind::exact) {
    const std::vector<T> ref = sequential_scan<Case>(in, exclusive);
    for (std::size_t i = 0; i < n; ++i) {
      if (!(got[i] == ref[i])) {
        return ::testing::AssertionFailure() << "scan " << where(i, n) << ": got " << got[i] << ", want " << ref[i];
      }
      if (cub != nullptr && !((*cub)[i] == got[i])) {
        return ::testing::AssertionFailure() << "scan differs from cub::DeviceScan " << where(i, n) << ": got "
                                             << got[i] << ", CUB " << (*cub)[i];
      }
    }
  } else if constexpr (Case::kind == check_kind::float_sum) {
    double acc = exclusive ? static_cast<double>(Case::init()) : 0.0;
    double acc_abs = exclusive ? std::fabs(static_cast<double>(Case::init())) : 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      if (!exclusive) {
        acc += static_cast<double>(in[i]);
        acc_abs += std::fabs(static_cast<double>(in[i]));
      }
      const double tol = sum_tolerance<T>(static_cast<std::int64_t>(i) + 2, acc_abs);
      const double value = static_cast<double>(got[i]);
      if (!(std::fabs(value - acc) <= tol)) {
        return ::testing::AssertionFailure() << "scan " << where(i, n) << ": got " << value << ", float64 reference "
                                             << acc << ", tolerance " << tol;
      }
      if (cub != nullptr && !(std::fabs(value - static_cast<double>((*cub)[i])) <= 2 * tol)) {
        return ::testing::AssertionFailure() << "scan differs from cub::DeviceScan " << where(i, n) << ": got "
                                             << value << ", CUB " << (*cub)[i] << ", tolerance " << 2 * tol;
      }
      if (exclusive) {
        acc += static_cast<double>(in[i]);
        acc_abs += std::fabs(static_cast<double>(in[i]));
      }
    }
  } else {
    // Affine maps composed in float64; slopes <= 1 keep every value O(1).
    double a = 1.0;
    double b = 0.0;
    if (exclusive) {
      a = Case::init().a;
      b = Case::init().b;
    }
    const auto close = [](double x, double y, double scale) {
      return std::fabs(x - y) <= scale * (1.0 + std::fabs(y));
    };
    for (std::size_t i = 0; i < n; ++i) {
      if (!exclusive) {
        b = in[i].a * b + in[i].b;
        a = in[i].a * a;
      }
      if (!close(got[i].a, a, 1e-4) || !close(got[i].b, b, 1e-4)) {
        return ::testing::AssertionFailure() << "scan " << where(i, n) << ": got " << got[i]
                                             << ", float64 reference (" << a << ", " << b << ")";
      }
      if (cub != nullptr && (!close(got[i].a, (*cub)[i].a, 2e-4) || !close(got[i].b, (*cub)[i].b, 2e-4))) {
        return ::testing::AssertionFailure() << "scan differs from cub::DeviceScan " << where(i, n) << ": got "
                                             << got[i] << ", CUB " << (*cub)[i];
      }
      if (exclusive) {
        b = in[i].a * b + in[i].b;
        a = in[i].a * a;
      }
    }
  }
  return ::testing::AssertionSuccess();
}

// ---- Runners -------------------------------------------------------------------------

template <class Case>
using policy_of = device::default_scan_policy<typename Case::value_type>;

// Items per tile of the production kernel on this GPU (the policy is chosen per architecture).
template <class Case>
std::int64_t tile_of() {
  std::int64_t items = 0;
  SCANLAB_CHECK(detail::device_tile_items<policy_of<Case>>(items));
  return items;
}

// Blocks of the production kernel that fit on this GPU at once (the first-round size).
template <class Case>
std::int64_t resident_blocks() {
  using T = typename Case::value_type;
  int capacity = 0;
  bool cooperative = false;
  SCANLAB_CHECK((scan_detail::resident_capacity<policy_of<Case>, const T*, T*, T, typename Case::op_type>(
      capacity, cooperative)));
  return capacity;
}

// The production scan into d_out (poisoned first); returns the result. With default
// options it goes through the public entry points.
template <class Case, class InputIt>
std::vector<typename Case::value_type> run_production(InputIt d_in, typename Case::value_type* d_out, std::int64_t n,
                                                      bool exclusive, scan_detail::scan_options options = {}) {
  using T = typename Case::value_type;
  const typename Case::op_type op{};
  const bool public_api = options.mode == scan_detail::scan_mode::automatic && options.max_blocks == 0;
  const auto call = [&](void* d_temp, std::size_t& bytes) -> cudaError_t {
    if (public_api) {
      return exclusive ? exclusive_scan(d_temp, bytes, d_in, d_out, n, Case::init(), op)
                       : inclusive_scan(d_temp, bytes, d_in, d_out, n, op);
    }
    return scan_detail::dispatch_scan<policy_of<Case>>(d_temp, bytes, d_in, d_out, n, scan_detail::kind_of(exclusive), Case::init(), op,
                                                       nullptr, options);
  };
  std::size_t bytes = 0;
  SCANLAB_CHECK(call(nullptr, bytes));
  EXPECT_GE(bytes, 1u);
  device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
  temp.fill_bytes(0xff);
  bool in_place = false;
  if constexpr (std::is_pointer_v<InputIt>) {
    in_place = static_cast<const void*>(d_out) == static_cast<const void*>(d_in);
  }
  if (!in_place) poison(d_out, n);
  SCANLAB_CHECK(call(temp.data(), bytes));
  SCANLAB_CHECK(cudaDeviceSynchronize());
  return copy_to_host(d_out, n);
}

template <class Case>
std::vector<typename Case::value_type> run_cub(const typename Case::value_type* d_in, std::int64_t n, bool exclusive) {
  using T = typename Case::value_type;
  if (n == 0) return {};
  device_buffer<T> out(n);
  const typename Case::op_type op{};
  std::size_t bytes = 0;
  if (exclusive) {
    SCANLAB_CHECK(cub::DeviceScan::ExclusiveScan(nullptr, bytes, d_in, out.data(), op, Case::init(), n));
  } else {
    SCANLAB_CHECK(cub::DeviceScan::InclusiveScan(nullptr, bytes, d_in, out.data(), op, n));
  }
  device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
  if (exclusive) {
    SCANLAB_CHECK(cub::DeviceScan::ExclusiveScan(temp.data(), bytes, d_in, out.data(), op, Case::init(), n));
  } else {
    SCANLAB_CHECK(cub::DeviceScan::InclusiveScan(temp.data(), bytes, d_in, out.data(), op, n));
  }
  SCANLAB_CHECK(cudaDeviceSynchronize());
  return out.to_host();
}

template <class Case>
std::vector<typename Case::value_type> run_ladder(ladder::scan_variant variant, bool exclusive,
                                                  const typename Case::value_type* d_in,
                                                  typename Case::value_type* d_out, std::int64_t n, int threads) {
  const auto kind = exclusive ? ladder::scan_kind::exclusive : ladder::scan_kind::inclusive;
  const typename Case::op_type op{};
  std::size_t bytes = 0;
  SCANLAB_CHECK(ladder::scan(variant, kind, nullptr, bytes, d_in, d_out, n, Case::init(), op, nullptr, threads));
  EXPECT_GE(bytes, 1u);
  device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
  temp.fill_bytes(0xff);
  if (d_out != d_in) poison(d_out, n);
  SCANLAB_CHECK(ladder::scan(variant, kind, temp.data(), bytes, d_in, d_out, n, Case::init(), op, nullptr, threads));
  SCANLAB_CHECK(cudaDeviceSynchronize());
  return copy_to_host(d_out, n);
}

template <class T>
device_buffer<T> upload(const std::vector<T>& host) {
  return device_buffer<T>(std::span<const T>(host));
}

inline std::string size_trace(std::int64_t n) { return "n = " + std::to_string(n); }

// ---- Test bodies ---------------------------------------------------------------------

// Sizes for the production scan: around tile boundaries, around the first-round size
// (resident blocks x tile: the single-launch, single-round limit), past it, and random.
template <class Case>
std::vector<std::int64_t> production_sizes(std::uint64_t seed) {
  const std::int64_t tile = tile_of<Case>();
  const std::int64_t round = resident_blocks<Case>() * tile;
  std::vector<std::int64_t> sizes = boundary_sizes(tile, 3);
  for (std::int64_t n : {7 * tile + 77, round - 1, round, round + 1, 2 * round + 5, 4 * tile - 3}) sizes.push_back(n);
  for (std::int64_t n : random_sizes(3, std::int64_t{1} << 21, seed)) sizes.push_back(n);
  return sizes;
}

template <class Case>
void production_test(bool exclusive) {
  using T = typename Case::value_type;
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  for (const std::int64_t n : production_sizes<Case>(seed)) {
    SCOPED_TRACE(size_trace(n));
    const std::vector<T> h_in = Case::values(n, seed + static_cast<std::uint64_t>(n));
    auto d_in = upload(h_in);
    device_buffer<T> d_out(n);
    const auto got = run_production<Case>(static_cast<const T*>(d_in.data()), d_out.data(), n, exclusive);
    const auto cub = run_cub<Case>(d_in.data(), n, exclusive);
    ASSERT_TRUE(check_scan<Case>(h_in, got, exclusive, n > 0 ? &cub : nullptr));
  }
}

// Every launch mode, with the grid capped so that small inputs take many look-back
// rounds (cooperative) or many tickets per block. The canonical grouping makes every
// mode give the same bits (floats included): each result must equal the first mode's.
template <class Case>
void production_modes_test() {
  using T = typename Case::value_type;
  using scan_detail::scan_mode;
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t tile = tile_of<Case>();
  const scan_detail::scan_options configs[] = {
      {scan_mode::single_block, 0}, {scan_mode::cooperative, 2}, {scan_mode::cooperative, 3},
      {scan_mode::cooperative, 33}, {scan_mode::tickets, 0},     {scan_mode::tickets, 3},
  };
  for (const std::int64_t k : {1, 2, 3, 5, 32, 33, 34, 70}) {
    for (const std::int64_t d : {-1, 0, 1}) {
      const std::int64_t n = k * tile + d;
      SCOPED_TRACE(size_trace(n));
      const std::vector<T> h_in = Case::values(n, seed + static_cast<std::uint64_t>(n));
      auto d_in = upload(h_in);
      device_buffer<T> d_out(n);
      std::vector<T> first[2];
      for (const auto& config : configs) {
        SCOPED_TRACE("mode " + std::to_string(static_cast<int>(config.mode)) + ", max_blocks " +
                     std::to_string(config.max_blocks));
        for (const bool exclusive : {false, true}) {
          const auto got = run_production<Case>(static_cast<const T*>(d_in.data()), d_out.data(), n, exclusive, config);
          ASSERT_TRUE(check_scan<Case>(h_in, got, exclusive)) << (exclusive ? "exclusive" : "inclusive");
          std::vector<T>& reference = first[exclusive ? 1 : 0];
          if (reference.empty()) reference = got;
          ASSERT_TRUE(bitwise_equal(reference, got)) << "differs from the first mode's result, "
                                                     << (exclusive ? "exclusive" : "inclusive");
        }
      }
    }
  }
}

template <class Case>
void production_in_place_test() {
  using T = typename Case::value_type;
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t tile = tile_of<Case>();
  for (const std::int64_t n : {std::int64_t{1}, 3 * tile + 5, resident_blocks<Case>() * tile + 7}) {
    for (const bool exclusive : {false, true}) {
      SCOPED_TRACE(size_trace(n));
      const std::vector<T> h_in = Case::values(n, seed + static_cast<std::uint64_t>(n));
      auto d_data = upload(h_in);
      const auto cub = run_cub<Case>(d_data.data(), n, exclusive);
      const auto got = run_production<Case>(static_cast<const T*>(d_data.data()), d_data.data(), n, exclusive);
      ASSERT_TRUE(check_scan<Case>(h_in, got, exclusive, &cub)) << (exclusive ? "exclusive" : "inclusive");
    }
  }
}

// Pointers one element off 16-byte alignment (input, output, both): the element-wise path.
template <class Case>
void production_unaligned_test() {
  using T = typename Case::value_type;
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t tile = tile_of<Case>();
  for (const std::int64_t n : {3 * tile + 5, resident_blocks<Case>() * tile + 3}) {
    const std::vector<T> h_in = Case::values(n, seed + static_cast<std::uint64_t>(n));
    std::vector<T> shifted(static_cast<std::size_t>(n) + 1);
    std::copy(h_in.begin(), h_in.end(), shifted.begin() + 1);
    auto d_aligned = upload(h_in);
    auto d_shifted = upload(shifted);
    device_buffer<T> d_out(n + 1);
    const T* inputs[] = {d_aligned.data(), d_shifted.data() + 1};
    T* outputs[] = {d_out.data(), d_out.data() + 1};
    for (int in_offset = 0; in_offset < 2; ++in_offset) {
      for (int out_offset = 0; out_offset < 2; ++out_offset) {
        if (in_offset == 0 && out_offset == 0) continue;  // aligned: every other test
        SCOPED_TRACE(size_trace(n) + ", element offsets in/out " + std::to_string(in_offset) + "/" +
                     std::to_string(out_offset));
        for (const bool exclusive : {false, true}) {
          const auto got = run_production<Case>(inputs[in_offset], outputs[out_offset], n, exclusive);
          ASSERT_TRUE(check_scan<Case>(h_in, got, exclusive)) << (exclusive ? "exclusive" : "inclusive");
        }
      }
    }
  }
}

// The same input scanned repeatedly gives the same bits (floats included).
template <class Case>
void production_deterministic_test() {
  using T = typename Case::value_type;
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t n = 3 * resident_blocks<Case>() * tile_of<Case>() + 12345;
  const std::vector<T> h_in = Case::values(n, seed);
  auto d_in = upload(h_in);
  device_buffer<T> d_out(n);
  for (const bool exclusive : {false, true}) {
    const auto first = run_production<Case>(static_cast<const T*>(d_in.data()), d_out.data(), n, exclusive);
    ASSERT_TRUE(check_scan<Case>(h_in, first, exclusive));
    for (int run = 1; run < 4; ++run) {
      const auto again = run_production<Case>(static_cast<const T*>(d_in.data()), d_out.data(), n, exclusive);
      ASSERT_TRUE(bitwise_equal(first, again)) << "run " << run << " differs from run 0";
    }
  }
}

// Every ladder variant, a few block sizes, sizes around its section and two recursion levels.
template <class Case>
void ladder_test(bool exclusive) {
  using T = typename Case::value_type;
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  for (const auto variant : ladder::scan_variants) {
    SCOPED_TRACE(std::string(ladder::variant_name(variant)));
    for (const int threads : {64, 256, 1024}) {
      if (variant == ladder::scan_variant::decoupled_lookback && threads != 256) continue;  // ignores the block size
      SCOPED_TRACE("block " + std::to_string(threads));
      const std::int64_t section = ladder::ladder_detail::section_items(variant, threads);
      std::vector<std::int64_t> sizes = {0,           1, section - 1, section, section + 1, 2 * section + 3,
                                         std::min<std::int64_t>(section * section + 5, std::int64_t{1} << 20)};
      sizes.push_back(random_sizes(1, std::int64_t{1} << 20, seed + static_cast<std::uint64_t>(threads))[0]);
      if (variant == ladder::scan_variant::naive) {
        std::erase_if(sizes, [](std::int64_t n) { return n > ladder::naive_scan_max_items; });
        sizes.push_back(ladder::naive_scan_max_items);
      }
      for (const std::int64_t n : sizes) {
        SCOPED_TRACE(size_trace(n));
        const std::vector<T> h_in = Case::values(n, seed + static_cast<std::uint64_t>(n));
        auto d_in = upload(h_in);
        device_buffer<T> d_out(n);
        const auto got = run_ladder<Case>(variant, exclusive, d_in.data(), d_out.data(), n, threads);
        const auto cub = run_cub<Case>(d_in.data(), n, exclusive);
        ASSERT_TRUE(check_scan<Case>(h_in, got, exclusive, n > 0 ? &cub : nullptr));
        if (variant != ladder::scan_variant::naive && n == section + 1) {  // in place, once per block size
          const auto in_place = run_ladder<Case>(variant, exclusive, d_in.data(), d_in.data(), n, threads);
          ASSERT_TRUE(check_scan<Case>(h_in, in_place, exclusive)) << "in place";
        }
      }
    }
  }
}

// ---- Block- and warp-level scans -----------------------------------------------------

template <class T, class Op, int Threads, int Items>
__global__ void block_scan_test_kernel(const T* in, T* inclusive, T* exclusive, T* aggregates, T init, Op op) {
  using block_scan_t = block_scan<T, Threads>;
  __shared__ typename block_scan_t::temp_storage storage;
  const std::int64_t base = (blockIdx.x * static_cast<std::int64_t>(Threads) + threadIdx.x) * Items;
  T items[Items];
  for (int k = 0; k < Items; ++k) items[k] = in[base + k];
  T result[Items];
  T aggregate;
  block_scan_t(storage).inclusive_scan(items, result, op, aggregate);
  for (int k = 0; k < Items; ++k) inclusive[base + k] = result[k];
  if (threadIdx.x == 0) aggregates[blockIdx.x] = aggregate;
  __syncthreads();
  block_scan_t(storage).exclusive_scan(items, items, init, op);  // in place
  for (int k = 0; k < Items; ++k) exclusive[base + k] = items[k];
}

// A whole-array scan built from block_scan + tile_state, the way apps are meant to:
// tickets for tile order, look-back through lookback_prefix_op.
template <class T, class Op, int Threads, int Items>
__global__ void block_lookback_test_kernel(const T* in, T* out, device::tile_state<T> state, Op op) {
  using block_scan_t = block_scan<T, Threads>;
  __shared__ typename block_scan_t::temp_storage storage;
  __shared__ std::int64_t tile;
  if (threadIdx.x == 0) tile = state.claim_tile();
  __syncthreads();
  const std::int64_t base = (tile * Threads + threadIdx.x) * Items;
  T items[Items];
  for (int k = 0; k < Items; ++k) items[k] = in[base + k];
  if (tile == 0) {
    T aggregate;
    block_scan_t(storage).inclusive_scan(items, items, op, aggregate);
    if (threadIdx.x == 0) state.publish_aggregate(0, aggregate);
  } else {
    device::lookback_prefix_op<T, Op> prefix_op{state, tile, op};
    block_scan_t(storage).inclusive_scan_with_prefix(items, items, op, prefix_op);
  }
  for (int k = 0; k < Items; ++k) out[base + k] = items[k];
}

template <class T, class Op, int Width>
__global__ void warp_scan_test_kernel(const T* in, T* inclusive, T* exclusive, T* aggregates, T init, Op op) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  T aggregate;
  inclusive[i] = warp_inclusive_scan<Width>(in[i], op, aggregate);
  exclusive[i] = warp_exclusive_scan<Width>(in[i], init, op);
  aggregates[i] = aggregate;
}

template <class Case>
void block_and_warp_test() {
  using T = typename Case::value_type;
  using Op = typename Case::op_type;
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  constexpr int threads = 128;
  constexpr int items = 3;
  constexpr std::int64_t tile = threads * items;

  {  // block_scan, per block
    constexpr int blocks = 5;
    const std::vector<T> h_in = Case::values(blocks * tile, seed);
    auto d_in = upload(h_in);
    device_buffer<T> d_inclusive(blocks * tile), d_exclusive(blocks * tile), d_aggregates(blocks);
    block_scan_test_kernel<T, Op, threads, items><<<blocks, threads>>>(
        d_in.data(), d_inclusive.data(), d_exclusive.data(), d_aggregates.data(), Case::init(), Op{});
    SCANLAB_CHECK_LAUNCH();
    const auto inclusive = d_inclusive.to_host();
    const auto exclusive = d_exclusive.to_host();
    const auto aggregates = d_aggregates.to_host();
    for (int b = 0; b < blocks; ++b) {
      const std::vector<T> part(h_in.begin() + b * tile, h_in.begin() + (b + 1) * tile);
      const std::vector<T> got_inclusive(inclusive.begin() + b * tile, inclusive.begin() + (b + 1) * tile);
      const std::vector<T> got_exclusive(exclusive.begin() + b * tile, exclusive.begin() + (b + 1) * tile);
      ASSERT_TRUE(check_scan<Case>(part, got_inclusive, false)) << "block_scan inclusive, block " << b;
      ASSERT_TRUE(check_scan<Case>(part, got_exclusive, true)) << "block_scan exclusive, block " << b;
      // The aggregate is the block's total (grouped by the warp tree: checked like a last prefix).
      std::vector<T> with_aggregate = got_inclusive;
      with_aggregate.back() = aggregates[static_cast<std::size_t>(b)];
      ASSERT_TRUE(check_scan<Case>(part, with_aggregate, false)) << "aggregate of block " << b;
    }
  }
  {  // block_scan + tile_state look-back over a whole array
    constexpr std::int64_t tiles = 45;
    const std::vector<T> h_in = Case::values(tiles * tile, seed + 1);
    auto d_in = upload(h_in);
    device_buffer<T> d_out(tiles * tile);
    device_buffer<unsigned char> storage(static_cast<std::int64_t>(device::tile_state<T>::storage_bytes(tiles)));
    storage.fill_bytes(0xff);
    const device::tile_state<T> state(storage.data(), tiles);
    for (int run = 0; run < 3; ++run) {  // the state is reset on every run
      SCANLAB_CHECK(state.reset(nullptr));
      block_lookback_test_kernel<T, Op, threads, items><<<tiles, threads>>>(d_in.data(), d_out.data(), state, Op{});
      SCANLAB_CHECK_LAUNCH();
      ASSERT_TRUE(check_scan<Case>(h_in, d_out.to_host(), false)) << "block_scan with look-back, run " << run;
    }
  }
  {  // warp scans, full warps and groups of 8 lanes
    constexpr int n = 4 * 32;
    const std::vector<T> h_in = Case::values(n, seed + 2);
    auto d_in = upload(h_in);
    device_buffer<T> d_inclusive(n), d_exclusive(n), d_aggregates(n);
    const auto check_width = [&](std::size_t width) {
      const auto inclusive = d_inclusive.to_host();
      const auto exclusive = d_exclusive.to_host();
      const auto aggregates = d_aggregates.to_host();
      for (std::size_t start = 0; start < h_in.size(); start += width) {
        const auto range = [&](const std::vector<T>& v) {
          return std::vector<T>(v.begin() + static_cast<std::ptrdiff_t>(start),
                                v.begin() + static_cast<std::ptrdiff_t>(start + width));
        };
        ASSERT_TRUE(check_scan<Case>(range(h_in), range(inclusive), false)) << "warp inclusive, width " << width;
        ASSERT_TRUE(check_scan<Case>(range(h_in), range(exclusive), true)) << "warp exclusive, width " << width;
        const std::vector<T> want(width, inclusive[start + width - 1]);
        ASSERT_TRUE(bitwise_equal(range(aggregates), want)) << "warp aggregate, width " << width;
      }
    };
    warp_scan_test_kernel<T, Op, 32><<<n / 64, 64>>>(d_in.data(), d_inclusive.data(), d_exclusive.data(),
                                                     d_aggregates.data(), Case::init(), Op{});
    SCANLAB_CHECK_LAUNCH();
    check_width(32);
    warp_scan_test_kernel<T, Op, 8><<<n / 64, 64>>>(d_in.data(), d_inclusive.data(), d_exclusive.data(),
                                                    d_aggregates.data(), Case::init(), Op{});
    SCANLAB_CHECK_LAUNCH();
    check_width(8);
  }
}

// ---- Stress: the single-pass scans, many runs over many sizes ------------------------

// Any result that differs from the first run of the same configuration fails, as does a
// first run that differs from the CPU reference.
template <class Case>
void stress_test(int repeats) {
  using T = typename Case::value_type;
  using scan_detail::scan_mode;
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t tile = tile_of<Case>();
  const std::int64_t round = resident_blocks<Case>() * tile;
  std::vector<std::int64_t> sizes;
  for (const std::int64_t k : {1, 2, 5, 33, 130, 531, 1500}) {
    for (const std::int64_t d : {-1, 1}) sizes.push_back(k * tile + d);
  }
  for (const std::int64_t n : {round - 1, round + 1, 3 * round + 17}) sizes.push_back(n);
  const scan_detail::scan_options configs[] = {
      {scan_mode::automatic, 0}, {scan_mode::cooperative, 16}, {scan_mode::tickets, 0}};
  for (const std::int64_t n : sizes) {
    SCOPED_TRACE(size_trace(n));
    const std::vector<T> h_in = Case::values(n, seed + static_cast<std::uint64_t>(n));
    auto d_in = upload(h_in);
    device_buffer<T> d_out(n);
    for (const bool exclusive : {false, true}) {
      for (const auto& config : configs) {
        SCOPED_TRACE("mode " + std::to_string(static_cast<int>(config.mode)));
        const auto first = run_production<Case>(static_cast<const T*>(d_in.data()), d_out.data(), n, exclusive, config);
        ASSERT_TRUE(check_scan<Case>(h_in, first, exclusive));
        for (int r = 1; r < repeats; ++r) {
          const auto again =
              run_production<Case>(static_cast<const T*>(d_in.data()), d_out.data(), n, exclusive, config);
          ASSERT_TRUE(bitwise_equal(first, again)) << "run " << r << " differs from run 0";
        }
      }
      SCOPED_TRACE("ladder chained");
      const auto first = run_ladder<Case>(ladder::scan_variant::chained, exclusive, d_in.data(), d_out.data(), n, 256);
      ASSERT_TRUE(check_scan<Case>(h_in, first, exclusive));
      for (int r = 1; r < repeats; ++r) {
        const auto again =
            run_ladder<Case>(ladder::scan_variant::chained, exclusive, d_in.data(), d_out.data(), n, 256);
        ASSERT_TRUE(bitwise_equal(first, again)) << "run " << r << " differs from run 0";
      }
    }
  }
}

// ---- Inputs past 2^31 items, checked on the device -------------------------------------

// Counts outputs that differ from expected(i).
template <class T, class Expected>
__global__ void count_mismatches_kernel(const T* out, std::int64_t n, Expected expected, unsigned long long* bad) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  unsigned long long local = 0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
    if (!(out[i] == expected(i))) ++local;
  }
  if (local != 0) atomicAdd(bad, local);
}

template <class T, class Expected>
unsigned long long count_mismatches(const T* d_out, std::int64_t n, Expected expected) {
  device_buffer<unsigned long long> bad(1);
  bad.fill_bytes(0);
  count_mismatches_kernel<<<1024, 256>>>(d_out, n, expected, bad.data());
  SCANLAB_CHECK_LAUNCH();
  return bad.to_host()[0];
}

template <class T>
__global__ void fill_kernel(T* out, std::int64_t n, T value) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
    out[i] = value;
  }
}

// More than 2^31 items: skips (not fails) when the GPU lacks the memory.
inline bool enough_device_memory(std::size_t bytes) {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  SCANLAB_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes > bytes + (std::size_t{1} << 30);
}

}  // namespace scanlab::test::scan

// The tests every element type runs. `Fixture` is a fresh gpu_test subclass name.
#define SCANLAB_SCAN_TESTS(Fixture, Case)                                                               \
  class Fixture : public ::scanlab::test::gpu_test {};                                                  \
  TEST_F(Fixture, ProductionInclusive) { ::scanlab::test::scan::production_test<Case>(false); }         \
  TEST_F(Fixture, ProductionExclusive) { ::scanlab::test::scan::production_test<Case>(true); }          \
  TEST_F(Fixture, ProductionModes) { ::scanlab::test::scan::production_modes_test<Case>(); }            \
  TEST_F(Fixture, ProductionInPlace) { ::scanlab::test::scan::production_in_place_test<Case>(); }       \
  TEST_F(Fixture, ProductionUnaligned) { ::scanlab::test::scan::production_unaligned_test<Case>(); }    \
  TEST_F(Fixture, ProductionDeterministic) { ::scanlab::test::scan::production_deterministic_test<Case>(); } \
  TEST_F(Fixture, LadderInclusive) { ::scanlab::test::scan::ladder_test<Case>(false); }                 \
  TEST_F(Fixture, LadderExclusive) { ::scanlab::test::scan::ladder_test<Case>(true); }
