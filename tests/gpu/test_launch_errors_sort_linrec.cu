// Launch errors: radix sort (onesweep launches no cooperative grid; multipass scans with
// scanlab::exclusive_sum, which does), the three-phase compaction (also built on the scan)
// and linear recurrences (see launch_errors_common.cuh for the modes).
#include "gpu/launch_errors_common.cuh"
#include "instances/linrec_instances.cuh"

#include <scanlab/algorithms/linrec.cuh>
#include <scanlab/algorithms/quicksort.cuh>
#include <scanlab/algorithms/radix_sort.cuh>
#include <scanlab/algorithms/select_three_phase.cuh>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <numeric>
#include <string>
#include <vector>

namespace {

using namespace scanlab::test::launch_errors;
using scanlab::device_buffer;

// ---- radix sort -----------------------------------------------------------------------------

void check_sort(mode m, scanlab::radix_sort_algorithm algorithm) {
  SCOPED_TRACE(algorithm == scanlab::radix_sort_algorithm::onesweep ? "onesweep" : "multipass");
  const std::int64_t n = test_n(large_n);
  const auto keys = small_integers<std::uint32_t>(n, scanlab::test::test_seed(), 0, 1 << 30);
  const auto signed_keys = small_integers<std::int64_t>(n, scanlab::test::test_seed() + 1, -1000, 1000);
  scanlab::radix_sort_options options;
  options.algorithm = algorithm;
  {
    SCOPED_TRACE("keys");
    std::vector<std::uint32_t> want = keys;
    std::sort(want.begin(), want.end());
    device_buffer<std::uint32_t> in(view(keys)), out(n);
    const std::uint32_t* d_in = in.data();
    ASSERT_NO_FATAL_FAILURE(run_library_call(m, [&](void* temp, std::size_t& bytes) {
      return scanlab::radix_sort_keys(temp, bytes, d_in, out.data(), n, options);
    }));
    SCANLAB_EXPECT_SAME(out.to_host(), want);
  }
  {
    SCOPED_TRACE("pairs (int64 keys, their positions as values)");
    std::vector<std::uint32_t> positions(static_cast<std::size_t>(n));
    std::iota(positions.begin(), positions.end(), 0u);
    std::vector<std::uint32_t> want_values = positions;
    std::stable_sort(want_values.begin(), want_values.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return signed_keys[a] < signed_keys[b]; });
    std::vector<std::int64_t> want_keys(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < want_keys.size(); ++i) want_keys[i] = signed_keys[want_values[i]];
    device_buffer<std::int64_t> keys_in(view(signed_keys)), keys_out(n);
    device_buffer<std::uint32_t> values_in(view(positions)), values_out(n);
    const std::int64_t* d_keys = keys_in.data();
    const std::uint32_t* d_values = values_in.data();
    ASSERT_NO_FATAL_FAILURE(run_library_call(m, [&](void* temp, std::size_t& bytes) {
      return scanlab::radix_sort_pairs(temp, bytes, d_keys, keys_out.data(), d_values, values_out.data(), n,
                                       options);
    }));
    SCANLAB_EXPECT_SAME(keys_out.to_host(), want_keys);
    SCANLAB_EXPECT_SAME(values_out.to_host(), want_values);
  }
}

void check_sort_all(mode m) {
  ASSERT_NO_FATAL_FAILURE(check_sort(m, scanlab::radix_sort_algorithm::onesweep));
  ASSERT_NO_FATAL_FAILURE(check_sort(m, scanlab::radix_sort_algorithm::multipass));
}

TEST_F(launch_errors_test, RadixSort) { check_sort_all(mode::plain); }

TEST_F(launch_errors_test, DeliberateApiErrorRadixSort) {
  for (mode m : deliberate_modes) ASSERT_NO_FATAL_FAILURE(check_sort_all(m));
}

// ---- quicksort ----------------------------------------------------------------------------
// Not cooperative, and it synchronises once per level; its leaf kernels opt in to more than
// 48 KB of shared memory (a runtime call that clears the last-error slot: made once only).
// Float keys go through the order-preserving bit map; one leaf and several levels.

void check_quicksort(mode m) {
  for (const std::int64_t n : {std::int64_t{3000}, test_n(large_n)}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto ints = small_integers<std::int32_t>(n, scanlab::test::test_seed() + 5, -100000, 100000);
    std::vector<float> keys(ints.begin(), ints.end());
    std::vector<float> want = keys;
    std::sort(want.begin(), want.end());
    device_buffer<float> in(view(keys)), out(n);
    const float* d_in = in.data();
    ASSERT_NO_FATAL_FAILURE(run_library_call(m, [&](void* temp, std::size_t& bytes) {
      return scanlab::quicksort(temp, bytes, d_in, out.data(), n);
    }));
    SCANLAB_EXPECT_SAME(out.to_host(), want);
  }
}

TEST_F(launch_errors_test, Quicksort) { check_quicksort(mode::plain); }

TEST_F(launch_errors_test, DeliberateApiErrorQuicksort) {
  for (mode m : deliberate_modes) ASSERT_NO_FATAL_FAILURE(check_quicksort(m));
}

// ---- the three-phase compaction ---------------------------------------------------------

struct is_odd {
  __host__ __device__ bool operator()(std::int32_t x) const { return (x & 1) != 0; }
};

