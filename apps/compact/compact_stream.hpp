// scanlab-compact's streaming path (inputs larger than GPU memory, or --device-memory): one
// slice of a host array compacted on the GPU by scanlab::streaming::select_if, behind a plain
// C++ interface. main.cpp runs the slices (the kept count, progress, the CPU reference, the
// output file). The value predicates only (--gt, --lt, --between, --nonzero, --finite, --odd,
// --even), in their GPU form (predicate.hpp: with_gpu_test); one translation unit per dtype
// (compact_stream_<type>.cu, from compact_stream_type.cu.in).
#pragma once

#include "common/stream_workspace.hpp"
#include "compact/predicate.hpp"

#include <cstdint>

namespace scanlab::compact_app {

// Writes to out the in[i] (i < m) that `test` keeps, in order; returns their count. in and
// out on the host (out == in allowed; out needs room for m items). Throws cuda_error.
template <class T>
std::int64_t stream_select(stream_workspace& ws, const value_test<T>& test, const T* in, T* out, std::int64_t m);

}  // namespace scanlab::compact_app
