// scanlab-sort, GPU side for 64-bit keys, in memory and streamed (one translation unit per key width:
// compile time; the streaming path's runs reuse the radix sort kernels compiled here).
#include "sort/sort_gpu_impl.cuh"

SCANLAB_SORT_INSTANTIATE(std::uint64_t)
SCANLAB_SORT_INSTANTIATE(std::int64_t)
SCANLAB_SORT_INSTANTIATE(double)
