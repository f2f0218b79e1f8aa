// scanlab-linrec, GPU side for float64.
#include "linrec/linrec_gpu_impl.cuh"

namespace scanlab::linrec_app {

gpu_report run_gpu_f64(const gpu_request& request) { return run_typed<double>(request); }

}  // namespace scanlab::linrec_app
