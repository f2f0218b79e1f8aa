// scanlab-compact, GPU side for float64 data (see compact_gpu.cuh).
#include "compact/compact_gpu.cuh"

SCANLAB_COMPACT_INSTANTIATE(double)
