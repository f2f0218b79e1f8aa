// scanlab/distributed/sort.cuh: a stable sort of a sharded array (keys, or keys and values).
//
// Result: the N items of all ranks sorted (scanlab's radix order: radix_ordered_bits),
// stably (equal keys keep their global order: by rank, then position), and cut into the
// pieces the ranks came with: rank r gets global sorted positions [offset_r, offset_r + n_r).
// Each rank's output is as large as its input, so no rank ever runs out of room, whatever
// the keys (all equal, sorted, reversed, one rank holding everything).
//
// The algorithm, a sample sort whose splitters are exact (a histogram sort):
//  1. Each rank sorts its piece (scanlab::radix_sort, Onesweep).
//  2. Splitters. Boundary j (between ranks j - 1 and j) lies at global position
//     offset_j. Its key v_j, the largest key with at most offset_j items below it, is
//     found digit by digit (4 bits, highest first): a round counts the items below the 15
//     candidates of every boundary (binary searches in the sorted piece), all-reduces the
//     counts, and keeps the largest candidate within the boundary. Rounds run in stream
//     order, no host round trip: 8 for 32-bit keys. Items equal to v_j straddle the
//     boundary: they are handed out in rank order, which keeps the sort stable.
//  3. Exchange. Every rank learns where every rank's piece splits (one all-gather to the
//     host), then sends each rank its share: NCCL send/receive in one group.
//  4. Merge. What a rank receives is P sorted runs, run q from rank q; merging them stably
//     (runs in rank order) finishes the sort (scanlab::merge_runs).
// Scratch memory: two buffers the size of the piece (keys, and values for pairs), plus
// the single-GPU sort's and merge's temp storage. Returns once the sort is enqueued
// after the exchange's sizes are known on the host.
#pragma once

#include <scanlab/algorithms/merge.cuh>
#include <scanlab/algorithms/radix_sort.cuh>
#include <scanlab/distributed/communicator.hpp>
#include <scanlab/distributed/detail/exchange.cuh>

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

namespace scanlab::distributed {

// Where the time of one rank's sort went (milliseconds, CUDA events on its stream), and
// what it sent to other ranks: pass one to sort_keys / sort_pairs to have it filled in
// (the call then waits for the sort to finish).
struct sort_timing {
  float local_sort_ms = 0;  // 1. the piece sorted on its GPU
  float splitters_ms = 0;   // 2. the exact splitters, and every rank's splits to the host
  float exchange_ms = 0;    // 3. the all-to-all
  float merge_ms = 0;       // 4. the received runs merged
  std::int64_t sent_bytes = 0;  // keys and values sent to other ranks
};

namespace detail {

// CUDA events between the phases of a sort (when asked for): the stream's moments
// 0 (start) .. 4 (merged).
class phase_clock {
 public:
  phase_clock(sort_timing* out, cudaStream_t stream) : out_(out), stream_(stream) {
    if (out_ == nullptr) return;
    for (auto& e : events_) {
      if (cudaEventCreate(&e) != cudaSuccess) e = nullptr;
    }
  }
  phase_clock(const phase_clock&) = delete;
  phase_clock& operator=(const phase_clock&) = delete;
  ~phase_clock() {
    for (auto& e : events_) {
      if (e != nullptr) (void)cudaEventDestroy(e);
    }
  }
  [[nodiscard]] cudaError_t mark(int moment) {
    if (out_ == nullptr || events_[moment] == nullptr) return cudaSuccess;
    return cudaEventRecord(events_[moment], stream_);
  }
  // After mark(4): the phases' durations into *out.
  [[nodiscard]] cudaError_t finish() {
    if (out_ == nullptr) return cudaSuccess;
    for (const auto e : events_) {
      if (e == nullptr) return cudaErrorMemoryAllocation;
    }
    SCANLAB_TRY(cudaEventSynchronize(events_[4]));
    float* phases[4] = {&out_->local_sort_ms, &out_->splitters_ms, &out_->exchange_ms, &out_->merge_ms};
    for (int p = 0; p < 4; ++p) SCANLAB_TRY(cudaEventElapsedTime(phases[p], events_[p], events_[p + 1]));
    return cudaSuccess;
  }

