// Test bodies for the segmented scans (scanlab/segmented_scan.cuh): by key and by offsets,
// inclusive, inclusive with an initial value and exclusive, in every launch mode.
//
// Segments come in shapes chosen to break things: every item its own segment, short runs,
// runs around the tile size, one segment (the plain scan), boundaries on tile edges. Each
// result is checked against a sequential CPU scan that restarts at every head (exact for
// integers and matrices; float sums within the per-segment error bound), integer cases also
// against cub::DeviceScan::InclusiveScanByKey / ExclusiveScanByKey. Outputs are poisoned and
// temp storage filled with garbage before every call.
#pragma once

#include "common/device_buffer.hpp"
#include "common/gpu_test.hpp"
#include "common/test_util.hpp"

#include <scanlab/error.hpp>
#include <scanlab/functional.cuh>
#include <scanlab/segmented_scan.cuh>

#include <cub/device/device_scan.cuh>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace scanlab::test::segmented {

enum class kind { inclusive, inclusive_init, exclusive };
inline const char* name(kind k) {
  return k == kind::inclusive ? "inclusive" : k == kind::inclusive_init ? "inclusive_init" : "exclusive";
}
inline constexpr kind all_kinds[] = {kind::inclusive, kind::inclusive_init, kind::exclusive};

// Segment heads (heads[0] always true) of a shape: mean run length `run` (1: every item a
// head; 0: one segment), geometric lengths, so long and short runs mix.
inline std::vector<char> make_heads(std::int64_t n, double run, std::uint64_t seed) {
  std::vector<char> heads(static_cast<std::size_t>(n), 0);
  if (n == 0) return heads;
  heads[0] = 1;
  if (run == 0) return heads;
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution start(1.0 / run);
  for (std::int64_t i = 1; i < n; ++i) heads[static_cast<std::size_t>(i)] = start(rng) ? 1 : 0;
  return heads;
}

// Heads on every multiple of `period` (tile edges, warp edges).
inline std::vector<char> periodic_heads(std::int64_t n, std::int64_t period) {
  std::vector<char> heads(static_cast<std::size_t>(n), 0);
  for (std::int64_t i = 0; i < n; i += period) heads[static_cast<std::size_t>(i)] = 1;
  return heads;
}

// Keys of type K that change exactly at the heads: each segment's key is one more than the
// previous one's (wrapping in narrow types: only neighbours are compared, and they differ).
template <class K>
std::vector<K> keys_from_heads(const std::vector<char>& heads) {
  std::vector<K> keys(heads.size());
  K key{};
  for (std::size_t i = 0; i < heads.size(); ++i) {
    if (heads[i] && i > 0) key = static_cast<K>(key + K{1});
    keys[i] = key;
  }
  return keys;
}

// Offsets (the segmented_reduce layout) whose boundaries are exactly the heads: every head
// position, then n.
inline std::vector<std::int64_t> offsets_from_heads(const std::vector<char>& heads) {
  std::vector<std::int64_t> offsets;
  for (std::size_t i = 0; i < heads.size(); ++i) {
    if (heads[i]) offsets.push_back(static_cast<std::int64_t>(i));
  }
  offsets.push_back(static_cast<std::int64_t>(heads.size()));
  return offsets;
}

// The sequential reference in the accumulator type Acc.
template <class Acc, class T, class Op>
std::vector<Acc> reference(const std::vector<T>& x, const std::vector<char>& heads, kind k, Acc init, Op op) {
  std::vector<Acc> out(x.size());
  Acc running{};
  for (std::size_t i = 0; i < x.size(); ++i) {
    const Acc v = static_cast<Acc>(x[i]);
    if (heads[i]) {
      if (k == kind::exclusive) {
        out[i] = init;
        running = op(init, v);
        continue;
      }
      running = k == kind::inclusive_init ? op(init, v) : v;
    } else {
      if (k == kind::exclusive) {
        out[i] = running;
        running = op(running, v);
        continue;
      }
      running = op(running, v);
    }
    out[i] = running;
  }
  return out;
}

