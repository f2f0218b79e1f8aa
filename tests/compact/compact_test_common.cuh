// Test bodies for stream compaction (scanlab/algorithms/select.cuh and the three-phase
// version), shared by one translation unit per element type.
//
// Every result is checked against a sequential CPU reference (std::copy_if, std::unique
// semantics) bitwise, and for keys against cub::DeviceSelect (If, Flagged, Unique) on the
// same device input. Outputs are poisoned before each run and the bytes after the kept
// items must stay poisoned; temp storage is filled with garbage.
#pragma once

#include "common/device_buffer.hpp"
#include "common/gpu_test.hpp"
#include "common/test_util.hpp"

#include <scanlab/algorithms/select.cuh>
#include <scanlab/algorithms/select_three_phase.cuh>
#include <scanlab/error.hpp>
#include <scanlab/iterator.cuh>

#include <cub/device/device_select.cuh>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace scanlab::test::compact {

// Items per tile of a tuning on this GPU (the policy is chosen per architecture).
template <class Tuning>
std::int64_t tile_on_device() {
  std::int64_t items = 0;
  SCANLAB_CHECK(scanlab::detail::device_tile_items<Tuning>(items));
  return items;
}

// ---- element types and predicates ---------------------------------------------------

// 12 bytes: neither a divisor nor a multiple of 16 (element-wise loads).
struct vec3u {
  std::uint32_t x, y, z;
  friend constexpr bool operator==(const vec3u&, const vec3u&) = default;
};
// 16 bytes: one vector access per item.
struct quad {
  std::uint32_t key;
  std::int32_t a;
  float b;
  std::uint32_t c;
  friend constexpr bool operator==(const quad&, const quad&) = default;
};

// A number in [0, 2^32) that a predicate thresholds: uniform over the type's random data.
template <class T>
__host__ __device__ std::uint64_t score(const T& x) {
  if constexpr (std::is_same_v<T, vec3u>) {
    return x.y;
  } else if constexpr (std::is_same_v<T, quad>) {
    return x.key;
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<std::uint64_t>(static_cast<double>(x) * 4294967296.0);  // data in [0, 1)
  } else {
    // Integers: their bits, scaled to 32 (small types) or cut to the top 32 (wide types).
    using U = std::make_unsigned_t<T>;
    const auto u = static_cast<U>(x);
    if constexpr (sizeof(T) >= 4) return static_cast<std::uint64_t>(u) >> (8 * sizeof(T) - 32);
    else return static_cast<std::uint64_t>(u) << (32 - 8 * sizeof(T));
  }
}

// Keeps items whose score is below `limit` (limit = selectivity * 2^32).
template <class T>
struct below {
  std::uint64_t limit;
  __host__ __device__ bool operator()(const T& x) const { return score(x) < limit; }
};

template <class T>
below<T> predicate_for(double selectivity) {
  return {static_cast<std::uint64_t>(selectivity * 4294967296.0)};
}

// Random data whose scores are uniform in [0, 2^32).
template <class T>
std::vector<T> random_data(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> out(static_cast<std::size_t>(n));
  for (auto& v : out) {
    const std::uint64_t word = rng();
    if constexpr (std::is_same_v<T, vec3u>) {
      v = {static_cast<std::uint32_t>(word), static_cast<std::uint32_t>(word >> 32), static_cast<std::uint32_t>(rng())};
    } else if constexpr (std::is_same_v<T, quad>) {
      v = {static_cast<std::uint32_t>(word), static_cast<std::int32_t>(word >> 32), static_cast<float>(rng() % 1000),
           static_cast<std::uint32_t>(rng())};
    } else if constexpr (std::is_floating_point_v<T>) {
      v = static_cast<T>(static_cast<double>(word >> 11) * 0x1.0p-53);
      if (v >= T(1)) v = T(0);
    } else {
      std::memcpy(&v, &word, sizeof(T));
    }
  }
  return out;
}

// Data with runs of equal items (run lengths geometric with the given mean), for unique.
template <class T>
std::vector<T> runs_data(std::int64_t n, std::uint64_t seed, double mean_run) {
  std::vector<T> out = random_data<T>(n, seed);
  std::mt19937_64 rng(seed ^ 0x5bd1e995u);
  std::bernoulli_distribution change(1.0 / mean_run);
  for (std::size_t i = 1; i < out.size(); ++i) {
    if (!change(rng)) out[i] = out[i - 1];
  }
  return out;
}

