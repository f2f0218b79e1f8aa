// scanlab-dist: run picks the dtype's translation unit (dist_gpu_<type>.cu).
#include "dist/dist_gpu.hpp"

#include <stdexcept>

namespace scanlab::dist_app {

std::string_view name(job j) {
  switch (j) {
    case job::reduce: return "reduce";
    case job::scan: return "scan";
    case job::compact: return "compact";
    case job::sort: return "sort";
  }
  return "?";
}

bool supported(io::dtype t) {
  using io::dtype;
  return t == dtype::i32 || t == dtype::u32 || t == dtype::i64 || t == dtype::u64 || t == dtype::f32 || t == dtype::f64;
}

report run(const io::host_array& x, const request& r) {
  using io::dtype;
  switch (x.type()) {
    case dtype::i32: return run_typed<std::int32_t>(x, r);
    case dtype::u32: return run_typed<std::uint32_t>(x, r);
    case dtype::i64: return run_typed<std::int64_t>(x, r);
    case dtype::u64: return run_typed<std::uint64_t>(x, r);
    case dtype::f32: return run_typed<float>(x, r);
    case dtype::f64: return run_typed<double>(x, r);
    default: break;
  }
  throw std::runtime_error(std::string("scanlab-dist takes ") + supported_list + ", not " +
                              std::string(io::name(x.type())));
}

}  // namespace scanlab::dist_app
