// Linear recurrences over scanlab::complex<double>: every test body of linrec_test_common.cuh (forward) and of
// linrec_grad_test_common.cuh (reverse and the backward pass), one translation unit for the
// type. Checked against the sequential long double reference with the bound of
// apps/linrec/linrec_reference.hpp for the type (element_traits); each suite's ErrorSummary
// prints the largest relative errors met (the table of primitives/docs/linrec.md).
#include "linrec/linrec_grad_test_common.cuh"

SCANLAB_LINREC_TESTS(linrec_complex128, scanlab::complex<double>)
SCANLAB_LINREC_GRAD_TESTS(linrec_grad_complex128, scanlab::complex<double>)
