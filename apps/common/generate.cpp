#include "common/generate.hpp"

#include <scanlab/mix64.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <exception>
#include <limits>
#include <numbers>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <vector>

namespace scanlab::gen {
namespace {

__extension__ typedef unsigned __int128 u128;

// ---- The counter-based generator ----

constexpr std::uint64_t golden_gamma = 0x9e3779b97f4a7c15ULL;

using scanlab::mix64;  // splitmix64's finaliser

// Word i of a stream: output i of splitmix64 seeded with `key`. Any word is computed on its own.
struct stream {
  std::uint64_t key;
  [[nodiscard]] std::uint64_t operator()(std::uint64_t i) const { return mix64(key + (i + 1) * golden_gamma); }
};

// Which words each distribution draws: distinct ids give independent streams for one seed.
enum stream_id : std::uint64_t {
  id_uniform = 1,
  id_normal_radius,
  id_normal_angle,
  id_sorted,  // shared by sorted, reverse and nearly-sorted: nearly-sorted is sorted plus swaps
  id_swaps,
  id_unique_values,
  id_unique_picks,
  id_zipf,
  id_entropy,  // id_entropy + j for word j of the AND
};

stream make_stream(std::uint64_t seed, std::uint64_t id) {
  return {mix64(mix64(seed ^ 0x5ca71ab5ca71ab5cULL) + id * 0xd1b54a32d192ed03ULL)};
}

// floor(w * range / 2^64): a word mapped to [0, range) (Lemire's multiply-shift). The chances
// of the values differ by at most range / 2^64 relative: nothing for the ranges used here.
std::uint64_t below(std::uint64_t w, std::uint64_t range) {
  return static_cast<std::uint64_t>((static_cast<u128>(w) * range) >> 64);
}

// A uniform double in [0, 1) from the top 53 bits of a word.
double unit(std::uint64_t w) { return static_cast<double>(w >> 11) * 0x1p-53; }

// ---- The value grid of each dtype (see generate.hpp) ----

template <class T>
constexpr int grid_bits() {
  if constexpr (std::is_same_v<T, float>) return 24;
  else if constexpr (std::is_same_v<T, double>) return 53;
  else return static_cast<int>(8 * sizeof(T));
}

int grid_bits(io::dtype t) {
  return io::visit(t, []<class T>() { return grid_bits<T>(); });
}

// Grid offset o in [0, 2^bits) to a value: min + o for integers, o * 2^-bits for floats.
template <class T>
T from_grid(std::uint64_t o) {
  if constexpr (std::is_floating_point_v<T>) {
    constexpr T scale = T(1) / static_cast<T>(std::uint64_t{1} << grid_bits<T>());
    return static_cast<T>(o) * scale;
  } else if constexpr (std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    constexpr U sign_bit = static_cast<U>(std::numeric_limits<U>::max() / 2 + 1);
    return static_cast<T>(static_cast<U>(static_cast<U>(o) ^ sign_bit));  // o - 2^(bits-1)
  } else {
    return static_cast<T>(o);
  }
}

// The top bits of a word as a value: for integers the bit pattern itself (two's complement for
// signed types), for floats the grid offset, as from_grid.
template <class T>
T from_bits(std::uint64_t o) {
  if constexpr (std::is_floating_point_v<T>) {
    return from_grid<T>(o);
  } else {
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(o));
  }
}

// ---- sorted: o_i = floor((i + u_i) * R / n), computed incrementally ----
//
// With i * R = base_i * n + rem_i and t_i = floor(u_i * R) (the top bits of a word),
// floor((i + u_i) * R / n) = base_i + floor((rem_i + t_i) / n) exactly, since rem_i + t_i is an
// integer and the fraction u_i * R - t_i < 1 cannot carry past a multiple of n.
template <int Bits, class Emit>
void sorted_offsets(const stream& words, std::uint64_t n, std::uint64_t first, std::uint64_t count, Emit&& emit) {
  if (count == 0) return;
  const u128 range = u128{1} << Bits;
  const u128 step = range / n;
  const auto step_rem = static_cast<std::uint64_t>(range % n);
  const u128 scaled = static_cast<u128>(first) << Bits;
  u128 base = scaled / n;
  auto rem = static_cast<std::uint64_t>(scaled % n);
  const bool t_may_pass_n = range > n;  // otherwise t < R <= n and t / n = 0
  for (std::uint64_t k = 0; k < count; ++k) {
    const std::uint64_t t = words(first + k) >> (64 - Bits);
    std::uint64_t carry;
    if (t_may_pass_n) {
      carry = t / n + ((rem + t % n >= n) ? 1 : 0);
    } else {
      carry = (rem + t >= n) ? 1 : 0;
    }
    emit(k, static_cast<std::uint64_t>(base + carry));
    base += step;
    rem += step_rem;
    if (rem >= n) {
      rem -= n;
      ++base;
    }
  }
}

// ---- few-unique: a seeded bijection of the b-bit grid ----
struct grid_permutation {
  std::uint64_t mask, add_in, add_out, mul1, mul2;
  int shift;

