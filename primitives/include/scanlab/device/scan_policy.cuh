// Tuning of the production scan for sm_90 (H100: 132 SMs, 50 MB L2, about 3 TB/s).
//
// A tile is block_threads x items_per_thread elements. Each thread holds its items
// as chunks of 16 bytes (4 ints, 2 doubles, 1 16-byte struct), loaded and stored with
// one 16-byte access each, lane-contiguous across the warp (fully coalesced, no
// shared-memory transpose).
//
// Why these numbers (H100 SXM, CUDA 13.0, int32 inclusive sum, median of 20 with the L2
// flushed, microseconds, with the deferred look-back of scan_kernel.cuh; CUB's
// InclusiveSum: 8.4 / 12.4 / 64.4 / 223 / 877 at the same sizes):
//
//   threads x items, blocks/SM, prefetch   2^16   2^20  2^24+12345   2^26    2^28
//   256 x 32, 2, yes   (chosen)             6.7    9.6     54.1      192.4   750.5 (float 746.5)
//   128 x 32, 4, yes                        6.4    9.6     53.7      194.6   760.2
//   256 x 32, 3, no                         6.6    9.7     56.1      194.8   753.5
//   256 x 24, 2, yes                        7.2   10.0     54.7      196.3   764.0
//   256 x 16, 3, yes                        6.4    9.9     55.4      198.0   772.7
//   512 x 16, 2, yes                        7.0   10.5     58.5      206.0   796.4
//
//   * The scan is memory-bound: a thread has tens of instructions per item to spend, so
//     what matters is bytes in flight (Little's law: ~3 TB/s x ~1 us = ~3 MB, ~23 KB per
//     SM) and that no block idles on its look-back (the deferral takes care of that:
//     before it, 256 x 32 took 1002 us and 256 x 16 1089 us at 2^28).
//   * Prefetch (the next tile's loads issued before the look-back) doubles the item
//     registers, hence 2 blocks of 256 (128 registers each); the parked tile lives in
//     shared memory (32 KB per block).
//   * 128 bytes per thread (eight 16-byte loads) and 256 threads: 32 KB tiles; the shapes
//     are now within 6 % of each other at 2^28 and the big tiles still lead.
//   * Other element sizes keep the same bytes per thread (an 8-byte type: 16 items).
//     Types that are not a divisor or multiple of 16 bytes (e.g. 12-byte structs) use
//     element-wise loads.
//   * Types under 4 bytes are the exception: an item takes a 32-bit register once
//     unpacked, so 128 int8 items a thread (twice, with prefetch) spilled 1480 bytes of
//     stack and ran at 219 GB/s. They take at most 64 items and no prefetch (H200, 2^28 +
//     12345 items, min scan, median of 15, L2 flushed; CUB's InclusiveScan: int8 0.529 ms):
//
//     int8:  256x128 prefetch (was) 2.451 ms, 256x64 0.395, 512x64 0.390, 128x64 (4/SM)
//            0.396, 256x48 (3/SM) 0.407, 256x96 0.415, 256x32 0.512, 256x64 prefetch 0.496
//     int16: 256x64 prefetch (was) 0.626 ms, 256x64 0.422, 256x32 (4/SM) 0.427, 256x32
//            0.479, 256x64 at 3/SM 1.060

#pragma once

#include <cstddef>

namespace scanlab::device {

// One tile shape: threads per block, items per thread, the resident blocks per SM that
// __launch_bounds__ should make room for, and whether a block loads its next tile while
// it looks back and stores the current one (twice the registers for items).
template <int BlockThreads, int ItemsPerThread, int MinBlocksPerSm, bool Prefetch = true>
struct scan_policy {
  static constexpr int block_threads = BlockThreads;
  static constexpr int items_per_thread = ItemsPerThread;
  static constexpr int min_blocks_per_sm = MinBlocksPerSm;
  static constexpr bool prefetch = Prefetch;
  static constexpr int tile_items = BlockThreads * ItemsPerThread;
};

// Elements per 16-byte chunk: the unit of a vector load (1 for types that are not a
// divisor of 16 bytes).
template <class T>
inline constexpr int scan_chunk_items = (sizeof(T) < 16 && 16 % sizeof(T) == 0) ? static_cast<int>(16 / sizeof(T)) : 1;

// The shape for a byte budget per thread: 256 threads, at least one chunk and a whole
// number of chunks per thread, two resident blocks per SM (two tiles in registers with
// prefetch: 128 registers per thread), one parked tile of the same size in shared memory.
// Types under 4 bytes: at most 64 items (one register each) and no prefetch (above).
template <class T, int BytesPerThread>
struct scan_shape {
  static constexpr bool narrow = sizeof(T) < 4;
  static constexpr int chunk = scan_chunk_items<T>;
  static constexpr int budget_items = static_cast<int>(BytesPerThread / sizeof(T));
  static constexpr int raw_items = narrow && budget_items > 64 ? 64 : budget_items;
  static constexpr int items = raw_items < chunk ? chunk : raw_items / chunk * chunk;
  using policy = scan_policy<256, (items > 0 ? items : 1), 2, !narrow>;
};

// The default tuning table (scanlab/arch.cuh): the Hopper shape above (128 bytes per thread,
// a 32 KB parked tile) everywhere it fits two blocks per SM, which is every family but
// Turing (64 KB of shared memory per SM): 64 bytes per thread there. Only Hopper was
// measured; the others are chosen to fit (see primitives/docs/scan.md).
template <class T>
struct scan_tuning {
  template <int Family>
  struct at {
    using type = typename scan_shape<T, Family == 75 ? 64 : 128>::policy;
  };
};

template <class T>
using default_scan_policy = scan_tuning<T>;

}  // namespace scanlab::device
