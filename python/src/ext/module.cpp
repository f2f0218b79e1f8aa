// scanlab._scanlab: the compiled half of the Python package (nanobind).
//
// What lives here, and nothing more:
//   - DLPack import: a capsule from an array's __dlpack__ becomes an `imported_tensor` that
//     owns it (and calls its deleter when Python drops it) and tells its pointer, shape,
//     strides, element type and device;
//   - DLPack export: a `device_buffer` (cudaMalloc'd; for JAX and unknown frameworks, whose
//     allocators the package cannot reach) is handed out as a "dltensor" capsule;
//   - stream ordering (an event recorded on one stream, waited for on another) and pointer
//     queries for the __cuda_array_interface__ fallback;
//   - the operations (ops.hpp), each taking raw pointers as integers, a stream and a mode
//     for the temporary storage; reading a count back from the device (compaction's result
//     size: the one synchronising step) and a device-to-device copy on a stream.
// Checking arguments, choosing the stream and allocating outputs is the Python side's job
// (scanlab/_arrays.py, scanlab/_api.py). Nothing here runs a CUDA call at import time.
#include "dlpack_abi.hpp"
#include "ops.hpp"
#ifdef SCANLAB_PY_XLA_FFI
#include "jax_ffi.hpp"
#endif

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace nb = nanobind;
using namespace nb::literals;

namespace scanlab_py {
namespace {

// ---- errors ----

[[noreturn]] void fail(const char* what, cudaError_t status) {
  throw std::runtime_error(std::string("scanlab.") + what + ": CUDA error " + cudaGetErrorName(status) + ": " +
                           cudaGetErrorString(status));
}

void check(const char* what, cudaError_t status) {
  if (status != cudaSuccess) fail(what, status);
}

// Makes `device` current for the scope and restores the previous device after.
class device_guard {
 public:
  device_guard(const char* what, int device) {
    check(what, cudaGetDevice(&previous_));
    if (previous_ != device) check(what, cudaSetDevice(device));
  }
  ~device_guard() {
    if (previous_ >= 0) (void)cudaSetDevice(previous_);
  }
  device_guard(const device_guard&) = delete;
  device_guard& operator=(const device_guard&) = delete;

 private:
  int previous_ = -1;
};

cudaStream_t as_stream(std::uintptr_t s) { return reinterpret_cast<cudaStream_t>(s); }

// ---- DLPack import ----

// The tensor a "dltensor" or "dltensor_versioned" capsule carried. Owns it: the capsule is
// renamed "used_..." (the protocol's hand-over) and the producer's deleter runs when this
// object is destroyed (with the GIL held: CuPy's deleter touches Python objects).
class imported_tensor {
 public:
  explicit imported_tensor(nb::handle capsule) {
    PyObject* cap = capsule.ptr();
    if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
      versioned_ = static_cast<dlpack::managed_tensor_versioned*>(PyCapsule_GetPointer(cap, "dltensor_versioned"));
      if (versioned_ == nullptr) throw nb::python_error();
      if (versioned_->version.major != 1) {
        const auto major = versioned_->version.major;
        versioned_ = nullptr;  // not ours: the capsule keeps it
        throw nb::value_error(("DLPack version " + std::to_string(major) + ".x is not supported (1.x is)").c_str());
      }
      if (PyCapsule_SetName(cap, "used_dltensor_versioned") != 0) throw nb::python_error();
      t_ = &versioned_->dl_tensor;
      read_only_ = (versioned_->flags & dlpack::flag_read_only) != 0;
    } else if (PyCapsule_IsValid(cap, "dltensor")) {
      legacy_ = static_cast<dlpack::managed_tensor*>(PyCapsule_GetPointer(cap, "dltensor"));
      if (legacy_ == nullptr) throw nb::python_error();
      if (PyCapsule_SetName(cap, "used_dltensor") != 0) throw nb::python_error();
      t_ = &legacy_->dl_tensor;
    } else {
      throw nb::type_error("expected an unused DLPack capsule (\"dltensor\" or \"dltensor_versioned\")");
    }
  }
  imported_tensor(const imported_tensor&) = delete;
  imported_tensor& operator=(const imported_tensor&) = delete;
  ~imported_tensor() { release(); }

