// The dataset generator: determinism, chunk invariance, and the statistics each distribution
// promises (apps/common/generate.hpp), on the CPU.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "common/generate.hpp"
#include "common/npy.hpp"
#include "common/test_util.hpp"

namespace {

using scanlab::gen::distribution;
using scanlab::gen::spec;
using scanlab::io::dtype;
using scanlab::io::host_array;
namespace gen = scanlab::gen;
namespace io = scanlab::io;

spec make_spec(distribution d, std::uint64_t seed = 42) {
  spec s;
  s.dist = d;
  s.seed = seed;
  if (d == distribution::constant) s.value = 7;
  return s;
}

bool same_bytes(const host_array& a, const host_array& b) {
  return a.type() == b.type() && a.size() == b.size() && std::memcmp(a.data(), b.data(), a.bytes()) == 0;
}

template <class T>
std::vector<T> values_of(const host_array& a) {
  auto view = a.as<T>();
  return {view.begin(), view.end()};
}

std::vector<double> as_doubles(const host_array& a) {
  return io::visit(a.type(), [&]<class T>() {
    std::vector<double> out;
    out.reserve(static_cast<std::size_t>(a.size()));
    for (T v : a.as<T>()) out.push_back(static_cast<double>(v));
    return out;
  });
}

double mean_of(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

double stddev_of(const std::vector<double>& v) {
  const double m = mean_of(v);
  double sum = 0;
  for (double x : v) sum += (x - m) * (x - m);
  return std::sqrt(sum / static_cast<double>(v.size()));
}

// The generator's value grid (generate.hpp): R = 2^bits values.
int grid_bits(dtype t) {
  if (t == dtype::f32) return 24;
  if (t == dtype::f64) return 53;
  return static_cast<int>(8 * io::size_of(t));
}

// ---- Properties every distribution has, for a spread of dtypes ----

constexpr dtype property_types[] = {dtype::u8, dtype::i8, dtype::i16, dtype::u32, dtype::i32,
                                    dtype::u64, dtype::i64, dtype::f32, dtype::f64};

class every_distribution : public ::testing::TestWithParam<std::tuple<distribution, dtype>> {
 protected:
  [[nodiscard]] distribution dist() const { return std::get<0>(GetParam()); }
  [[nodiscard]] dtype type() const { return std::get<1>(GetParam()); }
};

TEST_P(every_distribution, same_spec_gives_same_bytes) {
  const spec s = make_spec(dist());
  const std::int64_t n = 100003;
  EXPECT_TRUE(same_bytes(gen::generate_array(s, type(), n), gen::generate_array(s, type(), n)));
}

TEST_P(every_distribution, another_seed_gives_other_bytes) {
  const std::int64_t n = 100003;
  const host_array a = gen::generate_array(make_spec(dist(), 1), type(), n);
  const host_array b = gen::generate_array(make_spec(dist(), 2), type(), n);
  // constant is the one distribution without randomness.
  EXPECT_EQ(same_bytes(a, b), dist() == distribution::constant);
}

TEST_P(every_distribution, pieces_of_random_lengths_equal_the_whole_array) {
  const std::uint64_t seed = scanlab::test::test_seed();
  SCOPED_TRACE(scanlab::test::seed_trace(seed));
  const spec s = make_spec(dist());
  const std::int64_t n = 3 * gen::nearly_sorted_block + 12345;  // several nearly-sorted blocks and a short one
  const host_array whole = gen::generate_array(s, type(), n);

  host_array pieced(type(), {n});
  std::mt19937_64 rng(seed);
  std::int64_t offset = 0;
  while (offset < n) {
    // Mostly short pieces, now and then one longer than a block.
    const std::int64_t longest = rng() % 4 == 0 ? 2 * gen::nearly_sorted_block : 1000;
    const std::int64_t count = std::min<std::int64_t>(n - offset, 1 + static_cast<std::int64_t>(rng() % longest));
    gen::generate(s, type(), n, offset, count, pieced.data() + static_cast<std::size_t>(offset) * io::size_of(type()));
    offset += count;
  }
  EXPECT_TRUE(same_bytes(whole, pieced));

  host_array threaded(type(), {n});
  gen::generate_parallel(s, type(), n, 0, n, threaded.data(), 3);
  EXPECT_TRUE(same_bytes(whole, threaded));
}

TEST_P(every_distribution, tiny_sizes) {
  const spec s = make_spec(dist());
  EXPECT_EQ(gen::generate_array(s, type(), 0).size(), 0);
  for (std::int64_t n : {1, 2, 3}) {
    const host_array a = gen::generate_array(s, type(), n);
    EXPECT_EQ(a.size(), n);
    // Each element alone equals its place in the array.
    for (std::int64_t i = 0; i < n; ++i) {
      std::byte one[8];
      gen::generate(s, type(), n, i, 1, one);
      EXPECT_EQ(std::memcmp(one, a.data() + static_cast<std::size_t>(i) * io::size_of(type()), io::size_of(type())), 0);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(gen, every_distribution,
                         ::testing::Combine(::testing::ValuesIn(gen::all_distributions),
                                            ::testing::ValuesIn(property_types)),
                         [](const auto& param_info) {
                           std::string name = std::string(gen::name(std::get<0>(param_info.param))) + "_" +
                                              std::string(io::name(std::get<1>(param_info.param)));
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// ---- Names ----

TEST(gen_names, round_trip) {
  for (distribution d : gen::all_distributions) {
    EXPECT_EQ(gen::parse_distribution(gen::name(d)), d);
    EXPECT_NE(gen::distribution_choices().find(gen::name(d)), std::string::npos);
    EXPECT_FALSE(gen::summary(d).empty());
  }
  EXPECT_EQ(gen::parse_distribution("nearly_sorted"), distribution::nearly_sorted);
  EXPECT_EQ(gen::parse_distribution("entropy-reduced"), distribution::entropy_reduced);
  EXPECT_FALSE(gen::parse_distribution("gauss"));
  EXPECT_FALSE(gen::parse_distribution(""));
  EXPECT_FALSE(gen::parse_distribution("Uniform"));
}

// ---- uniform ----

TEST(gen_uniform, integers_cover_the_whole_range) {
  const std::int64_t n = 1000000;
  for (dtype t : {dtype::u8, dtype::i8, dtype::u16, dtype::i16, dtype::u32, dtype::i32, dtype::u64, dtype::i64}) {
    SCOPED_TRACE(std::string(io::name(t)));
    const host_array a = gen::generate_array(make_spec(distribution::uniform), t, n);
    io::visit(t, [&]<class T>() {
      const auto v = values_of<T>(a);
      const double lo = static_cast<double>(std::numeric_limits<T>::min());
      const double hi = static_cast<double>(std::numeric_limits<T>::max());
      const double range = hi - lo;
      const auto [min_it, max_it] = std::minmax_element(v.begin(), v.end());
      EXPECT_LE(static_cast<double>(*min_it), lo + range * 1e-4);
      EXPECT_GE(static_cast<double>(*max_it), hi - range * 1e-4);
      // The mean of n uniform values: standard error range / sqrt(12 n) ~ range * 3e-4.
      EXPECT_NEAR(mean_of(as_doubles(a)), lo + range / 2, range * 2e-3);
    });
  }
}

TEST(gen_uniform, floats_in_zero_one) {
  const std::int64_t n = 1000000;
  for (dtype t : {dtype::f32, dtype::f64}) {
    SCOPED_TRACE(std::string(io::name(t)));
    const auto v = as_doubles(gen::generate_array(make_spec(distribution::uniform), t, n));
    const auto [min_it, max_it] = std::minmax_element(v.begin(), v.end());
    EXPECT_GE(*min_it, 0.0);
    EXPECT_LT(*max_it, 1.0);
    EXPECT_LT(*min_it, 1e-4);
    EXPECT_GT(*max_it, 1 - 1e-4);
    EXPECT_NEAR(mean_of(v), 0.5, 2e-3);
    EXPECT_NEAR(stddev_of(v), std::sqrt(1.0 / 12.0), 2e-3);
  }
}

// ---- normal ----

TEST(gen_normal, floats_are_standard_normal) {
  const std::int64_t n = 1000000;
  for (dtype t : {dtype::f32, dtype::f64}) {
    SCOPED_TRACE(std::string(io::name(t)));
    const auto v = as_doubles(gen::generate_array(make_spec(distribution::normal), t, n));
    EXPECT_NEAR(mean_of(v), 0.0, 5e-3);   // standard error 1e-3
    EXPECT_NEAR(stddev_of(v), 1.0, 5e-3);
    // About 31.7% beyond one sigma, 4.55% beyond two.
    const auto beyond = [&](double k) {
      return static_cast<double>(std::count_if(v.begin(), v.end(), [k](double x) { return std::abs(x) > k; })) /
             static_cast<double>(v.size());
    };
    EXPECT_NEAR(beyond(1.0), 0.3173, 3e-3);
    EXPECT_NEAR(beyond(2.0), 0.0455, 1.5e-3);
  }
}

TEST(gen_normal, integers_are_centred_with_spread_range_over_8) {
  const std::int64_t n = 1000000;
  for (dtype t : {dtype::u8, dtype::i8, dtype::u16, dtype::i32, dtype::u32, dtype::i64, dtype::u64}) {
    SCOPED_TRACE(std::string(io::name(t)));
    const auto v = as_doubles(gen::generate_array(make_spec(distribution::normal), t, n));
    const double bits = static_cast<double>(8 * io::size_of(t));
    const double range = std::pow(2.0, bits);
    const double centre = io::is_signed(t) ? -0.5 : range / 2 - 0.5;
    EXPECT_NEAR(mean_of(v), centre, range / 8 * 5e-3);
    EXPECT_NEAR(stddev_of(v), range / 8, range / 8 * 5e-3);
  }
}

// ---- sorted, reverse ----

template <class T>
void expect_monotone(const std::vector<T>& v, bool increasing) {
  for (std::size_t i = 1; i < v.size(); ++i) {
    if (increasing ? v[i] < v[i - 1] : v[i] > v[i - 1]) {
      ADD_FAILURE() << "not " << (increasing ? "non-decreasing" : "non-increasing") << " at index " << i;
      return;
    }
  }
}

TEST(gen_sorted, sorted_is_non_decreasing_and_reverse_is_its_mirror) {
  for (dtype t : property_types) {
    for (std::int64_t n : {1, 2, 255, 256, 257, 65536, 1000003}) {
      SCOPED_TRACE(std::string(io::name(t)) + " n=" + std::to_string(n));
      const host_array sorted = gen::generate_array(make_spec(distribution::sorted), t, n);
      const host_array reverse = gen::generate_array(make_spec(distribution::reverse), t, n);
      io::visit(t, [&]<class T>() {
        const auto up = values_of<T>(sorted);
        auto down = values_of<T>(reverse);
        expect_monotone(up, true);
        expect_monotone(down, false);
        std::reverse(down.begin(), down.end());
        EXPECT_TRUE(up == down);
      });
    }
  }
}

TEST(gen_sorted, spans_the_range) {
  const std::int64_t n = 1000000;
  for (dtype t : property_types) {
    SCOPED_TRACE(std::string(io::name(t)));
    const auto v = as_doubles(gen::generate_array(make_spec(distribution::sorted), t, n));
    double lo = 0, hi = 1;
    if (!io::is_float(t)) {
      const double range = std::pow(2.0, static_cast<double>(8 * io::size_of(t)));
      lo = io::is_signed(t) ? -range / 2 : 0;
      hi = lo + range;
    }
    const double step = io::is_float(t) ? std::ldexp(1.0, -grid_bits(t)) : 1.0;  // between grid values
    const double stratum = (hi - lo) / static_cast<double>(n);
    EXPECT_GE(v.front(), lo);
    EXPECT_LE(v.front(), lo + stratum);
    EXPECT_LT(v.back(), hi);
    EXPECT_GE(v.back(), hi - stratum - step);
    // Element i lies in the i-th of n equal strata: the middle one sits in the middle.
    EXPECT_NEAR(v[static_cast<std::size_t>(n / 2)], lo + (hi - lo) / 2, 2 * stratum);
  }
}

TEST(gen_sorted, strictly_increasing_when_the_grid_is_finer_than_n) {
  const std::int64_t n = 100000;
  for (dtype t : {dtype::u32, dtype::i64, dtype::f32, dtype::f64}) {
    SCOPED_TRACE(std::string(io::name(t)));
    io::visit(t, [&]<class T>() {
      const auto v = values_of<T>(gen::generate_array(make_spec(distribution::sorted), t, n));
      EXPECT_EQ(std::adjacent_find(v.begin(), v.end(), [](T a, T b) { return !(a < b); }), v.end());
    });
  }
}

TEST(gen_sorted, past_two_to_the_40_elements) {
  // Ranges of a dataset far too large to hold: monotone across pieces, and in range.
  const std::int64_t n = (std::int64_t{1} << 42) + 12345;
  for (dtype t : {dtype::u8, dtype::u32, dtype::u64, dtype::i64, dtype::f64}) {
    SCOPED_TRACE(std::string(io::name(t)));
    io::visit(t, [&]<class T>() {
      const std::int64_t count = 5000;
      std::vector<T> low(count), middle(count), high(count);
      gen::generate(make_spec(distribution::sorted), t, n, 0, count, low.data());
      gen::generate(make_spec(distribution::sorted), t, n, n / 2 - count / 2, count, middle.data());
      gen::generate(make_spec(distribution::sorted), t, n, n - count, count, high.data());
      std::vector<T> all = low;
      all.insert(all.end(), middle.begin(), middle.end());
      all.insert(all.end(), high.begin(), high.end());
      expect_monotone(all, true);
      // The first element lies in the first of n strata of the range, the last in the last.
      double lo = 0, hi = 1, step = std::ldexp(1.0, -grid_bits(t));
      if constexpr (!std::is_floating_point_v<T>) {
        lo = static_cast<double>(std::numeric_limits<T>::min());
        hi = static_cast<double>(std::numeric_limits<T>::max()) + 1;
        step = 1;
      }
      const double stratum = (hi - lo) / static_cast<double>(n);
      EXPECT_LE(static_cast<double>(low.front()) - lo, stratum);
      EXPECT_LE(hi - static_cast<double>(high.back()), stratum + step);
      // reverse element i = sorted element n - 1 - i, also at the far end.
      std::vector<T> reverse_head(count);
      gen::generate(make_spec(distribution::reverse), t, n, 0, count, reverse_head.data());
      std::reverse(reverse_head.begin(), reverse_head.end());
      EXPECT_TRUE(reverse_head == high);
    });
  }
}

// ---- nearly-sorted ----

TEST(gen_nearly_sorted, a_swap_fraction_of_elements_moves_within_its_block) {
  const std::int64_t n = 1000000;  // strictly increasing sorted values for these dtypes
  for (dtype t : {dtype::u32, dtype::i64, dtype::f64}) {
    for (double fraction : {0.0, 0.001, 0.01, 0.1, 1.0}) {
      SCOPED_TRACE(std::string(io::name(t)) + " swap fraction " + std::to_string(fraction));
      spec s = make_spec(distribution::nearly_sorted);
      s.swap_fraction = fraction;
      const host_array nearly = gen::generate_array(s, t, n);
      const host_array sorted = gen::generate_array(make_spec(distribution::sorted), t, n);
      io::visit(t, [&]<class T>() {
        const auto v = values_of<T>(nearly);
        const auto ref = values_of<T>(sorted);
        std::int64_t moved = 0, descents = 0, expected_moved = 0;
        for (std::int64_t start = 0; start < n; start += gen::nearly_sorted_block) {
          const std::int64_t length = std::min(gen::nearly_sorted_block, n - start);
          expected_moved += 2 * std::llround(fraction * static_cast<double>(length) / 2);
          // The block holds the same values as the sorted block: nothing left it.
          std::vector<T> block(v.begin() + start, v.begin() + start + length);
          std::sort(block.begin(), block.end());
          ASSERT_TRUE(std::equal(block.begin(), block.end(), ref.begin() + start)) << "block at " << start;
        }
        for (std::size_t i = 0; i < v.size(); ++i) moved += v[i] != ref[i] ? 1 : 0;
        for (std::size_t i = 1; i < v.size(); ++i) descents += v[i] < v[i - 1] ? 1 : 0;
        EXPECT_EQ(moved, expected_moved);
        if (fraction == 0.0) {
          EXPECT_EQ(descents, 0);
        } else if (fraction <= 0.1) {
          // Each swap of two far-apart positions makes about two descents: about fraction * n.
          const double expected = fraction * static_cast<double>(n);
          EXPECT_GT(static_cast<double>(descents), 0.6 * expected);
          EXPECT_LT(static_cast<double>(descents), 1.2 * expected);
        } else {
          EXPECT_GT(descents, n / 4);
        }
      });
    }
  }
}

TEST(gen_nearly_sorted, small_types_stay_mostly_sorted) {
  const std::int64_t n = 1000000;
  for (dtype t : {dtype::u8, dtype::i16, dtype::f32}) {
    SCOPED_TRACE(std::string(io::name(t)));
    const auto v = as_doubles(gen::generate_array(make_spec(distribution::nearly_sorted), t, n));
    std::int64_t descents = 0;
    for (std::size_t i = 1; i < v.size(); ++i) descents += v[i] < v[i - 1] ? 1 : 0;
    EXPECT_GT(descents, 0);
    EXPECT_LT(descents, n / 50);
  }
}

// ---- few-unique ----

TEST(gen_few_unique, exactly_k_values_each_about_equally_often) {
  const std::int64_t n = 1000000;
  for (dtype t : {dtype::u8, dtype::i16, dtype::u32, dtype::i64, dtype::f32, dtype::f64}) {
    for (std::int64_t k : {1, 2, 16, 256, 1000}) {
      if (t == dtype::u8 && k > 256) continue;
      SCOPED_TRACE(std::string(io::name(t)) + " k=" + std::to_string(k));
      spec s = make_spec(distribution::few_unique);
      s.unique = k;
      const auto v = as_doubles(gen::generate_array(s, t, n));
      std::map<double, std::int64_t> counts;
      for (double x : v) ++counts[x];
      EXPECT_EQ(static_cast<std::int64_t>(counts.size()), k);
      const double expected = static_cast<double>(n) / static_cast<double>(k);
      for (const auto& [value, count] : counts) {
        EXPECT_NEAR(static_cast<double>(count), expected, 6 * std::sqrt(expected) + 1) << "value " << value;
        if (io::is_float(t)) {
          EXPECT_GE(value, 0.0);
          EXPECT_LT(value, 1.0);
        }
      }
    }
  }
}

TEST(gen_few_unique, values_are_scattered_over_the_range) {
  spec s = make_spec(distribution::few_unique);
  s.unique = 64;
  const auto v = as_doubles(gen::generate_array(s, dtype::u32, 100000));
  const std::set<double> distinct(v.begin(), v.end());
  ASSERT_EQ(distinct.size(), 64u);
  EXPECT_LT(*distinct.begin(), 4294967296.0 * 0.2);
  EXPECT_GT(*distinct.rbegin(), 4294967296.0 * 0.8);
}

// ---- zipf ----

// The exact probability of rank 1 under Zipf(s) over 1..K.
double zipf_first(double s, std::int64_t ranks) {
  double sum = 0;
  for (std::int64_t r = ranks; r >= 1; --r) sum += std::pow(static_cast<double>(r), -s);
  return 1.0 / sum;
}

TEST(gen_zipf, rank_frequencies_fall_like_r_to_the_minus_s) {
  const std::int64_t n = 1000000;
  for (double exponent : {0.7, 1.0, 1.1, 2.0}) {
    for (dtype t : {dtype::u32, dtype::i64, dtype::f32}) {
      SCOPED_TRACE(std::string(io::name(t)) + " s=" + std::to_string(exponent));
      spec s = make_spec(distribution::zipf);
      s.zipf_s = exponent;
      const auto v = as_doubles(gen::generate_array(s, t, n));
      std::vector<std::int64_t> counts(static_cast<std::size_t>(s.zipf_ranks) + 1, 0);
      for (double x : v) {
        ASSERT_GE(x, 1.0);
        ASSERT_LE(x, static_cast<double>(s.zipf_ranks));
        ASSERT_EQ(x, std::floor(x));
        ++counts[static_cast<std::size_t>(x)];
      }
      // Rank 1 is the most frequent, with its exact share.
      EXPECT_EQ(std::max_element(counts.begin(), counts.end()) - counts.begin(), 1);
      const double p1 = zipf_first(exponent, s.zipf_ranks);
      const double c1 = static_cast<double>(counts[1]);
      EXPECT_NEAR(c1 / static_cast<double>(n), p1, 5 * std::sqrt(p1 / static_cast<double>(n)) + 1e-4);
      // count(1) / count(r) ~ r^s for the first ranks.
      for (double r : {2.0, 3.0, 4.0, 8.0}) {
        const double cr = static_cast<double>(counts[static_cast<std::size_t>(r)]);
        ASSERT_GT(cr, 0);
        EXPECT_NEAR(c1 / cr, std::pow(r, exponent), 0.08 * std::pow(r, exponent)) << "rank " << r;
      }
    }
  }
}

TEST(gen_zipf, few_ranks_match_the_law_exactly) {
  const std::int64_t n = 1000000;
  spec s = make_spec(distribution::zipf);
  s.zipf_s = 1.3;
  s.zipf_ranks = 10;
  const auto v = as_doubles(gen::generate_array(s, dtype::u16, n));
  std::vector<std::int64_t> counts(11, 0);
  for (double x : v) {
    ASSERT_GE(x, 1.0);
    ASSERT_LE(x, 10.0);
    ++counts[static_cast<std::size_t>(x)];
  }
  const double p1 = zipf_first(s.zipf_s, 10);
  for (int r = 1; r <= 10; ++r) {
    const double p = p1 * std::pow(r, -s.zipf_s);
    const double sigma = std::sqrt(static_cast<double>(n) * p * (1 - p));
    EXPECT_NEAR(static_cast<double>(counts[static_cast<std::size_t>(r)]), static_cast<double>(n) * p, 5 * sigma)
        << "rank " << r;
  }
}

TEST(gen_zipf, ranks_are_capped_by_the_dtype) {
  spec s = make_spec(distribution::zipf);
  s.zipf_s = 0.3;  // a flat law: the top ranks are drawn
  const auto u8 = as_doubles(gen::generate_array(s, dtype::u8, 200000));
  EXPECT_EQ(*std::max_element(u8.begin(), u8.end()), 255.0);
  const auto i8 = as_doubles(gen::generate_array(s, dtype::i8, 200000));
  EXPECT_EQ(*std::max_element(i8.begin(), i8.end()), 127.0);
  EXPECT_EQ(*std::min_element(i8.begin(), i8.end()), 1.0);
}

// ---- entropy-reduced ----

TEST(gen_entropy_reduced, every_bit_is_set_with_probability_two_to_the_minus_k) {
  const std::int64_t n = 1000000;
  for (dtype t : {dtype::u8, dtype::u32, dtype::i32, dtype::u64, dtype::f32, dtype::f64}) {
    for (int k : {1, 2, 3, 5}) {
      SCOPED_TRACE(std::string(io::name(t)) + " k=" + std::to_string(k));
      spec s = make_spec(distribution::entropy_reduced);
      s.and_count = k;
      const host_array a = gen::generate_array(s, t, n);
      const int bits = grid_bits(t);
      std::vector<std::int64_t> ones(static_cast<std::size_t>(bits), 0);
      io::visit(t, [&]<class T>() {
        for (T v : a.as<T>()) {
          std::uint64_t word = 0;
          if constexpr (std::is_floating_point_v<T>) {
            ASSERT_GE(v, T(0));
            ASSERT_LT(v, T(1));
            word = static_cast<std::uint64_t>(std::ldexp(static_cast<double>(v), bits));  // the grid offset
          } else {
            std::make_unsigned_t<T> u;
            std::memcpy(&u, &v, sizeof u);
            word = u;
          }
          for (int b = 0; b < bits; ++b) ones[static_cast<std::size_t>(b)] += static_cast<std::int64_t>((word >> b) & 1);
        }
      });
      const double p = std::ldexp(1.0, -k);
      const double sigma = std::sqrt(p * (1 - p) / static_cast<double>(n));
      for (int b = 0; b < bits; ++b) {
        EXPECT_NEAR(static_cast<double>(ones[static_cast<std::size_t>(b)]) / static_cast<double>(n), p, 6 * sigma)
            << "bit " << b;
      }
    }
  }
}

// ---- constant ----

TEST(gen_constant, every_element_is_the_value) {
  const std::int64_t n = 100000;
  const std::tuple<dtype, double> cases[] = {
      {dtype::u8, 0},      {dtype::u8, 255},  {dtype::i8, -128},        {dtype::i16, -3},
      {dtype::u32, 7},     {dtype::i32, -1e9}, {dtype::u64, 9007199254740992.0}, {dtype::i64, -4e18},
      {dtype::f32, 2.5},   {dtype::f64, -1e300}};
  for (const auto& [t, value] : cases) {
    SCOPED_TRACE(std::string(io::name(t)) + " value " + std::to_string(value));
    spec s = make_spec(distribution::constant);
    s.value = value;
    const auto v = as_doubles(gen::generate_array(s, t, n));
    EXPECT_TRUE(std::all_of(v.begin(), v.end(), [&](double x) { return x == value; }));
  }
}

// ---- validate ----

TEST(gen_validate, rejects_bad_parameters) {
  const auto rejects = [](spec s, dtype t, std::int64_t n) {
    EXPECT_THROW(gen::validate(s, t, n), std::invalid_argument);
    EXPECT_THROW((void)gen::generate_array(s, t, n), std::invalid_argument);
  };
  rejects(make_spec(distribution::uniform), dtype::u32, -1);

  spec s = make_spec(distribution::nearly_sorted);
  for (double fraction : {-0.01, 1.01, std::nan("")}) {
    s.swap_fraction = fraction;
    rejects(s, dtype::u32, 10);
  }
  s = make_spec(distribution::few_unique);
  for (std::int64_t k : {0, -5}) {
    s.unique = k;
    rejects(s, dtype::u32, 10);
  }
  s.unique = 257;
  rejects(s, dtype::u8, 10);
  s.unique = (std::int64_t{1} << 24) + 1;
  rejects(s, dtype::f32, 10);
  s = make_spec(distribution::zipf);
  for (double exponent : {0.0, -1.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    s.zipf_s = exponent;
    rejects(s, dtype::u32, 10);
  }
  s = make_spec(distribution::zipf);
  s.zipf_ranks = 0;
  rejects(s, dtype::u32, 10);
  s = make_spec(distribution::entropy_reduced);
  for (int k : {0, -1, 65}) {
    s.and_count = k;
    rejects(s, dtype::u32, 10);
  }
  s = make_spec(distribution::constant);
  const std::tuple<dtype, double> bad_constants[] = {
      {dtype::u8, 256},  {dtype::u8, -1},     {dtype::i8, 128},         {dtype::i32, 3.5},
      {dtype::u32, -1},  {dtype::i64, 9.3e18}, {dtype::u64, 1.9e19},    {dtype::u16, std::nan("")},
      {dtype::f32, 1e39}};
  for (const auto& [t, value] : bad_constants) {
    s.value = value;
    rejects(s, t, 10);
  }
}

TEST(gen_validate, accepts_the_edges) {
  spec s = make_spec(distribution::nearly_sorted);
  for (double fraction : {0.0, 1.0}) {
    s.swap_fraction = fraction;
    EXPECT_NO_THROW(gen::validate(s, dtype::u32, 10));
  }
  s = make_spec(distribution::few_unique);
  s.unique = 256;
  EXPECT_NO_THROW(gen::validate(s, dtype::u8, 10));
  s.unique = std::numeric_limits<std::int64_t>::max();
  EXPECT_NO_THROW(gen::validate(s, dtype::u64, 10));
  s = make_spec(distribution::entropy_reduced);
  s.and_count = 64;
  EXPECT_NO_THROW(gen::validate(s, dtype::u64, 10));
  s = make_spec(distribution::constant);
  s.value = std::numeric_limits<double>::infinity();
  EXPECT_NO_THROW(gen::validate(s, dtype::f32, 10));
  s.value = -9223372036854775808.0;
  EXPECT_NO_THROW(gen::validate(s, dtype::i64, 10));
  // Parameters of other distributions are not looked at.
  s = make_spec(distribution::uniform);
  s.unique = 0;
  s.zipf_s = -1;
  EXPECT_NO_THROW(gen::validate(s, dtype::u32, 0));
}

TEST(gen_validate, ranges_outside_the_dataset_are_refused) {
  std::vector<std::uint32_t> out(16);
  const spec s = make_spec(distribution::uniform);
  EXPECT_THROW(gen::generate(s, dtype::u32, 10, 5, 6, out.data()), std::invalid_argument);
  EXPECT_THROW(gen::generate(s, dtype::u32, 10, -1, 2, out.data()), std::invalid_argument);
  EXPECT_THROW(gen::generate(s, dtype::u32, 10, 0, -1, out.data()), std::invalid_argument);
  EXPECT_NO_THROW(gen::generate(s, dtype::u32, 10, 10, 0, out.data()));
  EXPECT_THROW(gen::generate_parallel(s, dtype::u32, 10, 5, 6, out.data(), 2), std::invalid_argument);
}

TEST(gen_describe, names_the_parameters) {
  spec s = make_spec(distribution::zipf);
  EXPECT_EQ(gen::describe(s, dtype::u32), "zipf (s = 1.1, ranks 1..1048576)");
  EXPECT_EQ(gen::describe(s, dtype::i8), "zipf (s = 1.1, ranks 1..127)");
  s = make_spec(distribution::few_unique);
  EXPECT_NE(gen::describe(s, dtype::f32).find("16"), std::string::npos);
  EXPECT_EQ(gen::describe(make_spec(distribution::uniform), dtype::f64), "uniform");
}

// ---- End to end: streamed through npy_writer, read back with read_npy ----

TEST(gen_npy, streamed_file_reads_back_as_the_array) {
  const std::uint64_t seed = scanlab::test::test_seed();
  SCOPED_TRACE(scanlab::test::seed_trace(seed));
  const auto dir = std::filesystem::temp_directory_path() / ("scanlab_test_gen_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::mt19937_64 rng(seed);
  for (distribution d : {distribution::uniform, distribution::nearly_sorted, distribution::zipf}) {
    for (dtype t : {dtype::u8, dtype::i32, dtype::f64}) {
      SCOPED_TRACE(std::string(gen::name(d)) + " " + std::string(io::name(t)));
      const spec s = make_spec(d, rng());
      const std::int64_t n = 200000 + static_cast<std::int64_t>(rng() % 1000);
      const auto path = dir / "data.npy";
      {
        io::npy_writer writer(path, t, {n});
        std::vector<std::byte> chunk;
        for (std::int64_t offset = 0; offset < n;) {
          const std::int64_t count = std::min<std::int64_t>(n - offset, 1 + static_cast<std::int64_t>(rng() % 70000));
          chunk.resize(static_cast<std::size_t>(count) * io::size_of(t) + 8);
          // A buffer aligned for every dtype.
          auto* aligned = reinterpret_cast<std::byte*>(
              (reinterpret_cast<std::uintptr_t>(chunk.data()) + 7) / 8 * 8);
          gen::generate(s, t, n, offset, count, aligned);
          writer.write(aligned, static_cast<std::size_t>(count) * io::size_of(t));
          offset += count;
        }
        writer.commit();
      }
      const host_array back = io::read_npy(path);
      ASSERT_EQ(back.shape(), std::vector<std::int64_t>{n});
      EXPECT_TRUE(same_bytes(back, gen::generate_array(s, t, n)));
    }
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
