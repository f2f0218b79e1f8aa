// The external sort on std::int32_t keys, pairs with std::uint32_t values (streaming_sort_test_common.cuh).
#include "streaming/streaming_sort_test_common.cuh"

namespace {

SCANLAB_STREAMING_SORT_TESTS(streaming_sort_int32, std::int32_t, std::uint32_t)

}  // namespace
