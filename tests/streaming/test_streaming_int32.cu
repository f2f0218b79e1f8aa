// The streaming algorithms on std::int32_t (streaming_test_common.cuh).
#include "streaming/streaming_test_common.cuh"

namespace {

SCANLAB_STREAMING_TESTS(streaming_int32, std::int32_t)

TEST_F(streaming_int32, NoncommutativeScan) { scanlab::test::streaming::noncommutative_scan_test(); }

}  // namespace
