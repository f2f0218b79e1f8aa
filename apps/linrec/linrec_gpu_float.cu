// scanlab-linrec, GPU side for float32, with the tuning variants that --bench --variants
// times (the table in primitives/docs/linrec.md).
#include "linrec/linrec_gpu_impl.cuh"

namespace scanlab::linrec_app {

namespace {
namespace ld = linrec_detail;
// threads, items per thread, resident blocks per SM (__launch_bounds__), prefetch
using variant_256x16_3 = ld::linrec_policy<256, 16, 3, false>;
using variant_256x8_3p = ld::linrec_policy<256, 8, 3, true>;
using variant_256x32_2 = ld::linrec_policy<256, 32, 2, false>;
using variant_128x16_4p = ld::linrec_policy<128, 16, 4, true>;
using variant_256x16_4 = ld::linrec_policy<256, 16, 4, false>;
}  // namespace

gpu_report run_gpu_f32(const gpu_request& request) {
  return run_typed<float, variant_256x16_3, variant_256x8_3p, variant_256x32_2, variant_128x16_4p, variant_256x16_4>(
      request);
}

}  // namespace scanlab::linrec_app
