// Tuning of the production reduction (scanlab::reduce and friends).
#pragma once

namespace scanlab::detail {

// Tuned for sm_90 (H100: 132 SMs, 2048 threads and 64K registers per SM, 50 MB L2,
// ~3.0 TB/s of HBM3 read bandwidth in practice). Used on every architecture: the
// reasoning (bytes in flight, a single resident wave) carries over.
//
// threads = 512, vectors_per_thread = 4, blocks_per_sm = 2:
//   A streaming read needs bandwidth x latency bytes in flight: ~3 TB/s x ~0.8 us
//   (loaded HBM latency) = ~2.4 MB over 132 SMs = ~18 KB per SM. Each thread issues
//   4 independent 16-byte loads per iteration (64 B), so 2 blocks x 512 threads keep
//   64 KB per SM in flight: three times the need, which absorbs latency spikes,
//   with ~40 registers per thread (occupancy is not the limit).
//   The grid is one resident wave (2 x 132 = 264 blocks), each block reading one
//   contiguous, equal share: no tail wave, and a grid small enough that the final
//   grid-wide barrier (264 arrivals) and the last step (264 partials, read by one
//   block) cost well under a microsecond.
//   4 loads per thread, not more: at 2^20 int32 the grid is 128 blocks doing one
//   iteration each; more loads per thread would mean fewer blocks, fewer SMs
//   pulling, and a longer critical path at the latency-bound sizes.
// scalar_items_per_thread = 8: non-pointer inputs (counting and transform
//   iterators) load one element at a time; 8 strided loads per iteration give the
//   same number of independent loads as 2 vectors of int32 (nothing is in memory
//   for a counting iterator anyway).
// single_block: inputs up to two tiles of this shape (512 threads x 8 vectors x 2
//   rounds = 128 KB, 2^15 int32) are reduced by a plain single-block launch; anything
//   larger is one cooperative launch of the grid above (see reduce.cuh for why
//   cooperative). Measured on the H100 (benchmark harness, int32 sum, median of 40,
//   microseconds; the cooperative grid forced at every size for comparison):
//       n      CUB   grid  1024x4  1024x8  512x8  512x16  256x16  256x8
//     2^12    4.00   7.50    4.48    4.96   4.35    4.67    4.35   4.29
//     2^14    6.99   6.13    4.72    4.96   4.48    4.80    4.80   5.31
//     2^15    6.78   6.14    5.31    4.99   5.14    5.30    5.79   7.23
//     2^16    7.25   5.98    6.43    5.78   6.30    6.46    7.55  11.01
//   512 x 8 is the best shape up to 2^14 (one memory round trip for 64 KB) and still
//   beats the grid at 2^15 in two rounds; at 2^16 the grid wins.
struct reduce_policy_sm90 {
  static constexpr int threads = 512;
  static constexpr int vectors_per_thread = 4;
  static constexpr int scalar_items_per_thread = 8;
  static constexpr int blocks_per_sm = 2;
  struct single_block {
    static constexpr int threads = 512;
    static constexpr int vectors_per_thread = 8;
    static constexpr int scalar_items_per_thread = 8;
    static constexpr int tiles = 2;  // rounds of threads x vectors_per_thread the single block may take
  };
};

// Segmented reduction: one block per segment. Segments are often short, so a
// smaller block wastes fewer idle threads; 4 vectors per thread as above.
struct segmented_reduce_policy_sm90 {
  static constexpr int threads = 256;
  static constexpr int vectors_per_thread = 4;
  static constexpr int scalar_items_per_thread = 8;
  static constexpr int blocks_per_sm = 8;
};

}  // namespace scanlab::detail
