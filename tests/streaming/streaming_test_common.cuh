// Test bodies for the streaming (out-of-core) algorithms, scanlab/streaming.cuh, shared by
// one translation unit per element type (SCANLAB_STREAMING_TESTS).
//
// Every streaming result is checked against a CPU reference (integers and min/max exactly,
// float sums within n * eps * sum|x|) and against the in-memory primitive on the same data
// in device memory. Shapes: n = 0, 1, chunk - 1, chunk, chunk + 1, many chunks of awkward
// sizes (up to 1000003), one chunk, tiny budgets (a few KiB: hundreds of chunks), host
// arrays pinned and pageable, scans in place on the host, compaction in place. The chunk
// size is set with options.max_chunk_bytes and a generous budget; tiny budgets set it
// themselves. Outputs are poisoned first, and compaction's bytes past the kept items must
// stay poisoned.
#pragma once

#include "common/gpu_test.hpp"
#include "common/test_util.hpp"

#include <scanlab/algorithms/select.cuh>
#include <scanlab/error.hpp>
#include <scanlab/reduce.cuh>
#include <scanlab/scan.cuh>
#include <scanlab/streaming.cuh>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace scanlab::test::streaming {

namespace ss = scanlab::streaming;

// Host memory, pinned (cudaMallocHost) or pageable (operator new), with a pointer for either.
template <class T>
class host_array {
 public:
  host_array(std::int64_t n, bool pinned) : n_(n), pinned_(pinned) {
    const std::size_t bytes = static_cast<std::size_t>(n > 0 ? n : 1) * sizeof(T);
    if (pinned) {
      void* p = nullptr;
      SCANLAB_CHECK(cudaMallocHost(&p, bytes));
      data_ = static_cast<T*>(p);
    } else {
      pageable_.resize(static_cast<std::size_t>(n > 0 ? n : 1));
      data_ = pageable_.data();
    }
  }
  ~host_array() {
    if (pinned_) (void)cudaFreeHost(data_);
  }
  host_array(const host_array&) = delete;
  host_array& operator=(const host_array&) = delete;

  [[nodiscard]] T* data() { return data_; }
  [[nodiscard]] const T* data() const { return data_; }
  [[nodiscard]] T& operator[](std::int64_t i) { return data_[i]; }
  void assign(const std::vector<T>& values) { std::memcpy(data_, values.data(), values.size() * sizeof(T)); }
  void poison() { std::memset(static_cast<void*>(data_), 0x5a, static_cast<std::size_t>(n_ > 0 ? n_ : 1) * sizeof(T)); }
  [[nodiscard]] std::vector<T> to_vector(std::int64_t count) const { return {data_, data_ + count}; }

 private:
  std::int64_t n_;
  bool pinned_;
  T* data_ = nullptr;
  std::vector<T> pageable_;
};

// The same data in device memory, for the in-memory primitives.
template <class T>
class device_array {
 public:
  explicit device_array(const std::vector<T>& values) : n_(static_cast<std::int64_t>(values.size())) {
    SCANLAB_CHECK(cudaMalloc(&data_, bytes()));
    if (!values.empty()) SCANLAB_CHECK(cudaMemcpy(data_, values.data(), values.size() * sizeof(T), cudaMemcpyDefault));
  }
  explicit device_array(std::int64_t n) : n_(n) { SCANLAB_CHECK(cudaMalloc(&data_, bytes())); }
  ~device_array() { (void)cudaFree(data_); }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
  [[nodiscard]] T* data() const { return data_; }
  [[nodiscard]] std::vector<T> to_vector(std::int64_t count) const {
    std::vector<T> out(static_cast<std::size_t>(count));
    if (count > 0) SCANLAB_CHECK(cudaMemcpy(out.data(), data_, out.size() * sizeof(T), cudaMemcpyDefault));
    return out;
  }

 private:
  [[nodiscard]] std::size_t bytes() const { return static_cast<std::size_t>(n_ > 0 ? n_ : 1) * sizeof(T); }
  std::int64_t n_;
  T* data_ = nullptr;
};

