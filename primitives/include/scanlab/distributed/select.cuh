// scanlab/distributed/select.cuh: stream compaction of a sharded array, and moving items
// between ranks while keeping their global order.
//
// select_if: each rank keeps its own selected items (scanlab::select_if, one pass) and
// learns where they stand in the global selection: the ranks' counts are all-gathered and
// summed in rank order. Nothing moves between GPUs, so it scales with the ranks.
// redistribute / rebalance: the items, in global order, re-cut into pieces of given (or
// equal) sizes: every rank sends each other rank the overlap of its global range with
// that rank's new range (NCCL send/receive in one group; its own overlap is a device copy).
#pragma once

#include <scanlab/algorithms/select.cuh>
#include <scanlab/distributed/communicator.hpp>
#include <scanlab/distributed/detail/exchange.cuh>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace scanlab::distributed {

// Where one rank's selected items stand in the global selection.
struct selection {
  std::int64_t count = 0;   // this rank's selected items (written to d_out)
  std::int64_t offset = 0;  // selected items on the ranks before it
  std::int64_t total = 0;   // selected items on all ranks
};

// d_out gets this rank's d_in[i] with pred(d_in[i]), in order (room for n items); `out`
// describes them. Returns once the counts are known on the host.
template <class InputIt, class OutputIt, class Pred>
[[nodiscard]] status select_if(const communicator& comm, InputIt d_in, std::int64_t n, OutputIt d_out, Pred pred,
                               selection& out, cudaStream_t stream = nullptr) {
  if (n < 0) return to_status(cudaErrorInvalidValue);
  const device_scope scope(comm.device());
  SCANLAB_DIST_TRY(scope.status());
  detail::scratch mem(comm, stream);
  std::int64_t* d_count = nullptr;
  std::int64_t* d_counts = nullptr;
  std::byte* d_temp = nullptr;
  std::size_t bytes = 0;
  SCANLAB_DIST_TRY(scanlab::select_if(nullptr, bytes, d_in, d_out, d_count, n, pred, stream));
  SCANLAB_DIST_TRY(mem.allocate(d_count, 1));
  SCANLAB_DIST_TRY(mem.allocate(d_counts, comm.size()));
  SCANLAB_DIST_TRY(mem.allocate(d_temp, static_cast<std::int64_t>(bytes)));
  SCANLAB_DIST_TRY(scanlab::select_if(d_temp, bytes, d_in, d_out, d_count, n, pred, stream));
  std::vector<std::int64_t> counts;
  SCANLAB_DIST_TRY(detail::all_gather_to_host(comm, d_count, d_counts, 1, counts, stream));
  out = {};
  for (int q = 0; q < comm.size(); ++q) {
    const std::int64_t c = counts[static_cast<std::size_t>(q)];
    if (q < comm.rank()) out.offset += c;
    if (q == comm.rank()) out.count = c;
    out.total += c;
  }
  return {};
}

// The items of all ranks (this rank: d_in[0, count)), in global order, re-cut so that rank
// q holds want[q] of them (want: one entry per rank, summing to the global count, the same
// on every rank). d_out must have room for want[rank]; it must not overlap d_in.
template <class T>
[[nodiscard]] status redistribute(const communicator& comm, const T* d_in, std::int64_t count, T* d_out,
                                  std::span<const std::int64_t> want, cudaStream_t stream = nullptr) {
  if (count < 0 || want.size() != static_cast<std::size_t>(comm.size())) return to_status(cudaErrorInvalidValue);
  const device_scope scope(comm.device());
  SCANLAB_DIST_TRY(scope.status());
  detail::scratch mem(comm, stream);
  std::vector<std::int64_t> have;
  SCANLAB_DIST_TRY(detail::all_gather_count(comm, count, mem, have, stream));
  std::int64_t have_total = 0;
  std::int64_t want_total = 0;
  for (std::size_t q = 0; q < have.size(); ++q) {
    have_total += have[q];
    if (want[q] < 0) return to_status(cudaErrorInvalidValue);
    want_total += want[q];
  }
  if (have_total != want_total) return to_status(cudaErrorInvalidValue);
  const auto plan = detail::redistribution_plan(have, want, comm.rank());
  return detail::all_to_all(comm, plan, d_in, d_out, stream);
}

// redistribute into equal pieces (the first total % ranks ranks one more item): d_out
// needs room for ceil(total / ranks) items; out_count gets this rank's share.
template <class T>
[[nodiscard]] status rebalance(const communicator& comm, const T* d_in, std::int64_t count, std::int64_t total,
                               T* d_out, std::int64_t& out_count, cudaStream_t stream = nullptr) {
  if (total < 0) return to_status(cudaErrorInvalidValue);
  const auto want = detail::balanced_counts(total, comm.size());
  out_count = want[static_cast<std::size_t>(comm.rank())];
  return redistribute(comm, d_in, count, d_out, std::span<const std::int64_t>(want), stream);
}

}  // namespace scanlab::distributed
