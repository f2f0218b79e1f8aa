// Stream compaction of uint32 keys (the benchmark type): every operation, selectivity,
// launch mode, chunking, exact output buffers, unaligned pointers, stability, pairs.
#include "compact/compact_test_common.cuh"

#include <scanlab/tuning.hpp>

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

// ---- the public tuning knobs (scanlab/tuning.hpp): a policy and single_pass_options ----

// An eighth of the default tile (128 x 8 against 256 x 32), so that a few thousand items
// make several tiles and take the look-back: the shape the policy parameter must reach.
using small_policy = scanlab::select_policy<128, 8, 4, 4>;
static_assert(small_policy::tile_items == 1024);
static_assert(std::is_same_v<scanlab::default_select_policy<T>,
                             scanlab::select_detail::policy_for<const T*, scanlab::select_detail::none_iterator>>,
              "default_select_policy<T> names the policy select_if uses by default");

const scanlab::single_pass_options launch_configs[] = {
    {},
    {scanlab::launch_mode::cooperative, 0},
    {scanlab::launch_mode::cooperative, 2},
    {scanlab::launch_mode::tickets, 0},
    {scanlab::launch_mode::tickets, 3},
};

// Every keys operation through the public entry points with the small policy and each
// launch configuration, against the CPU reference, at sizes around its tile boundaries.
TEST_F(compact_uint32, PublicPolicyAndOptions) {
  const std::uint64_t seed = scanlab::test::test_seed();
  SCOPED_TRACE(scanlab::test::seed_trace(seed));
  const std::int64_t tile = small_policy::tile_items;
  for (const std::int64_t k : {1, 2, 3, 33}) {
    for (const std::int64_t d : {-1, 0, 1}) {
      const std::int64_t n = k * tile + d;
      if (n > scanlab::test::max_test_n()) continue;
      const auto salt = static_cast<std::uint64_t>(n);
      const std::vector<T> h_in = scanlab::test::compact::random_data<T>(n, seed + salt);
      const std::vector<T> h_runs = runs_data<T>(n, seed + salt, 3.0);
      std::mt19937_64 rng(seed ^ salt);
      std::vector<std::uint8_t> h_flags(static_cast<std::size_t>(n));
      for (auto& f : h_flags) f = static_cast<std::uint8_t>(rng() % 3);  // about a third are zero
      auto d_in = upload(h_in);
      auto d_runs = upload(h_runs);
      auto d_flags = upload(h_flags);
      scanlab::device_buffer<T> d_out(n);
      scanlab::device_buffer<std::int64_t> d_count(1);
      const auto pred = predicate_for<T>(0.5);
      for (const auto& config : launch_configs) {
        for (const op o : {op::select_if, op::remove_if, op::flagged, op::unique}) {
          SCOPED_TRACE(std::string(name(o)) + ", n = " + std::to_string(n) + ", mode " +
                       std::to_string(static_cast<int>(config.mode)) + ", max_blocks " +
                       std::to_string(config.max_blocks));
          const bool runs = o == op::unique;
          const std::vector<T> expected =
              gather_kept(runs ? h_runs : h_in, reference_keep(o, runs ? h_runs : h_in, h_flags, pred));
          const T* in = runs ? d_runs.data() : d_in.data();
          const std::uint8_t* flags = d_flags.data();
          d_out.fill_bytes(0xab);
          const std::int64_t count = run_two_phase(
              [&](void* temp, std::size_t& bytes) -> cudaError_t {
                T* out = d_out.data();
                std::int64_t* c = d_count.data();
                switch (o) {
                  case op::select_if:
                    return scanlab::select_if<small_policy>(temp, bytes, in, out, c, n, pred, nullptr, config);
                  case op::remove_if:
                    return scanlab::remove_if<small_policy>(temp, bytes, in, out, c, n, pred, nullptr, config);
                  case op::flagged:
                    return scanlab::select_flagged<small_policy>(temp, bytes, in, flags, out, c, n, nullptr, config);
                  case op::unique:
                    return scanlab::unique<small_policy>(temp, bytes, in, out, c, n, nullptr, {}, config);
                }
                return cudaErrorNotSupported;
              },
              d_count.data());
          ASSERT_TRUE(check_output(expected, count, copy_to_host(d_out.data(), n)));
        }
      }
    }
  }
}

