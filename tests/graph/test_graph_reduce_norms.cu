// CUDA graphs: reductions (reduce_sum / min / max, reduce with a wider init, transform_reduce,
// segmented_reduce) and norms (dot, rms, rms_diff) captured once and replayed on new data.
// The default sizes reach every launch of the dispatchers: reduce_tile_kernel (up to 16 KB),
// the looping single block (up to 128 KB) and the cooperative grid, which the norms (calls of
// transform_reduce) share: rms of 1000 / 20000 floats takes the first two, dot and rms_diff
// (two arrays zipped: 16 KB is 2048 pairs) the tile kernel and the grid.
#include "graph/graph_test_common.cuh"

#include <scanlab/algorithms/norms.cuh>
#include <scanlab/reduce.cuh>

#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

namespace {

using namespace scanlab::test::graph;

struct square_as_int64 {
  __host__ __device__ std::int64_t operator()(std::int32_t x) const { return std::int64_t{x} * x; }
};

// Sum, minimum and maximum of one input in one graph. uint32 over its whole range (the sum
// wraps mod 2^32: exact, and min and max change with every round); float in [-1, 1) (the sum
// within Higham's bound of the float64 one).
template <class T>
void sum_min_max(cudaStream_t stream) {
  for (const std::int64_t n : default_sizes()) {
    SCOPED_TRACE("n = " + std::to_string(n));
    device_buffer<T> d_in(n), d_out(3);
    const T* in = d_in.data();
    T* out = d_out.data();
    const auto graph = capture_calls(
        stream,
        [=](void* t, std::size_t& b, cudaStream_t s) { return scanlab::reduce_sum(t, b, in, out, n, s); },
        [=](void* t, std::size_t& b, cudaStream_t s) { return scanlab::reduce_min(t, b, in, out + 1, n, s); },
        [=](void* t, std::size_t& b, cudaStream_t s) { return scanlab::reduce_max(t, b, in, out + 2, n, s); });
    std::vector<T> h;
    replay(
        graph.graph, stream, n,
        [&](std::uint64_t seed) {
          h = upload(d_in, scanlab::test::random_values<T>(n, seed, /*bounded=*/false), stream);
          poison(stream, d_out);
        },
        [&] {
          const auto got = d_out.to_host(stream);
          EXPECT_EQ(got[1], *std::min_element(h.begin(), h.end()));
          EXPECT_EQ(got[2], *std::max_element(h.begin(), h.end()));
          if constexpr (std::is_floating_point_v<T>) {
            double sum = 0, sum_abs = 0;
            for (const T v : h) {
              sum += v;
              sum_abs += std::fabs(v);
            }
            EXPECT_NEAR(got[0], sum, scanlab::test::sum_tolerance<T>(n, sum_abs));
          } else {
            EXPECT_EQ(got[0], std::accumulate(h.begin(), h.end(), T{0}));
          }
        });
  }
}

TEST_F(graph_reduce, SumMinMaxUint32) { sum_min_max<std::uint32_t>(stream()); }
TEST_F(graph_reduce, SumMinMaxFloat) { sum_min_max<float>(stream()); }

// reduce of int32 data into an int64 accumulator with an init, and transform_reduce (sum of
// squares, int64), in one graph: exact.
TEST_F(graph_reduce, WideInitAndTransformReduce) {
  for (const std::int64_t n : default_sizes()) {
    SCOPED_TRACE("n = " + std::to_string(n));
    device_buffer<std::int32_t> d_in(n);
    device_buffer<std::int64_t> d_out(2);
    const std::int32_t* in = d_in.data();
    std::int64_t* out = d_out.data();
    const std::int64_t init = std::int64_t{5} << 40;
    const auto graph = capture_calls(
        stream(),
        [=](void* t, std::size_t& b, cudaStream_t s) { return scanlab::reduce(t, b, in, out, n, init, scanlab::plus{}, s); },
        [=](void* t, std::size_t& b, cudaStream_t s) {
          return scanlab::transform_reduce(t, b, in, out + 1, n, std::int64_t{0}, scanlab::plus{}, square_as_int64{}, s);
        });
    std::vector<std::int32_t> h;
    replay(
        graph.graph, stream(), n,
        [&](std::uint64_t seed) {
          h = upload(d_in, random_integers<std::int32_t>(n, seed, -(1 << 30), 1 << 30), stream());
          poison(stream(), d_out);
        },
        [&] {
          std::int64_t sum = init, squares = 0;
          for (const std::int32_t v : h) {
            sum += v;
            squares += square_as_int64{}(v);
          }
          const auto got = d_out.to_host(stream());
          EXPECT_EQ(got[0], sum);
          EXPECT_EQ(got[1], squares);
        });
  }
}

// Offsets of `segments` segments covering [0, n): 0, then sorted random cuts, then n (equal
// cuts make empty segments).
std::vector<std::int64_t> random_cuts(std::int64_t segments, std::int64_t n, std::uint64_t seed) {
  auto cuts = random_integers<std::int64_t>(segments + 1, seed, 0, n);
  std::sort(cuts.begin(), cuts.end());
  cuts.front() = 0;
  cuts.back() = n;
  return cuts;
}

// segmented_reduce: the segment boundaries are device data, so every round draws new ones
// (the number of segments, a host argument, is fixed at capture); some segments are empty.
TEST_F(graph_reduce, Segmented) {
  for (const std::int64_t n : default_sizes()) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const std::int64_t segments = 1 + n / 50;
    device_buffer<std::uint32_t> d_in(n), d_out(segments);
    device_buffer<std::int64_t> d_offsets(segments + 1);
    const std::uint32_t* in = d_in.data();
    std::uint32_t* out = d_out.data();
    const std::int64_t* offsets = d_offsets.data();
    const std::uint32_t init = 3;
    const auto graph = capture_calls(stream(), [=](void* t, std::size_t& b, cudaStream_t s) {
      return scanlab::segmented_reduce(t, b, in, out, segments, offsets, init, scanlab::plus{}, s);
    });
    std::vector<std::uint32_t> h;
    std::vector<std::int64_t> cuts;
    replay(
        graph.graph, stream(), n,
        [&](std::uint64_t seed) {
          h = upload(d_in, scanlab::test::random_values<std::uint32_t>(n, seed, /*bounded=*/false), stream());
          cuts = upload(d_offsets, random_cuts(segments, n, seed + 1), stream());
          poison(stream(), d_out);
        },
        [&] {
          std::vector<std::uint32_t> want(static_cast<std::size_t>(segments));
          for (std::int64_t s = 0; s < segments; ++s) {
            const auto k = static_cast<std::size_t>(s);
            want[k] = std::accumulate(h.begin() + cuts[k], h.begin() + cuts[k + 1], init);
          }
          EXPECT_TRUE(same_items(d_out.to_host(stream()), want, want.size()));
        });
  }
}

