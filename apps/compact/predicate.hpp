// scanlab-compact's predicates: what the command line asks for (predicate_spec, host) and
// the typed test the GPU and the CPU reference evaluate (value_test<T>, host and device).
//
//   --gt X          x > X            (NaN: dropped: every comparison with NaN is false)
//   --lt X          x < X
//   --between A B   A <= x <= B      (A > B keeps nothing)
//   --nonzero       x != 0           (NaN is nonzero: kept)
//   --finite        drops NaN and +-Inf (integers: keeps everything)
//   --odd, --even   integers only
//   --flags FILE    keeps x[i] where FILE's element i is nonzero (same length)
//   --unique        drops an element equal (==) to its predecessor (NaN never equals)
//
// The CPU reference evaluates value_test<T> (below: one switch over the kinds, the plain
// meaning of each option). The GPU kernels get the same verdicts from one of three small
// branch-free tests, chosen on the host (with_gpu_test): a kernel that evaluates a switch
// for every item runs 10-40 % slower on the H100, and a kernel per kind would triple the
// build. --gt/--lt/--between/--finite become one closed range [lo, hi] of T; --nonzero is
// x != 0; --odd/--even test the low bit. test_predicates.cpp checks that both agree.
//
// Bounds are converted to the data's dtype: integer dtypes take whole numbers in their
// range (decimal, optional sign), float dtypes any decimal, "inf", "-inf" (rounded to the
// nearest float32 for float32 data). Anything else is an error naming the option.
#pragma once

#include "common/array.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#ifdef __CUDACC__
#define SCANLAB_COMPACT_HD __host__ __device__
#else
#define SCANLAB_COMPACT_HD
#endif

namespace scanlab::compact_app {

enum class test_kind { greater, less, between, nonzero, finite, odd, even, flags, unique };

struct predicate_spec {
  test_kind kind = test_kind::nonzero;
  std::string a;           // --gt, --lt: the bound; --between: the lower bound
  std::string b;           // --between: the upper bound
  std::string flags_file;  // --flags
};

// What the command line gave; at most one predicate may be set (none: --nonzero).
struct predicate_options {
  std::optional<std::string> gt, lt;
  std::vector<std::string> between;  // empty or two values
  bool nonzero = false, finite = false, odd = false, even = false, unique = false;
  std::string flags_file;
};

// The one predicate asked for; std::invalid_argument when more than one is given.
predicate_spec choose_predicate(const predicate_options& options);

// "--gt 5", "--between 1 2", "--unique", ... (for messages and JSON).
std::string describe(const predicate_spec& spec);

// Whether the predicate is meaningful for the dtype (--odd/--even need integers);
// throws std::invalid_argument naming the option otherwise.
void check_dtype(const predicate_spec& spec, io::dtype type);

// `text` as a T (rules at the top); std::invalid_argument naming `option` otherwise.
template <class T>
T parse_bound(std::string_view text, std::string_view option);

// The test of one value, for greater, less, between, nonzero, finite, odd and even.
template <class T>
struct value_test {
  test_kind kind = test_kind::nonzero;
  T a{};
  T b{};

  SCANLAB_COMPACT_HD bool operator()(const T& x) const {
    switch (kind) {
      case test_kind::greater: return x > a;
      case test_kind::less: return x < a;
      case test_kind::between: return a <= x && x <= b;
      case test_kind::nonzero: return x != T(0);
      case test_kind::finite:
        if constexpr (std::is_floating_point_v<T>) {
#ifdef __CUDA_ARCH__
          return isfinite(x);
#else
          return std::isfinite(x);
#endif
        } else {
          return true;
        }
      case test_kind::odd:
        if constexpr (std::is_integral_v<T>) return (x & T(1)) != 0;
        else return false;
      case test_kind::even:
        if constexpr (std::is_integral_v<T>) return (x & T(1)) == 0;
        else return false;
      default: return false;
    }
  }
};

// The typed test for a value predicate (not flags or unique); bounds parsed as T.
template <class T>
value_test<T> make_value_test(const predicate_spec& spec) {
  value_test<T> test;
  test.kind = spec.kind;
  switch (spec.kind) {
    case test_kind::greater: test.a = parse_bound<T>(spec.a, "--gt"); break;
    case test_kind::less: test.a = parse_bound<T>(spec.a, "--lt"); break;
    case test_kind::between:
      test.a = parse_bound<T>(spec.a, "--between");
      test.b = parse_bound<T>(spec.b, "--between");
      break;
    default: break;
  }
  return test;
}

// ---- the GPU forms ----

// lo <= x <= hi (empty when lo > hi; NaN is in no range).
template <class T>
struct in_range {
  T lo{};
  T hi{};
  SCANLAB_COMPACT_HD bool operator()(const T& x) const { return lo <= x && x <= hi; }
};

// x != 0 (NaN is nonzero; -0.0 is not).
template <class T>
struct nonzero_test {
  SCANLAB_COMPACT_HD bool operator()(const T& x) const { return x != T(0); }
};

// The low bit of x equals `bit` (odd: 1, even: 0; integers only).
template <class T>
struct low_bit_test {
  T bit{};
  SCANLAB_COMPACT_HD bool operator()(const T& x) const { return (x & T(1)) == bit; }
};

// The range holding exactly the values `test` keeps, for greater, less, between, finite.
// Strict bounds move to the next representable value: x > a is x >= next(a) (floats:
// std::nextafter, so x > -0.0 starts at the least positive subnormal, as x > 0 does).
template <class T>
in_range<T> range_of(const value_test<T>& test) {
  using limits = std::numeric_limits<T>;
  constexpr T lowest = std::is_floating_point_v<T> ? -limits::infinity() : limits::lowest();
  constexpr T highest = std::is_floating_point_v<T> ? limits::infinity() : limits::max();
  const in_range<T> none{highest, lowest};
  switch (test.kind) {
    case test_kind::greater:
      if (test.a == highest) return none;
      if constexpr (std::is_floating_point_v<T>) return {std::nextafter(test.a, highest), highest};
      else return {static_cast<T>(test.a + 1), highest};
    case test_kind::less:
      if (test.a == lowest) return none;
      if constexpr (std::is_floating_point_v<T>) return {lowest, std::nextafter(test.a, lowest)};
      else return {lowest, static_cast<T>(test.a - 1)};
    case test_kind::between: return {test.a, test.b};
    case test_kind::finite:
      if constexpr (std::is_floating_point_v<T>) return {-limits::max(), limits::max()};
      else return {lowest, highest};
    default: throw std::logic_error("range_of: not a range predicate");
  }
}

// Calls f(gpu_test) with the GPU form of `test` (greater ... even, not flags or unique)
// and returns what f returns.
template <class T, class F>
auto with_gpu_test(const value_test<T>& test, F&& f) {
  switch (test.kind) {
    case test_kind::nonzero: return f(nonzero_test<T>{});
    case test_kind::odd:
    case test_kind::even:
      if constexpr (std::is_integral_v<T>) {
        return f(low_bit_test<T>{static_cast<T>(test.kind == test_kind::odd ? 1 : 0)});
      } else {
        throw std::invalid_argument("--odd and --even need integer data");
      }
    default: return f(range_of(test));
  }
}

}  // namespace scanlab::compact_app
