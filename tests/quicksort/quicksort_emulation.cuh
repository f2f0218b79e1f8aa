// A host emulation of the quicksort's partition levels (scanlab/algorithms/quicksort.cuh),
// to count the levels an input takes without a GPU: the library's own sampler
// (quicksort_detail::sample_index, with a salt per level), the pivots of sample ranks 16j + 15
// (ties by sample index), the 63 buckets in order and stable inside each, equal buckets done,
// buckets longer than the leaf the next level's segments. No level budget: it counts what the
// sampling alone gives.
#pragma once

#include <scanlab/algorithms/quicksort_kernels.cuh>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <vector>

namespace scanlab::test::quicksort {

// Partition levels until every segment is at most `leaf` keys, or max_levels. salt(level) is
// the level's salt (0: the fixed sampler).
template <class T, class Less>
int emulate_quicksort_levels(std::vector<T> keys, std::int64_t leaf, const std::function<std::uint64_t(int)>& salt,
                             int max_levels, Less less) {
  using quicksort_detail::pivot_count;
  using quicksort_detail::pivot_samples;
  using quicksort_detail::samples_per_pivot;
  struct segment {
    std::int64_t begin, size;
  };
  const auto n = static_cast<std::int64_t>(keys.size());
  std::vector<segment> segments;
  if (n > leaf) segments.push_back({0, n});
  std::vector<T> moved(keys.size());
  std::vector<int> bucket_of(keys.size());
  int levels = 0;
  while (!segments.empty() && levels < max_levels) {
    const std::uint64_t level_salt = salt(levels);
    std::vector<segment> next;
    for (const segment& seg : segments) {
      std::array<std::pair<T, int>, pivot_samples> sampled;
      for (int t = 0; t < pivot_samples; ++t) {
        sampled[static_cast<std::size_t>(t)] = {
            keys[static_cast<std::size_t>(seg.begin + quicksort_detail::sample_index(seg.begin, seg.size, t, level_salt))],
            t};
      }
      std::sort(sampled.begin(), sampled.end(), [&](const auto& a, const auto& b) {
        return less(a.first, b.first) || (!less(b.first, a.first) && a.second < b.second);
      });
      std::array<T, pivot_count> pivots;
      for (int j = 0; j < pivot_count; ++j) {
        pivots[static_cast<std::size_t>(j)] = sampled[static_cast<std::size_t>(samples_per_pivot * j + samples_per_pivot - 1)].first;
      }
      std::array<std::int64_t, quicksort_detail::buckets> counts{};
      for (std::int64_t i = seg.begin; i < seg.begin + seg.size; ++i) {
        const T& x = keys[static_cast<std::size_t>(i)];
        const auto j = static_cast<int>(std::lower_bound(pivots.begin(), pivots.end(), x, less) - pivots.begin());
        const int b = j < pivot_count && !less(x, pivots[static_cast<std::size_t>(j)]) ? 2 * j + 1 : 2 * j;
        bucket_of[static_cast<std::size_t>(i)] = b;
        ++counts[static_cast<std::size_t>(b)];
      }
      std::array<std::int64_t, quicksort_detail::buckets> at{};
      std::int64_t start = seg.begin;
      for (int b = 0; b < quicksort_detail::buckets; ++b) {
        at[static_cast<std::size_t>(b)] = start;
        if (b % 2 == 0 && counts[static_cast<std::size_t>(b)] > leaf) next.push_back({start, counts[static_cast<std::size_t>(b)]});
        start += counts[static_cast<std::size_t>(b)];
      }
      for (std::int64_t i = seg.begin; i < seg.begin + seg.size; ++i) {
        moved[static_cast<std::size_t>(at[static_cast<std::size_t>(bucket_of[static_cast<std::size_t>(i)])]++)] =
            keys[static_cast<std::size_t>(i)];
      }
      std::copy(moved.begin() + seg.begin, moved.begin() + seg.begin + seg.size, keys.begin() + seg.begin);
    }
    segments = std::move(next);
    ++levels;
  }
  return levels;
}

}  // namespace scanlab::test::quicksort
