// scanlab-linrec, GPU side for float32, with the tuning variants that --bench --variants
// times (the table in primitives/docs/linrec.md).
#include "linrec/linrec_gpu_impl.cuh"

namespace scanlab::linrec_app {

namespace {
// threads, items per thread, resident blocks per SM (__launch_bounds__), prefetch
using variant_256x16_2p = linrec_policy<256, 16, 2, true>;
using variant_512x8_2p = linrec_policy<512, 8, 2, true>;
using variant_256x8_4p = linrec_policy<256, 8, 4, true>;
using variant_256x16_2 = linrec_policy<256, 16, 2, false>;
}  // namespace

gpu_report run_gpu_f32(const gpu_request& request) {
  return run_typed<float, variant_256x16_2p, variant_512x8_2p, variant_256x8_4p, variant_256x16_2>(request);
}

}  // namespace scanlab::linrec_app
