// minimum and maximum with NaNs and signed zeros: the semantics of NumPy's and PyTorch's
// min / max (any NaN gives NaN, wherever it sits), made deterministic (of several NaNs,
// the one with the largest bits; -0.0 orders before +0.0), on every path that combines
// them: the operators themselves (CPU), the production reduction (one-tile kernel,
// single-block kernel, cooperative grid), every ladder rung, the segmented reduction,
// and the inclusive / exclusive scans in each of their modes.
//
// The references below spell the rules out directly (a loop over the input), not through
// scanlab::minimum / maximum, so that a wrong operator cannot agree with itself.
#include "reduce/reduce_test_common.cuh"

#include <scanlab/scan.cuh>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace scanlab::test::reduce {
namespace {

template <class T>
using bits_t = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;

template <class T>
bits_t<T> bits(T x) {
  return std::bit_cast<bits_t<T>>(x);
}

// Two NaNs with different payloads (quiet, one negative), so that "which NaN" is visible.
template <class T>
T nan_a() {
  return std::numeric_limits<T>::quiet_NaN();
}
template <class T>
T nan_b() {
  return std::bit_cast<T>(static_cast<bits_t<T>>(bits(std::numeric_limits<T>::quiet_NaN()) | 0x5 |
                                                 (bits_t<T>{1} << (sizeof(T) * 8 - 1))));
}

enum class which { min, max };

// The answer by the rules, from scratch: NaN present -> the NaN with the largest bits;
// otherwise the least (greatest) value, -0.0 below +0.0.
template <class T>
struct rule_fold {
  which w;
  bool any_nan = false;
  bits_t<T> nan_bits = 0;
  bool any = false;
  T best{};

  void add(T x) {
    if (std::isnan(x)) {
      if (!any_nan || bits(x) > nan_bits) nan_bits = bits(x);
      any_nan = true;
      return;
    }
    if (!any) {
      best = x;
      any = true;
      return;
    }
    const bool smaller = x < best || (x == best && std::signbit(x) && !std::signbit(best));
    const bool larger = best < x || (x == best && !std::signbit(x) && std::signbit(best));
    if (w == which::min ? smaller : larger) best = x;
  }
  [[nodiscard]] T value() const { return any_nan ? std::bit_cast<T>(nan_bits) : best; }
};

template <class T>
T identity_of(which w) {
  return w == which::min ? std::numeric_limits<T>::infinity() : -std::numeric_limits<T>::infinity();
}

template <class T>
T reference(std::span<const T> x, which w) {
  rule_fold<T> f{w};
  f.add(identity_of<T>(w));
  for (T v : x) f.add(v);
  return f.value();
}

template <class T>
void expect_same(T got, T want, const std::string& what) {
  EXPECT_EQ(bits(got), bits(want)) << what << ": got " << got << " (0x" << std::hex << bits(got) << "), want "
                                   << want << " (0x" << bits(want) << std::dec << ")";
}

// Random values in [-100, 100) with some zeros of both signs; NaNs added by each case.
template <class T>
std::vector<T> base_data(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-100.0, 100.0);
  std::vector<T> x(static_cast<std::size_t>(n));
  for (auto& v : x) v = static_cast<T>(u(rng));
  for (std::int64_t i = 0; i < n; i += 97) x[static_cast<std::size_t>(i)] = (i / 97) % 2 ? T(-0.0) : T(0.0);
  return x;
}

// Where NaNs go for a size: a list of placements, each a set of positions.
struct placement {
  std::string name;
  std::vector<std::int64_t> positions;  // empty: no NaN; {-1}: every element
};

// Items per tile of the production scan on this GPU (its policy is chosen per architecture).
template <class T>
std::int64_t scan_tile() {
  std::int64_t items = 0;
  SCANLAB_CHECK(detail::device_tile_items<device::default_scan_policy<T>>(items));
  return items;
}

template <class T>
std::vector<placement> placements(std::int64_t n) {
  std::vector<placement> out = {{"no NaN", {}}, {"first", {0}}, {"last", {n - 1}}, {"middle", {n / 2}}};
  out.push_back({"all", {-1}});
  // Tile and block boundaries of the production path (both sides of each).
  for (const std::int64_t b : {production_grid_tile<T>(), production_tile<T>(),
                               scanlab::detail::tile_kernel_items<scanlab::detail::reduce_policy_sm90::tile, const T*>(),
                               scan_tile<T>()}) {
    if (b < n) out.push_back({"boundary " + std::to_string(b), {b - 1, b}});
  }
  out.push_back({"two payloads", {n / 3, n - 1 - n / 5}});
  return out;
}

