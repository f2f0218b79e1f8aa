// scanlab-compact's command-line predicates: choosing one, parsing bounds into each dtype,
// and the typed test on the host (NaN, infinities, odd and even of negative numbers).
#include "compact/predicate.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace {

using namespace scanlab::compact_app;

TEST(compact_predicates, DefaultIsNonzero) {
  const predicate_spec spec = choose_predicate({});
  EXPECT_EQ(spec.kind, test_kind::nonzero);
  EXPECT_EQ(describe(spec), "--nonzero");
}

TEST(compact_predicates, OnePredicateOnly) {
  predicate_options o;
  o.gt = "3";
  o.unique = true;
  try {
    (void)choose_predicate(o);
    FAIL() << "two predicates accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "give one predicate (--gt 3 and --unique were both given)");
  }
}

TEST(compact_predicates, ChoosesEachKind) {
  predicate_options between;
  between.between = {"1", "2"};
  EXPECT_EQ(describe(choose_predicate(between)), "--between 1 2");
  predicate_options flags;
  flags.flags_file = "mask.npy";
  EXPECT_EQ(choose_predicate(flags).kind, test_kind::flags);
  predicate_options lt;
  lt.lt = "-0.5";
  EXPECT_EQ(choose_predicate(lt).a, "-0.5");
}

TEST(compact_predicates, IntegerBounds) {
  EXPECT_EQ(parse_bound<std::int32_t>("-17", "--gt"), -17);
  EXPECT_EQ(parse_bound<std::int32_t>("+17", "--gt"), 17);
  EXPECT_EQ(parse_bound<std::uint64_t>("18446744073709551615", "--gt"), std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(parse_bound<std::uint8_t>("255", "--lt"), 255);
  EXPECT_THROW((void)parse_bound<std::uint8_t>("256", "--lt"), std::invalid_argument);
  EXPECT_THROW((void)parse_bound<std::uint32_t>("-1", "--lt"), std::invalid_argument);
  EXPECT_THROW((void)parse_bound<std::int32_t>("3.5", "--gt"), std::invalid_argument);
  EXPECT_THROW((void)parse_bound<std::int32_t>("", "--gt"), std::invalid_argument);
  try {
    (void)parse_bound<std::int16_t>("40000", "--between");
    FAIL() << "out-of-range bound accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "--between '40000': out of the range of int16");
  }
}

TEST(compact_predicates, FloatBounds) {
  EXPECT_EQ(parse_bound<double>("0.1", "--gt"), 0.1);
  EXPECT_EQ(parse_bound<float>("0.1", "--gt"), 0.1f);
  EXPECT_EQ(parse_bound<float>("-inf", "--gt"), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(parse_bound<double>("1e300", "--gt"), 1e300);
  EXPECT_THROW((void)parse_bound<float>("1e300", "--gt"), std::invalid_argument);
  EXPECT_THROW((void)parse_bound<double>("1e999", "--gt"), std::invalid_argument);
  EXPECT_THROW((void)parse_bound<double>("nan", "--gt"), std::invalid_argument);
  EXPECT_THROW((void)parse_bound<double>("0.5x", "--gt"), std::invalid_argument);
}

TEST(compact_predicates, FloatTestsMeetNanAndInfinity) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  predicate_spec gt{test_kind::greater, "0.5", "", ""};
  const auto greater = make_value_test<float>(gt);
  EXPECT_TRUE(greater(0.75f));
  EXPECT_FALSE(greater(0.5f));
  EXPECT_FALSE(greater(nan));
  EXPECT_TRUE(greater(inf));
  const auto between = make_value_test<float>({test_kind::between, "-1", "1", ""});
  EXPECT_TRUE(between(-1.0f));
  EXPECT_TRUE(between(1.0f));
  EXPECT_FALSE(between(nan));
  EXPECT_FALSE(between(-inf));
  const auto finite = make_value_test<float>({test_kind::finite, "", "", ""});
  EXPECT_FALSE(finite(nan));
  EXPECT_FALSE(finite(inf));
  EXPECT_FALSE(finite(-inf));
  EXPECT_TRUE(finite(-0.0f));
  const auto nonzero = make_value_test<double>({test_kind::nonzero, "", "", ""});
  EXPECT_TRUE(nonzero(std::numeric_limits<double>::quiet_NaN()));
  EXPECT_FALSE(nonzero(-0.0));
}

TEST(compact_predicates, OddAndEven) {
  const auto odd = make_value_test<std::int32_t>({test_kind::odd, "", "", ""});
  const auto even = make_value_test<std::int32_t>({test_kind::even, "", "", ""});
  for (const std::int32_t v : {-3, -2, -1, 0, 1, 2, std::numeric_limits<std::int32_t>::min()}) {
    EXPECT_EQ(odd(v), v % 2 != 0) << v;
    EXPECT_EQ(even(v), v % 2 == 0) << v;
  }
  EXPECT_THROW(check_dtype({test_kind::odd, "", "", ""}, scanlab::io::dtype::f32), std::invalid_argument);
  EXPECT_NO_THROW(check_dtype({test_kind::odd, "", "", ""}, scanlab::io::dtype::i8));
  EXPECT_NO_THROW(check_dtype({test_kind::finite, "", "", ""}, scanlab::io::dtype::u16));
}

}  // namespace
