// Test bodies for the external sort, scanlab/streaming/sort.cuh, shared by one translation
// unit per key type (SCANLAB_STREAMING_SORT_TESTS).
//
// Every result is checked bit for bit against std::stable_sort by radix_ordered_bits (the
// radix sort's order, stable) and against the in-memory radix sort of the whole array on the
// device. Pairs carry their input positions as values, so stability is checked item by item.
// Shapes: n = 0, 1, run - 1, run, run + 1, many runs, 1000003 (runs capped at 1000 items with
// sort_options.max_run_bytes: up to a thousand runs, merged in one step); tiny budgets (tens of
// runs, merge windows of tens to hundreds of items: hundreds of merge steps); data random over
// the whole key range, few distinct keys (long runs of equal keys across run and step
// boundaries), all equal, sorted, reverse sorted, and for floats NaNs (both signs, several
// payloads), -0.0, +0.0, infinities. Host arrays pinned and pageable, in place, the caller's
// scratch (pinned, pageable) or the call's own.
#pragma once

#include "common/gpu_test.hpp"
#include "common/test_util.hpp"
#include "streaming/streaming_test_common.cuh"

#include <scanlab/algorithms/radix_sort.cuh>
#include <scanlab/error.hpp>
#include <scanlab/streaming.cuh>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace scanlab::test::streaming_sort {

namespace ss = scanlab::streaming;
using streaming::device_array;
using streaming::host_array;
using streaming::with_temp;

// The run cap of the capped shapes, in items.
inline constexpr std::int64_t test_run = 1000;

enum class pattern { random, few_distinct, all_equal, sorted, reverse, special };

inline const char* pattern_name(pattern p) {
  switch (p) {
    case pattern::random: return "random";
    case pattern::few_distinct: return "few distinct keys";
    case pattern::all_equal: return "all equal";
    case pattern::sorted: return "sorted";
    case pattern::reverse: return "reverse sorted";
    default: return "NaN, -0.0, +0.0, inf";
  }
}

// Keys of a pattern. few_distinct: four keys, so long stretches of equal keys cross run and
// merge-step boundaries; special (floats): a random mix with NaNs, signed zeros, infinities.
template <class Key>
std::vector<Key> make_keys(pattern p, std::int64_t n, std::uint64_t seed) {
  std::vector<Key> keys = random_values<Key>(n, seed, /*bounded=*/false);
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);
  switch (p) {
    case pattern::random: break;
    case pattern::few_distinct:
      for (auto& k : keys) k = static_cast<Key>(rng() % 4);
      break;
    case pattern::all_equal: std::fill(keys.begin(), keys.end(), static_cast<Key>(7)); break;
    case pattern::sorted:
    case pattern::reverse:
      std::stable_sort(keys.begin(), keys.end(), [](Key a, Key b) {
        return scanlab::radix_ordered_bits(a) < scanlab::radix_ordered_bits(b);
      });
      if (p == pattern::reverse) std::reverse(keys.begin(), keys.end());
      break;
    case pattern::special:
      if constexpr (std::is_floating_point_v<Key>) {
        using Bits = scanlab::radix_ordered_bits_t<Key>;
        const Bits quiet = std::is_same_v<Key, float> ? Bits(0x7fc00000u) : Bits(0x7ff8000000000000ull);
        for (auto& k : keys) {
          const Bits sign = static_cast<Bits>(Bits{1} << (8 * sizeof(Key) - 1));
          Bits bits = 0;
          switch (rng() % 8) {
            case 0: bits = static_cast<Bits>(quiet | (rng() % 5)); break;         // +NaN, payloads
            case 1: bits = static_cast<Bits>(sign | quiet | (rng() % 5)); break;  // -NaN
            case 2: bits = 0; break;                                              // +0.0
            case 3: bits = sign; break;                                           // -0.0
            case 4: {
              const Key inf = (rng() % 2 != 0) ? std::numeric_limits<Key>::infinity()
                                               : -std::numeric_limits<Key>::infinity();
              std::memcpy(&bits, &inf, sizeof(Key));
              break;
            }
            default: std::memcpy(&bits, &k, sizeof(Key)); break;  // a number
          }
          std::memcpy(&k, &bits, sizeof(Key));
        }
      }
      break;
  }
  return keys;
}

