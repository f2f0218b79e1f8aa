// scanlab-linrec, GPU side for bfloat16 (__nv_bfloat16): scanlab and CUB, and, in a build
// configured with -DSCANLAB_LINREC_TUNE=ON, the 16-bit tile shapes that --bench --tune times
// (primitives/docs/linrec.md, "16-bit tiles"; float16 takes the same shapes).
#include "linrec/linrec_gpu_impl.cuh"

#include <tuple>

namespace scanlab::linrec_app {

#if SCANLAB_LINREC_TUNE
namespace {
// Hopper shapes only (the others run the default table's row: detail_gpu::hopper_variant).
using bf16 = __nv_bfloat16;
template <class Policy>
using solve_variant = detail_gpu::hopper_variant<Policy, default_linrec_policy<bf16>>;
template <class Policy>
using gradient_variant = detail_gpu::hopper_variant<Policy, default_linrec_gradient_policy<bf16>>;
// threads, items per thread, resident blocks per SM, prefetch. The look-back kernel's
// defaults count float states (512 x 16: 32 bytes of each array per thread), the rows
// kernel's count storage (128 x 32 at 4/SM, the backward pass 256 x 16 at 3/SM, both in
// two buffers; before the H200 measurement 256 x 32 at 2/SM in two buffers, the backward
// pass 512 x 16 in three); these are the shapes
// measured against them (primitives/docs/linrec.md, "16-bit tiles"). A variant's shape
// serves whichever kernel the input takes (the rows kernel where its tile holds whole rows).
using variant_512x32_1p = solve_variant<linrec_policy<512, 32, 1, true>>;  // float's bytes: spills
using variant_256x16_2 = solve_variant<linrec_policy<256, 16, 2, false>>;  // the rows kernel's first (H100)
using variant_256x32_2p = solve_variant<linrec_policy<256, 32, 2, true>>;
using variant_512x32_1 = solve_variant<linrec_policy<512, 32, 1, false>>;
using variant_256x32_2 = solve_variant<linrec_policy<256, 32, 2, false>>;  // the rows kernel's before
using gradient_variants =
    std::tuple<gradient_variant<linrec_detail::linrec_buffers_policy<512, 32, 1, 2, 1>>,  // float's bytes: spills
               gradient_variant<linrec_policy<512, 8, 1, true>>,
               gradient_variant<linrec_policy<512, 16, 1, true>>,                         // rows, before
               gradient_variant<linrec_detail::linrec_buffers_policy<256, 32, 2, 2, 1>>>;
}  // namespace
#endif

gpu_report run_gpu_bf16(const gpu_request& request) {
#if SCANLAB_LINREC_TUNE
  return run_typed<__nv_bfloat16, gradient_variants, variant_512x32_1p, variant_256x16_2, variant_256x32_2p,
                   variant_512x32_1, variant_256x32_2>(request);
#else
  return run_typed<__nv_bfloat16>(request);
#endif
}

}  // namespace scanlab::linrec_app
