// scanlab-linrec, GPU side for bfloat16 (__nv_bfloat16): scanlab and CUB, no tuning variants.
// Not yet run from the app on a GPU (the library's test_linrec_bfloat16 passes on the H100).
#include "linrec/linrec_gpu_impl.cuh"

namespace scanlab::linrec_app {

gpu_report run_gpu_bf16(const gpu_request& request) { return run_typed<__nv_bfloat16>(request); }

}  // namespace scanlab::linrec_app
