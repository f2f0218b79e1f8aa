// Shared bodies of the linear recurrence tests (scanlab/algorithms/linrec.cuh), one
// translation unit per element type. Every result is checked against the sequential
// long double reference of apps/linrec/linrec_reference.hpp (error bound
// eps * (3 L_i + 64 S_i), see there; compiled host-only, linrec_test_reference.cpp) and
// CUB's generic scan is checked the same way.
#pragma once

#include "common/device_buffer.hpp"
#include "common/gpu_test.hpp"
#include "common/test_util.hpp"
#include "instances/linrec_instances.cuh"
#include "linrec/linrec_cub.cuh"
#include "linrec/linrec_test_reference.hpp"

#include <scanlab/algorithms/linrec.cuh>
#include <scanlab/error.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <tuple>
#include <limits>
#include <numbers>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace scanlab::test::linrec {

namespace ld = scanlab::linrec_detail;
namespace cubx = scanlab::linrec_cub;

template <class T>
using policy = ld::default_linrec_policy<T>;

// Runs call(temp, bytes) as a library call is run: the size query, then the work in
// temporary storage filled with garbage and with the outputs filled with NaN (anything left
// unwritten fails), then waits for it. (At least one byte: a null temp pointer is a query.)
template <class Call, class... Outputs>
void query_and_run(const Call& call, Outputs&... outputs) {
  std::size_t bytes = 0;
  SCANLAB_CHECK(call(nullptr, bytes));
  device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes > 0 ? bytes : 1));
  temp.fill_bytes(0xa5);
  (outputs.fill_bytes(0xff), ...);
  SCANLAB_CHECK(call(temp.data(), bytes));
  SCANLAB_CHECK(cudaDeviceSynchronize());
}

// The same bits (and size).
template <class T>
bool same_bits(const std::vector<T>& x, const std::vector<T>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0;
}
// The rows kernel's own shape (short rows), as the public entry points take it.
template <class T>
using rows_policy = ld::default_linrec_rows_policy<T>;
// Whether the look-back kernel (forced, default shape) gives the bits of the automatic
// choice for a [batch, length] batch: where that choice is the look-back kernel, or the rows
// kernel with as many items per thread (a thread composes its items in order, so its
// grouping is the item count's). Not the 16-bit rows path: its shape counts storage (32
// items, the look-back shape's float states 16); comparing it would need the look-back
// kernel compiled in the rows shape, which doubled the build time of those types' test
// files (92 to about 200 s each), so their rows kernel is checked against the reference and
// with two blocks. Decided by Hopper's shapes (elsewhere the rows shape is the look-back one).
template <class T>
bool look_back_bits_comparable(std::int64_t batch, std::int64_t length) {
  using rows = scanlab::arch::policy_for<rows_policy<T>, 90>;
  using look_back = scanlab::arch::policy_for<policy<T>, 90>;
  return rows::items_per_thread == look_back::items_per_thread ||
         !ld::whole_rows_per_tile<rows>(batch, length, ld::linrec_mode::automatic);
}

// ---- the element types (float, double, __half, __nv_bfloat16, complex<float>, complex<double>) ----
// Host data is drawn in double and rounded to T once: the reference then solves the rounded
// values, as the GPU does.

template <class T>
inline constexpr bool complex_type = scanlab::is_complex_v<T>;

// The (lambda, u) and EMA forms are tested in float and double: their loads are generic over
// element_traits, whose conversions the (a, b) solves of the other types test. Every form is
// another kernel per layout and direction to compile (minutes of build time for the four
// other types); scanlab-linrec runs these forms in float32 and float64 only, for the same reason.
template <class T>
inline constexpr bool forms_tested = std::is_same_v<T, float> || std::is_same_v<T, double>;
#define SCANLAB_LINREC_SKIP_FORMS_OF(T)                                              \
  if constexpr (!::scanlab::test::linrec::forms_tested<T>) {                         \
    GTEST_SKIP() << "the (lambda, u) and EMA forms are tested in float and double"; \
  } else

// re + i im (im only for the complex types), rounded to T.
template <class T>
T make_value(double re, double im = 0) {
  if constexpr (complex_type<T>) {
    using R = typename T::value_type;
    return T(static_cast<R>(re), static_cast<R>(im));
  } else if constexpr (std::is_same_v<T, __half>) {
    return __double2half(re);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __double2bfloat16(re);
  } else {
    return static_cast<T>(re);
  }
}
// The real part, in double.
template <class T>
double to_double(T v) {
  if constexpr (complex_type<T>) {
    return static_cast<double>(v.re);
  } else if constexpr (std::is_same_v<T, __half>) {
    return static_cast<double>(__half2float(v));
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return static_cast<double>(__bfloat162float(v));
  } else {
    return static_cast<double>(v);
  }
}
template <class T>
double imag_double(T v) {
  if constexpr (complex_type<T>) return static_cast<double>(v.im);
  else return 0.0;
}
template <class T>
bool is_nan(T v) {
  return std::isnan(to_double(v)) || std::isnan(imag_double(v));
}
template <class T>  // Inf in a part, NaN in none
bool is_inf(T v) {
  return !is_nan(v) && (std::isinf(to_double(v)) || std::isinf(imag_double(v)));
}
template <class T>
bool is_zero(T v) {
  return to_double(v) == 0 && imag_double(v) == 0;
}
template <class T>
T nan_value() {
  return make_value<T>(std::numeric_limits<double>::quiet_NaN());
}
template <class T>
T inf_value() {
  return make_value<T>(std::numeric_limits<double>::infinity());
}
template <class T>
std::vector<double> to_doubles(const std::vector<T>& v) {
  std::vector<double> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = to_double(v[i]);
  return out;
}