// ---- host references ----------------------------------------------------------------

enum class op { select_if, remove_if, flagged, unique };

inline const char* name(op o) {
  switch (o) {
    case op::select_if: return "select_if";
    case op::remove_if: return "remove_if";
    case op::flagged: return "select_flagged";
    case op::unique: return "unique";
  }
  return "?";
}

// Which items the CPU keeps (bitwise equality for unique of non-float types; == for floats).
template <class T, class Pred>
std::vector<std::uint8_t> reference_keep(op o, const std::vector<T>& in, const std::vector<std::uint8_t>& flags,
                                         Pred pred) {
  std::vector<std::uint8_t> keep(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    switch (o) {
      case op::select_if: keep[i] = pred(in[i]) ? 1 : 0; break;
      case op::remove_if: keep[i] = pred(in[i]) ? 0 : 1; break;
      case op::flagged: keep[i] = flags[i] != 0 ? 1 : 0; break;
      case op::unique: keep[i] = (i == 0 || !(in[i - 1] == in[i])) ? 1 : 0; break;
    }
  }
  return keep;
}

template <class T>
std::vector<T> gather_kept(const std::vector<T>& in, const std::vector<std::uint8_t>& keep) {
  std::vector<T> out;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (keep[i] != 0) out.push_back(in[i]);
  }
  return out;
}

// ---- device runs --------------------------------------------------------------------

template <class T>
std::vector<T> copy_to_host(const T* d, std::int64_t n) {
  std::vector<T> host(static_cast<std::size_t>(n));
  if (n > 0) SCANLAB_CHECK(cudaMemcpy(host.data(), d, host.size() * sizeof(T), cudaMemcpyDeviceToHost));
  return host;
}

template <class T>
device_buffer<T> upload(const std::vector<T>& host) {
  return device_buffer<T>(std::span<const T>(host));
}

// Two-phase call with garbage-filled temp storage; returns the count (device synchronised).
template <class Call>
std::int64_t run_two_phase(Call call, const std::int64_t* d_count) {
  std::size_t bytes = 0;
  SCANLAB_CHECK(call(nullptr, bytes));
  EXPECT_GE(bytes, 1u);
  device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
  temp.fill_bytes(0xff);
  SCANLAB_CHECK(call(temp.data(), bytes));
  SCANLAB_CHECK(cudaDeviceSynchronize());
  std::int64_t count = -1;
  SCANLAB_CHECK(cudaMemcpy(&count, d_count, sizeof(count), cudaMemcpyDeviceToHost));
  return count;
}

enum class impl { production, three_phase, cub };

inline const char* name(impl i) {
  switch (i) {
    case impl::production: return "production";
    case impl::three_phase: return "three_phase";
    case impl::cub: return "cub";
  }
  return "?";
}

