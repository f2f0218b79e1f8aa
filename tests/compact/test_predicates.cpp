// scanlab-compact's command-line predicates: choosing one, parsing bounds into each dtype,
// and the typed test on the host (NaN, infinities, odd and even of negative numbers).
#include "compact/predicate.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <cstdint>
#include <random>
#include <vector>
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

// The GPU form of each predicate (with_gpu_test: a range, x != 0 or a low-bit test) keeps
// exactly what the reference value_test keeps, on the values where they could part: the
// bounds and their neighbours, the type's extremes, zeros of both signs, NaN, infinities,
// subnormals, and seeded random values.
template <class T>
std::vector<T> probe_values(const std::vector<T>& bounds) {
  using limits = std::numeric_limits<T>;
  std::vector<T> v{T(0), T(1), limits::lowest(), limits::max(), static_cast<T>(limits::max() - 1)};
  if constexpr (std::is_floating_point_v<T>) {
    for (const T x : {-T(0), limits::infinity(), -limits::infinity(), limits::quiet_NaN(), -limits::quiet_NaN(),
                      limits::denorm_min(), -limits::denorm_min(), limits::min(), T(-1), T(0.5)}) {
      v.push_back(x);
    }
  } else {
    v.push_back(static_cast<T>(limits::lowest() + 1));
    if constexpr (std::is_signed_v<T>) v.push_back(T(-1));
  }
  for (const T b : bounds) {
    v.push_back(b);
    if constexpr (std::is_floating_point_v<T>) {
      v.push_back(std::nextafter(b, limits::infinity()));
      v.push_back(std::nextafter(b, -limits::infinity()));
    } else {
      if (b != limits::max()) v.push_back(static_cast<T>(b + 1));
      if (b != limits::lowest()) v.push_back(static_cast<T>(b - 1));
    }
  }
  std::mt19937_64 rng(20261122);
  for (int i = 0; i < 2000; ++i) {
    const std::uint64_t bits = rng();
    T x;
    if constexpr (std::is_floating_point_v<T>) {
      x = static_cast<T>(std::ldexp(static_cast<double>(bits % 2001) - 1000.0, static_cast<int>(bits >> 54) % 40 - 20));
    } else {
      std::memcpy(&x, &bits, sizeof x);
    }
    v.push_back(x);
  }
  return v;
}

template <class T>
void expect_gpu_form_agrees(const predicate_spec& spec) {
  const value_test<T> reference = make_value_test<T>(spec);
  std::vector<T> bounds;
  if (!spec.a.empty()) bounds.push_back(reference.a);
  if (!spec.b.empty()) bounds.push_back(reference.b);
  for (const T x : probe_values<T>(bounds)) {
    const bool gpu = with_gpu_test(reference, [&](auto test) { return test(x); });
    ASSERT_EQ(gpu, reference(x)) << describe(spec) << " on " << +x;
  }
}

template <class T>
void expect_gpu_forms_agree(const std::vector<std::string>& bounds) {
  for (const auto kind : {test_kind::nonzero, test_kind::finite}) expect_gpu_form_agrees<T>({kind, "", "", ""});
  if constexpr (std::is_integral_v<T>) {
    for (const auto kind : {test_kind::odd, test_kind::even}) expect_gpu_form_agrees<T>({kind, "", "", ""});
  }
  for (const std::string& a : bounds) {
    expect_gpu_form_agrees<T>({test_kind::greater, a, "", ""});
    expect_gpu_form_agrees<T>({test_kind::less, a, "", ""});
    for (const std::string& b : bounds) expect_gpu_form_agrees<T>({test_kind::between, a, b, ""});
  }
}

TEST(compact_predicates, GpuFormsAgreeWithTheReference) {
  expect_gpu_forms_agree<std::uint8_t>({"0", "1", "77", "254", "255"});
  expect_gpu_forms_agree<std::int8_t>({"-128", "-1", "0", "5", "127"});
  expect_gpu_forms_agree<std::uint16_t>({"0", "65535", "1000"});
  expect_gpu_forms_agree<std::int16_t>({"-32768", "0", "32767", "-7"});
  expect_gpu_forms_agree<std::uint32_t>({"0", "4294967295", "2147483648", "12345"});
  expect_gpu_forms_agree<std::int32_t>({"-2147483648", "2147483647", "0", "-1", "99"});
  expect_gpu_forms_agree<std::uint64_t>({"0", "18446744073709551615", "9223372036854775808"});
  expect_gpu_forms_agree<std::int64_t>({"-9223372036854775808", "9223372036854775807", "0", "-3"});
  expect_gpu_forms_agree<float>({"0", "-0", "inf", "-inf", "0.1", "-1.5", "3.4028234663852886e38", "1e-45"});
  expect_gpu_forms_agree<double>({"0", "-0", "inf", "-inf", "0.1", "-1.5", "1.7976931348623157e308", "5e-324"});
}

}  // namespace
