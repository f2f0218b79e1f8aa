// scanlab/distributed/communicator.hpp: the ranks of a distributed job, one GPU each, and
// how the distributed algorithms report failure.
//
// The distributed algorithms (scanlab/distributed.cuh) work on data sharded across ranks:
// rank r holds a contiguous piece of one global array, pieces in rank order. Every rank
// calls the same algorithm with its own piece, from its own host thread or process (the
// algorithms wait on the host for small exchanges, so one thread cannot drive two ranks).
// The transport is NCCL: scanlab::distributed links it (libnccl.so.2); scanlab::primitives
// does not.
//
//   // One process, one thread per GPU:
//   std::vector<scanlab::distributed::communicator> comms;
//   check(scanlab::distributed::communicator::create_all({0, 1, 2, 3}, comms));
//   ... std::thread per rank r: scanlab::distributed::reduce(comms[r], ...) ...
//
//   // One process per GPU: rank 0 makes an id (ncclGetUniqueId), hands it to the
//   // others by any means (a file, MPI, a socket), and every rank calls
//   check(scanlab::distributed::communicator::create(id, rank, size, device, comm));
//
// Errors: library calls never throw; they return a status carrying the first failed CUDA
// or NCCL call. NVLink multicast (NVLS) is never used by scanlab: keep NCCL_NVLS_ENABLE=0
// on machines whose GPUs others share.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace scanlab::distributed {

// The outcome of a distributed call: the first CUDA or NCCL failure, or success.
struct status {
  cudaError_t cuda = cudaSuccess;
  ncclResult_t nccl = ncclSuccess;

  [[nodiscard]] bool ok() const noexcept { return cuda == cudaSuccess && nccl == ncclSuccess; }
  [[nodiscard]] std::string message() const {
    if (cuda != cudaSuccess) return std::string("CUDA error ") + cudaGetErrorName(cuda) + " (" + cudaGetErrorString(cuda) + ")";
    if (nccl != ncclSuccess) return std::string("NCCL error ") + std::to_string(static_cast<int>(nccl)) + " (" + ncclGetErrorString(nccl) + ")";
    return "success";
  }
};

[[nodiscard]] inline status to_status(status s) noexcept { return s; }
[[nodiscard]] inline status to_status(cudaError_t e) noexcept { return {e, ncclSuccess}; }
[[nodiscard]] inline status to_status(ncclResult_t e) noexcept { return {cudaSuccess, e}; }

}  // namespace scanlab::distributed

// Return the status of `expr` (a cudaError_t, ncclResult_t or status) if it is a failure.
#define SCANLAB_DIST_TRY(expr)                                                       \
  do {                                                                               \
    const ::scanlab::distributed::status scanlab_dist_status_ = ::scanlab::distributed::to_status(expr); \
    if (!scanlab_dist_status_.ok()) return scanlab_dist_status_;                     \
  } while (0)

namespace scanlab::distributed {

// Makes `device` current for a scope and restores the caller's device after.
class device_scope {
 public:
  explicit device_scope(int device) {
    status_ = cudaGetDevice(&previous_);
    if (status_ == cudaSuccess && previous_ != device) status_ = cudaSetDevice(device);
  }
  device_scope(const device_scope&) = delete;
  device_scope& operator=(const device_scope&) = delete;
  ~device_scope() {
    int now = 0;
    if (cudaGetDevice(&now) == cudaSuccess && now != previous_) (void)cudaSetDevice(previous_);
  }
  [[nodiscard]] cudaError_t status() const noexcept { return status_; }

