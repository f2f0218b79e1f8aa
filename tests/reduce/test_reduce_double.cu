// Reductions over double: the typed suite (reduce_test_common.cuh).
#include "reduce/reduce_test_common.cuh"

#include <cstdint>

namespace scanlab::test::reduce {

INSTANTIATE_TYPED_TEST_SUITE_P(double, reduce_typed, ::testing::Types<double>);

}  // namespace scanlab::test::reduce
