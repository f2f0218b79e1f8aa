// Reverse recurrences and the backward pass over float: every test body of
// linrec_grad_test_common.cuh, and the *Large* one (2^28 elements as one sequence, reverse
// and backward, and 2^16 sequences of 2^12 backward in both layouts; about 6 GB of GPU
// memory and a few minutes of host time for the data and the long double references).
#include "linrec/linrec_grad_test_common.cuh"

SCANLAB_LINREC_GRAD_TESTS(linrec_grad_float, float)

TEST_F(linrec_grad_float, Large) { scanlab::test::linrec::gradient_large_test<float>(); }
