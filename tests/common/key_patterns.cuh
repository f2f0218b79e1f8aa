// Inputs for the tests of the partitions and the quicksort (tests/partition, tests/quicksort):
// seeded keys of every awkward pattern (random, sorted, reverse, all equal, two values, organ
// pipe, many duplicates, sawtooth, NaNs for floats), the order both check against (NaNs last),
// and the partitions' tile (sizes around its multiples are the interesting ones).
#pragma once

#include "common/device_buffer.hpp"
#include "common/test_util.hpp"

#include <scanlab/algorithms/partition_kernels.cuh>
#include <scanlab/detail/launch.cuh>
#include <scanlab/error.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <type_traits>
#include <vector>

namespace scanlab::test::key_patterns {

// The tile of the partitions for T on this GPU (sizes around its multiples are the
// interesting ones; the policy is chosen per architecture).
template <class T>
std::int64_t tile_items() {
  std::int64_t items = 0;
  SCANLAB_CHECK(scanlab::detail::device_tile_items<scanlab::partition_detail::default_partition_policy<T>>(items));
  return items;
}

template <class T>
bool host_less(const T& a, const T& b) {
  return scanlab::nan_last_less{}(a, b);
}

enum class pattern { random, sorted, reverse, all_equal, two_values, organ_pipe, many_duplicates, sawtooth, nans };

inline const char* pattern_name(pattern p) {
  switch (p) {
    case pattern::random: return "random";
    case pattern::sorted: return "sorted";
    case pattern::reverse: return "reverse";
    case pattern::all_equal: return "all-equal";
    case pattern::two_values: return "two-values";
    case pattern::organ_pipe: return "organ-pipe";
    case pattern::many_duplicates: return "many-duplicates";
    case pattern::sawtooth: return "sawtooth";
    case pattern::nans: return "nans";
  }
  return "?";
}

inline std::vector<pattern> patterns_for(bool floating) {
  std::vector<pattern> all = {pattern::random,     pattern::sorted,          pattern::reverse,
                              pattern::all_equal,  pattern::two_values,      pattern::organ_pipe,
                              pattern::many_duplicates, pattern::sawtooth};
  if (floating) all.push_back(pattern::nans);
  return all;
}

// Values spread over (most of) T's range: random ones are mostly distinct, so a misplaced
// element is visible in the order.
template <class T>
T spread(std::uint64_t r) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(static_cast<double>(r >> 11) * 0x1.0p-53 * 2e6 - 1e6);
  } else {
    return static_cast<T>(r);
  }
}

template <class T>
std::vector<T> make_data(pattern p, std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = spread<T>(rng());
  switch (p) {
    case pattern::random: break;
    case pattern::sorted: std::sort(v.begin(), v.end(), host_less<T>); break;
    case pattern::reverse:
      std::sort(v.begin(), v.end(), host_less<T>);
      std::reverse(v.begin(), v.end());
      break;
    case pattern::all_equal: std::fill(v.begin(), v.end(), spread<T>(seed)); break;
    case pattern::two_values:
      for (auto& x : v) x = (rng() & 1) ? T(7) : T(3);
      break;
    case pattern::organ_pipe:
      for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = static_cast<T>(i < n / 2 ? i : n - i);
      break;
    case pattern::many_duplicates:
      for (auto& x : v) x = static_cast<T>(rng() % 17);
      break;
    case pattern::sawtooth:
      for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = static_cast<T>(i % 1000);
      break;
    case pattern::nans:
      if constexpr (std::is_floating_point_v<T>) {
        // NaNs of both signs with random payloads (a sort must keep their bits), infinities
        // of both signs, and signed zeros among the random numbers.
        using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
        const U infinity = std::bit_cast<U>(std::numeric_limits<T>::infinity());
        const U sign = U{1} << (8 * sizeof(T) - 1);
        const U mantissa = (U{1} << (std::numeric_limits<T>::digits - 1)) - 1;
        for (auto& x : v) {
          const auto r = rng() % 16;
          const U negative = (rng() & 1) ? sign : U{0};
          if (r < 2) x = std::numeric_limits<T>::quiet_NaN();
          else if (r < 4) x = std::bit_cast<T>(negative | infinity | ((static_cast<U>(rng()) & mantissa) | U{1}));
          else if (r < 5) x = std::bit_cast<T>(negative | infinity);
          else if (r < 6) x = (rng() & 1) ? T(-0.0) : T(0.0);
        }
      }
      break;
  }
  return v;
}

template <class T>
void poison(device_buffer<T>& b) {
  b.fill_bytes(0x5b);
}

}  // namespace scanlab::test::key_patterns