// Runs an in-memory primitive with its temp storage: call(d_temp, temp_bytes) twice.
template <class Call>
void with_temp(Call call) {
  std::size_t bytes = 0;
  SCANLAB_CHECK(call(nullptr, bytes));
  void* d_temp = nullptr;
  SCANLAB_CHECK(cudaMalloc(&d_temp, bytes));
  const cudaError_t status = call(d_temp, bytes);
  const cudaError_t synced = cudaDeviceSynchronize();
  (void)cudaFree(d_temp);
  SCANLAB_CHECK(status);
  SCANLAB_CHECK(synced);
}

template <class T>
inline constexpr bool is_float_v = std::is_floating_point_v<T>;

// Keeps items above a threshold near the middle of random_values' range (about half).
struct above_threshold {
  double threshold;
  template <class T>
  __host__ __device__ bool operator()(const T& x) const { return static_cast<double>(x) > threshold; }
};

template <class T>
above_threshold half_kept() {
  return {is_float_v<T> ? 0.0 : (std::is_signed_v<T> ? 0.0 : 50.0)};
}

// A shape of one streaming call: the items, the workspace's budget and options.
struct shape {
  std::int64_t n;
  std::size_t budget;
  ss::options opts;
  std::string name;
};

template <class S>
std::vector<S> capped_shapes(std::vector<S> in) {
  std::vector<S> out;
  for (auto& s : in) {
    if (s.n <= max_test_n()) out.push_back(std::move(s));
  }
  return out;
}

// The chunk every shape with a chunk cap uses, and the shapes around it.
inline constexpr std::int64_t test_chunk = 1000;

template <class T>
std::vector<shape> shapes() {
  const std::size_t big = std::size_t{64} << 20;
  ss::options capped;
  capped.max_chunk_bytes = test_chunk * sizeof(T);
  ss::options two_slots = capped;
  two_slots.slots = 2;
  std::vector<shape> out;
  for (const std::int64_t n : {std::int64_t{0}, std::int64_t{1}, test_chunk - 1, test_chunk, test_chunk + 1,
                               5 * test_chunk + 3, std::int64_t{1000003}}) {
    out.push_back({n, big, capped, "chunk cap " + std::to_string(test_chunk) + ", n " + std::to_string(n)});
  }
  out.push_back({77777, big, two_slots, "two slots, n 77777"});
  out.push_back({300007, big, ss::options{}, "one chunk (default options), n 300007"});
  out.push_back({100003, 8192, ss::options{}, "8 KiB budget, n 100003"});
  out.push_back({1, 8192, ss::options{}, "8 KiB budget, n 1"});
  out.push_back({250001, 24 * 1024, ss::options{}, "24 KiB budget, n 250001"});
  return capped_shapes(out);
}

// Random data that is never all zeros: random_values, with NaN-free floats.
template <class T>
std::vector<T> data_for(std::int64_t n, std::uint64_t seed) {
  return random_values<T>(n, seed);
}

// The chunks a call should have used: one per chunk cap (or per budget, then at least one
// per 4 KiB of items for these budgets: a loose check that a tiny budget really streams).
template <class T>
void expect_chunking(const ss::workspace& ws, const shape& s) {
  if (s.n == 0) {
    EXPECT_EQ(ws.last_num_chunks(), 0);
    return;
  }
  const std::int64_t chunk = ws.last_chunk_items();
  ASSERT_GE(chunk, 1);
  EXPECT_EQ(ws.last_num_chunks(), (s.n + chunk - 1) / chunk);
  EXPECT_LE(ws.device_bytes_held(), s.budget);
  if (s.opts.max_chunk_bytes == test_chunk * sizeof(T)) EXPECT_EQ(chunk, std::min(s.n, test_chunk));
  if (s.budget <= 24 * 1024) EXPECT_LE(chunk * static_cast<std::int64_t>(sizeof(T)), static_cast<std::int64_t>(s.budget));
}

