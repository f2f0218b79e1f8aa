// scanlab-reduce's streaming path (inputs larger than GPU memory, or --device-memory): one
// slice of a host array reduced on the GPU by scanlab::streaming::transform_reduce, behind a
// plain C++ interface. main.cpp runs the slices (progress, interruption, the CPU reference);
// one translation unit per dtype (reduce_stream_<type>.cu, from reduce_stream_type.cu.in).
#pragma once

#include "common/operators.hpp"
#include "common/stream_workspace.hpp"

#include <cstdint>

namespace scanlab::reduce_app {

// acc = op(acc, x[0], ..., x[m - 1]) in the result type (ops::result_t: 64-bit integer sums
// and products, floats, min and max in their type), x on the host (pageable or pinned).
// Throws cuda_error.
template <class T, ops::op_id Op>
void stream_reduce(stream_workspace& ws, const T* x, std::int64_t m, ops::result_t<T, Op>& acc);

}  // namespace scanlab::reduce_app