// Items per tile of the default policy on this GPU (chosen per architecture).
template <class T>
std::int64_t tile_of() {
  std::int64_t items = 0;
  SCANLAB_CHECK(scanlab::detail::device_tile_items<policy<T>>(items));
  return items;
}
// The same for the rows kernel's shape.
template <class T>
std::int64_t rows_tile_of() {
  std::int64_t items = 0;
  SCANLAB_CHECK(scanlab::detail::device_tile_items<rows_policy<T>>(items));
  return items;
}

// How a is drawn (b is uniform in [-1, 1) throughout).
enum class a_kind {
  contracting,  // |a| < 0.9, both signs
  near_one,     // a in [0.999, 1)
  ones,         // a = 1: a prefix sum of b
  mixed,        // |a| in [0.5, 1], random sign, 1% exact zeros (resets)
};

inline const char* name(a_kind k) {
  switch (k) {
    case a_kind::contracting: return "contracting";
    case a_kind::near_one: return "near_one";
    case a_kind::ones: return "ones";
    case a_kind::mixed: return "mixed";
  }
  return "?";
}

template <class T>
struct host_problem {
  std::vector<T> p, q;  // a and b (or lambda and u, or the signal)
  std::vector<T> x0s;   // one per sequence, or empty
  T x0 = T{};
};

// (Complex: a's modulus as drawn for the real types, with a uniform phase (a = 1 stays 1);
// b's parts both uniform in [-1, 1).)
template <class T>
host_problem<T> make_problem(std::int64_t n, a_kind kind, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uniform_real_distribution<double> magnitude(0.5, 1.0);
  std::uniform_real_distribution<double> close(0.999, 1.0);
  std::uniform_int_distribution<int> percent(0, 99);
  host_problem<T> h;
  h.p.resize(static_cast<std::size_t>(n));
  h.q.resize(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    double a = 0;
    switch (kind) {
      case a_kind::contracting: a = 0.9 * unit(rng); break;
      case a_kind::near_one: a = close(rng); break;
      case a_kind::ones: a = 1; break;
      case a_kind::mixed: a = (percent(rng) == 0) ? 0.0 : magnitude(rng) * (unit(rng) < 0 ? -1 : 1); break;
    }
    if constexpr (complex_type<T>) {
      const double phase = kind == a_kind::ones ? 0.0 : std::numbers::pi * unit(rng);
      h.p[static_cast<std::size_t>(i)] = make_value<T>(std::fabs(a) * std::cos(phase), std::fabs(a) * std::sin(phase));
      const double re = unit(rng);
      h.q[static_cast<std::size_t>(i)] = make_value<T>(re, unit(rng));
    } else {
      h.p[static_cast<std::size_t>(i)] = make_value<T>(a);
      h.q[static_cast<std::size_t>(i)] = make_value<T>(unit(rng));
    }
  }
  const double x0 = unit(rng);
  h.x0 = make_value<T>(x0, complex_type<T> ? unit(rng) : 0.0);
  return h;
}

template <class T>
std::vector<T> random_states(std::int64_t batch, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-2.0, 2.0);
  std::vector<T> out(static_cast<std::size_t>(batch));
  for (auto& v : out) {
    const double re = unit(rng);
    v = make_value<T>(re, complex_type<T> ? unit(rng) : 0.0);
  }
  return out;
}

// The largest errors each test met (scanlab's results only), per element type: printed by
// the suite's ErrorSummary test, one line per test (the table of primitives/docs/linrec.md).
struct error_record {
  double max_relative_error = 0;
  double max_bound_ratio = 0;
  std::int64_t checked = 0;
};
template <class T>
std::map<std::string, error_record>& error_log() {
  static std::map<std::string, error_record> log;
  return log;
}
template <class T>
void note_errors(const reference_result& r) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  error_record& e =
      error_log<T>()[info != nullptr ? std::string(info->test_suite_name()) + "." + info->name() : std::string("?")];
  e.max_relative_error = std::max(e.max_relative_error, r.max_relative_error);
  e.max_bound_ratio = std::max(e.max_bound_ratio, r.max_bound_ratio);
  e.checked += r.checked;
}
template <class T>
void print_error_summary(const char* suite) {
  double worst = 0;
  const std::string prefix = std::string(suite) + ".";
  for (const auto& [test, e] : error_log<T>()) {
    if (test.rfind(prefix, 0) != 0) continue;
    std::printf("linrec error summary: %s max rel. error %.3e (max error / bound %.3f) over %lld values\n",
                test.c_str(), e.max_relative_error, e.max_bound_ratio, static_cast<long long>(e.checked));
    worst = std::max(worst, e.max_relative_error);
  }
  std::printf("linrec error summary: %s all max rel. error %.3e\n", suite, worst);
  ::testing::Test::RecordProperty("max_relative_error", std::to_string(worst));
}

inline std::string describe(const reference_result& r) {
  return "checked " + std::to_string(r.checked) + ", max bound ratio " + std::to_string(r.max_bound_ratio) +
         " at " + std::to_string(r.worst_index) + ", max rel. error " + std::to_string(r.max_relative_error) +
         ", NaN/Inf mismatches " + std::to_string(r.special_mismatches) + " (first at " +
         std::to_string(r.first_special_mismatch) + ")";
}

template <class T>
std::span<const T> view(const std::vector<T>& v) {
  return {v.data(), v.size()};
}

// What is solved: the (a, b) form unless told otherwise.
struct shape {
  std::int64_t batch = 1;
  std::int64_t length = 0;
  batch_layout layout = batch_layout::row_major;
  bool per_sequence_x0 = false;
};

