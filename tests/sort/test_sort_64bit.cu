// Radix sort of 64-bit keys (uint64, int64, double), and the double special values.
#include "sort/sort_test_common.cuh"

namespace {

SCANLAB_SORT_TESTS(sort_uint64, std::uint64_t)
SCANLAB_SORT_TESTS(sort_int64, std::int64_t)
SCANLAB_SORT_TESTS(sort_double, double)
TEST_F(sort_double, FloatSpecials) { scanlab::test::sort::float_specials_test<double>(); }

}  // namespace
