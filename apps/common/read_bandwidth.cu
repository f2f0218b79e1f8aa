// The read-only bandwidth ceiling of the benchmark harness (bench::harness::read_gbps):
// a kernel that reads a buffer with 16-byte loads and keeps only a value that depends
// on every word, so nothing it reads is written back. Reductions and norms are compared
// with it instead of with memcpy, which also writes.
#include <scanlab/error.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

namespace scanlab::bench::detail {

namespace {

constexpr int read_block_threads = 256;
constexpr int read_unroll = 4;  // independent loads in flight per thread

__global__ void __launch_bounds__(read_block_threads) read_kernel(const uint4* __restrict__ in, std::size_t words,
                                                                  unsigned* __restrict__ sink) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned acc = 0;
  for (; i + (read_unroll - 1) * stride < words; i += read_unroll * stride) {
    uint4 v[read_unroll];
#pragma unroll
    for (int u = 0; u < read_unroll; ++u) v[u] = __ldcs(in + i + u * stride);
#pragma unroll
    for (int u = 0; u < read_unroll; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < words; i += stride) {
    const uint4 v = __ldcs(in + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  // The fill makes acc predictable to us, never to the compiler: one word per block.
  if (acc == 0x9e3779b9u) sink[blockIdx.x] = acc;
}

}  // namespace

int read_blocks(int device) {
  int sms = 0, per_sm = 0;
  SCANLAB_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  SCANLAB_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, read_kernel, read_block_threads, 0));
  return std::max(sms * per_sm, 1);
}

void enqueue_read(const void* d_in, std::size_t bytes, unsigned* d_sink, int blocks, cudaStream_t stream) {
  read_kernel<<<blocks, read_block_threads, 0, stream>>>(static_cast<const uint4*>(d_in), bytes / sizeof(uint4),
                                                         d_sink);
  SCANLAB_CHECK_LAUNCH();
}

}  // namespace scanlab::bench::detail
