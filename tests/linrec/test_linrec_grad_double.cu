// Reverse recurrences and the backward pass over double: every test body of
// linrec_grad_test_common.cuh (the references run in long double; the finite differences
// in double).
#include "linrec/linrec_grad_test_common.cuh"

SCANLAB_LINREC_GRAD_TESTS(linrec_grad_double, double)
