// The XLA FFI handlers of jax_ffi.cpp (built where the jaxlib headers are found): their
// target names and addresses, for scanlab.jax to register with jax.ffi.register_ffi_target.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace scanlab_py {

std::vector<std::pair<std::string, std::uintptr_t>> xla_ffi_handlers();

}  // namespace scanlab_py