// Runs scanlab (with the given options) on the device copy of h; returns x (or the final states).
template <class T, class Source>
std::vector<T> run_scanlab(const Source& src, const host_problem<T>& h, const shape& s, bool final_only,
                           ld::linrec_options options = {}) {
  const std::int64_t n = s.batch * s.length;
  device_buffer<T> d_x(final_only ? s.batch : n);
  device_buffer<T> d_x0s(view(h.x0s));
  const T* x0s = h.x0s.empty() ? nullptr : d_x0s.data();
  T* x = final_only ? nullptr : d_x.data();
  T* fin = final_only ? d_x.data() : nullptr;
  query_and_run(
      [&](void* temp, std::size_t& bytes) {
        if (s.layout == batch_layout::interleaved) {
          return ld::dispatch_columns<policy<T>>(temp, bytes, src, x, fin, s.batch, s.length, x0s, h.x0, nullptr,
                                                 options);
        }
        return ld::dispatch_rows<policy<T>, rows_policy<T>>(temp, bytes, src, x, fin, s.batch, s.length, x0s, h.x0,
                                                            nullptr, options);
      },
      d_x);
  return d_x.to_host();
}

template <class T>
reference_operands_t<T> reference_operands(const host_problem<T>& h, reference_form kind = reference_form::ab, double alpha = 0) {
  reference_operands_t<T> ops;
  ops.kind = kind;
  ops.p = view(h.p);
  if (kind != reference_form::ema) ops.q = view(h.q);
  ops.alpha = alpha;
  return ops;
}

// scanlab and CUB on the (a, b) form of h, both checked against the reference.
template <class T>
void check_ab(const host_problem<T>& h, const shape& s, ld::linrec_options options = {}, bool with_cub = true) {
  SCOPED_TRACE("batch " + std::to_string(s.batch) + " x length " + std::to_string(s.length) +
               (s.layout == batch_layout::interleaved ? " interleaved" : " row-major"));
  device_buffer<T> d_p(view(h.p));
  device_buffer<T> d_q(view(h.q));
  const ld::ab_source<T> src{d_p.data(), d_q.data()};
  const std::vector<T> x = run_scanlab(src, h, s, false, options);
  const auto ops = reference_operands(h);
  const bool interleaved = s.layout == batch_layout::interleaved;
  const auto r = reference_check(ops, s.batch, s.length, interleaved, view(h.x0s), h.x0, view(x), false);
  note_errors<T>(r);
  EXPECT_TRUE(r.pass()) << "scanlab: " << describe(r);
  if (!with_cub) return;
  device_buffer<T> d_x0s(view(h.x0s));
  cubx::problem<T> pr;
  pr.p = d_p.data();
  pr.q = d_q.data();
  pr.x0s = h.x0s.empty() ? nullptr : d_x0s.data();
  pr.x0 = h.x0;
  pr.batch = s.batch;
  pr.length = s.length;
  pr.interleaved = interleaved;
  device_buffer<T> d_cub(s.batch * s.length);
  query_and_run([&](void* temp, std::size_t& bytes) { return cubx::solve(temp, bytes, pr, d_cub.data(), nullptr); },
                d_cub);
  const std::vector<T> y = d_cub.to_host();
  const auto rc = reference_check(ops, s.batch, s.length, interleaved, view(h.x0s), h.x0, view(y), false);
  EXPECT_TRUE(rc.pass()) << "CUB: " << describe(rc);
}

inline std::vector<std::int64_t> single_sizes(std::int64_t tile, std::uint64_t seed) {
  std::vector<std::int64_t> sizes = boundary_sizes(tile, 3);
  const std::int64_t window = 32 * tile;  // a look-back window of tiles
  for (std::int64_t m : {window, 2 * window, 33 * window}) {
    for (std::int64_t d : {-1, 0, 1}) sizes.push_back(m + d);
  }
  for (std::int64_t r : random_sizes(4, 3 * window, seed)) sizes.push_back(r);
  return capped(sizes);
}

// ---- test bodies ----

template <class T>
void single_sequence_test(a_kind kind) {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  SCOPED_TRACE(name(kind));
  for (std::int64_t n : single_sizes(tile_of<T>(), seed)) {
    const auto h = make_problem<T>(n, kind, seed + static_cast<std::uint64_t>(n));
    check_ab(h, shape{.batch = 1, .length = n});
  }
}

// Every launch mode, with capped grids (many look-back rounds): the same bits. The largest
// size has more tiles than a resident grid and spans six look-back windows, so the full
// grid's look-backs find the window prefixes of the same step not yet out and form them
// from the earlier windows (tile_state's speculative first poll, or its walk).
template <class T>
void modes_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t tile = tile_of<T>();
  for (std::int64_t n : capped({3 * tile + 5, 40 * tile - 1, 70 * tile + 3, 6 * 32 * tile + 11})) {
    const auto h = make_problem<T>(n, a_kind::mixed, seed + 7);
    device_buffer<T> d_p(view(h.p));
    device_buffer<T> d_q(view(h.q));
    const ld::ab_source<T> src{d_p.data(), d_q.data()};
    const shape s{.batch = 1, .length = n};
    const std::vector<T> reference = run_scanlab(src, h, s, false);
    const auto r = reference_check(reference_operands(h), 1, n, false, view(h.x0s), h.x0, view(reference), false);
    EXPECT_TRUE(r.pass()) << describe(r);
    for (const ld::linrec_options o :
         {ld::linrec_options{.mode = ld::linrec_mode::cooperative, .max_blocks = 2},
          ld::linrec_options{.mode = ld::linrec_mode::cooperative, .max_blocks = 5},
          ld::linrec_options{.mode = ld::linrec_mode::tickets},
          ld::linrec_options{.mode = ld::linrec_mode::tickets, .max_blocks = 3}}) {
      SCOPED_TRACE("mode " + std::to_string(static_cast<int>(o.mode)) + ", max blocks " + std::to_string(o.max_blocks));
      const std::vector<T> x = run_scanlab(src, h, s, false, o);
      ASSERT_EQ(x.size(), reference.size());
      EXPECT_EQ(0, std::memcmp(x.data(), reference.data(), x.size() * sizeof(T))) << "n = " << n;
    }
    // Repeated runs: bitwise the same.
    for (int run = 0; run < 3; ++run) {
      const std::vector<T> x = run_scanlab(src, h, s, false);
      EXPECT_EQ(0, std::memcmp(x.data(), reference.data(), x.size() * sizeof(T))) << "run " << run;
    }
  }
}

