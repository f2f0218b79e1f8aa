// Shared bodies of the tests of reverse recurrences and of the backward pass
// (scanlab/algorithms/linrec.cuh), one translation unit per element type
// (test_linrec_grad_float.cu, test_linrec_grad_double.cu).
//
//   reverse   x[i] = a[i] x[i+1] + b[i], x[n] = x_end: against the sequential long double
//             reverse solve (the error bound of linrec_reference.hpp) and CUB's affine scan
//             over the maps read from the end; one sequence, both batch layouts, final
//             states, the (lambda, u) and EMA forms, NaN/Inf, launch modes, in place
//   backward  dL/da, dL/db, dL/dx0 of x = linear_recurrence(a, b, x0): against the long double
//             adjoint of the GPU's x (and CUB's scan with the same epilogue), and against
//             central finite differences in double of L = sum(w x) on n = 1 .. 64;
//             determinism, launch modes, in place, misaligned arrays, outputs left out
#pragma once

#include "linrec/linrec_test_common.cuh"

#include <scanlab/algorithms/linrec.cuh>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace scanlab::test::linrec {

// Items per tile of the backward pass on this GPU.
template <class T>
std::int64_t gradient_tile_of() {
  std::int64_t items = 0;
  SCANLAB_CHECK(scanlab::detail::device_tile_items<ld::default_linrec_gradient_policy<T>>(items));
  return items;
}
// The same for the rows kernel's backward shape.
template <class T>
std::int64_t gradient_rows_tile_of() {
  std::int64_t items = 0;
  SCANLAB_CHECK(scanlab::detail::device_tile_items<ld::default_linrec_rows_gradient_policy<T>>(items));
  return items;
}

// ---- reverse ----

// scanlab's reverse solve of the (a, b) form (x, or the final states x[0]) by the general entry point.
template <class T>
std::vector<T> run_reverse(const host_problem<T>& h, const shape& s, bool final_only,
                           const single_pass_options& options = {}) {
  const std::int64_t n = s.batch * s.length;
  device_buffer<T> d_p(view(h.p)), d_q(view(h.q)), d_x0s(view(h.x0s));
  device_buffer<T> d_out(final_only ? s.batch : n);
  T* x = final_only ? nullptr : d_out.data();
  T* fin = final_only ? d_out.data() : nullptr;
  const auto src = linrec_reverse(linrec_ab(static_cast<const T*>(d_p.data()), static_cast<const T*>(d_q.data())));
  const T* x0s = h.x0s.empty() ? nullptr : d_x0s.data();
  query_and_run(
      [&](void* temp, std::size_t& bytes) {
        return solve_linear_recurrence(temp, bytes, src, x, fin, s.batch, s.length, s.layout, x0s, h.x0, nullptr,
                                       options);
      },
      d_out);
  return d_out.to_host();
}

// CUB's generic scan over the maps read from the end.
template <class T>
std::vector<T> run_cub_reverse(const host_problem<T>& h, const shape& s) {
  device_buffer<T> d_p(view(h.p)), d_q(view(h.q)), d_x0s(view(h.x0s)), d_x(s.batch * s.length);
  cubx::problem<T> pr;
  pr.p = d_p.data();
  pr.q = d_q.data();
  pr.x0s = h.x0s.empty() ? nullptr : d_x0s.data();
  pr.x0 = h.x0;
  pr.batch = s.batch;
  pr.length = s.length;
  pr.interleaved = s.layout == batch_layout::interleaved;
  pr.reverse = true;
  query_and_run([&](void* temp, std::size_t& bytes) { return cubx::solve(temp, bytes, pr, d_x.data(), nullptr); },
                d_x);
  return d_x.to_host();
}

template <class T>
reference_result check_reverse(const host_problem<T>& h, const shape& s, std::span<const T> x, bool final_only,
                               reference_form form = reference_form::ab, double alpha = 0) {
  return reference_check(reference_operands(h, form, alpha), s.batch, s.length,
                         s.layout == batch_layout::interleaved, view(h.x0s), h.x0, x, final_only, true);
}

template <class T>
void check_reverse_ab(const host_problem<T>& h, const shape& s, bool with_cub = true) {
  SCOPED_TRACE("reverse, batch " + std::to_string(s.batch) + " x length " + std::to_string(s.length) +
               (s.layout == batch_layout::interleaved ? " interleaved" : " row-major"));
  const std::vector<T> x = run_reverse(h, s, false);
  const auto r = check_reverse(h, s, view(x), false);
  note_errors<T>(r);
  EXPECT_TRUE(r.pass()) << "scanlab: " << describe(r);
  if (!with_cub) return;
  const std::vector<T> y = run_cub_reverse(h, s);
  const auto rc = check_reverse(h, s, view(y), false);
  EXPECT_TRUE(rc.pass()) << "CUB: " << describe(rc);
}

// One sequence: 0, 1, 2, 3, tile edges +-1 (three tiles), look-back windows, 1000003.
template <class T>
void reverse_single_test(a_kind kind) {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  SCOPED_TRACE(name(kind));
  const std::int64_t tile = tile_of<T>();
  std::vector<std::int64_t> sizes = boundary_sizes(tile, 3);
  for (std::int64_t d : {-1, 0, 1}) sizes.push_back(33 * 32 * tile + d);  // 33 look-back windows
  sizes.push_back(1000003);
  for (std::int64_t n : capped(sizes)) {
    auto h = make_problem<T>(n, kind, seed + static_cast<std::uint64_t>(n));
    check_reverse_ab(h, shape{.batch = 1, .length = n});
  }
}

