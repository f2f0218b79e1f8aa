// Linear recurrences over double: every test body of linrec_test_common.cuh (the reference
// runs in long double, 11 more bits than double).
#include "linrec/linrec_test_common.cuh"

SCANLAB_LINREC_TESTS(linrec_double, double)
