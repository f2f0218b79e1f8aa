// scanlab-quicksort, GPU side, for std::int32_t keys (the body is in quicksort_gpu.cuh).
#include "partition/quicksort_gpu.cuh"

template scanlab::partition_app::sort_report scanlab::partition_app::run_quicksort<std::int32_t>(
    const scanlab::io::host_array&, const scanlab::partition_app::sort_request&);
