// One span of GPU work timed with a pair of CUDA events, for apps that time a single run (the
// benchmark harness, common/bench.hpp, takes medians of many). Throws scanlab::cuda_error.
#pragma once

#include <scanlab/error.hpp>

#include <cuda_runtime_api.h>

namespace scanlab {

class event_timer {
 public:
  event_timer() {
    SCANLAB_CHECK(cudaEventCreate(&start_));
    SCANLAB_CHECK(cudaEventCreate(&stop_));
  }
  ~event_timer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  event_timer(const event_timer&) = delete;
  event_timer& operator=(const event_timer&) = delete;

  void start(cudaStream_t s = nullptr) { SCANLAB_CHECK(cudaEventRecord(start_, s)); }
  // Milliseconds since start(), once the work queued on `s` before this call has finished.
  double stop_ms(cudaStream_t s = nullptr) {
    SCANLAB_CHECK(cudaEventRecord(stop_, s));
    SCANLAB_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    SCANLAB_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

}  // namespace scanlab
