// Production scans of 1- and 2-byte types, which have a tile shape of their own (at most
// 64 items a thread and no tile loaded ahead: device/scan_policy.cuh): wrapping uint8 sums
// over the full range, and int16 maxima over data whose running maximum rises about 500
// times across the input (so tiles and look-back prefixes carry changing values). The
// ladder is the same code for every type and stays with the 4- and 8-byte cases.
#include "scan/scan_test_common.cuh"

namespace {

using namespace scanlab::test::scan;

// Full-range values: sums wrap mod 2^8, exactly as on the CPU.
struct uint8_case : case_base<std::uint8_t, scanlab::plus, check_kind::exact> {
  static std::uint8_t init() { return 200; }
  static std::vector<std::uint8_t> values(std::int64_t n, std::uint64_t seed) {
    return scanlab::test::random_values<std::uint8_t>(n, seed, false);
  }
};

// A floor rising from -32000 to 32000 across the input plus noise of up to 300: the running
// maximum changes every few hundred to few thousand items.
struct int16_max_case : case_base<std::int16_t, scanlab::maximum, check_kind::exact> {
  static std::int16_t init() { return -32768; }
  static std::vector<std::int16_t> values(std::int64_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> noise(0, 300);
    std::vector<std::int16_t> out(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
      const int floor = -32000 + static_cast<int>(64000 * i / std::max<std::int64_t>(n, 1));
      out[static_cast<std::size_t>(i)] = static_cast<std::int16_t>(std::min(32767, floor + noise(rng)));
    }
    return out;
  }
};

#define SCANLAB_NARROW_SCAN_TESTS(Fixture, Case)                                                   \
  class Fixture : public ::scanlab::test::gpu_test {};                                             \
  TEST_F(Fixture, ProductionInclusive) { production_test<Case>(false); }                           \
  TEST_F(Fixture, ProductionExclusive) { production_test<Case>(true); }                            \
  TEST_F(Fixture, ProductionModes) { production_modes_test<Case>(); }                              \
  TEST_F(Fixture, ProductionInPlace) { production_in_place_test<Case>(); }                         \
  TEST_F(Fixture, ProductionUnaligned) { production_unaligned_test<Case>(); }                      \
  TEST_F(Fixture, ProductionDeterministic) { production_deterministic_test<Case>(); }

SCANLAB_NARROW_SCAN_TESTS(scan_uint8, uint8_case)
SCANLAB_NARROW_SCAN_TESTS(scan_int16_max, int16_max_case)

}  // namespace
