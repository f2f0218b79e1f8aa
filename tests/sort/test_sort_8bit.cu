// Radix sort of 8-bit keys (uint8, int8), their counting sort (keys alone on all bits), and
// the tests past 2^31 keys (*Large*): 8-bit keys keep those within a few GB while every
// digit count and offset passes 2^31.
#include "sort/sort_test_common.cuh"

namespace {

SCANLAB_SORT_TESTS(sort_uint8, std::uint8_t)
SCANLAB_SORT_TESTS(sort_int8, std::int8_t)

// Keys alone on all 8 bits are a counting sort (radix_sort_onesweep.cuh: the counting fill,
// 16-byte stores where the output is aligned): outputs at every offset from 16-byte
// alignment, sizes around the 16-item chunks and a 4096-item block's share, both orders,
// few-valued and full-range keys, against std::sort; the input is left as it was.
template <class Key>
void counting_fill_test() {
  const std::uint64_t seed = scanlab::test::test_seed() + 21;
  SCOPED_TRACE(scanlab::test::seed_trace(seed));
  std::mt19937_64 rng(seed);
  for (const std::int64_t n : scanlab::test::capped({0, 1, 2, 15, 16, 17, 31, 33, 4095, 4096, 4097, 1000003})) {
    for (const int values : {3, 256}) {
      std::vector<Key> keys(static_cast<std::size_t>(n));
      for (auto& k : keys) k = static_cast<Key>(values == 256 ? rng() : rng() % 3 * 77);
      const scanlab::device_buffer<Key> d_keys{std::span<const Key>(keys)};
      scanlab::device_buffer<Key> d_out(n + 16);
      for (const bool descending : {false, true}) {
        std::vector<Key> want = keys;
        if (descending) std::sort(want.begin(), want.end(), std::greater<Key>());
        else std::sort(want.begin(), want.end());
        for (const int offset : {0, 1, 5, 15}) {
          SCOPED_TRACE("n " + std::to_string(n) + ", " + std::to_string(values) + " values, offset " +
                       std::to_string(offset) + (descending ? ", descending" : ""));
          scanlab::radix_sort_options o;
          o.descending = descending;
          std::size_t bytes = 0;
          SCANLAB_CHECK(scanlab::radix_sort_keys(nullptr, bytes, d_keys.data(), d_out.data() + offset, n, o));
          scanlab::device_buffer<unsigned char> temp(static_cast<std::int64_t>(std::max<std::size_t>(bytes, 1)));
          temp.fill_bytes(0xa5);
          d_out.fill_bytes(0x5a);
          SCANLAB_CHECK(scanlab::radix_sort_keys(temp.data(), bytes, d_keys.data(), d_out.data() + offset, n, o));
          SCANLAB_CHECK(cudaDeviceSynchronize());
          const std::vector<Key> out = d_out.to_host();
          ASSERT_TRUE(std::equal(want.begin(), want.end(), out.begin() + offset));
          // Nothing written around the output.
          for (int i = 0; i < offset; ++i) ASSERT_EQ(static_cast<unsigned char>(out[static_cast<std::size_t>(i)]), 0x5a);
          for (std::int64_t i = offset + n; i < n + 16; ++i) {
            ASSERT_EQ(static_cast<unsigned char>(out[static_cast<std::size_t>(i)]), 0x5a);
          }
        }
      }
      EXPECT_EQ(d_keys.to_host(), keys);
    }
  }
}

class sort_counting : public scanlab::test::gpu_test {};
TEST_F(sort_counting, Uint8KeysEveryAlignment) { counting_fill_test<std::uint8_t>(); }
TEST_F(sort_counting, Int8KeysEveryAlignment) { counting_fill_test<std::int8_t>(); }

constexpr std::int64_t large_n = (std::int64_t{1} << 31) + (std::int64_t{1} << 29) + 1000003;  // not a tile multiple

// Keys with a skewed histogram: digit 0 alone holds more than 2^31 keys (15/16 of them), so
// offsets and look-back counts that were 32-bit would wrap.
__global__ void fill_large_keys(std::uint8_t* keys, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const std::uint64_t h = static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ull;
    keys[i] = (h >> 60) < 15 ? std::uint8_t{0} : static_cast<std::uint8_t>(h >> 40);
  }
}

