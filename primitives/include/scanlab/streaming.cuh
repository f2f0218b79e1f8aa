// scanlab/streaming.cuh: out-of-core forms of reduce, the scans, compaction and sort for HOST
// arrays of any length, within a device-memory budget (primitives/docs/streaming.md).
//
//   scanlab::streaming::workspace ws(std::size_t{2} << 30);    // at most 2 GiB of device memory
//   SCANLAB_CHECK(scanlab::streaming::reduce_sum(ws, h_x, n, total));
//   SCANLAB_CHECK(scanlab::streaming::inclusive_sum(ws, h_x, h_x, n));              // in place
//   SCANLAB_CHECK(scanlab::streaming::select_if(ws, h_x, h_y, n, kept, is_positive{}));
//   SCANLAB_CHECK(scanlab::streaming::sort_keys(ws, h_x, h_x, n));   // external sort, in place
//
// Every call is host-synchronous and returns cudaError_t; the chunks flow through one
// pipeline (streaming/pipeline.cuh): a ring of device buffers, one stream per buffer, copies
// in both directions overlapped with the in-memory primitive's compute.
#pragma once

#include <scanlab/streaming/pipeline.cuh>
#include <scanlab/streaming/reduce.cuh>
#include <scanlab/streaming/scan.cuh>
#include <scanlab/streaming/select.cuh>
#include <scanlab/streaming/sort.cuh>
