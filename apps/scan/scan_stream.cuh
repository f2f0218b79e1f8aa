// scanlab-scan's streaming path, GPU side (scan_stream.hpp); included by the generated
// scan_stream_minmax_<type>.cu and scan_stream_sumprod_<type>.cu.
#pragma once

#include "scan/scan_stream.hpp"

#include "common/operators.cuh"

#include <scanlab/error.hpp>
#include <scanlab/streaming/scan.cuh>

namespace scanlab::scan_app {

template <class Acc, ops::op_id Op>
void stream_scan(stream_workspace& ws, const Acc* in, Acc* out, std::int64_t m, Acc init, bool exclusive) {
  const ops::functor_t<Op> op{};
  if (exclusive) {
    SCANLAB_CHECK(streaming::exclusive_scan(ws.workspace(), in, out, m, init, op));
  } else {
    SCANLAB_CHECK(streaming::inclusive_scan_init(ws.workspace(), in, out, m, init, op));
  }
}

}  // namespace scanlab::scan_app

#define SCANLAB_SCAN_STREAM_INSTANTIATE_OP(T, OP)                                                   \
  template void scanlab::scan_app::stream_scan<T, scanlab::ops::op_id::OP>(scanlab::stream_workspace&, \
                                                                          const T*, T*, std::int64_t, T, bool);
#define SCANLAB_SCAN_STREAM_INSTANTIATE_MINMAX(T) \
  SCANLAB_SCAN_STREAM_INSTANTIATE_OP(T, min)      \
  SCANLAB_SCAN_STREAM_INSTANTIATE_OP(T, max)
#define SCANLAB_SCAN_STREAM_INSTANTIATE_SUMPROD(T) \
  SCANLAB_SCAN_STREAM_INSTANTIATE_OP(T, sum)       \
  SCANLAB_SCAN_STREAM_INSTANTIATE_OP(T, prod)