// The expected result: positions stably sorted by ordered bits, and keys in that order.
template <class Key>
std::vector<std::uint32_t> reference_order(const std::vector<Key>& keys) {
  std::vector<std::uint32_t> order(keys.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return scanlab::radix_ordered_bits(keys[a]) < scanlab::radix_ordered_bits(keys[b]);
  });
  return order;
}

// Bitwise equality of n items, reporting the first difference.
template <class T>
void expect_same_bits(const T* got, const T* want, std::int64_t n, const std::string& what) {
  for (std::int64_t i = 0; i < n; ++i) {
    if (std::memcmp(got + i, want + i, sizeof(T)) != 0) {
      ADD_FAILURE() << what << ": first difference at item " << i << " of " << n;
      return;
    }
  }
}

// One call's setting: the items, the budget, run cap, where the arrays live.
struct sort_shape {
  std::int64_t n;
  std::size_t budget;
  std::int64_t run_items;  // 0: the default run cap
  std::string name;
};

inline std::vector<sort_shape> sort_shapes() {
  const std::size_t big = std::size_t{64} << 20;
  std::vector<sort_shape> out;
  for (const std::int64_t n : {std::int64_t{0}, std::int64_t{1}, test_run - 1, test_run, test_run + 1,
                               7 * test_run + 3, std::int64_t{1000003}}) {
    out.push_back({n, big, test_run, "runs of " + std::to_string(test_run) + ", n " + std::to_string(n)});
  }
  out.push_back({300007, big, 0, "one run (default options), n 300007"});
  out.push_back({100003, std::size_t{256} * 1024, 0, "256 KiB budget, n 100003"});
  out.push_back({250001, std::size_t{1} << 20, 0, "1 MiB budget, n 250001"});
  out.push_back({20011, std::size_t{1} << 20, 517, "runs of 517, 1 MiB budget, n 20011"});
  std::vector<sort_shape> kept;
  for (auto& s : out) {
    if (s.n <= max_test_n()) kept.push_back(std::move(s));
  }
  return kept;
}

template <class Key, class Value>
ss::sort_options options_for(const sort_shape& s) {
  ss::sort_options o;
  if (s.run_items > 0) o.max_run_bytes = static_cast<std::size_t>(s.run_items) * (sizeof(Key) + sizeof(Value));
  return o;
}

template <class Key>
ss::sort_options keys_options_for(const sort_shape& s) {
  ss::sort_options o;
  if (s.run_items > 0) o.max_run_bytes = static_cast<std::size_t>(s.run_items) * sizeof(Key);
  return o;
}

// The run and step counts the shape should give.
inline void expect_runs(const ss::workspace& ws, const sort_shape& s) {
  if (s.n == 0) {
    EXPECT_EQ(ws.last_num_chunks(), 0);
    return;
  }
  const std::int64_t run = ws.last_chunk_items();
  ASSERT_GE(run, 1);
  EXPECT_EQ(ws.last_num_chunks(), (s.n + run - 1) / run);
  if (s.run_items > 0) EXPECT_EQ(run, std::min(s.n, s.run_items));
  EXPECT_EQ(ws.last_merge_steps() == 0, ws.last_num_chunks() == 1) << "a merge pass exactly when there are runs";
  EXPECT_LE(ws.device_bytes_held(), s.budget);
}

// The in-memory radix sort of the same keys (and positions), for comparison.
template <class Key>
void in_memory_sort(const std::vector<Key>& keys, std::vector<Key>& sorted_keys, std::vector<std::uint32_t>& positions) {
  const std::int64_t n = static_cast<std::int64_t>(keys.size());
  sorted_keys.assign(keys.size(), Key{});
  positions.assign(keys.size(), 0u);
  if (n == 0) return;
  std::vector<std::uint32_t> iota(keys.size());
  std::iota(iota.begin(), iota.end(), 0u);
  device_array<Key> d_keys(keys);
  device_array<std::uint32_t> d_values(iota);
  device_array<Key> d_keys_out(n);
  device_array<std::uint32_t> d_values_out(n);
  with_temp([&](void* t, std::size_t& b) {
    return scanlab::radix_sort_pairs(t, b, static_cast<const Key*>(d_keys.data()), d_keys_out.data(),
                                     static_cast<const std::uint32_t*>(d_values.data()), d_values_out.data(), n);
  });
  sorted_keys = d_keys_out.to_vector(n);
  positions = d_values_out.to_vector(n);
}