 private:
  sort_timing* out_;
  cudaStream_t stream_;
  cudaEvent_t events_[5] = {};
};

// The number of items of sorted[0, n) whose ordered bits are below `bits`.
template <class Key, class Bits>
__device__ std::int64_t count_below(const Key* sorted, std::int64_t n, Bits bits) {
  std::int64_t lo = 0;
  std::int64_t hi = n;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (scanlab::radix_ordered_bits(sorted[mid]) < bits) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// The splitter search takes the key's bits `digit_bits` at a time, highest first: a round
// counts, for every boundary j and digit d = 1 .. 2^digit_bits - 1, the items below
// v_j + d * 2^shift, all-reduces those counts, and keeps the largest digit whose global
// count does not pass the boundary (the counts grow with d).
inline constexpr int digit_bits = 4;
inline constexpr int digits = (1 << digit_bits) - 1;

// Before the all-reduce: counts[j * digits + d - 1] = this rank's items below candidate (j, d).
template <class Key, class Bits>
__global__ void count_candidates(const Key* sorted, std::int64_t n, const Bits* v, int shift, std::int64_t* counts,
                                 int boundaries) {
  const int t = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (t >= boundaries * digits) return;
  const int j = t / digits;
  const auto d = static_cast<Bits>(t % digits + 1);
  counts[t] = count_below(sorted, n, static_cast<Bits>(v[j] | static_cast<Bits>(d << shift)));
}

// After the all-reduce: v_j gets the largest digit that keeps the count within the boundary.
template <class Bits>
__global__ void keep_candidates(Bits* v, int shift, const std::int64_t* global_counts, const std::int64_t* bound,
                                int boundaries) {
  const int j = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (j >= boundaries) return;
  int best = 0;
  for (int d = 1; d <= digits; ++d) {
    if (global_counts[j * digits + d - 1] <= bound[j]) best = d;
  }
  v[j] |= static_cast<Bits>(static_cast<Bits>(best) << shift);
}

// This rank's items below v_j and equal to it: less_equal[2j], less_equal[2j + 1].
template <class Key, class Bits>
__global__ void count_at_splitters(const Key* sorted, std::int64_t n, const Bits* v, std::int64_t* less_equal,
                                   int boundaries) {
  const int j = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (j >= boundaries) return;
  const std::int64_t less = count_below(sorted, n, v[j]);
  const std::int64_t up_to = v[j] == static_cast<Bits>(~Bits{0}) ? n : count_below(sorted, n, static_cast<Bits>(v[j] + 1));
  less_equal[2 * j] = less;
  less_equal[2 * j + 1] = up_to - less;
}

struct no_values {};

template <class Key, class Value>
[[nodiscard]] cudaError_t local_sort(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out,
                                     std::int64_t n, scratch& mem, cudaStream_t stream) {
  std::size_t bytes = 0;
  std::byte* d_temp = nullptr;
  const auto run = [&](void* temp) -> cudaError_t {
    if constexpr (std::is_same_v<Value, no_values>) {
      return scanlab::radix_sort_keys(temp, bytes, keys_in, keys_out, n, {}, stream);
    } else {
      return scanlab::radix_sort_pairs(temp, bytes, keys_in, keys_out, values_in, values_out, n, {}, stream);
    }
  };
  SCANLAB_TRY(run(nullptr));
  SCANLAB_TRY(mem.allocate(d_temp, static_cast<std::int64_t>(bytes)));
  return run(d_temp);
}

template <class Key, class Value>
[[nodiscard]] cudaError_t local_merge(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out,
                                      std::span<const std::int64_t> runs, scratch& mem, cudaStream_t stream) {
  std::size_t bytes = 0;
  std::byte* d_temp = nullptr;
  const auto run = [&](void* temp) -> cudaError_t {
    if constexpr (std::is_same_v<Value, no_values>) {
      return scanlab::merge_runs_keys(temp, bytes, keys_in, runs, keys_out, stream);
    } else {
      return scanlab::merge_runs_pairs(temp, bytes, keys_in, values_in, runs, keys_out, values_out, stream);
    }
  };
  SCANLAB_TRY(run(nullptr));
  SCANLAB_TRY(mem.allocate(d_temp, static_cast<std::int64_t>(bytes)));
  return run(d_temp);
}

// Rank `comm.rank()`'s splits: split[q][j] for every rank q (plan.hpp, sort_splits).
template <class Key>
[[nodiscard]] status find_splits(const communicator& comm, const Key* sorted, std::int64_t n,
                                 std::span<const std::int64_t> pieces, std::vector<std::vector<std::int64_t>>& split,
                                 scratch& mem, cudaStream_t stream) {
  using Bits = scanlab::radix_ordered_bits_t<Key>;
  const int ranks = comm.size();
  const int boundaries = ranks - 1;
  const auto offsets = exclusive_offsets(pieces);
  const std::vector<std::int64_t> bound(offsets.begin() + 1, offsets.end() - 1);
  Bits* d_v = nullptr;
  std::int64_t* d_bound = nullptr;
  std::int64_t* d_counts = nullptr;
  std::int64_t* d_less_equal = nullptr;
  std::int64_t* d_all = nullptr;
  SCANLAB_DIST_TRY(mem.allocate(d_v, boundaries));
  SCANLAB_DIST_TRY(mem.allocate(d_bound, boundaries));
  SCANLAB_DIST_TRY(mem.allocate(d_counts, boundaries * digits));
  SCANLAB_DIST_TRY(mem.allocate(d_less_equal, 2 * boundaries));
  SCANLAB_DIST_TRY(mem.allocate(d_all, 2 * boundaries * ranks));
  SCANLAB_DIST_TRY(cudaMemsetAsync(d_v, 0, sizeof(Bits) * static_cast<std::size_t>(boundaries), stream));
  SCANLAB_DIST_TRY(cudaMemcpyAsync(d_bound, bound.data(), sizeof(std::int64_t) * bound.size(), cudaMemcpyHostToDevice,
                                   stream));
  constexpr unsigned threads = 256;
  const auto blocks = [&](int items) { return (static_cast<unsigned>(items) + threads - 1) / threads; };
  for (int shift = static_cast<int>(8 * sizeof(Bits)) - digit_bits; shift >= 0; shift -= digit_bits) {
    SCANLAB_DIST_TRY(scanlab::detail::launch(count_candidates<Key, Bits>, blocks(boundaries * digits), threads, 0,
                                             stream, sorted, n, static_cast<const Bits*>(d_v), shift, d_counts,
                                             boundaries));
    SCANLAB_DIST_TRY(ncclAllReduce(d_counts, d_counts, static_cast<std::size_t>(boundaries * digits), ncclInt64,
                                   ncclSum, comm.get(), stream));
    SCANLAB_DIST_TRY(scanlab::detail::launch(keep_candidates<Bits>, blocks(boundaries), threads, 0, stream, d_v,
                                             shift, static_cast<const std::int64_t*>(d_counts),
                                             static_cast<const std::int64_t*>(d_bound), boundaries));
  }
  SCANLAB_DIST_TRY(scanlab::detail::launch(count_at_splitters<Key, Bits>, blocks(boundaries), threads, 0, stream,
                                           sorted, n, static_cast<const Bits*>(d_v), d_less_equal, boundaries));
  std::vector<std::int64_t> all;
  SCANLAB_DIST_TRY(all_gather_to_host(comm, d_less_equal, d_all, 2 * boundaries, all, stream));
  std::vector<std::vector<std::int64_t>> less(static_cast<std::size_t>(ranks)), equal(static_cast<std::size_t>(ranks));
  for (int q = 0; q < ranks; ++q) {
    for (int j = 0; j < boundaries; ++j) {
      const auto at = static_cast<std::size_t>((q * boundaries + j) * 2);
      less[static_cast<std::size_t>(q)].push_back(all[at]);
      equal[static_cast<std::size_t>(q)].push_back(all[at + 1]);
    }
  }
  split = sort_splits(pieces, bound, less, equal);
  return {};
}

template <class Key, class Value>
[[nodiscard]] status sort(const communicator& comm, const Key* keys_in, Key* keys_out, const Value* values_in,
                          Value* values_out, std::int64_t n, cudaStream_t stream, sort_timing* timing) {
  constexpr bool pairs = !std::is_same_v<Value, no_values>;
  if (n < 0) return to_status(cudaErrorInvalidValue);
  if (n > 0 && (keys_in == nullptr || keys_out == nullptr || (pairs && (values_in == nullptr || values_out == nullptr)))) {
    return to_status(cudaErrorInvalidValue);
  }
  const device_scope scope(comm.device());
  SCANLAB_DIST_TRY(scope.status());
  scratch mem(comm, stream);
  phase_clock clock(timing, stream);
  if (timing != nullptr) *timing = {};
  if (comm.size() == 1) {
    SCANLAB_DIST_TRY(clock.mark(0));
    SCANLAB_DIST_TRY(local_sort(keys_in, keys_out, values_in, values_out, n, mem, stream));
    for (int moment = 1; moment <= 4; ++moment) SCANLAB_DIST_TRY(clock.mark(moment));
    return to_status(clock.finish());
  }

  // The pieces' sizes, known to every rank.
  std::vector<std::int64_t> pieces;
  SCANLAB_DIST_TRY(all_gather_count(comm, n, mem, pieces, stream));

  // 1. The piece sorted, into scratch.
  Key* sorted_keys = nullptr;
  Key* received_keys = nullptr;
  Value* sorted_values = nullptr;
  Value* received_values = nullptr;
  SCANLAB_DIST_TRY(mem.allocate(sorted_keys, n));
  SCANLAB_DIST_TRY(mem.allocate(received_keys, n));
  if constexpr (pairs) {
    SCANLAB_DIST_TRY(mem.allocate(sorted_values, n));
    SCANLAB_DIST_TRY(mem.allocate(received_values, n));
  }
  SCANLAB_DIST_TRY(clock.mark(0));
  SCANLAB_DIST_TRY(local_sort(keys_in, sorted_keys, values_in, sorted_values, n, mem, stream));
  SCANLAB_DIST_TRY(clock.mark(1));

  // 2. Exact splitters; 3. the exchange.
  std::vector<std::vector<std::int64_t>> split;
  SCANLAB_DIST_TRY(find_splits(comm, static_cast<const Key*>(sorted_keys), n, pieces, split, mem, stream));
  const auto plan = sort_exchange_plan(split, comm.rank());
  SCANLAB_DIST_TRY(clock.mark(2));
  SCANLAB_DIST_TRY(all_to_all(comm, plan, static_cast<const Key*>(sorted_keys), received_keys, stream));
  if constexpr (pairs) {
    SCANLAB_DIST_TRY(all_to_all(comm, plan, static_cast<const Value*>(sorted_values), received_values, stream));
  }

  SCANLAB_DIST_TRY(clock.mark(3));

  // 4. The received runs (one per rank, in rank order) merged.
  std::vector<std::int64_t> runs(plan.recv_displs.begin(), plan.recv_displs.end());
  runs.push_back(plan.received());
  SCANLAB_DIST_TRY(local_merge(static_cast<const Key*>(received_keys), keys_out,
                               static_cast<const Value*>(received_values), values_out,
                               std::span<const std::int64_t>(runs), mem, stream));
  SCANLAB_DIST_TRY(clock.mark(4));
  if (timing != nullptr) {
    for (std::size_t q = 0; q < plan.send_counts.size(); ++q) {
      if (static_cast<int>(q) != comm.rank()) {
        timing->sent_bytes += plan.send_counts[q] * static_cast<std::int64_t>(sizeof(Key) + (pairs ? sizeof(Value) : 0));
      }
    }
  }
  return to_status(clock.finish());
}

}  // namespace detail

// keys_out = this rank's share of all ranks' keys sorted stably (see the top of the file);
// keys_out has n items like keys_in and must not overlap it.
template <class Key>
[[nodiscard]] status sort_keys(const communicator& comm, const Key* keys_in, Key* keys_out, std::int64_t n,
                               cudaStream_t stream = nullptr, sort_timing* timing = nullptr) {
  return detail::sort<Key, detail::no_values>(comm, keys_in, keys_out, nullptr, nullptr, n, stream, timing);
}

// sort_keys, the values (4 or 8 bytes) following their keys.
template <class Key, class Value>
[[nodiscard]] status sort_pairs(const communicator& comm, const Key* keys_in, Key* keys_out, const Value* values_in,
                                Value* values_out, std::int64_t n, cudaStream_t stream = nullptr,
                                sort_timing* timing = nullptr) {
  return detail::sort<Key, Value>(comm, keys_in, keys_out, values_in, values_out, n, stream, timing);
}

}  // namespace scanlab::distributed
