// Scans of a custom 12-byte struct (three int32 counters, component-wise sum): the
// element-wise load path and the tile state with separate flag and value.
#include "scan/scan_test_common.cuh"

namespace {

using scanlab::test::scan::vec3_case;

SCANLAB_SCAN_TESTS(scan_custom, vec3_case)

TEST_F(scan_custom, BlockAndWarp) { scanlab::test::scan::block_and_warp_test<vec3_case>(); }

}  // namespace
