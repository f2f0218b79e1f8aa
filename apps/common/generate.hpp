// The dataset generator: reproducible synthetic arrays for the tests, the benchmarks and
// scanlab-gen.
//
// Every element is a pure function of (spec, dtype, n, index). The random words come from a
// counter-based generator: word i of stream `id` (element i's draw) is splitmix64's output
// number i for a key derived from (seed, id), that is mix64(key + (i + 1) * 0x9e3779b97f4a7c15)
// with splitmix64's finaliser mix64. So any range of a dataset can be generated on its own, in any
// order and on any number of threads, and its bytes equal the same range of the whole array.
// All but normal and zipf are exact integer arithmetic: the same bytes on every machine. Those
// two go through the C math library (log, exp, cos), whose last bits may differ between libm
// versions and CPUs (glibc picks FMA code paths at run time).
//
// The value grid. Each dtype has a grid of R = 2^b equally spaced values that the generator
// draws from: the whole range of an integer type (b = 8, 16, 32, 64; grid offset o maps to
// min + o), and for floats the multiples of 2^-b in [0, 1) (b = 24 for float32, 53 for
// float64: o maps to o * 2^-b, exact). "Uniform over the grid" is therefore "uniform over the
// type's whole range" for integers and "uniform in [0, 1)" for floats.
//
// The distributions (u_i below is a uniform real in [0, 1) drawn for element i):
//   uniform          the top b bits of one random word: integers take them as their bit pattern,
//                    floats as the grid offset o.
//   normal           Box-Muller: elements 2j and 2j + 1 are z = sqrt(-2 ln u1) * cos(2 pi u2) and
//                    sqrt(-2 ln u1) * sin(2 pi u2) for the pair's two words (53-bit uniforms,
//                    u1 in (0, 1]). Floats: z, so N(0, 1). Integers: round(c + z * w)
//                    clamped to the type's range, with c the centre of the range
//                    ((min + max) / 2) and w = (max - min + 1) / 8, so +-4 sigma spans the
//                    range; 64-bit integers get the 53 bits of precision of a double.
//   sorted           o_i = floor((i + u_i) * R / n): element i is a uniform point of the i-th of
//                    n equal strata of the grid, so the sequence is non-decreasing, starts near
//                    the bottom of the range and ends near its top, and looks like a sorted
//                    uniform sample (for n > R the steps between values fall at random places).
//   reverse          element i = sorted element n - 1 - i: the sorted array backwards.
//   nearly-sorted    the sorted array, cut into blocks of 2^16 elements (the last one may be
//                    shorter); in a block of L elements, 2m = 2 * round(swap_fraction * L / 2)
//                    distinct positions are drawn at random and paired up, and each pair swaps
//                    its values. So a fraction swap_fraction of the elements move, never out of
//                    their block, and every block can be generated on its own.
//   few-unique       k = `unique` distinct values v_j = grid(P(j)), j = 0..k-1, where P is a
//                    seeded bijection of the grid (add, xorshift, odd multiply, mod 2^b): the
//                    values are distinct and scattered over the whole range. Element i = v_j with
//                    j uniform in [0, k). Needs k <= R.
//   zipf             the rank r in 1..K drawn with P(r) proportional to r^-s (Hormann and
//                    Derflinger's rejection-inversion: O(1) per element, no table; element i's
//                    tries use the words of a stream keyed by its own word), stored as
//                    the number r. K = min(zipf_ranks, the largest rank the dtype holds exactly:
//                    the integer maximum, 2^24 for float32, 2^53 for float64). K does not depend
//                    on n, so a shorter array is a prefix of a longer one.
//   entropy-reduced  the bitwise AND of the top b bits of `and_count` words, taken as for uniform:
//                    every bit of an integer (sign bit included) is 1 with probability
//                    2^-and_count. Floats: the AND is the grid offset o, the value o * 2^-b.
//   constant         every element = value (integers: it must be an integer in the range).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/array.hpp"

namespace scanlab::gen {

enum class distribution { uniform, normal, sorted, reverse, nearly_sorted, few_unique, zipf, entropy_reduced, constant };

inline constexpr std::array<distribution, 9> all_distributions = {
    distribution::uniform,       distribution::normal,     distribution::sorted,
    distribution::reverse,       distribution::nearly_sorted, distribution::few_unique,
    distribution::zipf,          distribution::entropy_reduced, distribution::constant};

// "uniform", "normal", "sorted", "reverse", "nearly-sorted", "few-unique", "zipf",
// "entropy-reduced", "constant" (underscores are accepted for the dashes).
std::optional<distribution> parse_distribution(std::string_view text);
std::string_view name(distribution d);
// One line on what the distribution is and which spec fields it uses, for --help texts.
std::string_view summary(distribution d);
// A comma-separated list of the names, for --help texts.
std::string distribution_choices();

// A dataset's recipe. Fields a distribution does not use are ignored (and not validated).
struct spec {
  distribution dist = distribution::uniform;
  std::uint64_t seed = 42;
  double swap_fraction = 0.01;         // nearly-sorted: fraction of elements moved by swaps, in [0, 1]
  std::int64_t unique = 16;            // few-unique: number of distinct values k >= 1
  double zipf_s = 1.1;                 // zipf: exponent s > 0
  std::int64_t zipf_ranks = 1 << 20;   // zipf: ranks 1..K, K >= 1 (clamped to what the dtype holds)
  int and_count = 2;                   // entropy-reduced: AND of k uniform words, 1 <= k <= 64
  double value = 0;                    // constant: the value (converted to the dtype)
};

// The block of nearly-sorted: elements never move out of their block of this many.
inline constexpr std::int64_t nearly_sorted_block = std::int64_t{1} << 16;

// The distribution and the parameters it uses for dtype t, e.g. "zipf (s = 1.1, ranks 1..255)".
std::string describe(const spec& s, io::dtype t);

// Throws std::invalid_argument with a one-line reason if n < 0 or a parameter that the
// distribution uses is out of range for it (or, for constant, not representable in t).
void validate(const spec& s, io::dtype t, std::int64_t n);

// Writes elements [offset, offset + count) of the n-element dataset described by s, as dtype
// t, to out (aligned for t, room for count elements). Deterministic: the bytes depend only on
// (s, t, n) and the element index, never on how the range is split. Single-threaded; cost
// O(count), plus up to two blocks of 2^16 for nearly-sorted ranges that cut blocks.
// std::invalid_argument from validate(), or if the range is not inside [0, n).
void generate(const spec& s, io::dtype t, std::int64_t n, std::int64_t offset, std::int64_t count, void* out);

// The same, split over `threads` threads (0: std::thread::hardware_concurrency()).
void generate_parallel(const spec& s, io::dtype t, std::int64_t n, std::int64_t offset, std::int64_t count,
                       void* out, unsigned threads = 0);

// The whole dataset as a 1-D array (generated on all cores when large).
io::host_array generate_array(const spec& s, io::dtype t, std::int64_t n);

}  // namespace scanlab::gen