class sort_large : public scanlab::test::gpu_test {
 protected:
  static bool enough_memory(std::size_t bytes) {
    std::size_t free_bytes = 0, total = 0;
    return cudaMemGetInfo(&free_bytes, &total) == cudaSuccess && free_bytes > bytes;
  }
};

// Keys and pairs (4-byte input positions as values) past 2^31, both implementations,
// checked against a CPU counting sort (itself stable): the exact expected output.
TEST_F(sort_large, LargeKeysAndPairsPast2to31) {
  // keys: in, out, alternate, final (4 x 2.7 GB); positions: out, alternate (2 x 10.7 GB); counts
  if (!enough_memory(std::size_t{40} << 30)) GTEST_SKIP() << "needs about 40 GB of free GPU memory";
  scanlab::device_buffer<std::uint8_t> keys(large_n);
  fill_large_keys<<<1024, 256>>>(keys.data(), large_n);
  SCANLAB_CHECK_LAUNCH();
  const std::vector<std::uint8_t> host_keys = keys.to_host();
  // Expected: the counting sort of the keys, and the stable positions.
  std::int64_t starts[256] = {};
  for (const std::uint8_t k : host_keys) ++starts[k];
  ASSERT_GT(starts[0], std::int64_t{1} << 31);
  std::int64_t running = 0;
  for (std::int64_t& s : starts) {
    const std::int64_t c = s;
    s = running;
    running += c;
  }
  scanlab::device_buffer<std::uint8_t> sorted(large_n);
  for (const auto algorithm : scanlab::test::sort::all_algorithms) {
    SCOPED_TRACE(scanlab::test::sort::name(algorithm));
    scanlab::radix_sort_options o;
    o.algorithm = algorithm;
    // Pairs, values = input positions (argsort with 32-bit indices, keys kept).
    scanlab::device_buffer<std::uint32_t> permutation(large_n);
    std::size_t bytes = 0;
    SCANLAB_CHECK(scanlab::radix_argsort(nullptr, bytes, keys.data(), permutation.data(), large_n, o, nullptr,
                                         sorted.data()));
    {
      scanlab::device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
      SCANLAB_CHECK(scanlab::radix_argsort(temp.data(), bytes, keys.data(), permutation.data(), large_n, o, nullptr,
                                           sorted.data()));
      SCANLAB_CHECK(cudaDeviceSynchronize());
    }
    const std::vector<std::uint8_t> got_keys = sorted.to_host();
    const std::vector<std::uint32_t> got = permutation.to_host();
    std::int64_t next[256];
    std::copy(std::begin(starts), std::end(starts), next);
    std::int64_t bad = 0;
    for (std::int64_t i = 0; i < large_n && bad < 5; ++i) {
      const std::uint8_t k = host_keys[static_cast<std::size_t>(i)];
      const std::int64_t at = next[k]++;
      if (got[static_cast<std::size_t>(at)] != static_cast<std::uint32_t>(i) || got_keys[static_cast<std::size_t>(at)] != k) {
        ADD_FAILURE() << "position " << at << ": got key " << int(got_keys[static_cast<std::size_t>(at)]) << " from "
                      << got[static_cast<std::size_t>(at)] << ", want key " << int(k) << " from " << i;
        ++bad;
      }
    }
    // Keys only.
    sorted.fill_bytes(0xa5);
    SCANLAB_CHECK(scanlab::radix_sort_keys(nullptr, bytes, keys.data(), sorted.data(), large_n, o));
    {
      scanlab::device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
      SCANLAB_CHECK(scanlab::radix_sort_keys(temp.data(), bytes, keys.data(), sorted.data(), large_n, o));
      SCANLAB_CHECK(cudaDeviceSynchronize());
    }
    const std::vector<std::uint8_t> keys_only = sorted.to_host();
    EXPECT_EQ(std::memcmp(keys_only.data(), got_keys.data(), keys_only.size()), 0) << "keys-only sort differs";
  }
}

}  // namespace