template <class T>
void reverse_batched_test(batch_layout layout) {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t tile = tile_of<T>();
  const std::vector<std::pair<std::int64_t, std::int64_t>> shapes = {
      {1, 1000},  {1000, 1},       {5, 3},     {17, 2},          {300, 100},      {7, tile - 1},
      {33, tile + 1}, {3, 3 * tile}, {1024, 64}, {2, 100000},    {0, 10},         {10, 0},
      {4097, 33}, {2, tile},       {64, 4 * tile + 7}};
  for (const auto& [batch, length] : shapes) {
    if (batch * length > max_test_n()) continue;
    for (bool per_sequence : {false, true}) {
      auto h = make_problem<T>(batch * length, a_kind::mixed, seed + static_cast<std::uint64_t>(batch * 37 + length));
      if (per_sequence) h.x0s = random_states<T>(batch, seed + 5);
      else h.x0 = T{};
      check_reverse_ab(h, shape{.batch = batch, .length = length, .layout = layout});
    }
  }
  // Interleaved: the segmented column path forced (the segment maps solved in reverse).
  if (layout == batch_layout::interleaved) {
    for (const auto& [batch, length] : std::vector<std::pair<std::int64_t, std::int64_t>>{{3, 1000}, {40, 257}}) {
      for (std::int64_t segments : {2, 7, 64}) {
        SCOPED_TRACE("segments " + std::to_string(segments));
        auto h = make_problem<T>(batch * length, a_kind::contracting, seed + static_cast<std::uint64_t>(segments));
        h.x0s = random_states<T>(batch, seed + 3);
        const shape s{.batch = batch, .length = length, .layout = layout};
        device_buffer<T> d_p(view(h.p)), d_q(view(h.q)), d_x0s(view(h.x0s)), d_x(batch * length), d_final(batch);
        const auto src = linrec_reverse(linrec_ab(static_cast<const T*>(d_p.data()), static_cast<const T*>(d_q.data())));
        for (bool final_only : {false, true}) {
          T* x = final_only ? nullptr : d_x.data();
          T* fin = final_only ? d_final.data() : nullptr;
          const ld::linrec_options o{.segments = segments};
          query_and_run(
              [&](void* temp, std::size_t& bytes) {
                return ld::dispatch_columns<policy<T>>(temp, bytes, src, x, fin, batch, length, d_x0s.data(), T{},
                                                       nullptr, o);
              },
              final_only ? d_final : d_x);
          const std::vector<T> got = (final_only ? d_final : d_x).to_host();
          const auto r = check_reverse(h, s, view(got), final_only);
          EXPECT_TRUE(r.pass()) << (final_only ? "final states: " : "x: ") << describe(r);
        }
      }
    }
  }
}

// Final states of reverse solves (x[0] of each sequence), lengths 0 and 1 included, and the
// (lambda, u) and EMA forms reversed.
template <class T>
void reverse_final_and_forms_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t tile = tile_of<T>();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (const auto& [batch, length] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {1, 0}, {1, 1}, {1, tile}, {1, 40 * tile + 3}, {5, 0}, {7, 1}, {100, 1000}, {3, 50000}, {20000, 3}}) {
    if (batch * length > max_test_n()) continue;
    for (batch_layout layout : {batch_layout::row_major, batch_layout::interleaved}) {
      SCOPED_TRACE("batch " + std::to_string(batch) + " x " + std::to_string(length) +
                   (layout == batch_layout::interleaved ? " interleaved" : " row-major"));
      auto h = make_problem<T>(batch * length, a_kind::mixed, seed + static_cast<std::uint64_t>(batch + length));
      h.x0s = random_states<T>(batch, seed + 13);
      const shape s{.batch = batch, .length = length, .layout = layout, .per_sequence_x0 = true};
      const auto fin = run_reverse(h, s, true);
      const auto r = check_reverse(h, s, view(fin), true);
      EXPECT_TRUE(r.pass()) << "final states: " << describe(r);
      // The other forms (where tested: forms_tested): lambda in [0, 1), the EMA of p.
      if constexpr (forms_tested<T>) {
      for (auto& l : h.p) l = make_value<T>(unit(rng));
      device_buffer<T> d_p(view(h.p)), d_q(view(h.q)), d_x0s(view(h.x0s)), d_x(batch * length);
      const auto solve = [&](auto src, reference_form form, double alpha) {
        query_and_run(
            [&](void* temp, std::size_t& bytes) {
              return solve_linear_recurrence(temp, bytes, src, d_x.data(), static_cast<T*>(nullptr), batch, length,
                                             layout, static_cast<const T*>(d_x0s.data()));
            },
            d_x);
        const std::vector<T> got = d_x.to_host();
        const auto rf = check_reverse(h, s, view(got), false, form, alpha);
        EXPECT_TRUE(rf.pass()) << "form " << static_cast<int>(form) << ": " << describe(rf);
      };
      const T* p = d_p.data();
      const T* q = d_q.data();
      solve(linrec_reverse(linrec_lambda(p, q)), reference_form::lambda, 0.0);
      solve(linrec_reverse(linrec_ema(p, make_value<T>(0.25))), reference_form::ema, 0.25);
      }
    }
  }
}

// NaN and Inf run toward the start of their sequence (until a reset) and never into another.
template <class T>
void reverse_special_values_test() {
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
    const std::int64_t nan_b = length - 100, nan_a = 2 * length / 3, reset = length / 3;
    h.q[at(1, nan_b)] = nan;       // NaN in b of sequence 1: x[nan_b] and everything before it
    h.p[at(2, nan_a)] = nan;       // NaN in a of sequence 2 ...
    h.p[at(2, reset)] = T{};      // ... until a reset, further toward the start
    h.q[at(3, 0)] = inf;           // Inf at the very start of the last sequence (its last step)
    h.x0s[0] = nan;                // NaN state after the end: sequence 0 is NaN throughout
    for (std::int64_t t = 0; t < length; ++t) h.p[at(0, t)] = make_value<T>(0.999);
    const shape s{.batch = batch, .length = length, .layout = layout, .per_sequence_x0 = true};
    check_reverse_ab(h, s);
    const auto x = run_reverse(h, s, false);
    EXPECT_TRUE(is_nan(x[at(0, 0)]));
    EXPECT_FALSE(is_nan(x[at(1, nan_b + 1)]));
    EXPECT_TRUE(is_nan(x[at(1, nan_b)]));
    EXPECT_TRUE(is_nan(x[at(1, 0)]));
    EXPECT_FALSE(is_nan(x[at(2, nan_a + 1)]));
    EXPECT_TRUE(is_nan(x[at(2, reset + 1)]));
    EXPECT_FALSE(is_nan(x[at(2, reset)]));
    EXPECT_FALSE(is_nan(x[at(2, 0)]));
    EXPECT_TRUE(is_inf(x[at(3, 0)]));
    EXPECT_FALSE(is_nan(x[at(3, 1)]));
  }
}

