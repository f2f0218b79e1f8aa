// The linear recurrence's kernels for float at the default tile shapes (linrec_instances.cuh).
#include "instances/linrec_instances.cuh"

namespace scanlab::linrec_detail {
SCANLAB_LINREC_INSTANCES(, float)
SCANLAB_LINREC_FORM_INSTANCES(, float)
SCANLAB_LINREC_SEGMENT_INSTANCES(, float)
}  // namespace scanlab::linrec_detail
