// The streaming library's workspace (scanlab/streaming.cuh) and a host buffer for its outputs,
// behind a plain C++ header: the apps' host code (main.cpp: the slice loop, the output file,
// the CPU reference) holds them without seeing a CUDA header; their per-dtype GPU translation
// units call the library with workspace().
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace scanlab::streaming {
class workspace;
}

namespace scanlab {

class stream_workspace {
 public:
  // At most device_bytes of device memory, the library's default options (3 slots, chunks of
  // at most 64 MiB). Nothing is allocated before the first call.
  explicit stream_workspace(std::uint64_t device_bytes);
  ~stream_workspace();
  stream_workspace(const stream_workspace&) = delete;
  stream_workspace& operator=(const stream_workspace&) = delete;

  [[nodiscard]] streaming::workspace& workspace() noexcept { return *ws_; }
  [[nodiscard]] std::uint64_t device_bytes() const noexcept;
  // Of the last call: items per chunk, and device bytes held.
  [[nodiscard]] std::int64_t chunk_items() const noexcept;
  [[nodiscard]] std::uint64_t device_bytes_held() const noexcept;
  // Of the last call: chunks (the external sort's runs), and the sort's merge steps (0: none).
  [[nodiscard]] std::int64_t num_chunks() const noexcept;
  [[nodiscard]] std::int64_t merge_steps() const noexcept;

 private:
  std::unique_ptr<streaming::workspace> ws_;
};

// A host buffer of `bytes`, pinned (cudaMallocHost: the streaming library copies it by DMA,
// without staging) where the runtime grants it, else pageable (operator new). Not
// zero-initialised.
class host_buffer {
 public:
  explicit host_buffer(std::size_t bytes);
  ~host_buffer();
  host_buffer(const host_buffer&) = delete;
  host_buffer& operator=(const host_buffer&) = delete;

  [[nodiscard]] std::byte* data() noexcept { return data_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }
  [[nodiscard]] bool pinned() const noexcept { return pinned_; }

 private:
  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
  bool pinned_ = false;
};

}  // namespace scanlab
