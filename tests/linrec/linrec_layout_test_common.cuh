// Shared bodies of the tests of channels-last batches and variable-length sequences
// (scanlab/algorithms/linrec.cuh: linrec_channels_last, linrec_varlen), one translation
// unit per element type (test_linrec_layout_float.cu, test_linrec_layout_double.cu).
//
//   channels-last  [batch, length, channels]: forward, reverse, final states, per-sequence
//                  states, the (lambda, u) and EMA forms, the backward pass; the column
//                  walk's single-pass and segmented paths and the shapes that are row-major
//                  (one channel, length 1)
//   offsets        variable lengths: empty sequences, lengths 0 / 1 / ragged around tile
//                  boundaries, thousands of short sequences (1 .. 300), one long one; x and
//                  the final states from one call, reverse, the backward pass, NaN confined
//                  to its sequence, launch modes, misaligned arrays, the API's checks
// Every result against the sequential long double reference (linrec_reference.hpp's
// check_layout / check_gradients with linrec_layout.hpp's sequence_layout), which walks
// each sequence by its own indexing, independent of the kernels'.
#pragma once

#include "linrec/linrec_grad_test_common.cuh"

#include <scanlab/algorithms/linrec.cuh>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace scanlab::test::linrec {

// What one call returns: x (in the input's layout) and the final states (one per sequence).
template <class T>
struct layout_result {
  std::vector<T> x, final_states;
};

// solve_linear_recurrence on `shape` (linrec_channels_last or linrec_varlen) with x and/or
// final states; outputs start as NaN, so that anything left unwritten fails.
template <class T, class Source, class Shape>
layout_result<T> solve_shape(const Source& src, const Shape& shape, std::int64_t n, std::int64_t sequences,
                             const std::vector<T>& x0s, bool want_x, bool want_final,
                             const single_pass_options& options = {}) {
  device_buffer<T> d_x(want_x ? n : 0), d_final(want_final ? sequences : 0), d_x0s(view(x0s));
  T* x = want_x ? d_x.data() : nullptr;
  T* fin = want_final ? d_final.data() : nullptr;
  const T* states = x0s.empty() ? nullptr : d_x0s.data();
  query_and_run(
      [&](void* temp, std::size_t& bytes) {
        return solve_linear_recurrence(temp, bytes, src, x, fin, shape, states, T(0), nullptr, options);
      },
      d_x, d_final);
  layout_result<T> out;
  if (want_x) out.x = d_x.to_host();
  if (want_final) out.final_states = d_final.to_host();
  return out;
}

// The backward pass's three outputs.
template <class T>
struct gradient_result {
  std::vector<T> a, b, x0;
};

// linear_recurrence_backward_channels_last / _varlen on (a, x, dL/dx); outputs start as NaN.
template <class T, class Call>
gradient_result<T> run_backward_call(std::int64_t n, std::int64_t sequences, Call&& call) {
  device_buffer<T> d_ga(n), d_gb(n), d_gx0(sequences);
  query_and_run(
      [&](void* temp, std::size_t& bytes) { return call(temp, bytes, d_ga.data(), d_gb.data(), d_gx0.data()); }, d_ga,
      d_gb, d_gx0);
  return {d_ga.to_host(), d_gb.to_host(), d_gx0.to_host()};
}

// Forward (x and final states), reverse (x and final states) and the backward pass of one
// problem in `layout`, each against the reference. `solve(src, want_x, want_final)` runs a
// solve on the shape; `backward(a, x, gx, ...)` the backward pass.
template <class T, class Solve, class Backward>
void check_all_directions(const host_problem<T>& h, const sequence_layout& layout, Solve&& solve,
                          Backward&& backward, std::uint64_t seed) {
  const std::int64_t n = layout.elements();
  const auto ops = reference_operands(h);
  device_buffer<T> d_p(view(h.p)), d_q(view(h.q));
  const T* p = d_p.data();
  const T* q = d_q.data();
  // Forward: x and the final states from ONE call, then the final states alone.
  const auto both = solve(linrec_ab(p, q), true, true);
  const auto rx = reference_check_layout(ops, layout, view(h.x0s), T(0), view(both.x), false);
  EXPECT_TRUE(rx.pass()) << "forward x: " << describe(rx);
  const auto rf = reference_check_layout(ops, layout, view(h.x0s), T(0), view(both.final_states), true);
  EXPECT_TRUE(rf.pass()) << "forward final states (with x): " << describe(rf);
  const auto only = solve(linrec_ab(p, q), false, true);
  const auto ro = reference_check_layout(ops, layout, view(h.x0s), T(0), view(only.final_states), true);
  EXPECT_TRUE(ro.pass()) << "forward final states alone: " << describe(ro);
  // Reverse: x and the final states (x at each sequence's first element).
  const auto rev = solve(linrec_reverse(linrec_ab(p, q)), true, true);
  const auto rr = reference_check_layout(ops, layout, view(h.x0s), T(0), view(rev.x), false, true);
  EXPECT_TRUE(rr.pass()) << "reverse x: " << describe(rr);
  const auto rrf = reference_check_layout(ops, layout, view(h.x0s), T(0), view(rev.final_states), true, true);
  EXPECT_TRUE(rrf.pass()) << "reverse final states: " << describe(rrf);
  // The backward pass of the forward solve, on the GPU's x.
  const std::vector<T> grad_x = random_states<T>(n, seed + 101);
  device_buffer<T> d_x(view(both.x)), d_gx(view(grad_x)), d_x0s(view(h.x0s));
  const T* states = h.x0s.empty() ? nullptr : d_x0s.data();
  const gradient_result<T> g = backward(p, d_x.data(), d_gx.data(), states);
  const auto rg = reference_check_gradients_layout<T>(view(h.p), view(both.x), view(grad_x), layout, view(h.x0s),
                                                      T(0), view(g.a), view(g.b), view(g.x0));
  EXPECT_TRUE(rg.a.pass()) << "dL/da: " << describe(rg.a);
  EXPECT_TRUE(rg.b.pass()) << "dL/db: " << describe(rg.b);
  EXPECT_TRUE(rg.x0.pass()) << "dL/dx0: " << describe(rg.x0);
}

