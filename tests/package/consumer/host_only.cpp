// A consumer target with no CUDA source at all, compiled by the C++ compiler: scanlab's
// host headers, their CUDA runtime calls linked through scanlab::primitives alone.
#include <scanlab/device_check.hpp>
#include <scanlab/error.hpp>

#include <cuda_runtime_api.h>

#include <cstdio>

int main() {
  int runtime = 0;
  try {
    SCANLAB_CHECK(cudaRuntimeGetVersion(&runtime));
  } catch (const scanlab::cuda_error& e) {
    std::fprintf(stderr, "scanlab_consumer_host: %s\n", e.what());
    return 1;
  }
  // The error path: a status turned into scanlab::cuda_error's one line.
  try {
    SCANLAB_CHECK(cudaErrorInvalidValue);
    std::fprintf(stderr, "scanlab_consumer_host: SCANLAB_CHECK did not throw\n");
    return 1;
  } catch (const scanlab::cuda_error& e) {
    if (e.status() != cudaErrorInvalidValue) return 1;
    std::printf("scanlab_consumer_host: CUDA runtime %d; SCANLAB_CHECK says: %s; sm_80 reads as %s\n", runtime,
                e.what(), scanlab::sm_name(8, 0).c_str());
  }
  return 0;
}