template <class T>
void batched_test(batch_layout layout) {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t tile = tile_of<T>();
  const std::vector<std::pair<std::int64_t, std::int64_t>> shapes = {
      {1, 1000},   {1000, 1},      {5, 3},          {17, 2},         {300, 100},   {7, tile - 1},
      {33, tile + 1}, {3, 3 * tile}, {1024, 64},     {2, 100000},     {200, 999},   {0, 10},
      {10, 0},     {4097, 33},     {2, tile},       {64, 4 * tile + 7}};
  for (const auto& [batch, length] : shapes) {
    if (batch * length > max_test_n()) continue;
    for (bool per_sequence : {false, true}) {
      auto h = make_problem<T>(batch * length, a_kind::mixed, seed + static_cast<std::uint64_t>(batch * 31 + length));
      if (per_sequence) h.x0s = random_states<T>(batch, seed + 5);
      else h.x0 = T{};  // the batched API without initial states means zeros
      check_ab(h, shape{.batch = batch, .length = length, .layout = layout, .per_sequence_x0 = per_sequence});
    }
  }
}

// Interleaved batches through the segmented path, whatever the automatic choice.
template <class T>
void interleaved_segments_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  for (const auto& [batch, length] : std::vector<std::pair<std::int64_t, std::int64_t>>{{3, 1000}, {40, 257}, {2, 5000}}) {
    for (std::int64_t segments : {1, 2, 7, 64}) {
      SCOPED_TRACE("segments " + std::to_string(segments));
      auto h = make_problem<T>(batch * length, a_kind::contracting, seed + static_cast<std::uint64_t>(segments));
      h.x0s = random_states<T>(batch, seed + 3);
      check_ab(h, shape{.batch = batch, .length = length, .layout = batch_layout::interleaved},
               ld::linrec_options{.segments = segments}, false);
    }
  }
}

// The (lambda, u) form and the EMA, one sequence and batched.
template <class T>
void forms_test() {
  SCANLAB_LINREC_SKIP_FORMS_OF(T) {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (const auto& [batch, length] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {1, 0}, {1, 1}, {1, 12345}, {1, 300000}, {16, 5000}, {1000, 37}}) {
    if (batch * length > max_test_n()) continue;
    for (batch_layout layout : {batch_layout::row_major, batch_layout::interleaved}) {
      SCOPED_TRACE("batch " + std::to_string(batch) + " x " + std::to_string(length));
      auto h = make_problem<T>(batch * length, a_kind::contracting, seed + static_cast<std::uint64_t>(length));
      for (auto& l : h.p) l = make_value<T>(unit(rng));  // lambda in [0, 1)
      h.x0s = random_states<T>(batch, seed + 11);
      const shape s{.batch = batch, .length = length, .layout = layout, .per_sequence_x0 = true};
      device_buffer<T> d_p(view(h.p));
      device_buffer<T> d_q(view(h.q));
      {
        const ld::lambda_source<T> src{d_p.data(), d_q.data()};
        const auto x = run_scanlab(src, h, s, false);
        const auto r = reference_check(reference_operands(h, reference_form::lambda), batch, length,
                                  layout == batch_layout::interleaved, view(h.x0s), h.x0, view(x), false);
        note_errors<T>(r);
        EXPECT_TRUE(r.pass()) << "lambda form: " << describe(r);
      }
      for (const T alpha : {make_value<T>(0.01), make_value<T>(0.5), make_value<T>(1)}) {
        const auto src = scanlab::linrec_ema(static_cast<const T*>(d_p.data()), alpha);
        const auto x = run_scanlab(src, h, s, false);
        const auto r = reference_check(reference_operands(h, reference_form::ema, to_double(alpha)), batch, length,
                                       layout == batch_layout::interleaved, view(h.x0s), h.x0, view(x), false);
        note_errors<T>(r);
        EXPECT_TRUE(r.pass()) << "ema alpha " << to_double(alpha) << ": " << describe(r);
      }
    }
  }
  }
}

// Final states only, every layout, lengths 0 and 1 included.
template <class T>
void final_states_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t tile = tile_of<T>();
  for (const auto& [batch, length] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {1, 0}, {1, 1}, {1, tile}, {1, 40 * tile + 3}, {5, 0}, {7, 1}, {100, 1000}, {3, 50000}, {20000, 3}}) {
    if (batch * length > max_test_n()) continue;
    for (batch_layout layout : {batch_layout::row_major, batch_layout::interleaved}) {
      SCOPED_TRACE("batch " + std::to_string(batch) + " x " + std::to_string(length));
      auto h = make_problem<T>(batch * length, a_kind::mixed, seed + static_cast<std::uint64_t>(batch + length));
      h.x0s = random_states<T>(batch, seed + 13);
      device_buffer<T> d_p(view(h.p));
      device_buffer<T> d_q(view(h.q));
      const ld::ab_source<T> src{d_p.data(), d_q.data()};
      const shape s{.batch = batch, .length = length, .layout = layout, .per_sequence_x0 = true};
      const auto fin = run_scanlab(src, h, s, true);
      const auto r = reference_check(reference_operands(h), batch, length, layout == batch_layout::interleaved,
                                view(h.x0s), h.x0, view(fin), true);
      note_errors<T>(r);
      EXPECT_TRUE(r.pass()) << describe(r);
    }
  }
}

