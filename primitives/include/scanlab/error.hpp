// scanlab/error.hpp: checking CUDA calls, the one place that does it.
//
// Library code (everything under scanlab/ that a user calls) never throws: it
// returns cudaError_t, and propagates a failed call or launch with SCANLAB_TRY
// (launches go through scanlab::detail::launch, which returns their status).
// Apps and tests turn a bad status into a scanlab::cuda_error exception with
// SCANLAB_CHECK; every main() catches it and prints one line.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

// Return the status of `expr` from the enclosing function if it is not cudaSuccess.
#define SCANLAB_TRY(expr)                                   \
  do {                                                      \
    const cudaError_t scanlab_try_status_ = (expr);         \
    if (scanlab_try_status_ != cudaSuccess) {               \
      return scanlab_try_status_;                           \
    }                                                       \
  } while (0)

namespace scanlab {

// A failed CUDA call, with where it happened. Thrown by apps and tests only.
class cuda_error : public std::runtime_error {
 public:
  cuda_error(cudaError_t status, const char* expr, const char* file, int line)
      : std::runtime_error(describe(status, expr, file, line)), status_(status) {}

  [[nodiscard]] cudaError_t status() const noexcept { return status_; }

 private:
  static std::string describe(cudaError_t status, const char* expr, const char* file, int line) {
    return std::string(file) + ":" + std::to_string(line) + ": CUDA error " +
           cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ") from " + expr;
  }
  cudaError_t status_;
};

inline void throw_on_error(cudaError_t status, const char* expr, const char* file, int line) {
  if (status != cudaSuccess) {
    throw cuda_error(status, expr, file, line);
  }
}

}  // namespace scanlab

// Throw scanlab::cuda_error if `expr` does not return cudaSuccess.
#define SCANLAB_CHECK(expr) ::scanlab::throw_on_error((expr), #expr, __FILE__, __LINE__)
// Throw if the last kernel launch failed to start.
#define SCANLAB_CHECK_LAUNCH() ::scanlab::throw_on_error(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
