// scanlab-partition, GPU side, for std::int32_t (the body is in partition_gpu.cuh).
#include "partition/partition_gpu.cuh"

template scanlab::partition_app::partition_report scanlab::partition_app::run_partition<std::int32_t>(
    const scanlab::io::host_array&, const scanlab::io::host_array&, const scanlab::partition_app::partition_request&);
