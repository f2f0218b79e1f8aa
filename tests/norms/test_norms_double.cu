// Norms of double data: the typed suite, and the accuracy comparison with cuBLAS on 2^26
// values; and the engine's zip and with_epilogue on exact integer data.
#include "norms/norms_test_common.cuh"

#include <cstdint>
#include <utility>
#include <vector>

namespace scanlab::test::norms {

using double_configs = ::testing::Types<config<double, double>>;
INSTANTIATE_TYPED_TEST_SUITE_P(double, norms_typed, double_configs);

namespace {

class norms_double : public gpu_test {};

// The engine's pieces the norms are built from, with exact integer arithmetic:
// zip(x, y) read side by side (both arrays at the same alignment: 16-byte vectors of
// each; at different alignments: the scalar path) and with_epilogue (a final step in the
// writing thread), at the sizes where the engine changes launch.
struct product_i64 {
  __host__ __device__ std::int64_t operator()(const scanlab::zip_item<std::int32_t>& p) const {
    return std::int64_t{p.x} * p.y;
  }
};
struct times_three_plus_one {
  __host__ __device__ std::int64_t operator()(std::int64_t total) const { return 3 * total + 1; }
};

TEST_F(norms_double, ZipAndEpilogueThroughTheEngine) {
  const auto seed = test_seed() + 13;
  SCOPED_TRACE(seed_trace(seed));
  std::vector<std::int64_t> sizes = {0, 1, 2, 3, 5, 100000, (std::int64_t{1} << 20) + 3};
  for (const std::int64_t b : launch_boundaries<std::int32_t>()) {
    for (const std::int64_t d : {-1, 0, 1}) sizes.push_back(b + d);
  }
  for (const std::int64_t n : capped(sizes)) {
    const auto x = random_values<std::int32_t>(n + 4, seed + static_cast<std::uint64_t>(n));  // [-100, 100]
    const auto y = random_values<std::int32_t>(n + 4, seed + static_cast<std::uint64_t>(n) + 1);
    device_buffer<std::int32_t> dx{std::span<const std::int32_t>(x)}, dy{std::span<const std::int32_t>(y)};
    for (const auto& [ox, oy] : {std::pair{0, 0}, std::pair{1, 1}, std::pair{3, 3}, std::pair{1, 0}, std::pair{0, 2}}) {
      std::int64_t want = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        want += std::int64_t{x[static_cast<std::size_t>(i + ox)]} * y[static_cast<std::size_t>(i + oy)];
      }
      const auto in = scanlab::zip(static_cast<const std::int32_t*>(dx.data()) + ox,
                                   static_cast<const std::int32_t*>(dy.data()) + oy);
      device_buffer<std::int64_t> out(2);
      out.fill_bytes(0xab);
      const auto dest = scanlab::with_epilogue(out.data() + 1, times_three_plus_one{});
      std::size_t bytes = 0;
      SCANLAB_CHECK(scanlab::transform_reduce(nullptr, bytes, in, dest, n, std::int64_t{0}, scanlab::plus{},
                                              product_i64{}));
      device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
      temp.fill_bytes(0xcd);
      SCANLAB_CHECK(scanlab::transform_reduce(temp.data(), bytes, in, dest, n, std::int64_t{0}, scanlab::plus{},
                                              product_i64{}));
      SCANLAB_CHECK(cudaDeviceSynchronize());
      const auto h = out.to_host();
      EXPECT_EQ(h[1], 3 * want + 1) << "n = " << n << ", offsets " << ox << "/" << oy;
      EXPECT_EQ(h[0], static_cast<std::int64_t>(0xababababababababull)) << "wrote outside *d_out, n = " << n;
    }
  }
}

TEST_F(norms_double, AccuracyVsCublasLarge) {
  const auto seed = test_seed() + 12;
  SCOPED_TRACE(seed_trace(seed));
  compare_accuracy_with_cublas<double, double>(std::int64_t{1} << 26, seed);
}

}  // namespace
}  // namespace scanlab::test::norms
