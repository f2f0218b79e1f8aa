// Partitions of the 8-byte types, std::int64_t and double (bodies in
// partition_test_common.cuh, each type instantiated here only).
#include "partition/partition_test_common.cuh"

namespace {
SCANLAB_PARTITION_TESTS(partition_int64, std::int64_t)
SCANLAB_PARTITION_TESTS(partition_double, double)
}  // namespace