// Keys only: runs op with the implementation into d_out; returns the count. With
// options set (production only), goes through the dispatcher with those options.
template <class T, class Pred>
std::int64_t run_keys(impl which, op o, const T* d_in, const std::uint8_t* d_flags, T* d_out, std::int64_t n,
                      Pred pred, const select_detail::select_options* options = nullptr) {
  using namespace select_detail;
  device_buffer<std::int64_t> count(1);
  count.fill_bytes(0xee);
  std::int64_t* d_count = count.data();
  if (which == impl::cub) {
    return run_two_phase(
        [&](void* temp, std::size_t& bytes) -> cudaError_t {
          switch (o) {
            case op::select_if: return cub::DeviceSelect::If(temp, bytes, d_in, d_out, d_count, n, pred);
            case op::flagged: return cub::DeviceSelect::Flagged(temp, bytes, d_in, d_flags, d_out, d_count, n);
            case op::unique: return cub::DeviceSelect::Unique(temp, bytes, d_in, d_out, d_count, n);
            default: return cudaErrorNotSupported;
          }
        },
        d_count);
  }
  if (which == impl::three_phase) {
    return run_two_phase(
        [&](void* temp, std::size_t& bytes) -> cudaError_t {
          switch (o) {
            case op::select_if: return three_phase::select_if(temp, bytes, d_in, d_out, d_count, n, pred);
            case op::remove_if: return three_phase::remove_if(temp, bytes, d_in, d_out, d_count, n, pred);
            case op::flagged: return three_phase::select_flagged(temp, bytes, d_in, d_flags, d_out, d_count, n);
            case op::unique: return three_phase::unique(temp, bytes, d_in, d_out, d_count, n);
          }
          return cudaErrorNotSupported;
        },
        d_count);
  }
  if (options == nullptr) {
    return run_two_phase(
        [&](void* temp, std::size_t& bytes) -> cudaError_t {
          switch (o) {
            case op::select_if: return scanlab::select_if(temp, bytes, d_in, d_out, d_count, n, pred);
            case op::remove_if: return scanlab::remove_if(temp, bytes, d_in, d_out, d_count, n, pred);
            case op::flagged: return scanlab::select_flagged(temp, bytes, d_in, d_flags, d_out, d_count, n);
            case op::unique: return scanlab::unique(temp, bytes, d_in, d_out, d_count, n);
          }
          return cudaErrorNotSupported;
        },
        d_count);
  }
  using policy = policy_for<const T*, none_iterator>;
  const none_iterator none_it{};
  return run_two_phase(
      [&](void* temp, std::size_t& bytes) -> cudaError_t {
        switch (o) {
          case op::select_if:
            return dispatch_select<policy>(temp, bytes, d_in, none_it, none_it, d_out, none_it, d_count, n,
                                           predicate_selector<Pred, true>{pred}, nullptr, *options);
          case op::remove_if:
            return dispatch_select<policy>(temp, bytes, d_in, none_it, none_it, d_out, none_it, d_count, n,
                                           predicate_selector<Pred, false>{pred}, nullptr, *options);
          case op::flagged:
            return dispatch_select<policy>(temp, bytes, d_in, none_it, d_flags, d_out, none_it, d_count, n,
                                           flags_selector{}, nullptr, *options);
          case op::unique:
            return dispatch_select<policy>(temp, bytes, d_in, none_it, none_it, d_out, none_it, d_count, n,
                                           unique_selector<equal_to>{}, nullptr, *options);
        }
        return cudaErrorNotSupported;
      },
      d_count);
}

inline std::string where(std::int64_t n, double selectivity) {
  return "n = " + std::to_string(n) + ", selectivity " + std::to_string(selectivity);
}

// Output of `out_capacity` items poisoned with 0xab; after the run the first `count` must
// be the reference and the rest still 0xab.
template <class T>
::testing::AssertionResult check_output(const std::vector<T>& expected, std::int64_t count,
                                        const std::vector<T>& out) {
  if (count != static_cast<std::int64_t>(expected.size())) {
    return ::testing::AssertionFailure() << "count " << count << ", want " << expected.size();
  }
  const auto* got = reinterpret_cast<const unsigned char*>(out.data());
  const auto* want = reinterpret_cast<const unsigned char*>(expected.data());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (std::memcmp(got + i * sizeof(T), want + i * sizeof(T), sizeof(T)) != 0) {
      return ::testing::AssertionFailure() << "kept item " << i << " of " << expected.size() << " differs";
    }
  }
  for (std::size_t b = expected.size() * sizeof(T); b < out.size() * sizeof(T); ++b) {
    if (got[b] != 0xab) {
      return ::testing::AssertionFailure() << "byte " << b << " past the " << expected.size()
                                           << " kept items was written";
    }
  }
  return ::testing::AssertionSuccess();
}

// One op on one input with every implementation (CUB where it has the op), each checked
// against the CPU reference.
template <class T, class Pred>
void check_all(op o, const std::vector<T>& h_in, const std::vector<std::uint8_t>& h_flags, Pred pred,
               const select_detail::select_options* options = nullptr, bool with_cub = true,
               bool with_three_phase = true) {
  const auto n = static_cast<std::int64_t>(h_in.size());
  const std::vector<T> expected = gather_kept(h_in, reference_keep(o, h_in, h_flags, pred));
  auto d_in = upload(h_in);
  auto d_flags = upload(h_flags);
  device_buffer<T> d_out(n);
  std::vector<impl> impls = {impl::production};
  if (with_three_phase) impls.push_back(impl::three_phase);
  if (with_cub && o != op::remove_if) impls.push_back(impl::cub);
  for (const impl which : impls) {
    SCOPED_TRACE(std::string(name(o)) + " by " + name(which));
    d_out.fill_bytes(0xab);
    const std::int64_t count = run_keys(which, o, static_cast<const T*>(d_in.data()),
                                        static_cast<const std::uint8_t*>(d_flags.data()), d_out.data(), n, pred,
                                        which == impl::production ? options : nullptr);
    ASSERT_TRUE(check_output(expected, count, copy_to_host(d_out.data(), n)));
  }
}

