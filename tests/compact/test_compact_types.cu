// Stream compaction of the other element sizes: 1 byte (16 per access), 2 bytes, 8 bytes,
// a 12-byte struct (element-wise I/O) and a 16-byte struct (one access per item); pairs of
// unequal sizes (the chunk follows the wider type).
#include "compact/compact_test_common.cuh"

using namespace scanlab::test::compact;

namespace {

class compact_uint8 : public scanlab::test::gpu_test {};
TEST_F(compact_uint8, Selectivity) { selectivity_test<std::uint8_t>(false); }
TEST_F(compact_uint8, Unique) { unique_test<std::uint8_t>(); }
TEST_F(compact_uint8, ModesChunksAndScatterPaths) { modes_test<std::uint8_t>(); }
TEST_F(compact_uint8, ExactOutputBuffer) { exact_output_test<std::uint8_t>(); }
TEST_F(compact_uint8, Unaligned) { unaligned_test<std::uint8_t>(); }
TEST_F(compact_uint8, PairsWithUint64Values) { pairs_test<std::uint8_t, std::uint64_t>(); }

class compact_int16 : public scanlab::test::gpu_test {};
TEST_F(compact_int16, Selectivity) { selectivity_test<std::int16_t>(false); }
TEST_F(compact_int16, Flagged) { flagged_test<std::int16_t>(); }

class compact_int64 : public scanlab::test::gpu_test {};
TEST_F(compact_int64, Selectivity) { selectivity_test<std::int64_t>(false); }
TEST_F(compact_int64, Unique) { unique_test<std::int64_t>(); }
TEST_F(compact_int64, Stability) { stability_test<std::int64_t>(); }

class compact_vec3 : public scanlab::test::gpu_test {};
TEST_F(compact_vec3, Selectivity) { selectivity_test<vec3u>(false); }
TEST_F(compact_vec3, Unique) { unique_test<vec3u>(); }
TEST_F(compact_vec3, ModesChunksAndScatterPaths) { modes_test<vec3u>(); }
TEST_F(compact_vec3, Flagged) { flagged_test<vec3u>(); }

class compact_quad : public scanlab::test::gpu_test {};
TEST_F(compact_quad, Selectivity) { selectivity_test<quad>(false); }
TEST_F(compact_quad, Unique) { unique_test<quad>(); }
TEST_F(compact_quad, ExactOutputBuffer) { exact_output_test<quad>(); }
TEST_F(compact_quad, PairsWithUint32Values) { pairs_test<quad, std::uint32_t>(); }

}  // namespace
