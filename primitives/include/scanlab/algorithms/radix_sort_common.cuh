// Radix sort, what both implementations share: how a key of any supported type becomes the
// unsigned bits that are sorted, which digit of them a pass looks at, the order of the passes,
// and the buffers the passes read and write. Host and device: the tests check the transforms on the CPU.
//
// The sorted bits ("ordered bits") of a key are an unsigned integer of the key's width
// whose ascending order is the order the sort produces:
//   unsigned   the key itself;
//   signed     the key with its sign bit flipped (two's complement: negatives first);
//   floating   positive numbers (sign clear) get the sign bit set, negative ones are
//              inverted entirely, so -inf < ... < -0 = +0 < ... < +inf as unsigned
//              integers. Two exceptions make the sort a total order that users expect:
//              -0.0 is read as +0.0 (they are equal keys: a stable sort keeps them in their
//              input order), and every NaN (either sign, any payload) becomes all ones:
//              NaNs are equal to each other and greater than every number.
//   descending every ordered bit inverted, so the largest key comes first; NaNs keep all
//              ones (after inversion too), so they still come last, in input order.
// Only the ordered bits [begin_bit, end_bit) take part: a pass sorts one 8-bit digit of
// them, least significant first, so after all passes the keys are in the order of those
// bits, ties in input order (every pass is stable).
//
// The keys themselves move unchanged (the transform is applied to compute a digit, never
// stored): the output holds the input's bit patterns, -0.0 and NaN payloads included.
#pragma once

#include <scanlab/detail/util.cuh>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace scanlab::radix_sort_detail {

// The unsigned integer type of the same width as Key.
template <int Bytes>
struct unsigned_of_size;
template <>
struct unsigned_of_size<1> {
  using type = std::uint8_t;
};
template <>
struct unsigned_of_size<2> {
  using type = std::uint16_t;
};
template <>
struct unsigned_of_size<4> {
  using type = std::uint32_t;
};
template <>
struct unsigned_of_size<8> {
  using type = std::uint64_t;
};

template <class Key>
inline constexpr bool is_radix_key_v =
    (std::is_integral_v<Key> && !std::is_same_v<Key, bool> && sizeof(Key) <= 8) || std::is_same_v<Key, float> ||
    std::is_same_v<Key, double>;

template <class Key>
using key_bits_t = typename unsigned_of_size<static_cast<int>(sizeof(Key))>::type;

// The key-to-ordered-bits map, for keys held as their raw bits (the kernels see only the
// bits: one kernel serves uint32, int32 and float32 alike up to IsFloat).
//   IsFloat = false: ordered = raw ^ flip (flip: the sign bit for signed keys, all ones
//                    more for descending);
//   IsFloat = true:  the float rules above, then ^ flip (all ones for descending, else 0).
template <class Bits, bool IsFloat>
struct key_transform {
  static_assert(std::is_unsigned_v<Bits>, "key_transform works on unsigned bits");
  static_assert(!IsFloat || sizeof(Bits) == 4 || sizeof(Bits) == 8, "floating keys are float or double");

  static constexpr int bits = 8 * static_cast<int>(sizeof(Bits));
  static constexpr Bits sign_bit = static_cast<Bits>(Bits{1} << (bits - 1));
  static constexpr Bits all_ones = static_cast<Bits>(~Bits{0});
  // Exponent all ones: inf (zero mantissa) or NaN (non-zero mantissa).
  static constexpr Bits exponent_mask = sizeof(Bits) == 4 ? static_cast<Bits>(0x7f800000u)
                                                          : static_cast<Bits>(0x7ff0000000000000ull);

  Bits flip = 0;

  // Floats without branches (the sort's pass kernel computes this twice per key and pass, and
  // is bound by integer instructions): negatives flip every bit, positives the sign bit, so
  // the mask is the sign spread by an arithmetic shift, or'ed with the sign bit.
  __host__ __device__ constexpr Bits ordered(Bits raw) const {
    if constexpr (IsFloat) {
      const Bits magnitude = static_cast<Bits>(raw & ~sign_bit);
      const bool nan = magnitude > exponent_mask;  // NaN: last, whatever the order
      if (magnitude == 0) raw = 0;                 // -0.0 sorts as +0.0
      const Bits negative = static_cast<Bits>(Bits{0} - static_cast<Bits>(raw >> (bits - 1)));
      const Bits order = static_cast<Bits>(raw ^ static_cast<Bits>(negative | sign_bit) ^ flip);
      return nan ? all_ones : order;
    } else {
      return static_cast<Bits>(raw ^ flip);
    }
  }
};

