// Norms of double data: the typed suite, and the accuracy comparison with cuBLAS on 2^26 values.
#include "norms/norms_test_common.cuh"

namespace scanlab::test::norms {

using double_configs = ::testing::Types<config<double, double>>;
INSTANTIATE_TYPED_TEST_SUITE_P(double, norms_typed, double_configs);

namespace {

class norms_double : public gpu_test {};

TEST_F(norms_double, AccuracyVsCublasLarge) {
  const auto seed = test_seed() + 12;
  SCOPED_TRACE(seed_trace(seed));
  compare_accuracy_with_cublas<double, double>(std::int64_t{1} << 26, seed);
}

}  // namespace
}  // namespace scanlab::test::norms
