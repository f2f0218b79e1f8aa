// Partitions and quicksort of float (bodies in partition_test_common.cuh).
#include "partition/partition_test_common.cuh"

namespace {
SCANLAB_PARTITION_TESTS(partition_float, float)
}  // namespace
