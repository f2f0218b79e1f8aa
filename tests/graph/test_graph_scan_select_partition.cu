// CUDA graphs: scans (inclusive and exclusive; uint32, float and a non-commutative operator),
// stream compaction (select_if, select_flagged, unique, the three-phase select_if) and
// partitions (two- and three-way) captured once and replayed on new data. The default sizes
// take the single-block launch (one tile) and the cooperative grid (several tiles per block
// at 2^20 + 7); the LaunchModes tests force the other modes through the dispatchers' test
// hooks: tickets (a memset of the tile states captured before a regular launch, which every
// replay must repeat) and small cooperative grids (many look-back rounds).
#include "graph/graph_test_common.cuh"

#include <scanlab/algorithms/partition.cuh>
#include <scanlab/algorithms/select.cuh>
#include <scanlab/algorithms/select_three_phase.cuh>
#include <scanlab/functional.cuh>
#include <scanlab/scan.cuh>

#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace {

using namespace scanlab::test::graph;

// The affine map x -> a x + b over uint32 (exact mod 2^32), composed as op(earlier, later):
// associative, not commutative.
struct affine_u32 {
  std::uint32_t a, b;
};
struct affine_then {
  __host__ __device__ affine_u32 operator()(const affine_u32& earlier, const affine_u32& later) const {
    return {later.a * earlier.a, later.a * earlier.b + later.b};
  }
};

template <class T>
struct below {
  T limit;
  __host__ __device__ bool operator()(const T& x) const { return x < limit; }
};

// Sequential scans: the reference of every scan here (exact: wrapping integers, integer-valued
// floats, maps mod 2^32).
template <class T, class Op>
std::vector<T> inclusive_reference(const std::vector<T>& in, Op op) {
  std::vector<T> out(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) out[i] = i == 0 ? in[0] : op(out[i - 1], in[i]);
  return out;
}
template <class T, class Op>
std::vector<T> exclusive_reference(const std::vector<T>& in, T init, Op op) {
  std::vector<T> out(in.size());
  T running = init;
  for (std::size_t i = 0; i < in.size(); ++i) {
    out[i] = running;
    running = op(running, in[i]);
  }
  return out;
}

// The items that satisfy pred and the others, each in input order.
template <class T, class Pred>
std::pair<std::vector<T>, std::vector<T>> split_by(const std::vector<T>& in, Pred pred) {
  std::pair<std::vector<T>, std::vector<T>> out;
  for (const T& v : in) (pred(v) ? out.first : out.second).push_back(v);
  return out;
}

