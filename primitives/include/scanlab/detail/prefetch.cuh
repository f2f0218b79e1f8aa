// Asking L2 for data a block will load later, without registers or shared memory to hold
// it: the memory system stays busy further ahead than the loads in flight.
#pragma once

#include <cuda_runtime.h>

namespace scanlab::detail {

// One warp asks L2 for Bytes bytes at p (16-byte aligned; Bytes a multiple of 128). From
// sm_90 on, lane 0 issues one bulk prefetch; before sm_90 (no bulk prefetch) the lanes ask
// for the 128-byte lines, one each. A hint: nothing waits for it, nothing is guaranteed.
template <int Bytes>
__device__ __forceinline__ void warp_prefetch_l2(const void* p, int lane) {
  static_assert(Bytes % 128 == 0, "whole 128-byte lines");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (lane == 0) asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "n"(Bytes) : "memory");
#else
  const char* bytes = static_cast<const char*>(p);
  for (int line = lane; line < Bytes / 128; line += 32) {
    asm volatile("prefetch.L2 [%0];" ::"l"(bytes + line * 128) : "memory");
  }
#endif
}

}  // namespace scanlab::detail