// One call's host arrays and workspace: the input (x), a poisoned output, where the call
// writes (the input itself in place), and a workspace for the shape.
template <class T>
struct host_case {
  host_array<T> in;
  host_array<T> out_buffer;
  T* out;
  ss::workspace ws;
  host_case(const shape& s, const std::vector<T>& x, bool pinned, bool in_place)
      : in(s.n, pinned), out_buffer(s.n, pinned), out(nullptr), ws(s.budget, s.opts) {
    in.assign(x);
    out_buffer.poison();
    out = in_place ? in.data() : out_buffer.data();
  }
};

inline std::string case_name(const shape& s, bool pinned, bool in_place) {
  return s.name + (pinned ? ", pinned" : ", pageable") + (in_place ? ", in place" : ", out of place");
}

// ---- reduce -------------------------------------------------------------------------------

template <class T, class Op>
T cpu_reduce(const std::vector<T>& x, T init, Op op) {
  T acc = init;
  for (const T& v : x) acc = op(acc, v);
  return acc;
}

template <class T>
void expect_same_value(T got, T want, const std::string& what) {
  if constexpr (is_float_v<T>) {
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << what << ": " << got;
      return;
    }
  }
  EXPECT_EQ(got, want) << what;
}

template <class T>
void reduce_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  for (const bool pinned : {true, false}) {
    for (const shape& s : shapes<T>()) {
      SCOPED_TRACE(s.name + (pinned ? ", pinned" : ", pageable"));
      const std::vector<T> x = data_for<T>(s.n, seed + static_cast<std::uint64_t>(s.n));
      host_array<T> h(s.n, pinned);
      h.assign(x);
      ss::workspace ws(s.budget, s.opts);
      T sum{};
      T lo{};
      T hi{};
      ASSERT_EQ(ss::reduce_sum(ws, h.data(), s.n, sum), cudaSuccess);
      expect_chunking<T>(ws, s);
      ASSERT_EQ(ss::reduce_min(ws, h.data(), s.n, lo), cudaSuccess);
      ASSERT_EQ(ss::reduce_max(ws, h.data(), s.n, hi), cudaSuccess);
      // An init that is not the identity enters once.
      T shifted{};
      ASSERT_EQ(ss::reduce(ws, h.data(), s.n, shifted, T(7), scanlab::plus{}), cudaSuccess);

      expect_same_value(lo, cpu_reduce(x, identity<minimum, T>::value(), minimum{}), "min");
      expect_same_value(hi, cpu_reduce(x, identity<maximum, T>::value(), maximum{}), "max");
      if constexpr (is_float_v<T>) {
        double want = 0;
        double abs_sum = 0;
        for (const T& v : x) {
          want += static_cast<double>(v);
          abs_sum += std::fabs(static_cast<double>(v));
        }
        const double tol = sum_tolerance<T>(s.n, abs_sum);
        EXPECT_NEAR(static_cast<double>(sum), want, tol) << "sum";
        EXPECT_NEAR(static_cast<double>(shifted), want + 7.0, tol + 7.0 * std::numeric_limits<T>::epsilon()) << "init 7";
      } else {
        EXPECT_EQ(sum, cpu_reduce(x, T(0), scanlab::plus{})) << "sum";
        EXPECT_EQ(shifted, cpu_reduce(x, T(7), scanlab::plus{})) << "init 7";
      }

      // The in-memory reduce on the same data (sums: bits may differ for floats).
      device_array<T> d_x(x);
      device_array<T> d_out(3);
      with_temp([&](void* t, std::size_t& b) { return scanlab::reduce_min(t, b, d_x.data(), d_out.data(), s.n); });
      with_temp([&](void* t, std::size_t& b) { return scanlab::reduce_max(t, b, d_x.data(), d_out.data() + 1, s.n); });
      with_temp([&](void* t, std::size_t& b) { return scanlab::reduce_sum(t, b, d_x.data(), d_out.data() + 2, s.n); });
      const std::vector<T> in_memory = d_out.to_vector(3);
      expect_same_value(lo, in_memory[0], "min against the in-memory reduce");
      expect_same_value(hi, in_memory[1], "max against the in-memory reduce");
      if constexpr (!is_float_v<T>) EXPECT_EQ(sum, in_memory[2]) << "sum against the in-memory reduce";
    }
  }
}

