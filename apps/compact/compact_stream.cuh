// scanlab-compact's streaming path, GPU side (compact_stream.hpp); included once per dtype by
// the generated compact_stream_<type>.cu.
#pragma once

#include "compact/compact_stream.hpp"

#include <scanlab/error.hpp>
#include <scanlab/streaming/select.cuh>

namespace scanlab::compact_app {

template <class T>
std::int64_t stream_select(stream_workspace& ws, const value_test<T>& test, const T* in, T* out, std::int64_t m) {
  return with_gpu_test(test, [&](auto gpu_test) {
    std::int64_t kept = 0;
    SCANLAB_CHECK(streaming::select_if(ws.workspace(), in, out, m, kept, gpu_test));
    return kept;
  });
}

}  // namespace scanlab::compact_app

#define SCANLAB_COMPACT_STREAM_INSTANTIATE(T)                                                                \
  template std::int64_t scanlab::compact_app::stream_select<T>(                                             \
      scanlab::stream_workspace&, const scanlab::compact_app::value_test<T>&, const T*, T*, std::int64_t);
