// scanlab-quicksort, GPU side, for double keys (the body is in quicksort_gpu.cuh).
#include "partition/quicksort_gpu.cuh"

template scanlab::partition_app::sort_report scanlab::partition_app::run_quicksort<double>(
    const scanlab::io::host_array&, const scanlab::partition_app::sort_request&);
