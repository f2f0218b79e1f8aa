#include "common/array.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace scanlab::io {

// "u8" and "i8" are left out on purpose: NumPy reads them as 8-byte types, others as 8-bit.
std::optional<dtype> parse_dtype(std::string_view text) {
  struct alias {
    std::string_view text;
    dtype type;
  };
  static constexpr alias aliases[] = {
      {"uint8", dtype::u8},    {"u1", dtype::u8},    {"|u1", dtype::u8},
      {"int8", dtype::i8},     {"i1", dtype::i8},    {"|i1", dtype::i8},
      {"uint16", dtype::u16},  {"u16", dtype::u16},   {"u2", dtype::u16},   {"<u2", dtype::u16},
      {"int16", dtype::i16},   {"i16", dtype::i16},   {"i2", dtype::i16},   {"<i2", dtype::i16},
      {"uint32", dtype::u32},  {"u32", dtype::u32},   {"u4", dtype::u32},   {"<u4", dtype::u32},
      {"int32", dtype::i32},   {"i32", dtype::i32},   {"i4", dtype::i32},   {"<i4", dtype::i32},
      {"uint64", dtype::u64},  {"u64", dtype::u64},   {"<u8", dtype::u64},
      {"int64", dtype::i64},   {"i64", dtype::i64},   {"<i8", dtype::i64},
      {"float32", dtype::f32}, {"f32", dtype::f32},   {"f4", dtype::f32},   {"<f4", dtype::f32},
      {"float", dtype::f32},   {"float64", dtype::f64}, {"f64", dtype::f64}, {"f8", dtype::f64},
      {"<f8", dtype::f64},     {"double", dtype::f64},
      // linrec-only (array.hpp): the app decides whether it takes them
      {"float16", dtype::f16}, {"f16", dtype::f16},   {"f2", dtype::f16},   {"<f2", dtype::f16},
      {"half", dtype::f16},    {"bfloat16", dtype::bf16}, {"bf16", dtype::bf16},
      {"complex64", dtype::c64}, {"c64", dtype::c64}, {"c8", dtype::c64},   {"<c8", dtype::c64},
      {"complex128", dtype::c128}, {"c128", dtype::c128}, {"c16", dtype::c128}, {"<c16", dtype::c128},
  };
  for (const auto& a : aliases) {
    if (a.text == text) return a.type;
  }
  return std::nullopt;
}

std::string dtype_list(std::string_view separator, std::string_view (*label)(dtype), bool linrec_types) {
  std::string out;
  const auto add = [&](dtype t) {
    if (!out.empty()) out += separator;
    out += label(t);
  };
  for (dtype t : all_dtypes) add(t);
  if (linrec_types) {
    for (dtype t : linrec_only_dtypes) add(t);
  }
  return out;
}

std::string dtype_choices(bool linrec_types) { return dtype_list(", ", name, linrec_types); }

void refuse_linrec_only(dtype t) {
  std::string types;
  for (dtype u : linrec_only_dtypes) types += (types.empty() ? "" : ", ") + std::string(name(u));
  throw std::invalid_argument(std::string(name(t)) + " data: only scanlab-linrec takes " + types +
                              " (convert it to float32 or float64, e.g. numpy's a.astype(np.float32))");
}

namespace {

// |value| rounded once to nearest even in a binary format with `mantissa_bits` stored
// fraction bits and exponent bias `bias` (the largest exponent is `bias`), as its bits.
std::uint16_t round_to_binary(double value, int mantissa_bits, int exponent_bits, int bias) {
  const std::uint16_t sign = std::signbit(value) ? std::uint16_t(1u << (mantissa_bits + exponent_bits)) : 0;
  const std::uint16_t exponent_all_ones = std::uint16_t(((1u << exponent_bits) - 1) << mantissa_bits);
  if (std::isnan(value)) return std::uint16_t(sign | exponent_all_ones | (1u << (mantissa_bits - 1)));
  const double magnitude = std::fabs(value);
  if (std::isinf(magnitude)) return std::uint16_t(sign | exponent_all_ones);
  if (magnitude == 0) return sign;
  int e = 0;
  (void)std::frexp(magnitude, &e);  // magnitude = f 2^e, f in [0.5, 1): floor(log2) = e - 1
  const int min_normal_exponent = 1 - bias;
  int quantum = std::max(e - 1, min_normal_exponent) - mantissa_bits;  // the ulp's exponent
  // Exact (a power-of-two scaling of a double that stays normal), then one rounding.
  double units = std::nearbyint(std::ldexp(magnitude, -quantum));  // the default mode: to nearest even
  const double implicit = std::ldexp(1.0, mantissa_bits);
  if (units >= 2 * implicit) {  // rounded up to the next power of two
    units /= 2;
    ++quantum;
  }
  if (units < implicit) return std::uint16_t(sign | static_cast<std::uint16_t>(units));  // subnormal (or zero)
  const int biased = quantum + mantissa_bits + bias;
  if (biased >= (1 << exponent_bits) - 1) return std::uint16_t(sign | exponent_all_ones);  // overflow: infinity
  return std::uint16_t(sign | (biased << mantissa_bits) | static_cast<std::uint16_t>(units - implicit));
}

double widen_binary(std::uint16_t bits, int mantissa_bits, int exponent_bits, int bias) {
  const bool negative = (bits >> (mantissa_bits + exponent_bits)) & 1u;
  const unsigned biased = (bits >> mantissa_bits) & ((1u << exponent_bits) - 1);
  const unsigned fraction = bits & ((1u << mantissa_bits) - 1);
  double magnitude = 0;
  if (biased == (1u << exponent_bits) - 1) {
    magnitude = fraction != 0 ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (biased == 0) {
    magnitude = std::ldexp(static_cast<double>(fraction), 1 - bias - mantissa_bits);
  } else {
    magnitude = std::ldexp(static_cast<double>(fraction + (1u << mantissa_bits)),
                           static_cast<int>(biased) - bias - mantissa_bits);
  }
  return negative ? -magnitude : magnitude;
}

}  // namespace

std::uint16_t float16_from_double(double value) { return round_to_binary(value, 10, 5, 15); }
std::uint16_t bfloat16_from_double(double value) { return round_to_binary(value, 7, 8, 127); }
double float16_to_double(std::uint16_t bits) { return widen_binary(bits, 10, 5, 15); }
double bfloat16_to_double(std::uint16_t bits) { return widen_binary(bits, 7, 8, 127); }

host_array::host_array(dtype type, std::vector<std::int64_t> shape) : type_(type), shape_(std::move(shape)) {
  if (shape_.empty() || shape_.size() > max_dims) {
    throw std::invalid_argument("host_array: only 1-D to 3-D shapes are supported");
  }
  std::int64_t size = 1;
  for (std::int64_t extent : shape_) {
    if (extent < 0) throw std::invalid_argument("host_array: negative extent");
    if (extent != 0 && size > std::numeric_limits<std::int64_t>::max() / extent) {
      throw std::invalid_argument("host_array: element count overflows 64 bits");
    }
    size *= extent;
  }
  size_ = size;
  data_ = std::make_unique_for_overwrite<std::byte[]>(bytes() == 0 ? 1 : bytes());
}

void host_array::check_type(dtype wanted) const {
  if (wanted != type_) {
    throw std::invalid_argument(std::string("array holds ") + std::string(name(type_)) + ", not " +
                                std::string(name(wanted)));
  }
}

}  // namespace scanlab::io
