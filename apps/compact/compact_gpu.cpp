// scanlab-compact: which typed GPU runner an input goes to (host code).
#include "compact/compact_gpu.hpp"

#include <stdexcept>

namespace scanlab::compact_app {

namespace {

template <class T>
gpu_report run_as(const io::host_array& data, const std::vector<std::uint8_t>* flags, const gpu_request& request) {
  return run_typed<T>(reinterpret_cast<const T*>(data.data()), data.size(), data.type(), flags, request);
}

}  // namespace

gpu_report run_gpu(const io::host_array& data, const std::vector<std::uint8_t>* flags, const gpu_request& request) {
  // Flags only move bits, and == on integers is bitwise: both run on the unsigned type of
  // the same size (fewer kernels to build). Floats compare by value (-0 == 0, NaN != NaN).
  const test_kind kind = request.predicate.kind;
  if (kind == test_kind::flags || (kind == test_kind::unique && !io::is_float(data.type()))) {
    switch (io::size_of(data.type())) {
      case 1: return run_as<std::uint8_t>(data, flags, request);
      case 2: return run_as<std::uint16_t>(data, flags, request);
      case 4: return run_as<std::uint32_t>(data, flags, request);
      case 8: return run_as<std::uint64_t>(data, flags, request);
      default: throw std::logic_error("compact: unexpected element size");
    }
  }
  return io::visit(data.type(), [&]<class T>() { return run_as<T>(data, flags, request); });
}

}  // namespace scanlab::compact_app
