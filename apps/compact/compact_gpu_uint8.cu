// scanlab-compact, GPU side for uint8 data (see compact_gpu.cuh).
#include "compact/compact_gpu.cuh"

SCANLAB_COMPACT_INSTANTIATE(std::uint8_t)
