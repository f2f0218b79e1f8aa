// Partitions and quicksort of std::uint32_t (bodies in partition_test_common.cuh).
#include "partition/partition_test_common.cuh"

namespace {
SCANLAB_PARTITION_TESTS(partition_uint32, std::uint32_t)
}  // namespace