  grid_permutation(std::uint64_t seed, int bits) {
    const stream words = make_stream(seed, id_unique_values);
    mask = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
    add_in = words(0);
    add_out = words(1);
    mul1 = words(2) | 1;  // odd: invertible modulo 2^bits
    mul2 = words(3) | 1;
    shift = bits / 2;  // x ^= x >> shift is invertible for any shift >= 1
  }
  [[nodiscard]] std::uint64_t operator()(std::uint64_t x) const {
    x = (x + add_in) & mask;
    x ^= x >> shift;
    x = (x * mul1) & mask;
    x ^= x >> shift;
    x = (x * mul2) & mask;
    x ^= x >> shift;
    return (x + add_out) & mask;
  }
};

// ---- zipf: rejection-inversion (W. Hormann, G. Derflinger, "Rejection-inversion to generate
// variates from monotone discrete distributions", ACM TOMACS 6(3), 1996) ----
//
// h(x) = x^-s is integrated in closed form, H(x) = (x^(1-s) - 1) / (1 - s) (log x at s = 1);
// a point drawn uniformly under H over [1.5, K + 0.5] (shifted so the first rank gets its
// exact share) is inverted to x and rounded to rank k, and accepted unless it falls in the
// sliver between the histogram of h and the curve. Acceptance is above 1/2 for every s.
class zipf_sampler {
 public:
  zipf_sampler(double s, double ranks) : s_(s), ranks_(ranks) {
    h_integral_x1_ = big_h(1.5) - 1.0;
    h_integral_k_ = big_h(ranks + 0.5);
    squeeze_ = 2.0 - big_h_inverse(big_h(2.5) - h(2.0));
  }

  // A rank in [1, K], or 0 if this uniform u in [0, 1) is rejected (draw another).
  [[nodiscard]] std::int64_t try_sample(double u) const {
    const double hu = h_integral_k_ + u * (h_integral_x1_ - h_integral_k_);
    const double x = big_h_inverse(hu);
    double k = std::floor(x + 0.5);
    k = std::clamp(k, 1.0, ranks_);
    if (k - x <= squeeze_ || hu >= big_h(k + 0.5) - h(k)) return static_cast<std::int64_t>(k);
    return 0;
  }

 private:
  // log1p(x) / x and expm1(x) / x, with their series near 0.
  static double log1p_over(double x) {
    return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
  }
  static double expm1_over(double x) {
    return std::abs(x) > 1e-8 ? std::expm1(x) / x : 1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x));
  }
  [[nodiscard]] double h(double x) const { return std::exp(-s_ * std::log(x)); }
  [[nodiscard]] double big_h(double x) const {
    const double log_x = std::log(x);
    return expm1_over((1.0 - s_) * log_x) * log_x;
  }
  [[nodiscard]] double big_h_inverse(double y) const {
    const double t = std::max(y * (1.0 - s_), -1.0);
    return std::exp(log1p_over(t) * y);
  }

  double s_, ranks_;
  double h_integral_x1_ = 0, h_integral_k_ = 0, squeeze_ = 0;
};

// The largest rank dtype T holds exactly.
template <class T>
std::int64_t max_rank() {
  if constexpr (std::is_same_v<T, float>) return std::int64_t{1} << 24;
  else if constexpr (std::is_same_v<T, double>) return std::int64_t{1} << 53;
  else if constexpr (sizeof(T) == 8) return std::numeric_limits<std::int64_t>::max();
  else return static_cast<std::int64_t>(std::numeric_limits<T>::max());
}

std::int64_t zipf_rank_count(const spec& s, io::dtype t) {
  return std::min(s.zipf_ranks, io::visit(t, []<class T>() { return max_rank<T>(); }));
}

// ---- One dtype, one distribution, one range ----

