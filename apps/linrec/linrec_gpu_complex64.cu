// scanlab-linrec, GPU side for complex64 (scanlab::complex<float>): scanlab and CUB, no tuning variants.
// Not yet run from the app on a GPU (the library's test_linrec_complex64 passes on the H100).
#include "linrec/linrec_gpu_impl.cuh"

namespace scanlab::linrec_app {

gpu_report run_gpu_c64(const gpu_request& request) { return run_typed<scanlab::complex<float>>(request); }

}  // namespace scanlab::linrec_app
