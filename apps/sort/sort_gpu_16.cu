// scanlab-sort, GPU side for 16-bit keys (one translation unit per key width: compile time).
#include "sort/sort_gpu_impl.cuh"

namespace scanlab::sort_app {

template gpu_result run_typed<std::uint16_t>(const io::host_array&, const io::host_array*, const gpu_request&);
template gpu_result run_typed<std::int16_t>(const io::host_array&, const io::host_array*, const gpu_request&);

}  // namespace scanlab::sort_app
