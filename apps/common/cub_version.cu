// Which CUB the baselines were compiled against: the toolkit's, or newer CCCL headers
// (SCANLAB_CCCL_INCLUDE_DIR). Compiled with the same include path as every baseline.
#include "common/bench.hpp"

#include <cub/version.cuh>

#include <string>

#ifndef SCANLAB_CCCL_SOURCE
#define SCANLAB_CCCL_SOURCE "CUDA toolkit"
#endif

namespace scanlab::bench {

baseline_info baseline() {
  baseline_info info;
  info.cub_version = std::to_string(CUB_MAJOR_VERSION) + "." + std::to_string(CUB_MINOR_VERSION) + "." +
                     std::to_string(CUB_SUBMINOR_VERSION);
  info.headers = SCANLAB_CCCL_SOURCE;
  return info;
}

}  // namespace scanlab::bench