// Where a call's scratch comes from.
enum class scratch_kind { own, pinned, pageable };

// Keys: every shape and pattern, pinned and pageable, in place and not.
template <class Key>
void sort_keys_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  for (const sort_shape& s : sort_shapes()) {
    for (const pattern p : {pattern::random, pattern::few_distinct, pattern::all_equal, pattern::sorted,
                            pattern::reverse, pattern::special}) {
      if (p == pattern::special && !std::is_floating_point_v<Key>) continue;
      const std::vector<Key> keys = make_keys<Key>(p, s.n, seed + static_cast<std::uint64_t>(s.n));
      const std::vector<std::uint32_t> order = reference_order(keys);
      std::vector<Key> want(keys.size());
      for (std::size_t i = 0; i < order.size(); ++i) want[i] = keys[order[i]];
      std::vector<Key> in_memory;
      std::vector<std::uint32_t> in_memory_positions;
      in_memory_sort(keys, in_memory, in_memory_positions);
      expect_same_bits(in_memory.data(), want.data(), s.n, "in-memory radix sort against std::stable_sort (sanity)");
      for (const bool pinned : {true, false}) {
        for (const bool in_place : {false, true}) {
          SCOPED_TRACE(s.name + ", " + pattern_name(p) + (pinned ? ", pinned" : ", pageable") +
                       (in_place ? ", in place" : ", out of place"));
          host_array<Key> in(s.n, pinned);
          host_array<Key> out(s.n, pinned);
          in.assign(keys);
          out.poison();
          Key* target = in_place ? in.data() : out.data();
          ss::workspace ws(s.budget);
          ASSERT_EQ(ss::sort_keys(ws, in.data(), target, s.n, keys_options_for<Key>(s)), cudaSuccess);
          expect_runs(ws, s);
          expect_same_bits(target, want.data(), s.n, "external sort against std::stable_sort");
          if (!in_place) expect_same_bits(in.data(), keys.data(), s.n, "the input changed");
        }
      }
    }
  }
}

// Pairs with the input positions as values: stability item by item, scratch from the caller.
template <class Key, class Value>
void sort_pairs_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  for (const sort_shape& s : sort_shapes()) {
    for (const pattern p : {pattern::random, pattern::few_distinct, pattern::all_equal, pattern::reverse,
                            pattern::special}) {
      if (p == pattern::special && !std::is_floating_point_v<Key>) continue;
      const std::vector<Key> keys = make_keys<Key>(p, s.n, seed + 3 * static_cast<std::uint64_t>(s.n));
      const std::vector<std::uint32_t> order = reference_order(keys);
      std::vector<Key> want_keys(keys.size());
      std::vector<Value> want_values(keys.size());
      std::vector<Value> positions(keys.size());
      for (std::size_t i = 0; i < order.size(); ++i) {
        want_keys[i] = keys[order[i]];
        want_values[i] = static_cast<Value>(order[i]);
        positions[i] = static_cast<Value>(i);
      }
      std::vector<Key> in_memory;
      std::vector<std::uint32_t> in_memory_positions;
      in_memory_sort(keys, in_memory, in_memory_positions);
      EXPECT_TRUE(in_memory_positions == order) << "in-memory radix sort against std::stable_sort (sanity)";
      for (const bool pinned : {true, false}) {
        for (const bool in_place : {false, true}) {
          {
            // Each scratch kind in turn (four settings, three kinds).
            const auto scratch = static_cast<scratch_kind>((2 * static_cast<int>(pinned) + static_cast<int>(in_place)) % 3);
            SCOPED_TRACE(s.name + ", " + pattern_name(p) + (pinned ? ", pinned" : ", pageable") +
                         (in_place ? ", in place" : ", out of place") +
                         (scratch == scratch_kind::own      ? ", the call's scratch"
                          : scratch == scratch_kind::pinned ? ", pinned scratch"
                                                            : ", pageable scratch"));
            host_array<Key> keys_in(s.n, pinned);
            host_array<Value> values_in(s.n, !pinned);  // the other kind: mixed arrays
            host_array<Key> keys_out(s.n, pinned);
            host_array<Value> values_out(s.n, pinned);
            keys_in.assign(keys);
            values_in.assign(positions);
            keys_out.poison();
            values_out.poison();
            const std::size_t scratch_bytes = ss::sort_scratch_bytes<Key, Value>(s.n);
            host_array<unsigned char> scratch_array(static_cast<std::int64_t>(scratch_bytes),
                                                    scratch == scratch_kind::pinned);
            ss::sort_options o = options_for<Key, Value>(s);
            if (scratch != scratch_kind::own) o.h_scratch = scratch_array.data();
            Key* k_out = in_place ? keys_in.data() : keys_out.data();
            Value* v_out = in_place ? values_in.data() : values_out.data();
            ss::workspace ws(s.budget);
            ASSERT_EQ(ss::sort_pairs(ws, keys_in.data(), values_in.data(), k_out, v_out, s.n, o), cudaSuccess);
            expect_runs(ws, s);
            expect_same_bits(k_out, want_keys.data(), s.n, "keys against std::stable_sort");
            expect_same_bits(v_out, want_values.data(), s.n, "values (input positions) against std::stable_sort");
          }
        }
      }
    }
  }
}

