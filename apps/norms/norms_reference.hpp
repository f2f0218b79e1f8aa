// High-precision CPU references for the norms (scanlab-norms --validate and the tests).
//
// Every sum is a compensated (Neumaier) sum in long double (64-bit significand on
// x86-64): the error of the reference is about one long double ulp of the sum of |terms|,
// some 2000 times below a double's rounding, so it can judge float and double results.
// Products and squares of floats are exact in long double; of doubles they round to one
// long double ulp. Long double's range (about 1e+-4932) holds every square of a double:
// the reference needs no scaling. Large inputs are split over threads (fixed chunks, so
// the reference itself is deterministic for a given thread count).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <thread>
#include <vector>

namespace scanlab::norms_ref {

// Neumaier's compensated sum. Inf and NaN propagate (the compensation is dropped as soon
// as the sum is not finite, so Inf stays Inf instead of turning into Inf - Inf = NaN).
struct compensated_sum {
  long double sum = 0;
  long double compensation = 0;

  void add(long double v) {
    const long double t = sum + v;
    if (std::isfinite(t)) {
      if (std::fabs(sum) >= std::fabs(v)) compensation += (sum - t) + v;
      else compensation += (v - t) + sum;
    }
    sum = t;
  }
  void add(const compensated_sum& other) {
    add(other.sum);
    add(other.compensation);
  }
  [[nodiscard]] long double value() const { return std::isfinite(sum) ? sum + compensation : sum; }
};

// A sum and the sum of the absolute values of its terms (what error bounds scale with).
struct reference_sum {
  long double value = 0;
  long double abs_sum = 0;
};

// Sums term(i) for i in [0, n), over up to `threads` threads (0: the hardware's count).
template <class Term>
reference_sum sum_terms(std::int64_t n, Term term, unsigned threads = 0) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  constexpr std::int64_t min_chunk = std::int64_t{1} << 20;
  const auto workers = static_cast<unsigned>(std::clamp<std::int64_t>(n / min_chunk, 1, threads));
  std::vector<compensated_sum> sums(workers), abs_sums(workers);
  const auto run = [&](unsigned w) {
    const std::int64_t begin = n * w / workers;
    const std::int64_t end = n * (w + 1) / workers;
    for (std::int64_t i = begin; i < end; ++i) {
      const long double v = term(i);
      sums[w].add(v);
      abs_sums[w].add(std::fabs(v));
    }
  };
  if (workers == 1) {
    run(0);
  } else {
    std::vector<std::thread> pool;
    for (unsigned w = 0; w < workers; ++w) pool.emplace_back(run, w);
    for (auto& t : pool) t.join();
  }
  compensated_sum total, abs_total;
  for (unsigned w = 0; w < workers; ++w) {
    total.add(sums[w]);
    abs_total.add(abs_sums[w]);
  }
  return {total.value(), abs_total.value()};
}

template <class T>
reference_sum dot(std::span<const T> x, std::span<const T> y, unsigned threads = 0) {
  return sum_terms(
      static_cast<std::int64_t>(x.size()),
      [&](std::int64_t i) { return static_cast<long double>(x[i]) * static_cast<long double>(y[i]); }, threads);
}

template <class T>
reference_sum sum_squares(std::span<const T> x, unsigned threads = 0) {
  return sum_terms(
      static_cast<std::int64_t>(x.size()),
      [&](std::int64_t i) {
        const auto v = static_cast<long double>(x[i]);
        return v * v;
      },
      threads);
}

template <class T>
reference_sum sum_squared_differences(std::span<const T> x, std::span<const T> y, unsigned threads = 0) {
  return sum_terms(
      static_cast<std::int64_t>(x.size()),
      [&](std::int64_t i) {
        const long double d = static_cast<long double>(x[i]) - static_cast<long double>(y[i]);
        return d * d;
      },
      threads);
}

// sqrt(ssq / n); NaN for n == 0 (the documented result of rms and rms_diff).
inline long double root_mean(long double ssq, std::int64_t n) {
  if (n == 0) return std::numeric_limits<long double>::quiet_NaN();
  return std::sqrt(ssq / static_cast<long double>(n));
}

// |got - want| / |want| (|got - want| when want is 0); 0 when both are the same
// non-finite value (NaN and NaN, Inf and Inf), Inf when only one is finite or only one
// is NaN.
inline double relative_error(long double got, long double want) {
  if (std::isnan(want) || std::isnan(got)) {
    return std::isnan(want) && std::isnan(got) ? 0.0 : std::numeric_limits<double>::infinity();
  }
  if (!std::isfinite(want) || !std::isfinite(got)) {
    return got == want ? 0.0 : std::numeric_limits<double>::infinity();
  }
  const long double diff = std::fabs(got - want);
  return static_cast<double>(want == 0 ? diff : diff / std::fabs(want));
}

// A bound on the error of scanlab's sums of n terms (in units of the accumulator's eps
// times the sum of |terms|): the per-thread sequential chains are at most n / 2^15
// additions long on any GPU with a few SMs or more (about n / 2^21 on an H100), and the
// trees above them (group, block, grid) add fewer than 64 levels.
inline double sum_error_bound(std::int64_t n, double eps, long double abs_sum) {
  const double levels = static_cast<double>(n) / 32768.0 + 64.0;
  return 2.0 * levels * eps * static_cast<double>(abs_sum);
}

}  // namespace scanlab::norms_ref