// Exact comparison, or for float sums the error bound of each segment's prefix.
template <class Acc, class T>
void expect_matches(const std::vector<Acc>& got, const std::vector<Acc>& want, const std::vector<T>& x,
                    const std::vector<char>& heads, bool approximate, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double magnitude = 0;
  std::int64_t terms = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (heads[i]) magnitude = 0, terms = 0;
    if constexpr (std::is_floating_point_v<Acc>) {
      magnitude += std::fabs(static_cast<double>(x[i]));
      ++terms;
      const bool both_nan = std::isnan(got[i]) && std::isnan(want[i]);
      if (approximate && !both_nan) {
        ASSERT_NEAR(got[i], want[i], sum_tolerance<Acc>(terms + 1, magnitude + 1)) << what << " at " << i;
        continue;
      }
      if (both_nan) continue;
    }
    ASSERT_TRUE(got[i] == want[i]) << what << " at " << i << " of " << got.size();
  }
}

// The launch modes every shape runs in (the same results in each).
inline std::vector<std::pair<std::string, single_pass_options>> modes() {
  return {{"automatic", {}},
          {"cooperative/2", {launch_mode::cooperative, 2}},
          {"tickets/3", {launch_mode::tickets, 3}}};
}

// One call of a segmented scan: by keys (d_keys non-null) or by offsets, into a poisoned
// d_out, with temp storage full of garbage; returns the output.
template <class Acc, class T, class K, class Op>
std::vector<Acc> run(const T* d_in, Acc* d_out, std::int64_t n, const K* d_keys, const std::int64_t* d_offsets,
                     std::int64_t num_segments, kind k, Acc init, Op op, const single_pass_options& options) {
  const auto call = [&](void* temp, std::size_t& bytes) -> cudaError_t {
    if (d_keys != nullptr) {
      switch (k) {
        case kind::inclusive:
          if constexpr (std::is_same_v<Acc, T>) return inclusive_scan_by_key(temp, bytes, d_keys, d_in, d_out, n, op, nullptr, options);
          return cudaErrorNotSupported;
        case kind::inclusive_init:
          return inclusive_scan_by_key_init(temp, bytes, d_keys, d_in, d_out, n, init, op, nullptr, options);
        case kind::exclusive:
          return exclusive_scan_by_key(temp, bytes, d_keys, d_in, d_out, n, init, op, nullptr, options);
      }
    }
    switch (k) {
      case kind::inclusive:
        if constexpr (std::is_same_v<Acc, T>) {
          return inclusive_segmented_scan(temp, bytes, d_in, d_out, n, num_segments, d_offsets, op, nullptr, options);
        }
        return cudaErrorNotSupported;
      case kind::inclusive_init:
        return inclusive_segmented_scan_init(temp, bytes, d_in, d_out, n, num_segments, d_offsets, init, op, nullptr,
                                             options);
      case kind::exclusive:
        return exclusive_segmented_scan(temp, bytes, d_in, d_out, n, num_segments, d_offsets, init, op, nullptr,
                                        options);
    }
    return cudaErrorInvalidValue;
  };
  std::size_t bytes = 0;
  SCANLAB_CHECK(call(nullptr, bytes));
  EXPECT_GE(bytes, 1u);
  device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
  temp.fill_bytes(0xA7);
  if (n > 0) SCANLAB_CHECK(cudaMemset(d_out, 0x5C, static_cast<std::size_t>(n) * sizeof(Acc)));
  SCANLAB_CHECK(call(temp.data(), bytes));
  SCANLAB_CHECK(cudaDeviceSynchronize());
  std::vector<Acc> out(static_cast<std::size_t>(n));
  if (n > 0) SCANLAB_CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(Acc), cudaMemcpyDeviceToHost));
  return out;
}