template <class T>
void fill(const spec& s, std::uint64_t n, std::uint64_t first, std::uint64_t count, T* out) {
  constexpr int bits = grid_bits<T>();
  constexpr int drop = 64 - bits;  // a word's top `bits` bits are a uniform grid offset
  switch (s.dist) {
    case distribution::uniform: {
      const stream words = make_stream(s.seed, id_uniform);
      for (std::uint64_t k = 0; k < count; ++k) out[k] = from_bits<T>(words(first + k) >> drop);
      return;
    }
    case distribution::normal: {
      // Elements 2j and 2j + 1 share draw j: r cos(theta) and r sin(theta).
      const stream radius = make_stream(s.seed, id_normal_radius);
      const stream angle = make_stream(s.seed, id_normal_angle);
      constexpr double two_pi = 2.0 * std::numbers::pi;
      const auto store = [out](std::uint64_t k, double z) {
        if constexpr (std::is_floating_point_v<T>) {
          out[k] = static_cast<T>(z);
        } else {
          // On the grid offsets 0 .. 2^b - 1 (value = min + offset): the centre is
          // (2^b - 1) / 2, the spread 2^b / 8; + 0.5 and truncation round to the nearest.
          constexpr double grid_size = static_cast<double>(std::uint64_t{1} << (bits - 1)) * 2.0;
          const double o = (grid_size - 1.0) / 2.0 + z * (grid_size / 8.0) + 0.5;
          out[k] = from_grid<T>(o < 0.0 ? 0 : o >= grid_size ? ~std::uint64_t{0} >> drop : static_cast<std::uint64_t>(o));
        }
      };
      const std::uint64_t end = first + count;
      for (std::uint64_t pair = first / 2; 2 * pair < end; ++pair) {
        const double u1 = static_cast<double>((radius(pair) >> 11) + 1) * 0x1p-53;  // (0, 1]
        const double theta = two_pi * unit(angle(pair));
        const double r = std::sqrt(-2.0 * std::log(u1));
        if (2 * pair >= first) store(2 * pair - first, r * std::cos(theta));
        if (2 * pair + 1 < end) store(2 * pair + 1 - first, r * std::sin(theta));
      }
      return;
    }
    case distribution::sorted: {
      sorted_offsets<bits>(make_stream(s.seed, id_sorted), n, first, count,
                           [out](std::uint64_t k, std::uint64_t o) { out[k] = from_grid<T>(o); });
      return;
    }
    case distribution::reverse: {
      // Element i is sorted element n - 1 - i: generate the mirrored range backwards.
      sorted_offsets<bits>(make_stream(s.seed, id_sorted), n, n - first - count, count,
                           [out, count](std::uint64_t k, std::uint64_t o) { out[count - 1 - k] = from_grid<T>(o); });
      return;
    }
    case distribution::nearly_sorted: {
      const stream sorted_words = make_stream(s.seed, id_sorted);
      const stream block_keys = make_stream(s.seed, id_swaps);
      const auto block = static_cast<std::uint64_t>(nearly_sorted_block);
      std::vector<std::uint64_t> values;  // the block's sorted grid offsets
      std::vector<std::uint32_t> picks;   // partial Fisher-Yates: the first 2m are the swapped positions
      std::vector<std::uint32_t> source;  // position p takes the value sorted at source[p]
      const std::uint64_t end = first + count;
      for (std::uint64_t b = first / block; b * block < end; ++b) {
        const std::uint64_t start = b * block;
        const std::uint64_t length = std::min(block, n - start);
        values.resize(length);
        sorted_offsets<bits>(sorted_words, n, start, length,
                             [&values](std::uint64_t k, std::uint64_t o) { values[k] = o; });
        source.resize(length);
        std::iota(source.begin(), source.end(), std::uint32_t{0});
        const auto pairs = std::min<std::uint64_t>(
            static_cast<std::uint64_t>(std::llround(s.swap_fraction * static_cast<double>(length) / 2.0)), length / 2);
        if (pairs > 0) {
          picks.resize(length);
          std::iota(picks.begin(), picks.end(), std::uint32_t{0});
          const stream draws{block_keys(b)};
          for (std::uint64_t j = 0; j < 2 * pairs; ++j) {
            std::swap(picks[j], picks[j + below(draws(j), length - j)]);
          }
          for (std::uint64_t p = 0; p < pairs; ++p) {
            source[picks[2 * p]] = picks[2 * p + 1];
            source[picks[2 * p + 1]] = picks[2 * p];
          }
        }
        const std::uint64_t lo = std::max(first, start);
        const std::uint64_t hi = std::min(end, start + length);
        for (std::uint64_t i = lo; i < hi; ++i) out[i - first] = from_grid<T>(values[source[i - start]]);
      }
      return;
    }
    case distribution::few_unique: {
      const grid_permutation permute(s.seed, bits);
      const stream picks = make_stream(s.seed, id_unique_picks);
      const auto k_values = static_cast<std::uint64_t>(s.unique);
      for (std::uint64_t k = 0; k < count; ++k) {
        out[k] = from_grid<T>(permute(below(picks(first + k), k_values)));
      }
      return;
    }
    case distribution::zipf: {
      const zipf_sampler sampler(s.zipf_s, static_cast<double>(zipf_rank_count(s, io::dtype_of<T>())));
      const stream element_keys = make_stream(s.seed, id_zipf);
      for (std::uint64_t k = 0; k < count; ++k) {
        const stream attempts{element_keys(first + k)};
        std::int64_t rank = 0;
        for (std::uint64_t a = 0; rank == 0; ++a) rank = sampler.try_sample(unit(attempts(a)));
        out[k] = static_cast<T>(rank);
      }
      return;
    }
    case distribution::entropy_reduced: {
      std::vector<stream> words;
      for (int j = 0; j < s.and_count; ++j) words.push_back(make_stream(s.seed, id_entropy + static_cast<std::uint64_t>(j)));
      for (std::uint64_t k = 0; k < count; ++k) {
        std::uint64_t o = ~std::uint64_t{0};
        for (const stream& w : words) o &= w(first + k);
        out[k] = from_bits<T>(o >> drop);
      }
      return;
    }
    case distribution::constant: {
      std::fill(out, out + count, static_cast<T>(s.value));
      return;
    }
  }
  throw std::logic_error("bad distribution");
}

