// Scans of uint32 (sums wrapping mod 2^32), and scans past 2^31 items (production and
// every ladder variant but the naive one) with a closed-form answer checked on the GPU.
#include "scan/scan_test_common.cuh"

namespace {

using scanlab::test::scan::uint32_case;

SCANLAB_SCAN_TESTS(scan_uint32, uint32_case)

constexpr std::int64_t large_n = (std::int64_t{1} << 31) + 4097;  // past 2^31; i + 1 still fits in uint32

// A scan of ones: inclusive item i is i + 1, exclusive (seeded with `init`) is init + i.
struct ones_scan {
  std::uint32_t offset;
  __device__ std::uint32_t operator()(std::int64_t i) const { return static_cast<std::uint32_t>(i) + offset; }
};

class scan_uint32_large : public scanlab::test::gpu_test {
 protected:
  void SetUp() override {
    scanlab::test::gpu_test::SetUp();
    if (IsSkipped()) return;
    if (!scanlab::test::scan::enough_device_memory(2 * static_cast<std::size_t>(large_n) * sizeof(std::uint32_t))) {
      GTEST_SKIP() << "needs about 18 GB of free GPU memory";
    }
    in_ = scanlab::device_buffer<std::uint32_t>(large_n);
    out_ = scanlab::device_buffer<std::uint32_t>(large_n);
    scanlab::test::scan::fill_kernel<<<1024, 256>>>(in_.data(), large_n, 1u);
    SCANLAB_CHECK_LAUNCH();
  }
  scanlab::device_buffer<std::uint32_t> in_;
  scanlab::device_buffer<std::uint32_t> out_;
};

TEST_F(scan_uint32_large, LargeProduction) {
  const std::uint32_t* in = in_.data();
  for (const bool exclusive : {false, true}) {
    std::size_t bytes = 0;
    const auto call = [&](void* temp) {
      return exclusive ? scanlab::exclusive_scan(temp, bytes, in, out_.data(), large_n, 5u, scanlab::plus{})
                       : scanlab::inclusive_scan(temp, bytes, in, out_.data(), large_n, scanlab::plus{});
    };
    SCANLAB_CHECK(call(nullptr));
    scanlab::device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
    temp.fill_bytes(0xff);
    SCANLAB_CHECK(call(temp.data()));
    SCANLAB_CHECK(cudaDeviceSynchronize());
    EXPECT_EQ(scanlab::test::scan::count_mismatches(out_.data(), large_n, ones_scan{exclusive ? 5u : 1u}), 0u)
        << (exclusive ? "exclusive" : "inclusive");
  }
}

TEST_F(scan_uint32_large, LargeLadder) {
  for (const auto variant : scanlab::ladder::scan_variants) {
    if (variant == scanlab::ladder::scan_variant::naive) continue;
    for (const bool exclusive : {false, true}) {
      SCOPED_TRACE(std::string(scanlab::ladder::variant_name(variant)) + (exclusive ? " exclusive" : " inclusive"));
      const auto kind = exclusive ? scanlab::ladder::scan_kind::exclusive : scanlab::ladder::scan_kind::inclusive;
      std::size_t bytes = 0;
      SCANLAB_CHECK(scanlab::ladder::scan(variant, kind, nullptr, bytes, static_cast<const std::uint32_t*>(in_.data()),
                                          out_.data(), large_n, 5u, scanlab::plus{}));
      scanlab::device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
      temp.fill_bytes(0xff);
      out_.fill_bytes(0xab);
      SCANLAB_CHECK(scanlab::ladder::scan(variant, kind, temp.data(), bytes,
                                          static_cast<const std::uint32_t*>(in_.data()), out_.data(), large_n, 5u,
                                          scanlab::plus{}));
      SCANLAB_CHECK(cudaDeviceSynchronize());
      EXPECT_EQ(scanlab::test::scan::count_mismatches(out_.data(), large_n, ones_scan{exclusive ? 5u : 1u}), 0u);
    }
  }
}

}  // namespace
