// scanlab-scan: run_gpu picks the dtype's translation unit (scan_gpu_<type>.cu).
#include "scan/scan_gpu.hpp"

namespace scanlab::scan_app {

gpu_report run_gpu(const io::host_array& x, const segments& segs, const gpu_request& request) {
  return io::visit(x.type(), [&]<class T>() { return run_typed<T>(x, segs, request); });
}

}  // namespace scanlab::scan_app
