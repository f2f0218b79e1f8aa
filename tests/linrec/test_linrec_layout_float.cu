// Channels-last batches and variable-length sequences over float: every test body of
// linrec_layout_test_common.cuh.
#include "linrec/linrec_layout_test_common.cuh"

SCANLAB_LINREC_LAYOUT_TESTS(linrec_layout_float, float)