  void release() {
    if (versioned_ != nullptr && versioned_->deleter != nullptr) versioned_->deleter(versioned_);
    if (legacy_ != nullptr && legacy_->deleter != nullptr) legacy_->deleter(legacy_);
    versioned_ = nullptr;
    legacy_ = nullptr;
    t_ = nullptr;
  }

  const dlpack::tensor& t() const {
    if (t_ == nullptr) throw nb::value_error("the imported tensor was released");
    return *t_;
  }
  std::uintptr_t data() const {
    return reinterpret_cast<std::uintptr_t>(t().data) + static_cast<std::uintptr_t>(t().byte_offset);
  }
  nb::tuple shape() const {
    nb::list out;
    for (int i = 0; i < t().ndim; ++i) out.append(t().shape[i]);
    return nb::tuple(out);
  }
  nb::object strides() const {
    if (t().strides == nullptr) return nb::none();
    nb::list out;
    for (int i = 0; i < t().ndim; ++i) out.append(t().strides[i]);
    return nb::tuple(out);
  }
  bool read_only() const { return read_only_; }

 private:
  dlpack::managed_tensor_versioned* versioned_ = nullptr;
  dlpack::managed_tensor* legacy_ = nullptr;
  dlpack::tensor* t_ = nullptr;
  bool read_only_ = false;
};

// ---- device memory and DLPack export ----

// cudaMalloc'd memory, freed with cudaFree (which waits for the device) when the last owner
// lets go: a DLPack consumer may still read it on a stream of its own when it drops it,
// so a stream-ordered free on our stream would race. No Python object is touched on release
// (consumers may call the deleter from any thread, without the GIL).
struct buffer_state {
  void* ptr = nullptr;
  std::size_t bytes = 0;
  int device = 0;
  ~buffer_state() {
    if (ptr == nullptr) return;
    int previous = -1;
    if (cudaGetDevice(&previous) != cudaSuccess) return;  // runtime gone (interpreter exit)
    if (previous != device) (void)cudaSetDevice(device);
    (void)cudaFree(ptr);
    if (previous != device) (void)cudaSetDevice(previous);
  }
};

class device_buffer {
 public:
  device_buffer(std::size_t bytes, int device) : state_(std::make_shared<buffer_state>()) {
    state_->bytes = bytes;
    state_->device = device;
    if (bytes == 0) return;
    nb::gil_scoped_release release;
    device_guard guard("device_buffer", device);
    check("device_buffer", cudaMalloc(&state_->ptr, bytes));
  }
  std::uintptr_t ptr() const { return reinterpret_cast<std::uintptr_t>(state_->ptr); }
  std::size_t bytes() const { return state_->bytes; }
  int device() const { return state_->device; }
  const std::shared_ptr<buffer_state>& state() const { return state_; }