// ---- channels-last [batch, length, channels] ----

struct btc {
  std::int64_t b, t, c;
};

template <class T>
void channels_last_case(std::int64_t batch, std::int64_t length, std::int64_t channels, a_kind kind,
                        std::uint64_t seed, bool per_sequence_x0 = true) {
  SCOPED_TRACE("channels-last [" + std::to_string(batch) + ", " + std::to_string(length) + ", " +
               std::to_string(channels) + "], a " + name(kind) + (per_sequence_x0 ? ", x0s" : ", x0 = 0"));
  const sequence_layout layout = sequence_layout::channels_last(batch, length, channels);
  const std::int64_t n = layout.elements();
  auto h = make_problem<T>(n, kind, seed);
  if (per_sequence_x0) h.x0s = random_states<T>(layout.sequences, seed + 1);
  const linrec_channels_last shape{batch, length, channels};
  const auto solve = [&](auto src, bool want_x, bool want_final) {
    return solve_shape<T>(src, shape, n, layout.sequences, h.x0s, want_x, want_final);
  };
  const auto backward = [&](const T* a, const T* x, const T* gx, const T* x0s) {
    return run_backward_call<T>(n, layout.sequences, [&](void* temp, std::size_t& bytes, T* ga, T* gb, T* gx0) {
      return linear_recurrence_backward_channels_last<T>(temp, bytes, a, x, gx, ga, gb, gx0, batch, length, channels,
                                                         x0s);
    });
  };
  check_all_directions(h, layout, solve, backward, seed);
}

// The shapes: the column walk with one segment (at least 2^17 sequences) and with several,
// one group (= interleaved), one channel (= row-major), length 1 and 0, no sequences.
template <class T>
void channels_last_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t tile = tile_of<T>();
  for (const btc s : {btc{3, 257, 5}, btc{4, 1000, 33}, btc{1, 700, 7}, btc{2, 3 * tile + 5, 3}, btc{6, 40, 1},
                      btc{5, 1, 9}, btc{3, 0, 4}, btc{0, 10, 4}, btc{2, 2, 2}, btc{2, 3, (1 << 16) + 3},
                      btc{16, 64, 256}, btc{2, 300, 600}}) {  // the last: the tiled kernel by default
    if (s.b * s.t * s.c > max_test_n()) continue;
    channels_last_case<T>(s.b, s.t, s.c, a_kind::contracting, seed + static_cast<std::uint64_t>(s.t * 7 + s.c));
    if (::testing::Test::HasFatalFailure()) return;
  }
  channels_last_case<T>(3, 500, 6, a_kind::mixed, seed + 3);      // resets
  channels_last_case<T>(2, 300, 4, a_kind::near_one, seed + 5, false);  // no initial states: 0
}

