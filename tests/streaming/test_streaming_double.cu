// The streaming algorithms on double (streaming_test_common.cuh).
#include "streaming/streaming_test_common.cuh"

namespace {

SCANLAB_STREAMING_TESTS(streaming_double, double)

}  // namespace
