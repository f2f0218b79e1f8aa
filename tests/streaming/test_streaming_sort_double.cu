// The external sort on double keys, pairs with std::int64_t values (streaming_sort_test_common.cuh).
#include "streaming/streaming_sort_test_common.cuh"

namespace {

SCANLAB_STREAMING_SORT_TESTS(streaming_sort_double, double, std::int64_t)

}  // namespace