// Forced segment counts of the column walk (the internal dispatch's test hook), the
// (lambda, u) and EMA forms, and NaN / Inf confined to their (b, c) sequence.
template <class T>
void channels_last_paths_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t batch = 3, length = 517, channels = 6;
  const sequence_layout layout = sequence_layout::channels_last(batch, length, channels);
  const std::int64_t n = layout.elements();
  auto h = make_problem<T>(n, a_kind::contracting, seed + 11);
  for (auto& v : h.p) v = make_value<T>(std::fabs(to_double(v)), std::fabs(imag_double(v)));  // usable as lambda
  h.x0s = random_states<T>(layout.sequences, seed + 13);
  device_buffer<T> d_p(view(h.p)), d_q(view(h.q)), d_x0s(view(h.x0s)), d_x(n), d_final(layout.sequences);
  for (const std::int64_t segments : {1, 2, 5, 64}) {
    SCOPED_TRACE("segments " + std::to_string(segments));
    ld::linrec_options options;
    options.segments = segments;
    const auto src = ld::ab_source<T>{d_p.data(), d_q.data()};
    query_and_run(
        [&](void* temp, std::size_t& bytes) {
          return ld::dispatch_columns<policy<T>>(temp, bytes, src, d_x.data(), d_final.data(), layout.sequences,
                                                 length, static_cast<const T*>(d_x0s.data()), T(0), nullptr, options,
                                                 channels);
        },
        d_x, d_final);
    const auto x = d_x.to_host();
    const auto fin = d_final.to_host();
    const auto ops = reference_operands(h);
    const auto rx = reference_check_layout(ops, layout, view(h.x0s), T(0), view(x), false);
    EXPECT_TRUE(rx.pass()) << describe(rx);
    const auto rf = reference_check_layout(ops, layout, view(h.x0s), T(0), view(fin), true);
    EXPECT_TRUE(rf.pass()) << describe(rf);
  }
  // The other forms (where tested: forms_tested), forward and reverse, through
  // solve_linear_recurrence.
  const linrec_channels_last shape{batch, length, channels};
  if constexpr (forms_tested<T>) {
  const T alpha = T(0.25);
  const T* p = d_p.data();
  const T* q = d_q.data();
  for (const bool reverse : {false, true}) {
    const auto lam = reverse ? solve_shape<T>(linrec_reverse(linrec_lambda(p, q)), shape, n, layout.sequences, h.x0s,
                                              true, false)
                             : solve_shape<T>(linrec_lambda(p, q), shape, n, layout.sequences, h.x0s, true, false);
    const auto rl = reference_check_layout(reference_operands(h, reference_form::lambda), layout, view(h.x0s), T(0),
                                           view(lam.x), false, reverse);
    EXPECT_TRUE(rl.pass()) << "lambda, reverse " << reverse << ": " << describe(rl);
    const auto ema = reverse ? solve_shape<T>(linrec_reverse(linrec_ema(p, alpha)), shape, n, layout.sequences,
                                              h.x0s, false, true)
                             : solve_shape<T>(linrec_ema(p, alpha), shape, n, layout.sequences, h.x0s, false, true);
    const auto re = reference_check_layout(reference_operands(h, reference_form::ema, 0.25), layout, view(h.x0s),
                                           T(0), view(ema.final_states), true, reverse);
    EXPECT_TRUE(re.pass()) << "EMA final states, reverse " << reverse << ": " << describe(re);
  }
  }
  // NaN in b of sequence (1, 2), Inf in b of (2, 5): each stays in its own sequence.
  auto special = make_problem<T>(n, a_kind::contracting, seed + 17);
  special.x0s = random_states<T>(layout.sequences, seed + 19);
  special.q[static_cast<std::size_t>(layout.at(1 * channels + 2, 100))] = nan_value<T>();
  special.q[static_cast<std::size_t>(layout.at(2 * channels + 5, 7))] = inf_value<T>();
  device_buffer<T> d_sp(view(special.p)), d_sq(view(special.q));
  const auto got = solve_shape<T>(linrec_ab(static_cast<const T*>(d_sp.data()), static_cast<const T*>(d_sq.data())),
                                  shape, n, layout.sequences, special.x0s, true, false);
  const auto rs = reference_check_layout(reference_operands(special), layout, view(special.x0s), T(0), view(got.x),
                                         false);
  EXPECT_TRUE(rs.pass()) << "NaN / Inf: " << describe(rs);
  EXPECT_TRUE(is_nan(got.x[static_cast<std::size_t>(layout.at(1 * channels + 2, length - 1))]));
  EXPECT_FALSE(is_nan(got.x[static_cast<std::size_t>(layout.at(1 * channels + 3, length - 1))]));
  EXPECT_FALSE(is_nan(got.x[static_cast<std::size_t>(layout.at(1 * channels + 1, length - 1))]));
}

