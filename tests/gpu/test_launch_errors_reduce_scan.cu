// Launch errors: the launch helpers themselves, reduce, scan, norms, and a launch of the
// reduction ladder that the runtime refuses (see launch_errors_common.cuh for the modes).
#include "gpu/launch_errors_common.cuh"

#include <scanlab/algorithms/norms.cuh>
#include <scanlab/functional.cuh>
#include <scanlab/ladder/reduce_ladder.cuh>
#include <scanlab/reduce.cuh>
#include <scanlab/scan.cuh>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace {

using namespace scanlab::test::launch_errors;
using scanlab::device_buffer;

__global__ void store_kernel(int* out, int value) {
  if (threadIdx.x == 0 && blockIdx.x == 0) *out = value;
}

int read_one(const device_buffer<int>& d) { return d.to_host()[0]; }

// ---- the helpers of detail/launch.cuh ----------------------------------------------------

TEST_F(launch_errors_test, LaunchReturnsItsStatus) {
  device_buffer<int> out(1);
  out.fill_bytes(0);
  ASSERT_EQ(scanlab::detail::launch(store_kernel, 1, 32, 0, nullptr, out.data(), 7), cudaSuccess);
  EXPECT_EQ(read_one(out), 7);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST_F(launch_errors_test, DeliberateApiErrorLaunchLeavesTheCallersError) {
  device_buffer<int> out(1);
  out.fill_bytes(0);
  ASSERT_NO_FATAL_FAILURE(provoke_caller_error());
  EXPECT_EQ(scanlab::detail::launch(store_kernel, 1, 32, 0, nullptr, out.data(), 7), cudaSuccess);
  EXPECT_EQ(read_one(out), 7);
  EXPECT_EQ(cudaGetLastError(), cudaErrorMemoryAllocation);
}

TEST_F(launch_errors_test, DeliberateApiErrorLaunchReportsItsOwnFailure) {
  device_buffer<int> out(1);
  ASSERT_NO_FATAL_FAILURE(provoke_caller_error());
  // 2048 threads per block is over every GPU's limit.
  const cudaError_t status = scanlab::detail::launch(store_kernel, 1, 2048, 0, nullptr, out.data(), 7);
  EXPECT_NE(status, cudaSuccess);
  EXPECT_NE(status, cudaErrorMemoryAllocation) << "the launch reported the caller's earlier error";
}

TEST_F(launch_errors_test, DeliberateApiErrorForcedRefusalIsTheRuntimes) {
  int device = 0, cooperative = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device), cudaSuccess);
  if (cooperative == 0) GTEST_SKIP() << "the device has no cooperative launch";
  device_buffer<int> out(1);
  out.fill_bytes(0);
  {
    const forced_refusal refusal(true);
    EXPECT_EQ(scanlab::detail::launch_cooperative(store_kernel, 1, 32, nullptr, out.data(), 7),
              cudaErrorCooperativeLaunchTooLarge);
    EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess) << "the refusal was left in the last-error slot";
  }
  EXPECT_EQ(read_one(out), 0) << "the refused kernel ran";
  EXPECT_EQ(scanlab::detail::launch_cooperative(store_kernel, 1, 32, nullptr, out.data(), 7), cudaSuccess);
  EXPECT_EQ(read_one(out), 7);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

// ---- a launch of the library that the runtime refuses -----------------------------------

// 64 bytes: sequential addressing keeps one per thread in shared memory, 64 KB for 1024
// threads, over the 48 KB a launch gets without asking.
struct wide {
  double v[8];
};
struct wide_plus {
  __host__ __device__ wide operator()(const wide& a, const wide& b) const {
    wide r{};
    for (int i = 0; i < 8; ++i) r.v[i] = a.v[i] + b.v[i];
    return r;
  }
};

TEST_F(launch_errors_test, DeliberateApiErrorLibraryReportsItsOwnLaunchFailure) {
  const std::int64_t n = 4096;
  device_buffer<wide> in(n), out(1);
  in.fill_bytes(0);
  std::size_t bytes = 0;
  ASSERT_EQ(scanlab::ladder::reduce_sequential_addressing(static_cast<const wide*>(in.data()), out.data(), n, wide{},
                                                          wide_plus{}, nullptr, bytes, 1024),
            cudaSuccess);
  device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
  ASSERT_NO_FATAL_FAILURE(provoke_caller_error());
  const cudaError_t status = scanlab::ladder::reduce_sequential_addressing(
      static_cast<const wide*>(in.data()), out.data(), n, wide{}, wide_plus{}, temp.data(), bytes, 1024);
  EXPECT_NE(status, cudaSuccess) << "a launch asking for 64 KB of shared memory without the attribute";
  EXPECT_NE(status, cudaErrorMemoryAllocation) << "the library reported the caller's earlier error as its own";
}

// ---- reduce -------------------------------------------------------------------------------

template <class T, class Op>
void check_reduce(mode m, std::int64_t n, T init, Op op) {
  SCOPED_TRACE("n = " + std::to_string(n));
  const auto h = small_integers<T>(n, scanlab::test::test_seed());
  T want = init;
  for (const T& v : h) want = op(want, v);
  device_buffer<T> in(view(h)), out(1);
  ASSERT_NO_FATAL_FAILURE(run_library_call(m, [&](void* temp, std::size_t& bytes) {
    return scanlab::reduce(temp, bytes, static_cast<const T*>(in.data()), out.data(), n, init, op);
  }));
  EXPECT_EQ(out.to_host()[0], want);
}

