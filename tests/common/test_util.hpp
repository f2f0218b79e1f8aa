// Shared helpers for tests: seeded random data, sizes around tile boundaries, float tolerances.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace scanlab::test {

// The seed for this test's random data: SCANLAB_TEST_SEED if set, else a fixed default.
// Tests print it (SCOPED_TRACE(seed_trace(seed))) so a failure can be replayed.
inline std::uint64_t test_seed() {
  if (const char* env = std::getenv("SCANLAB_TEST_SEED")) return std::strtoull(env, nullptr, 10);
  return 20261122;
}
inline std::string seed_trace(std::uint64_t seed) {
  return "seed " + std::to_string(seed) + " (replay with SCANLAB_TEST_SEED=" + std::to_string(seed) + ")";
}

// Random values of T. Integers span a range small enough that sums of `n` of them
// cannot overflow in T when `bounded` is set; floats are uniform in [-1, 1).
template <class T>
std::vector<T> random_values(std::int64_t n, std::uint64_t seed, bool bounded = true) {
  std::mt19937_64 rng(seed);
  std::vector<T> out(static_cast<std::size_t>(n));
  if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<T> dist(T(-1), T(1));
    for (auto& v : out) v = dist(rng);
  } else {
    using Wide = std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>;
    Wide lo = std::is_signed_v<T> ? Wide(-100) : Wide(0);
    Wide hi = Wide(100);
    if (!bounded) {
      lo = static_cast<Wide>(std::numeric_limits<T>::min());
      hi = static_cast<Wide>(std::numeric_limits<T>::max());
    }
    std::uniform_int_distribution<Wide> dist(lo, hi);
    for (auto& v : out) v = static_cast<T>(dist(rng));
  }
  return out;
}

// 0, 1, 2, and tile-1, tile, tile+1 for each multiple of `tile` up to `multiples`.
inline std::vector<std::int64_t> boundary_sizes(std::int64_t tile, int multiples = 3) {
  std::vector<std::int64_t> sizes = {0, 1, 2, 3};
  for (int k = 1; k <= multiples; ++k) {
    for (std::int64_t d : {-1, 0, 1}) sizes.push_back(k * tile + d);
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

// The largest size a test should run: SCANLAB_TEST_MAX_N if set, else unlimited.
// scripts/gpu-check.sh sets it under compute-sanitizer, where kernels run 10-100x
// slower: every test still runs its whole logic, on the smaller sizes only.
inline std::int64_t max_test_n() {
  if (const char* env = std::getenv("SCANLAB_TEST_MAX_N")) return std::strtoll(env, nullptr, 10);
  return std::numeric_limits<std::int64_t>::max();
}

// `sizes` without those above max_test_n().
inline std::vector<std::int64_t> capped(std::vector<std::int64_t> sizes) {
  const std::int64_t limit = max_test_n();
  sizes.erase(std::remove_if(sizes.begin(), sizes.end(), [&](std::int64_t n) { return n > limit; }), sizes.end());
  return sizes;
}

// `count` random sizes in [1, max_n], seeded.
inline std::vector<std::int64_t> random_sizes(int count, std::int64_t max_n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> dist(1, max_n);
  std::vector<std::int64_t> out;
  for (int i = 0; i < count; ++i) out.push_back(dist(rng));
  return out;
}

// Error bound for a float sum of n terms in any order (Higham): about n * eps * sum|x|,
// with a small floor for the empty and exact cases.
template <class T>
double sum_tolerance(std::int64_t n, double sum_abs) {
  const double eps = std::numeric_limits<T>::epsilon();
  return 2.0 * static_cast<double>(std::max<std::int64_t>(n, 1)) * eps * sum_abs + 1e-30;
}

}  // namespace scanlab::test
