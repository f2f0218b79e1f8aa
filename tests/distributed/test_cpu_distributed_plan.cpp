// The exchanges of the distributed algorithms, with simulated ranks on the CPU: the
// splitter search of the distributed sort (the same bisection as the GPU's, on host
// vectors), sort_splits, the exchange plans and the runs' merge must give the global
// stable sort; redistribution plans must move every item once and keep the order.
#include <scanlab/distributed/detail/plan.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

using scanlab::distributed::detail::exchange_plan;

// An item: its key, and where it came from (rank, position), which stability must keep.
struct item {
  std::uint32_t key;
  int rank;
  std::int64_t pos;
  bool operator==(const item&) const = default;
};

// How many items of a sorted piece are below `key`.
std::int64_t below(const std::vector<item>& piece, std::uint64_t key) {
  return std::lower_bound(piece.begin(), piece.end(), key, [](const item& a, std::uint64_t k) { return a.key < k; }) -
         piece.begin();
}

// Every rank's item list after the simulated distributed sort.
std::vector<std::vector<item>> simulate_sort(const std::vector<std::vector<std::uint32_t>>& keys) {
  using namespace scanlab::distributed::detail;
  const auto ranks = keys.size();
  std::vector<std::vector<item>> sorted(ranks);
  std::vector<std::int64_t> pieces;
  for (std::size_t q = 0; q < ranks; ++q) {
    for (std::size_t i = 0; i < keys[q].size(); ++i) sorted[q].push_back({keys[q][i], static_cast<int>(q), static_cast<std::int64_t>(i)});
    std::stable_sort(sorted[q].begin(), sorted[q].end(), [](const item& a, const item& b) { return a.key < b.key; });
    pieces.push_back(static_cast<std::int64_t>(keys[q].size()));
  }
  const auto offsets = exclusive_offsets(pieces);
  const std::vector<std::int64_t> bound(offsets.begin() + 1, offsets.end() - 1);
  // The GPU's search: the largest v with (global items below v) <= bound, 4 bits a round.
  std::vector<std::vector<std::int64_t>> less(ranks), equal(ranks);
  for (std::size_t j = 0; j + 1 < ranks; ++j) {
    std::uint64_t v = 0;
    for (int shift = 28; shift >= 0; shift -= 4) {
      std::uint64_t best = 0;
      for (std::uint64_t d = 1; d <= 15; ++d) {
        std::int64_t count = 0;
        for (const auto& piece : sorted) count += below(piece, v | (d << shift));
        if (count <= bound[j]) best = d;
      }
      v |= best << shift;
    }
    for (std::size_t q = 0; q < ranks; ++q) {
      less[q].push_back(below(sorted[q], v));
      equal[q].push_back(below(sorted[q], v + 1) - less[q].back());
    }
  }
  const auto split = sort_splits(pieces, bound, less, equal);
  // The exchange, then the stable merge of the runs in rank order.
  std::vector<std::vector<item>> out(ranks);
  for (std::size_t r = 0; r < ranks; ++r) {
    const exchange_plan plan = sort_exchange_plan(split, static_cast<int>(r));
    std::vector<item> received(static_cast<std::size_t>(plan.received()));
    for (std::size_t q = 0; q < ranks; ++q) {
      const exchange_plan theirs = sort_exchange_plan(split, static_cast<int>(q));
      EXPECT_EQ(theirs.send_counts[r], plan.recv_counts[q]) << "rank " << q << " -> " << r;
      std::copy_n(sorted[q].begin() + theirs.send_displs[r], theirs.send_counts[r], received.begin() + plan.recv_displs[q]);
    }
    std::stable_sort(received.begin(), received.end(), [](const item& a, const item& b) { return a.key < b.key; });
    out[r] = std::move(received);
  }
  return out;
}

void expect_global_stable_sort(const std::vector<std::vector<std::uint32_t>>& keys, const std::string& what) {
  SCOPED_TRACE(what);
  std::vector<item> expected;
  for (std::size_t q = 0; q < keys.size(); ++q) {
    for (std::size_t i = 0; i < keys[q].size(); ++i) expected.push_back({keys[q][i], static_cast<int>(q), static_cast<std::int64_t>(i)});
  }
  std::stable_sort(expected.begin(), expected.end(), [](const item& a, const item& b) { return a.key < b.key; });
  const auto out = simulate_sort(keys);
  std::size_t at = 0;
  for (std::size_t r = 0; r < keys.size(); ++r) {
    ASSERT_EQ(out[r].size(), keys[r].size()) << "rank " << r << " keeps its piece's size";
    for (const item& it : out[r]) {
      ASSERT_EQ(it, expected[at]) << "rank " << r << ", global position " << at;
      ++at;
    }
  }
}

