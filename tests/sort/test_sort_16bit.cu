// Radix sort of 16-bit keys (uint16, int16).
#include "sort/sort_test_common.cuh"

namespace {

SCANLAB_SORT_TESTS(sort_uint16, std::uint16_t)
SCANLAB_SORT_TESTS(sort_int16, std::int16_t)

}  // namespace
