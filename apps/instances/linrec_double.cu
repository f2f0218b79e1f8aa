// The linear recurrence's kernels for double at the default tile shapes (linrec_instances.cuh).
#include "instances/linrec_instances.cuh"

namespace scanlab::linrec_detail {
SCANLAB_LINREC_INSTANCES(, double)
SCANLAB_LINREC_FORM_INSTANCES(, double)
SCANLAB_LINREC_SEGMENT_INSTANCES(, double)
}  // namespace scanlab::linrec_detail