// NaN and Inf propagate within their sequence (until a reset) and never into another one.
template <class T>
void special_values_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const T nan = nan_value<T>();
  const T inf = inf_value<T>();
  const std::int64_t length = 3 * tile_of<T>() + 11;
  for (batch_layout layout : {batch_layout::row_major, batch_layout::interleaved}) {
    const std::int64_t batch = 4;
    auto h = make_problem<T>(batch * length, a_kind::contracting, seed + 17);
    h.x0s = random_states<T>(batch, seed + 19);
    const auto at = [&](std::int64_t k, std::int64_t t) -> std::size_t {
      return static_cast<std::size_t>(layout == batch_layout::interleaved ? t * batch + k : k * length + t);
    };
    const std::int64_t nan_b = 100, nan_a = length / 3, reset = 2 * length / 3;
    h.q[at(1, nan_b)] = nan;          // NaN in b of sequence 1
    h.p[at(2, nan_a)] = nan;          // NaN in a of sequence 2 ...
    h.p[at(2, reset)] = T{};         // ... until a reset
    h.q[at(3, length - 1)] = inf;     // Inf at the very end of the last sequence
    h.x0s[0] = nan;                   // NaN initial state: sequence 0 is NaN (no a is 0 nor underflows early)
    for (std::int64_t t = 0; t < length; ++t) h.p[at(0, t)] = make_value<T>(0.999);
    check_ab(h, shape{.batch = batch, .length = length, .layout = layout, .per_sequence_x0 = true});
    // The results themselves, not only the agreement with the reference.
    device_buffer<T> d_p(view(h.p));
    device_buffer<T> d_q(view(h.q));
    const auto x = run_scanlab(ld::ab_source<T>{d_p.data(), d_q.data()}, h,
                               shape{.batch = batch, .length = length, .layout = layout}, false);
    EXPECT_TRUE(is_nan(x[at(0, length - 1)]));
    EXPECT_FALSE(is_nan(x[at(1, nan_b - 1)]));
    EXPECT_TRUE(is_nan(x[at(1, nan_b)]));
    EXPECT_TRUE(is_nan(x[at(1, length - 1)]));
    EXPECT_FALSE(is_nan(x[at(2, nan_a - 1)]));
    EXPECT_TRUE(is_nan(x[at(2, reset - 1)]));
    EXPECT_FALSE(is_nan(x[at(2, reset)]));
    EXPECT_FALSE(is_nan(x[at(2, length - 1)]));
    EXPECT_TRUE(is_inf(x[at(3, length - 1)]));
    EXPECT_FALSE(is_nan(x[at(3, length - 2)]));
  }
}

// In place (x over b, x over a) and misaligned arrays give the same bits as the plain call.
template <class T>
void in_place_and_alignment_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t n = std::min<std::int64_t>(5 * tile_of<T>() + 3, max_test_n());
  const auto h = make_problem<T>(n, a_kind::contracting, seed + 23);
  std::size_t bytes = 0;
  SCANLAB_CHECK(linear_recurrence<T>(nullptr, bytes, nullptr, nullptr, nullptr, n, h.x0));
  device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
  device_buffer<T> d_a(view(h.p));
  device_buffer<T> d_b(view(h.q));
  device_buffer<T> d_x(n);
  SCANLAB_CHECK(linear_recurrence<T>(temp.data(), bytes, d_a.data(), d_b.data(), d_x.data(), n, h.x0));
  const auto expected = d_x.to_host();
  const auto r = reference_check(reference_operands(h), 1, n, false, {}, h.x0, view(expected), false);
  EXPECT_TRUE(r.pass()) << describe(r);
  // x over b
  SCANLAB_CHECK(linear_recurrence<T>(temp.data(), bytes, d_a.data(), d_b.data(), d_b.data(), n, h.x0));
  auto got = d_b.to_host();
  EXPECT_EQ(0, std::memcmp(got.data(), expected.data(), got.size() * sizeof(T))) << "x over b";
  // x over a
  d_b.copy_from(view(h.q));
  SCANLAB_CHECK(linear_recurrence<T>(temp.data(), bytes, d_a.data(), d_b.data(), d_a.data(), n, h.x0));
  got = d_a.to_host();
  EXPECT_EQ(0, std::memcmp(got.data(), expected.data(), got.size() * sizeof(T))) << "x over a";
  // Misaligned by one element: inputs, output, both.
  device_buffer<T> d_a1(n + 1), d_b1(n + 1), d_x1(n + 1);
  std::vector<T> shifted_a(static_cast<std::size_t>(n + 1)), shifted_b(static_cast<std::size_t>(n + 1));
  std::copy(h.p.begin(), h.p.end(), shifted_a.begin() + 1);
  std::copy(h.q.begin(), h.q.end(), shifted_b.begin() + 1);
  d_a1.copy_from(view(shifted_a));
  d_b1.copy_from(view(shifted_b));
  d_a.copy_from(view(h.p));
  d_b.copy_from(view(h.q));
  for (int which = 0; which < 3; ++which) {
    const T* a = which == 1 ? d_a.data() : d_a1.data() + 1;
    const T* b = which == 1 ? d_b.data() : d_b1.data() + 1;
    T* x = which == 0 ? d_x.data() : d_x1.data() + 1;
    SCANLAB_CHECK(linear_recurrence<T>(temp.data(), bytes, a, b, x, n, h.x0));
    SCANLAB_CHECK(cudaDeviceSynchronize());
    std::vector<T> all = which == 0 ? d_x.to_host() : d_x1.to_host();
    const T* first = which == 0 ? all.data() : all.data() + 1;
    EXPECT_EQ(0, std::memcmp(first, expected.data(), static_cast<std::size_t>(n) * sizeof(T))) << "misaligned case " << which;
  }
}

