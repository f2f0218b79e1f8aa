// scanlab-sort's checks of a sorted output that need no second sort: for inputs whose
// std::stable_sort reference (sort_gpu_impl.cuh, check_cpu) would take minutes, i.e. the
// streaming path beyond linear_check_items. Host code, linear time, no allocation beyond a
// bitmap of positions:
//   - the keys are in order (key_before: NaN last, -0.0 == +0.0);
//   - they are the input's keys: the same multiset of key bits, compared through two
//     order-independent sums of mix64 of the bits (a difference goes unseen with probability
//     about 2^-64 per sum for data that is not built against mix64);
//   - positions (argsort, --pairs without --values): each position once, the key at that
//     position of the input equal to the sorted key bit for bit, positions rising within
//     equal keys (stable);
//   - given values: the same multiset of (key, value) pairs, by the same sums. The order of
//     equal keys' values (stability) is not checked there: only positions show it.
#pragma once

#include "common/check.hpp"

#include <scanlab/mix64.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace scanlab::sort_app {

// Above this many items the streaming path checks with the linear checks (std::stable_sort
// of 2^27 keys takes about 15 s on one core of the development machine).
inline constexpr std::int64_t linear_check_items = std::int64_t{1} << 27;

// The documented order on whole keys (NaN last and equal to NaN, -0.0 == +0.0), written
// independently of the library's bit transform.
template <class Key>
bool key_before(Key a, Key b, bool descending) {
  if constexpr (std::is_floating_point_v<Key>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return descending ? b < a : a < b;
}

template <class T>
std::uint64_t bits_of(T v) {
  static_assert(sizeof(T) <= 8);
  std::uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}

// Two order-independent sums over 64-bit words: equal for equal multisets.
struct multiset_sums {
  std::uint64_t first = 0, second = 0;
  void add(std::uint64_t x) {
    first += mix64(x + 0x9e3779b97f4a7c15ull);
    second += mix64(x ^ 0xd1b54a32d192ed03ull) * 0xbf58476d1ce4e5b9ull;
  }
  bool operator==(const multiset_sums&) const = default;
};

// Where `sorted` first breaks the order (an element before the one ahead of it), or -1.
template <class Key>
std::int64_t first_out_of_order(std::span<const Key> sorted) {
  for (std::size_t i = 1; i < sorted.size(); ++i) {
    if (key_before(sorted[i], sorted[i - 1], false)) return static_cast<std::int64_t>(i);
  }
  return -1;
}

// The checks above, ascending on all key bits (the streaming path's sort). `values` and
// `sorted_values` empty for keys only; `positions`: the sorted values are the permutation
// (the input's values were 0 .. n-1, `values` is then unused).
template <class Key, class Value>
std::vector<check> linear_checks(std::span<const Key> keys, std::span<const Value> values,
                                 std::span<const Key> sorted_keys, std::span<const Value> sorted_values,
                                 bool positions) {
  const std::string against = "CPU linear check (no second sort: order, multisets by hashes)";
  std::vector<check> checks;
  if (keys.size() != sorted_keys.size()) {
    checks.push_back({against, false, "keys: " + std::to_string(sorted_keys.size()) + " sorted for " +
                                          std::to_string(keys.size()) + " given"});
    return checks;
  }
  const std::int64_t disorder = first_out_of_order(sorted_keys);
  multiset_sums in, out;
  for (const Key k : keys) in.add(bits_of(k));
  for (const Key k : sorted_keys) out.add(bits_of(k));
  if (disorder >= 0) {
    checks.push_back({against, false, "keys: out of order at position " + std::to_string(disorder)});
  } else if (!(in == out)) {
    checks.push_back({against, false, "keys: in order, but not the input's keys (their multisets differ)"});
  } else {
    checks.push_back({against, true, "keys: in order, the input's keys (multiset hashes equal)"});
  }
  if (sorted_values.empty() && !positions) return checks;
  if (sorted_values.size() != keys.size()) {
    checks.push_back({against, false, "values: " + std::to_string(sorted_values.size()) + " for " +
                                          std::to_string(keys.size()) + " keys"});
    return checks;
  }
  if (positions) {
    // A permutation whose every position holds the sorted key, rising within equal keys.
    const std::size_t n = keys.size();
    std::vector<bool> seen(n, false);
    for (std::size_t i = 0; i < n; ++i) {
      const auto p = static_cast<std::uint64_t>(sorted_values[i]);
      std::string problem;
      if (p >= n) {
        problem = "position " + std::to_string(p) + " out of range";
      } else if (seen[p]) {
        problem = "position " + std::to_string(p) + " twice";
      } else if (bits_of(keys[p]) != bits_of(sorted_keys[i])) {
        problem = "the key at position " + std::to_string(p) + " is not the sorted key";
      } else if (i > 0 && !key_before(sorted_keys[i - 1], sorted_keys[i], false) &&
                 static_cast<std::uint64_t>(sorted_values[i - 1]) > p) {
        problem = "equal keys out of their input order (not stable)";
      }
      if (!problem.empty()) {
        checks.push_back({against, false, "permutation: at sorted position " + std::to_string(i) + ": " + problem});
        return checks;
      }
      seen[p] = true;
    }
    checks.push_back({against, true, "permutation: each position once, its key, stable"});
    return checks;
  }
  multiset_sums pairs_in, pairs_out;
  for (std::size_t i = 0; i < keys.size(); ++i) pairs_in.add(mix64(bits_of(keys[i])) ^ bits_of(values[i]));
  for (std::size_t i = 0; i < keys.size(); ++i) {
    pairs_out.add(mix64(bits_of(sorted_keys[i])) ^ bits_of(sorted_values[i]));
  }
  checks.push_back({against, pairs_in == pairs_out,
                    pairs_in == pairs_out ? "values: the input's (key, value) pairs (multiset hashes equal; the "
                                            "order of equal keys' values not checked)"
                                          : "values: not the input's (key, value) pairs (their multisets differ)"});
  return checks;
}

}  // namespace scanlab::sort_app
