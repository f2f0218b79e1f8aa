// Partitions and quicksort of std::int64_t (bodies in partition_test_common.cuh).
#include "partition/partition_test_common.cuh"

namespace {
SCANLAB_PARTITION_TESTS(partition_int64, std::int64_t)
}  // namespace
