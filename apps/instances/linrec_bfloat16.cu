// The linear recurrence's kernels for bfloat16 at the default tile shapes (linrec_instances.cuh).
#include "instances/linrec_instances.cuh"

namespace scanlab::linrec_detail {
SCANLAB_LINREC_INSTANCES(, __nv_bfloat16)
}  // namespace scanlab::linrec_detail
