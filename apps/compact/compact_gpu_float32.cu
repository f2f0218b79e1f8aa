// scanlab-compact, GPU side for float32 data (see compact_gpu.cuh).
#include "compact/compact_gpu.cuh"

SCANLAB_COMPACT_INSTANTIATE(float)
