// scanlab-compact's predicates: choosing one from the command line and parsing bounds.
#include "compact/predicate.hpp"

#include <charconv>
#include <limits>
#include <stdexcept>

namespace scanlab::compact_app {

predicate_spec choose_predicate(const predicate_options& o) {
  std::vector<predicate_spec> chosen;
  if (o.gt) chosen.push_back({test_kind::greater, *o.gt, "", ""});
  if (o.lt) chosen.push_back({test_kind::less, *o.lt, "", ""});
  if (!o.between.empty()) {
    if (o.between.size() != 2) throw std::invalid_argument("--between takes two values: A B");
    chosen.push_back({test_kind::between, o.between[0], o.between[1], ""});
  }
  if (o.nonzero) chosen.push_back({test_kind::nonzero, "", "", ""});
  if (o.finite) chosen.push_back({test_kind::finite, "", "", ""});
  if (o.odd) chosen.push_back({test_kind::odd, "", "", ""});
  if (o.even) chosen.push_back({test_kind::even, "", "", ""});
  if (!o.flags_file.empty()) chosen.push_back({test_kind::flags, "", "", o.flags_file});
  if (o.unique) chosen.push_back({test_kind::unique, "", "", ""});
  if (chosen.size() > 1) {
    throw std::invalid_argument("give one predicate (" + describe(chosen[0]) + " and " + describe(chosen[1]) +
                                " were both given)");
  }
  return chosen.empty() ? predicate_spec{} : chosen[0];
}

std::string describe(const predicate_spec& spec) {
  switch (spec.kind) {
    case test_kind::greater: return "--gt " + spec.a;
    case test_kind::less: return "--lt " + spec.a;
    case test_kind::between: return "--between " + spec.a + " " + spec.b;
    case test_kind::nonzero: return "--nonzero";
    case test_kind::finite: return "--finite";
    case test_kind::odd: return "--odd";
    case test_kind::even: return "--even";
    case test_kind::flags: return "--flags " + spec.flags_file;
    case test_kind::unique: return "--unique";
  }
  return "?";
}

void check_dtype(const predicate_spec& spec, io::dtype type) {
  if ((spec.kind == test_kind::odd || spec.kind == test_kind::even) && io::is_float(type)) {
    throw std::invalid_argument(describe(spec) + " needs integer data (the input is " +
                                std::string(io::name(type)) + ")");
  }
}

template <class T>
T parse_bound(std::string_view text, std::string_view option) {
  const auto bad = [&](std::string_view why) {
    return std::invalid_argument(std::string(option) + " '" + std::string(text) + "': " + std::string(why));
  };
  std::string_view digits = text;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  if (digits.empty()) throw bad("not a number");
  const char* end = digits.data() + digits.size();
  if constexpr (std::is_floating_point_v<T>) {
    // Parsed as double (one rounding), then rounded once more to float for float32 data.
    double value = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), end, value);
    if (ptr != end) throw bad("not a number");
    if (ec == std::errc::result_out_of_range) {
      throw bad("out of the range of " + std::string(io::name(io::dtype_of<T>())));
    }
    if (ec != std::errc()) throw bad("not a number");
    if (std::isnan(value)) throw bad("NaN is not a bound (every comparison with it is false)");
    if (std::isfinite(value) && std::fabs(value) > static_cast<double>(std::numeric_limits<T>::max())) {
      throw bad("out of the range of " + std::string(io::name(io::dtype_of<T>())));
    }
    return static_cast<T>(value);
  } else {
    T value{};
    const auto [ptr, ec] = std::from_chars(digits.data(), end, value);
    if (ec == std::errc::result_out_of_range) {
      throw bad("out of the range of " + std::string(io::name(io::dtype_of<T>())));
    }
    if (ec != std::errc() || ptr != end) {
      throw bad("not a whole number (the data is " + std::string(io::name(io::dtype_of<T>())) + ")");
    }
    return value;
  }
}

template std::uint8_t parse_bound<std::uint8_t>(std::string_view, std::string_view);
template std::int8_t parse_bound<std::int8_t>(std::string_view, std::string_view);
template std::uint16_t parse_bound<std::uint16_t>(std::string_view, std::string_view);
template std::int16_t parse_bound<std::int16_t>(std::string_view, std::string_view);
template std::uint32_t parse_bound<std::uint32_t>(std::string_view, std::string_view);
template std::int32_t parse_bound<std::int32_t>(std::string_view, std::string_view);
template std::uint64_t parse_bound<std::uint64_t>(std::string_view, std::string_view);
template std::int64_t parse_bound<std::int64_t>(std::string_view, std::string_view);
template float parse_bound<float>(std::string_view, std::string_view);
template double parse_bound<double>(std::string_view, std::string_view);

}  // namespace scanlab::compact_app
