// The external sort on std::uint64_t keys, pairs with std::uint32_t values (streaming_sort_test_common.cuh).
#include "streaming/streaming_sort_test_common.cuh"

namespace {

SCANLAB_STREAMING_SORT_TESTS(streaming_sort_uint64, std::uint64_t, std::uint32_t)

}  // namespace