// The merge in many small steps with long runs of equal keys: every step boundary falls
// inside equal keys, and the pair values show the order across runs.
template <class Key>
void equal_keys_across_steps_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t n = 60013;
  std::vector<Key> keys(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) keys[static_cast<std::size_t>(i)] = static_cast<Key>((i * 7) % 3);
  std::vector<std::uint32_t> positions(keys.size());
  std::iota(positions.begin(), positions.end(), 0u);
  host_array<Key> k(n, true);
  host_array<std::uint32_t> v(n, true);
  k.assign(keys);
  v.assign(positions);
  ss::sort_options o;
  o.max_run_bytes = 2003 * (sizeof(Key) + sizeof(std::uint32_t));
  ss::workspace ws(std::size_t{160} * 1024);
  ASSERT_EQ(ss::sort_pairs(ws, k.data(), v.data(), k.data(), v.data(), n, o), cudaSuccess);
  EXPECT_GT(ws.last_num_chunks(), 20);
  EXPECT_GT(ws.last_merge_steps(), 10) << "the budget should force small merge steps";
  const std::vector<std::uint32_t> order = reference_order(keys);
  std::vector<Key> want(keys.size());
  for (std::size_t i = 0; i < order.size(); ++i) want[i] = keys[order[i]];
  expect_same_bits(k.data(), want.data(), n, "keys");
  expect_same_bits(v.data(), order.data(), n, "values (input positions)");
}

