// Reductions over std::int32_t: the typed suite (reduce_test_common.cuh).
#include "reduce/reduce_test_common.cuh"

#include <cstdint>

namespace scanlab::test::reduce {

INSTANTIATE_TYPED_TEST_SUITE_P(int32, reduce_typed, ::testing::Types<std::int32_t>);

}  // namespace scanlab::test::reduce