// Size queries only (nothing reaches a device, so this runs without a GPU): the policy
// reaches the dispatcher (the temp storage of its tile count), the options change no size,
// and invalid options are refused by every entry point.
TEST(compact_public_api, PolicySizesAndInvalidOptions) {
  namespace sd = scanlab::select_detail;
  using scanlab::launch_mode;
  using scanlab::single_pass_options;
  const std::int64_t n = std::int64_t{1} << 24;
  const T* in = nullptr;
  T* out = nullptr;
  std::int64_t* count = nullptr;
  const below<T> pred{1};
  // The sm_90 default shape, as one policy: the default itself is a per-architecture table
  // whose temp storage covers every family's tiles.
  using large_policy = scanlab::select_policy<256, 32, 4, 2>;
  std::size_t tuned = 0, large = 0, small = 0, small_tickets = 0;
  ASSERT_EQ(scanlab::select_if(nullptr, tuned, in, out, count, n, pred), cudaSuccess);
  ASSERT_EQ(scanlab::select_if<large_policy>(nullptr, large, in, out, count, n, pred), cudaSuccess);
  ASSERT_EQ(scanlab::select_if<small_policy>(nullptr, small, in, out, count, n, pred), cudaSuccess);
  ASSERT_EQ(scanlab::select_if<small_policy>(nullptr, small_tickets, in, out, count, n, pred, nullptr,
                                             {launch_mode::tickets, 3}),
            cudaSuccess);
  EXPECT_GE(tuned, large);  // covers the sm_90 tiles (and any smaller family's)
  EXPECT_EQ(large, sd::select_temp_bytes<large_policy>(n, sd::max_chunk_tiles<large_policy>()));
  EXPECT_EQ(small, sd::select_temp_bytes<small_policy>(n, sd::max_chunk_tiles<small_policy>()));
  EXPECT_GT(small, large);  // 8 times the tiles
  EXPECT_EQ(small_tickets, small);

  const single_pass_options invalid[] = {{launch_mode::automatic, -1},
                                         {static_cast<launch_mode>(7), 0},
                                         {static_cast<launch_mode>(-1), 4}};
  const scanlab::counting_iterator<std::int64_t> index(0);
  std::int64_t* values_out = nullptr;
  const std::uint8_t* flags = nullptr;
  for (const auto& o : invalid) {
    SCOPED_TRACE("mode " + std::to_string(static_cast<int>(o.mode)) + ", max_blocks " + std::to_string(o.max_blocks));
    std::size_t bytes = 0;
    EXPECT_EQ(scanlab::select_if(nullptr, bytes, in, out, count, n, pred, nullptr, o), cudaErrorInvalidValue);
    EXPECT_EQ(scanlab::remove_if(nullptr, bytes, in, out, count, n, pred, nullptr, o), cudaErrorInvalidValue);
    EXPECT_EQ(scanlab::select_flagged(nullptr, bytes, in, flags, out, count, n, nullptr, o), cudaErrorInvalidValue);
    EXPECT_EQ(scanlab::unique(nullptr, bytes, in, out, count, n, nullptr, {}, o), cudaErrorInvalidValue);
    EXPECT_EQ(scanlab::select_if_pairs(nullptr, bytes, in, index, out, values_out, count, n, pred, nullptr, o),
              cudaErrorInvalidValue);
    EXPECT_EQ(scanlab::remove_if_pairs(nullptr, bytes, in, index, out, values_out, count, n, pred, nullptr, o),
              cudaErrorInvalidValue);
    EXPECT_EQ(scanlab::select_flagged_pairs(nullptr, bytes, in, index, flags, out, values_out, count, n, nullptr, o),
              cudaErrorInvalidValue);
    EXPECT_EQ(scanlab::unique_by_key(nullptr, bytes, in, index, out, values_out, count, n, nullptr, {}, o),
              cudaErrorInvalidValue);
  }
}

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
