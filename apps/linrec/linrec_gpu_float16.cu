// scanlab-linrec, GPU side for float16 (__half): scanlab and CUB, no tuning variants.
// Not yet run from the app on a GPU (the library's test_linrec_float16 passes on the H100).
#include "linrec/linrec_gpu_impl.cuh"

namespace scanlab::linrec_app {

gpu_report run_gpu_f16(const gpu_request& request) { return run_typed<__half>(request); }

}  // namespace scanlab::linrec_app
