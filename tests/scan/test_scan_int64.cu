// Scans of int64, a fancy-iterator input, and a scan of 2^31 + 1000 counting items
// (17 GB of output) checked against the closed form on the GPU.
#include "scan/scan_test_common.cuh"

namespace {

using scanlab::test::scan::int64_case;

SCANLAB_SCAN_TESTS(scan_int64, int64_case)

// init + 0 + 1 + ... + (i - 1 + inclusive), for a counting input starting at 0.
struct triangular {
  std::int64_t init;
  bool inclusive;
  __device__ std::int64_t operator()(std::int64_t i) const {
    const std::int64_t last = inclusive ? i : i - 1;
    return init + last * (last + 1) / 2;
  }
};

TEST_F(scan_int64, CountingIteratorInput) {
  using scanlab::test::scan::resident_blocks;
  using scanlab::test::scan::tile_of;
  const std::int64_t n = resident_blocks<int64_case>() * tile_of<int64_case>() + 5;
  std::vector<std::int64_t> h_in(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) h_in[static_cast<std::size_t>(i)] = 3 + i;
  scanlab::device_buffer<std::int64_t> out(n);
  for (const bool exclusive : {false, true}) {
    const auto got =
        scanlab::test::scan::run_production<int64_case>(scanlab::counting_iterator<std::int64_t>(3), out.data(), n,
                                                        exclusive);
    ASSERT_TRUE(scanlab::test::scan::check_scan<int64_case>(h_in, got, exclusive))
        << (exclusive ? "exclusive" : "inclusive");
  }
}

TEST_F(scan_int64, LargeCountingPast2To31) {
  const std::int64_t n = (std::int64_t{1} << 31) + 1000;
  if (!scanlab::test::scan::enough_device_memory(static_cast<std::size_t>(n) * sizeof(std::int64_t))) {
    GTEST_SKIP() << "needs about 18 GB of free GPU memory";
  }
  scanlab::device_buffer<std::int64_t> out(n);
  const scanlab::counting_iterator<std::int64_t> in(0);
  for (const bool exclusive : {false, true}) {
    std::size_t bytes = 0;
    const auto call = [&](void* temp) {
      return exclusive ? scanlab::exclusive_sum(temp, bytes, in, out.data(), n)
                       : scanlab::inclusive_sum(temp, bytes, in, out.data(), n);
    };
    SCANLAB_CHECK(call(nullptr));
    scanlab::device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
    temp.fill_bytes(0xff);
    SCANLAB_CHECK(call(temp.data()));
    SCANLAB_CHECK(cudaDeviceSynchronize());
    EXPECT_EQ(scanlab::test::scan::count_mismatches(out.data(), n, triangular{0, !exclusive}), 0u)
        << (exclusive ? "exclusive" : "inclusive");
  }
}

}  // namespace
