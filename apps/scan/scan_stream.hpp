// scanlab-scan's streaming path (inputs larger than GPU memory, or --device-memory): one slice
// of a host array scanned on the GPU by the streaming library, behind a plain C++ interface.
// main.cpp runs the slices (conversion to the result type, the carry, progress, the CPU
// reference, the output file). The library scans in one type (input, output and accumulator),
// so a slice is first converted to the result type on the host where that differs (int32 data
// summed in int64: into the output buffer, then scanned there in place); hence one translation
// unit per result type: min and max for every dtype (scan_stream_minmax_<type>.cu), sum and
// prod for the four result types they have (scan_stream_sumprod_<type>.cu: int64, uint64,
// float32, float64).
#pragma once

#include "common/operators.hpp"
#include "common/stream_workspace.hpp"

#include <cstdint>

namespace scanlab::scan_app {

// out[i] = init op in[0] op ... op in[i] (inclusive), or init op in[0] op ... op in[i - 1]
// (exclusive; out[0] = init), for i < m; in and out on the host, out == in allowed. Throws
// cuda_error.
template <class Acc, ops::op_id Op>
void stream_scan(stream_workspace& ws, const Acc* in, Acc* out, std::int64_t m, Acc init, bool exclusive);

}  // namespace scanlab::scan_app