 private:
  std::shared_ptr<buffer_state> state_;
};

struct export_context {
  std::shared_ptr<buffer_state> buffer;
  std::vector<std::int64_t> shape;    // at least one element: valid pointers even for 0-d
  std::vector<std::int64_t> strides;  // compact row-major, in elements
};

template <class Managed>
void delete_exported(Managed* self) {
  delete static_cast<export_context*>(self->manager_ctx);
  delete self;
}

// Frees a capsule's tensor if no consumer took it (the name is still the unused one).
template <class Managed>
void capsule_destructor(PyObject* cap, const char* name) {
  if (!PyCapsule_IsValid(cap, name)) return;  // consumed: the consumer calls the deleter
  auto* m = static_cast<Managed*>(PyCapsule_GetPointer(cap, name));
  if (m != nullptr && m->deleter != nullptr) m->deleter(m);
}

nb::object export_dlpack(const device_buffer& buffer, const std::vector<std::int64_t>& shape, int code, int bits,
                         bool versioned) {
  auto ctx = std::make_unique<export_context>();
  ctx->buffer = buffer.state();
  ctx->shape = shape;
  // Strides spelled out (DLPack 1.x consumers may not accept NULL for "compact").
  ctx->strides.assign(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) ctx->strides[i - 1] = ctx->strides[i] * std::max<std::int64_t>(shape[i], 1);
  const auto ndim = static_cast<std::int32_t>(shape.size());
  ctx->shape.push_back(1);  // never an empty vector: 0-d arrays get valid (unread) pointers
  ctx->strides.push_back(1);
  dlpack::tensor t{};
  t.data = buffer.state()->ptr;
  t.device = {dlpack::cuda, buffer.device()};
  t.ndim = ndim;
  t.dtype = {static_cast<std::uint8_t>(code), static_cast<std::uint8_t>(bits), 1};
  t.shape = ctx->shape.data();
  t.strides = ctx->strides.data();
  t.byte_offset = 0;
  PyObject* cap = nullptr;
  if (versioned) {
    auto* m = new dlpack::managed_tensor_versioned{};
    m->version = {1, 0};
    m->manager_ctx = ctx.release();
    m->deleter = delete_exported<dlpack::managed_tensor_versioned>;
    m->flags = 0;
    m->dl_tensor = t;
    cap = PyCapsule_New(m, "dltensor_versioned", [](PyObject* c) {
      capsule_destructor<dlpack::managed_tensor_versioned>(c, "dltensor_versioned");
    });
    if (cap == nullptr) {
      m->deleter(m);
      throw nb::python_error();
    }
  } else {
    auto* m = new dlpack::managed_tensor{};
    m->dl_tensor = t;
    m->manager_ctx = ctx.release();
    m->deleter = delete_exported<dlpack::managed_tensor>;
    cap = PyCapsule_New(m, "dltensor", [](PyObject* c) { capsule_destructor<dlpack::managed_tensor>(c, "dltensor"); });
    if (cap == nullptr) {
      m->deleter(m);
      throw nb::python_error();
    }
  }
  return nb::steal(cap);
}

// Work enqueued on `consumer` after this call starts only once the work enqueued on
// `producer` so far has finished. Nothing to do when they are the same stream.
void stream_wait(std::uintptr_t producer, std::uintptr_t consumer, int device) {
  if (producer == consumer) return;
  nb::gil_scoped_release release;
  device_guard guard("stream_wait", device);
  cudaEvent_t event = nullptr;
  check("stream_wait", cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  cudaError_t status = cudaEventRecord(event, as_stream(producer));
  if (status == cudaSuccess) status = cudaStreamWaitEvent(as_stream(consumer), event, 0);
  const cudaError_t destroyed = cudaEventDestroy(event);  // released once the wait is done
  check("stream_wait", status);
  check("stream_wait", destroyed);
}

// (memory type, device) of a pointer: cudaMemoryType values (0 unregistered host memory,
// 1 host, 2 device, 3 managed).
nb::tuple pointer_info(std::uintptr_t ptr) {
  cudaPointerAttributes attributes{};
  {
    nb::gil_scoped_release release;
    check("pointer_info", cudaPointerGetAttributes(&attributes, reinterpret_cast<const void*>(ptr)));
  }
  return nb::make_tuple(static_cast<int>(attributes.type), attributes.device);
}

// ---- the operations ----

enum class temp_mode : int {
  query = 0,  // return the temporary storage size; launch nothing
  given = 1,  // run with the caller's temporary storage (temp, temp_bytes)
  own = 2,    // run with temporary storage from cudaMallocAsync / cudaFreeAsync on the stream
  // Run with the caller's workspace (temp, temp_bytes: kept between calls of one stream) if
  // the call needs no more than it and the stream is not being captured into a graph (the
  // graph would keep the workspace's address); else launch nothing and return the size, for
  // a `given` call with storage of its own. One extension call instead of a query and a
  // launch: the small calls' overhead.
  workspace = 3,
};

// Runs f(d_temp, temp_bytes, stream) (a two-phase library call) on `device` with the GIL
// released, as `mode` says. Returns the size for a query (or a workspace too small, or one
// that may not be used), else 0.
template <class F>
std::size_t run(const char* what, int mode, std::uintptr_t temp, std::size_t temp_bytes, int device,
                std::uintptr_t stream_handle, F&& f) {
  nb::gil_scoped_release release;
  device_guard guard(what, device);
  const cudaStream_t stream = as_stream(stream_handle);
  switch (static_cast<temp_mode>(mode)) {
    case temp_mode::query: {
      std::size_t bytes = 0;
      check(what, f(nullptr, bytes, stream));
      return bytes;
    }
    case temp_mode::given: check(what, f(reinterpret_cast<void*>(temp), temp_bytes, stream)); return 0;
    case temp_mode::workspace: {
      // (A null d_temp is a query to the library: a call with no workspace always returns
      // a size, at least 1.)
      std::size_t bytes = 0;
      check(what, f(nullptr, bytes, stream));
      if (temp == 0 || bytes > temp_bytes) return bytes > 0 ? bytes : 1;
      cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
      check(what, cudaStreamIsCapturing(stream, &capture));
      if (capture != cudaStreamCaptureStatusNone) return bytes > 0 ? bytes : 1;
      check(what, f(reinterpret_cast<void*>(temp), temp_bytes, stream));
      return 0;
    }
    case temp_mode::own: {
      std::size_t bytes = 0;
      check(what, f(nullptr, bytes, stream));
      void* d_temp = nullptr;  // never null for the run (null is a query): at least 1 byte
      check(what, cudaMallocAsync(&d_temp, bytes > 0 ? bytes : 1, stream));
      const cudaError_t status = f(d_temp, bytes, stream);
      const cudaError_t freed = cudaFreeAsync(d_temp, stream);
      check(what, status);
      check(what, freed);
      return 0;
    }
  }
  throw std::invalid_argument(std::string("scanlab.") + what + ": bad temporary-storage mode");
}

template <class T>
const void* cptr(T v) {
  return reinterpret_cast<const void*>(static_cast<std::uintptr_t>(v));
}
template <class T>
void* mptr(T v) {
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(v));
}

dtype to_dtype(int t) {
  if (t < 0 || t >= dtype_count) throw nb::value_error("bad dtype code");
  return static_cast<dtype>(t);
}
op_code to_op(int op) {
  if (op < 0 || op > 3) throw nb::value_error("bad op code");
  return static_cast<op_code>(op);
}
norm_kind to_norm(int kind) {
  if (kind < 0 || kind >= norm_kind_count) throw nb::value_error("bad norm kind");
  return static_cast<norm_kind>(kind);
}

// A Python number as a scalar of type t: the member ops.hpp's functions read for t (the
// Python side has checked that it fits).
scalar to_scalar(dtype t, nb::handle value) {
  scalar s{};
  switch (t) {
    case dtype::int32:
    case dtype::int64: s.i = nb::cast<std::int64_t>(value); break;
    case dtype::uint32:
    case dtype::uint64: s.u = nb::cast<std::uint64_t>(value); break;
    default: s.f = nb::cast<double>(value); break;
  }
  return s;
}

std::int64_t* i64ptr(std::uintptr_t v) { return reinterpret_cast<std::int64_t*>(v); }

// A recurrence's shape from the Python side's layout code (ops.hpp: recurrence_layout).
recurrence_shape to_recurrence_shape(int layout, std::int64_t batch, std::int64_t length, std::int64_t channels,
                                     std::uintptr_t offsets) {
  if (layout < 0 || layout >= recurrence_layout_count) throw nb::value_error("bad recurrence layout");
  recurrence_shape shape;
  shape.layout = static_cast<recurrence_layout>(layout);
  shape.batch = batch;
  shape.length = length;
  shape.channels = channels;
  shape.d_offsets = reinterpret_cast<const std::int64_t*>(offsets);
  return shape;
}

// The int64 at a device address, once `stream`'s work so far is done (synchronises it):
// the size of a compaction's result.
std::int64_t read_int64(const std::string& what, std::uintptr_t ptr, std::uintptr_t stream_handle, int device) {
  nb::gil_scoped_release release;
  device_guard guard(what.c_str(), device);
  std::int64_t value = 0;
  check(what.c_str(), cudaMemcpyAsync(&value, cptr(ptr), sizeof(value), cudaMemcpyDeviceToHost, as_stream(stream_handle)));
  check(what.c_str(), cudaStreamSynchronize(as_stream(stream_handle)));
  return value;
}

// nbytes from src to dst (device memory), enqueued on `stream`.
void copy_async(const std::string& what, std::uintptr_t dst, std::uintptr_t src, std::size_t nbytes,
                std::uintptr_t stream_handle, int device) {
  if (nbytes == 0) return;
  nb::gil_scoped_release release;
  device_guard guard(what.c_str(), device);
  check(what.c_str(), cudaMemcpyAsync(mptr(dst), cptr(src), nbytes, cudaMemcpyDeviceToDevice, as_stream(stream_handle)));
}

}  // namespace
}  // namespace scanlab_py

