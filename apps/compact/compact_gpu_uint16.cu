// scanlab-compact, GPU side for uint16 data (see compact_gpu.cuh).
#include "compact/compact_gpu.cuh"

SCANLAB_COMPACT_INSTANTIATE(std::uint16_t)
