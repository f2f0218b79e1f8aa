// Reductions over small custom structs with their own operators: min_max (8 bytes,
// vector-loadable when 8-byte aligned) and vec3i (12 bytes: always the scalar path).
#include "reduce/reduce_test_common.cuh"

#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace scanlab::test::reduce {

using custom_types = ::testing::Types<min_max, vec3i>;
INSTANTIATE_TYPED_TEST_SUITE_P(custom, reduce_typed, custom_types);

namespace {

// The reductions regroup and reorder: the operators must be associative and commutative.
TEST(reduce_custom_operators, AssociativeAndCommutativeOnRandomTriples) {
  const auto seed = test_seed() + 8;
  SCOPED_TRACE(seed_trace(seed));
  const auto a = traits<min_max>::data(1000, seed), b = traits<min_max>::data(1000, seed + 1),
             c = traits<min_max>::data(1000, seed + 2);
  const auto x = traits<vec3i>::data(1000, seed), y = traits<vec3i>::data(1000, seed + 1),
             z = traits<vec3i>::data(1000, seed + 2);
  const min_max_op mm;
  const vec3i_plus vp;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(mm(mm(a[i], b[i]), c[i]), mm(a[i], mm(b[i], c[i])));
    ASSERT_EQ(mm(a[i], b[i]), mm(b[i], a[i]));
    ASSERT_EQ(mm(a[i], traits<min_max>::identity()), a[i]);
    ASSERT_EQ(vp(vp(x[i], y[i]), z[i]), vp(x[i], vp(y[i], z[i])));
    ASSERT_EQ(vp(x[i], y[i]), vp(y[i], x[i]));
    ASSERT_EQ(vp(x[i], traits<vec3i>::identity()), x[i]);
  }
}

class reduce_custom : public gpu_test {};

// A min_max* that is 4-byte aligned but not 8-byte aligned is legal (alignof is 4)
// yet cannot be split into 16-byte vectors: the production path must take its
// scalar path for it.
TEST_F(reduce_custom, UnderalignedStructPointerTakesScalarPath) {
  const auto seed = test_seed() + 9;
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t n = (std::int64_t{1} << 20) + 7;
  const auto host = traits<min_max>::data(n, seed);
  device_buffer<std::int32_t> raw(2 * n + 2);
  auto* d_in = reinterpret_cast<min_max*>(raw.data() + 1);  // 4 bytes past a 256-byte boundary
  SCANLAB_CHECK(cudaMemcpy(d_in, host.data(), host.size() * sizeof(min_max), cudaMemcpyHostToDevice));
  for (std::int64_t m : {std::int64_t{1}, std::int64_t{3}, production_tile<min_max>() + 1, n}) {
    const std::span<const min_max> view(host.data(), static_cast<std::size_t>(m));
    const min_max got = run_reduce(static_cast<const min_max*>(d_in), m, traits<min_max>::init(), min_max_op{});
    expect_matches_cpu(got, view, traits<min_max>::init(), min_max_op{}, at(m));
  }
}

}  // namespace
}  // namespace scanlab::test::reduce
