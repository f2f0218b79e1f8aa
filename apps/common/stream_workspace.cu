#include "common/stream_workspace.hpp"

#include <scanlab/streaming/pipeline.cuh>

#include <cuda_runtime_api.h>

#include <new>

namespace scanlab {

stream_workspace::stream_workspace(std::uint64_t device_bytes)
    : ws_(std::make_unique<streaming::workspace>(static_cast<std::size_t>(device_bytes))) {}

stream_workspace::~stream_workspace() = default;

std::uint64_t stream_workspace::device_bytes() const noexcept { return ws_->device_bytes(); }
std::int64_t stream_workspace::chunk_items() const noexcept { return ws_->last_chunk_items(); }
std::uint64_t stream_workspace::device_bytes_held() const noexcept { return ws_->device_bytes_held(); }
std::int64_t stream_workspace::num_chunks() const noexcept { return ws_->last_num_chunks(); }
std::int64_t stream_workspace::merge_steps() const noexcept { return ws_->last_merge_steps(); }

host_buffer::host_buffer(std::size_t bytes) : bytes_(bytes) {
  void* p = nullptr;
  if (cudaMallocHost(&p, bytes == 0 ? 1 : bytes) == cudaSuccess) {
    data_ = static_cast<std::byte*>(p);
    pinned_ = true;
    return;
  }
  (void)cudaGetLastError();  // refused (too much pinned memory asked): pageable instead
  data_ = static_cast<std::byte*>(::operator new(bytes == 0 ? 1 : bytes));
}

host_buffer::~host_buffer() {
  if (pinned_) {
    (void)cudaFreeHost(data_);
  } else {
    ::operator delete(data_);
  }
}

}  // namespace scanlab
