// Element types of datasets and a typed host array: the vocabulary of the app I/O.
#pragma once

#include <array>
#include <complex>
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

// The element types scanlab's datasets may hold (NumPy's |u1 |i1 <u2 <i2 <u4 <i4 <u8 <i8 <f4 <f8),
// and the storage types of the linear recurrences (scanlab-linrec alone): float16 (<f2),
// bfloat16 (<V2 in .npy: what ml_dtypes/JAX write), complex64 (<c8), complex128 (<c16).
enum class dtype : std::uint8_t { u8, i8, u16, i16, u32, i32, u64, i64, f32, f64, f16, bf16, c64, c128 };

// The dtypes every app takes (and io::visit dispatches on).
inline constexpr std::array<dtype, 10> all_dtypes = {dtype::u8,  dtype::i8,  dtype::u16, dtype::i16,
                                                     dtype::u32, dtype::i32, dtype::u64, dtype::i64,
                                                     dtype::f32, dtype::f64};
// The element types that only scanlab-linrec takes (besides float32 and float64): the other
// apps refuse them with a message naming the type (cli::app, io::visit).
inline constexpr std::array<dtype, 4> linrec_only_dtypes = {dtype::f16, dtype::bf16, dtype::c64, dtype::c128};

constexpr bool is_linrec_only(dtype t) {
  return t == dtype::f16 || t == dtype::bf16 || t == dtype::c64 || t == dtype::c128;
}

constexpr std::size_t size_of(dtype t) {
  switch (t) {
    case dtype::u8: case dtype::i8: return 1;
    case dtype::u16: case dtype::i16: case dtype::f16: case dtype::bf16: return 2;
    case dtype::u32: case dtype::i32: case dtype::f32: return 4;
    case dtype::u64: case dtype::i64: case dtype::f64: case dtype::c64: return 8;
    case dtype::c128: return 16;
  }
  return 0;
}

// float32 and float64 (the floating-point types every app takes; see also is_16bit_float,
// is_complex).
constexpr bool is_float(dtype t) { return t == dtype::f32 || t == dtype::f64; }
constexpr bool is_16bit_float(dtype t) { return t == dtype::f16 || t == dtype::bf16; }
constexpr bool is_complex(dtype t) { return t == dtype::c64 || t == dtype::c128; }
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
    case dtype::f16: return "float16";
    case dtype::bf16: return "bfloat16";
    case dtype::c64: return "complex64";
    case dtype::c128: return "complex128";
  }
  return "?";
}

// The .npy descr string: "|u1", "<i4", "<f8", ...; bfloat16 is written as "<V2" (2 raw
// bytes: NumPy has no bfloat16; ml_dtypes/JAX save theirs so, and read it back with
// .view(ml_dtypes.bfloat16)).
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
    case dtype::f16: return "<f2";
    case dtype::bf16: return "<V2";
    case dtype::c64: return "<c8";
    case dtype::c128: return "<c16";
  }
  return "?";
}

// Accepts "uint32", "u32", "u4", "<u4", "float", "f32", "f4", "double", ... (case-sensitive),
// and the linrec-only types: "float16" ("f16", "f2", "<f2", "half"), "bfloat16" ("bf16"),
// "complex64" ("c64", "c8", "<c8"), "complex128" ("c128", "c16", "<c16"). Whether an app
// takes the last four is for the app to say (cli::app refuses them unless it opts in).
// Not "u8"/"i8", which NumPy and C++ programmers read differently (8 bytes or 8 bits).
std::optional<dtype> parse_dtype(std::string_view text);

// Every dtype's label(t) (name, npy_descr) of all_dtypes, with the linrec-only ones too
// where `linrec_types`, joined by `separator`.
std::string dtype_list(std::string_view separator, std::string_view (*label)(dtype), bool linrec_types = false);
// A comma-separated list of the accepted short names, for --help texts.
std::string dtype_choices(bool linrec_types = false);

// The 16-bit floats as bits (IEEE binary16; bfloat16: float32's upper half): one rounding
// of a double to nearest even (overflow to infinity, underflow to a subnormal or zero; NaN
// stays NaN with its sign), and the exact widening back.
std::uint16_t float16_from_double(double value);
std::uint16_t bfloat16_from_double(double value);
double float16_to_double(std::uint16_t bits);
double bfloat16_to_double(std::uint16_t bits);

// Host-side C++ types of the 16-bit dtypes (the bits as stored; the GPU code reads the same
// bytes as __half and __nv_bfloat16). complex64 and complex128 are std::complex<float> and
// std::complex<double> (scanlab::complex has the same layout).
struct float16_bits {
  std::uint16_t bits;
};
struct bfloat16_bits {
  std::uint16_t bits;
};

// Further C++ types stored as a dtype (__half, __nv_bfloat16, scanlab::complex<R>): specialise
// with `static constexpr dtype value = ...;` beside them (linrec/linrec_types.hpp), so that
// host code that knows them can take host_array::as<__half>() without this header knowing CUDA.
template <class T>
struct dtype_for {};

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
  else if constexpr (std::is_same_v<U, float16_bits>) return dtype::f16;
  else if constexpr (std::is_same_v<U, bfloat16_bits>) return dtype::bf16;
  else if constexpr (std::is_same_v<U, std::complex<float>>) return dtype::c64;
  else if constexpr (std::is_same_v<U, std::complex<double>>) return dtype::c128;
  else if constexpr (requires { dtype_for<U>::value; }) return dtype_for<U>::value;
  else static_assert(sizeof(T) == 0, "not a dataset element type");
}

// What io::visit says of a linrec-only dtype: std::invalid_argument naming it.
[[noreturn]] void refuse_linrec_only(dtype t);

// Calls f.template operator()<T>() with the C++ type of `t`; returns what it returns. Over
// all_dtypes only, so that no app's code is instantiated for the linrec-only types: those
// throw std::invalid_argument ("float16 data: only scanlab-linrec takes float16, ...").
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
    case dtype::f16: case dtype::bf16: case dtype::c64: case dtype::c128: refuse_linrec_only(t);
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