// CUB's scan by key on the same device data (exclusive: with init; inclusive_init has no
// CUB form and is skipped).
template <class T, class K, class Op>
std::vector<T> run_cub(const T* d_in, T* d_out, std::int64_t n, const K* d_keys, kind k, T init, Op op) {
  const auto call = [&](void* temp, std::size_t& bytes) -> cudaError_t {
    if (k == kind::exclusive) {
      return cub::DeviceScan::ExclusiveScanByKey(temp, bytes, d_keys, d_in, d_out, op, init, n);
    }
    return cub::DeviceScan::InclusiveScanByKey(temp, bytes, d_keys, d_in, d_out, op, n);
  };
  std::size_t bytes = 0;
  SCANLAB_CHECK(call(nullptr, bytes));
  device_buffer<unsigned char> temp(static_cast<std::int64_t>(std::max<std::size_t>(bytes, 1)));
  SCANLAB_CHECK(call(temp.data(), bytes));
  SCANLAB_CHECK(cudaDeviceSynchronize());
  std::vector<T> out(static_cast<std::size_t>(n));
  if (n > 0) SCANLAB_CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(T), cudaMemcpyDeviceToHost));
  return out;
}

// Sizes around the tiles of the segmented scan of Acc (16 pairs per thread below 8 bytes,
// 4 from 8 bytes), 0 to 3, and a size past a million.
template <class Acc>
std::vector<std::int64_t> sizes() {
  const std::int64_t tile = 256 * (sizeof(Acc) >= 8 ? 4 : 16);
  std::vector<std::int64_t> s = boundary_sizes(tile, 2);
  s.push_back(33 * tile + 17);
  s.push_back(1000003);
  return capped(s);
}

// Every shape of segments, every kind, by keys (type K) and by offsets, every launch mode;
// `cub`: also compare with CUB (exact types only); `approximate`: float sums.
template <class T, class Acc, class K, class Op>
void shapes_test(Acc init, Op op, bool cub, bool approximate, std::vector<T> (*values)(std::int64_t, std::uint64_t)) {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  for (const std::int64_t n : sizes<Acc>()) {
    const std::vector<T> x = values(n, seed);
    std::vector<std::pair<std::string, std::vector<char>>> shapes = {
        {"every item", make_heads(n, 1, seed)},      {"runs of ~3", make_heads(n, 3, seed + 1)},
        {"runs of ~700", make_heads(n, 700, seed + 2)}, {"runs of ~9000", make_heads(n, 9000, seed + 3)},
        {"one segment", make_heads(n, 0, seed)},     {"every 2048", periodic_heads(n, 2048)},
        {"every 4095", periodic_heads(n, 4095)}};
    device_buffer<T> d_in{std::span<const T>(x)};
    device_buffer<Acc> d_out(std::max<std::int64_t>(n, 1));
    for (const auto& [shape, heads] : shapes) {
      const std::vector<K> keys = keys_from_heads<K>(heads);
      const std::vector<std::int64_t> offsets = offsets_from_heads(heads);
      device_buffer<K> d_keys{std::span<const K>(keys)};
      device_buffer<std::int64_t> d_offsets{std::span<const std::int64_t>(offsets)};
      for (const kind k : all_kinds) {
        if (k == kind::inclusive && !std::is_same_v<Acc, T>) continue;
        const std::vector<Acc> want = reference<Acc>(x, heads, k, init, op);
        for (const auto& [mode, options] : modes()) {
          if (n > 100000 && mode != "automatic" && shape != "runs of ~3") continue;  // keep the test short
          const std::string what = "n " + std::to_string(n) + ", " + shape + ", " + name(k) + ", " + mode;
          const K* keys_ptr = d_keys.data();
          expect_matches(run<Acc>(d_in.data(), d_out.data(), n, keys_ptr, static_cast<const std::int64_t*>(nullptr),
                                  0, k, init, op, options),
                         want, x, heads, approximate, "by key, " + what);
          expect_matches(run<Acc>(d_in.data(), d_out.data(), n, static_cast<const K*>(nullptr), d_offsets.data(),
                                  static_cast<std::int64_t>(offsets.size()) - 1, k, init, op, options),
                         want, x, heads, approximate, "by offsets, " + what);
        }
        if constexpr (std::is_same_v<Acc, T>) {
          if (cub && k != kind::inclusive_init) {
            expect_matches(run_cub(d_in.data(), d_out.data(), n, d_keys.data(), k, init, op), want, x, heads,
                           approximate, "CUB, n " + std::to_string(n) + ", " + shape + ", " + name(k));
          }
        }
      }
    }
  }
}

}  // namespace scanlab::test::segmented
