// The operators scanlab-reduce and scanlab-scan take (--op sum|prod|min|max), their result
// types, and their CPU semantics: one statement of each, for the apps and their references.
//
// Result types follow NumPy (np.sum / np.cumsum, np.prod / np.cumprod): integer sums and
// products in 64 bits (int64 for signed data, uint64 for unsigned, wrapping on overflow),
// floats in their own type; min and max (np.min / np.minimum.accumulate) in the data's type,
// a NaN anywhere giving NaN, -0.0 below +0.0 (scanlab::minimum / maximum).
#pragma once

#include "common/array.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <type_traits>

namespace scanlab::ops {

enum class op_id { sum, prod, min, max };

inline constexpr op_id all[] = {op_id::sum, op_id::prod, op_id::min, op_id::max};

constexpr std::string_view name(op_id op) {
  switch (op) {
    case op_id::sum: return "sum";
    case op_id::prod: return "prod";
    case op_id::min: return "min";
    case op_id::max: return "max";
  }
  return "?";
}

inline std::optional<op_id> parse(std::string_view text) {
  for (const op_id op : all) {
    if (text == name(op)) return op;
  }
  return std::nullopt;
}

constexpr bool keeps_type(op_id op) { return op == op_id::min || op == op_id::max; }

// Calls f.template operator()<Op>() with `op` as a template argument (as io::visit does for a
// dtype); returns what it returns.
template <class F>
decltype(auto) visit(op_id op, F&& f) {
  switch (op) {
    case op_id::sum: return f.template operator()<op_id::sum>();
    case op_id::prod: return f.template operator()<op_id::prod>();
    case op_id::min: return f.template operator()<op_id::min>();
    case op_id::max: return f.template operator()<op_id::max>();
  }
  throw std::logic_error("bad op_id");
}

// The result (and accumulator) type of op over T.
template <class T, op_id Op>
using result_t = std::conditional_t<keeps_type(Op) || std::is_floating_point_v<T>, T,
                                    std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>>;

// result_t at run time.
inline io::dtype result_dtype(io::dtype input, op_id op) {
  return io::visit(input, [&]<class T>() {
    return keeps_type(op) ? io::dtype_of<T>() : io::dtype_of<result_t<T, op_id::sum>>();
  });
}

// The identity the apps start from when --init is not given: 0 (-0.0 for floats, so that
// -0.0 stays -0.0), 1, the largest value (+inf) and the lowest (-inf).
template <class Acc>
Acc identity(op_id op) {
  switch (op) {
    case op_id::sum:
      if constexpr (std::is_floating_point_v<Acc>) return Acc(-0.0);
      return Acc(0);
    case op_id::prod: return Acc(1);
    case op_id::min:
      return std::numeric_limits<Acc>::has_infinity ? std::numeric_limits<Acc>::infinity()
                                                    : std::numeric_limits<Acc>::max();
    case op_id::max:
      return std::numeric_limits<Acc>::has_infinity ? -std::numeric_limits<Acc>::infinity()
                                                    : std::numeric_limits<Acc>::lowest();
  }
  return Acc{};
}

// a op b on the CPU, as the GPU computes it in Acc: integers wrap (computed on the unsigned
// 64-bit pattern, which C++ defines, then narrowed), min and max are NaN-aware with -0.0
// below +0.0.
template <class Acc>
Acc apply(op_id op, Acc a, Acc b) {
  if constexpr (std::is_floating_point_v<Acc>) {
    switch (op) {
      case op_id::sum: return a + b;
      case op_id::prod: return a * b;
      case op_id::min:
      case op_id::max: {
        if (std::isnan(a)) return a;
        if (std::isnan(b)) return b;
        const bool b_below = b < a || (b == a && std::signbit(b) && !std::signbit(a));
        const bool b_above = b > a || (b == a && !std::signbit(b) && std::signbit(a));
        return (op == op_id::min ? b_below : b_above) ? b : a;
      }
    }
    return a;
  } else {
    using U = std::uint64_t;
    switch (op) {
      case op_id::sum: return static_cast<Acc>(static_cast<U>(a) + static_cast<U>(b));
      case op_id::prod: return static_cast<Acc>(static_cast<U>(a) * static_cast<U>(b));
      case op_id::min: return b < a ? b : a;
      case op_id::max: return a < b ? b : a;
    }
    return a;
  }
}

}  // namespace scanlab::ops
