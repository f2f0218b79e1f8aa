// scanlab-reduce's streaming path, GPU side (reduce_stream.hpp); included once per dtype by
// the generated reduce_stream_<type>.cu.
#pragma once

#include "reduce/reduce_stream.hpp"

#include "common/operators.cuh"

#include <scanlab/error.hpp>
#include <scanlab/streaming/reduce.cuh>

namespace scanlab::reduce_app {

template <class T, ops::op_id Op>
void stream_reduce(stream_workspace& ws, const T* x, std::int64_t m, ops::result_t<T, Op>& acc) {
  using Acc = ops::result_t<T, Op>;
  // acc goes in as the initial value: the running value carried from the previous slice.
  SCANLAB_CHECK(streaming::transform_reduce(ws.workspace(), x, m, acc, acc, ops::functor_t<Op>{},
                                            ops::to_accumulator<Acc>{}));
}

}  // namespace scanlab::reduce_app

#define SCANLAB_REDUCE_STREAM_INSTANTIATE(T)                                                                     \
  template void scanlab::reduce_app::stream_reduce<T, scanlab::ops::op_id::sum>(                               \
      scanlab::stream_workspace&, const T*, std::int64_t, scanlab::ops::result_t<T, scanlab::ops::op_id::sum>&);  \
  template void scanlab::reduce_app::stream_reduce<T, scanlab::ops::op_id::prod>(                              \
      scanlab::stream_workspace&, const T*, std::int64_t, scanlab::ops::result_t<T, scanlab::ops::op_id::prod>&); \
  template void scanlab::reduce_app::stream_reduce<T, scanlab::ops::op_id::min>(                               \
      scanlab::stream_workspace&, const T*, std::int64_t, scanlab::ops::result_t<T, scanlab::ops::op_id::min>&);  \
  template void scanlab::reduce_app::stream_reduce<T, scanlab::ops::op_id::max>(                               \
      scanlab::stream_workspace&, const T*, std::int64_t, scanlab::ops::result_t<T, scanlab::ops::op_id::max>&);
