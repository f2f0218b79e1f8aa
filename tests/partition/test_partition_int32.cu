// Partitions and quicksort of std::int32_t (bodies in partition_test_common.cuh).
#include "partition/partition_test_common.cuh"

namespace {
SCANLAB_PARTITION_TESTS(partition_int32, std::int32_t)
}  // namespace
