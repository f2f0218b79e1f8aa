// Scans of float: random values against a float64 reference (n-aware tolerance),
// integer-valued floats compared exactly, and the stress test, where any bit that
// changes between runs fails (the scan is deterministic for floats too).
#include "scan/scan_test_common.cuh"

namespace {

using float_case = scanlab::test::scan::float_case<float>;
using scanlab::test::scan::float_exact_case;

SCANLAB_SCAN_TESTS(scan_float, float_case)
SCANLAB_SCAN_TESTS(scan_float_exact, float_exact_case)

TEST_F(scan_float, Stress) { scanlab::test::scan::stress_test<float_case>(10); }

}  // namespace