std::vector<std::vector<std::uint32_t>> random_pieces(const std::vector<std::int64_t>& sizes, std::uint32_t range,
                                                      std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::uint32_t> dist(0, range);
  std::vector<std::vector<std::uint32_t>> keys;
  for (const std::int64_t n : sizes) {
    keys.emplace_back(static_cast<std::size_t>(n));
    for (auto& k : keys.back()) k = dist(rng);
  }
  return keys;
}

TEST(DistributedPlan, SortRandomKeys) {
  for (const auto& sizes : std::vector<std::vector<std::int64_t>>{
           {1000}, {500, 700}, {300, 0, 900, 5}, {0, 0, 0, 1000}, {1, 1, 1, 1, 1, 1, 1, 1}, {17, 1000, 3}}) {
    for (const std::uint32_t range : {0xffffffffu, 1000u, 3u}) {
      expect_global_stable_sort(random_pieces(sizes, range, 7 + sizes.size() + range),
                                "pieces " + std::to_string(sizes.size()) + ", key range " + std::to_string(range));
    }
  }
}

TEST(DistributedPlan, SortHostileKeys) {
  // All keys equal (every splitter a tie); fewer items than ranks; the largest key (the
  // splitter search ends at all ones); sorted and reversed pieces.
  expect_global_stable_sort({{5, 5, 5}, {5, 5}, {5, 5, 5, 5}}, "all equal");
  expect_global_stable_sort({{7}, {}, {}, {3}}, "fewer items than ranks");
  expect_global_stable_sort({{0xffffffffu, 0xffffffffu}, {0xffffffffu, 0}, {0xffffffffu}}, "the largest key");
  expect_global_stable_sort({{}, {}, {}}, "no items at all");
  std::vector<std::uint32_t> up(100), down(100);
  for (std::uint32_t i = 0; i < 100; ++i) {
    up[i] = i;
    down[i] = 99 - i;
  }
  expect_global_stable_sort({up, down, up}, "sorted and reversed");
}

TEST(DistributedPlan, RedistributionKeepsOrder) {
  using namespace scanlab::distributed::detail;
  for (const auto& [have, want] : std::vector<std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>>>{
           {{10, 0, 5}, {5, 5, 5}}, {{0, 0, 9}, {3, 3, 3}}, {{4, 4}, {4, 4}}, {{7}, {7}}, {{0, 1, 0, 0}, {1, 0, 0, 0}},
           {{3, 3, 3, 3}, {0, 12, 0, 0}}}) {
    const auto from = exclusive_offsets(have);
    std::vector<std::vector<std::int64_t>> out;  // out[r]: the global positions rank r receives
    for (std::size_t r = 0; r < have.size(); ++r) {
      const exchange_plan plan = redistribution_plan(have, want, static_cast<int>(r));
      out.emplace_back(static_cast<std::size_t>(want[r]), -1);
      EXPECT_EQ(plan.received(), want[r]);
      for (std::size_t q = 0; q < have.size(); ++q) {
        const exchange_plan theirs = redistribution_plan(have, want, static_cast<int>(q));
        ASSERT_EQ(theirs.send_counts[r], plan.recv_counts[q]);
        for (std::int64_t i = 0; i < plan.recv_counts[q]; ++i) {
          out[r][static_cast<std::size_t>(plan.recv_displs[q] + i)] = from[q] + theirs.send_displs[r] + i;
        }
      }
    }
    std::int64_t expected = 0;
    for (const auto& piece : out) {
      for (const std::int64_t g : piece) EXPECT_EQ(g, expected++);
    }
  }
}

TEST(DistributedPlan, BalancedCounts) {
  using scanlab::distributed::detail::balanced_counts;
  EXPECT_EQ(balanced_counts(10, 4), (std::vector<std::int64_t>{3, 3, 2, 2}));
  EXPECT_EQ(balanced_counts(0, 3), (std::vector<std::int64_t>{0, 0, 0}));
  EXPECT_EQ(balanced_counts(2, 3), (std::vector<std::int64_t>{1, 1, 0}));
}

}  // namespace
