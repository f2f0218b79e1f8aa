// Host code of the consumer, compiled by the C++ compiler (not nvcc): scanlab's error
// handling and the device check's words work without nvcc.
#include "report.hpp"

#include <scanlab/device_check.hpp>
#include <scanlab/error.hpp>

#include <cuda_runtime_api.h>

#include <cstdio>

int report_failure(cudaError_t status, const char* what) {
  try {
    scanlab::throw_on_error(status, what, __FILE__, __LINE__);
  } catch (const scanlab::cuda_error& e) {
    std::fprintf(stderr, "scanlab_consumer: %s\n", e.what());
    return 1;
  }
  return 0;
}

void say_built_for(const char* architectures) {
  std::printf("scanlab_consumer: built for %s\n", scanlab::describe_architectures(architectures).c_str());
}