// Every launch mode with capped grids, and repeated runs: the same bits. In place (x over b)
// and misaligned arrays: the same bits as the plain call.
template <class T>
void reverse_modes_and_memory_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t tile = tile_of<T>();
  for (std::int64_t n : capped({3 * tile + 5, 40 * tile - 1, 70 * tile + 3})) {
    const auto h = make_problem<T>(n, a_kind::mixed, seed + 7);
    const shape s{.batch = 1, .length = n};
    const std::vector<T> reference = run_reverse(h, s, false);
    const auto r = check_reverse(h, s, view(reference), false);
    EXPECT_TRUE(r.pass()) << describe(r);
    for (const single_pass_options& o : {single_pass_options{launch_mode::cooperative, 2},
                                          single_pass_options{launch_mode::cooperative, 5},
                                          single_pass_options{launch_mode::tickets, 0},
                                          single_pass_options{launch_mode::tickets, 3}}) {
      SCOPED_TRACE("mode " + std::to_string(static_cast<int>(o.mode)) + ", max blocks " + std::to_string(o.max_blocks));
      const std::vector<T> x = run_reverse(h, s, false, o);
      EXPECT_EQ(0, std::memcmp(x.data(), reference.data(), x.size() * sizeof(T))) << "n = " << n;
    }
    for (int run = 0; run < 2; ++run) {
      const std::vector<T> x = run_reverse(h, s, false);
      EXPECT_EQ(0, std::memcmp(x.data(), reference.data(), x.size() * sizeof(T))) << "run " << run;
    }
    // In place, and misaligned by one element (inputs, output, both), through the named form.
    std::size_t bytes = 0;
    SCANLAB_CHECK(linear_recurrence_reverse<T>(nullptr, bytes, nullptr, nullptr, nullptr, n, h.x0));
    device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
    device_buffer<T> d_a(view(h.p)), d_b(view(h.q));
    SCANLAB_CHECK(linear_recurrence_reverse<T>(temp.data(), bytes, d_a.data(), d_b.data(), d_b.data(), n, h.x0));
    std::vector<T> got = d_b.to_host();
    EXPECT_EQ(0, std::memcmp(got.data(), reference.data(), got.size() * sizeof(T))) << "x over b";
    std::vector<T> shifted_a(static_cast<std::size_t>(n + 1)), shifted_b(static_cast<std::size_t>(n + 1));
    std::copy(h.p.begin(), h.p.end(), shifted_a.begin() + 1);
    std::copy(h.q.begin(), h.q.end(), shifted_b.begin() + 1);
    device_buffer<T> d_a1(view(shifted_a)), d_b1(view(shifted_b)), d_x1(n + 1), d_x(n);
    d_b.copy_from(view(h.q));
    for (int which = 0; which < 3; ++which) {
      const T* a = which == 1 ? d_a.data() : d_a1.data() + 1;
      const T* b = which == 1 ? d_b.data() : d_b1.data() + 1;
      T* x = which == 0 ? d_x.data() : d_x1.data() + 1;
      SCANLAB_CHECK(linear_recurrence_reverse<T>(temp.data(), bytes, a, b, x, n, h.x0));
      SCANLAB_CHECK(cudaDeviceSynchronize());
      const std::vector<T> all = which == 0 ? d_x.to_host() : d_x1.to_host();
      const T* first = which == 0 ? all.data() : all.data() + 1;
      EXPECT_EQ(0, std::memcmp(first, reference.data(), static_cast<std::size_t>(n) * sizeof(T)))
          << "misaligned case " << which;
    }
  }
}

// ---- backward ----

// A forward problem, x solved on the GPU, dL/dx random.
template <class T>
struct gradient_case {
  host_problem<T> h;     // a, b, x0 / x0s
  shape s;
  std::vector<T> x;      // the forward result (GPU)
  std::vector<T> grad_x;
};

template <class T>
gradient_case<T> make_gradient_case(const shape& s, a_kind kind, bool per_sequence, std::uint64_t seed) {
  gradient_case<T> c;
  c.s = s;
  const std::int64_t n = s.batch * s.length;
  c.h = make_problem<T>(n, kind, seed);
  if (per_sequence) c.h.x0s = random_states<T>(s.batch, seed + 1);
  else if (s.batch > 1) c.h.x0 = T{};  // the batched API without initial states means zeros
  c.grad_x = random_states<T>(n, seed + 2);
  // x by the forward solve (checked: the backward pass is only as good as its x).
  device_buffer<T> d_p(view(c.h.p)), d_q(view(c.h.q));
  c.x = run_scanlab(ld::ab_source<T>{d_p.data(), d_q.data()}, c.h, s, false);
  const auto r = reference_check(reference_operands(c.h), s.batch, s.length, s.layout == batch_layout::interleaved,
                                 view(c.h.x0s), c.h.x0, view(c.x), false);
  EXPECT_TRUE(r.pass()) << "forward: " << describe(r);
  return c;
}

// What the backward pass wrote.
template <class T>
struct gradients {
  std::vector<T> a, b, x0;
};

// scanlab's backward pass on the device copies of c; nullptr outputs where not wanted.
template <class T, class Policy = default_policy>
gradients<T> run_backward(const gradient_case<T>& c, bool want_a = true, bool want_b = true, bool want_x0 = true,
                          const single_pass_options& options = {}) {
  const std::int64_t n = c.s.batch * c.s.length;
  device_buffer<T> d_a(view(c.h.p)), d_x(view(c.x)), d_gx(view(c.grad_x)), d_x0s(view(c.h.x0s));
  device_buffer<T> d_ga(n), d_gb(n), d_gx0(c.s.batch);
  T* ga = want_a ? d_ga.data() : nullptr;
  T* gb = want_b ? d_gb.data() : nullptr;
  T* gx0 = want_x0 ? d_gx0.data() : nullptr;
  const T* x = want_a ? d_x.data() : nullptr;  // not read without dL/da
  const auto call = [&](void* temp, std::size_t& bytes) {
    if (c.s.batch == 1 && c.h.x0s.empty()) {  // one sequence: x0 (the batched form's default is 0)
      return linear_recurrence_backward<T, Policy>(temp, bytes, d_a.data(), x, d_gx.data(), ga, gb, gx0, n, c.h.x0,
                                                   nullptr, options);
    }
    return linear_recurrence_backward_batched<T, Policy>(temp, bytes, d_a.data(), x, d_gx.data(), ga, gb, gx0,
                                                         c.s.batch, c.s.length, c.s.layout,
                                                         c.h.x0s.empty() ? nullptr : d_x0s.data(), nullptr, options);
  };
  query_and_run(call, d_ga, d_gb, d_gx0);
  return {d_ga.to_host(), d_gb.to_host(), d_gx0.to_host()};
}

template <class T>
gradients<T> run_cub_backward(const gradient_case<T>& c) {
  const std::int64_t n = c.s.batch * c.s.length;
  device_buffer<T> d_a(view(c.h.p)), d_x(view(c.x)), d_gx(view(c.grad_x)), d_x0s(view(c.h.x0s));
  device_buffer<T> d_ga(n), d_gb(n), d_gx0(c.s.batch);
  cubx::gradient_problem<T> pr;
  pr.a = d_a.data();
  pr.x = d_x.data();
  pr.grad_x = d_gx.data();
  pr.grad_a = d_ga.data();
  pr.grad_b = d_gb.data();
  pr.grad_x0 = d_gx0.data();
  pr.x0s = c.h.x0s.empty() ? nullptr : d_x0s.data();
  pr.x0 = c.h.x0;
  pr.batch = c.s.batch;
  pr.length = c.s.length;
  pr.interleaved = c.s.layout == batch_layout::interleaved;
  query_and_run([&](void* temp, std::size_t& bytes) { return cubx::solve_gradient(temp, bytes, pr, nullptr); },
                d_gx0);
  return {d_ga.to_host(), d_gb.to_host(), d_gx0.to_host()};
}

