// An owning, typed device allocation for apps and tests (throws scanlab::cuda_error).
#pragma once

#include <scanlab/error.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace scanlab {

template <class T>
class device_buffer {
 public:
  device_buffer() = default;
  explicit device_buffer(std::int64_t count) { allocate(count); }
  explicit device_buffer(std::span<const T> host) {
    allocate(static_cast<std::int64_t>(host.size()));
    copy_from(host);
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  device_buffer(device_buffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  device_buffer& operator=(device_buffer&& other) noexcept {
    if (this != &other) {
      release();
      ptr_ = std::exchange(other.ptr_, nullptr);
      count_ = std::exchange(other.count_, 0);
    }
    return *this;
  }
  ~device_buffer() { release(); }

  [[nodiscard]] T* data() noexcept { return ptr_; }
  [[nodiscard]] const T* data() const noexcept { return ptr_; }
  [[nodiscard]] std::int64_t size() const noexcept { return count_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return static_cast<std::size_t>(count_) * sizeof(T); }

  // Host -> device; host.size() must not exceed size().
  void copy_from(std::span<const T> host, cudaStream_t stream = nullptr) {
    if (static_cast<std::int64_t>(host.size()) > count_) {
      throw_on_error(cudaErrorInvalidValue, "device_buffer::copy_from (host span larger than buffer)",
                     __FILE__, __LINE__);
    }
    SCANLAB_CHECK(cudaMemcpyAsync(ptr_, host.data(), host.size_bytes(), cudaMemcpyHostToDevice, stream));
    SCANLAB_CHECK(cudaStreamSynchronize(stream));
  }

  // Device -> host, the whole buffer.
  [[nodiscard]] std::vector<T> to_host(cudaStream_t stream = nullptr) const {
    std::vector<T> host(static_cast<std::size_t>(count_));
    if (count_ > 0) {
      SCANLAB_CHECK(cudaMemcpyAsync(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost, stream));
    }
    SCANLAB_CHECK(cudaStreamSynchronize(stream));
    return host;
  }

  // Sets every byte to `byte` (handy to poison outputs before a kernel writes them).
  void fill_bytes(int byte, cudaStream_t stream = nullptr) {
    if (count_ > 0) SCANLAB_CHECK(cudaMemsetAsync(ptr_, byte, bytes(), stream));
  }

 private:
  void allocate(std::int64_t count) {
    if (count < 0) throw_on_error(cudaErrorInvalidValue, "device_buffer(negative count)", __FILE__, __LINE__);
    count_ = count;
    if (count > 0) SCANLAB_CHECK(cudaMalloc(&ptr_, bytes()));
  }
  void release() noexcept {
    if (ptr_ != nullptr) cudaFree(ptr_);  // nothing useful to do with an error in a destructor
    ptr_ = nullptr;
    count_ = 0;
  }

  T* ptr_ = nullptr;
  std::int64_t count_ = 0;
};

}  // namespace scanlab
