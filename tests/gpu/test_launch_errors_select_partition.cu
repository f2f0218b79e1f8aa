// Launch errors: compaction (select_if, select_flagged, unique) and the two- and three-way
// partitions (see launch_errors_common.cuh for the modes).
#include "gpu/launch_errors_common.cuh"

#include <scanlab/algorithms/partition.cuh>
#include <scanlab/algorithms/select.cuh>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

namespace {

using namespace scanlab::test::launch_errors;
using scanlab::device_buffer;

struct is_positive {
  __host__ __device__ bool operator()(std::int32_t x) const { return x > 0; }
};
struct is_multiple_of_three {
  __host__ __device__ bool operator()(std::int32_t x) const { return x % 3 == 0; }
};

std::int64_t read_count(const device_buffer<std::int64_t>& d) { return d.to_host()[0]; }

// The first `count` elements of a device buffer.
template <class T>
std::vector<T> head(const device_buffer<T>& d, std::int64_t count) {
  auto all = d.to_host();
  all.resize(static_cast<std::size_t>(count));
  return all;
}

// ---- compaction ---------------------------------------------------------------------------

void check_select_all(mode m) {
  const std::int64_t n = test_n(large_n);
  const auto h = small_integers<std::int32_t>(n, scanlab::test::test_seed());
  const auto h_flags = small_integers<std::uint8_t>(n, scanlab::test::test_seed() + 1, 0, 1);
  const auto h_runs = small_integers<std::int32_t>(n, scanlab::test::test_seed() + 2, 0, 2);  // many equal neighbours
  device_buffer<std::int32_t> in(view(h)), runs(view(h_runs)), out(n);
  device_buffer<std::uint8_t> flags(view(h_flags));
  device_buffer<std::int64_t> count(1);
  const std::int32_t* d_in = in.data();

  {
    SCOPED_TRACE("select_if");
    std::vector<std::int32_t> want;
    std::copy_if(h.begin(), h.end(), std::back_inserter(want), is_positive{});
    ASSERT_NO_FATAL_FAILURE(run_library_call(m, [&](void* temp, std::size_t& bytes) {
      return scanlab::select_if(temp, bytes, d_in, out.data(), count.data(), n, is_positive{});
    }));
    ASSERT_EQ(read_count(count), static_cast<std::int64_t>(want.size()));
    SCANLAB_EXPECT_SAME(head(out, read_count(count)), want);
  }
  {
    SCOPED_TRACE("select_flagged");
    std::vector<std::int32_t> want;
    for (std::size_t i = 0; i < h.size(); ++i) {
      if (h_flags[i] != 0) want.push_back(h[i]);
    }
    const std::uint8_t* d_flags = flags.data();
    ASSERT_NO_FATAL_FAILURE(run_library_call(m, [&](void* temp, std::size_t& bytes) {
      return scanlab::select_flagged(temp, bytes, d_in, d_flags, out.data(), count.data(), n);
    }));
    ASSERT_EQ(read_count(count), static_cast<std::int64_t>(want.size()));
    SCANLAB_EXPECT_SAME(head(out, read_count(count)), want);
  }
  {
    SCOPED_TRACE("unique");
    std::vector<std::int32_t> want;
    std::unique_copy(h_runs.begin(), h_runs.end(), std::back_inserter(want));
    const std::int32_t* d_runs = runs.data();
    ASSERT_NO_FATAL_FAILURE(run_library_call(m, [&](void* temp, std::size_t& bytes) {
      return scanlab::unique(temp, bytes, d_runs, out.data(), count.data(), n);
    }));
    ASSERT_EQ(read_count(count), static_cast<std::int64_t>(want.size()));
    SCANLAB_EXPECT_SAME(head(out, read_count(count)), want);
  }
}

TEST_F(launch_errors_test, Select) { check_select_all(mode::plain); }

TEST_F(launch_errors_test, DeliberateApiErrorSelect) {
  for (mode m : deliberate_modes) ASSERT_NO_FATAL_FAILURE(check_select_all(m));
}

// ---- two-way partitions -------------------------------------------------------------------

void check_two_way_all(mode m) {
  const std::int64_t n = test_n(large_n);
  const auto h = small_integers<std::int32_t>(n, scanlab::test::test_seed() + 3);
  std::vector<std::int32_t> selected, rest;
  for (std::int32_t v : h) (is_multiple_of_three{}(v) ? selected : rest).push_back(v);
  const auto num_selected = static_cast<std::int64_t>(selected.size());
  device_buffer<std::int32_t> in(view(h)), out(n), rejected(n);
  device_buffer<std::int64_t> count(1);
  const std::int32_t* d_in = in.data();

  {
    SCOPED_TRACE("partition");
    std::vector<std::int32_t> want = selected;
    want.insert(want.end(), rest.rbegin(), rest.rend());  // the rest reversed
    ASSERT_NO_FATAL_FAILURE(run_library_call(m, [&](void* temp, std::size_t& bytes) {
      return scanlab::partition(temp, bytes, d_in, out.data(), count.data(), n, is_multiple_of_three{});
    }));
    EXPECT_EQ(read_count(count), num_selected);
    SCANLAB_EXPECT_SAME(out.to_host(), want);
  }
  {
    SCOPED_TRACE("stable_partition");
    std::vector<std::int32_t> want = selected;
    want.insert(want.end(), rest.begin(), rest.end());
    ASSERT_NO_FATAL_FAILURE(run_library_call(m, [&](void* temp, std::size_t& bytes) {
      return scanlab::stable_partition(temp, bytes, d_in, out.data(), count.data(), n, is_multiple_of_three{});
    }));
    EXPECT_EQ(read_count(count), num_selected);
    SCANLAB_EXPECT_SAME(out.to_host(), want);
  }
  {
    SCOPED_TRACE("partition_copy");
    ASSERT_NO_FATAL_FAILURE(run_library_call(m, [&](void* temp, std::size_t& bytes) {
      return scanlab::partition_copy(temp, bytes, d_in, out.data(), rejected.data(), count.data(), n,
                                     is_multiple_of_three{});
    }));
    EXPECT_EQ(read_count(count), num_selected);
    SCANLAB_EXPECT_SAME(head(out, num_selected), selected);
    SCANLAB_EXPECT_SAME(head(rejected, n - num_selected), rest);
  }
}

TEST_F(launch_errors_test, TwoWayPartition) { check_two_way_all(mode::plain); }

TEST_F(launch_errors_test, DeliberateApiErrorTwoWayPartition) {
  for (mode m : deliberate_modes) ASSERT_NO_FATAL_FAILURE(check_two_way_all(m));
}

// ---- three-way partitions -----------------------------------------------------------------

template <class T>
void check_three_way(mode m, bool stable) {
  SCOPED_TRACE(std::string(stable ? "stable_partition_three_way" : "partition_three_way") + ", " +
               std::to_string(sizeof(T)) + "-byte elements");
  const std::int64_t n = test_n(large_n);
  const auto h = small_integers<T>(n, scanlab::test::test_seed() + 4, -20, 20);
  const T pivot = T(3);
  std::vector<T> less, equal, greater;
  for (const T& v : h) (v < pivot ? less : (pivot < v ? greater : equal)).push_back(v);
  std::vector<T> want = less;
  want.insert(want.end(), equal.begin(), equal.end());
  if (stable) {
    want.insert(want.end(), greater.begin(), greater.end());
  } else {
    want.insert(want.end(), greater.rbegin(), greater.rend());
  }
  device_buffer<T> in(view(h)), out(n);
  device_buffer<std::int64_t> counts(3);
  const T* d_in = in.data();
  ASSERT_NO_FATAL_FAILURE(run_library_call(m, [&](void* temp, std::size_t& bytes) {
    return stable ? scanlab::stable_partition_three_way(temp, bytes, d_in, out.data(), counts.data(), n, pivot)
                  : scanlab::partition_three_way(temp, bytes, d_in, out.data(), counts.data(), n, pivot);
  }));
  const std::vector<std::int64_t> want_counts = {static_cast<std::int64_t>(less.size()),
                                                 static_cast<std::int64_t>(equal.size()),
                                                 static_cast<std::int64_t>(greater.size())};
  EXPECT_EQ(counts.to_host(), want_counts);
  SCANLAB_EXPECT_SAME(out.to_host(), want);
}

void check_three_way_all(mode m) {
  for (bool stable : {false, true}) {
    ASSERT_NO_FATAL_FAILURE(check_three_way<std::int32_t>(m, stable));
    ASSERT_NO_FATAL_FAILURE(check_three_way<double>(m, stable));
  }
}

TEST_F(launch_errors_test, ThreeWayPartition) { check_three_way_all(mode::plain); }

TEST_F(launch_errors_test, DeliberateApiErrorThreeWayPartition) {
  for (mode m : deliberate_modes) ASSERT_NO_FATAL_FAILURE(check_three_way_all(m));
}

}  // namespace