template <class T>
void api_contract_test() {
  std::size_t bytes = 0;
  EXPECT_EQ(cudaErrorInvalidValue, (linear_recurrence<T>(nullptr, bytes, nullptr, nullptr, nullptr, -1, T{})));
  EXPECT_EQ(cudaErrorInvalidValue,
            (linear_recurrence_batched<T>(nullptr, bytes, nullptr, nullptr, nullptr, std::int64_t{1} << 40,
                                          std::int64_t{1} << 40, batch_layout::row_major)));
  // Too little temp storage.
  const std::int64_t n = 10 * tile_of<T>();
  ASSERT_EQ(cudaSuccess, (linear_recurrence<T>(nullptr, bytes, nullptr, nullptr, nullptr, n, T{})));
  EXPECT_GE(bytes, 1u);
  device_buffer<T> d_a(n), d_b(n), d_x(n);
  device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
  std::size_t too_little = bytes - 1;
  EXPECT_EQ(cudaErrorInvalidValue,
            (linear_recurrence<T>(temp.data(), too_little, d_a.data(), d_b.data(), d_x.data(), n, T{})));
  // Mismatched lengths: the span forms refuse before enqueuing anything.
  const std::span<const T> a(d_a.data(), static_cast<std::size_t>(n));
  const std::span<const T> b_short(d_b.data(), static_cast<std::size_t>(n - 1));
  const std::span<T> x(d_x.data(), static_cast<std::size_t>(n));
  EXPECT_EQ(cudaErrorInvalidValue, (linear_recurrence<T>(temp.data(), bytes, a, b_short, x, T{})));
  if constexpr (forms_tested<T>) {
    EXPECT_EQ(cudaErrorInvalidValue, (linear_recurrence_lambda<T>(temp.data(), bytes, a, b_short, x, T{})));
  }
  // n == 0: nothing written, success; final of an empty sequence is x0.
  EXPECT_EQ(cudaSuccess, (linear_recurrence<T>(temp.data(), bytes, d_a.data(), d_b.data(), d_x.data(), 0, T{})));
  device_buffer<T> d_final(1);
  std::size_t final_bytes = 0;
  ASSERT_EQ(cudaSuccess, (linear_recurrence_final<T>(nullptr, final_bytes, d_a.data(), d_b.data(), d_final.data(), 0, T{})));
  device_buffer<unsigned char> final_temp(static_cast<std::int64_t>(final_bytes));
  EXPECT_EQ(cudaSuccess, (linear_recurrence_final<T>(final_temp.data(), final_bytes, d_a.data(), d_b.data(),
                                                     d_final.data(), 0, make_value<T>(2.5))));
  EXPECT_EQ(to_double(d_final.to_host()[0]), 2.5);
}

// ---- short rows: the rows kernel (whole sequences per tile, no look-back) ----

// Lengths around the rows kernel's rule (tile_items a multiple of the length, or the whole
// input in one tile: tile - 1, tile, tile + 1, tile / 2 for the rows shape's tile and the
// look-back shape's, which takes the look-back kernel) and the usual short ones, each with
// one row, a few, a partial last tile (5 tiles and a row), and many tiles (a block walks
// several with a grid cap). At most `budget` elements per case.
inline std::vector<std::pair<std::int64_t, std::int64_t>> short_row_shapes(std::int64_t rows_tile, std::int64_t tile,
                                                                           std::int64_t budget) {
  std::vector<std::pair<std::int64_t, std::int64_t>> shapes;
  budget = std::min(budget, max_test_n());
  for (std::int64_t length : {std::int64_t{1}, std::int64_t{2}, std::int64_t{3}, std::int64_t{31}, std::int64_t{32},
                              std::int64_t{33}, std::int64_t{255}, std::int64_t{256}, std::int64_t{257},
                              std::int64_t{4095}, std::int64_t{4096}, std::int64_t{4097}, rows_tile / 2, rows_tile - 1,
                              rows_tile, rows_tile + 1, tile / 2, tile - 1, tile, tile + 1}) {
    const std::int64_t per_tile = std::max<std::int64_t>(1, rows_tile / length);
    for (std::int64_t batch : {std::int64_t{1}, std::int64_t{3}, 5 * per_tile + 1,
                               std::min(budget / length, 40 * per_tile + 3)}) {
      if (batch < 1 || batch * length > budget) continue;
      if (std::find(shapes.begin(), shapes.end(), std::make_pair(batch, length)) == shapes.end()) {
        shapes.emplace_back(batch, length);
      }
    }
  }
  return shapes;
}

// Forward solves and final states of short rows, with and without per-sequence initial
// states, against the reference and CUB; the same bits with a grid of two blocks (many
// tiles per block through the rows kernel's pipeline) and from the look-back kernel (a
// forced launch mode, where its bits are comparable: look_back_bits_comparable).
template <class T>
void short_rows_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  for (const auto& [batch, length] : short_row_shapes(rows_tile_of<T>(), tile_of<T>(), std::int64_t{1} << 19)) {
    for (bool per_sequence : {false, true}) {
      auto h = make_problem<T>(batch * length, a_kind::mixed, seed + static_cast<std::uint64_t>(batch * 43 + length));
      if (per_sequence) h.x0s = random_states<T>(batch, seed + 7);
      const shape s{.batch = batch, .length = length, .per_sequence_x0 = per_sequence};
      SCOPED_TRACE("short rows: batch " + std::to_string(batch) + " x length " + std::to_string(length) +
                   (per_sequence ? ", x0s" : ", x0"));
      check_ab(h, s);
      device_buffer<T> d_p(view(h.p));
      device_buffer<T> d_q(view(h.q));
      const ld::ab_source<T> src{d_p.data(), d_q.data()};
      const std::vector<T> x = run_scanlab(src, h, s, false);
      const std::vector<T> two_blocks = run_scanlab(src, h, s, false, ld::linrec_options{.max_blocks = 2});
      EXPECT_EQ(0, std::memcmp(x.data(), two_blocks.data(), x.size() * sizeof(T))) << "two blocks";
      if (look_back_bits_comparable<T>(batch, length)) {
        const std::vector<T> look_back =
            run_scanlab(src, h, s, false, ld::linrec_options{.mode = ld::linrec_mode::tickets});
        EXPECT_EQ(0, std::memcmp(x.data(), look_back.data(), x.size() * sizeof(T))) << "the look-back kernel";
      }
      const std::vector<T> fin = run_scanlab(src, h, s, true);
      const auto r = reference_check(reference_operands(h), batch, length, false, view(h.x0s), h.x0, view(fin), true);
      note_errors<T>(r);
      EXPECT_TRUE(r.pass()) << "final states: " << describe(r);
    }
  }
}

