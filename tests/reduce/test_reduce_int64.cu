// Reductions over int64: the typed suite; iterator inputs (counting, transform) with
// closed-form answers; and counts past 2^31 (tests named *Large*, skipped by the
// sanitizer run).
#include "reduce/reduce_test_common.cuh"

#include <cstdint>
#include <span>
#include <vector>

namespace scanlab::test::reduce {

INSTANTIATE_TYPED_TEST_SUITE_P(int64, reduce_typed, ::testing::Types<std::int64_t>);

namespace {

class reduce_int64 : public gpu_test {};

// Sum of i over [0, n).
std::int64_t triangle(std::int64_t n) { return n % 2 == 0 ? (n / 2) * (n - 1) : n * ((n - 1) / 2); }

struct low_bits {
  __host__ __device__ std::int64_t operator()(std::int64_t i) const { return i & 1023; }
};

// Iterator inputs take the scalar path: counting_iterator sums and a transform_iterator.
TEST_F(reduce_int64, IteratorInputs) {
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{100}, std::int64_t{4095}, std::int64_t{4096},
                         std::int64_t{4097}, std::int64_t{1} << 20, (std::int64_t{1} << 24) + 11}) {
    const scanlab::counting_iterator<std::int64_t> first(0);
    EXPECT_EQ(run_reduce(first, n, std::int64_t{0}, scanlab::plus{}), triangle(n)) << at(n);
    EXPECT_EQ(run_reduce(first, n, std::int64_t{-5}, scanlab::maximum{}), n > 0 ? n - 1 : -5) << at(n);
    // Sum of (i mod 1024): whole periods of 0 + ... + 1023, plus a partial one.
    const scanlab::transform_iterator<scanlab::counting_iterator<std::int64_t>, low_bits> masked(first, low_bits{});
    const std::int64_t expected = (n / 1024) * triangle(1024) + triangle(n % 1024);
    EXPECT_EQ(run_reduce(masked, n, std::int64_t{0}, scanlab::plus{}), expected) << at(n) << ", transform_iterator";
  }
}

// Segmented reduction over a counting iterator with int32 offsets.
TEST_F(reduce_int64, SegmentedCountingInput) {
  const std::vector<std::int32_t> offsets = {0, 10, 10, 5000, 5001, 300000};
  device_buffer<std::int32_t> d_offsets{std::span<const std::int32_t>(offsets)};
  device_buffer<std::int64_t> d_out(5);
  std::size_t bytes = 0;
  const scanlab::counting_iterator<std::int64_t> first(0);
  SCANLAB_CHECK(scanlab::segmented_reduce(nullptr, bytes, first, d_out.data(), 5,
                                          static_cast<const std::int32_t*>(d_offsets.data()), std::int64_t{0},
                                          scanlab::plus{}));
  device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
  SCANLAB_CHECK(scanlab::segmented_reduce(temp.data(), bytes, first, d_out.data(), 5,
                                          static_cast<const std::int32_t*>(d_offsets.data()), std::int64_t{0},
                                          scanlab::plus{}));
  const auto got = d_out.to_host();
  for (std::size_t s = 0; s < 5; ++s) {
    EXPECT_EQ(got[s], triangle(offsets[s + 1]) - triangle(offsets[s])) << "segment " << s;
  }
}

// Past 2^31 elements: counting inputs with closed-form answers (production path).
TEST_F(reduce_int64, LargeCountingSums) {
  const std::int64_t n = (std::int64_t{1} << 31) + 12345;
  EXPECT_EQ(run_reduce(scanlab::counting_iterator<std::int64_t>(0), n, std::int64_t{0}, scanlab::plus{}), triangle(n));
  EXPECT_EQ(run_reduce(scanlab::counting_iterator<std::uint64_t>(1), n, std::uint64_t{0}, scanlab::plus{}),
            static_cast<std::uint64_t>(triangle(n + 1)));
  EXPECT_EQ(run_reduce(scanlab::counting_iterator<std::int64_t>(-7), n, std::int64_t{0}, scanlab::minimum{}), -7);
  EXPECT_EQ(run_reduce(scanlab::counting_iterator<std::int64_t>(0), n, std::int64_t{0}, scanlab::maximum{}), n - 1);
}

// Past 2^31 elements in a real buffer: 2^31 + 1 int8 values (2 GiB), all 1 except a
// -3 early and a 7 at the very last index. The production path sums them into an
// int64 (vector path, 16 items per load); every ladder rung finds the maximum (which
// needs the element at index 2^31); the atomic rung rejects int8.
TEST_F(reduce_int64, LargeInt8Buffer) {
  const std::int64_t n = (std::int64_t{1} << 31) + 1;
  device_buffer<std::int8_t> d_in(n);
  d_in.fill_bytes(1);
  const std::int8_t low = -3, high = 7;
  SCANLAB_CHECK(cudaMemcpy(d_in.data() + 5, &low, 1, cudaMemcpyHostToDevice));
  SCANLAB_CHECK(cudaMemcpy(d_in.data() + (n - 1), &high, 1, cudaMemcpyHostToDevice));
  const std::int8_t* in = d_in.data();

  EXPECT_EQ(run_reduce(in, n, std::int64_t{0}, scanlab::plus{}), (n - 2) + low + high);
  EXPECT_EQ(run_reduce(in + 1, n - 1, std::int64_t{0}, scanlab::plus{}), (n - 3) + low + high) << "offset 1";
  EXPECT_EQ(run_reduce(in, n, std::int8_t{0}, scanlab::maximum{}), high);
  EXPECT_EQ(run_reduce(in, n, std::int8_t{0}, scanlab::minimum{}), low);

  for (auto r : scanlab::ladder::all_rungs) {
    std::int8_t got = 0;
    const cudaError_t status =
        run_ladder(r, in, n, scanlab::identity<scanlab::maximum, std::int8_t>::value(), scanlab::maximum{}, 256, got);
    if (r == scanlab::ladder::rung::warp_shuffle_atomic) {
      EXPECT_EQ(status, cudaErrorNotSupported);
      continue;
    }
    ASSERT_EQ(status, cudaSuccess) << scanlab::ladder::rung_name(r) << ": " << cudaGetErrorString(status);
    EXPECT_EQ(got, high) << scanlab::ladder::rung_name(r);
  }
}

}  // namespace
}  // namespace scanlab::test::reduce
