// scanlab/mix64.hpp: splitmix64's finaliser, one definition for host and device code (the
// quicksort's sample positions, the dataset generator, the benchmarks' random fills, the
// quicksort adversary). Plain C++: host-only code may include it without CUDA.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define SCANLAB_MIX64_HOST_DEVICE __host__ __device__
#else
#define SCANLAB_MIX64_HOST_DEVICE
#endif

namespace scanlab {

// A bijection of 64-bit words in which every input bit affects every output bit (not a
// cryptographic hash: its inverse is easy to compute). splitmix64's output i for a seed s is
// mix64(s + (i + 1) * 0x9e3779b97f4a7c15).
SCANLAB_MIX64_HOST_DEVICE constexpr std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

}  // namespace scanlab

#undef SCANLAB_MIX64_HOST_DEVICE
