// The suites' random inputs, generated on the device: element i is value(mix64(seed + i)), so
// a row's input depends only on its seed (splitmix64's finaliser: every input bit affects
// every output bit).
#pragma once

#include "common/device_buffer.hpp"

#include <scanlab/error.hpp>
#include <scanlab/mix64.hpp>

#include <cstdint>

namespace scanlab::bench {

template <class T, class Value>
__global__ void fill_hashed_kernel(T* out, std::int64_t n, std::uint64_t seed, Value value) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = value(scanlab::mix64(seed + static_cast<std::uint64_t>(i)));
  }
}

// Fills `buffer` as above (value: a functor from the 64-bit hash to T) and waits for it.
template <class T, class Value>
void fill_hashed(device_buffer<T>& buffer, std::uint64_t seed, Value value) {
  if (buffer.size() == 0) return;
  fill_hashed_kernel<<<1024, 256>>>(buffer.data(), buffer.size(), seed, value);
  SCANLAB_CHECK_LAUNCH();
  SCANLAB_CHECK(cudaDeviceSynchronize());
}

}  // namespace scanlab::bench