inline std::string describe(const gradient_reference_result& r) {
  return "dL/da: " + describe(r.a) + "; dL/db: " + describe(r.b) + "; dL/dx0: " + describe(r.x0);
}

template <class T>
gradient_reference_result check_gradients(const gradient_case<T>& c, const gradients<T>& g) {
  return reference_check_gradients<T>(view(c.h.p), view(c.x), view(c.grad_x), c.s.batch, c.s.length,
                                      c.s.layout == batch_layout::interleaved, view(c.h.x0s), c.h.x0, view(g.a),
                                      view(g.b), view(g.x0));
}

template <class T>
void check_backward(const gradient_case<T>& c, bool with_cub = true) {
  SCOPED_TRACE("backward, batch " + std::to_string(c.s.batch) + " x length " + std::to_string(c.s.length) +
               (c.s.layout == batch_layout::interleaved ? " interleaved" : " row-major") +
               (c.h.x0s.empty() ? "" : ", per-sequence x0"));
  const gradients<T> g = run_backward(c);
  const auto r = check_gradients(c, g);
  note_errors<T>(r.a);
  note_errors<T>(r.b);
  note_errors<T>(r.x0);
  EXPECT_TRUE(r.pass()) << "scanlab: " << describe(r);
  if (!with_cub) return;
  const gradients<T> y = run_cub_backward(c);
  const auto rc = check_gradients(c, y);
  EXPECT_TRUE(rc.pass()) << "CUB: " << describe(rc);
}

// One sequence: 0, 1, 2, 3, the backward pass's tile edges +-1, look-back windows, 1000003.
template <class T>
void backward_single_test(a_kind kind) {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  SCOPED_TRACE(name(kind));
  const std::int64_t tile = gradient_tile_of<T>();
  std::vector<std::int64_t> sizes = boundary_sizes(tile, 3);
  for (std::int64_t d : {-1, 0, 1}) sizes.push_back(33 * 32 * tile + d);
  sizes.push_back(1000003);
  for (std::int64_t n : capped(sizes)) {
    const auto c = make_gradient_case<T>(shape{.batch = 1, .length = n}, kind, false, seed + static_cast<std::uint64_t>(n));
    check_backward(c);
  }
}

template <class T>
void backward_batched_test(batch_layout layout) {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t tile = gradient_tile_of<T>();
  const std::vector<std::pair<std::int64_t, std::int64_t>> shapes = {
      {1, 1000},  {1000, 1},       {5, 3},     {17, 2},         {300, 100},      {7, tile - 1},
      {33, tile + 1}, {3, 3 * tile}, {1024, 64}, {2, 100000},   {0, 10},         {10, 0},
      {4097, 33}, {2, tile},       {64, 4 * tile + 7}, {3, 7}};
  for (const auto& [batch, length] : shapes) {
    if (batch * length > max_test_n()) continue;
    for (bool per_sequence : {false, true}) {
      const auto c = make_gradient_case<T>(shape{.batch = batch, .length = length, .layout = layout}, a_kind::mixed,
                                           per_sequence, seed + static_cast<std::uint64_t>(batch * 41 + length));
      check_backward(c);
    }
  }
  if (layout != batch_layout::interleaved) return;
  // The segmented column path forced.
  for (const auto& [batch, length] : std::vector<std::pair<std::int64_t, std::int64_t>>{{3, 1000}, {40, 257}}) {
    for (std::int64_t segments : {2, 7, 64}) {
      SCOPED_TRACE("segments " + std::to_string(segments));
      const auto c = make_gradient_case<T>(shape{.batch = batch, .length = length, .layout = layout},
                                           a_kind::contracting, true, seed + static_cast<std::uint64_t>(segments));
      const std::int64_t n = batch * length;
      device_buffer<T> d_a(view(c.h.p)), d_x(view(c.x)), d_gx(view(c.grad_x)), d_x0s(view(c.h.x0s));
      device_buffer<T> d_ga(n), d_gb(n), d_gx0(batch);
      const ld::gradient_source<T> src{d_a.data(), d_gx.data(), d_x.data(), d_ga.data(), d_gx0.data()};
      const ld::linrec_options o{.segments = segments};
      query_and_run(
          [&](void* temp, std::size_t& bytes) {
            return ld::dispatch_gradient_columns<policy<T>>(temp, bytes, src, d_gb.data(), batch, length,
                                                            d_x0s.data(), T{}, nullptr, o);
          },
          d_ga, d_gb, d_gx0);
      const gradients<T> g{d_ga.to_host(), d_gb.to_host(), d_gx0.to_host()};
      const auto r = check_gradients(c, g);
      EXPECT_TRUE(r.pass()) << describe(r);
    }
  }
}

// L = sum_i w_i x_i, solved sequentially in double; the gradients by central differences.
struct fd_problem {
  std::vector<double> a, b, w, x0s;  // x0s: one per sequence
  std::int64_t batch = 1, length = 0;
  double loss() const {
    double sum = 0;
    for (std::int64_t k = 0; k < batch; ++k) {
      double x = x0s[static_cast<std::size_t>(k)];
      for (std::int64_t t = 0; t < length; ++t) {
        const auto i = static_cast<std::size_t>(k * length + t);
        x = a[i] == 0 ? b[i] : std::fma(a[i], x, b[i]);
        sum += w[i] * x;
      }
    }
    return sum;
  }
  // d loss / d v at v (central differences, step relative to v).
  double derivative(double& v) {
    const double saved = v;
    const double h = 1e-5 * (1 + std::fabs(saved));
    v = saved + h;
    const double up = loss();
    v = saved - h;
    const double down = loss();
    v = saved;
    return (up - down) / (2 * h);
  }
};

