// The streaming algorithms on std::int64_t (streaming_test_common.cuh).
#include "streaming/streaming_test_common.cuh"

namespace {

SCANLAB_STREAMING_TESTS(streaming_int64, std::int64_t)

}  // namespace
