// GPU smoke tests: the device buffer round trip, the harness timing a copy (samples, clocks)
// and the read-only ceiling.
#include "common/bench.hpp"
#include "common/device_buffer.hpp"
#include "common/gpu_test.hpp"
#include "common/test_util.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace {

using scanlab::test::gpu_test;

__global__ void add_one_kernel(std::int32_t* data, std::int64_t n) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) data[i] += 1;
}

TEST_F(gpu_test, DeviceBufferRoundTrip) {
  const auto seed = scanlab::test::test_seed();
  SCOPED_TRACE(scanlab::test::seed_trace(seed));
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{1000}, std::int64_t{1} << 20}) {
    const auto host = scanlab::test::random_values<std::int32_t>(n, seed);
    scanlab::device_buffer<std::int32_t> buffer{std::span<const std::int32_t>(host)};
    ASSERT_EQ(buffer.size(), n);
    if (n > 0) {
      add_one_kernel<<<static_cast<unsigned>((n + 255) / 256), 256>>>(buffer.data(), n);
      SCANLAB_CHECK_LAUNCH();
    }
    const auto back = buffer.to_host();
    ASSERT_EQ(back.size(), host.size());
    for (std::size_t i = 0; i < host.size(); ++i) ASSERT_EQ(back[i], host[i] + 1) << "at " << i;
  }
}

TEST_F(gpu_test, DeliberateApiErrorBadLaunchThrows) {
  // 2048 threads per block is over every GPU's limit: the launch fails and the check throws.
  add_one_kernel<<<1, 2048>>>(nullptr, 0);
  EXPECT_THROW(SCANLAB_CHECK_LAUNCH(), scanlab::cuda_error);
}

TEST_F(gpu_test, HarnessTimesACopy) {
  const std::int64_t n = std::int64_t{1} << 24;  // 64 MiB
  scanlab::device_buffer<std::int32_t> src(n), dst(n);
  src.fill_bytes(0x5a);
  dst.fill_bytes(0);
  scanlab::bench::harness harness({.warmup = 2, .repeat = 10});
  const auto t = harness.time([&](cudaStream_t stream) {
    SCANLAB_CHECK(cudaMemcpyAsync(dst.data(), src.data(), src.bytes(), cudaMemcpyDeviceToDevice, stream));
  });
  EXPECT_EQ(t.runs, 10);
  EXPECT_GT(t.median_ms, 0.0);
  EXPECT_LE(t.min_ms, t.median_ms);
  EXPECT_LE(t.median_ms, t.max_ms);
  // A 128 MiB read+write cannot finish in under 10 microseconds on any GPU: the timer measured the copy.
  EXPECT_GT(t.median_ms, 0.01);
  const auto back = dst.to_host();
  EXPECT_EQ(back.front(), 0x5a5a5a5a);
  EXPECT_EQ(back.back(), 0x5a5a5a5a);
  EXPECT_GT(harness.memcpy_gbps(), 10.0);
  // Every run is kept; the statistics are theirs.
  ASSERT_EQ(t.samples_ms.size(), 10U);
  EXPECT_EQ(t.min_ms, *std::min_element(t.samples_ms.begin(), t.samples_ms.end()));
  EXPECT_GE(t.noise, 0.0);
  EXPECT_EQ(t.warmup, 2);
  EXPECT_TRUE(t.flush_l2);
  // NVML, where the driver has it: one reading per run, clocks above zero.
  if (scanlab::clocks::nvml_available()) {
    EXPECT_EQ(t.clocks.samples.size(), 10U);
    EXPECT_GT(t.clocks.samples.front().sm_mhz, 0U);
    EXPECT_TRUE(scanlab::clocks::driver_version().has_value());
  } else {
    EXPECT_TRUE(t.clocks.samples.empty());
  }
}

TEST_F(gpu_test, ReadCeilingIsMeasured) {
  scanlab::bench::harness harness({.warmup = 1, .repeat = 10});
  const double read = harness.read_gbps();
  const double copy = harness.memcpy_gbps();
  EXPECT_GT(read, 10.0);
  // Reading alone is never slower than a copy that also writes, by more than the noise.
  EXPECT_GT(read, 0.8 * copy);
  EXPECT_EQ(harness.read_gbps(), read);  // measured once per process
}

}  // namespace
