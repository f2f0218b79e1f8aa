// scanlab-linrec, GPU side for complex128 (scanlab::complex<double>): scanlab and CUB, no tuning variants.
// Not yet run from the app on a GPU (the library's test_linrec_complex128 passes on the H100).
#include "linrec/linrec_gpu_impl.cuh"

namespace scanlab::linrec_app {

gpu_report run_gpu_c128(const gpu_request& request) { return run_typed<scanlab::complex<double>>(request); }

}  // namespace scanlab::linrec_app
