#include "common/array.hpp"

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
  };
  for (const auto& a : aliases) {
    if (a.text == text) return a.type;
  }
  return std::nullopt;
}

std::string dtype_list(std::string_view separator, std::string_view (*label)(dtype)) {
  std::string out;
  for (dtype t : all_dtypes) {
    if (!out.empty()) out += separator;
    out += label(t);
  }
  return out;
}

std::string dtype_choices() { return dtype_list(", ", name); }

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