// The tiled column kernel (forced by the test hook) on shapes around its tile (32 sequences
// by tiled_warps * tiled_rows steps) and its look-back window: fewer sequences than a warp,
// a last group partly empty, channels not a multiple of 32, chains of many tiles, lengths 1
// and 0, interleaved batches; x and final states together and alone, both directions,
// per-sequence and zero initial states, the (lambda, u) form; the same bits twice.
template <class T>
void channels_last_tiled_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t rows = ld::tiled_warps * ld::tiled_rows<ld::ab_source<T>, T>;
  ld::linrec_options options;
  options.columns = ld::column_path::tiled;
  for (const btc s : {btc{3, 517, 5}, btc{2, 1000, 33}, btc{1, 40 * rows + 3, 40}, btc{4, rows + 1, 64},
                      btc{2, rows, 48}, btc{2, 1, 50}, btc{3, 0, 4}, btc{1, 2000, 100} /* interleaved */,
                      btc{2, 12 * rows - 1, 7}}) {
    if (s.b * s.t * s.c > max_test_n()) continue;
    SCOPED_TRACE("tiled [" + std::to_string(s.b) + ", " + std::to_string(s.t) + ", " + std::to_string(s.c) + "]");
    const sequence_layout layout = sequence_layout::channels_last(s.b, s.t, s.c);
    const std::int64_t n = layout.elements();
    const std::int64_t sequences = layout.sequences;
    for (const bool with_x0s : {true, false}) {
      auto h = make_problem<T>(n, with_x0s ? a_kind::mixed : a_kind::contracting, seed + static_cast<std::uint64_t>(n));
      for (auto& v : h.p) v = make_value<T>(std::fabs(to_double(v)), std::fabs(imag_double(v)));  // usable as lambda
      if (with_x0s) h.x0s = random_states<T>(sequences, seed + 7);
      device_buffer<T> d_p(view(h.p)), d_q(view(h.q)), d_x0s(view(h.x0s));
      const T* states = h.x0s.empty() ? nullptr : d_x0s.data();
      const auto run = [&](auto src, bool want_x, bool want_final) {
        device_buffer<T> d_x(want_x ? n : 0), d_final(want_final ? sequences : 0);
        query_and_run(
            [&](void* temp, std::size_t& bytes) {
              return ld::dispatch_columns<policy<T>>(temp, bytes, src, want_x ? d_x.data() : nullptr,
                                                     want_final ? d_final.data() : nullptr, sequences, s.t, states,
                                                     T(0), nullptr, options, s.c);
            },
            d_x, d_final);
        layout_result<T> out;
        if (want_x) out.x = d_x.to_host();
        if (want_final) out.final_states = d_final.to_host();
        return out;
      };
      const auto ops = reference_operands(h);
      const T* p = d_p.data();
      const T* q = d_q.data();
      for (const bool reverse : {false, true}) {
        SCOPED_TRACE(std::string(reverse ? "reverse" : "forward") + (with_x0s ? ", x0s" : ", x0 = 0"));
        const auto both = reverse ? run(linrec_reverse(linrec_ab(p, q)), true, true) : run(linrec_ab(p, q), true, true);
        const auto rx = reference_check_layout(ops, layout, view(h.x0s), T(0), view(both.x), false, reverse);
        EXPECT_TRUE(rx.pass()) << "x: " << describe(rx);
        const auto rf = reference_check_layout(ops, layout, view(h.x0s), T(0), view(both.final_states), true, reverse);
        EXPECT_TRUE(rf.pass()) << "final states: " << describe(rf);
        const auto alone = reverse ? run(linrec_reverse(linrec_ab(p, q)), false, true) : run(linrec_ab(p, q), false, true);
        EXPECT_EQ(0, std::memcmp(alone.final_states.data(), both.final_states.data(), sizeof(T) * both.final_states.size()))
            << "final states alone differ from those with x";
        const auto again = reverse ? run(linrec_reverse(linrec_ab(p, q)), true, true) : run(linrec_ab(p, q), true, true);
        EXPECT_EQ(0, std::memcmp(again.x.data(), both.x.data(), sizeof(T) * both.x.size())) << "not deterministic";
        // The arrays one element off their allocation's alignment (16-bit: the first element in
        // the upper half of its word, the last in the lower half of one past the array).
        if (n > 0) {
          std::vector<T> shifted_p(h.p.size() + 1, T(0)), shifted_q(h.q.size() + 1, T(0));
          std::copy(h.p.begin(), h.p.end(), shifted_p.begin() + 1);
          std::copy(h.q.begin(), h.q.end(), shifted_q.begin() + 1);
          device_buffer<T> d_sp(view(shifted_p)), d_sq(view(shifted_q));
          const T* sp = d_sp.data() + 1;
          const T* sq = d_sq.data() + 1;
          const auto off = reverse ? run(linrec_reverse(linrec_ab(sp, sq)), true, false) : run(linrec_ab(sp, sq), true, false);
          EXPECT_EQ(0, std::memcmp(off.x.data(), both.x.data(), sizeof(T) * both.x.size())) << "misaligned arrays differ";
        }
        if (!reverse) {
          // The backward pass of this solve, tiled, against the long double adjoint.
          const std::vector<T> grad_x = random_states<T>(n, seed + 101);
          device_buffer<T> d_x(view(both.x)), d_gx(view(grad_x)), d_ga(n), d_gb(n), d_gx0(sequences);
          const ld::gradient_source<T> gsrc{p, d_gx.data(), d_x.data(), d_ga.data(), d_gx0.data()};
          query_and_run(
              [&](void* temp, std::size_t& bytes) {
                return ld::dispatch_gradient_columns<policy<T>>(temp, bytes, gsrc, d_gb.data(), sequences, s.t,
                                                                states, T(0), nullptr, options, s.c);
              },
              d_ga, d_gb, d_gx0);
          const auto ga = d_ga.to_host(), gb = d_gb.to_host(), gx0 = d_gx0.to_host();
          const auto rg = reference_check_gradients_layout<T>(view(h.p), view(both.x), view(grad_x), layout,
                                                              view(h.x0s), T(0), view(ga), view(gb), view(gx0));
          EXPECT_TRUE(rg.a.pass()) << "tiled dL/da: " << describe(rg.a);
          EXPECT_TRUE(rg.b.pass()) << "tiled dL/db: " << describe(rg.b);
          EXPECT_TRUE(rg.x0.pass()) << "tiled dL/dx0: " << describe(rg.x0);
        }
        if constexpr (forms_tested<T>) {
          const auto lam = reverse ? run(linrec_reverse(linrec_lambda(p, q)), true, false) : run(linrec_lambda(p, q), true, false);
          const auto rl = reference_check_layout(reference_operands(h, reference_form::lambda), layout, view(h.x0s), T(0),
                                                 view(lam.x), false, reverse);
          EXPECT_TRUE(rl.pass()) << "lambda: " << describe(rl);
        }
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

// NaN and Inf through the tiled kernel (forced): each stays in its own sequence and, forward,
// stops at a reset; the chain carries them across tiles (the sequences span 4 tiles in time).
template <class T>
void channels_last_tiled_special_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t rows = ld::tiled_warps * ld::tiled_rows<ld::ab_source<T>, T>;
  const std::int64_t batch = 2, length = 3 * rows + 5, channels = 40;
  const sequence_layout layout = sequence_layout::channels_last(batch, length, channels);
  const std::int64_t n = layout.elements();
  const std::int64_t sequences = layout.sequences;
  auto h = make_problem<T>(n, a_kind::contracting, seed + 23);
  h.x0s = random_states<T>(sequences, seed + 29);
  const auto at = [&](std::int64_t sequence, std::int64_t t) { return static_cast<std::size_t>(layout.at(sequence, t)); };
  h.q[at(3, rows + 2)] = nan_value<T>();   // sequence 3: NaN from the second tile on ...
  h.p[at(3, 2 * rows + 1)] = T(0);         // ... until this reset
  h.p[at(47, 5)] = nan_value<T>();         // sequence 47: NaN in a, no reset after it
  h.q[at(70, 2 * rows)] = inf_value<T>();  // sequence 70: Inf in b
  h.x0s[12] = nan_value<T>();              // sequence 12: a NaN initial state
  device_buffer<T> d_p(view(h.p)), d_q(view(h.q)), d_x0s(view(h.x0s)), d_x(n), d_final(sequences);
  ld::linrec_options options;
  options.columns = ld::column_path::tiled;
  const auto ops = reference_operands(h);
  for (const bool reverse : {false, true}) {
    SCOPED_TRACE(reverse ? "reverse" : "forward");
    const auto call = [&](auto src, void* temp, std::size_t& bytes) {
      return ld::dispatch_columns<policy<T>>(temp, bytes, src, d_x.data(), d_final.data(), sequences, length,
                                             static_cast<const T*>(d_x0s.data()), T(0), nullptr, options, channels);
    };
    query_and_run(
        [&](void* temp, std::size_t& bytes) {
          const T* p = d_p.data();
          const T* q = d_q.data();
          return reverse ? call(linrec_reverse(linrec_ab(p, q)), temp, bytes) : call(linrec_ab(p, q), temp, bytes);
        },
        d_x, d_final);
    const auto x = d_x.to_host();
    const auto fin = d_final.to_host();
    const auto rx = reference_check_layout(ops, layout, view(h.x0s), T(0), view(x), false, reverse);
    EXPECT_TRUE(rx.pass()) << "x: " << describe(rx);
    const auto rf = reference_check_layout(ops, layout, view(h.x0s), T(0), view(fin), true, reverse);
    EXPECT_TRUE(rf.pass()) << "final states: " << describe(rf);
    if (!reverse) {
      EXPECT_TRUE(is_nan(x[at(3, 2 * rows)]));            // carried across a tile boundary
      EXPECT_FALSE(is_nan(x[at(3, 2 * rows + 1)]));       // the reset stops it
      EXPECT_TRUE(is_nan(x[at(47, length - 1)]));
      EXPECT_TRUE(is_nan(x[at(12, rows)]));               // the NaN initial state, a tile later
    } else {
      EXPECT_TRUE(is_nan(x[at(3, 0)]));                   // reverse: toward the start
    }
    for (const std::int64_t clean : {std::int64_t{2}, std::int64_t{4}, std::int64_t{46}, std::int64_t{48},
                                     std::int64_t{69}, std::int64_t{71}}) {
      EXPECT_FALSE(is_nan(x[at(clean, reverse ? 0 : length - 1)])) << "sequence " << clean;
    }
  }
}

// ---- variable-length sequences (offsets) ----

inline std::vector<std::int64_t> offsets_of(const std::vector<std::int64_t>& lengths) {
  std::vector<std::int64_t> offsets(lengths.size() + 1, 0);
  for (std::size_t s = 0; s < lengths.size(); ++s) offsets[s + 1] = offsets[s] + lengths[s];
  return offsets;
}

// Lengths uniform in [lo, hi], with `empty_percent` % empty sequences.
inline std::vector<std::int64_t> random_lengths(std::int64_t count, std::int64_t lo, std::int64_t hi,
                                                int empty_percent, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> length(lo, hi);
  std::uniform_int_distribution<int> percent(0, 99);
  std::vector<std::int64_t> out(static_cast<std::size_t>(count));
  for (auto& l : out) l = percent(rng) < empty_percent ? 0 : length(rng);
  return out;
}

template <class T>
void varlen_case(const std::string& what, const std::vector<std::int64_t>& lengths, a_kind kind, std::uint64_t seed,
                 bool per_sequence_x0 = true, const single_pass_options& options = {}) {
  const std::vector<std::int64_t> offsets = offsets_of(lengths);
  const sequence_layout layout = sequence_layout::varlen(offsets);
  const std::int64_t n = layout.elements();
  const std::int64_t sequences = layout.sequences;
  SCOPED_TRACE("offsets: " + what + " (" + std::to_string(sequences) + " sequences, n = " + std::to_string(n) +
               "), a " + name(kind) + (per_sequence_x0 ? ", x0s" : ", x0 = 0") + ", mode " +
               std::to_string(static_cast<int>(options.mode)) + ", max_blocks " + std::to_string(options.max_blocks));
  auto h = make_problem<T>(n, kind, seed);
  if (per_sequence_x0) h.x0s = random_states<T>(sequences, seed + 1);
  device_buffer<std::int64_t> d_offsets{std::span<const std::int64_t>(offsets)};
  const linrec_varlen shape{d_offsets.data(), sequences, n};
  const auto solve = [&](auto src, bool want_x, bool want_final) {
    return solve_shape<T>(src, shape, n, sequences, h.x0s, want_x, want_final, options);
  };
  const auto backward = [&](const T* a, const T* x, const T* gx, const T* x0s) {
    return run_backward_call<T>(n, sequences, [&](void* temp, std::size_t& bytes, T* ga, T* gb, T* gx0) {
      return linear_recurrence_backward_varlen<T>(temp, bytes, a, x, gx, ga, gb, gx0, d_offsets.data(), sequences, n,
                                                  x0s, nullptr, options);
    });
  };
  check_all_directions(h, layout, solve, backward, seed);
}

// Lengths 0, 1 and ragged, empty sequences anywhere, sequences across tile boundaries
// (forward tiles and the backward pass's), one long sequence.
template <class T>
void varlen_shapes_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t tile = tile_of<T>();
  const std::int64_t gtile = gradient_tile_of<T>();
  varlen_case<T>("one empty sequence", {0}, a_kind::contracting, seed + 1);
  varlen_case<T>("three empty sequences", {0, 0, 0}, a_kind::contracting, seed + 2);
  varlen_case<T>("one element", {1}, a_kind::contracting, seed + 3);
  varlen_case<T>("empties around short ones", {0, 0, 5, 0, 1, 0, 2, 0}, a_kind::contracting, seed + 4);
  varlen_case<T>("ragged", {3, 17, 1, 64, 2, 100, 15, 16, 33}, a_kind::contracting, seed + 5);
  varlen_case<T>("around the tiles", {tile - 1, 1, tile, tile + 1, 0, 2 * tile + 3, gtile - 1, gtile + 1, 5},
                 a_kind::mixed, seed + 6);
  varlen_case<T>("one long sequence", {std::min<std::int64_t>(37 * tile + 11, max_test_n())}, a_kind::contracting,
                 seed + 7);
  varlen_case<T>("one long sequence, no initial states", {std::min<std::int64_t>(5 * tile + 3, max_test_n())},
                 a_kind::near_one, seed + 8, false);
  varlen_case<T>("a long one between empties", {0, std::min<std::int64_t>(9 * tile - 7, max_test_n()), 0},
                 a_kind::mixed, seed + 9);
  // Element-sized runs of sequences: 16 per thread's items (the walk's worst case).
  varlen_case<T>("20000 of length 1", std::vector<std::int64_t>(std::min<std::int64_t>(20000, max_test_n()), 1),
                 a_kind::contracting, seed + 10);
  varlen_case<T>("lengths 1 .. 3", random_lengths(std::min<std::int64_t>(30000, max_test_n() / 2), 1, 3, 0, seed + 11),
                 a_kind::contracting, seed + 12);
  // Mostly empty: 10000 sequences, a few of them long.
  std::vector<std::int64_t> sparse(10000, 0);
  for (std::size_t s = 17; s < sparse.size(); s += 997) sparse[s] = 1 + static_cast<std::int64_t>(s) % (2 * tile);
  varlen_case<T>("mostly empty", sparse, a_kind::contracting, seed + 13);
}

// Thousands of short sequences (1 .. 300, 5 % empty): the issue's workload.
template <class T>
void varlen_many_short_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t count = std::min<std::int64_t>(6000, max_test_n() / 150);
  varlen_case<T>("1 .. 300", random_lengths(count, 1, 300, 5, seed + 21), a_kind::contracting, seed + 22);
  varlen_case<T>("1 .. 300, resets", random_lengths(count, 1, 300, 5, seed + 23), a_kind::mixed, seed + 24);
  varlen_case<T>("1 .. 300, no initial states", random_lengths(count / 2, 1, 300, 0, seed + 25), a_kind::near_one,
                 seed + 26, false);
}

