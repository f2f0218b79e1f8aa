// scanlab-compact, GPU side for int32 data (see compact_gpu.cuh).
#include "compact/compact_gpu.cuh"

SCANLAB_COMPACT_INSTANTIATE(std::int32_t)