std::string show(double x) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, x);
  return std::string(buffer, result.ptr);
}

struct distribution_info {
  distribution dist;
  std::string_view name;
  std::string_view summary;
};

constexpr distribution_info infos[] = {
    {distribution::uniform, "uniform", "integers uniform over the whole range, floats uniform in [0, 1)"},
    {distribution::normal, "normal",
     "floats N(0, 1); integers rounded N(centre, (range/8)^2), clamped (Box-Muller)"},
    {distribution::sorted, "sorted",
     "non-decreasing over the range (floats [0, 1)): element i uniform in the i-th of n equal strata"},
    {distribution::reverse, "reverse", "the sorted array backwards (non-increasing)"},
    {distribution::nearly_sorted, "nearly-sorted",
     "sorted, then --swap-fraction of the elements swapped in pairs within blocks of 2^16"},
    {distribution::few_unique, "few-unique", "--unique k distinct random values, each element one of them uniformly"},
    {distribution::zipf, "zipf",
     "ranks 1..K with P(r) ~ r^-s (--zipf-s; K = --zipf-ranks, at most what the dtype holds)"},
    {distribution::entropy_reduced, "entropy-reduced",
     "bitwise AND of --and-count uniform words: each bit is 1 with probability 2^-k"},
    {distribution::constant, "constant", "every element = --value"},
};

const distribution_info& info(distribution d) {
  for (const auto& i : infos) {
    if (i.dist == d) return i;
  }
  throw std::logic_error("bad distribution");
}

// The value constant writes, checked against dtype t.
void validate_constant(double value, io::dtype t) {
  io::visit(t, [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isfinite(value) && std::abs(value) > static_cast<double>(std::numeric_limits<T>::max())) {
        throw std::invalid_argument("constant: value " + show(value) + " is out of the range of " +
                                    std::string(io::name(t)));
      }
    } else {
      const double past_max = std::ldexp(1.0, std::numeric_limits<T>::digits);
      if (!std::isfinite(value) || std::trunc(value) != value ||
          value < static_cast<double>(std::numeric_limits<T>::min()) || value >= past_max) {
        throw std::invalid_argument("constant: value " + show(value) + " is not a " + std::string(io::name(t)) +
                                    " (an integer in [" + std::to_string(std::numeric_limits<T>::min()) + ", " +
                                    std::to_string(std::numeric_limits<T>::max()) + "])");
      }
    }
  });
}

}  // namespace

std::optional<distribution> parse_distribution(std::string_view text) {
  std::string normalised(text);
  std::replace(normalised.begin(), normalised.end(), '_', '-');
  for (const auto& i : infos) {
    if (i.name == normalised) return i.dist;
  }
  return std::nullopt;
}

std::string_view name(distribution d) { return info(d).name; }

std::string_view summary(distribution d) { return info(d).summary; }

std::string distribution_choices() {
  std::string out;
  for (const auto& i : infos) {
    if (!out.empty()) out += ", ";
    out += i.name;
  }
  return out;
}

std::string describe(const spec& s, io::dtype t) {
  std::string out(name(s.dist));
  switch (s.dist) {
    case distribution::nearly_sorted: return out + " (swap fraction " + show(s.swap_fraction) + ")";
    case distribution::few_unique: return out + " (" + std::to_string(s.unique) + " distinct values)";
    case distribution::zipf:
      return out + " (s = " + show(s.zipf_s) + ", ranks 1.." + std::to_string(zipf_rank_count(s, t)) + ")";
    case distribution::entropy_reduced: return out + " (AND of " + std::to_string(s.and_count) + " words)";
    case distribution::constant: return out + " (value " + show(s.value) + ")";
    default: return out;
  }
}