// Against central finite differences in double: n = 1 .. 64 (one sequence, x0 given) and
// batches of 3 (row-major, per-sequence x0), |a| < 0.9, with a few exact resets. The float
// pass is checked against the double derivatives with float's tolerance.
template <class T>
void backward_finite_differences_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  // (complex: checked against the long double adjoint elsewhere; the finite differences of a
  // real loss in complex arguments are not set up here)
  if constexpr (complex_type<T>) {
    GTEST_SKIP() << "complex: the backward pass is checked against the adjoint reference, not finite differences";
  }
  // float, and the 16-bit types (computed in float, x and the gradients stored in 16 bits:
  // half an ulp of float16 / bfloat16 each, relative to the terms)
  const double tolerance = std::is_same_v<T, double>  ? 1e-7
                           : std::is_same_v<T, __half> ? 4e-3
                           : std::is_same_v<T, __nv_bfloat16> ? 3e-2
                                                              : 2e-4;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uniform_int_distribution<int> percent(0, 99);
  for (const std::int64_t batch : {1, 3}) {
    for (std::int64_t length = 1; length <= 64; ++length) {
      SCOPED_TRACE("batch " + std::to_string(batch) + " x length " + std::to_string(length));
      const std::int64_t n = batch * length;
      gradient_case<T> c;
      c.s = shape{.batch = batch, .length = length};
      c.h.p.resize(static_cast<std::size_t>(n));
      c.h.q.resize(static_cast<std::size_t>(n));
      c.grad_x.resize(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) {
        const auto u = static_cast<std::size_t>(i);
        c.h.p[u] = percent(rng) < 3 ? T{} : make_value<T>(0.9 * unit(rng));
        c.h.q[u] = make_value<T>(unit(rng));
        c.grad_x[u] = make_value<T>(unit(rng));  // w: dL/dx
      }
      if (batch == 1) c.h.x0 = make_value<T>(unit(rng));
      else c.h.x0s = random_states<T>(batch, seed + static_cast<std::uint64_t>(length));
      device_buffer<T> d_p(view(c.h.p)), d_q(view(c.h.q));
      c.x = run_scanlab(ld::ab_source<T>{d_p.data(), d_q.data()}, c.h, c.s, false);
      const gradients<T> g = run_backward(c);
      fd_problem f;
      f.batch = batch;
      f.length = length;
      f.a = to_doubles(c.h.p);
      f.b = to_doubles(c.h.q);
      f.w = to_doubles(c.grad_x);
      for (std::int64_t k = 0; k < batch; ++k) {
        f.x0s.push_back(batch == 1 ? to_double(c.h.x0) : to_double(c.h.x0s[static_cast<std::size_t>(k)]));
      }
      // The size of the terms, for a tolerance relative to them: sum |w| (1 + max |x|).
      double scale = 1;
      for (std::int64_t i = 0; i < n; ++i) {
        scale += std::fabs(f.w[static_cast<std::size_t>(i)]) * (1 + std::fabs(to_double(c.x[static_cast<std::size_t>(i)])));
      }
      for (std::int64_t i = 0; i < n; ++i) {
        const auto u = static_cast<std::size_t>(i);
        const double da = f.derivative(f.a[u]);
        const double db = f.derivative(f.b[u]);
        EXPECT_NEAR(to_double(g.a[u]), da, tolerance * scale) << "dL/da[" << i << "]";
        EXPECT_NEAR(to_double(g.b[u]), db, tolerance * scale) << "dL/db[" << i << "]";
      }
      for (std::int64_t k = 0; k < batch; ++k) {
        const double dx0 = f.derivative(f.x0s[static_cast<std::size_t>(k)]);
        EXPECT_NEAR(to_double(g.x0[static_cast<std::size_t>(k)]), dx0, tolerance * scale) << "dL/dx0[" << k << "]";
      }
      // And the long double adjoint of the same x.
      const auto r = check_gradients(c, g);
      EXPECT_TRUE(r.pass()) << describe(r);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

// NaN and Inf in dL/dx run toward the start (until a reset: a[i+1] == 0 cuts g[i] off from
// g[i+1]) and never into another sequence; a NaN x reaches only dL/da of the next element.
template <class T>
void backward_special_values_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const T nan = nan_value<T>();
  const std::int64_t length = 3 * gradient_tile_of<T>() + 11;
  for (batch_layout layout : {batch_layout::row_major, batch_layout::interleaved}) {
    const std::int64_t batch = 4;
    auto c = make_gradient_case<T>(shape{.batch = batch, .length = length, .layout = layout}, a_kind::contracting,
                                   true, seed + 23);
    const auto at = [&](std::int64_t k, std::int64_t t) -> std::size_t {
      return static_cast<std::size_t>(layout == batch_layout::interleaved ? t * batch + k : k * length + t);
    };
    const std::int64_t nan_g = 2 * length / 3, reset = length / 3, nan_x = length / 2;
    c.grad_x[at(1, nan_g)] = nan;   // sequence 1: g is NaN at nan_g and before, until the reset
    c.h.p[at(1, reset)] = T{};     // a[reset] == 0: g[reset - 1] no longer sees g[reset]
    c.x[at(2, nan_x)] = nan;        // sequence 2: only dL/da[nan_x + 1] is NaN
    c.grad_x[at(3, length - 1)] = inf_value<T>();  // the last one's last step
    check_backward(c);
    const gradients<T> g = run_backward(c);
    EXPECT_TRUE(is_nan(g.b[at(1, nan_g)]));
    EXPECT_FALSE(is_nan(g.b[at(1, nan_g + 1)]));
    EXPECT_TRUE(is_nan(g.b[at(1, reset)]));
    EXPECT_FALSE(is_nan(g.b[at(1, reset - 1)]));
    EXPECT_FALSE(is_nan(g.x0[1]));
    EXPECT_TRUE(is_nan(g.a[at(2, nan_x + 1)]));
    EXPECT_FALSE(is_nan(g.a[at(2, nan_x)]));
    EXPECT_FALSE(is_nan(g.b[at(2, nan_x + 1)]));
    EXPECT_TRUE(is_inf(g.b[at(3, length - 1)]));
    EXPECT_FALSE(is_nan(g.b[at(0, 0)]));
    EXPECT_FALSE(is_nan(g.x0[0]));
  }
}

// ---- short rows: the rows kernel, reverse and backward ----

// Reverse solves (x and final states) and the backward pass of short rows (short_row_shapes:
// around the rows rule of each pass's tile), with and without per-sequence states, against
// the references and CUB; the same bits with two blocks, and from the look-back kernel: the
// reverse solves where look_back_bits_comparable, the backward pass run in the rows kernel's
// shape by both (its default shapes differ: 8 items per thread in the rows kernel, 16 in the
// look-back kernel for float, so the default bits differ between them).
template <class T>
void short_rows_reverse_backward_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const single_pass_options two_blocks{launch_mode::automatic, 2};
  const single_pass_options look_back{launch_mode::tickets, 0};
  for (const auto& [batch, length] : short_row_shapes(rows_tile_of<T>(), tile_of<T>(), std::int64_t{1} << 18)) {
    for (bool per_sequence : {false, true}) {
      SCOPED_TRACE("short rows reverse: batch " + std::to_string(batch) + " x length " + std::to_string(length) +
                   (per_sequence ? ", x0s" : ", x0"));
      auto h = make_problem<T>(batch * length, a_kind::mixed, seed + static_cast<std::uint64_t>(batch * 47 + length));
      if (per_sequence) h.x0s = random_states<T>(batch, seed + 9);
      const shape s{.batch = batch, .length = length, .per_sequence_x0 = per_sequence};
      check_reverse_ab(h, s);
      const std::vector<T> x = run_reverse(h, s, false);
      EXPECT_TRUE(same_bits(x, run_reverse(h, s, false, two_blocks))) << "two blocks";
      if (look_back_bits_comparable<T>(batch, length)) {
        EXPECT_TRUE(same_bits(x, run_reverse(h, s, false, look_back))) << "the look-back kernel";
      }
      const std::vector<T> fin = run_reverse(h, s, true);
      const auto r = check_reverse(h, s, view(fin), true);
      note_errors<T>(r);
      EXPECT_TRUE(r.pass()) << "final states: " << describe(r);
    }
  }
  for (const auto& [batch, length] :
       short_row_shapes(gradient_rows_tile_of<T>(), gradient_tile_of<T>(), std::int64_t{1} << 18)) {
    for (bool per_sequence : {false, true}) {
      const shape s{.batch = batch, .length = length};
      const auto c = make_gradient_case<T>(s, a_kind::mixed, per_sequence,
                                           seed + static_cast<std::uint64_t>(batch * 53 + length));
      check_backward(c);
      SCOPED_TRACE("short rows backward: batch " + std::to_string(batch) + " x length " + std::to_string(length));
      const gradients<T> g = run_backward(c);
      const gradients<T> two = run_backward(c, true, true, true, two_blocks);
      EXPECT_TRUE(same_bits(g.a, two.a) && same_bits(g.b, two.b) && same_bits(g.x0, two.x0)) << "two blocks";
      using shape_t = ld::default_linrec_rows_gradient_policy<T>;  // named: both kernels take it
      const gradients<T> rows_named = run_backward<T, shape_t>(c);
      const gradients<T> look_back_named = run_backward<T, shape_t>(c, true, true, true, look_back);
      EXPECT_TRUE(same_bits(rows_named.a, look_back_named.a) && same_bits(rows_named.b, look_back_named.b) &&
                  same_bits(rows_named.x0, look_back_named.x0))
          << "the look-back kernel with the rows shape";
      // Outputs left out (x not read without dL/da).
      const gradients<T> b_only = run_backward(c, false, true, false);
      EXPECT_TRUE(same_bits(g.b, b_only.b)) << "dL/db alone";
    }
  }
}

