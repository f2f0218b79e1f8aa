// Reductions over float: the typed suite, and bitwise run-to-run determinism of the
// production path.
#include "reduce/reduce_test_common.cuh"

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace scanlab::test::reduce {

INSTANTIATE_TYPED_TEST_SUITE_P(float, reduce_typed, ::testing::Types<float>);

namespace {

class reduce_float : public gpu_test {};

std::uint32_t bits_of(float x) {
  std::uint32_t b = 0;
  std::memcpy(&b, &x, sizeof(b));
  return b;
}

// The same input gives the same bits on every run, whatever garbage the temp storage
// starts with: 5 runs on 2^24 random floats (and a few other sizes and alignments).
TEST_F(reduce_float, ProductionDeterministicBits) {
  const auto seed = test_seed() + 7;
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t n = std::int64_t{1} << 24;
  const auto host = random_values<float>(n + 1, seed);
  device_buffer<float> d_in{std::span<const float>(host)};
  struct shape {
    std::int64_t offset, n;
  };
  for (const shape s : {shape{0, n}, shape{1, n}, shape{0, (std::int64_t{1} << 20) + 3}, shape{3, 5000}}) {
    const float* in = d_in.data() + s.offset;
    const float first = run_reduce(in, s.n, 0.0f, scanlab::plus{}, 0x00);
    for (int run = 1; run < 5; ++run) {
      const float again = run_reduce(in, s.n, 0.0f, scanlab::plus{}, 0x11 * run + 0x40);
      EXPECT_EQ(bits_of(again), bits_of(first))
          << "run " << run << ", n = " << s.n << ", offset " << s.offset << ": " << again << " vs " << first;
    }
    const std::span<const float> view(host.data() + s.offset, static_cast<std::size_t>(s.n));
    expect_matches_cpu(first, view, 0.0f, scanlab::plus{}, at(s.n));
  }
}

}  // namespace
}  // namespace scanlab::test::reduce