void check_three_phase(mode m) {
  const std::int64_t n = test_n(large_n);
  const auto h = small_integers<std::int32_t>(n, scanlab::test::test_seed() + 2);
  std::vector<std::int32_t> want;
  std::copy_if(h.begin(), h.end(), std::back_inserter(want), is_odd{});
  device_buffer<std::int32_t> in(view(h)), out(n);
  device_buffer<std::int64_t> count(1);
  const std::int32_t* d_in = in.data();
  ASSERT_NO_FATAL_FAILURE(run_library_call(m, [&](void* temp, std::size_t& bytes) {
    return scanlab::three_phase::select_if(temp, bytes, d_in, out.data(), count.data(), n, is_odd{});
  }));
  const std::int64_t got_count = count.to_host()[0];
  ASSERT_EQ(got_count, static_cast<std::int64_t>(want.size()));
  auto got = out.to_host();
  got.resize(static_cast<std::size_t>(got_count));
  SCANLAB_EXPECT_SAME(got, want);
}

TEST_F(launch_errors_test, ThreePhaseSelect) { check_three_phase(mode::plain); }

TEST_F(launch_errors_test, DeliberateApiErrorThreePhaseSelect) {
  for (mode m : deliberate_modes) ASSERT_NO_FATAL_FAILURE(check_three_phase(m));
}

// ---- linear recurrences -------------------------------------------------------------------

// a in {-1, 0, 1} and b, x0 small integers: every state is an integer below 2^24, so
// float and double give the sequential loop's bits whatever the order of composition.
template <class T>
struct recurrence {
  std::vector<T> a, b, x0s;
};

template <class T>
recurrence<T> make_recurrence(std::int64_t n, std::int64_t batch, std::uint64_t seed) {
  return {small_integers<T>(n, seed, -1, 1), small_integers<T>(n, seed + 1, -8, 8),
          small_integers<T>(batch, seed + 2, -8, 8)};
}

// The sequential solve of every sequence (row-major: sequence k at k * length + t;
// interleaved: at t * batch + k), each from its own x0.
template <class T>
void solve_on_host(const recurrence<T>& r, std::vector<T>& x, std::int64_t batch, std::int64_t length,
                   scanlab::batch_layout layout) {
  const bool rows = layout == scanlab::batch_layout::row_major;
  for (std::int64_t k = 0; k < batch; ++k) {
    T state = r.x0s[static_cast<std::size_t>(k)];
    for (std::int64_t t = 0; t < length; ++t) {
      const auto i = static_cast<std::size_t>(rows ? k * length + t : t * batch + k);
      state = r.a[i] * state + r.b[i];
      x[i] = state;
    }
  }
}

template <class T>
void check_linrec(mode m, std::int64_t batch, std::int64_t length, scanlab::batch_layout layout) {
  SCOPED_TRACE(std::to_string(batch) + " x " + std::to_string(length) +
               (layout == scanlab::batch_layout::row_major ? " row-major" : " interleaved") + ", " +
               std::to_string(sizeof(T)) + "-byte elements");
  const std::int64_t n = batch * length;
  const auto r = make_recurrence<T>(n, batch, scanlab::test::test_seed() + 3);
  std::vector<T> want(static_cast<std::size_t>(n));
  solve_on_host(r, want, batch, length, layout);
  device_buffer<T> a(view(r.a)), b(view(r.b)), x0s(view(r.x0s)), x(n), final_x(batch);
  const T* d_a = a.data();
  const T* d_b = b.data();
  const T* d_x0s = x0s.data();
  if (batch == 1) {
    ASSERT_NO_FATAL_FAILURE(run_library_call(m, [&](void* temp, std::size_t& bytes) {
      return scanlab::linear_recurrence(temp, bytes, d_a, d_b, x.data(), n, r.x0s[0]);
    }));
    SCANLAB_EXPECT_SAME(x.to_host(), want);
    ASSERT_NO_FATAL_FAILURE(run_library_call(m, [&](void* temp, std::size_t& bytes) {
      return scanlab::linear_recurrence_final(temp, bytes, d_a, d_b, final_x.data(), n, r.x0s[0]);
    }));
    EXPECT_EQ(final_x.to_host()[0], want.back());
    return;
  }
  ASSERT_NO_FATAL_FAILURE(run_library_call(m, [&](void* temp, std::size_t& bytes) {
    return scanlab::linear_recurrence_batched(temp, bytes, d_a, d_b, x.data(), batch, length, layout, d_x0s);
  }));
  SCANLAB_EXPECT_SAME(x.to_host(), want);
}

void check_linrec_all(mode m) {
  using scanlab::batch_layout;
  const std::int64_t n = test_n(large_n);
  ASSERT_NO_FATAL_FAILURE(check_linrec<float>(m, 1, n, batch_layout::row_major));
  ASSERT_NO_FATAL_FAILURE(check_linrec<double>(m, 1, n, batch_layout::row_major));
  ASSERT_NO_FATAL_FAILURE(check_linrec<float>(m, 64, n / 64 + 3, batch_layout::row_major));
  // Few long interleaved sequences: segment maps, then a row-major solve of the segments
  // (cooperative at the full size: 8 x 2049 segment maps), then the segments.
  ASSERT_NO_FATAL_FAILURE(check_linrec<float>(m, 8, n / 8 + 3, batch_layout::interleaved));
}

TEST_F(launch_errors_test, LinearRecurrence) { check_linrec_all(mode::plain); }

TEST_F(launch_errors_test, DeliberateApiErrorLinearRecurrence) {
  for (mode m : deliberate_modes) ASSERT_NO_FATAL_FAILURE(check_linrec_all(m));
}

}  // namespace