template <class T>
std::vector<T> with_nans(std::vector<T> x, const placement& p) {
  const std::int64_t n = static_cast<std::int64_t>(x.size());
  if (p.positions.size() == 1 && p.positions[0] == -1) {
    for (std::int64_t i = 0; i < n; ++i) x[static_cast<std::size_t>(i)] = i % 2 ? nan_a<T>() : nan_b<T>();
    return x;
  }
  for (std::size_t k = 0; k < p.positions.size(); ++k) {
    const std::int64_t i = p.positions[k];
    if (i >= 0 && i < n) x[static_cast<std::size_t>(i)] = k % 2 ? nan_b<T>() : nan_a<T>();
  }
  return x;
}

template <class T>
std::vector<std::int64_t> nan_sizes() {
  const std::int64_t one_tile = scanlab::detail::tile_kernel_items<scanlab::detail::reduce_policy_sm90::tile, const T*>();
  return capped({1, 2, 5, 1000, one_tile, one_tile + 1, production_tile<T>(), production_tile<T>() + 1,
                 (std::int64_t{1} << 20) + 5, (std::int64_t{1} << 24) + 1});
}

// ---- the operators, on the CPU ----

template <class T>
class minmax_operators : public ::testing::Test {};
using float_types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(minmax_operators, float_types);

// Commutative and associative on every combination of NaNs (two payloads), signed zeros,
// infinities and ordinary values, with results as the rules say.
TYPED_TEST(minmax_operators, CommutativeAssociativeOnSpecialValues) {
  using T = TypeParam;
  const T inf = std::numeric_limits<T>::infinity();
  const std::vector<T> values = {nan_a<T>(), nan_b<T>(), T(0.0), T(-0.0), inf, -inf, T(1.5), T(-2.25)};
  for (which w : {which::min, which::max}) {
    const auto op = [w](T a, T b) { return w == which::min ? scanlab::minimum{}(a, b) : scanlab::maximum{}(a, b); };
    const std::string name = w == which::min ? "minimum" : "maximum";
    for (T a : values) {
      for (T b : values) {
        const std::vector<T> ab = {a, b};
        expect_same(op(a, b), reference<T>(ab, w), name + " rule");
        expect_same(op(a, b), op(b, a), name + " commutative");
        for (T c : values) expect_same(op(op(a, b), c), op(a, op(b, c)), name + " associative");
      }
    }
  }
}

TEST(minmax_operators_examples, IssueExamples) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  // reduce_min({NaN, -5, 3, 4}) as a fold from the identity +inf: NaN (it used to be +inf).
  float m = inf;
  for (float v : {nan, -5.0f, 3.0f, 4.0f}) m = scanlab::minimum{}(m, v);
  EXPECT_TRUE(std::isnan(m));
  float M = -inf;
  for (float v : {nan, 5.0f, 3.0f, 4.0f}) M = scanlab::maximum{}(M, v);
  EXPECT_TRUE(std::isnan(M));
  EXPECT_TRUE(std::signbit(scanlab::minimum{}(0.0f, -0.0f)));
  EXPECT_TRUE(std::signbit(scanlab::minimum{}(-0.0f, 0.0f)));
  EXPECT_FALSE(std::signbit(scanlab::maximum{}(0.0f, -0.0f)));
  EXPECT_FALSE(std::signbit(scanlab::maximum{}(-0.0f, 0.0f)));
  EXPECT_EQ(scanlab::minimum{}(3, -7), -7);  // integers as before
  EXPECT_EQ(scanlab::maximum{}(3, -7), 3);
}

// ---- on the GPU ----

template <class T>
class minmax_nan : public gpu_test {};
TYPED_TEST_SUITE(minmax_nan, float_types);

// The production reduction (every kernel by size) and every ladder rung.
TYPED_TEST(minmax_nan, Reduce) {
  using T = TypeParam;
  const auto seed = test_seed() + 31;
  SCOPED_TRACE(seed_trace(seed));
  for (const std::int64_t n : nan_sizes<T>()) {
    const auto base = base_data<T>(n, seed + static_cast<std::uint64_t>(n));
    for (const placement& p : placements<T>(n)) {
      const auto host = with_nans(base, p);
      device_buffer<T> d_in{std::span<const T>(host)};
      for (which w : {which::min, which::max}) {
        const std::string what = at(n) + ", NaN " + p.name + (w == which::min ? ", min" : ", max");
        const T want = reference<T>(host, w);
        const T got = w == which::min ? run_reduce(d_in.data(), n, identity_of<T>(w), scanlab::minimum{})
                                      : run_reduce(d_in.data(), n, identity_of<T>(w), scanlab::maximum{});
        expect_same(got, want, what);
        if (n > (std::int64_t{1} << 21)) continue;  // the ladder's slow rungs: up to 2^21
        for (auto r : scanlab::ladder::all_rungs) {
          T result{};
          const cudaError_t status =
              w == which::min ? run_ladder(r, d_in.data(), n, identity_of<T>(w), scanlab::minimum{}, 128, result)
                              : run_ladder(r, d_in.data(), n, identity_of<T>(w), scanlab::maximum{}, 128, result);
          const std::string rwhat = what + ", rung " + std::string(scanlab::ladder::rung_name(r));
          if (r == scanlab::ladder::rung::warp_shuffle_atomic) {
            EXPECT_EQ(status, cudaErrorNotSupported) << rwhat;  // no native float min/max atomic
            continue;
          }
          ASSERT_EQ(status, cudaSuccess) << rwhat << ": " << cudaGetErrorString(status);
          // The ladder's tree shapes differ; NaN-ness and the value must still follow the
          // rules, and with the deterministic NaN choice the bits too.
          expect_same(result, want, rwhat);
        }
      }
    }
  }
}