// NaN anywhere (first item of a chunk, inside a chunk, last item) gives NaN from min and max;
// signed zeros follow the operators' rule.
template <class T>
void reduce_nan_test() {
  if constexpr (is_float_v<T>) {
    const std::uint64_t seed = test_seed();
    SCOPED_TRACE(seed_trace(seed));
    const std::int64_t n = 10 * test_chunk + 17;
    ss::options opts;
    opts.max_chunk_bytes = test_chunk * sizeof(T);
    ss::workspace ws(std::size_t{16} << 20, opts);
    for (const std::int64_t at : {std::int64_t{0}, test_chunk, 3 * test_chunk + 5, n - 1}) {
      SCOPED_TRACE("NaN at " + std::to_string(at));
      std::vector<T> x = data_for<T>(n, seed + static_cast<std::uint64_t>(at));
      x[static_cast<std::size_t>(at)] = std::numeric_limits<T>::quiet_NaN();
      host_array<T> h(n, true);
      h.assign(x);
      T lo{};
      T hi{};
      T sum{};
      ASSERT_EQ(ss::reduce_min(ws, h.data(), n, lo), cudaSuccess);
      ASSERT_EQ(ss::reduce_max(ws, h.data(), n, hi), cudaSuccess);
      ASSERT_EQ(ss::reduce_sum(ws, h.data(), n, sum), cudaSuccess);
      EXPECT_TRUE(std::isnan(lo));
      EXPECT_TRUE(std::isnan(hi));
      EXPECT_TRUE(std::isnan(sum));
    }
    // -0.0 below +0.0: min of {+0, -0} is -0, max is +0, also where -0.0 is the first item of
    // a chunk (which enters that chunk's reduce as its init, read on the host).
    std::vector<T> zeros(static_cast<std::size_t>(3 * test_chunk), T(0));
    zeros[test_chunk] = -T(0);
    host_array<T> hz(static_cast<std::int64_t>(zeros.size()), false);
    hz.assign(zeros);
    T lo{};
    T hi{};
    ASSERT_EQ(ss::reduce_min(ws, hz.data(), static_cast<std::int64_t>(zeros.size()), lo), cudaSuccess);
    ASSERT_EQ(ss::reduce_max(ws, hz.data(), static_cast<std::int64_t>(zeros.size()), hi), cudaSuccess);
    EXPECT_TRUE(std::signbit(lo));
    EXPECT_FALSE(std::signbit(hi));
  }
}

// Sum of squares accumulated in double against a double reference.
template <class T>
void sum_squares_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t n = 123457;
  const std::vector<T> x = data_for<T>(n, seed);
  host_array<T> h(n, false);
  h.assign(x);
  double got = 0;
  ASSERT_EQ(ss::sum_squares(std::size_t{16} * 1024, h.data(), n, got), cudaSuccess);
  double want = 0;
  for (const T& v : x) want += static_cast<double>(v) * static_cast<double>(v);
  EXPECT_NEAR(got, want, sum_tolerance<double>(n, want));
}

// ---- scans --------------------------------------------------------------------------------

enum class kind { inclusive, inclusive_init, exclusive };

inline const char* kind_name(kind k) {
  return k == kind::inclusive ? "inclusive" : (k == kind::inclusive_init ? "inclusive_init" : "exclusive");
}