// NaN and Inf in short rows stay in their row (until a reset), NaN initial states included;
// rows of resets only; one-element rows.
template <class T>
void short_rows_special_values_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const T nan = nan_value<T>();
  const T inf = inf_value<T>();
  {
    const std::int64_t batch = 64, length = 256;
    auto h = make_problem<T>(batch * length, a_kind::contracting, seed + 53);
    h.x0s = random_states<T>(batch, seed + 59);
    const auto at = [&](std::int64_t k, std::int64_t t) { return static_cast<std::size_t>(k * length + t); };
    h.q[at(5, 10)] = nan;
    h.p[at(9, 20)] = nan;
    h.p[at(9, 200)] = T{};  // a reset ends the NaN of row 9
    for (std::int64_t t = 0; t < length; ++t) h.p[at(12, t)] = make_value<T>(0.999);
    h.x0s[12] = nan;  // row 12: NaN from its initial state on
    h.q[at(20, length - 1)] = inf;
    for (std::int64_t t = 0; t < length; ++t) h.p[at(30, t)] = T{};  // row 30: x = b
    const shape s{.batch = batch, .length = length, .per_sequence_x0 = true};
    check_ab(h, s);
    device_buffer<T> d_p(view(h.p));
    device_buffer<T> d_q(view(h.q));
    const auto x = run_scanlab(ld::ab_source<T>{d_p.data(), d_q.data()}, h, s, false);
    EXPECT_FALSE(is_nan(x[at(5, 9)]));
    EXPECT_TRUE(is_nan(x[at(5, 10)]));
    EXPECT_TRUE(is_nan(x[at(5, length - 1)]));
    EXPECT_FALSE(is_nan(x[at(4, length - 1)]));
    EXPECT_FALSE(is_nan(x[at(6, 0)]));
    EXPECT_FALSE(is_nan(x[at(9, 19)]));
    EXPECT_TRUE(is_nan(x[at(9, 20)]));
    EXPECT_TRUE(is_nan(x[at(9, 199)]));
    EXPECT_FALSE(is_nan(x[at(9, 200)]));
    EXPECT_FALSE(is_nan(x[at(9, length - 1)]));
    EXPECT_TRUE(is_nan(x[at(12, 0)]));
    EXPECT_TRUE(is_nan(x[at(12, length - 1)]));
    EXPECT_FALSE(is_nan(x[at(11, length - 1)]));
    EXPECT_FALSE(is_nan(x[at(13, 0)]));
    EXPECT_TRUE(is_inf(x[at(20, length - 1)]));
    EXPECT_FALSE(is_nan(x[at(21, 0)]));
    for (std::int64_t t = 0; t < length; ++t) EXPECT_EQ(0, std::memcmp(&x[at(30, t)], &h.q[at(30, t)], sizeof(T)));
  }
  {
    // One-element rows: x = a x0 + b, or b where a == 0 (also for a NaN x0).
    const std::int64_t batch = 1000;
    auto h = make_problem<T>(batch, a_kind::contracting, seed + 61);
    h.x0s = random_states<T>(batch, seed + 67);
    h.x0s[3] = nan;
    h.p[3] = make_value<T>(0.5);
    h.x0s[4] = nan;
    h.p[4] = T{};
    const shape s{.batch = batch, .length = 1, .per_sequence_x0 = true};
    check_ab(h, s);
    device_buffer<T> d_p(view(h.p));
    device_buffer<T> d_q(view(h.q));
    const auto x = run_scanlab(ld::ab_source<T>{d_p.data(), d_q.data()}, h, s, false);
    EXPECT_TRUE(is_nan(x[3]));
    EXPECT_EQ(0, std::memcmp(&x[4], &h.q[4], sizeof(T)));
    EXPECT_FALSE(is_nan(x[2]));
    EXPECT_FALSE(is_nan(x[5]));
  }
}