// Sizes around the production tile's boundaries (1 to 3 tiles, around 32 tiles: a window
// of the tile state) and random sizes.
template <class T>
std::vector<std::int64_t> compact_sizes(std::uint64_t seed) {
  const std::int64_t tile = tile_on_device<select_detail::policy_for<const T*, select_detail::none_iterator>>();
  std::vector<std::int64_t> sizes = boundary_sizes(tile, 3);
  for (const std::int64_t n : {32 * tile - 1, 32 * tile + 1, 70 * tile + 3, 7 * tile + 77}) sizes.push_back(n);
  for (const std::int64_t n : random_sizes(3, std::int64_t{1} << 20, seed)) sizes.push_back(n);
  return capped(sizes);
}

inline constexpr double selectivities[] = {0.0, 0.01, 0.5, 0.99, 1.0};

// select_if at 0, 1, 50, 99 and 100 % over the sizes; remove_if at 50 %.
template <class T>
void selectivity_test(bool with_three_phase = true) {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  for (const std::int64_t n : compact_sizes<T>(seed)) {
    const std::vector<T> h_in = random_data<T>(n, seed + static_cast<std::uint64_t>(n));
    for (const double s : selectivities) {
      SCOPED_TRACE(where(n, s));
      check_all(op::select_if, h_in, {}, predicate_for<T>(s), nullptr, true, with_three_phase);
    }
    SCOPED_TRACE(where(n, 0.5));
    check_all(op::remove_if, h_in, {}, predicate_for<T>(0.5), nullptr, false, with_three_phase);
  }
}

// Random flags (and all-zero / all-one flags) over the sizes.
template <class T>
void flagged_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  for (const std::int64_t n : compact_sizes<T>(seed)) {
    const std::vector<T> h_in = random_data<T>(n, seed + static_cast<std::uint64_t>(n));
    for (const double s : selectivities) {
      SCOPED_TRACE(where(n, s));
      std::mt19937_64 rng(seed + 7 * static_cast<std::uint64_t>(n));
      std::bernoulli_distribution keep(s);
      std::vector<std::uint8_t> flags(static_cast<std::size_t>(n));
      for (auto& f : flags) f = keep(rng) ? static_cast<std::uint8_t>(1 + rng() % 255) : 0;  // any nonzero keeps
      check_all(op::flagged, h_in, flags, below<T>{0});
    }
  }
}

// Runs of mean length 1.5, 40 and 5000 (runs crossing lanes, warps, tiles).
template <class T>
void unique_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  for (const std::int64_t n : compact_sizes<T>(seed)) {
    for (const double mean_run : {1.5, 40.0, 5000.0}) {
      SCOPED_TRACE(where(n, 1.0 / mean_run));
      check_all(op::unique, runs_data<T>(n, seed + static_cast<std::uint64_t>(n), mean_run), {}, below<T>{0});
    }
  }
}

// Every launch mode (each deferring look-backs), short chunks (the 64-bit path: several launches
// handing the running total on through temp storage) and a capped grid (many look-back
// rounds): each must give the reference's result.
template <class T>
void modes_test() {
  using select_detail::select_mode;
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t tile = tile_on_device<select_detail::policy_for<const T*, select_detail::none_iterator>>();
  const select_detail::select_options configs[] = {
      {select_mode::cooperative, 2, 0}, {select_mode::cooperative, 3, 0}, {select_mode::cooperative, 33, 0},
      {select_mode::tickets, 0, 0},     {select_mode::tickets, 3, 0},     {select_mode::cooperative, 0, 1},
      {select_mode::cooperative, 2, 3}, {select_mode::tickets, 5, 2},     {select_mode::cooperative, 0, 33},
      {select_mode::tickets, 1, 0},
  };
  for (const std::int64_t k : {1, 2, 3, 5, 33, 70}) {
    for (const std::int64_t d : {-1, 0, 1}) {
      const std::int64_t n = k * tile + d;
      if (n > max_test_n()) continue;
      const std::vector<T> h_in = random_data<T>(n, seed + static_cast<std::uint64_t>(n));
      const std::vector<T> h_runs = runs_data<T>(n, seed + static_cast<std::uint64_t>(n), 3.0);
      for (const auto& config : configs) {
        SCOPED_TRACE("n = " + std::to_string(n) + ", mode " + std::to_string(static_cast<int>(config.mode)) +
                     ", max_blocks " + std::to_string(config.max_blocks) + ", chunk_tiles " +
                     std::to_string(config.chunk_tiles));
        for (const double s : {0.01, 0.5, 1.0}) {
          check_all(op::select_if, h_in, {}, predicate_for<T>(s), &config, false, false);
        }
        check_all(op::unique, h_runs, {}, below<T>{0}, &config, false, false);
      }
    }
  }
}