// Long rows chained, reverse and backward (see chained_rows_test): forced on small batches
// through the chain_min_batch hook, lengths of 2 and 3 tiles of each pass's rows shape and
// one element more (the look-back kernel), with and without per-sequence states, against
// the references; the same bits on a grid of one block and of two.
template <class T>
void chained_rows_reverse_backward_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const auto options = [](int max_blocks) { return ld::linrec_options{.max_blocks = max_blocks, .chain_min_batch = 1}; };
  const auto reverse = [&](const host_problem<T>& h, const shape& s, bool final_only, int max_blocks) {
    const std::int64_t n = s.batch * s.length;
    device_buffer<T> d_p(view(h.p)), d_q(view(h.q)), d_x0s(view(h.x0s));
    device_buffer<T> d_out(final_only ? s.batch : n);
    T* x = final_only ? nullptr : d_out.data();
    T* fin = final_only ? d_out.data() : nullptr;
    const ld::reversed<ld::ab_source<T>> src{{d_p.data(), d_q.data()}};
    const T* x0s = h.x0s.empty() ? nullptr : d_x0s.data();
    query_and_run(
        [&](void* temp, std::size_t& bytes) {
          return ld::dispatch_rows<ld::default_linrec_policy<T>, ld::default_linrec_rows_policy<T>>(
              temp, bytes, src, x, fin, s.batch, s.length, x0s, h.x0, nullptr, options(max_blocks));
        },
        d_out);
    return d_out.to_host();
  };
  const auto backward = [&](const gradient_case<T>& c, int max_blocks) {
    const std::int64_t n = c.s.batch * c.s.length;
    device_buffer<T> d_a(view(c.h.p)), d_x(view(c.x)), d_gx(view(c.grad_x)), d_x0s(view(c.h.x0s));
    device_buffer<T> d_ga(n), d_gb(n), d_gx0(c.s.batch);
    const ld::gradient_source<T> src{d_a.data(), d_gx.data(), d_x.data(), d_ga.data(), d_gx0.data()};
    const T* x0s = c.h.x0s.empty() ? nullptr : d_x0s.data();
    query_and_run(
        [&](void* temp, std::size_t& bytes) {
          return ld::dispatch_rows<ld::default_linrec_gradient_policy<T>, ld::default_linrec_rows_gradient_policy<T>>(
              temp, bytes, src, d_gb.data(), static_cast<T*>(nullptr), c.s.batch, c.s.length, x0s, c.h.x0, nullptr,
              options(max_blocks));
        },
        d_ga, d_gb, d_gx0);
    return gradients<T>{d_ga.to_host(), d_gb.to_host(), d_gx0.to_host()};
  };
  const std::int64_t rows_tile = rows_tile_of<T>();
  const std::int64_t gradient_rows_tile = gradient_rows_tile_of<T>();
  for (std::int64_t tiles : {2, 3}) {
    for (std::int64_t extra : {0, 1}) {
      for (std::int64_t batch : {std::int64_t{1}, std::int64_t{2}, std::int64_t{7}}) {
        for (bool per_sequence : {false, true}) {
          const std::int64_t length = tiles * rows_tile + extra;
          if (batch * length <= max_test_n()) {
            SCOPED_TRACE("chained rows reverse: batch " + std::to_string(batch) + " x length " + std::to_string(length) +
                         (per_sequence ? ", x0s" : ", x0"));
            auto h = make_problem<T>(batch * length, a_kind::mixed, seed + static_cast<std::uint64_t>(batch * 37 + length));
            if (per_sequence) h.x0s = random_states<T>(batch, seed + 13);
            const shape s{.batch = batch, .length = length, .per_sequence_x0 = per_sequence};
            const std::vector<T> x = reverse(h, s, false, 0);
            const auto r = check_reverse(h, s, view(x), false);
            note_errors<T>(r);
            EXPECT_TRUE(r.pass()) << describe(r);
            EXPECT_TRUE(same_bits(x, reverse(h, s, false, 1))) << "one block";
            EXPECT_TRUE(same_bits(x, reverse(h, s, false, 2))) << "two blocks";
            const auto rf = check_reverse(h, s, view(reverse(h, s, true, 0)), true);
            EXPECT_TRUE(rf.pass()) << "final states: " << describe(rf);
          }
          const std::int64_t g_length = tiles * gradient_rows_tile + extra;
          if (batch * g_length <= max_test_n()) {
            SCOPED_TRACE("chained rows backward: batch " + std::to_string(batch) + " x length " +
                         std::to_string(g_length) + (per_sequence ? ", x0s" : ", x0"));
            const auto c = make_gradient_case<T>(shape{.batch = batch, .length = g_length}, a_kind::mixed, per_sequence,
                                                 seed + static_cast<std::uint64_t>(batch * 59 + g_length));
            const gradients<T> g = backward(c, 0);
            const auto r = check_gradients(c, g);
            EXPECT_TRUE(r.pass()) << describe(r);
            const gradients<T> one = backward(c, 1);
            EXPECT_TRUE(same_bits(g.a, one.a) && same_bits(g.b, one.b) && same_bits(g.x0, one.x0)) << "one block";
            const gradients<T> two = backward(c, 2);
            EXPECT_TRUE(same_bits(g.a, two.a) && same_bits(g.b, two.b) && same_bits(g.x0, two.x0)) << "two blocks";
          }
        }
      }
    }
  }
}