// Every launch mode with capped grids (many look-back rounds), and the bits equal to the
// default's.
template <class T>
void varlen_modes_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const auto lengths = random_lengths(std::min<std::int64_t>(3000, max_test_n() / 150), 0, 300, 5, seed + 31);
  for (const single_pass_options& options :
       {single_pass_options{}, single_pass_options{launch_mode::cooperative, 2},
        single_pass_options{launch_mode::tickets, 0}, single_pass_options{launch_mode::tickets, 3}}) {
    varlen_case<T>("modes", lengths, a_kind::mixed, seed + 32, true, options);
    if (::testing::Test::HasFatalFailure()) return;
  }
  // Same bits in every mode.
  const std::vector<std::int64_t> offsets = offsets_of(lengths);
  const std::int64_t n = offsets.back(), sequences = static_cast<std::int64_t>(lengths.size());
  const auto h = make_problem<T>(n, a_kind::mixed, seed + 33);
  const auto x0s = random_states<T>(sequences, seed + 34);
  device_buffer<T> d_p(view(h.p)), d_q(view(h.q));
  device_buffer<std::int64_t> d_offsets{std::span<const std::int64_t>(offsets)};
  const auto src = linrec_ab(static_cast<const T*>(d_p.data()), static_cast<const T*>(d_q.data()));
  const linrec_varlen shape{d_offsets.data(), sequences, n};
  const auto first = solve_shape<T>(src, shape, n, sequences, x0s, true, true);
  for (const single_pass_options& options :
       {single_pass_options{launch_mode::cooperative, 1}, single_pass_options{launch_mode::tickets, 2}}) {
    const auto again = solve_shape<T>(src, shape, n, sequences, x0s, true, true, options);
    EXPECT_EQ(0, std::memcmp(first.x.data(), again.x.data(), first.x.size() * sizeof(T)));
    EXPECT_EQ(0, std::memcmp(first.final_states.data(), again.final_states.data(),
                             first.final_states.size() * sizeof(T)));
  }
}