// The output buffer exactly as long as the count (compute-sanitizer's memcheck reports
// any write past it), for each implementation.
template <class T>
void exact_output_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t tile = tile_on_device<select_detail::policy_for<const T*, select_detail::none_iterator>>();
  for (const std::int64_t n : capped({1, tile - 1, 5 * tile + 3, 40 * tile + 17})) {
    const std::vector<T> h_in = random_data<T>(n, seed + static_cast<std::uint64_t>(n));
    auto d_in = upload(h_in);
    for (const double s : {0.01, 0.5, 1.0}) {
      SCOPED_TRACE(where(n, s));
      const auto pred = predicate_for<T>(s);
      const std::vector<T> expected = gather_kept(h_in, reference_keep(op::select_if, h_in, {}, pred));
      for (const impl which : {impl::production, impl::three_phase}) {
        SCOPED_TRACE(name(which));
        device_buffer<T> d_out(static_cast<std::int64_t>(expected.size()));
        const std::int64_t count =
            run_keys(which, op::select_if, static_cast<const T*>(d_in.data()), nullptr, d_out.data(), n, pred);
        ASSERT_TRUE(check_output(expected, count, copy_to_host(d_out.data(), count)));
      }
    }
  }
}

// ---- pairs --------------------------------------------------------------------------

enum class pair_op { select_if, remove_if, flagged, unique_by_key };

template <class K, class V, class Pred>
std::int64_t run_pairs(impl which, pair_op o, const K* keys, const V* values, const std::uint8_t* flags, K* keys_out,
                       V* values_out, std::int64_t n, Pred pred) {
  device_buffer<std::int64_t> count(1);
  count.fill_bytes(0xee);
  std::int64_t* c = count.data();
  return run_two_phase(
      [&](void* temp, std::size_t& bytes) -> cudaError_t {
        if (which == impl::cub) {
          return cub::DeviceSelect::UniqueByKey(temp, bytes, keys, values, keys_out, values_out, c, n);
        }
        const bool prod = which == impl::production;
        switch (o) {
          case pair_op::select_if:
            return prod ? scanlab::select_if_pairs(temp, bytes, keys, values, keys_out, values_out, c, n, pred)
                        : three_phase::select_if_pairs(temp, bytes, keys, values, keys_out, values_out, c, n, pred);
          case pair_op::remove_if:
            return prod ? scanlab::remove_if_pairs(temp, bytes, keys, values, keys_out, values_out, c, n, pred)
                        : three_phase::remove_if_pairs(temp, bytes, keys, values, keys_out, values_out, c, n, pred);
          case pair_op::flagged:
            return prod ? scanlab::select_flagged_pairs(temp, bytes, keys, values, flags, keys_out, values_out, c, n)
                        : three_phase::select_flagged_pairs(temp, bytes, keys, values, flags, keys_out, values_out, c,
                                                           n);
          case pair_op::unique_by_key:
            return prod ? scanlab::unique_by_key(temp, bytes, keys, values, keys_out, values_out, c, n)
                        : three_phase::unique_by_key(temp, bytes, keys, values, keys_out, values_out, c, n);
        }
        return cudaErrorNotSupported;
      },
      c);
}