// The same bits: twice, in every launch mode, with outputs left out, in place, misaligned.
template <class T>
void backward_determinism_and_memory_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t tile = gradient_tile_of<T>();
  for (const auto& [batch, length] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {1, 70 * tile + 3}, {1, 3 * tile + 5}, {5, 9 * tile + 1}}) {
    if (batch * length > max_test_n()) continue;
    SCOPED_TRACE("batch " + std::to_string(batch) + " x length " + std::to_string(length));
    const auto c = make_gradient_case<T>(shape{.batch = batch, .length = length}, a_kind::mixed, batch > 1, seed + 29);
    const gradients<T> reference = run_backward(c);
    const auto r = check_gradients(c, reference);
    EXPECT_TRUE(r.pass()) << describe(r);
    const gradients<T> again = run_backward(c);
    EXPECT_TRUE(same_bits(again.a, reference.a) && same_bits(again.b, reference.b) && same_bits(again.x0, reference.x0))
        << "a second run";
    for (const single_pass_options& o : {single_pass_options{launch_mode::cooperative, 2},
                                          single_pass_options{launch_mode::tickets, 0},
                                          single_pass_options{launch_mode::tickets, 3}}) {
      SCOPED_TRACE("mode " + std::to_string(static_cast<int>(o.mode)) + ", max blocks " + std::to_string(o.max_blocks));
      const gradients<T> g = run_backward(c, true, true, true, o);
      EXPECT_TRUE(same_bits(g.a, reference.a) && same_bits(g.b, reference.b) && same_bits(g.x0, reference.x0));
    }
    // Outputs left out: the others unchanged (and x not read without dL/da).
    const gradients<T> only_b = run_backward(c, false, true, false);
    EXPECT_TRUE(same_bits(only_b.b, reference.b)) << "dL/db alone";
    const gradients<T> only_a = run_backward(c, true, false, false);
    EXPECT_TRUE(same_bits(only_a.a, reference.a)) << "dL/da alone";
    const gradients<T> only_x0 = run_backward(c, false, false, true);
    EXPECT_TRUE(same_bits(only_x0.x0, reference.x0)) << "dL/dx0 alone";
    // In place (dL/db over dL/dx, dL/da over x), then misaligned by one element.
    const std::int64_t n = batch * length;
    device_buffer<T> d_a(view(c.h.p)), d_x(view(c.x)), d_gx(view(c.grad_x)), d_x0s(view(c.h.x0s)), d_gx0(batch);
    const T* x0s = c.h.x0s.empty() ? nullptr : d_x0s.data();
    const auto call = [&](void* temp, std::size_t& bytes, const T* a, const T* x, const T* gx, T* ga, T* gb) {
      if (batch == 1) return linear_recurrence_backward<T>(temp, bytes, a, x, gx, ga, gb, d_gx0.data(), n, c.h.x0);
      return linear_recurrence_backward_batched<T>(temp, bytes, a, x, gx, ga, gb, d_gx0.data(), batch, length,
                                                   batch_layout::row_major, x0s);
    };
    std::size_t bytes = 0;
    SCANLAB_CHECK(call(nullptr, bytes, d_a.data(), d_x.data(), d_gx.data(), d_x.data(), d_gx.data()));
    device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
    SCANLAB_CHECK(call(temp.data(), bytes, d_a.data(), d_x.data(), d_gx.data(), d_x.data(), d_gx.data()));
    SCANLAB_CHECK(cudaDeviceSynchronize());
    EXPECT_TRUE(same_bits(d_x.to_host(), reference.a)) << "dL/da over x";
    EXPECT_TRUE(same_bits(d_gx.to_host(), reference.b)) << "dL/db over dL/dx";
    const auto shifted = [&](const std::vector<T>& v) {
      std::vector<T> out(v.size() + 1);
      std::copy(v.begin(), v.end(), out.begin() + 1);
      return out;
    };
    device_buffer<T> d_a1(view(shifted(c.h.p))), d_x1(view(shifted(c.x))), d_gx1(view(shifted(c.grad_x)));
    device_buffer<T> d_ga1(n + 1), d_gb1(n + 1);
    d_x.copy_from(view(c.x));
    d_gx.copy_from(view(c.grad_x));
    device_buffer<T> d_ga(n), d_gb(n);
    for (int which = 0; which < 3; ++which) {
      SCOPED_TRACE("misaligned case " + std::to_string(which));
      const bool in_shifted = which != 1, out_shifted = which != 0;
      SCANLAB_CHECK(call(temp.data(), bytes, in_shifted ? d_a1.data() + 1 : d_a.data(),
                         in_shifted ? d_x1.data() + 1 : d_x.data(), in_shifted ? d_gx1.data() + 1 : d_gx.data(),
                         out_shifted ? d_ga1.data() + 1 : d_ga.data(), out_shifted ? d_gb1.data() + 1 : d_gb.data()));
      SCANLAB_CHECK(cudaDeviceSynchronize());
      std::vector<T> ga = out_shifted ? d_ga1.to_host() : d_ga.to_host();
      std::vector<T> gb = out_shifted ? d_gb1.to_host() : d_gb.to_host();
      if (out_shifted) {
        ga.erase(ga.begin());
        gb.erase(gb.begin());
      }
      EXPECT_TRUE(same_bits(ga, reference.a) && same_bits(gb, reference.b));
    }
  }
}