// Checks a scan result against the CPU (exact for integers; floats within the sum bound of
// each prefix) and, where given, against the in-memory scan.
template <class T>
void check_scan(const std::vector<T>& x, const std::vector<T>& got, kind k, T init, const std::string& what) {
  const std::int64_t n = static_cast<std::int64_t>(x.size());
  const bool seeded = k != kind::inclusive;
  if constexpr (is_float_v<T>) {
    double acc = seeded ? static_cast<double>(init) : 0.0;
    double abs_acc = seeded ? std::fabs(static_cast<double>(init)) : 0.0;
    int reported = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      double want = acc;
      double bound = sum_tolerance<T>(i + 1, abs_acc);
      const double v = static_cast<double>(x[static_cast<std::size_t>(i)]);
      acc += v;
      abs_acc += std::fabs(v);
      if (k != kind::exclusive) {
        want = acc;
        bound = sum_tolerance<T>(i + 2, abs_acc);
      }
      const double g = static_cast<double>(got[static_cast<std::size_t>(i)]);
      if (!(std::fabs(g - want) <= bound) && reported++ < 5) {
        ADD_FAILURE() << what << ": item " << i << " is " << g << ", expected " << want << " +- " << bound;
      }
    }
  } else {
    T acc = seeded ? init : T(0);
    std::int64_t mismatches = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const T before = acc;
      acc = static_cast<T>(acc + x[static_cast<std::size_t>(i)]);
      const T want = k == kind::exclusive ? before : acc;
      if (got[static_cast<std::size_t>(i)] != want && mismatches++ < 5) {
        ADD_FAILURE() << what << ": item " << i << " is " << +got[static_cast<std::size_t>(i)] << ", expected "
                      << +want;
      }
    }
  }
}

template <class T>
cudaError_t run_scan(ss::workspace& ws, kind k, const T* in, T* out, std::int64_t n, T init) {
  switch (k) {
    case kind::inclusive: return ss::inclusive_scan(ws, in, out, n, scanlab::plus{});
    case kind::inclusive_init: return ss::inclusive_scan_init(ws, in, out, n, init, scanlab::plus{});
    default: return ss::exclusive_scan(ws, in, out, n, init, scanlab::plus{});
  }
}

template <class T>
void scan_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const T init = T(3);
  for (const kind k : {kind::inclusive, kind::inclusive_init, kind::exclusive}) {
    for (const bool pinned : {true, false}) {
      for (const bool in_place : {false, true}) {
        for (const shape& s : shapes<T>()) {
          SCOPED_TRACE(std::string(kind_name(k)) + ", " + case_name(s, pinned, in_place));
          const std::vector<T> x = data_for<T>(s.n, seed + static_cast<std::uint64_t>(s.n) * 3);
          host_case<T> h(s, x, pinned, in_place);
          ASSERT_EQ(run_scan(h.ws, k, h.in.data(), h.out, s.n, init), cudaSuccess);
          expect_chunking<T>(h.ws, s);
          const std::vector<T> got(h.out, h.out + s.n);
          if (!in_place) EXPECT_TRUE(std::memcmp(h.in.data(), x.data(), x.size() * sizeof(T)) == 0) << "input changed";
          check_scan(x, got, k, init, "streaming against the CPU");

          // The in-memory scan of the same data: integers equal, floats within the bound.
          if (s.n == 0 || in_place) continue;
          device_array<T> d_x(x);
          device_array<T> d_y(s.n);
          with_temp([&](void* t, std::size_t& b) {
            switch (k) {
              case kind::inclusive:
                return scanlab::inclusive_scan(t, b, d_x.data(), d_y.data(), s.n, scanlab::plus{});
              case kind::inclusive_init:
                return scanlab::inclusive_scan_init(t, b, d_x.data(), d_y.data(), s.n, init, scanlab::plus{});
              default: return scanlab::exclusive_scan(t, b, d_x.data(), d_y.data(), s.n, init, scanlab::plus{});
            }
          });
          const std::vector<T> in_memory = d_y.to_vector(s.n);
          if constexpr (is_float_v<T>) {
            check_scan(x, in_memory, k, init, "in-memory against the CPU (sanity)");
          } else {
            EXPECT_EQ(got, in_memory) << "against the in-memory scan";
          }
        }
      }
    }
  }
}

// A non-commutative operator: the carry must enter on the left (op(earlier, later)).
// Affine maps x -> a x + b composed left to right, in integers mod 2^32 (exact).
struct affine {
  std::uint32_t a;
  std::uint32_t b;
  friend bool operator==(const affine&, const affine&) = default;
};
struct compose {
  __host__ __device__ affine operator()(const affine& f, const affine& g) const {
    return {g.a * f.a, g.a * f.b + g.b};
  }
};