// Key-value pairs: values are random (or the index, which makes stability visible).
template <class K, class V>
void pairs_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  using policy = select_detail::policy_for<const K*, const V*>;
  const std::int64_t tile = tile_on_device<policy>();
  std::vector<std::int64_t> sizes = boundary_sizes(tile, 2);
  sizes.push_back(37 * tile + 11);
  sizes.push_back(random_sizes(1, std::int64_t{1} << 19, seed)[0]);
  for (const std::int64_t n : capped(sizes)) {
    const std::vector<V> h_values = random_data<V>(n, seed + 3 + static_cast<std::uint64_t>(n));
    auto d_values = upload(h_values);
    for (const pair_op o : {pair_op::select_if, pair_op::remove_if, pair_op::flagged, pair_op::unique_by_key}) {
      const std::vector<K> h_keys = o == pair_op::unique_by_key
                                        ? runs_data<K>(n, seed + static_cast<std::uint64_t>(n), 4.0)
                                        : random_data<K>(n, seed + static_cast<std::uint64_t>(n));
      std::vector<std::uint8_t> h_flags(static_cast<std::size_t>(n));
      std::mt19937_64 rng(seed + static_cast<std::uint64_t>(n));
      for (auto& f : h_flags) f = static_cast<std::uint8_t>(rng() % 2);
      const auto pred = predicate_for<K>(0.5);
      const op key_op = o == pair_op::select_if   ? op::select_if
                        : o == pair_op::remove_if ? op::remove_if
                        : o == pair_op::flagged   ? op::flagged
                                                  : op::unique;
      const auto keep = reference_keep(key_op, h_keys, h_flags, pred);
      const std::vector<K> want_keys = gather_kept(h_keys, keep);
      const std::vector<V> want_values = gather_kept(h_values, keep);
      auto d_keys = upload(h_keys);
      auto d_flags = upload(h_flags);
      device_buffer<K> keys_out(n);
      device_buffer<V> values_out(n);
      std::vector<impl> impls = {impl::production, impl::three_phase};
      if (o == pair_op::unique_by_key) impls.push_back(impl::cub);
      for (const impl which : impls) {
        SCOPED_TRACE("n = " + std::to_string(n) + ", pair op " + std::to_string(static_cast<int>(o)) + " by " +
                     name(which));
        keys_out.fill_bytes(0xab);
        values_out.fill_bytes(0xab);
        const std::int64_t count =
            run_pairs(which, o, static_cast<const K*>(d_keys.data()), static_cast<const V*>(d_values.data()),
                      static_cast<const std::uint8_t*>(d_flags.data()), keys_out.data(), values_out.data(), n, pred);
        ASSERT_TRUE(check_output(want_keys, count, copy_to_host(keys_out.data(), n))) << "keys";
        ASSERT_TRUE(check_output(want_values, count, copy_to_host(values_out.data(), n))) << "values";
      }
    }
  }
}

// Stability made visible: values are the input positions (counting_iterator, not a
// buffer), so the kept positions must be strictly increasing and match the reference.
template <class K>
void stability_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t n = std::min<std::int64_t>(max_test_n(), 300001);
  // Few distinct keys: many equal keys kept, their relative order is what stability means.
  std::vector<K> h_keys = random_data<K>(n, seed);
  for (auto& k : h_keys) k = h_keys[static_cast<std::size_t>(score(k) % 7)];
  auto d_keys = upload(h_keys);
  const auto pred = predicate_for<K>(0.5);
  const auto keep = reference_keep(op::select_if, h_keys, {}, pred);
  device_buffer<K> keys_out(n);
  device_buffer<std::int64_t> positions(n);
  device_buffer<std::int64_t> count(1);
  for (const impl which : {impl::production, impl::three_phase}) {
    SCOPED_TRACE(name(which));
    positions.fill_bytes(0xab);
    const std::int64_t kept = run_two_phase(
        [&](void* temp, std::size_t& bytes) {
          const counting_iterator<std::int64_t> index(0);
          return which == impl::production
                     ? scanlab::select_if_pairs(temp, bytes, static_cast<const K*>(d_keys.data()), index,
                                                keys_out.data(), positions.data(), count.data(), n, pred)
                     : three_phase::select_if_pairs(temp, bytes, static_cast<const K*>(d_keys.data()), index,
                                                    keys_out.data(), positions.data(), count.data(), n, pred);
        },
        count.data());
    std::vector<std::int64_t> want;
    for (std::int64_t i = 0; i < n; ++i) {
      if (keep[static_cast<std::size_t>(i)] != 0) want.push_back(i);
    }
    ASSERT_TRUE(check_output(want, kept, copy_to_host(positions.data(), n)));
  }
}

