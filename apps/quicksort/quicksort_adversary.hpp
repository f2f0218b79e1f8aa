// The input that defeats scanlab's quicksort with a fixed sampler: the sampler of the first
// versions (up to commit 93bb50f), kept in the library as the test hook
// quicksort_options::fixed_sampling. Host code only; used by scanlab-quicksort --adversary
// and by the quicksort tests.
//
// That sampler took sample t (of 512) of a segment [begin, begin + size) at
//   lo_t + mix64(begin * 512 + t) mod (hi_t - lo_t),   lo_t = t size / 512, hi_t = (t + 1) size / 512,
// a fixed function of the segment. The pivots are the samples of ranks 16j + 15 (j < 31), and
// each segment is split into 63 buckets (< p0 | = p0 | (p0, p1) | ... | > p30), in that order
// and stable inside each bucket. So if the 496 samples t < 496 hold the 496 smallest keys of
// the segment (and the 16 others larger keys), the pivots are the segment's keys of ranks
// 15, 31, ..., 495: every bucket but the last holds at most 15 keys (leaves), and the last,
// "> p30", holds all the others, in their input order, at begin + 496. It is the next level's
// only segment, and the same trick applies to it. Each level then removes only 496 keys: a
// sort of n keys takes about (n - leaf) / 496 levels, each reading the whole rest, O(n^2)
// (2^20 uint32 keys: 2082 levels against 2 for random keys).
//
// Building it: the segment of every level is the input's positions not yet removed, in input
// order, starting where the last level's removed keys end. Level by level, the 512 sampled
// indices are mapped to input positions (the k-th remaining position, through a Fenwick tree),
// the positions of samples t < 496 get the next smallest ranks, and are removed. Keys equal to
// pivot 30 but of higher rank (duplicates) join its equal bucket and leave with the level: they
// go to unsampled positions and are removed too, or the next segment would start one key
// later than planned and the construction would lose its hold (on 2^20 uniform uint32 keys,
// with their ~128 duplicate pairs, that happened after ~1760 levels). O(n / 496 x 512 log n):
// about 0.5 s for 2^20 keys on one core. Segments below 1024 keys (two keys per stratum) get
// the remaining ranks in input order: the sort has left its partition levels long before.
//
// It predicts only the fixed sampler: against the seeded one it is one more arrangement of
// the keys (the tests keep it as a hostile input all the same, with sorted, reverse,
// organ-pipe and few-unique ones).
#pragma once

#include <scanlab/mix64.hpp>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace scanlab::quicksort_app::adversary {

// The fixed sampler's constants (quicksort_kernels.cuh: pivot_samples, samples_per_pivot).
inline constexpr std::int64_t samples = 512;
inline constexpr std::int64_t removed_per_level = 496;  // the samples of ranks < 16 * 31
inline constexpr std::int64_t smallest_segment = 1024;

using scanlab::mix64;  // the fixed sampler hashed with splitmix64's finaliser

// Sample t's index in the segment [begin, begin + size), as the fixed sampler drew it.
constexpr std::int64_t fixed_sample_index(std::int64_t begin, std::int64_t size, std::int64_t t) {
  const std::int64_t lo = t * size / samples;
  const std::int64_t hi = (t + 1) * size / samples;
  const std::int64_t span = hi > lo ? hi - lo : 1;
  const auto offset = static_cast<std::int64_t>(mix64(static_cast<std::uint64_t>(begin) * samples +
                                                      static_cast<std::uint64_t>(t)) %
                                                static_cast<std::uint64_t>(span));
  return std::min(lo + offset, size - 1);
}

// The positions still in the segment, in input order: the k-th of them in O(log n).
class remaining_positions {
 public:
  explicit remaining_positions(std::int64_t n) : tree_(static_cast<std::size_t>(n) + 1), n_(n) {
    for (std::int64_t i = 1; i <= n; ++i) tree_[static_cast<std::size_t>(i)] = static_cast<std::uint32_t>(i & -i);
    top_ = n > 0 ? std::bit_floor(static_cast<std::uint64_t>(n)) : 0;
  }
  // The input position of the k-th remaining one (k from 0).
  [[nodiscard]] std::int64_t select(std::int64_t k) const {
    std::int64_t at = 0;
    for (std::uint64_t step = top_; step > 0; step >>= 1) {
      const auto next = at + static_cast<std::int64_t>(step);
      if (next <= n_ && tree_[static_cast<std::size_t>(next)] <= k) {
        at = next;
        k -= tree_[static_cast<std::size_t>(next)];
      }
    }
    return at;  // the 1-based index at + 1, so position at
  }
  void remove(std::int64_t position) {
    for (std::int64_t i = position + 1; i <= n_; i += i & -i) --tree_[static_cast<std::size_t>(i)];
  }

