// The external sort on std::int64_t keys, pairs with std::uint64_t values (streaming_sort_test_common.cuh).
#include "streaming/streaming_sort_test_common.cuh"

namespace {

SCANLAB_STREAMING_SORT_TESTS(streaming_sort_int64, std::int64_t, std::uint64_t)

}  // namespace
