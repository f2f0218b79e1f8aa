// Stream compaction past 2^31 and 2^32 items, on counting inputs (no input buffer) with
// closed-form answers checked on the GPU. Past 2^32 items the production path runs in
// chunks (one launch each) that hand the 64-bit running total on through temp storage;
// these tests cross a chunk boundary with more than 2^32 items kept before it ends.
// Each needs several GB of GPU memory and skips (not fails) without it.
#include "compact/compact_test_common.cuh"

using namespace scanlab::test::compact;

namespace {

// Drops the bytes equal to 7: 255 of every 256 consecutive counting bytes are kept.
struct not_seven {
  __host__ __device__ bool operator()(std::uint8_t x) const { return x != 7; }
};
// The j-th kept byte of counting_iterator<uint8_t>(0) under not_seven.
struct kept_byte {
  __device__ std::uint8_t operator()(std::int64_t j) const {
    std::int64_t r = j % 255;
    if (r >= 7) ++r;
    return static_cast<std::uint8_t>((j / 255) * 256 + r);
  }
};
std::int64_t kept_bytes(std::int64_t n) { return n - (n / 256 + (n % 256 > 7 ? 1 : 0)); }

// i / 3: runs of three equal keys; unique keeps 0, 1, 2, ...
struct third {
  __host__ __device__ std::int64_t operator()(std::int64_t i) const { return i / 3; }
};
struct identity_index {
  __device__ std::int64_t operator()(std::int64_t j) const { return j; }
};

class compact_large : public scanlab::test::gpu_test {};

TEST_F(compact_large, LargeSelectIfPast2To32Kept) {
  const std::int64_t n = (std::int64_t{1} << 32) + (std::int64_t{1} << 25) + 77;
  if (!enough_device_memory(static_cast<std::size_t>(n))) GTEST_SKIP() << "needs about 6 GB of free GPU memory";
  const scanlab::counting_iterator<std::uint8_t> in(0);
  scanlab::device_buffer<std::uint8_t> out(n);
  scanlab::device_buffer<std::int64_t> count(1);
  const std::int64_t kept = run_two_phase(
      [&](void* temp, std::size_t& bytes) {
        return scanlab::select_if(temp, bytes, in, out.data(), count.data(), n, not_seven{});
      },
      count.data());
  ASSERT_EQ(kept, kept_bytes(n));
  EXPECT_EQ(count_mismatches(out.data(), kept, kept_byte{}), 0u);
}

TEST_F(compact_large, LargeThreePhasePast2To31) {
  const std::int64_t n = (std::int64_t{1} << 31) + 4097;
  if (!enough_device_memory(static_cast<std::size_t>(n) * 10)) GTEST_SKIP() << "needs about 23 GB of free GPU memory";
  const scanlab::counting_iterator<std::uint8_t> in(0);
  scanlab::device_buffer<std::uint8_t> out(n);
  scanlab::device_buffer<std::int64_t> count(1);
  const std::int64_t kept = run_two_phase(
      [&](void* temp, std::size_t& bytes) {
        return scanlab::three_phase::select_if(temp, bytes, in, out.data(), count.data(), n, not_seven{});
      },
      count.data());
  ASSERT_EQ(kept, kept_bytes(n));
  EXPECT_EQ(count_mismatches(out.data(), kept, kept_byte{}), 0u);
}

TEST_F(compact_large, LargeUniqueAcrossChunks) {
  const std::int64_t n = (std::int64_t{1} << 32) + 3 * 4097 + 1;
  const std::int64_t expected = (n + 2) / 3;
  if (!enough_device_memory(static_cast<std::size_t>(expected) * 8)) {
    GTEST_SKIP() << "needs about 13 GB of free GPU memory";
  }
  const scanlab::transform_iterator<scanlab::counting_iterator<std::int64_t>, third> in(
      scanlab::counting_iterator<std::int64_t>(0), third{});
  scanlab::device_buffer<std::int64_t> out(expected);
  scanlab::device_buffer<std::int64_t> count(1);
  const std::int64_t kept = run_two_phase(
      [&](void* temp, std::size_t& bytes) { return scanlab::unique(temp, bytes, in, out.data(), count.data(), n); },
      count.data());
  ASSERT_EQ(kept, expected);
  EXPECT_EQ(count_mismatches(out.data(), kept, identity_index{}), 0u);
}

}  // namespace
