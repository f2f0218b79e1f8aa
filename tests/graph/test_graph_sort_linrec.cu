// CUDA graphs: radix sort (keys, pairs, argsort; onesweep and multipass), linear recurrences
// (one sequence, row-major and interleaved batches, final states) captured once and replayed
// on new data; and quicksort, which reads each level's totals on the host and so cannot be
// captured: the tests check that it says so with an error status, and that a leaf-sized sort
// (no partition level, no synchronisation) is either refused or captured safely.
#include "graph/graph_test_common.cuh"
#include "instances/linrec_instances.cuh"
#include "linrec/linrec_test_reference.hpp"

#include <scanlab/algorithms/linrec.cuh>
#include <scanlab/algorithms/quicksort.cuh>
#include <scanlab/algorithms/radix_sort.cuh>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <span>
#include <utility>
#include <vector>

namespace {

using namespace scanlab::test::graph;

// A line in the test output for what the driver did where the tests accept more than one
// behaviour (so that a run on a GPU shows which one it was).
void note(const std::string& what) { std::printf("[     NOTE ] %s\n", what.c_str()); }

// The stable order of `keys` under `before` (a strict weak order): positions, then the keys
// and values they select.
template <class K, class Before>
std::vector<std::int32_t> stable_order(const std::vector<K>& keys, Before before) {
  std::vector<std::int32_t> order(keys.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int32_t i, std::int32_t j) { return before(keys[i], keys[j]); });
  return order;
}
template <class T>
std::vector<T> gather(const std::vector<T>& from, const std::vector<std::int32_t>& order) {
  std::vector<T> out(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) out[i] = from[static_cast<std::size_t>(order[i])];
  return out;
}

// ---- radix sort ---------------------------------------------------------------------

