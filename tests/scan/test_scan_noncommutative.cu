// Scans with associative, non-commutative operators: composition of affine maps over
// float (a linear recurrence) and 2x2 matrix products over uint32 (exact mod 2^32),
// in the production path, every ladder variant and the block/warp scans. Operators
// must be applied as op(earlier, later): a swapped operand anywhere fails these.
#include "scan/scan_test_common.cuh"

#include <random>

namespace {

using scanlab::test::scan::affine;
using scanlab::test::scan::affine_case;
using scanlab::test::scan::affine_compose;
using scanlab::test::scan::mat2u;
using scanlab::test::scan::mat2u_case;
using scanlab::test::scan::mat2u_multiply;

SCANLAB_SCAN_TESTS(scan_affine, affine_case)
SCANLAB_SCAN_TESTS(scan_matrix, mat2u_case)

TEST_F(scan_matrix, BlockAndWarp) { scanlab::test::scan::block_and_warp_test<mat2u_case>(); }
TEST_F(scan_affine, BlockAndWarp) { scanlab::test::scan::block_and_warp_test<affine_case>(); }

// Property tests of the operators themselves (CPU): associative on random triples,
// and really not commutative (else the tests above would prove nothing).
TEST(scan_operators, MatrixProductIsAssociativeNotCommutative) {
  const auto values = mat2u_case::values(3000, scanlab::test::test_seed());
  const mat2u_multiply op;
  int commuting = 0;
  for (std::size_t i = 0; i + 2 < values.size(); i += 3) {
    const mat2u& a = values[i];
    const mat2u& b = values[i + 1];
    const mat2u& c = values[i + 2];
    ASSERT_EQ(op(op(a, b), c), op(a, op(b, c)));
    if (op(a, b) == op(b, a)) ++commuting;
  }
  EXPECT_LT(commuting, 10);
}

TEST(scan_operators, AffineCompositionIsAssociativeNotCommutative) {
  const auto values = affine_case::values(3000, scanlab::test::test_seed());
  const affine_compose op;
  int commuting = 0;
  for (std::size_t i = 0; i + 2 < values.size(); i += 3) {
    const affine& a = values[i];
    const affine& b = values[i + 1];
    const affine& c = values[i + 2];
    const affine left = op(op(a, b), c);
    const affine right = op(a, op(b, c));
    ASSERT_NEAR(left.a, right.a, 1e-6);
    ASSERT_NEAR(left.b, right.b, 1e-6);
    const affine ab = op(a, b);
    const affine ba = op(b, a);
    if (std::fabs(ab.b - ba.b) < 1e-6f) ++commuting;
  }
  EXPECT_LT(commuting, 10);
}

}  // namespace