// The same 2^24 input from the issue: NaN at index 0 and -7 at 12345.
TYPED_TEST(minmax_nan, ReduceNanFirstOfLargeInput) {
  using T = TypeParam;
  const std::int64_t n = std::min<std::int64_t>(std::int64_t{1} << 24, std::max<std::int64_t>(max_test_n(), 12346));
  auto host = base_data<T>(n, test_seed() + 5);
  host[0] = nan_a<T>();
  host[12345] = T(-7);
  device_buffer<T> d_in{std::span<const T>(host)};
  EXPECT_TRUE(std::isnan(run_reduce(d_in.data(), n, identity_of<T>(which::min), scanlab::minimum{})));
  EXPECT_TRUE(std::isnan(run_reduce(d_in.data(), n, identity_of<T>(which::max), scanlab::maximum{})));
  expect_same(run_reduce(d_in.data() + 1, n - 1, identity_of<T>(which::min), scanlab::minimum{}),
              reference<T>(std::span<const T>(host.data() + 1, static_cast<std::size_t>(n - 1)), which::min),
              "without the NaN");
}

// The two-launch path a refused cooperative grid falls back to (detail/launch.cuh's hook
// makes the runtime refuse it; the name keeps this out of sanitizer runs, which count the
// refused call as an API error).
TYPED_TEST(minmax_nan, ReduceCooperativeRefusedDeliberateApiError) {
  using T = TypeParam;
  const std::int64_t n = (std::int64_t{1} << 20) + 5;
  const auto base = base_data<T>(n, test_seed() + 34);
  struct refusal {
    refusal() { scanlab::detail::cooperative_refusal_for_testing = true; }
    ~refusal() { scanlab::detail::cooperative_refusal_for_testing = false; }
  } forced;
  for (const placement& p : placements<T>(n)) {
    const auto host = with_nans(base, p);
    device_buffer<T> d_in{std::span<const T>(host)};
    expect_same(run_reduce(d_in.data(), n, identity_of<T>(which::min), scanlab::minimum{}),
                reference<T>(host, which::min), "refused, min, NaN " + p.name);
    expect_same(run_reduce(d_in.data(), n, identity_of<T>(which::max), scanlab::maximum{}),
                reference<T>(host, which::max), "refused, max, NaN " + p.name);
  }
}

// One block per segment: segments holding NaNs at their ends, in the middle, none; empty
// segments get init.
TYPED_TEST(minmax_nan, SegmentedReduce) {
  using T = TypeParam;
  const auto seed = test_seed() + 32;
  SCOPED_TRACE(seed_trace(seed));
  const std::int64_t n = std::min<std::int64_t>(200000, std::max<std::int64_t>(max_test_n(), 5000));
  auto host = base_data<T>(n, seed);
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> offsets = {0};
  while (offsets.back() < n) {
    const std::int64_t len = std::uniform_int_distribution<std::int64_t>(0, 3000)(rng);
    offsets.push_back(std::min(n, offsets.back() + len));
  }
  const std::int64_t segments = static_cast<std::int64_t>(offsets.size()) - 1;
  for (std::int64_t s = 0; s < segments; ++s) {
    const std::int64_t b = offsets[static_cast<std::size_t>(s)], e = offsets[static_cast<std::size_t>(s) + 1];
    if (e <= b) continue;
    switch (s % 5) {
      case 0: host[static_cast<std::size_t>(b)] = nan_a<T>(); break;
      case 1: host[static_cast<std::size_t>(e - 1)] = nan_b<T>(); break;
      case 2: host[static_cast<std::size_t>(b + (e - b) / 2)] = nan_a<T>(); host[static_cast<std::size_t>(b)] = nan_b<T>(); break;
      default: break;
    }
  }
  device_buffer<T> d_in{std::span<const T>(host)};
  device_buffer<std::int64_t> d_offsets{std::span<const std::int64_t>(offsets)};
  for (which w : {which::min, which::max}) {
    device_buffer<T> d_out(segments);
    d_out.fill_bytes(0x5A);
    std::size_t bytes = 0;
    const T init = identity_of<T>(w);
    const auto call = [&](void* temp) {
      return w == which::min
                 ? scanlab::segmented_reduce(temp, bytes, d_in.data(), d_out.data(), segments, d_offsets.data(), init,
                                             scanlab::minimum{})
                 : scanlab::segmented_reduce(temp, bytes, d_in.data(), d_out.data(), segments, d_offsets.data(), init,
                                             scanlab::maximum{});
    };
    SCANLAB_CHECK(call(nullptr));
    device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
    SCANLAB_CHECK(call(temp.data()));
    SCANLAB_CHECK(cudaDeviceSynchronize());
    const auto got = d_out.to_host();
    for (std::int64_t s = 0; s < segments; ++s) {
      const std::int64_t b = offsets[static_cast<std::size_t>(s)], e = offsets[static_cast<std::size_t>(s) + 1];
      const T want = reference<T>(std::span<const T>(host.data() + b, static_cast<std::size_t>(e - b)), w);
      expect_same(got[static_cast<std::size_t>(s)], want, "segment " + std::to_string(s));
    }
  }
}