// NaN and Inf stay in their sequence (and before a reset); misaligned arrays (element
// offsets) give the same bits as aligned ones.
template <class T>
void varlen_special_and_memory_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t tile = tile_of<T>();
  const std::vector<std::int64_t> lengths{50, tile + 3, 0, 7, 2 * tile, 1, 300};
  const std::vector<std::int64_t> offsets = offsets_of(lengths);
  const sequence_layout layout = sequence_layout::varlen(offsets);
  const std::int64_t n = layout.elements(), sequences = layout.sequences;
  auto h = make_problem<T>(n, a_kind::contracting, seed + 41);
  h.x0s = random_states<T>(sequences, seed + 42);
  const T nan = nan_value<T>();
  h.q[static_cast<std::size_t>(layout.at(1, 10))] = nan;                                  // sequence 1 from step 10
  h.p[static_cast<std::size_t>(layout.at(4, 5))] = nan;                                   // sequence 4 ...
  h.p[static_cast<std::size_t>(layout.at(4, tile))] = T(0);                               // ... until a reset
  h.q[static_cast<std::size_t>(layout.at(5, 0))] = inf_value<T>();  // a one-element sequence
  h.x0s[2] = nan;  // an empty sequence: its final state is its NaN initial state
  device_buffer<T> d_p(view(h.p)), d_q(view(h.q));
  device_buffer<std::int64_t> d_offsets{std::span<const std::int64_t>(offsets)};
  const auto src = linrec_ab(static_cast<const T*>(d_p.data()), static_cast<const T*>(d_q.data()));
  const linrec_varlen shape{d_offsets.data(), sequences, n};
  const auto got = solve_shape<T>(src, shape, n, sequences, h.x0s, true, true);
  const auto ops = reference_operands(h);
  const auto rx = reference_check_layout(ops, layout, view(h.x0s), T(0), view(got.x), false);
  EXPECT_TRUE(rx.pass()) << describe(rx);
  const auto rf = reference_check_layout(ops, layout, view(h.x0s), T(0), view(got.final_states), true);
  EXPECT_TRUE(rf.pass()) << describe(rf);
  EXPECT_FALSE(is_nan(got.x[static_cast<std::size_t>(layout.at(1, 9))]));
  EXPECT_TRUE(is_nan(got.x[static_cast<std::size_t>(layout.at(1, lengths[1] - 1))]));
  EXPECT_FALSE(is_nan(got.x[static_cast<std::size_t>(layout.at(3, 0))]));  // 3 starts a new sequence
  EXPECT_TRUE(is_nan(got.final_states[2]));
  EXPECT_TRUE(is_nan(got.x[static_cast<std::size_t>(layout.at(4, tile - 1))]));
  EXPECT_FALSE(is_nan(got.x[static_cast<std::size_t>(layout.at(4, tile))]));
  EXPECT_TRUE(is_inf(got.final_states[5]));
  EXPECT_FALSE(is_nan(got.x[static_cast<std::size_t>(layout.at(6, 0))]));
  // Misaligned: every array one element past a 16-byte boundary; the same bits.
  const auto clean = make_problem<T>(n, a_kind::mixed, seed + 43);
  const auto clean_x0s = random_states<T>(sequences, seed + 44);
  device_buffer<T> d_cp(view(clean.p)), d_cq(view(clean.q));
  const auto aligned = solve_shape<T>(linrec_ab(static_cast<const T*>(d_cp.data()),
                                                static_cast<const T*>(d_cq.data())),
                                      shape, n, sequences, clean_x0s, true, true);
  std::vector<T> shifted_p(clean.p), shifted_q(clean.q);
  shifted_p.insert(shifted_p.begin(), T(7));
  shifted_q.insert(shifted_q.begin(), T(7));
  device_buffer<T> d_mp(view(shifted_p)), d_mq(view(shifted_q)), d_mx(n + 1);
  device_buffer<T> d_x0s(view(clean_x0s)), d_final(sequences);
  std::size_t bytes = 0;
  const auto call = [&](void* temp) {
    return linear_recurrence_varlen<T>(temp, bytes, d_mp.data() + 1, d_mq.data() + 1, d_mx.data() + 1,
                                       d_final.data(), d_offsets.data(), sequences, n, d_x0s.data());
  };
  SCANLAB_CHECK(call(nullptr));
  device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
  SCANLAB_CHECK(call(temp.data()));
  SCANLAB_CHECK(cudaDeviceSynchronize());
  const std::vector<T> mx = d_mx.to_host();
  EXPECT_EQ(0, std::memcmp(mx.data() + 1, aligned.x.data(), aligned.x.size() * sizeof(T)));
  const std::vector<T> mf = d_final.to_host();
  EXPECT_EQ(0, std::memcmp(mf.data(), aligned.final_states.data(), mf.size() * sizeof(T)));
}