// Long rows chained (ld::chained_rows: a block takes whole sequences of whole tiles and
// carries the state from tile to tile), forced on small batches through the
// chain_min_batch hook: lengths of 2 and 3 rows tiles, and one element more (not whole
// tiles: the look-back kernel), with and without per-sequence states, x and final states
// against the reference; the same bits on a grid of one block (every sequence in turn
// through one chain) and of two. A NaN in one sequence's first tile is carried through its
// later tiles and does not reach the next sequence the block takes.
template <class T>
void chained_rows_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t rows_tile = rows_tile_of<T>();
  const ld::linrec_options chain{.chain_min_batch = 1};
  const ld::linrec_options one_block{.max_blocks = 1, .chain_min_batch = 1};
  const ld::linrec_options two_blocks{.max_blocks = 2, .chain_min_batch = 1};
  for (std::int64_t length : {2 * rows_tile, 3 * rows_tile, 3 * rows_tile + 1}) {
    for (std::int64_t batch : {std::int64_t{1}, std::int64_t{2}, std::int64_t{7}}) {
      if (batch * length > max_test_n()) continue;
      for (bool per_sequence : {false, true}) {
        SCOPED_TRACE("chained rows: batch " + std::to_string(batch) + " x length " + std::to_string(length) +
                     (per_sequence ? ", x0s" : ", x0"));
        auto h = make_problem<T>(batch * length, a_kind::mixed, seed + static_cast<std::uint64_t>(batch * 31 + length));
        if (per_sequence) h.x0s = random_states<T>(batch, seed + 11);
        const shape s{.batch = batch, .length = length, .per_sequence_x0 = per_sequence};
        check_ab(h, s, chain, false);
        device_buffer<T> d_p(view(h.p));
        device_buffer<T> d_q(view(h.q));
        const ld::ab_source<T> src{d_p.data(), d_q.data()};
        const std::vector<T> x = run_scanlab(src, h, s, false, chain);
        EXPECT_EQ(0, std::memcmp(x.data(), run_scanlab(src, h, s, false, one_block).data(), x.size() * sizeof(T)))
            << "one block";
        EXPECT_EQ(0, std::memcmp(x.data(), run_scanlab(src, h, s, false, two_blocks).data(), x.size() * sizeof(T)))
            << "two blocks";
        const std::vector<T> fin = run_scanlab(src, h, s, true, chain);
        const auto r = reference_check(reference_operands(h), batch, length, false, view(h.x0s), h.x0, view(fin), true);
        note_errors<T>(r);
        EXPECT_TRUE(r.pass()) << "final states: " << describe(r);
      }
    }
  }
  {
    const std::int64_t batch = 3, length = 3 * rows_tile;
    auto h = make_problem<T>(batch * length, a_kind::contracting, seed + 71);
    const auto at = [&](std::int64_t k, std::int64_t t) { return static_cast<std::size_t>(k * length + t); };
    h.q[at(0, 5)] = nan_value<T>();
    for (std::int64_t t = 0; t < length; ++t) h.p[at(0, t)] = make_value<T>(0.999);  // no underflow to a reset
    const shape s{.batch = batch, .length = length};
    device_buffer<T> d_p(view(h.p));
    device_buffer<T> d_q(view(h.q));
    const auto x = run_scanlab(ld::ab_source<T>{d_p.data(), d_q.data()}, h, s, false, one_block);
    EXPECT_FALSE(is_nan(x[at(0, 4)]));
    EXPECT_TRUE(is_nan(x[at(0, 5)]));
    EXPECT_TRUE(is_nan(x[at(0, rows_tile + 3)])) << "carried into the next tile";
    EXPECT_TRUE(is_nan(x[at(0, length - 1)]));
    for (std::int64_t k = 1; k < batch; ++k) {
      for (std::int64_t t = 0; t < length; ++t) {
        if (is_nan(x[at(k, t)])) {
          ADD_FAILURE() << "NaN in sequence " << k << " at " << t;
          return;
        }
      }
    }
  }
}

// *Large*: 2^28 elements as one sequence, 2^16 sequences of 2^12, 16 of 2^24 (both layouts).
template <class T>
void large_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t big = std::int64_t{1} << 28;
  {
    const auto h = make_problem<T>(big, a_kind::near_one, seed + 29);
    check_ab(h, shape{.batch = 1, .length = big});
  }
  for (const auto& [batch, length, layout] :
       std::vector<std::tuple<std::int64_t, std::int64_t, batch_layout>>{
           {std::int64_t{1} << 16, std::int64_t{1} << 12, batch_layout::row_major},
           {std::int64_t{1} << 16, std::int64_t{1} << 12, batch_layout::interleaved},
           {16, std::int64_t{1} << 24, batch_layout::row_major},
           {16, std::int64_t{1} << 24, batch_layout::interleaved}}) {
    auto h = make_problem<T>(batch * length, a_kind::mixed, seed + 31);
    h.x0s = random_states<T>(batch, seed + 37);
    check_ab(h, shape{.batch = batch, .length = length, .layout = layout, .per_sequence_x0 = true});
  }
}

}  // namespace scanlab::test::linrec

// One set of tests per element type.
#define SCANLAB_LINREC_TESTS(suite, T)                                                                      \
  class suite : public scanlab::test::gpu_test {};                                                          \
  TEST_F(suite, Contracting) { scanlab::test::linrec::single_sequence_test<T>(scanlab::test::linrec::a_kind::contracting); } \
  TEST_F(suite, NearOne) { scanlab::test::linrec::single_sequence_test<T>(scanlab::test::linrec::a_kind::near_one); } \
  TEST_F(suite, OnesIsPrefixSum) { scanlab::test::linrec::single_sequence_test<T>(scanlab::test::linrec::a_kind::ones); } \
  TEST_F(suite, MixedSignsAndResets) { scanlab::test::linrec::single_sequence_test<T>(scanlab::test::linrec::a_kind::mixed); } \
  TEST_F(suite, LaunchModesBitwiseEqual) { scanlab::test::linrec::modes_test<T>(); }                     \
  TEST_F(suite, BatchedRowMajor) { scanlab::test::linrec::batched_test<T>(scanlab::batch_layout::row_major); } \
  TEST_F(suite, BatchedInterleaved) { scanlab::test::linrec::batched_test<T>(scanlab::batch_layout::interleaved); } \
  TEST_F(suite, InterleavedSegments) { scanlab::test::linrec::interleaved_segments_test<T>(); }           \
  TEST_F(suite, LambdaAndEmaForms) { scanlab::test::linrec::forms_test<T>(); }                            \
  TEST_F(suite, FinalStates) { scanlab::test::linrec::final_states_test<T>(); }                           \
  TEST_F(suite, NanAndInfPropagation) { scanlab::test::linrec::special_values_test<T>(); }                \
  TEST_F(suite, InPlaceAndMisaligned) { scanlab::test::linrec::in_place_and_alignment_test<T>(); }        \
  TEST_F(suite, ApiContract) { scanlab::test::linrec::api_contract_test<T>(); }                         \
  TEST_F(suite, ShortRows) { scanlab::test::linrec::short_rows_test<T>(); }                               \
  TEST_F(suite, ShortRowsNanAndInf) { scanlab::test::linrec::short_rows_special_values_test<T>(); }       \
  TEST_F(suite, ChainedRows) { scanlab::test::linrec::chained_rows_test<T>(); }                           \
  TEST_F(suite, ErrorSummary) { scanlab::test::linrec::print_error_summary<T>(#suite); }