inline void noncommutative_scan_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t n = 54321;
  std::vector<affine> x(static_cast<std::size_t>(n));
  std::mt19937_64 rng(seed);
  for (auto& f : x) f = {static_cast<std::uint32_t>(rng()) | 1u, static_cast<std::uint32_t>(rng())};
  ss::options opts;
  opts.max_chunk_bytes = 777 * sizeof(affine);
  ss::workspace ws(std::size_t{8} << 20, opts);
  host_array<affine> h(n, true);
  h.assign(x);
  host_array<affine> out(n, false);
  const affine init{5u, 11u};
  ASSERT_EQ(ss::exclusive_scan(ws, h.data(), out.data(), n, init, compose{}), cudaSuccess);
  ASSERT_GT(ws.last_num_chunks(), 50);
  affine acc = init;
  std::int64_t bad = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    if (!(out[i] == acc) && bad++ < 5) ADD_FAILURE() << "exclusive item " << i;
    acc = compose{}(acc, x[static_cast<std::size_t>(i)]);
  }
  ASSERT_EQ(ss::inclusive_scan(ws, h.data(), h.data(), n, compose{}), cudaSuccess);
  acc = x[0];
  for (std::int64_t i = 0; i < n; ++i) {
    if (i > 0) acc = compose{}(acc, x[static_cast<std::size_t>(i)]);
    if (!(h[i] == acc) && bad++ < 5) ADD_FAILURE() << "inclusive in place item " << i;
  }
}

// ---- compaction ---------------------------------------------------------------------------

template <class T>
void select_test() {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(seed_trace(seed));
  const above_threshold pred = half_kept<T>();
  for (const bool pinned : {true, false}) {
    for (const bool in_place : {false, true}) {
      for (const shape& s : shapes<T>()) {
        SCOPED_TRACE(case_name(s, pinned, in_place));
        const std::vector<T> x = data_for<T>(s.n, seed + static_cast<std::uint64_t>(s.n) * 7);
        std::vector<T> want;
        for (const T& v : x) {
          if (pred(v)) want.push_back(v);
        }
        host_case<T> h(s, x, pinned, in_place);
        T* out = h.out;
        std::int64_t kept = -1;
        ASSERT_EQ(ss::select_if(h.ws, h.in.data(), out, s.n, kept, pred), cudaSuccess);
        expect_chunking<T>(h.ws, s);
        ASSERT_EQ(kept, static_cast<std::int64_t>(want.size()));
        EXPECT_TRUE(std::vector<T>(out, out + kept) == want) << "kept items differ from the CPU's";
        if (in_place) {
          // Past the kept items, the input is untouched.
          EXPECT_TRUE(std::memcmp(out + kept, x.data() + kept, static_cast<std::size_t>(s.n - kept) * sizeof(T)) == 0);
        } else {
          host_array<T> poisoned(1, false);
          poisoned.poison();
          for (std::int64_t i = kept; i < s.n; ++i) {
            if (std::memcmp(&h.out_buffer[i], poisoned.data(), sizeof(T)) != 0) {
              ADD_FAILURE() << "item " << i << " past the kept ones was written";
              break;
            }
          }
        }

        // The in-memory compaction.
        if (s.n == 0) continue;
        device_array<T> d_x(x);
        device_array<T> d_y(s.n);
        device_array<std::int64_t> d_count(1);
        with_temp([&](void* t, std::size_t& b) {
          return scanlab::select_if(t, b, static_cast<const T*>(d_x.data()), d_y.data(), d_count.data(), s.n, pred);
        });
        EXPECT_EQ(d_count.to_vector(1)[0], kept);
        EXPECT_TRUE(d_y.to_vector(kept) == want) << "the in-memory select_if differs from the CPU";
      }
    }
  }
}

// ---- the API's contract -------------------------------------------------------------------

