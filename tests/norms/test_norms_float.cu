// Norms of float data, accumulated in float and in double: the typed suite, and the
// accuracy comparison with cuBLAS on 2^26 values.
#include "norms/norms_test_common.cuh"

namespace scanlab::test::norms {

using float_configs = ::testing::Types<config<float, float>, config<float, double>>;
INSTANTIATE_TYPED_TEST_SUITE_P(float, norms_typed, float_configs);

namespace {

class norms_float : public gpu_test {};

TEST_F(norms_float, AccuracyVsCublasLarge) {
  const auto seed = test_seed() + 11;
  SCOPED_TRACE(seed_trace(seed));
  compare_accuracy_with_cublas<float, float>(std::int64_t{1} << 26, seed);
  compare_accuracy_with_cublas<float, double>(std::int64_t{1} << 26, seed);
}

}  // namespace
}  // namespace scanlab::test::norms
