// Channels-last batches and variable-length sequences over scanlab::complex<float>: every test body of
// linrec_layout_test_common.cuh, one translation unit for the type (the 16-bit types keep
// no maps in their tiles: their finish applies the sequence starts of the offsets itself).
#include "linrec/linrec_layout_test_common.cuh"

SCANLAB_LINREC_LAYOUT_TESTS(linrec_layout_complex64, scanlab::complex<float>)
