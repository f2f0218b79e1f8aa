// Radix sort of 32-bit keys (uint32, int32, float), and the float special values.
#include "sort/sort_test_common.cuh"

namespace {

SCANLAB_SORT_TESTS(sort_uint32, std::uint32_t)
SCANLAB_SORT_TESTS(sort_int32, std::int32_t)
SCANLAB_SORT_TESTS(sort_float, float)
TEST_F(sort_float, FloatSpecials) { scanlab::test::sort::float_specials_test<float>(); }

}  // namespace