// Keys: onesweep and multipass, ascending over all bits, and onesweep descending on bits
// [8, 24) (two passes; stable: keys equal in those bits keep their input order), in one graph.
TEST_F(graph_sort, RadixSortKeys) {
  scanlab::radix_sort_options multipass;
  multipass.algorithm = scanlab::radix_sort_algorithm::multipass;
  scanlab::radix_sort_options middle_descending;
  middle_descending.descending = true;
  middle_descending.begin_bit = 8;
  middle_descending.end_bit = 24;
  const scanlab::radix_sort_options options[] = {{}, multipass, middle_descending};
  for (const std::int64_t n : default_sizes()) {
    SCOPED_TRACE("n = " + std::to_string(n));
    device_buffer<std::uint32_t> d_in(n), d_out(3 * n);
    const std::uint32_t* in = d_in.data();
    std::uint32_t* out = d_out.data();
    const auto graph = capture_variants<3>(stream(), [=](int k) {
      return [=](void* t, std::size_t& b, cudaStream_t s) {
        return scanlab::radix_sort_keys(t, b, in, out + k * n, n, options[k], s);
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
          auto ascending = h;
          std::sort(ascending.begin(), ascending.end());
          const auto middle = [](std::uint32_t k) { return (k >> 8) & 0xffffu; };
          const auto descending =
              gather(h, stable_order(h, [&](std::uint32_t a, std::uint32_t b) { return middle(a) > middle(b); }));
          const auto got = d_out.to_host(stream());
          EXPECT_TRUE(same_items(part(got, 0, n), ascending, h.size())) << "onesweep";
          EXPECT_TRUE(same_items(part(got, 1, n), ascending, h.size())) << "multipass";
          EXPECT_TRUE(same_items(part(got, 2, n), descending, h.size())) << "onesweep, bits [8, 24), descending";
        });
  }
}

// Pairs (float keys, int32 values) with both algorithms, and the argsort, in one graph.
TEST_F(graph_sort, RadixSortPairsAndArgsort) {
  scanlab::radix_sort_options multipass;
  multipass.algorithm = scanlab::radix_sort_algorithm::multipass;
  for (const std::int64_t n : default_sizes()) {
    SCOPED_TRACE("n = " + std::to_string(n));
    device_buffer<float> d_keys(n), d_sorted(2 * n);
    device_buffer<std::int32_t> d_values(n), d_moved(2 * n), d_permutation(n);
    const float* keys = d_keys.data();
    const std::int32_t* values = d_values.data();
    float* sorted = d_sorted.data();
    std::int32_t* moved = d_moved.data();
    std::int32_t* permutation = d_permutation.data();
    const auto graph = capture_calls(
        stream(),
        [=](void* t, std::size_t& b, cudaStream_t s) {
          return scanlab::radix_sort_pairs(t, b, keys, sorted, values, moved, n, {}, s);
        },
        [=](void* t, std::size_t& b, cudaStream_t s) {
          return scanlab::radix_sort_pairs(t, b, keys, sorted + n, values, moved + n, n, multipass, s);
        },
        [=](void* t, std::size_t& b, cudaStream_t s) {
          return scanlab::radix_argsort(t, b, keys, permutation, n, {}, s);
        });
    std::vector<float> h_keys;
    std::vector<std::int32_t> h_values;
    replay(
        graph.graph, stream(), n,
        [&](std::uint64_t seed) {
          h_keys = upload(d_keys, scanlab::test::random_values<float>(n, seed), stream());
          h_values = upload(d_values, scanlab::test::random_values<std::int32_t>(n, seed + 1, /*bounded=*/false),
                            stream());
          poison(stream(), d_sorted, d_moved, d_permutation);
        },
        [&] {
          const auto order = stable_order(h_keys, [](float a, float b) { return a < b; });
          const auto want_keys = gather(h_keys, order);
          const auto want_values = gather(h_values, order);
          const auto got_keys = d_sorted.to_host(stream());
          const auto got_values = d_moved.to_host(stream());
          for (int k = 0; k < 2; ++k) {
            SCOPED_TRACE(k == 0 ? "onesweep" : "multipass");
            EXPECT_TRUE(same_items(part(got_keys, k, n), want_keys, h_keys.size()));
            EXPECT_TRUE(same_items(part(got_values, k, n), want_values, h_values.size()));
          }
          EXPECT_TRUE(same_items(d_permutation.to_host(stream()), order, order.size())) << "argsort";
        });
  }
}

// ---- linear recurrences -------------------------------------------------------------

// The coefficients of n steps, on the host (the reference's) and in the device buffers the
// graph reads: a contracting (|a| < 0.9), b in [-1, 1), the regime of filters and moving
// averages.
struct recurrence_inputs {
  device_buffer<float> d_a, d_b;
  std::vector<float> a, b;

  explicit recurrence_inputs(std::int64_t n) : d_a(n), d_b(n) {}
  void refill(std::uint64_t seed, cudaStream_t stream) {
    auto draw_a = scanlab::test::random_values<float>(d_a.size(), seed);
    for (float& v : draw_a) v *= 0.9f;
    a = upload(d_a, std::move(draw_a), stream);
    b = upload(d_b, scanlab::test::random_values<float>(d_b.size(), seed + 1), stream);
  }
};

// x (or the final states) against the sequential long double reference within its error bound.
void expect_solves(const recurrence_inputs& h, std::int64_t batch, std::int64_t length, bool interleaved,
                   std::span<const float> x0s, float x0, const std::vector<float>& x, bool final_only,
                   const char* what) {
  using namespace scanlab::test::linrec;
  const auto count = static_cast<std::size_t>(batch * length);
  const reference_operands_t<float> ops{reference_form::ab, std::span<const float>(h.a).first(count),
                                        std::span<const float>(h.b).first(count), 0.0};
  const reference_result r = reference_check(ops, batch, length, interleaved, x0s, x0, std::span<const float>(x),
                                             final_only);
  EXPECT_TRUE(r.pass()) << what << ": " << r.checked << " checked, worst at " << r.worst_index << " ("
                        << r.max_bound_ratio << " of the bound), " << r.special_mismatches << " NaN/Inf mismatches";
}

TEST_F(graph_linrec, OneSequence) {
  const float x0 = 0.25f;  // a host argument: fixed at capture
  for (const std::int64_t n : default_sizes()) {
    SCOPED_TRACE("n = " + std::to_string(n));
    recurrence_inputs h(n);
    device_buffer<float> d_x(n);
    const float* a = h.d_a.data();
    const float* b = h.d_b.data();
    float* x = d_x.data();
    const auto graph = capture_calls(stream(), [=](void* t, std::size_t& bytes, cudaStream_t s) {
      return scanlab::linear_recurrence(t, bytes, a, b, x, n, x0, s);
    });
    replay(
        graph.graph, stream(), n,
        [&](std::uint64_t seed) {
          h.refill(seed, stream());
          poison(stream(), d_x);
        },
        [&] { expect_solves(h, 1, n, false, {}, x0, d_x.to_host(stream()), false, "one sequence"); });
  }
}

// Batches in one graph, all reading the same a and b: a row-major batch and its final states
// (the initial states are device data, new every round), an interleaved batch with few
// sequences (three kernels: segment maps, their row-major solve, the segments again) and an
// interleaved batch with 2^17 sequences (one kernel).
TEST_F(graph_linrec, Batches) {
  struct shape {
    std::int64_t batch, length;
    scanlab::batch_layout layout;
  };
  const shape rows{37, 3001, scanlab::batch_layout::row_major};
  const shape columns{100, 3000, scanlab::batch_layout::interleaved};
  const shape wide{std::int64_t{1} << 17, 3, scanlab::batch_layout::interleaved};
  const std::int64_t n = std::max({rows.batch * rows.length, columns.batch * columns.length, wide.batch * wide.length});
  recurrence_inputs h(n);
  device_buffer<float> d_x0(columns.batch), d_rows(rows.batch * rows.length), d_finals(rows.batch),
      d_columns(columns.batch * columns.length), d_wide(wide.batch * wide.length);
  const float* a = h.d_a.data();
  const float* b = h.d_b.data();
  const float* x0s = d_x0.data();
  float* x_rows = d_rows.data();
  float* finals = d_finals.data();
  float* x_columns = d_columns.data();
  float* x_wide = d_wide.data();
  const auto solve = [=](const shape& sh, float* x, const float* initial) {
    return [=](void* t, std::size_t& bytes, cudaStream_t s) {
      return scanlab::linear_recurrence_batched(t, bytes, a, b, x, sh.batch, sh.length, sh.layout, initial, s);
    };
  };
  const auto graph = capture_calls(
      stream(), solve(rows, x_rows, x0s),
      [=](void* t, std::size_t& bytes, cudaStream_t s) {
        return scanlab::linear_recurrence_final_batched(t, bytes, a, b, finals, rows.batch, rows.length, rows.layout,
                                                        x0s, s);
      },
      solve(columns, x_columns, x0s), solve(wide, x_wide, nullptr));
  std::vector<float> h_x0;
  replay(
      graph.graph, stream(), n,
      [&](std::uint64_t seed) {
        h.refill(seed, stream());
        h_x0 = upload(d_x0, scanlab::test::random_values<float>(columns.batch, seed + 2), stream());
        poison(stream(), d_rows, d_finals, d_columns, d_wide);
      },
      [&] {
        const std::span<const float> x0_rows = std::span<const float>(h_x0).first(static_cast<std::size_t>(rows.batch));
        expect_solves(h, rows.batch, rows.length, false, x0_rows, 0.0f, d_rows.to_host(stream()), false, "row-major");
        expect_solves(h, rows.batch, rows.length, false, x0_rows, 0.0f, d_finals.to_host(stream()), true,
                      "row-major, final states");
        expect_solves(h, columns.batch, columns.length, true, h_x0, 0.0f, d_columns.to_host(stream()), false,
                      "interleaved, few sequences");
        expect_solves(h, wide.batch, wide.length, true, {}, 0.0f, d_wide.to_host(stream()), false,
                      "interleaved, 2^17 sequences");
      });
}

// Tickets and a small cooperative grid, forced through the dispatcher's hook.
TEST_F(graph_linrec, LaunchModes) {
  namespace ld = scanlab::linrec_detail;
  using policy = ld::default_linrec_policy<float>;
  const ld::linrec_options modes[] = {{ld::linrec_mode::tickets, 0, 0}, {ld::linrec_mode::tickets, 3, 0},
                                      {ld::linrec_mode::cooperative, 2, 0}};
  const float x0 = -0.5f;
  for (const std::int64_t n : multi_tile_sizes()) {
    SCOPED_TRACE("n = " + std::to_string(n));
    recurrence_inputs h(n);
    device_buffer<float> d_x(3 * n);
    const float* a = h.d_a.data();
    const float* b = h.d_b.data();
    float* x = d_x.data();
    const auto graph = capture_variants<3>(stream(), [=](int k) {
      return [=](void* t, std::size_t& bytes, cudaStream_t s) {
        return ld::dispatch_rows<policy>(t, bytes, ld::ab_source<float>{a, b}, x + k * n, static_cast<float*>(nullptr),
                                         std::int64_t{1}, n, static_cast<const float*>(nullptr), x0, s, modes[k]);
      };
    });
    replay(
        graph.graph, stream(), n,
        [&](std::uint64_t seed) {
          h.refill(seed, stream());
          poison(stream(), d_x);
        },
        [&] {
          const auto got = d_x.to_host(stream());
          for (int k = 0; k < 3; ++k) {
            SCOPED_TRACE("mode " + std::to_string(k));
            expect_solves(h, 1, n, false, {}, x0, part(got, k, n), false, "one sequence");
          }
        });
  }
}

// ---- quicksort: not capturable ------------------------------------------------------

bool is_capture_error(cudaError_t status) {
  return status == cudaErrorStreamCaptureUnsupported || status == cudaErrorStreamCaptureInvalidated;
}

// quicksort of `n` uint32 keys attempted inside a capture on `stream`, with its temp storage
// sized and allocated outside.
struct quicksort_attempt {
  device_buffer<std::uint32_t> in, out;
  device_buffer<unsigned char> temp;
  std::vector<std::uint32_t> keys;

  quicksort_attempt(std::int64_t n, cudaStream_t stream) : in(n), out(n) {
    std::size_t bytes = 0;
    SCANLAB_CHECK(scanlab::quicksort(nullptr, bytes, in.data(), out.data(), n, stream));
    temp = device_buffer<unsigned char>(static_cast<std::int64_t>(bytes));
    refill(scanlab::test::test_seed(), stream);
    SCANLAB_CHECK(cudaStreamSynchronize(stream));
  }
  void refill(std::uint64_t seed, cudaStream_t stream) {
    keys = upload(in, scanlab::test::random_values<std::uint32_t>(in.size(), seed, /*bounded=*/false), stream);
    poison(stream, out);
  }
  cudaError_t sort(cudaStream_t stream) {
    std::size_t bytes = static_cast<std::size_t>(temp.size());
    return scanlab::quicksort(temp.data(), bytes, in.data(), out.data(), in.size(), stream);
  }
  [[nodiscard]] ::testing::AssertionResult sorted(cudaStream_t stream) const {
    auto want = keys;
    std::sort(want.begin(), want.end());
    return same_items(out.to_host(stream), want, want.size());
  }
};

// More keys than one leaf (16384 four-byte keys): the host reads each level's totals (a copy
// to a host variable, then cudaStreamSynchronize) to size the next level. Inside a capture
// the driver refuses that: quicksort returns a capture error instead of crashing, hanging or
// returning a graph that sorts. Afterwards the stream is no longer capturing, the runtime's
// last error holds the refusal (cleared here: launches are checked with cudaGetLastError),
// and the same sort outside a capture works on the same stream.
TEST_F(graph_quicksort, RefusesCaptureDeliberateApiError) {
  quicksort_attempt q(50000, stream());
  const capture_outcome c = try_capture(stream(), [&](cudaStream_t s) { return q.sort(s); });
  EXPECT_TRUE(is_capture_error(c.call)) << "quicksort returned " << error_name(c.call) << " inside a capture";
  if (c.after_call == cudaStreamCaptureStatusInvalidated) {
    EXPECT_EQ(c.end, cudaErrorStreamCaptureInvalidated) << error_name(c.end);
    EXPECT_EQ(c.graph.get(), nullptr);
  }
  note("quicksort of 50000 keys inside a capture returned " + error_name(c.call) + "; the capture was " +
       (c.after_call == cudaStreamCaptureStatusInvalidated ? "invalidated" : "still active") +
       "; cudaStreamEndCapture returned " + error_name(c.end));
  EXPECT_TRUE(is_capture_error(cudaGetLastError()));
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusActive;
  SCANLAB_CHECK(cudaStreamIsCapturing(stream(), &status));
  EXPECT_EQ(status, cudaStreamCaptureStatusNone);

  SCANLAB_CHECK(q.sort(stream()));
  EXPECT_TRUE(q.sorted(stream())) << "the same sort outside a capture";
}

// One leaf (no partition level, no synchronisation): quicksort enqueues only the leaf
// descriptor's copy and the leaf sort. Acceptable outcomes: the capture is refused with a
// capture error, or the graph is safe (no copy from pageable host memory: the descriptor is
// a variable on quicksort's stack, dead when the graph is replayed) and sorts new data on
// every replay. A graph that copies from quicksort's stack fails the test.
TEST_F(graph_quicksort, LeafSizeDeliberateApiError) {
  const std::int64_t n = 1000;
  quicksort_attempt q(n, stream());
  const capture_outcome c = try_capture(stream(), [&](cudaStream_t s) { return q.sort(s); });
  if (c.call != cudaSuccess) {
    note("quicksort of " + std::to_string(n) + " keys (one leaf) inside a capture: refused with " +
         error_name(c.call) + "; cudaStreamEndCapture returned " + error_name(c.end));
    EXPECT_TRUE(is_capture_error(c.call)) << error_name(c.call);
    (void)cudaGetLastError();
    SCANLAB_CHECK(q.sort(stream()));
    EXPECT_TRUE(q.sorted(stream())) << "the same sort outside a capture";
    return;
  }
  ASSERT_EQ(c.end, cudaSuccess) << error_name(c.end);
  const auto copies = pageable_copies(c.graph.get());
  note("quicksort of " + std::to_string(n) + " keys (one leaf) inside a capture: captured, " +
       std::to_string(node_count(c.graph.get())) + " nodes, " + std::to_string(copies.size()) +
       " copies from pageable host memory");
  ASSERT_TRUE(copies.empty()) << "the graph holds " << copies.front()
                              << " (quicksort's leaf descriptor, a variable on its stack)";
  const graph_exec exec(c.graph.get());
  replay(
      exec, stream(), n, [&](std::uint64_t seed) { q.refill(seed, stream()); },
      [&] { EXPECT_TRUE(q.sorted(stream())); });
}

}  // namespace
