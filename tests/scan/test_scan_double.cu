// Scans of double against a float64 reference with an n-aware tolerance.
#include "scan/scan_test_common.cuh"

namespace {

using double_case = scanlab::test::scan::float_case<double>;

SCANLAB_SCAN_TESTS(scan_double, double_case)

}  // namespace