void check_reduce_all(mode m) {
  // Sums of integers are exact in int32 and in double; max is exact for float.
  for (std::int64_t n : {test_n(medium_n), test_n(large_n)}) {
    ASSERT_NO_FATAL_FAILURE(check_reduce<std::int32_t>(m, n, 5, scanlab::plus{}));
    ASSERT_NO_FATAL_FAILURE(check_reduce<double>(m, n, 0.5, scanlab::plus{}));
    ASSERT_NO_FATAL_FAILURE(check_reduce<float>(m, n, -1000.0f, scanlab::maximum{}));
  }
}

TEST_F(launch_errors_test, Reduce) { check_reduce_all(mode::plain); }

TEST_F(launch_errors_test, DeliberateApiErrorReduce) {
  for (mode m : deliberate_modes) ASSERT_NO_FATAL_FAILURE(check_reduce_all(m));
}

// ---- scan ---------------------------------------------------------------------------------

template <class T>
void check_scan(mode m, std::int64_t n, bool exclusive) {
  SCOPED_TRACE("n = " + std::to_string(n) + (exclusive ? ", exclusive" : ", inclusive"));
  const auto h = small_integers<T>(n, scanlab::test::test_seed() + 1);
  const T init = T(3);
  std::vector<T> want(h.size());
  T acc = exclusive ? init : T(0);
  for (std::size_t i = 0; i < h.size(); ++i) {
    if (exclusive) {
      want[i] = acc;
      acc += h[i];
    } else {
      acc += h[i];
      want[i] = acc;
    }
  }
  device_buffer<T> in(view(h)), out(n);
  ASSERT_NO_FATAL_FAILURE(run_library_call(m, [&](void* temp, std::size_t& bytes) {
    const T* d_in = in.data();
    return exclusive ? scanlab::exclusive_scan(temp, bytes, d_in, out.data(), n, init, scanlab::plus{})
                     : scanlab::inclusive_scan(temp, bytes, d_in, out.data(), n, scanlab::plus{});
  }));
  SCANLAB_EXPECT_SAME(out.to_host(), want);
}

void check_scan_all(mode m) {
  for (std::int64_t n : {test_n(medium_n), test_n(large_n)}) {
    ASSERT_NO_FATAL_FAILURE(check_scan<std::int32_t>(m, n, false));
    ASSERT_NO_FATAL_FAILURE(check_scan<double>(m, n, true));
    ASSERT_NO_FATAL_FAILURE(check_scan<std::int64_t>(m, n, false));
  }
}

TEST_F(launch_errors_test, Scan) { check_scan_all(mode::plain); }

TEST_F(launch_errors_test, DeliberateApiErrorScan) {
  for (mode m : deliberate_modes) ASSERT_NO_FATAL_FAILURE(check_scan_all(m));
}

// ---- norms --------------------------------------------------------------------------------

template <class T>
void check_norms(mode m, std::int64_t n) {
  SCOPED_TRACE("n = " + std::to_string(n) + ", " + (sizeof(T) == 4 ? "float" : "double"));
  // Integers in [-8, 8]: the sums of products are exact in double.
  const auto hx = small_integers<T>(n, scanlab::test::test_seed() + 2, -8, 8);
  const auto hy = small_integers<T>(n, scanlab::test::test_seed() + 3, -8, 8);
  double dot = 0, squares = 0;
  for (std::size_t i = 0; i < hx.size(); ++i) {
    dot += static_cast<double>(hx[i]) * static_cast<double>(hy[i]);
    squares += static_cast<double>(hx[i]) * static_cast<double>(hx[i]);
  }
  device_buffer<T> x(view(hx)), y(view(hy));
  device_buffer<double> out(1);
  const T* px = x.data();
  const T* py = y.data();
  ASSERT_NO_FATAL_FAILURE(run_library_call(
      m, [&](void* temp, std::size_t& bytes) { return scanlab::dot(temp, bytes, px, py, out.data(), n); }));
  EXPECT_EQ(out.to_host()[0], dot);
  ASSERT_NO_FATAL_FAILURE(
      run_library_call(m, [&](void* temp, std::size_t& bytes) { return scanlab::rms(temp, bytes, px, out.data(), n); }));
  const double want_rms = std::sqrt(squares / static_cast<double>(n));
  EXPECT_NEAR(out.to_host()[0], want_rms, 1e-12 * want_rms);
}

void check_norms_all(mode m) {
  for (std::int64_t n : {test_n(medium_n), test_n(large_n)}) {
    ASSERT_NO_FATAL_FAILURE(check_norms<float>(m, n));
    ASSERT_NO_FATAL_FAILURE(check_norms<double>(m, n));
  }
}

TEST_F(launch_errors_test, Norms) { check_norms_all(mode::plain); }

TEST_F(launch_errors_test, DeliberateApiErrorNorms) {
  for (mode m : deliberate_modes) ASSERT_NO_FATAL_FAILURE(check_norms_all(m));
}

}  // namespace
