// The DLPack data structures (DLPack 0.8 "dltensor" and 1.x "dltensor_versioned" capsules),
// written out from the DLPack specification's C ABI: the layout every producer and
// consumer (PyTorch, CuPy, JAX, NumPy) agrees on. Only what the bindings use.
#pragma once

#include <cstdint>

namespace scanlab_py::dlpack {

enum device_type : std::int32_t {
  cpu = 1,
  cuda = 2,
  cuda_host = 3,     // pinned host memory
  cuda_managed = 13,
};

enum type_code : std::uint8_t {
  int_code = 0,
  uint_code = 1,
  float_code = 2,
  opaque_handle = 3,
  bfloat_code = 4,
  complex_code = 5,
  bool_code = 6,
};

struct device_id_pair {
  std::int32_t device_type;
  std::int32_t device_id;
};

struct data_type {
  std::uint8_t code;
  std::uint8_t bits;
  std::uint16_t lanes;
};

struct tensor {
  void* data;
  device_id_pair device;
  std::int32_t ndim;
  data_type dtype;
  std::int64_t* shape;
  std::int64_t* strides;  // in elements; nullptr: compact row-major
  std::uint64_t byte_offset;
};

// "dltensor" capsules.
struct managed_tensor {
  tensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(managed_tensor* self);
};

struct version_pair {
  std::uint32_t major;
  std::uint32_t minor;
};

inline constexpr std::uint64_t flag_read_only = 1ull << 0;
inline constexpr std::uint64_t flag_is_copied = 1ull << 1;

// "dltensor_versioned" capsules (DLPack 1.0 and later).
struct managed_tensor_versioned {
  version_pair version;
  void* manager_ctx;
  void (*deleter)(managed_tensor_versioned* self);
  std::uint64_t flags;
  tensor dl_tensor;
};

}  // namespace scanlab_py::dlpack