template <class T>
std::vector<T> concat(std::vector<T> a, const std::vector<T>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

template <class T>
std::vector<T> reversed(std::vector<T> v) {
  std::reverse(v.begin(), v.end());
  return v;
}

// ---- scans ----------------------------------------------------------------------------

// inclusive_scan and exclusive_scan of one input into two outputs, in one graph.
template <class T, class Op, class Draw>
void inclusive_and_exclusive(cudaStream_t stream, Op op, T init, Draw draw) {
  for (const std::int64_t n : default_sizes()) {
    SCOPED_TRACE("n = " + std::to_string(n));
    device_buffer<T> d_in(n), d_inclusive(n), d_exclusive(n);
    const T* in = d_in.data();
    T* inclusive = d_inclusive.data();
    T* exclusive = d_exclusive.data();
    const auto graph = capture_calls(
        stream, [=](void* t, std::size_t& b, cudaStream_t s) { return scanlab::inclusive_scan(t, b, in, inclusive, n, op, s); },
        [=](void* t, std::size_t& b, cudaStream_t s) {
          return scanlab::exclusive_scan(t, b, in, exclusive, n, init, op, s);
        });
    std::vector<T> h;
    replay(
        graph.graph, stream, n,
        [&](std::uint64_t seed) {
          h = upload(d_in, draw(n, seed), stream);
          poison(stream, d_inclusive, d_exclusive);
        },
        [&] {
          EXPECT_TRUE(same_items(d_inclusive.to_host(stream), inclusive_reference(h, op), h.size()));
          EXPECT_TRUE(same_items(d_exclusive.to_host(stream), exclusive_reference(h, init, op), h.size()));
        });
  }
}

TEST_F(graph_scan, Uint32) {
  inclusive_and_exclusive<std::uint32_t>(stream(), scanlab::plus{}, 7u, [](std::int64_t n, std::uint64_t seed) {
    return scanlab::test::random_values<std::uint32_t>(n, seed, /*bounded=*/false);  // sums wrap: exact
  });
}

TEST_F(graph_scan, Float) {
  // Integers in [-8, 8]: every partial sum, in any grouping, is an integer below 2^24 in
  // magnitude (n <= 2^20 + 7), so exact in float.
  inclusive_and_exclusive<float>(stream(), scanlab::plus{}, 2.0f, [](std::int64_t n, std::uint64_t seed) {
    return random_integers<float>(n, seed, -8, 8);
  });
}

TEST_F(graph_scan, NonCommutativeAffineMaps) {
  inclusive_and_exclusive<affine_u32>(stream(), affine_then{}, affine_u32{3, 1}, [](std::int64_t n, std::uint64_t seed) {
    const auto raw = scanlab::test::random_values<std::uint32_t>(2 * n, seed, /*bounded=*/false);
    std::vector<affine_u32> maps(static_cast<std::size_t>(n));
    // Odd slopes form a group mod 2^32: a product of them never vanishes, so every output
    // depends on every map before it (even slopes would soon multiply the prefix away).
    for (std::size_t i = 0; i < maps.size(); ++i) maps[i] = {raw[2 * i] | 1u, raw[2 * i + 1]};
    return maps;
  });
}

// The launch modes the dispatcher picks only without cooperative launch (tickets) or for
// larger inputs (small grids), forced through its test hook, three scans in one graph.
TEST_F(graph_scan, LaunchModes) {
  using scanlab::scan_detail::scan_mode;
  using policy = scanlab::device::default_scan_policy<std::uint32_t>;
  const scanlab::scan_detail::scan_options modes[] = {{scan_mode::tickets, 0}, {scan_mode::tickets, 3},
                                                      {scan_mode::cooperative, 2}};
  for (const std::int64_t n : multi_tile_sizes()) {
    SCOPED_TRACE("n = " + std::to_string(n));
    device_buffer<std::uint32_t> d_in(n), d_out(3 * n);
    const std::uint32_t* in = d_in.data();
    std::uint32_t* out = d_out.data();
    const auto graph = capture_variants<3>(stream(), [=](int k) {
      return [=](void* t, std::size_t& b, cudaStream_t s) {
        return scanlab::scan_detail::dispatch_scan<policy>(t, b, in, out + k * n, n, scanlab::scan_detail::scan_kind::inclusive, 0u, scanlab::plus{}, s,
                                                           modes[k]);
      };
    });
    std::vector<std::uint32_t> h;
    replay(
        graph.graph, stream(), n,
        [&](std::uint64_t seed) {
          h = upload(d_in, scanlab::test::random_values<std::uint32_t>(n, seed, /*bounded=*/false), stream());
          poison(stream(), d_out);
        },
        [&] {
          const auto want = inclusive_reference(h, scanlab::plus{});
          const auto got = d_out.to_host(stream());
          for (int k = 0; k < 3; ++k) EXPECT_TRUE(same_items(part(got, k, n), want, want.size())) << "mode " << k;
        });
  }
}

// The whole pipeline in one graph: copy in from pinned host memory, scan, copy out. The
// graph's memcpy nodes keep the pinned addresses: each round writes new values there.
TEST_F(graph_scan, UploadScanDownloadInOneGraph) {
  for (const std::int64_t n : default_sizes()) {
    SCOPED_TRACE("n = " + std::to_string(n));
    device_buffer<std::int32_t> d_in(n), d_out(n);
    pinned_buffer<std::int32_t> h_in(n), h_out(n);
    std::int32_t* in = d_in.data();
    std::int32_t* out = d_out.data();
    const auto graph = capture_calls(
        stream(),
        [=, &h_in](void* t, std::size_t&, cudaStream_t s) {
          return t == nullptr ? cudaSuccess : cudaMemcpyAsync(in, h_in.data(), h_in.bytes(), cudaMemcpyHostToDevice, s);
        },
        [=](void* t, std::size_t& b, cudaStream_t s) { return scanlab::inclusive_sum(t, b, in, out, n, s); },
        [=, &h_out](void* t, std::size_t&, cudaStream_t s) {
          return t == nullptr ? cudaSuccess : cudaMemcpyAsync(h_out.data(), out, h_out.bytes(), cudaMemcpyDeviceToHost, s);
        });
    std::vector<std::int32_t> h;
    replay(
        graph.graph, stream(), n,
        [&](std::uint64_t seed) {
          h = scanlab::test::random_values<std::int32_t>(n, seed);  // [-100, 100]: no overflow
          std::memcpy(h_in.data(), h.data(), h_in.bytes());
          std::memset(h_out.data(), 0xa5, h_out.bytes());
        },
        [&] {
          const std::vector<std::int32_t> got(h_out.data(), h_out.data() + n);
          EXPECT_TRUE(same_items(got, inclusive_reference(h, scanlab::plus{}), h.size()));
        });
  }
}

// ---- stream compaction ------------------------------------------------------------------

// select_if (uint32, about half kept), select_flagged (float keys, random flags), unique
// (int32 in [0, 3]: runs of duplicates) and the three-phase select_if in one graph. The
// counts land in device memory: the graph needs no host read of them.
TEST_F(graph_select, SelectIfFlaggedUnique) {
  const below<std::uint32_t> pred{1u << 31};
  for (const std::int64_t n : default_sizes()) {
    SCOPED_TRACE("n = " + std::to_string(n));
    device_buffer<std::uint32_t> d_keys(n), d_selected(n), d_three_phase(n);
    device_buffer<float> d_values(n), d_flagged(n);
    device_buffer<std::uint8_t> d_flags(n);
    device_buffer<std::int32_t> d_runs(n), d_unique(n);
    device_buffer<std::int64_t> d_counts(4);
    const std::uint32_t* keys = d_keys.data();
    const float* values = d_values.data();
    const std::uint8_t* flags = d_flags.data();
    const std::int32_t* runs = d_runs.data();
    std::uint32_t* selected = d_selected.data();
    std::uint32_t* three_phase = d_three_phase.data();
    float* flagged = d_flagged.data();
    std::int32_t* unique = d_unique.data();
    std::int64_t* counts = d_counts.data();
    const auto graph = capture_calls(
        stream(),
        [=](void* t, std::size_t& b, cudaStream_t s) { return scanlab::select_if(t, b, keys, selected, counts, n, pred, s); },
        [=](void* t, std::size_t& b, cudaStream_t s) {
          return scanlab::select_flagged(t, b, values, flags, flagged, counts + 1, n, s);
        },
        [=](void* t, std::size_t& b, cudaStream_t s) { return scanlab::unique(t, b, runs, unique, counts + 2, n, s); },
        [=](void* t, std::size_t& b, cudaStream_t s) {
          return scanlab::three_phase::select_if(t, b, keys, three_phase, counts + 3, n, pred, s);
        });
    std::vector<std::uint32_t> h_keys;
    std::vector<float> h_values;
    std::vector<std::uint8_t> h_flags;
    std::vector<std::int32_t> h_runs;
    replay(
        graph.graph, stream(), n,
        [&](std::uint64_t seed) {
          h_keys = upload(d_keys, scanlab::test::random_values<std::uint32_t>(n, seed, /*bounded=*/false), stream());
          h_values = upload(d_values, scanlab::test::random_values<float>(n, seed + 1), stream());
          h_flags = upload(d_flags, random_integers<std::uint8_t>(n, seed + 2, 0, 1), stream());
          h_runs = upload(d_runs, random_integers<std::int32_t>(n, seed + 3, 0, 3), stream());
          poison(stream(), d_selected, d_three_phase, d_flagged, d_unique, d_counts);
        },
        [&] {
          const auto want_selected = split_by(h_keys, pred).first;
          std::vector<float> want_flagged;
          for (std::size_t i = 0; i < h_values.size(); ++i) {
            if (h_flags[i] != 0) want_flagged.push_back(h_values[i]);
          }
          std::vector<std::int32_t> want_unique;
          for (std::size_t i = 0; i < h_runs.size(); ++i) {
            if (i == 0 || h_runs[i] != h_runs[i - 1]) want_unique.push_back(h_runs[i]);
          }
          const auto got_counts = d_counts.to_host(stream());
          ASSERT_EQ(got_counts[0], static_cast<std::int64_t>(want_selected.size()));
          ASSERT_EQ(got_counts[1], static_cast<std::int64_t>(want_flagged.size()));
          ASSERT_EQ(got_counts[2], static_cast<std::int64_t>(want_unique.size()));
          ASSERT_EQ(got_counts[3], static_cast<std::int64_t>(want_selected.size()));
          EXPECT_TRUE(same_items(d_selected.to_host(stream()), want_selected, want_selected.size()));
          EXPECT_TRUE(same_items(d_flagged.to_host(stream()), want_flagged, want_flagged.size()));
          EXPECT_TRUE(same_items(d_unique.to_host(stream()), want_unique, want_unique.size()));
          EXPECT_TRUE(same_items(d_three_phase.to_host(stream()), want_selected, want_selected.size()));
        });
  }
}

// Tickets, a small cooperative grid, and chunks of one tile (one launch per tile, the running
// total of each chunk handed on through temp storage), forced through the dispatcher's hook.
TEST_F(graph_select, LaunchModes) {
  using namespace scanlab::select_detail;
  using policy = policy_for<const std::uint32_t*, none_iterator>;
  const below<std::uint32_t> pred{1u << 31};
  const select_options modes[] = {{select_mode::tickets, 0, 0}, {select_mode::cooperative, 2, 0},
                                  {select_mode::tickets, 3, 1}};
  for (const std::int64_t n : multi_tile_sizes()) {
    SCOPED_TRACE("n = " + std::to_string(n));
    device_buffer<std::uint32_t> d_in(n), d_out(3 * n);
    device_buffer<std::int64_t> d_counts(3);
    const std::uint32_t* in = d_in.data();
    std::uint32_t* out = d_out.data();
    std::int64_t* counts = d_counts.data();
    const auto graph = capture_variants<3>(stream(), [=](int k) {
      return [=](void* t, std::size_t& b, cudaStream_t s) {
        const none_iterator none{};
        return dispatch_select<policy>(t, b, in, none, none, out + k * n, none, counts + k, n,
                                       predicate_selector<below<std::uint32_t>, true>{pred}, s, modes[k]);
      };
    });
    std::vector<std::uint32_t> h;
    replay(
        graph.graph, stream(), n,
        [&](std::uint64_t seed) {
          h = upload(d_in, scanlab::test::random_values<std::uint32_t>(n, seed, /*bounded=*/false), stream());
          poison(stream(), d_out, d_counts);
        },
        [&] {
          const auto want = split_by(h, pred).first;
          const auto got = d_out.to_host(stream());
          const auto got_counts = d_counts.to_host(stream());
          for (int k = 0; k < 3; ++k) {
            SCOPED_TRACE("mode " + std::to_string(k));
            ASSERT_EQ(got_counts[static_cast<std::size_t>(k)], static_cast<std::int64_t>(want.size()));
            EXPECT_TRUE(same_items(part(got, k, n), want, want.size()));
          }
        });
  }
}

// ---- partitions -------------------------------------------------------------------------

// partition (selected in order | rest reversed), stable_partition and partition_copy in one
// graph; the counts stay on the device.
TEST_F(graph_partition, TwoWay) {
  const below<std::int32_t> pred{0};
  for (const std::int64_t n : default_sizes()) {
    SCOPED_TRACE("n = " + std::to_string(n));
    device_buffer<std::int32_t> d_in(n), d_out(n), d_stable(n), d_selected(n), d_rejected(n);
    device_buffer<std::int64_t> d_counts(3);
    const std::int32_t* in = d_in.data();
    std::int32_t* out = d_out.data();
    std::int32_t* stable = d_stable.data();
    std::int32_t* selected = d_selected.data();
    std::int32_t* rejected = d_rejected.data();
    std::int64_t* counts = d_counts.data();
    const auto graph = capture_calls(
        stream(), [=](void* t, std::size_t& b, cudaStream_t s) { return scanlab::partition(t, b, in, out, counts, n, pred, s); },
        [=](void* t, std::size_t& b, cudaStream_t s) {
          return scanlab::stable_partition(t, b, in, stable, counts + 1, n, pred, s);
        },
        [=](void* t, std::size_t& b, cudaStream_t s) {
          return scanlab::partition_copy(t, b, in, selected, rejected, counts + 2, n, pred, s);
        });
    std::vector<std::int32_t> h;
    replay(
        graph.graph, stream(), n,
        [&](std::uint64_t seed) {
          h = upload(d_in, scanlab::test::random_values<std::int32_t>(n, seed), stream());
          poison(stream(), d_out, d_stable, d_selected, d_rejected, d_counts);
        },
        [&] {
          const auto [yes, no] = split_by(h, pred);
          const auto got_counts = d_counts.to_host(stream());
          for (const std::int64_t count : got_counts) ASSERT_EQ(count, static_cast<std::int64_t>(yes.size()));
          EXPECT_TRUE(same_items(d_out.to_host(stream()), concat(yes, reversed(no)), h.size()));
          EXPECT_TRUE(same_items(d_stable.to_host(stream()), concat(yes, no), h.size()));
          EXPECT_TRUE(same_items(d_selected.to_host(stream()), yes, yes.size()));
          EXPECT_TRUE(same_items(d_rejected.to_host(stream()), no, no.size()));
        });
  }
}

// partition_three_way (less | equal | greater reversed) and its stable form around a pivot
// fixed at capture, on values in [-20, 20] (about one in 41 equal to the pivot).
TEST_F(graph_partition, ThreeWay) {
  const std::int32_t pivot = 0;
  for (const std::int64_t n : default_sizes()) {
    SCOPED_TRACE("n = " + std::to_string(n));
    device_buffer<std::int32_t> d_in(n), d_out(n), d_stable(n);
    device_buffer<std::int64_t> d_counts(6);
    const std::int32_t* in = d_in.data();
    std::int32_t* out = d_out.data();
    std::int32_t* stable = d_stable.data();
    std::int64_t* counts = d_counts.data();
    const auto graph = capture_calls(
        stream(),
        [=](void* t, std::size_t& b, cudaStream_t s) {
          return scanlab::partition_three_way(t, b, in, out, counts, n, pivot, {}, s);
        },
        [=](void* t, std::size_t& b, cudaStream_t s) {
          return scanlab::stable_partition_three_way(t, b, in, stable, counts + 3, n, pivot, {}, s);
        });
    std::vector<std::int32_t> h;
    replay(
        graph.graph, stream(), n,
        [&](std::uint64_t seed) {
          h = upload(d_in, random_integers<std::int32_t>(n, seed, -20, 20), stream());
          poison(stream(), d_out, d_stable, d_counts);
        },
        [&] {
          const auto [less, rest] = split_by(h, below<std::int32_t>{pivot});
          const auto [equal, greater] = split_by(rest, below<std::int32_t>{pivot + 1});
          const std::vector<std::int64_t> sizes = {static_cast<std::int64_t>(less.size()),
                                                   static_cast<std::int64_t>(equal.size()),
                                                   static_cast<std::int64_t>(greater.size())};
          EXPECT_EQ(d_counts.to_host(stream()), concat(sizes, sizes));
          EXPECT_TRUE(same_items(d_out.to_host(stream()), concat(concat(less, equal), reversed(greater)), h.size()));
          EXPECT_TRUE(same_items(d_stable.to_host(stream()), concat(concat(less, equal), greater), h.size()));
        });
  }
}

// Tickets and small cooperative grids, forced through the dispatcher's hook (stable layout:
// the pass, then the reversal of the rest, both in the graph).
TEST_F(graph_partition, LaunchModes) {
  using namespace scanlab::partition_detail;
  const below<std::int32_t> pred{0};
  const two_way_options modes[] = {{two_way_mode::tickets, 0}, {two_way_mode::tickets, 3},
                                   {two_way_mode::cooperative, 2}};
  for (const std::int64_t n : multi_tile_sizes()) {
    SCOPED_TRACE("n = " + std::to_string(n));
    device_buffer<std::int32_t> d_in(n), d_out(3 * n);
    device_buffer<std::int64_t> d_counts(3);
    const std::int32_t* in = d_in.data();
    std::int32_t* out = d_out.data();
    std::int64_t* counts = d_counts.data();
    const auto graph = capture_variants<3>(stream(), [=](int k) {
      return [=](void* t, std::size_t& b, cudaStream_t s) {
        return dispatch_two_way(t, b, in, out + k * n, out + k * n, counts + k, n, pred, two_way_layout::stable, s,
                                modes[k]);
      };
    });
    std::vector<std::int32_t> h;
    replay(
        graph.graph, stream(), n,
        [&](std::uint64_t seed) {
          h = upload(d_in, scanlab::test::random_values<std::int32_t>(n, seed), stream());
          poison(stream(), d_out, d_counts);
        },
        [&] {
          const auto [yes, no] = split_by(h, pred);
          const auto want = concat(yes, no);
          const auto got_counts = d_counts.to_host(stream());
          const auto got = d_out.to_host(stream());
          for (int k = 0; k < 3; ++k) {
            SCOPED_TRACE("mode " + std::to_string(k));
            ASSERT_EQ(got_counts[static_cast<std::size_t>(k)], static_cast<std::int64_t>(yes.size()));
            EXPECT_TRUE(same_items(part(got, k, n), want, want.size()));
          }
        });
  }
}

}  // namespace
