// scanlab-linrec, GPU side for float32, with the tuning variants that --bench --tune times
// (the table in primitives/docs/linrec.md; with --backward, the backward pass's shapes) in
// a build configured with -DSCANLAB_LINREC_TUNE=ON (eleven more kernels: left out by
// default, a developer's tool).
#include "linrec/linrec_gpu_impl.cuh"

#include <tuple>

namespace scanlab::linrec_app {

namespace {
// The variants were measured on the H100 (Hopper shapes only: detail_gpu::hopper_variant).
template <class Policy>
using solve_variant = detail_gpu::hopper_variant<Policy, default_linrec_policy<float>>;
// threads, items per thread, resident blocks per SM (__launch_bounds__), prefetch
using variant_256x16_2p = solve_variant<linrec_policy<256, 16, 2, true>>;
using variant_512x8_2p = solve_variant<linrec_policy<512, 8, 2, true>>;
using variant_256x8_4p = solve_variant<linrec_policy<256, 8, 4, true>>;
using variant_256x16_2 = solve_variant<linrec_policy<256, 16, 2, false>>;
// Shapes for the rows kernel of short rows (no look-back: more resident blocks or warps
// per SM overlap the per-tile chains): 256 x 16 in two buffers, 3/SM; 1024 x 8, 1/SM.
using variant_256x16_3b2 = solve_variant<linrec_detail::linrec_buffers_policy<256, 16, 3, 2, 1>>;
using variant_1024x8_1p = solve_variant<linrec_detail::linrec_buffers_policy<1024, 8, 1, 3, 1>>;
// The backward pass (three arrays staged per tile; the default is 256 x 16, 2/SM, two
// buffers, L2 one tile beyond the one copied in: 96 KB of tiles a block): the shapes
// measured against it (primitives/docs/linrec.md), the first the default before.
template <class Policy>
using gradient_variant = detail_gpu::hopper_variant<Policy, default_linrec_gradient_policy<float>>;
using gradient_variants =
    std::tuple<gradient_variant<linrec_detail::linrec_buffers_policy<512, 16, 1, 2, 1>>,
               gradient_variant<linrec_detail::linrec_buffers_policy<512, 16, 1, 2, 2>>,
               gradient_variant<linrec_policy<512, 8, 1, true>>,
               gradient_variant<linrec_policy<512, 8, 1, false>>,
               gradient_variant<linrec_policy<256, 16, 1, true>>>;
}  // namespace

gpu_report run_gpu_f32(const gpu_request& request) {
#if SCANLAB_LINREC_TUNE
  return run_typed<float, gradient_variants, variant_256x16_2p, variant_512x8_2p, variant_256x8_4p, variant_256x16_2,
                   variant_256x16_3b2, variant_1024x8_1p>(request);
#else
  return run_typed<float>(request);
#endif
}

bool tuning_variants_built() { return SCANLAB_LINREC_TUNE != 0; }

}  // namespace scanlab::linrec_app
