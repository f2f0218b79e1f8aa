// scanlab-reduce: run_gpu picks the dtype's translation unit (reduce_gpu_<type>.cu).
#include "reduce/reduce_gpu.hpp"

namespace scanlab::reduce_app {

gpu_report run_gpu(const io::host_array& x, const io::segments& segs, const gpu_request& request) {
  return io::visit(x.type(), [&]<class T>() { return run_typed<T>(x, segs, request); });
}

}  // namespace scanlab::reduce_app