// Inclusive and exclusive scans: out[i] is NaN from the first NaN on; every mode of the
// single-pass scan (one block, cooperative with few blocks, tickets).
TYPED_TEST(minmax_nan, Scan) {
  using T = TypeParam;
  using scan_detail::scan_mode;
  using policy = device::default_scan_policy<T>;
  const auto seed = test_seed() + 33;
  SCOPED_TRACE(seed_trace(seed));
  const scan_detail::scan_options configs[] = {{scan_mode::automatic, 0}, {scan_mode::cooperative, 2},
                                               {scan_mode::cooperative, 3}, {scan_mode::tickets, 0},
                                               {scan_mode::tickets, 3}};
  for (const std::int64_t n : capped({1, 1000, scan_tile<T>(), scan_tile<T>() + 1, 5 * scan_tile<T>() + 7,
                                      (std::int64_t{1} << 20) + 5})) {
    const auto base = base_data<T>(n, seed + static_cast<std::uint64_t>(n));
    for (const placement& p : placements<T>(n)) {
      const auto host = with_nans(base, p);
      device_buffer<T> d_in{std::span<const T>(host)};
      device_buffer<T> d_out(n);
      for (which w : {which::min, which::max}) {
        for (const bool exclusive : {false, true}) {
          // The reference prefix by the rules.
          std::vector<T> want(static_cast<std::size_t>(n));
          rule_fold<T> f{w};
          f.add(identity_of<T>(w));
          for (std::int64_t i = 0; i < n; ++i) {
            if (exclusive) want[static_cast<std::size_t>(i)] = f.value();
            f.add(host[static_cast<std::size_t>(i)]);
            if (!exclusive) want[static_cast<std::size_t>(i)] = f.value();
          }
          for (const auto& config : configs) {
            if (config.mode == scan_mode::single_block && n > scan_tile<T>()) continue;
            const std::string what = at(n) + ", NaN " + p.name + (w == which::min ? ", min" : ", max") +
                                     (exclusive ? ", exclusive" : ", inclusive") + ", mode " +
                                     std::to_string(static_cast<int>(config.mode)) + "/" +
                                     std::to_string(config.max_blocks);
            const auto run = [&](auto op) {
              std::size_t bytes = 0;
              SCANLAB_CHECK(scan_detail::dispatch_scan<policy>(nullptr, bytes, d_in.data(), d_out.data(), n, scan_detail::kind_of(exclusive),
                                                               identity_of<T>(w), op, nullptr, config));
              device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
              temp.fill_bytes(0xA5);
              d_out.fill_bytes(0x5A);
              SCANLAB_CHECK(scan_detail::dispatch_scan<policy>(temp.data(), bytes, d_in.data(), d_out.data(), n,
                                                               scan_detail::kind_of(exclusive), identity_of<T>(w), op, nullptr, config));
              SCANLAB_CHECK(cudaDeviceSynchronize());
            };
            if (w == which::min) run(scanlab::minimum{});
            else run(scanlab::maximum{});
            const auto got = d_out.to_host();
            std::int64_t wrong = 0, first_wrong = -1;
            for (std::int64_t i = 0; i < n; ++i) {
              if (bits(got[static_cast<std::size_t>(i)]) != bits(want[static_cast<std::size_t>(i)])) {
                if (wrong++ == 0) first_wrong = i;
              }
            }
            EXPECT_EQ(wrong, 0) << what << ": first at " << first_wrong;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace scanlab::test::reduce