// What the host checks: sizes, a null offsets pointer, too little temp storage; the empty cases.
template <class T>
void layout_api_contract_test() {
  device_buffer<T> d_a(16), d_b(16), d_x(16), d_final(4);
  const std::vector<std::int64_t> offsets{0, 3, 3, 10, 16};
  device_buffer<std::int64_t> d_offsets{std::span<const std::int64_t>(offsets)};
  std::size_t bytes = 0;
  const auto varlen = [&](void* temp, std::size_t& size, const std::int64_t* o, std::int64_t sequences,
                          std::int64_t n) {
    return linear_recurrence_varlen<T>(temp, size, d_a.data(), d_b.data(), d_x.data(), d_final.data(), o, sequences,
                                       n);
  };
  EXPECT_EQ(varlen(nullptr, bytes, d_offsets.data(), -1, 16), cudaErrorInvalidValue);
  EXPECT_EQ(varlen(nullptr, bytes, d_offsets.data(), 4, -1), cudaErrorInvalidValue);
  EXPECT_EQ(varlen(nullptr, bytes, d_offsets.data(), 0, 16), cudaErrorInvalidValue);  // no sequences, 16 elements
  EXPECT_EQ(varlen(nullptr, bytes, nullptr, 4, 16), cudaErrorInvalidValue);
  EXPECT_EQ(varlen(nullptr, bytes, d_offsets.data(), 0, 0), cudaSuccess);
  ASSERT_EQ(varlen(nullptr, bytes, d_offsets.data(), 4, 16), cudaSuccess);
  device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
  std::size_t less = bytes - 1;
  EXPECT_EQ(varlen(temp.data(), less, d_offsets.data(), 4, 16), cudaErrorInvalidValue);
  single_pass_options bad;
  bad.max_blocks = -1;
  EXPECT_EQ(linear_recurrence_varlen<T>(nullptr, bytes, d_a.data(), d_b.data(), d_x.data(), nullptr,
                                        d_offsets.data(), 4, 16, nullptr, nullptr, bad),
            cudaErrorInvalidValue);
  // Channels-last: negative sizes and overflow.
  EXPECT_EQ(linear_recurrence_channels_last<T>(nullptr, bytes, d_a.data(), d_b.data(), d_x.data(), -1, 4, 4),
            cudaErrorInvalidValue);
  EXPECT_EQ(linear_recurrence_channels_last<T>(nullptr, bytes, d_a.data(), d_b.data(), d_x.data(), 2, -4, 4),
            cudaErrorInvalidValue);
  EXPECT_EQ(linear_recurrence_channels_last<T>(nullptr, bytes, d_a.data(), d_b.data(), d_x.data(), 2, 4, -1),
            cudaErrorInvalidValue);
  EXPECT_EQ(linear_recurrence_channels_last<T>(nullptr, bytes, d_a.data(), d_b.data(), d_x.data(),
                                               std::int64_t{1} << 40, std::int64_t{1} << 20, std::int64_t{1} << 10),
            cudaErrorInvalidValue);
  // Empty sequences only (n == 0): the final states are the initial states (or 0), dL/dx0 is 0.
  const std::vector<std::int64_t> zeros(5, 0);
  device_buffer<std::int64_t> d_zeros{std::span<const std::int64_t>(zeros)};
  const std::vector<T> states{T(1), T(-2), T(3), T(-4)};
  device_buffer<T> d_states(view(states));
  ASSERT_EQ(linear_recurrence_varlen<T>(nullptr, bytes, d_a.data(), d_b.data(), nullptr, d_final.data(),
                                        d_zeros.data(), 4, 0, d_states.data()),
            cudaSuccess);
  device_buffer<unsigned char> small(static_cast<std::int64_t>(bytes));
  d_final.fill_bytes(0xff);
  ASSERT_EQ(linear_recurrence_varlen<T>(small.data(), bytes, d_a.data(), d_b.data(), nullptr, d_final.data(),
                                        d_zeros.data(), 4, 0, d_states.data()),
            cudaSuccess);
  SCANLAB_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(d_final.to_host(), states);
  ASSERT_EQ(linear_recurrence_backward_varlen<T>(nullptr, bytes, d_a.data(), d_x.data(), d_b.data(), nullptr, nullptr,
                                                 d_final.data(), d_zeros.data(), 4, 0, d_states.data()),
            cudaSuccess);
  device_buffer<unsigned char> small2(static_cast<std::int64_t>(std::max<std::size_t>(bytes, 1)));
  d_final.fill_bytes(0xff);
  ASSERT_EQ(linear_recurrence_backward_varlen<T>(small2.data(), bytes, d_a.data(), d_x.data(), d_b.data(), nullptr,
                                                 nullptr, d_final.data(), d_zeros.data(), 4, 0, d_states.data()),
            cudaSuccess);
  SCANLAB_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(d_final.to_host(), std::vector<T>(4, T(0)));
}

}  // namespace scanlab::test::linrec

