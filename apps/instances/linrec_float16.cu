// The linear recurrence's kernels for float16 at the default tile shapes (linrec_instances.cuh).
#include "instances/linrec_instances.cuh"

namespace scanlab::linrec_detail {
SCANLAB_LINREC_INSTANCES(, __half)
}  // namespace scanlab::linrec_detail