template <class T>
void contract_test() {
  std::vector<T> x = data_for<T>(1000, test_seed());
  std::vector<T> y(x.size());
  const std::int64_t n = static_cast<std::int64_t>(x.size());
  T value{};
  std::int64_t kept = 0;

  // A budget that cannot hold one item per chunk; n < 0; slots out of range.
  EXPECT_EQ(ss::reduce_sum(std::size_t{512}, x.data(), n, value), cudaErrorInvalidValue);
  EXPECT_EQ(ss::inclusive_sum(std::size_t{512}, x.data(), y.data(), n), cudaErrorInvalidValue);
  EXPECT_EQ(ss::select_if(std::size_t{512}, x.data(), y.data(), n, kept, half_kept<T>()), cudaErrorInvalidValue);
  EXPECT_EQ(ss::reduce_sum(std::size_t{512}, x.data(), 0, value), cudaErrorInvalidValue) << "n = 0 checks the budget";
  EXPECT_EQ(ss::reduce_sum(std::size_t{1} << 20, x.data(), -1, value), cudaErrorInvalidValue);
  EXPECT_EQ(ss::exclusive_sum(std::size_t{1} << 20, x.data(), y.data(), -1), cudaErrorInvalidValue);
  for (const int slots : {0, 1, 9}) {
    ss::options opts;
    opts.slots = slots;
    ss::workspace ws(std::size_t{1} << 20, opts);
    EXPECT_EQ(ss::reduce_sum(ws, x.data(), n, value), cudaErrorInvalidValue) << slots << " slots";
  }
  // Null arrays with n > 0; device memory is not a host array.
  EXPECT_EQ(ss::inclusive_sum(std::size_t{1} << 20, x.data(), static_cast<T*>(nullptr), n), cudaErrorInvalidValue);
  EXPECT_EQ(ss::reduce_sum(std::size_t{1} << 20, static_cast<const T*>(nullptr), n, value), cudaErrorInvalidValue);
  device_array<T> d_x(x);
  EXPECT_EQ(ss::reduce_sum(std::size_t{1} << 20, static_cast<const T*>(d_x.data()), n, value), cudaErrorInvalidValue);

  // n = 0: success, reduce gives init, nothing else touched.
  value = T(1);
  ASSERT_EQ(ss::reduce(std::size_t{1} << 20, static_cast<const T*>(nullptr), 0, value, T(9), scanlab::plus{}),
            cudaSuccess);
  EXPECT_EQ(value, T(9));
  kept = 5;
  ASSERT_EQ(ss::select_if(std::size_t{1} << 20, static_cast<const T*>(nullptr), static_cast<T*>(nullptr), 0, kept,
                          half_kept<T>()),
            cudaSuccess);
  EXPECT_EQ(kept, 0);

  // One workspace through many calls of different sizes (it grows, stays within its budget).
  ss::workspace ws(std::size_t{256} * 1024);
  for (const std::int64_t m : {std::int64_t{10}, std::int64_t{1000}, std::int64_t{1}, std::int64_t{999}}) {
    T sum{};
    ASSERT_EQ(ss::reduce_sum(ws, x.data(), m, sum), cudaSuccess);
    ASSERT_EQ(ss::inclusive_sum(ws, x.data(), y.data(), m), cudaSuccess);
    EXPECT_LE(ws.device_bytes_held(), ws.device_bytes());
  }
}

}  // namespace scanlab::test::streaming

// The suite for one element type.
#define SCANLAB_STREAMING_TESTS(Fixture, T)                                                  \
  class Fixture : public ::scanlab::test::gpu_test {};                                       \
  TEST_F(Fixture, Reduce) { ::scanlab::test::streaming::reduce_test<T>(); }                  \
  TEST_F(Fixture, ReduceNaN) { ::scanlab::test::streaming::reduce_nan_test<T>(); }           \
  TEST_F(Fixture, SumSquares) { ::scanlab::test::streaming::sum_squares_test<T>(); }         \
  TEST_F(Fixture, Scan) { ::scanlab::test::streaming::scan_test<T>(); }                      \
  TEST_F(Fixture, Select) { ::scanlab::test::streaming::select_test<T>(); }                  \
  TEST_F(Fixture, Contract) { ::scanlab::test::streaming::contract_test<T>(); }
