// Linear recurrences over float: every test body of linrec_test_common.cuh, and the
// *Large* ones (2^28 elements as one sequence and as batches; about 5 GB of GPU memory,
// a minute of host time for the data and the reference).
#include "linrec/linrec_test_common.cuh"

SCANLAB_LINREC_TESTS(linrec_float, float)

TEST_F(linrec_float, Large) { scanlab::test::linrec::large_test<float>(); }
