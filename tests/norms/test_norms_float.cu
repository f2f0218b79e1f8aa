// Norms of float data, accumulated in float and in double: the typed suite, and the
// accuracy comparison with cuBLAS on 2^26 values; and tree_fold against tree_reduce on
// the device.
#include "norms/norms_test_common.cuh"

#include <cstdint>

namespace scanlab::test::norms {

using float_configs = ::testing::Types<config<float, float>, config<float, double>>;
INSTANTIATE_TYPED_TEST_SUITE_P(float, norms_typed, float_configs);

namespace {

class norms_float : public gpu_test {};

// The unit shortcut of the scaled sum of squares promises the bits of the engine's tree,
// which is detail::tree_reduce (device-only); the shortcut uses tree_fold, its host-and-
// device rendering. Here both run on the device, on an operator that neither commutes nor
// associates, for the unit widths that occur (1, 2, 4, 8, 16 items) and a few others.
struct order_sensitive {
  __host__ __device__ std::uint64_t operator()(std::uint64_t a, std::uint64_t b) const { return a * 1000003u + b + 7; }
};

template <int N>
__device__ void compare_trees(std::uint64_t* out) {
  std::uint64_t a[N], b[N];
  for (int i = 0; i < N; ++i) a[i] = b[i] = 0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(i + 1);
  out[2 * (N - 1)] = scanlab::detail::tree_reduce(a, order_sensitive{});
  out[2 * (N - 1) + 1] = scanlab::detail::norms::tree_fold<N>(b, order_sensitive{});
}

__global__ void tree_orders(std::uint64_t* out) {
  compare_trees<1>(out);
  compare_trees<2>(out);
  compare_trees<3>(out);
  compare_trees<4>(out);
  compare_trees<5>(out);
  compare_trees<8>(out);
  compare_trees<13>(out);
  compare_trees<16>(out);
}

TEST_F(norms_float, TreeFoldIsTreeReduceOnTheDevice) {
  device_buffer<std::uint64_t> out(32);
  out.fill_bytes(0);
  tree_orders<<<1, 1>>>(out.data());
  SCANLAB_CHECK(cudaGetLastError());
  SCANLAB_CHECK(cudaDeviceSynchronize());
  const auto h = out.to_host();
  for (const int n : {1, 2, 3, 4, 5, 8, 13, 16}) {
    const auto k = static_cast<std::size_t>(2 * (n - 1));
    EXPECT_EQ(h[k], h[k + 1]) << "N = " << n;
    EXPECT_NE(h[k], 0u) << "N = " << n;
  }
}

TEST_F(norms_float, AccuracyVsCublasLarge) {
  const auto seed = test_seed() + 11;
  SCOPED_TRACE(seed_trace(seed));
  compare_accuracy_with_cublas<float, float>(std::int64_t{1} << 26, seed);
  compare_accuracy_with_cublas<float, double>(std::int64_t{1} << 26, seed);
}

}  // namespace
}  // namespace scanlab::test::norms
