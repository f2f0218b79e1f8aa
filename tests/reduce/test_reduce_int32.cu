// Reductions over std::int32_t: the typed suite (reduce_test_common.cuh); and over 1- and
// 2-byte integers (their packed-lane path), production only.
#include "reduce/reduce_test_common.cuh"

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace scanlab::test::reduce {

INSTANTIATE_TYPED_TEST_SUITE_P(int32, reduce_typed, ::testing::Types<std::int32_t>);

}  // namespace scanlab::test::reduce

namespace scanlab::test::reduce {
namespace {

// 1- and 2-byte integers take their vectors as packed lanes (reduce_kernels.cuh: SIMD-in-word
// minima and maxima, dot-product sums). Sizes through the tile, single-block and grid kernels,
// at three misalignments; data in [-100, 100] (or [0, 200]) with the type's two extremes
// planted at one random place each, so a missed or doubled item changes the min or max; sums
// of full-range data into a 64-bit (and a wrapping 32-bit) accumulator, against the CPU;
// minima and maxima against the CPU and CUB.
template <class T, class Acc>
void narrow_reduce_test() {
  const auto seed = test_seed() + 11;
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t tile = production_tile<T>();
  const std::int64_t single = std::int64_t{2} * 512 * 8 * (16 / static_cast<std::int64_t>(sizeof(T)));
  const std::vector<std::int64_t> sizes = capped({1, 2, 15, 16, 17, 33, 1000, tile - 1, tile, tile + 1, 5 * tile + 3,
                                                  single - 1, single, single + 1, (std::int64_t{1} << 22) + 7});
  std::mt19937_64 rng(seed);
  for (const std::int64_t n : sizes) {
    for (const std::int64_t offset : {0, 1, 3}) {
      const std::string what = at(n) + ", offset " + std::to_string(offset);
      std::vector<T> host(static_cast<std::size_t>(n + offset));
      std::uniform_int_distribution<int> small(std::is_signed_v<T> ? -100 : 0, std::is_signed_v<T> ? 100 : 200);
      for (auto& v : host) v = static_cast<T>(small(rng));
      std::uniform_int_distribution<std::int64_t> where(offset, n + offset - 1);
      host[static_cast<std::size_t>(where(rng))] = std::numeric_limits<T>::lowest();
      host[static_cast<std::size_t>(where(rng))] = std::numeric_limits<T>::max();
      device_buffer<T> d_host{std::span<const T>(host)};
      const T* d_in = d_host.data() + offset;
      const std::span<const T> items(host.data() + offset, static_cast<std::size_t>(n));
      for (const bool is_min : {true, false}) {
        const auto check = [&](auto op) {
          const T got = run_reduce(d_in, n, T(5), op);
          expect_matches_cpu(got, items, T(5), op, what);
          expect_matches_cub<T, decltype(op)>(got, cub_reduce(d_in, n, T(5), op), items, T(5), what);
        };
        if (is_min) check(scanlab::minimum{});
        else check(scanlab::maximum{});
      }
      std::uniform_int_distribution<int> full(std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max());
      for (auto& v : host) v = static_cast<T>(full(rng));
      d_host = device_buffer<T>{std::span<const T>(host)};
      d_in = d_host.data() + offset;
      Acc want = 3;
      for (std::int64_t i = 0; i < n; ++i) want = static_cast<Acc>(want + static_cast<Acc>(host[static_cast<std::size_t>(offset + i)]));
      EXPECT_EQ(run_reduce(d_in, n, Acc(3), scanlab::plus{}), want) << what << ", sum";
    }
  }
}

class reduce_narrow : public gpu_test {};
TEST_F(reduce_narrow, Int8) { narrow_reduce_test<std::int8_t, std::int64_t>(); }
TEST_F(reduce_narrow, Uint8) { narrow_reduce_test<std::uint8_t, std::uint64_t>(); }
TEST_F(reduce_narrow, Int16) { narrow_reduce_test<std::int16_t, std::int64_t>(); }
TEST_F(reduce_narrow, Uint16IntoUint32) { narrow_reduce_test<std::uint16_t, std::uint32_t>(); }

}  // namespace
}  // namespace scanlab::test::reduce
