// Shared by the launch-error tests (test_launch_errors_*.cu): what a library call does with
// the runtime's last-error slot, and the fall-back when a cooperative launch is refused.
//
// Each check runs one algorithm on data whose answer is exact on the CPU (integers, or
// floating-point values that are small integers, so every order of summation gives the
// same bits) in one of four modes:
//   plain                      the call as a user makes it;
//   caller_error               a failing CUDA call of the caller's (cudaMalloc of 2^60
//                              bytes: cudaErrorMemoryAllocation, not sticky) just before
//                              the library call: the call must succeed and leave that
//                              error in the slot (cudaGetLastError() afterwards returns it);
//   refused                    every cooperative launch refused by the runtime
//                              (detail::cooperative_refusal_for_testing): the call must
//                              take its non-cooperative path, give the same answer, and
//                              leave the slot clean;
//   refused_after_caller_error both: the refusal overwrites the caller's error in the slot
//                              (one slot), so afterwards the slot holds the caller's error
//                              or nothing, never the refusal.
// The modes other than plain make CUDA calls fail on purpose: the tests using them are
// named *DeliberateApiError*, which the sanitizer runs of scripts/gpu-check.sh leave out.
#pragma once

#include "common/device_buffer.hpp"
#include "common/gpu_test.hpp"
#include "common/test_util.hpp"

#include <scanlab/detail/launch.cuh>
#include <scanlab/error.hpp>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace scanlab::test::launch_errors {

enum class mode { plain, caller_error, refused, refused_after_caller_error };

inline const char* name(mode m) {
  switch (m) {
    case mode::plain: return "plain";
    case mode::caller_error: return "caller's earlier error";
    case mode::refused: return "cooperative launch refused";
    case mode::refused_after_caller_error: return "caller's earlier error, then cooperative launch refused";
  }
  return "?";
}

inline constexpr mode deliberate_modes[] = {mode::caller_error, mode::refused, mode::refused_after_caller_error};

// Sizes that take the cooperative path of every dispatcher (many tiles, more than one
// block's worth for reduce and norms), odd so that the last tile is partial.
inline constexpr std::int64_t large_n = (std::int64_t{1} << 20) + 7;
inline constexpr std::int64_t medium_n = 100003;

// n, or SCANLAB_TEST_MAX_N where that is smaller (sanitizer runs of the plain tests).
inline std::int64_t test_n(std::int64_t n) { return std::min(n, std::max<std::int64_t>(max_test_n(), 1)); }

// A failing CUDA call of the caller's: not sticky, recorded in the last-error slot.
inline void provoke_caller_error() {
  void* p = nullptr;
  ASSERT_EQ(cudaMalloc(&p, std::size_t{1} << 60), cudaErrorMemoryAllocation);
  ASSERT_EQ(cudaPeekAtLastError(), cudaErrorMemoryAllocation);
}

// While alive, every cooperative launch of the library is refused (detail/launch.cuh).
class forced_refusal {
 public:
  explicit forced_refusal(bool on) : on_(on) {
    if (on_) scanlab::detail::cooperative_refusal_for_testing.store(true);
  }
  ~forced_refusal() {
    if (on_) scanlab::detail::cooperative_refusal_for_testing.store(false);
  }
  forced_refusal(const forced_refusal&) = delete;
  forced_refusal& operator=(const forced_refusal&) = delete;

 private:
  bool on_;
};

// A library call in the two-phase protocol, `call(d_temp, temp_bytes)`, in mode m: sizes
// and allocates the temp storage, arranges the mode, makes the call, waits for the device,
// and checks the status and the last-error slot. The caller checks the results.
template <class Call>
void run_library_call(mode m, Call call) {
  SCOPED_TRACE(name(m));
  const bool refuse = m == mode::refused || m == mode::refused_after_caller_error;
  const bool caller_error = m == mode::caller_error || m == mode::refused_after_caller_error;
  const forced_refusal refusal(refuse);
  std::size_t temp_bytes = 0;
  ASSERT_EQ(call(nullptr, temp_bytes), cudaSuccess);
  device_buffer<unsigned char> temp(static_cast<std::int64_t>(temp_bytes));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaPeekAtLastError(), cudaSuccess) << "the slot is not clean before the call";
  if (caller_error) ASSERT_NO_FATAL_FAILURE(provoke_caller_error());
  ASSERT_EQ(call(temp.data(), temp_bytes), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const cudaError_t last = cudaGetLastError();
  if (m == mode::caller_error) {
    EXPECT_EQ(last, cudaErrorMemoryAllocation) << "the library did not leave the caller's earlier error in the slot: "
                                               << cudaGetErrorName(last);
  } else if (m == mode::refused_after_caller_error) {
    EXPECT_TRUE(last == cudaErrorMemoryAllocation || last == cudaSuccess)
        << "after a refused cooperative launch the slot holds " << cudaGetErrorName(last);
  } else {
    EXPECT_EQ(last, cudaSuccess) << "the library left " << cudaGetErrorName(last) << " in the last-error slot";
  }
}

// Integers in [lo, hi] as T, seeded.
template <class T>
std::vector<T> small_integers(std::int64_t n, std::uint64_t seed, int lo = -100, int hi = 100) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<T> out(static_cast<std::size_t>(n));
  for (auto& v : out) v = static_cast<T>(dist(rng));
  return out;
}

template <class T>
std::span<const T> view(const std::vector<T>& v) {
  return {v.data(), v.size()};
}

// The first index where two vectors differ, or -1 (gtest prints a million-element vector badly).
template <class T>
std::int64_t first_mismatch(const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size()) return 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!(got[i] == want[i])) return static_cast<std::int64_t>(i);
  }
  return -1;
}

#define SCANLAB_EXPECT_SAME(got, want)                                                                     \
  do {                                                                                                     \
    const std::int64_t scanlab_mismatch_ = ::scanlab::test::launch_errors::first_mismatch((got), (want));  \
    EXPECT_EQ(scanlab_mismatch_, -1) << #got " differs from " #want " (sizes " << (got).size() << ", "     \
                                     << (want).size() << ")";                                              \
  } while (0)

// Clean state around every test: no refusal forced, nothing in the last-error slot.
class launch_errors_test : public gpu_test {
 protected:
  void SetUp() override {
    gpu_test::SetUp();
    if (IsSkipped()) return;
    scanlab::detail::cooperative_refusal_for_testing.store(false);
    static_cast<void>(cudaGetLastError());
  }
  void TearDown() override {
    scanlab::detail::cooperative_refusal_for_testing.store(false);
    if (gpu_unavailable_reason().empty()) static_cast<void>(cudaGetLastError());
  }
};

}  // namespace scanlab::test::launch_errors
