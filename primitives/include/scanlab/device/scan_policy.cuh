// Tuning of the production scan for sm_90 (H100: 132 SMs, 50 MB L2, about 3 TB/s).
//
// A tile is block_threads x items_per_thread elements. Each thread holds its items
// as chunks of 16 bytes (4 ints, 2 doubles, 1 16-byte struct), loaded and stored with
// one 16-byte access each, lane-contiguous across the warp (fully coalesced, no
// shared-memory transpose).
//
// Why these numbers (H100 SXM, CUDA 13.0, int32 inclusive sum, median of 20 with the L2
// flushed, microseconds; CUB's InclusiveSum: 8.5 / 12.6 / 64.2 / 876 at the same sizes):
//
//   threads x items, blocks/SM, prefetch   2^16    2^20   2^24+12345    2^28
//   256 x 32, 2, yes   (chosen)             7.2     9.9      67.6       1002   (float: 963)
//   256 x 16, 3, yes                        6.7    10.0      73.8       1089   (float: 1010)
//   256 x 24, 2, yes                        7.2    10.1      74.7       1128
//   128 x 16, 6, yes                        6.3    10.5      76.9       1149
//   256 x 16, 4, no                         6.5     9.8      79.7       1157
//   256 x  8, 6, yes                        6.6    11.3      99.1       1483   (an earlier run)
//
//   * The scan is memory-bound: a thread has tens of instructions per item to spend, so
//     what matters is bytes in flight (Little's law: ~3 TB/s x ~1 us = ~3 MB, ~23 KB per
//     SM) and how long a block idles while it looks back.
//   * Prefetch (the next tile's loads issued before the look-back) is worth ~10% at large
//     sizes; it doubles the item registers, hence 2 blocks of 256 (128 registers each).
//   * 128 bytes per thread (eight 16-byte loads) and 256 threads: 32 KB tiles, half as
//     many look-backs as 16 KB tiles; the price is ~0.5 us at 2^16, still well ahead of CUB.
//     What was tried and did not help (tile state, look-back, shared-memory staging) is
//     in primitives/docs/scan.md.
//   * Other element sizes keep the same bytes per thread (an 8-byte type: 16 items).
//     Types that are not a divisor or multiple of 16 bytes (e.g. 12-byte structs) use
//     element-wise loads.

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

// Bytes per thread the sm_90 tuning aims at.
inline constexpr int scan_bytes_per_thread_sm90 = 128;

template <class T>
struct scan_tuning_sm90 {
  static constexpr int chunk = scan_chunk_items<T>;
  static constexpr int raw_items = static_cast<int>(scan_bytes_per_thread_sm90 / sizeof(T));
  // At least one chunk, and a whole number of chunks.
  static constexpr int items = raw_items < chunk ? chunk : raw_items / chunk * chunk;
  // Two tiles in registers (prefetch): 2 resident blocks of 256 leave 128 registers per thread.
  static constexpr int min_blocks = 2;
  using policy = scan_policy<256, (items > 0 ? items : 1), min_blocks>;
};

template <class T>
using default_scan_policy = typename scan_tuning_sm90<T>::policy;

}  // namespace scanlab::device
