// Scans of int32 (sums): the production path, every ladder variant, the block- and
// warp-level scans, the stress test, and the API contract (bad arguments).
#include "scan/scan_test_common.cuh"

namespace {

using scanlab::test::scan::int32_case;

SCANLAB_SCAN_TESTS(scan_int32, int32_case)

TEST_F(scan_int32, BlockAndWarp) { scanlab::test::scan::block_and_warp_test<int32_case>(); }

TEST_F(scan_int32, Stress) { scanlab::test::scan::stress_test<int32_case>(10); }

TEST_F(scan_int32, ApiContract) {
  using scanlab::device_buffer;
  const scanlab::plus op{};
  const std::int32_t* no_input = nullptr;
  std::int32_t* no_output = nullptr;

  // Negative counts are refused, by the production path and the ladder.
  std::size_t bytes = 0;
  EXPECT_EQ(scanlab::inclusive_scan(nullptr, bytes, no_input, no_output, -1, op), cudaErrorInvalidValue);
  EXPECT_EQ(scanlab::exclusive_scan(nullptr, bytes, no_input, no_output, -1, 0, op), cudaErrorInvalidValue);
  for (const auto variant : scanlab::ladder::scan_variants) {
    EXPECT_EQ(scanlab::ladder::scan(variant, scanlab::ladder::scan_kind::inclusive, nullptr, bytes, no_input,
                                    no_output, -1, 0, op),
              cudaErrorInvalidValue)
        << scanlab::ladder::variant_name(variant);
  }

  // n = 0: a non-zero temp size, success, nothing written.
  bytes = 0;
  ASSERT_EQ(scanlab::inclusive_scan(nullptr, bytes, no_input, no_output, 0, op), cudaSuccess);
  EXPECT_GE(bytes, 1u);
  device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
  device_buffer<std::int32_t> out(4);
  out.fill_bytes(0x11);
  EXPECT_EQ(scanlab::inclusive_scan(temp.data(), bytes, no_input, out.data(), 0, op), cudaSuccess);
  EXPECT_EQ(scanlab::exclusive_scan(temp.data(), bytes, no_input, out.data(), 0, 5, op), cudaSuccess);
  SCANLAB_CHECK(cudaDeviceSynchronize());
  for (const std::int32_t v : out.to_host()) EXPECT_EQ(v, 0x11111111);

  // Too little temp storage is refused; the size depends on n only.
  const std::int64_t n = 1 << 20;
  device_buffer<std::int32_t> data(n);
  std::size_t needed = 0;
  ASSERT_EQ(scanlab::inclusive_scan(nullptr, needed, data.data(), data.data(), n, op), cudaSuccess);
  std::size_t needed_exclusive = 0;
  ASSERT_EQ(scanlab::exclusive_scan(nullptr, needed_exclusive, data.data(), data.data(), n, 0, op), cudaSuccess);
  EXPECT_EQ(needed, needed_exclusive);
  device_buffer<unsigned char> small(static_cast<std::int64_t>(needed));
  std::size_t too_few = needed - 1;
  EXPECT_EQ(scanlab::inclusive_scan(small.data(), too_few, data.data(), data.data(), n, op), cudaErrorInvalidValue);

  // Ladder: the naive scan's limit, block sizes.
  const auto inclusive = scanlab::ladder::scan_kind::inclusive;
  EXPECT_EQ(scanlab::ladder::scan(scanlab::ladder::scan_variant::naive, inclusive, nullptr, bytes, no_input, no_output,
                                  scanlab::ladder::naive_scan_max_items + 1, 0, op),
            cudaErrorInvalidValue);
  for (const int threads : {0, 16, 96, 2048}) {
    EXPECT_EQ(scanlab::ladder::scan(scanlab::ladder::scan_variant::kogge_stone, inclusive, nullptr, bytes, no_input,
                                    no_output, 100, 0, op, nullptr, threads),
              cudaErrorInvalidValue)
        << threads << " threads";
  }
  std::size_t ladder_bytes = 0;
  ASSERT_EQ(scanlab::ladder::scan(scanlab::ladder::scan_variant::brent_kung, inclusive, nullptr, ladder_bytes,
                                  data.data(), data.data(), n, 0, op),
            cudaSuccess);
  device_buffer<unsigned char> ladder_temp(static_cast<std::int64_t>(ladder_bytes));
  std::size_t ladder_too_few = ladder_bytes - 1;
  EXPECT_EQ(scanlab::ladder::scan(scanlab::ladder::scan_variant::brent_kung, inclusive, ladder_temp.data(),
                                  ladder_too_few, data.data(), data.data(), n, 0, op),
            cudaErrorInvalidValue);

  // The variant table is in ladder order and round-trips through names.
  ASSERT_EQ(scanlab::ladder::scan_variants.size(), scanlab::ladder::scan_variant_names.size());
  for (std::size_t i = 0; i < scanlab::ladder::scan_variants.size(); ++i) {
    scanlab::ladder::scan_variant parsed{};
    ASSERT_TRUE(scanlab::ladder::parse_variant(scanlab::ladder::scan_variant_names[i], parsed));
    EXPECT_EQ(parsed, scanlab::ladder::scan_variants[i]);
  }
  scanlab::ladder::scan_variant unused{};
  EXPECT_FALSE(scanlab::ladder::parse_variant("no-such-variant", unused));
}

}  // namespace