template <class T>
void backward_api_contract_test() {
  std::size_t bytes = 0;
  EXPECT_EQ(cudaErrorInvalidValue, (linear_recurrence_backward<T>(nullptr, bytes, nullptr, nullptr, nullptr, nullptr,
                                                                  nullptr, nullptr, -1, T{})));
  EXPECT_EQ(cudaErrorInvalidValue,
            (linear_recurrence_backward_batched<T>(nullptr, bytes, nullptr, nullptr, nullptr, nullptr, nullptr,
                                                   nullptr, std::int64_t{1} << 40, std::int64_t{1} << 40,
                                                   batch_layout::row_major)));
  EXPECT_EQ(cudaErrorInvalidValue, (linear_recurrence_reverse<T>(nullptr, bytes, nullptr, nullptr, nullptr, -1, T{})));
  const std::int64_t n = 10 * gradient_tile_of<T>();
  ASSERT_EQ(cudaSuccess, (linear_recurrence_backward<T>(nullptr, bytes, nullptr, nullptr, nullptr, nullptr, nullptr,
                                                        nullptr, n, T{})));
  EXPECT_GE(bytes, 1u);
  device_buffer<T> d_a(n), d_x(n), d_gx(n), d_ga(n), d_gb(n), d_gx0(3);
  device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
  std::size_t too_little = bytes - 1;
  EXPECT_EQ(cudaErrorInvalidValue, (linear_recurrence_backward<T>(temp.data(), too_little, d_a.data(), d_x.data(),
                                                                  d_gx.data(), d_ga.data(), d_gb.data(), d_gx0.data(),
                                                                  n, T{})));
  // Span form of the reverse solve: mismatched lengths refused.
  const std::span<const T> a(d_a.data(), static_cast<std::size_t>(n));
  const std::span<const T> b_short(d_x.data(), static_cast<std::size_t>(n - 1));
  const std::span<T> x(d_ga.data(), static_cast<std::size_t>(n));
  EXPECT_EQ(cudaErrorInvalidValue, (linear_recurrence_reverse<T>(temp.data(), bytes, a, b_short, x, T{})));
  // Empty sequences: no state depends on x0, its gradient is 0.
  for (const batch_layout layout : {batch_layout::row_major, batch_layout::interleaved}) {
    d_gx0.fill_bytes(0xff);
    std::size_t empty_bytes = 0;
    ASSERT_EQ(cudaSuccess, (linear_recurrence_backward_batched<T>(nullptr, empty_bytes, d_a.data(), d_x.data(),
                                                                  d_gx.data(), d_ga.data(), d_gb.data(), d_gx0.data(),
                                                                  3, 0, layout)));
    device_buffer<unsigned char> empty_temp(static_cast<std::int64_t>(empty_bytes));
    ASSERT_EQ(cudaSuccess, (linear_recurrence_backward_batched<T>(empty_temp.data(), empty_bytes, d_a.data(),
                                                                  d_x.data(), d_gx.data(), d_ga.data(), d_gb.data(),
                                                                  d_gx0.data(), 3, 0, layout)));
    const std::vector<T> zeros = d_gx0.to_host();
    for (T v : zeros) EXPECT_TRUE(is_zero(v));
  }
}

// *Large*: 2^28 elements as one sequence (a near 1), 2^16 sequences of 2^12 (both layouts).
template <class T>
void gradient_large_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t big = std::int64_t{1} << 28;
  {
    const auto h = make_problem<T>(big, a_kind::near_one, seed + 41);
    check_reverse_ab(h, shape{.batch = 1, .length = big}, false);
    const auto c = make_gradient_case<T>(shape{.batch = 1, .length = big}, a_kind::near_one, false, seed + 43);
    check_backward(c, false);
  }
  for (const batch_layout layout : {batch_layout::row_major, batch_layout::interleaved}) {
    const shape s{.batch = std::int64_t{1} << 16, .length = std::int64_t{1} << 12, .layout = layout};
    const auto c = make_gradient_case<T>(s, a_kind::mixed, true, seed + 47);
    check_backward(c, false);
  }
}

}  // namespace scanlab::test::linrec

// One set of tests per element type.
#define SCANLAB_LINREC_GRAD_TESTS(suite, T)                                                                      \
  class suite : public scanlab::test::gpu_test {};                                                               \
  TEST_F(suite, ReverseContracting) { scanlab::test::linrec::reverse_single_test<T>(scanlab::test::linrec::a_kind::contracting); } \
  TEST_F(suite, ReverseNearOne) { scanlab::test::linrec::reverse_single_test<T>(scanlab::test::linrec::a_kind::near_one); } \
  TEST_F(suite, ReverseMixedSignsAndResets) { scanlab::test::linrec::reverse_single_test<T>(scanlab::test::linrec::a_kind::mixed); } \
  TEST_F(suite, ReverseBatchedRowMajor) { scanlab::test::linrec::reverse_batched_test<T>(scanlab::batch_layout::row_major); } \
  TEST_F(suite, ReverseBatchedInterleaved) { scanlab::test::linrec::reverse_batched_test<T>(scanlab::batch_layout::interleaved); } \
  TEST_F(suite, ReverseFinalStatesAndForms) { scanlab::test::linrec::reverse_final_and_forms_test<T>(); }      \
  TEST_F(suite, ReverseNanAndInf) { scanlab::test::linrec::reverse_special_values_test<T>(); }                 \
  TEST_F(suite, ReverseModesInPlaceMisaligned) { scanlab::test::linrec::reverse_modes_and_memory_test<T>(); }  \
  TEST_F(suite, BackwardContracting) { scanlab::test::linrec::backward_single_test<T>(scanlab::test::linrec::a_kind::contracting); } \
  TEST_F(suite, BackwardNearOne) { scanlab::test::linrec::backward_single_test<T>(scanlab::test::linrec::a_kind::near_one); } \
  TEST_F(suite, BackwardMixedSignsAndResets) { scanlab::test::linrec::backward_single_test<T>(scanlab::test::linrec::a_kind::mixed); } \
  TEST_F(suite, BackwardBatchedRowMajor) { scanlab::test::linrec::backward_batched_test<T>(scanlab::batch_layout::row_major); } \
  TEST_F(suite, BackwardBatchedInterleaved) { scanlab::test::linrec::backward_batched_test<T>(scanlab::batch_layout::interleaved); } \
  TEST_F(suite, BackwardFiniteDifferences) { scanlab::test::linrec::backward_finite_differences_test<T>(); }   \
  TEST_F(suite, BackwardNanAndInf) { scanlab::test::linrec::backward_special_values_test<T>(); }               \
  TEST_F(suite, BackwardDeterministicInPlaceMisaligned) { scanlab::test::linrec::backward_determinism_and_memory_test<T>(); } \
  TEST_F(suite, BackwardApiContract) { scanlab::test::linrec::backward_api_contract_test<T>(); }           \
  TEST_F(suite, ShortRowsReverseAndBackward) { scanlab::test::linrec::short_rows_reverse_backward_test<T>(); } \
  TEST_F(suite, ChainedRowsReverseAndBackward) { scanlab::test::linrec::chained_rows_reverse_backward_test<T>(); } \
  TEST_F(suite, ErrorSummary) { scanlab::test::linrec::print_error_summary<T>(#suite); }
