// The streaming algorithms on float (streaming_test_common.cuh).
#include "streaming/streaming_test_common.cuh"

namespace {

SCANLAB_STREAMING_TESTS(streaming_float, float)

}  // namespace