// ---- API contract -------------------------------------------------------------------

template <class T>
void api_test() {
  device_buffer<T> in(16);
  device_buffer<T> out(16);
  device_buffer<std::int64_t> count(1);
  const auto pred = predicate_for<T>(0.5);
  const T* d_in = in.data();
  std::size_t bytes = 0;
  // Size query: at least one byte, also for n == 0; negative n refused.
  ASSERT_EQ(scanlab::select_if(nullptr, bytes, d_in, out.data(), count.data(), 0, pred), cudaSuccess);
  EXPECT_GE(bytes, 1u);
  EXPECT_EQ(scanlab::select_if(nullptr, bytes, d_in, out.data(), count.data(), -1, pred), cudaErrorInvalidValue);
  EXPECT_EQ(three_phase::select_if(nullptr, bytes, d_in, out.data(), count.data(), -1, pred), cudaErrorInvalidValue);
  // n == 0 writes a zero count.
  for (const impl which : {impl::production, impl::three_phase}) {
    SCOPED_TRACE(name(which));
    count.fill_bytes(0xee);
    const std::int64_t kept = run_two_phase(
        [&](void* temp, std::size_t& b) {
          return which == impl::production ? scanlab::select_if(temp, b, d_in, out.data(), count.data(), 0, pred)
                                           : three_phase::select_if(temp, b, d_in, out.data(), count.data(), 0, pred);
        },
        count.data());
    EXPECT_EQ(kept, 0);
  }
  // Too little temp storage, or no count: refused before anything is launched.
  ASSERT_EQ(scanlab::select_if(nullptr, bytes, d_in, out.data(), count.data(), 16, pred), cudaSuccess);
  device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
  std::size_t short_bytes = bytes - 1;
  EXPECT_EQ(scanlab::select_if(temp.data(), short_bytes, d_in, out.data(), count.data(), 16, pred),
            cudaErrorInvalidValue);
  EXPECT_EQ(scanlab::select_if(temp.data(), bytes, d_in, out.data(), nullptr, 16, pred), cudaErrorInvalidValue);
  // The convenience read.
  count.fill_bytes(0);
  std::int64_t host_count = -1;
  ASSERT_EQ(scanlab::read_num_selected(count.data(), host_count), cudaSuccess);
  EXPECT_EQ(host_count, 0);
}

// Unaligned pointers (one item past an aligned address): element-wise I/O, same results.
template <class T>
void unaligned_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t tile = tile_on_device<select_detail::policy_for<const T*, select_detail::none_iterator>>();
  const std::int64_t n = std::min<std::int64_t>(max_test_n(), 9 * tile + 5);
  const std::vector<T> h_in = random_data<T>(n + 1, seed);
  auto d_in = upload(h_in);
  const std::vector<T> tail(h_in.begin() + 1, h_in.end());
  device_buffer<T> d_out(n + 1);
  for (const double s : {0.5, 1.0}) {
    const auto pred = predicate_for<T>(s);
    const std::vector<T> expected = gather_kept(tail, reference_keep(op::select_if, tail, {}, pred));
    d_out.fill_bytes(0xab);
    const std::int64_t count =
        run_keys(impl::production, op::select_if, static_cast<const T*>(d_in.data()) + 1, nullptr, d_out.data() + 1,
                 n, pred);
    ASSERT_TRUE(check_output(expected, count, copy_to_host(d_out.data() + 1, n)));
  }
}

// ---- more than 2^31 (and 2^32) items: counting inputs, checked on the device ------------

template <class T, class Expected>
__global__ void count_mismatches_kernel(const T* out, std::int64_t n, Expected expected, unsigned long long* bad) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  unsigned long long local = 0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
    if (!(out[i] == expected(i))) ++local;
  }
  if (local != 0) atomicAdd(bad, local);
}

template <class T, class Expected>
unsigned long long count_mismatches(const T* d_out, std::int64_t n, Expected expected) {
  device_buffer<unsigned long long> bad(1);
  bad.fill_bytes(0);
  count_mismatches_kernel<<<1024, 256>>>(d_out, n, expected, bad.data());
  SCANLAB_CHECK_LAUNCH();
  return bad.to_host()[0];
}

inline bool enough_device_memory(std::size_t bytes) {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  SCANLAB_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes > bytes + (std::size_t{1} << 30);
}

}  // namespace scanlab::test::compact
