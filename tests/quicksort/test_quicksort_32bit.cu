// Quicksort of the 4-byte key types, std::int32_t, std::uint32_t and float (bodies in
// quicksort_test_common.cuh, each type instantiated here only).
#include "quicksort/quicksort_test_common.cuh"

namespace {
SCANLAB_QUICKSORT_TESTS(quicksort_int32, std::int32_t)
SCANLAB_QUICKSORT_TESTS(quicksort_uint32, std::uint32_t)
SCANLAB_QUICKSORT_TESTS(quicksort_float, float)
}  // namespace
