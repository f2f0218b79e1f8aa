// The streaming algorithms on std::uint32_t (streaming_test_common.cuh).
#include "streaming/streaming_test_common.cuh"

namespace {

SCANLAB_STREAMING_TESTS(streaming_uint32, std::uint32_t)

}  // namespace
