// The linear recurrence's kernels for complex64 at the default tile shapes (linrec_instances.cuh).
#include "instances/linrec_instances.cuh"

namespace scanlab::linrec_detail {
SCANLAB_LINREC_INSTANCES(, scanlab::complex<float>)
SCANLAB_LINREC_SEGMENT_INSTANCES(, scanlab::complex<float>)
}  // namespace scanlab::linrec_detail