// dot (float accumulator), rms (float data, double accumulator) and rms_diff in one graph,
// against float64 sums within Higham's bound.
TEST_F(graph_norms, DotRmsRmsDiff) {
  for (const std::int64_t n : default_sizes()) {
    SCOPED_TRACE("n = " + std::to_string(n));
    device_buffer<float> d_x(n), d_y(n), d_dot(1), d_rms_diff(1);
    device_buffer<double> d_rms(1);
    const float* x = d_x.data();
    const float* y = d_y.data();
    float* dot_out = d_dot.data();
    float* rms_diff_out = d_rms_diff.data();
    double* rms_out = d_rms.data();
    const auto graph = capture_calls(
        stream(), [=](void* t, std::size_t& b, cudaStream_t s) { return scanlab::dot(t, b, x, y, dot_out, n, s); },
        [=](void* t, std::size_t& b, cudaStream_t s) { return scanlab::rms(t, b, x, rms_out, n, s); },
        [=](void* t, std::size_t& b, cudaStream_t s) { return scanlab::rms_diff(t, b, x, y, rms_diff_out, n, s); });
    std::vector<float> hx, hy;
    replay(
        graph.graph, stream(), n,
        [&](std::uint64_t seed) {
          hx = upload(d_x, scanlab::test::random_values<float>(n, seed), stream());
          hy = upload(d_y, scanlab::test::random_values<float>(n, seed + 1), stream());
          poison(stream(), d_dot, d_rms, d_rms_diff);
        },
        [&] {
          double dot = 0, dot_abs = 0, squares = 0, diff_squares = 0;
          for (std::size_t i = 0; i < hx.size(); ++i) {
            const double xi = hx[i], yi = hy[i];
            dot += xi * yi;
            dot_abs += std::fabs(xi * yi);
            squares += xi * xi;
            diff_squares += (xi - yi) * (xi - yi);
          }
          const auto nd = static_cast<double>(n);
          EXPECT_NEAR(d_dot.to_host(stream())[0], dot, scanlab::test::sum_tolerance<float>(n, dot_abs));
          const double rms = std::sqrt(squares / nd);
          EXPECT_NEAR(d_rms.to_host(stream())[0], rms, rms * scanlab::test::sum_tolerance<double>(n, 1.0));
          const double rms_diff = std::sqrt(diff_squares / nd);
          // sqrt halves the relative error of the sum of squares.
          EXPECT_NEAR(d_rms_diff.to_host(stream())[0], rms_diff,
                      rms_diff * scanlab::test::sum_tolerance<float>(n, 1.0));
        });
  }
}

// n = 0 in a graph: the calls still write their documented results (reduce: init; dot: 0;
// rms: NaN), so the captured graph is not empty, and each replay writes them again.
TEST_F(graph_reduce, EmptyInputsWriteTheirResults) {
  device_buffer<float> d_in(1), d_sum(1), d_dot(1);
  device_buffer<double> d_rms(1);
  const float* in = d_in.data();
  float* sum_out = d_sum.data();
  float* dot_out = d_dot.data();
  double* rms_out = d_rms.data();
  const auto graph = capture_calls(
      stream(),
      [=](void* t, std::size_t& b, cudaStream_t s) { return scanlab::reduce(t, b, in, sum_out, 0, 2.5f, scanlab::plus{}, s); },
      [=](void* t, std::size_t& b, cudaStream_t s) { return scanlab::dot(t, b, in, in, dot_out, 0, s); },
      [=](void* t, std::size_t& b, cudaStream_t s) { return scanlab::rms(t, b, in, rms_out, 0, s); });
  replay(
      graph.graph, stream(), 0,
      [&](std::uint64_t) { poison(stream(), d_sum, d_dot, d_rms); },
      [&] {
        EXPECT_EQ(d_sum.to_host(stream())[0], 2.5f);
        EXPECT_EQ(d_dot.to_host(stream())[0], 0.0f);
        EXPECT_TRUE(std::isnan(d_rms.to_host(stream())[0]));
      });
}

}  // namespace
