// Stream compaction of uint32 keys (the benchmark type): every operation, selectivity,
// launch mode, chunking, exact output buffers, unaligned pointers, stability, pairs.
#include "compact/compact_test_common.cuh"

using namespace scanlab::test::compact;

namespace {
using T = std::uint32_t;

class compact_uint32 : public scanlab::test::gpu_test {};

TEST_F(compact_uint32, Selectivity) { selectivity_test<T>(); }
TEST_F(compact_uint32, Flagged) { flagged_test<T>(); }
TEST_F(compact_uint32, Unique) { unique_test<T>(); }
TEST_F(compact_uint32, ModesChunksAndScatterPaths) { modes_test<T>(); }
TEST_F(compact_uint32, ExactOutputBuffer) { exact_output_test<T>(); }
TEST_F(compact_uint32, Unaligned) { unaligned_test<T>(); }
TEST_F(compact_uint32, Stability) { stability_test<T>(); }
TEST_F(compact_uint32, Api) { api_test<T>(); }
TEST_F(compact_uint32, PairsWithUint32Values) { pairs_test<T, std::uint32_t>(); }

// The same input twice: the same output (the look-back order never matters).
TEST_F(compact_uint32, RepeatableStress) {
  const std::uint64_t seed = scanlab::test::test_seed();
  SCOPED_TRACE(scanlab::test::seed_trace(seed));
  const std::int64_t n = std::min<std::int64_t>(scanlab::test::max_test_n(), std::int64_t{1} << 22);
  const std::vector<T> h_in = scanlab::test::compact::random_data<T>(n, seed);
  const auto pred = predicate_for<T>(0.5);
  const std::vector<T> expected = gather_kept(h_in, reference_keep(op::select_if, h_in, {}, pred));
  auto d_in = upload(h_in);
  scanlab::device_buffer<T> d_out(n);
  for (int run = 0; run < 20; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    d_out.fill_bytes(0xab);
    const std::int64_t count = run_keys(impl::production, op::select_if, static_cast<const T*>(d_in.data()), nullptr,
                                        d_out.data(), n, pred);
    ASSERT_TRUE(check_output(expected, count, copy_to_host(d_out.data(), n)));
  }
}

}  // namespace
