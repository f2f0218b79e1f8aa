// scanlab-sort, GPU side for 32-bit keys, in memory and streamed (one translation unit per key width:
// compile time; the streaming path's runs reuse the radix sort kernels compiled here).
#include "sort/sort_gpu_impl.cuh"

SCANLAB_SORT_INSTANTIATE(std::uint32_t)
SCANLAB_SORT_INSTANTIATE(std::int32_t)
SCANLAB_SORT_INSTANTIATE(float)