 private:
  int previous_ = 0;
  cudaError_t status_ = cudaSuccess;
};

// One rank: an NCCL communicator bound to one GPU. Move-only; destroys the communicator.
class communicator {
 public:
  communicator() = default;
  communicator(const communicator&) = delete;
  communicator& operator=(const communicator&) = delete;
  communicator(communicator&& other) noexcept { swap(other); }
  communicator& operator=(communicator&& other) noexcept {
    if (this != &other) {
      communicator gone(std::move(*this));
      swap(other);
    }
    return *this;
  }
  ~communicator() {
    if (comm_ != nullptr || pool_ != nullptr) {
      const device_scope scope(device_);
      if (comm_ != nullptr) (void)ncclCommDestroy(comm_);
      if (pool_ != nullptr) (void)cudaMemPoolDestroy(pool_);  // released once its last block is freed
    }
  }

  // Every GPU in `devices` (distinct) a rank of one group, ranks in that order, for a
  // process that drives them all (one thread per rank). `out` gets devices.size()
  // communicators.
  [[nodiscard]] static status create_all(std::span<const int> devices, std::vector<communicator>& out) {
    out.clear();
    if (devices.empty()) return to_status(cudaErrorInvalidValue);
    std::vector<ncclComm_t> comms(devices.size(), nullptr);
    std::vector<int> list(devices.begin(), devices.end());
    {
      const device_scope scope(list[0]);  // ncclCommInitAll sets devices itself; the caller's is kept
      SCANLAB_DIST_TRY(scope.status());
      SCANLAB_DIST_TRY(ncclCommInitAll(comms.data(), static_cast<int>(comms.size()), list.data()));
    }
    for (std::size_t r = 0; r < comms.size(); ++r) {
      communicator c;
      c.comm_ = comms[r];
      c.rank_ = static_cast<int>(r);
      c.size_ = static_cast<int>(comms.size());
      c.device_ = list[r];
      out.push_back(std::move(c));
    }
    for (auto& c : out) SCANLAB_DIST_TRY(c.make_pool());
    return {};
  }

  // Rank `rank` of `size` on `device`, in a group named by `id` (ncclGetUniqueId on one
  // rank, handed to all). Blocks until every rank of the group has called it.
  [[nodiscard]] static status create(const ncclUniqueId& id, int rank, int size, int device, communicator& out) {
    if (size < 1 || rank < 0 || rank >= size) return to_status(cudaErrorInvalidValue);
    const device_scope scope(device);
    SCANLAB_DIST_TRY(scope.status());
    communicator c;
    SCANLAB_DIST_TRY(ncclCommInitRank(&c.comm_, size, id, rank));
    c.rank_ = rank;
    c.size_ = size;
    c.device_ = device;
    SCANLAB_DIST_TRY(c.make_pool());
    out = std::move(c);
    return {};
  }

  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return size_; }
  [[nodiscard]] int device() const noexcept { return device_; }
  [[nodiscard]] ncclComm_t get() const noexcept { return comm_; }
  // Where the algorithms' scratch memory comes from (stream-ordered): a pool of this rank's
  // device that keeps what it was given between calls (no release threshold), so that
  // repeated calls do not map memory again; null where the device has no memory pools
  // (then cudaMallocAsync's default pool is used).
  [[nodiscard]] cudaMemPool_t pool() const noexcept { return pool_; }

 private:
  [[nodiscard]] cudaError_t make_pool() {
    int supported = 0;
    if (cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device_) != cudaSuccess || !supported) {
      return cudaSuccess;
    }
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device_;
    const cudaError_t e = cudaMemPoolCreate(&pool_, &props);
    if (e != cudaSuccess) return e;
    std::uint64_t keep = ~std::uint64_t{0};
    return cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep);
  }

  void swap(communicator& other) noexcept {
    std::swap(comm_, other.comm_);
    std::swap(rank_, other.rank_);
    std::swap(size_, other.size_);
    std::swap(device_, other.device_);
    std::swap(pool_, other.pool_);
  }

  ncclComm_t comm_ = nullptr;
  int rank_ = 0;
  int size_ = 0;
  int device_ = 0;
  cudaMemPool_t pool_ = nullptr;
};

}  // namespace scanlab::distributed
