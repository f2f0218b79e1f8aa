// Stream compaction of float and double keys: selectivity, unique (NaN is never a
// duplicate: == is false), and predicates meeting NaN and infinities.
#include "compact/compact_test_common.cuh"

using namespace scanlab::test::compact;

namespace {

template <class F>
struct greater_than {
  F bound;
  __host__ __device__ bool operator()(F x) const { return x > bound; }
};
template <class F>
struct is_finite {
  __host__ __device__ bool operator()(F x) const { return isfinite(x); }
};

// Data in [0, 1) with NaNs, infinities of both signs and negative zeros mixed in.
template <class F>
std::vector<F> with_specials(std::int64_t n, std::uint64_t seed) {
  std::vector<F> data = scanlab::test::compact::random_data<F>(n, seed);
  std::mt19937_64 rng(seed + 1);
  const F specials[] = {std::numeric_limits<F>::quiet_NaN(), -std::numeric_limits<F>::quiet_NaN(),
                        std::numeric_limits<F>::infinity(), -std::numeric_limits<F>::infinity(), F(-0.0)};
  for (auto& v : data) {
    if (rng() % 8 == 0) v = specials[rng() % 5];
  }
  return data;
}

template <class F>
void nan_test() {
  const std::uint64_t seed = scanlab::test::test_seed();
  SCOPED_TRACE(scanlab::test::seed_trace(seed));
  for (const std::int64_t n : compact_sizes<F>(seed)) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const std::vector<F> data = with_specials<F>(n, seed + static_cast<std::uint64_t>(n));
    // x > 0.5 is false for NaN: NaNs are dropped, +inf kept.
    check_all(op::select_if, data, {}, greater_than<F>{F(0.5)});
    check_all(op::remove_if, data, {}, greater_than<F>{F(0.5)}, nullptr, false);
    check_all(op::select_if, data, {}, is_finite<F>{});
    // Runs of equal values, specials included: NaN == NaN is false, so each NaN is kept.
    std::vector<F> runs = runs_data<F>(n, seed + static_cast<std::uint64_t>(n), 3.0);
    for (std::size_t i = 0; i < runs.size(); i += 5) runs[i] = data[i];
    check_all(op::unique, runs, {}, greater_than<F>{F(0)});
  }
}

class compact_float : public scanlab::test::gpu_test {};

TEST_F(compact_float, Selectivity) { selectivity_test<float>(); }
TEST_F(compact_float, Unique) { unique_test<float>(); }
TEST_F(compact_float, NanAndInfinity) { nan_test<float>(); }
TEST_F(compact_float, PairsWithInt64Values) { pairs_test<float, std::int64_t>(); }

class compact_double : public scanlab::test::gpu_test {};

TEST_F(compact_double, Selectivity) { selectivity_test<double>(false); }
TEST_F(compact_double, NanAndInfinity) { nan_test<double>(); }

}  // namespace
