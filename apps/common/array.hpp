// Element types of datasets and a typed host array: the vocabulary of the app I/O.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace scanlab::io {

// The element types scanlab's datasets may hold (NumPy's |u1 |i1 <u2 <i2 <u4 <i4 <u8 <i8 <f4 <f8).
enum class dtype : std::uint8_t { u8, i8, u16, i16, u32, i32, u64, i64, f32, f64 };

inline constexpr std::array<dtype, 10> all_dtypes = {dtype::u8,  dtype::i8,  dtype::u16, dtype::i16,
                                                     dtype::u32, dtype::i32, dtype::u64, dtype::i64,
                                                     dtype::f32, dtype::f64};

constexpr std::size_t size_of(dtype t) {
  switch (t) {
    case dtype::u8: case dtype::i8: return 1;
    case dtype::u16: case dtype::i16: return 2;
    case dtype::u32: case dtype::i32: case dtype::f32: return 4;
    case dtype::u64: case dtype::i64: case dtype::f64: return 8;
  }
  return 0;
}

constexpr bool is_float(dtype t) { return t == dtype::f32 || t == dtype::f64; }
constexpr bool is_signed(dtype t) {
  return t == dtype::i8 || t == dtype::i16 || t == dtype::i32 || t == dtype::i64 || is_float(t);
}

// NumPy's names: "uint8" ... "float64".
constexpr std::string_view name(dtype t) {
  switch (t) {
    case dtype::u8: return "uint8";
    case dtype::i8: return "int8";
    case dtype::u16: return "uint16";
    case dtype::i16: return "int16";
    case dtype::u32: return "uint32";
    case dtype::i32: return "int32";
    case dtype::u64: return "uint64";
    case dtype::i64: return "int64";
    case dtype::f32: return "float32";
    case dtype::f64: return "float64";
  }
  return "?";
}

// The .npy descr string: "|u1", "<i4", "<f8", ...
constexpr std::string_view npy_descr(dtype t) {
  switch (t) {
    case dtype::u8: return "|u1";
    case dtype::i8: return "|i1";
    case dtype::u16: return "<u2";
    case dtype::i16: return "<i2";
    case dtype::u32: return "<u4";
    case dtype::i32: return "<i4";
    case dtype::u64: return "<u8";
    case dtype::i64: return "<i8";
    case dtype::f32: return "<f4";
    case dtype::f64: return "<f8";
  }
  return "?";
}

// Accepts "uint32", "u32", "u4", "<u4", "float", "f32", "f4", "double", ... (case-sensitive).
// Not "u8"/"i8", which NumPy and C++ programmers read differently (8 bytes or 8 bits).
std::optional<dtype> parse_dtype(std::string_view text);

// Every dtype's label(t) (name, npy_descr), joined by `separator`.
std::string dtype_list(std::string_view separator, std::string_view (*label)(dtype));
// A comma-separated list of the accepted short names, for --help texts.
std::string dtype_choices();

template <class T>
constexpr dtype dtype_of() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, std::uint8_t>) return dtype::u8;
  else if constexpr (std::is_same_v<U, std::int8_t>) return dtype::i8;
  else if constexpr (std::is_same_v<U, std::uint16_t>) return dtype::u16;
  else if constexpr (std::is_same_v<U, std::int16_t>) return dtype::i16;
  else if constexpr (std::is_same_v<U, std::uint32_t>) return dtype::u32;
  else if constexpr (std::is_same_v<U, std::int32_t>) return dtype::i32;
  else if constexpr (std::is_same_v<U, std::uint64_t>) return dtype::u64;
  else if constexpr (std::is_same_v<U, std::int64_t>) return dtype::i64;
  else if constexpr (std::is_same_v<U, float>) return dtype::f32;
  else if constexpr (std::is_same_v<U, double>) return dtype::f64;
  else static_assert(sizeof(T) == 0, "not a dataset element type");
}

// Calls f.template operator()<T>() with the C++ type of `t`; returns what it returns.
template <class F>
decltype(auto) visit(dtype t, F&& f) {
  switch (t) {
    case dtype::u8: return f.template operator()<std::uint8_t>();
    case dtype::i8: return f.template operator()<std::int8_t>();
    case dtype::u16: return f.template operator()<std::uint16_t>();
    case dtype::i16: return f.template operator()<std::int16_t>();
    case dtype::u32: return f.template operator()<std::uint32_t>();
    case dtype::i32: return f.template operator()<std::int32_t>();
    case dtype::u64: return f.template operator()<std::uint64_t>();
    case dtype::i64: return f.template operator()<std::int64_t>();
    case dtype::f32: return f.template operator()<float>();
    case dtype::f64: return f.template operator()<double>();
  }
  throw std::logic_error("bad dtype");
}

// The most dimensions an array of the apps has: 3 ([batch, length, channels], scanlab-linrec's
// --layout btc); the other apps take any of these shapes as its elements in C order.
inline constexpr std::size_t max_dims = 3;

// A dense, C-ordered host array of one dtype with a 1-D to 3-D shape.
// Storage is not zero-initialised: readers and generators overwrite it.
class host_array {
 public:
  host_array() = default;
  host_array(dtype type, std::vector<std::int64_t> shape);

  [[nodiscard]] dtype type() const noexcept { return type_; }
  [[nodiscard]] const std::vector<std::int64_t>& shape() const noexcept { return shape_; }
  [[nodiscard]] std::int64_t size() const noexcept { return size_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return static_cast<std::size_t>(size_) * size_of(type_); }
  [[nodiscard]] std::byte* data() noexcept { return data_.get(); }
  [[nodiscard]] const std::byte* data() const noexcept { return data_.get(); }

  // A typed view; throws std::invalid_argument if T is not this array's dtype.
  template <class T>
  [[nodiscard]] std::span<T> as() {
    check_type(dtype_of<T>());
    return {reinterpret_cast<T*>(data_.get()), static_cast<std::size_t>(size_)};
  }
  template <class T>
  [[nodiscard]] std::span<const T> as() const {
    check_type(dtype_of<T>());
    return {reinterpret_cast<const T*>(data_.get()), static_cast<std::size_t>(size_)};
  }

 private:
  void check_type(dtype wanted) const;

  dtype type_ = dtype::u8;
  std::vector<std::int64_t> shape_;
  std::int64_t size_ = 0;
  std::unique_ptr<std::byte[]> data_;
};

}  // namespace scanlab::io