// One set of tests per element type.
#define SCANLAB_LINREC_LAYOUT_TESTS(suite, T)                                                            \
  class suite : public scanlab::test::gpu_test {};                                                       \
  TEST_F(suite, ChannelsLast) { scanlab::test::linrec::channels_last_test<T>(); }                       \
  TEST_F(suite, ChannelsLastPathsFormsAndNaN) { scanlab::test::linrec::channels_last_paths_test<T>(); } \
  TEST_F(suite, ChannelsLastTiled) { scanlab::test::linrec::channels_last_tiled_test<T>(); }             \
  TEST_F(suite, ChannelsLastTiledNaN) { scanlab::test::linrec::channels_last_tiled_special_test<T>(); } \
  TEST_F(suite, VarlenShapes) { scanlab::test::linrec::varlen_shapes_test<T>(); }                       \
  TEST_F(suite, VarlenManyShort) { scanlab::test::linrec::varlen_many_short_test<T>(); }                \
  TEST_F(suite, VarlenLaunchModes) { scanlab::test::linrec::varlen_modes_test<T>(); }                   \
  TEST_F(suite, VarlenNaNAndMisaligned) { scanlab::test::linrec::varlen_special_and_memory_test<T>(); } \
  TEST_F(suite, ApiContract) { scanlab::test::linrec::layout_api_contract_test<T>(); }