 private:
  std::vector<std::uint32_t> tree_;
  std::int64_t n_;
  std::uint64_t top_ = 0;
};

// rank[i]: the rank (0 = smallest) of the key the input holds at position i; a permutation of
// 0 .. n-1. n < 2^32. tied(r): whether the keys of ranks r and r + 1 are equivalent (never,
// for distinct keys).
template <class Tied>
std::vector<std::uint32_t> ranks(std::int64_t n, Tied tied) {
  if (n < 0 || n >= (std::int64_t{1} << 32)) {
    throw std::invalid_argument("quicksort adversary: n must be in [0, 2^32), got " + std::to_string(n));
  }
  constexpr std::uint32_t unset = 0xffffffffu;
  std::vector<std::uint32_t> rank(static_cast<std::size_t>(n), unset);
  remaining_positions left(n);
  std::uint32_t next = 0;
  std::int64_t begin = 0;
  std::int64_t size = n;
  std::vector<std::int64_t> picked(static_cast<std::size_t>(samples));
  while (size >= smallest_segment) {
    // Strata are at least two keys wide: the 512 sampled positions are distinct.
    for (std::int64_t t = 0; t < samples; ++t) {
      picked[static_cast<std::size_t>(t)] = left.select(fixed_sample_index(begin, size, t));
    }
    for (std::int64_t t = 0; t < removed_per_level; ++t) {
      const std::int64_t position = picked[static_cast<std::size_t>(t)];
      rank[static_cast<std::size_t>(position)] = next++;
      left.remove(position);
    }
    std::int64_t removed = removed_per_level;
    // Keys equal to pivot 30: to the last remaining positions that no sample of this level
    // holds (the 16 samples t >= 496 must stay above pivot 30).
    std::int64_t from_end = size - removed;
    while (next < n && tied(static_cast<std::int64_t>(next) - 1) && from_end > 0) {
      const std::int64_t position = left.select(--from_end);
      if (std::find(picked.begin() + removed_per_level, picked.end(), position) != picked.end()) continue;
      rank[static_cast<std::size_t>(position)] = next++;
      left.remove(position);
      ++removed;
    }
    begin += removed;
    size -= removed;
  }
  for (std::int64_t i = 0; i < n; ++i) {
    if (rank[static_cast<std::size_t>(i)] == unset) rank[static_cast<std::size_t>(i)] = next++;
  }
  return rank;
}

inline std::vector<std::uint32_t> ranks(std::int64_t n) {
  return ranks(n, [](std::int64_t) { return false; });
}

// The partition levels the fixed sampler takes on the adversary of n distinct keys with leaves
// of up to `leaf` keys (segments longer than the leaf are partitioned): the levels the
// construction plans, (n - leaf) / 496 rounded up (fewer with duplicates).
inline std::int64_t planned_levels(std::int64_t n, std::int64_t leaf) {
  std::int64_t levels = 0;
  for (std::int64_t size = n; size > leaf; size -= removed_per_level) {
    ++levels;
    if (size < smallest_segment) break;
  }
  return levels;
}

// The keys, rearranged as the adversary: position i gets the rank[i]-th smallest key (by
// `less`; equivalent keys are placed as above). Each level still removes only the 496 samples
// and the keys equal to pivot 30, so the more duplicates, the fewer levels (few-unique keys:
// a handful).
template <class T, class Less>
std::vector<T> arrange(std::span<const T> keys, Less less) {
  std::vector<T> sorted(keys.begin(), keys.end());
  std::sort(sorted.begin(), sorted.end(), less);
  const std::vector<std::uint32_t> rank =
      ranks(static_cast<std::int64_t>(keys.size()), [&](std::int64_t r) {
        return !less(sorted[static_cast<std::size_t>(r)], sorted[static_cast<std::size_t>(r) + 1]);
      });
  std::vector<T> out(keys.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = sorted[rank[i]];
  return out;
}

}  // namespace scanlab::quicksort_app::adversary