NB_MODULE(_scanlab, m) {
  using namespace scanlab_py;
  m.doc() = "scanlab's compiled bindings (internal: use the functions of the scanlab package)";

  nb::class_<imported_tensor>(m, "ImportedTensor",
                              "A DLPack capsule's tensor, owned (its deleter runs when this object goes)")
      .def_prop_ro("data", &imported_tensor::data, "address of the first element (byte_offset applied)")
      .def_prop_ro("shape", &imported_tensor::shape)
      .def_prop_ro("strides", &imported_tensor::strides, "strides in elements, or None (compact row-major)")
      .def_prop_ro("dtype_code", [](const imported_tensor& t) { return static_cast<int>(t.t().dtype.code); })
      .def_prop_ro("dtype_bits", [](const imported_tensor& t) { return static_cast<int>(t.t().dtype.bits); })
      .def_prop_ro("dtype_lanes", [](const imported_tensor& t) { return static_cast<int>(t.t().dtype.lanes); })
      .def_prop_ro("device_type", [](const imported_tensor& t) { return static_cast<int>(t.t().device.device_type); })
      .def_prop_ro("device_id", [](const imported_tensor& t) { return static_cast<int>(t.t().device.device_id); })
      .def_prop_ro("read_only", &imported_tensor::read_only)
      .def("release", &imported_tensor::release, "run the producer's deleter now");
  m.def(
      "dlpack_import", [](nb::handle capsule) { return new imported_tensor(capsule); }, "capsule"_a,
      nb::rv_policy::take_ownership, "Take ownership of an unused DLPack capsule.");

  nb::class_<device_buffer>(m, "DeviceBuffer", "cudaMalloc'd device memory, freed when its last owner goes")
      .def(nb::init<std::size_t, int>(), "nbytes"_a, "device"_a)
      .def_prop_ro("ptr", &device_buffer::ptr)
      .def_prop_ro("nbytes", &device_buffer::bytes)
      .def_prop_ro("device", &device_buffer::device);
  m.def("export_dlpack", &export_dlpack, "buffer"_a, "shape"_a, "dtype_code"_a, "dtype_bits"_a, "versioned"_a,
        "A DLPack capsule (compact row-major) over a DeviceBuffer, which it keeps alive.");
  m.def("stream_wait", &stream_wait, "producer"_a, "consumer"_a, "device"_a,
        "Make `consumer` wait for the work enqueued on `producer` so far (an event).");
  m.def("pointer_info", &pointer_info, "ptr"_a, "(cudaMemoryType, device) of a pointer");

  m.def(
      "reduce",
      [](int t, int op, std::uintptr_t in, std::uintptr_t out, std::int64_t n, std::uintptr_t temp,
         std::size_t temp_bytes, int mode, std::uintptr_t stream, int device) {
        const dtype d = to_dtype(t);
        const op_code o = to_op(op);
        return run("reduce", mode, temp, temp_bytes, device, stream, [&](void* d_temp, std::size_t& bytes, cudaStream_t s) {
          return reduce(d, o, cptr(in), mptr(out), n, d_temp, bytes, s);
        });
      },
      "dtype"_a, "op"_a, "d_in"_a, "d_out"_a, "n"_a, "temp"_a, "temp_bytes"_a, "mode"_a, "stream"_a, "device"_a);

  m.def(
      "scan",
      [](int t, int op, bool exclusive, nb::object init, std::uintptr_t in, std::uintptr_t out, std::int64_t n,
         std::uintptr_t temp, std::size_t temp_bytes, int mode, std::uintptr_t stream, int device) {
        const dtype d = to_dtype(t);
        const op_code o = to_op(op);
        const scalar s = to_scalar(accumulator(d, o), init);  // init, as the accumulator type
        return run("scan", mode, temp, temp_bytes, device, stream, [&](void* d_temp, std::size_t& bytes, cudaStream_t st) {
          return scan(d, o, exclusive, s, cptr(in), mptr(out), n, d_temp, bytes, st);
        });
      },
      "dtype"_a, "op"_a, "exclusive"_a, "init"_a, "d_in"_a, "d_out"_a, "n"_a, "temp"_a, "temp_bytes"_a, "mode"_a,
      "stream"_a, "device"_a);

  m.def(
      "sort",
      [](int key, std::uintptr_t keys_in, std::uintptr_t keys_out, int value_bytes, std::uintptr_t values_in,
         std::uintptr_t values_out, std::int64_t n, bool descending, int begin_bit, int end_bit, std::uintptr_t temp,
         std::size_t temp_bytes, int mode, std::uintptr_t stream, int device) {
        const dtype k = to_dtype(key);
        if (value_bytes != 0 && value_bytes != 4 && value_bytes != 8) throw nb::value_error("bad value size");
        return run("sort", mode, temp, temp_bytes, device, stream, [&](void* d_temp, std::size_t& bytes, cudaStream_t s) {
          return sort(k, cptr(keys_in), mptr(keys_out), value_bytes, cptr(values_in), mptr(values_out), n, descending,
                      begin_bit, end_bit, d_temp, bytes, s);
        });
      },
      "key_dtype"_a, "keys_in"_a, "keys_out"_a, "value_bytes"_a, "values_in"_a, "values_out"_a, "n"_a,
      "descending"_a, "begin_bit"_a, "end_bit"_a, "temp"_a, "temp_bytes"_a, "mode"_a, "stream"_a, "device"_a);

  m.def(
      "linear_recurrence",
      [](int t, std::uintptr_t a, std::uintptr_t b, std::uintptr_t x, std::uintptr_t final_states, std::uintptr_t x0s,
         double x0, int layout, std::int64_t batch, std::int64_t length, std::int64_t channels, std::uintptr_t offsets,
         bool reverse, std::uintptr_t temp, std::size_t temp_bytes, int mode, std::uintptr_t stream, int device) {
        const dtype d = to_dtype(t);
        const recurrence_shape shape = to_recurrence_shape(layout, batch, length, channels, offsets);
        return run("linear_recurrence", mode, temp, temp_bytes, device, stream,
                   [&](void* d_temp, std::size_t& bytes, cudaStream_t s) {
                     return linear_recurrence(d, cptr(a), cptr(b), mptr(x), mptr(final_states), cptr(x0s), x0, shape,
                                              reverse, d_temp, bytes, s);
                   });
      },
      "dtype"_a, "a"_a, "b"_a, "x"_a, "final"_a, "x0s"_a, "x0"_a, "layout"_a, "batch"_a, "length"_a, "channels"_a,
      "offsets"_a, "reverse"_a, "temp"_a, "temp_bytes"_a, "mode"_a, "stream"_a, "device"_a);

  m.def(
      "linear_recurrence_backward",
      [](int t, std::uintptr_t a, std::uintptr_t x, std::uintptr_t grad_x, std::uintptr_t grad_a,
         std::uintptr_t grad_b, std::uintptr_t grad_x0, std::uintptr_t x0s, int layout, std::int64_t batch,
         std::int64_t length, std::int64_t channels, std::uintptr_t offsets, std::uintptr_t temp,
         std::size_t temp_bytes, int mode, std::uintptr_t stream, int device) {
        const dtype d = to_dtype(t);
        const recurrence_shape shape = to_recurrence_shape(layout, batch, length, channels, offsets);
        return run("linear_recurrence_backward", mode, temp, temp_bytes, device, stream,
                   [&](void* d_temp, std::size_t& bytes, cudaStream_t s) {
                     return linear_recurrence_backward(d, cptr(a), cptr(x), cptr(grad_x), mptr(grad_a), mptr(grad_b),
                                                       mptr(grad_x0), cptr(x0s), shape, d_temp, bytes, s);
                   });
      },
      "dtype"_a, "a"_a, "x"_a, "grad_x"_a, "grad_a"_a, "grad_b"_a, "grad_x0"_a, "x0s"_a, "layout"_a, "batch"_a,
      "length"_a, "channels"_a, "offsets"_a, "temp"_a, "temp_bytes"_a, "mode"_a, "stream"_a, "device"_a);

  m.def(
      "select",
      [](int t, std::uintptr_t in, std::uintptr_t flags, nb::object lo, nb::object hi, std::uintptr_t out,
         std::uintptr_t indices, std::uintptr_t count, std::int64_t n, std::uintptr_t temp, std::size_t temp_bytes,
         int mode, std::uintptr_t stream, int device) {
        const dtype d = to_dtype(t);
        const scalar low = to_scalar(d, lo), high = to_scalar(d, hi);
        return run("select", mode, temp, temp_bytes, device, stream, [&](void* d_temp, std::size_t& bytes, cudaStream_t s) {
          return select(d, cptr(in), cptr(flags), low, high, mptr(out), i64ptr(indices), i64ptr(count), n, d_temp,
                        bytes, s);
        });
      },
      "dtype"_a, "d_in"_a, "d_flags"_a, "lo"_a, "hi"_a, "d_out"_a, "d_indices"_a, "d_count"_a, "n"_a, "temp"_a,
      "temp_bytes"_a, "mode"_a, "stream"_a, "device"_a);

  m.def(
      "unique_consecutive",
      [](int t, std::uintptr_t in, std::uintptr_t out, std::uintptr_t run_lengths, std::uintptr_t count,
         std::int64_t n, std::uintptr_t temp, std::size_t temp_bytes, int mode, std::uintptr_t stream, int device) {
        const dtype d = to_dtype(t);
        return run("unique_consecutive", mode, temp, temp_bytes, device, stream,
                   [&](void* d_temp, std::size_t& bytes, cudaStream_t s) {
                     return unique_consecutive(d, cptr(in), mptr(out), i64ptr(run_lengths), i64ptr(count), n, d_temp,
                                               bytes, s);
                   });
      },
      "dtype"_a, "d_in"_a, "d_out"_a, "d_run_lengths"_a, "d_count"_a, "n"_a, "temp"_a, "temp_bytes"_a, "mode"_a,
      "stream"_a, "device"_a);

  m.def(
      "partition_two_way",
      [](int t, std::uintptr_t in, std::uintptr_t out, std::uintptr_t counts, std::int64_t n, nb::object lo,
         nb::object hi, bool stable, std::uintptr_t temp, std::size_t temp_bytes, int mode, std::uintptr_t stream,
         int device) {
        const dtype d = to_dtype(t);
        const scalar low = to_scalar(d, lo), high = to_scalar(d, hi);
        return run("partition", mode, temp, temp_bytes, device, stream, [&](void* d_temp, std::size_t& bytes, cudaStream_t s) {
          return partition_two_way(d, cptr(in), mptr(out), i64ptr(counts), n, low, high, stable, d_temp, bytes, s);
        });
      },
      "dtype"_a, "d_in"_a, "d_out"_a, "d_counts"_a, "n"_a, "lo"_a, "hi"_a, "stable"_a, "temp"_a, "temp_bytes"_a,
      "mode"_a, "stream"_a, "device"_a);

  m.def(
      "partition_three_way",
      [](int t, std::uintptr_t in, std::uintptr_t out, std::uintptr_t counts, std::int64_t n, nb::object pivot,
         bool stable, std::uintptr_t temp, std::size_t temp_bytes, int mode, std::uintptr_t stream, int device) {
        const dtype d = to_dtype(t);
        const scalar p = to_scalar(d, pivot);
        return run("partition", mode, temp, temp_bytes, device, stream, [&](void* d_temp, std::size_t& bytes, cudaStream_t s) {
          return partition_three_way(d, cptr(in), mptr(out), i64ptr(counts), n, p, stable, d_temp, bytes, s);
        });
      },
      "dtype"_a, "d_in"_a, "d_out"_a, "d_counts"_a, "n"_a, "pivot"_a, "stable"_a, "temp"_a, "temp_bytes"_a, "mode"_a,
      "stream"_a, "device"_a);

  m.def(
      "quicksort",
      [](int t, std::uintptr_t in, std::uintptr_t out, std::int64_t n, bool descending, std::uintptr_t temp,
         std::size_t temp_bytes, int mode, std::uintptr_t stream, int device) {
        const dtype d = to_dtype(t);
        return run("quicksort", mode, temp, temp_bytes, device, stream, [&](void* d_temp, std::size_t& bytes, cudaStream_t s) {
          return quicksort(d, cptr(in), mptr(out), n, descending, d_temp, bytes, s);
        });
      },
      "dtype"_a, "d_in"_a, "d_out"_a, "n"_a, "descending"_a, "temp"_a, "temp_bytes"_a, "mode"_a, "stream"_a,
      "device"_a);

  m.def(
      "norm",
      [](int kind, int t, int acc, std::uintptr_t x, std::uintptr_t y, std::uintptr_t out, std::int64_t n,
         std::uintptr_t temp, std::size_t temp_bytes, int mode, std::uintptr_t stream, int device) {
        const norm_kind k = to_norm(kind);
        const dtype d = to_dtype(t), a = to_dtype(acc);
        return run("norm", mode, temp, temp_bytes, device, stream, [&](void* d_temp, std::size_t& bytes, cudaStream_t s) {
          return norm(k, d, a, cptr(x), cptr(y), mptr(out), n, d_temp, bytes, s);
        });
      },
      "kind"_a, "dtype"_a, "acc_dtype"_a, "d_x"_a, "d_y"_a, "d_out"_a, "n"_a, "temp"_a, "temp_bytes"_a, "mode"_a,
      "stream"_a, "device"_a);

  m.def("read_int64", &read_int64, "what"_a, "ptr"_a, "stream"_a, "device"_a,
        "The int64 at a device address, after `stream`'s work so far (synchronises the stream).");
  m.def("copy_async", &copy_async, "what"_a, "dst"_a, "src"_a, "nbytes"_a, "stream"_a, "device"_a,
        "Copy nbytes of device memory from src to dst, enqueued on `stream`.");

  m.def("accumulator", [](int t, int op) { return static_cast<int>(accumulator(to_dtype(t), to_op(op))); },
        "dtype"_a, "op"_a, "The dtype code a reduction or scan of `dtype` with `op` returns.");

  m.def(
      "build_info",
      []() {
        nb::dict d;
        d["cuda_architectures"] = SCANLAB_PY_CUDA_ARCHITECTURES;
        d["cuda_runtime_built"] = CUDART_VERSION;
        d["cuda_runtime_linked"] = "static";
#ifdef SCANLAB_PY_XLA_FFI
        d["xla_ffi"] = true;
#else
        d["xla_ffi"] = false;
#endif
        return d;
      },
      "What the extension was built with (no CUDA call).");
  m.def(
      "xla_ffi_targets",
      []() {
        nb::dict d;
#ifdef SCANLAB_PY_XLA_FFI
        // Unnamed capsules, as jax.ffi.register_ffi_target takes them (jax.ffi.pycapsule
        // would build the same through ctypes, changing ctypes.pythonapi.PyCapsule_New's
        // argtypes for the whole process on the way).
        for (const auto& [name, address] : xla_ffi_handlers()) {
          d[name.c_str()] = nb::capsule(reinterpret_cast<const void*>(address));
        }
#endif
        return d;
      },
      "The XLA FFI handlers (target name -> PyCapsule) for scanlab.jax; empty where the extension "
      "was built without jaxlib's headers.");
  m.def(
      "runtime_info",
      []() {
        int runtime = 0, driver = 0, devices = 0;
        nb::dict d;
        d["runtime_version"] = cudaRuntimeGetVersion(&runtime) == cudaSuccess ? runtime : -1;
        d["driver_version"] = cudaDriverGetVersion(&driver) == cudaSuccess ? driver : -1;
        const cudaError_t status = cudaGetDeviceCount(&devices);
        d["device_count"] = status == cudaSuccess ? devices : 0;
        d["device_error"] = status == cudaSuccess ? std::string() : std::string(cudaGetErrorName(status));
        (void)cudaGetLastError();
        return d;
      },
      "CUDA runtime, driver and device count as this extension sees them (CUDA calls).");
}
