// scanlab/detail/mix64.hpp: splitmix64's finaliser, one definition for host and device code
// (the quicksort's sample positions, the dataset generator, the benchmarks' random fills,
// the quicksort adversary). Plain C++: host-only code may include it without CUDA.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define SCANLAB_HOST_DEVICE __host__ __device__
#else
#define SCANLAB_HOST_DEVICE
#endif

namespace scanlab::detail {

// A bijection of 64-bit words in which every input bit affects every output bit.
SCANLAB_HOST_DEVICE constexpr std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

}  // namespace scanlab::detail
