// scanlab/distributed/detail/exchange.cuh: the pieces every distributed algorithm is made
// of: stream-ordered scratch memory, an all-gather of a few bytes per rank, an all-to-all
// of variable counts (NCCL point-to-point in one group), and the one-thread kernel that
// folds the ranks' partial results in rank order.
#pragma once

#include <scanlab/distributed/communicator.hpp>
#include <scanlab/distributed/detail/plan.hpp>
#include <scanlab/detail/launch.cuh>

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace scanlab::distributed::detail {

// Device memory for the length of one call, allocated and freed in stream order from the
// rank's pool (communicator::pool).
class scratch {
 public:
  scratch(const communicator& comm, cudaStream_t stream) : stream_(stream), pool_(comm.pool()) {}
  scratch(const scratch&) = delete;
  scratch& operator=(const scratch&) = delete;
  ~scratch() {
    for (void* p : blocks_) (void)cudaFreeAsync(p, stream_);
  }

  // `count` items of T (at least one byte is allocated, so the pointer is never null).
  template <class T>
  [[nodiscard]] cudaError_t allocate(T*& out, std::int64_t count) {
    void* p = nullptr;
    const auto bytes = static_cast<std::size_t>(count > 0 ? count : 1) * sizeof(T);
    const cudaError_t e = pool_ != nullptr ? cudaMallocFromPoolAsync(&p, bytes, pool_, stream_)
                                           : cudaMallocAsync(&p, bytes, stream_);
    if (e != cudaSuccess) return e;
    blocks_.push_back(p);
    out = static_cast<T*>(p);
    return cudaSuccess;
  }

 private:
  cudaStream_t stream_;
  cudaMemPool_t pool_;
  std::vector<void*> blocks_;
};

// d_all[q] = rank q's *d_mine, for trivially copyable T, on every rank.
template <class T>
[[nodiscard]] status all_gather(const communicator& comm, const T* d_mine, T* d_all, std::int64_t count,
                                cudaStream_t stream) {
  static_assert(std::is_trivially_copyable_v<T>);
  return to_status(ncclAllGather(d_mine, d_all, static_cast<std::size_t>(count) * sizeof(T), ncclUint8, comm.get(),
                                 stream));
}

// `count` int64 values per rank, gathered and brought to the host (waits for the stream):
// host[q * count + i] = rank q's d_mine[i].
[[nodiscard]] inline status all_gather_to_host(const communicator& comm, const std::int64_t* d_mine,
                                               std::int64_t* d_all, std::int64_t count,
                                               std::vector<std::int64_t>& host, cudaStream_t stream) {
  SCANLAB_DIST_TRY(all_gather(comm, d_mine, d_all, count, stream));
  host.assign(static_cast<std::size_t>(count * comm.size()), 0);
  SCANLAB_DIST_TRY(cudaMemcpyAsync(host.data(), d_all, host.size() * sizeof(std::int64_t), cudaMemcpyDeviceToHost,
                                   stream));
  return to_status(cudaStreamSynchronize(stream));
}

// Every rank's `count` (a host value), on the host of every rank, in rank order.
[[nodiscard]] inline status all_gather_count(const communicator& comm, std::int64_t count, scratch& mem,
                                             std::vector<std::int64_t>& counts, cudaStream_t stream) {
  std::int64_t* d_count = nullptr;
  std::int64_t* d_counts = nullptr;
  SCANLAB_DIST_TRY(mem.allocate(d_count, 1));
  SCANLAB_DIST_TRY(mem.allocate(d_counts, comm.size()));
  SCANLAB_DIST_TRY(cudaMemcpyAsync(d_count, &count, sizeof(count), cudaMemcpyHostToDevice, stream));
  return all_gather_to_host(comm, d_count, d_counts, 1, counts, stream);
}

// The all-to-all of `plan` for one array of T: every rank calls it with its own plan (the
// plans of all ranks agree). The rank's own share is a device copy; the rest is NCCL
// send/receive in one group.
template <class T>
[[nodiscard]] status all_to_all(const communicator& comm, const exchange_plan& plan, const T* d_send, T* d_recv,
                                cudaStream_t stream) {
  static_assert(std::is_trivially_copyable_v<T>);
  const auto me = static_cast<std::size_t>(comm.rank());
  if (plan.send_counts[me] > 0) {
    SCANLAB_DIST_TRY(cudaMemcpyAsync(d_recv + plan.recv_displs[me], d_send + plan.send_displs[me],
                                     static_cast<std::size_t>(plan.send_counts[me]) * sizeof(T),
                                     cudaMemcpyDeviceToDevice, stream));
  }
  // One NCCL call of the group; a failure ends the group before it is returned.
  const auto p2p = [&](auto call, std::int64_t count) -> ncclResult_t {
    if (count == 0) return ncclSuccess;
    const ncclResult_t e = call(static_cast<std::size_t>(count) * sizeof(T));
    if (e != ncclSuccess) (void)ncclGroupEnd();
    return e;
  };
  SCANLAB_DIST_TRY(ncclGroupStart());
  for (std::size_t q = 0; q < plan.send_counts.size(); ++q) {
    if (q == me) continue;
    const int peer = static_cast<int>(q);
    SCANLAB_DIST_TRY(p2p([&](std::size_t bytes) {
      return ncclSend(d_send + plan.send_displs[q], bytes, ncclUint8, peer, comm.get(), stream);
    }, plan.send_counts[q]));
    SCANLAB_DIST_TRY(p2p([&](std::size_t bytes) {
      return ncclRecv(d_recv + plan.recv_displs[q], bytes, ncclUint8, peer, comm.get(), stream);
    }, plan.recv_counts[q]));
  }
  return to_status(ncclGroupEnd());
}

// A rank's partial result: `has` is 0 for a rank with no items.
template <class T>
struct partial {
  T value;
  int has;
};

// *d_out = op(start, partials[0], ..., partials[upto - 1]) over the partials that exist,
// in rank order (start skipped when !start.has). One thread: at most a few hundred ranks.
template <class T, class Op>
__global__ void fold_partials(const partial<T>* partials, int upto, partial<T> start, Op op, partial<T>* d_out) {
  partial<T> acc = start;
  for (int q = 0; q < upto; ++q) {
    if (!partials[q].has) continue;
    acc.value = acc.has ? static_cast<T>(op(acc.value, partials[q].value)) : partials[q].value;
    acc.has = 1;
  }
  *d_out = acc;
}

template <class T, class Op>
[[nodiscard]] cudaError_t launch_fold(const partial<T>* partials, int upto, partial<T> start, Op op,
                                      partial<T>* d_out, cudaStream_t stream) {
  return scanlab::detail::launch(fold_partials<T, Op>, 1, 1, 0, stream, partials, upto, start, op, d_out);
}

}  // namespace scanlab::distributed::detail