// The transform for Key in the requested order.
template <class Key>
__host__ __device__ constexpr key_transform<key_bits_t<Key>, std::is_floating_point_v<Key>> make_key_transform(
    bool descending) {
  using Bits = key_bits_t<Key>;
  using transform = key_transform<Bits, std::is_floating_point_v<Key>>;
  Bits flip = descending ? transform::all_ones : Bits{0};
  if constexpr (std::is_integral_v<Key> && std::is_signed_v<Key>) flip = static_cast<Bits>(flip ^ transform::sign_bit);
  return transform{flip};
}

template <class Key>
__host__ __device__ inline key_bits_t<Key> raw_bits(Key key) {
  key_bits_t<Key> bits;
  std::memcpy(&bits, &key, sizeof(Key));
  return bits;
}

// The ordered bits of one typed key (host or device): what the sort compares.
template <class Key>
__host__ __device__ inline key_bits_t<Key> ordered_bits(Key key, bool descending) {
  return make_key_transform<Key>(descending).ordered(raw_bits(key));
}

// 8-bit digits: 256 buckets per pass.
inline constexpr int digit_bits = 8;
inline constexpr int radix = 1 << digit_bits;

// The passes over the ordered bits [begin_bit, end_bit): pass p sorts bits
// [begin_bit + 8p, min(begin_bit + 8p + 8, end_bit)). An empty range still takes one pass
// of zero bits (every key in digit 0): a stable copy, which also gives argsort its identity
// permutation.
struct pass_plan {
  int begin_bit = 0;
  int end_bit = 0;

  __host__ __device__ constexpr int passes() const {
    const int width = end_bit - begin_bit;
    return width <= 0 ? 1 : (width + digit_bits - 1) / digit_bits;
  }
  __host__ __device__ constexpr int shift(int pass) const {
    return end_bit > begin_bit ? begin_bit + pass * digit_bits : 0;
  }
  // The digit mask of a pass (0 for the zero-bit pass).
  __host__ __device__ constexpr unsigned mask(int pass) const {
    const int low = begin_bit + pass * digit_bits;
    const int width = end_bit - low < digit_bits ? end_bit - low : digit_bits;
    return width <= 0 ? 0u : (1u << width) - 1u;
  }
};

// One pass's digit of a key's raw bits. shift < the key width whenever mask != 0.
template <class Bits, bool IsFloat>
struct digit_extractor {
  key_transform<Bits, IsFloat> transform;
  int shift;
  unsigned mask;

  __host__ __device__ constexpr unsigned operator()(Bits raw) const {
    return static_cast<unsigned>(transform.ordered(raw) >> shift) & mask;
  }
};


// Keys-only sorts carry no values: this tag stands in for the value type.
struct keys_only {};

template <class Value>
inline constexpr bool has_values_v = !std::is_same_v<Value, keys_only>;

// One sort with the key and value types reduced to their bits (what the dispatchers and
// kernels see: uint32, int32 and float keys share code up to IsFloat).
template <class Bits, bool IsFloat, class Value>
struct sort_request {
  const Bits* keys_in = nullptr;
  Bits* keys_out = nullptr;          // null: the sorted keys are not wanted (argsort)
  const Value* values_in = nullptr;  // null (with values): the values are the input positions
  Value* values_out = nullptr;
  // Non-null (4-byte values, onesweep only): the last pass writes the values here, widened
  // to 64 bits, and values_out is only a buffer between passes (argsort into 64-bit indices).
  std::uint64_t* values_out_wide = nullptr;
  std::int64_t n = 0;
  key_transform<Bits, IsFloat> transform{};
  pass_plan plan{};
};

// Where each pass reads and writes: pass 0 reads the caller's input (which is never
// written), the last pass writes the caller's output, and the passes in between alternate
// between the output and a buffer of the same size in temp storage.
template <class T>
struct ping_pong {
  const T* input = nullptr;
  T* output = nullptr;
  T* alternate = nullptr;
  int passes = 1;

  [[nodiscard]] T* destination(int pass) const { return (passes - 1 - pass) % 2 == 0 ? output : alternate; }
  [[nodiscard]] const T* source(int pass) const { return pass == 0 ? input : destination(pass - 1); }
};

using detail::temp_carver;  // scanlab/detail/util.cuh

}  // namespace scanlab::radix_sort_detail
