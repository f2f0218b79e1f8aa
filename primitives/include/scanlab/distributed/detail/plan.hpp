// scanlab/distributed/detail/plan.hpp: who sends what to whom. Host arithmetic only (no
// CUDA, no NCCL), so that the logic of every exchange is tested on any machine with
// simulated ranks (tests/distributed/test_cpu_distributed_plan.cpp).
//
// An exchange plan is the all-to-all of one rank: send_counts[q] items from offset
// send_displs[q] of its buffer to rank q, recv_counts[q] items from rank q to offset
// recv_displs[q] of its receive buffer, in items.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <span>
#include <vector>

namespace scanlab::distributed::detail {

struct exchange_plan {
  std::vector<std::int64_t> send_counts, send_displs, recv_counts, recv_displs;

  [[nodiscard]] std::int64_t received() const {
    return std::accumulate(recv_counts.begin(), recv_counts.end(), std::int64_t{0});
  }
};

// offsets[q] = counts[0] + ... + counts[q - 1]; offsets has counts.size() + 1 entries.
[[nodiscard]] inline std::vector<std::int64_t> exclusive_offsets(std::span<const std::int64_t> counts) {
  std::vector<std::int64_t> offsets(counts.size() + 1, 0);
  for (std::size_t q = 0; q < counts.size(); ++q) offsets[q + 1] = offsets[q] + counts[q];
  return offsets;
}

// `total` items over `ranks` ranks as evenly as possible, the first ranks one more.
[[nodiscard]] inline std::vector<std::int64_t> balanced_counts(std::int64_t total, int ranks) {
  std::vector<std::int64_t> counts(static_cast<std::size_t>(ranks), total / ranks);
  for (std::int64_t q = 0; q < total % ranks; ++q) ++counts[static_cast<std::size_t>(q)];
  return counts;
}

// Rank `rank` moves its items, global positions [now[rank], now[rank] + have[rank]), so
// that rank q ends up with global positions [target offset q, + want[q]): the plan of a
// redistribution that keeps the global order. Both count lists sum to the same total.
[[nodiscard]] inline exchange_plan redistribution_plan(std::span<const std::int64_t> have,
                                                       std::span<const std::int64_t> want, int rank) {
  const auto from = exclusive_offsets(have);
  const auto to = exclusive_offsets(want);
  const auto ranks = have.size();
  const auto r = static_cast<std::size_t>(rank);
  exchange_plan plan;
  for (std::size_t q = 0; q < ranks; ++q) {
    // What rank r holds of rank q's target range.
    const std::int64_t send_begin = std::max(from[r], to[q]);
    const std::int64_t send_end = std::min(from[r + 1], to[q + 1]);
    plan.send_counts.push_back(std::max<std::int64_t>(0, send_end - send_begin));
    plan.send_displs.push_back(send_end > send_begin ? send_begin - from[r] : 0);
    // What rank q holds of rank r's target range.
    const std::int64_t recv_begin = std::max(from[q], to[r]);
    const std::int64_t recv_end = std::min(from[q + 1], to[r + 1]);
    plan.recv_counts.push_back(std::max<std::int64_t>(0, recv_end - recv_begin));
    plan.recv_displs.push_back(recv_end > recv_begin ? recv_begin - to[r] : 0);
  }
  return plan;
}

// The splits of a distributed sort. Every rank's piece is sorted; the boundary j (j = 1 ..
// P - 1) is global position bound[j - 1]: the items before it in the stable global order
// (by key, then rank, then position) go to ranks < j. For boundary j, v_j is the largest
// key with fewer than or exactly bound items below it; less[q][j - 1] and equal[q][j - 1]
// count rank q's items below v_j and equal to it. Ties at v_j go in rank order.
// Returns split[q][j], j = 0 .. P: rank q's items [split[q][j], split[q][j + 1]) go to
// rank j (split[q][0] = 0, split[q][P] = pieces[q]).
[[nodiscard]] inline std::vector<std::vector<std::int64_t>> sort_splits(
    std::span<const std::int64_t> pieces, std::span<const std::int64_t> bound,
    const std::vector<std::vector<std::int64_t>>& less, const std::vector<std::vector<std::int64_t>>& equal) {
  const std::size_t ranks = pieces.size();
  std::vector<std::vector<std::int64_t>> split(ranks, std::vector<std::int64_t>(ranks + 1, 0));
  for (std::size_t q = 0; q < ranks; ++q) split[q][ranks] = pieces[q];
  for (std::size_t j = 1; j < ranks; ++j) {
    std::int64_t below = 0;
    for (std::size_t q = 0; q < ranks; ++q) below += less[q][j - 1];
    std::int64_t ties = bound[j - 1] - below;  // items equal to v_j that go before boundary j
    for (std::size_t q = 0; q < ranks; ++q) {
      const std::int64_t take = std::clamp<std::int64_t>(ties, 0, equal[q][j - 1]);
      split[q][j] = less[q][j - 1] + take;
      ties -= take;
    }
  }
  return split;
}

// Rank `rank`'s all-to-all for a sort with the splits above: to rank q it sends its items
// [split[rank][q], split[rank][q + 1]); from rank q it receives q's items for it, placed in
// rank order (so the received buffer is P sorted runs, run q from rank q).
[[nodiscard]] inline exchange_plan sort_exchange_plan(const std::vector<std::vector<std::int64_t>>& split, int rank) {
  const std::size_t ranks = split.size();
  const auto r = static_cast<std::size_t>(rank);
  exchange_plan plan;
  std::int64_t at = 0;
  for (std::size_t q = 0; q < ranks; ++q) {
    plan.send_displs.push_back(split[r][q]);
    plan.send_counts.push_back(split[r][q + 1] - split[r][q]);
    const std::int64_t count = split[q][r + 1] - split[q][r];
    plan.recv_displs.push_back(at);
    plan.recv_counts.push_back(count);
    at += count;
  }
  return plan;
}

}  // namespace scanlab::distributed::detail