// The API's contract: bad arguments, budgets, n = 0, a workspace reused.
template <class Key>
void sort_contract_test() {
  const std::int64_t n = 5000;
  std::vector<Key> x = make_keys<Key>(pattern::random, n, test_seed());
  std::vector<Key> y(x.size());
  std::vector<std::uint32_t> v(x.size());
  ss::sort_options runs_of_100;
  runs_of_100.max_run_bytes = 100 * sizeof(Key);
  EXPECT_EQ(ss::sort_keys(std::size_t{512}, x.data(), y.data(), n), cudaErrorInvalidValue) << "512-byte budget";
  EXPECT_EQ(ss::sort_keys(std::size_t{512}, x.data(), y.data(), 0), cudaErrorInvalidValue) << "n = 0 checks the budget";
  EXPECT_EQ(ss::sort_keys(std::size_t{1} << 20, x.data(), y.data(), -1), cudaErrorInvalidValue);
  EXPECT_EQ(ss::sort_keys(std::size_t{1} << 20, x.data(), static_cast<Key*>(nullptr), n), cudaErrorInvalidValue);
  EXPECT_EQ(ss::sort_keys(std::size_t{1} << 20, static_cast<const Key*>(nullptr), y.data(), n), cudaErrorInvalidValue);
  EXPECT_EQ(ss::sort_pairs(std::size_t{1} << 20, x.data(), static_cast<const std::uint32_t*>(nullptr), y.data(),
                           v.data(), n),
            cudaErrorInvalidValue);
  device_array<Key> d_x(x);
  EXPECT_EQ(ss::sort_keys(std::size_t{1} << 20, static_cast<const Key*>(d_x.data()), y.data(), n),
            cudaErrorInvalidValue)
      << "device memory is not a host array";
  EXPECT_EQ(ss::sort_keys(std::size_t{1} << 20, x.data(), d_x.data(), n, runs_of_100), cudaErrorInvalidValue)
      << "device memory as the output of a merge";
  // Runs that fit but whose merge does not: 5000 one-item runs in a few KiB.
  ss::sort_options runs_of_1;
  runs_of_1.max_run_bytes = sizeof(Key);
  EXPECT_EQ(ss::sort_keys(std::size_t{64} * 1024, x.data(), y.data(), n, runs_of_1), cudaErrorInvalidValue)
      << "the merge of 5000 one-item runs cannot fit 64 KiB (its table alone is 80 KB)";
  // n = 0 with null arrays: success.
  ASSERT_EQ(ss::sort_keys(std::size_t{1} << 20, static_cast<const Key*>(nullptr), static_cast<Key*>(nullptr), 0),
            cudaSuccess);
  // One workspace through calls of different sizes and run counts.
  ss::workspace ws(std::size_t{256} * 1024);
  for (const std::int64_t m : {std::int64_t{10}, n, std::int64_t{1}, std::int64_t{999}}) {
    ASSERT_EQ(ss::sort_keys(ws, x.data(), y.data(), m, runs_of_100), cudaSuccess);
    std::vector<Key> want(x.begin(), x.begin() + m);
    std::stable_sort(want.begin(), want.end(), [](Key a, Key b) {
      return scanlab::radix_ordered_bits(a) < scanlab::radix_ordered_bits(b);
    });
    expect_same_bits(y.data(), want.data(), m, "n " + std::to_string(m));
    EXPECT_LE(ws.device_bytes_held(), ws.device_bytes());
  }
  // sort_options::on_progress: pass 1 then pass 2, each counting up to n, R as planned; one run:
  // pass 1 only.
  struct seen {
    std::vector<ss::sort_progress> calls;
  } log;
  ss::sort_options watched = runs_of_100;
  watched.progress_context = &log;
  watched.on_progress = [](void* context, const ss::sort_progress& p) { static_cast<seen*>(context)->calls.push_back(p); };
  ss::workspace roomy(std::size_t{64} << 20);  // holds the 5000 keys as one run
  for (const std::int64_t runs : {std::int64_t{50}, std::int64_t{1}}) {
    log.calls.clear();
    if (runs == 1) watched.max_run_bytes = std::size_t{1} << 30;
    ASSERT_EQ(ss::sort_keys(runs == 1 ? roomy : ws, x.data(), y.data(), n, watched), cudaSuccess);
    ASSERT_FALSE(log.calls.empty());
    std::int64_t done[3] = {0, 0, 0};
    for (const ss::sort_progress& p : log.calls) {
      ASSERT_TRUE(p.pass == 1 || (p.pass == 2 && done[1] == n)) << "pass " << p.pass << " out of order";
      EXPECT_EQ(p.n, n);
      EXPECT_EQ(p.runs, runs);
      EXPECT_GT(p.done, done[p.pass]) << "pass " << p.pass << " went back";
      done[p.pass] = p.done;
    }
    EXPECT_EQ(done[1], n);
    EXPECT_EQ(done[2], runs > 1 ? n : 0);
  }
}

}  // namespace scanlab::test::streaming_sort

// The suite for one key type (pairs with Value values: the input positions).
#define SCANLAB_STREAMING_SORT_TESTS(Fixture, Key, Value)                                                \
  class Fixture : public ::scanlab::test::gpu_test {};                                                   \
  TEST_F(Fixture, SortKeys) { ::scanlab::test::streaming_sort::sort_keys_test<Key>(); }                  \
  TEST_F(Fixture, SortPairs) { ::scanlab::test::streaming_sort::sort_pairs_test<Key, Value>(); }         \
  TEST_F(Fixture, EqualKeysAcrossSteps) { ::scanlab::test::streaming_sort::equal_keys_across_steps_test<Key>(); } \
  TEST_F(Fixture, Contract) { ::scanlab::test::streaming_sort::sort_contract_test<Key>(); }
