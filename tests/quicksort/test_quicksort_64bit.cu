// Quicksort of the 8-byte key types, std::int64_t and double (bodies in
// quicksort_test_common.cuh, each type instantiated here only).
#include "quicksort/quicksort_test_common.cuh"

namespace {
SCANLAB_QUICKSORT_TESTS(quicksort_int64, std::int64_t)
SCANLAB_QUICKSORT_TESTS(quicksort_double, double)
}  // namespace