void validate(const spec& s, io::dtype t, std::int64_t n) {
  using std::invalid_argument;
  if (n < 0) throw invalid_argument("the element count must be >= 0 (got " + std::to_string(n) + ")");
  switch (s.dist) {
    case distribution::nearly_sorted:
      if (!(s.swap_fraction >= 0.0 && s.swap_fraction <= 1.0)) {
        throw invalid_argument("nearly-sorted: the swap fraction must be in [0, 1] (got " + show(s.swap_fraction) + ")");
      }
      break;
    case distribution::few_unique: {
      if (s.unique < 1) {
        throw invalid_argument("few-unique: the number of distinct values must be >= 1 (got " + std::to_string(s.unique) + ")");
      }
      const int bits = grid_bits(t);
      if (bits < 63 && s.unique > (std::int64_t{1} << bits)) {
        throw invalid_argument("few-unique: " + std::to_string(s.unique) + " distinct values asked, but " +
                               std::string(io::name(t)) + " has only " + std::to_string(std::int64_t{1} << bits) +
                               (io::is_float(t) ? " on the generator's grid in [0, 1)" : ""));
      }
      break;
    }
    case distribution::zipf:
      if (!(s.zipf_s > 0.0) || !std::isfinite(s.zipf_s)) {
        throw invalid_argument("zipf: the exponent s must be > 0 and finite (got " + show(s.zipf_s) + ")");
      }
      if (s.zipf_ranks < 1) {
        throw invalid_argument("zipf: the number of ranks must be >= 1 (got " + std::to_string(s.zipf_ranks) + ")");
      }
      break;
    case distribution::entropy_reduced:
      if (s.and_count < 1 || s.and_count > 64) {
        throw invalid_argument("entropy-reduced: the AND count must be in [1, 64] (got " + std::to_string(s.and_count) + ")");
      }
      break;
    case distribution::constant: validate_constant(s.value, t); break;
    default: break;
  }
}

namespace {

void check_range(std::int64_t n, std::int64_t offset, std::int64_t count) {
  if (offset < 0 || count < 0 || offset > n - count) {
    throw std::invalid_argument("generate: " + std::to_string(count) + " elements from index " + std::to_string(offset) +
                                " are not inside the " + std::to_string(n) + " elements of the dataset");
  }
}

}  // namespace

void generate(const spec& s, io::dtype t, std::int64_t n, std::int64_t offset, std::int64_t count, void* out) {
  validate(s, t, n);
  check_range(n, offset, count);
  if (count == 0) return;
  io::visit(t, [&]<class T>() {
    fill<T>(s, static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(offset), static_cast<std::uint64_t>(count),
            static_cast<T*>(out));
  });
}

void generate_parallel(const spec& s, io::dtype t, std::int64_t n, std::int64_t offset, std::int64_t count,
                       void* out, unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  // Pieces are whole nearly-sorted blocks (so no block is set up twice), at least 4 per thread.
  const std::int64_t per_thread = (count + threads - 1) / threads;
  const std::int64_t piece = (per_thread + nearly_sorted_block - 1) / nearly_sorted_block * nearly_sorted_block;
  if (threads == 1 || count < 4 * nearly_sorted_block) {
    generate(s, t, n, offset, count, out);
    return;
  }
  validate(s, t, n);  // errors in the caller's thread
  check_range(n, offset, count);
  const std::size_t element = io::size_of(t);
  std::vector<std::exception_ptr> errors(threads);
  std::vector<std::thread> workers;
  auto run = [&](unsigned w) {
    const std::int64_t begin = static_cast<std::int64_t>(w) * piece;
    const std::int64_t size = std::min(piece, count - begin);
    if (size <= 0) return;
    try {
      generate(s, t, n, offset + begin, size, static_cast<std::byte*>(out) + static_cast<std::size_t>(begin) * element);
    } catch (...) {
      errors[w] = std::current_exception();
    }
  };
  for (unsigned w = 1; w < threads; ++w) workers.emplace_back(run, w);
  run(0);
  for (auto& worker : workers) worker.join();
  for (const auto& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

io::host_array generate_array(const spec& s, io::dtype t, std::int64_t n) {
  validate(s, t, n);
  io::host_array array(t, {n});
  generate_parallel(s, t, n, 0, n, array.data());
  return array;
}

}  // namespace scanlab::gen
