// Tuning of the production reduction (scanlab::reduce and friends).
#pragma once

#include <scanlab/arch.cuh>

#include <cstddef>

namespace scanlab::detail {

// Tuned for sm_90 (H100: 132 SMs, 2048 threads and 64K registers per SM, 50 MB L2,
// ~3.0 TB/s of HBM3 read bandwidth in practice). The same shape runs on every family
// (scanlab/arch.cuh; checked below, it is not a tuning table): its reasoning is bytes in
// flight and one resident wave, and both carry over. 2 blocks of 512 threads are 1024
// threads per SM, which every family holds (Turing exactly), at 64 registers a thread, with
// under 1 KB of shared memory; they keep 64 KB per SM in flight, against a need of
// bandwidth x latency / SMs of about 5 KB on a T4 (320 GB/s, 40 SMs), 13 KB on an A100,
// 5-10 KB on the 8.6/8.9/12.0 cards, 18 KB on the H100 and about 45 KB on a B200 (8 TB/s,
// 148 SMs: the margin shrinks from three times to one and a half, still no shortfall). The
// grid stays one resident wave on every GPU (resident_grid sizes it from the occupancy the
// device reports). Measured on the H100 only; not retuned elsewhere.
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
// tile: inputs up to 16 KB (256 threads x 4 vectors: 2^12 int32) go to a separate
//   straight-line kernel (reduce_tile_kernel: one round, 32-bit indices, every load
//   issued at once). The looping single-block kernel lost to CUB exactly where CUB is
//   at its best, 2^12 int32 = one full CUB tile (256 x 16 items): 4.4 vs 4.0 us.
//   Profiled (ncu, 2^12 int32, caches flushed): the looping kernel runs 3,684 warp
//   instructions in 3.81 us, CUB's 442 in 3.42 us, the tile kernel 908 in 3.17 us.
//   Measured on the H100 (int32 sum, median of 61, L2 flushed by a 2 x L2 memset
//   before each run, variants interleaved; microseconds; an empty kernel: 3.1):
//       n      CUB   looping  128x8  256x2  256x4  256x8  512x2  512x4
//     2^10    4.96    4.29    3.94   3.78   3.97   3.97   3.81   3.78
//     2^11    5.31    4.45    3.94   3.81   3.97   3.97   3.94   3.81
//     2^12    3.97    4.45    3.94    -     3.97   3.97   3.97   3.94
//     2^13    6.66    4.42     -      -      -     4.10    -     3.97
//   (float32: the same picture, 2^12: CUB 4.16, looping 4.67, 256x4 4.19.) At 2^12
//   every one-round shape ties CUB: the time is the launch, the code fetch and one
//   DRAM round trip (just after the flush's write-backs) for the data, which no
//   kernel shape changes; the shapes differ by less than the timer's ~0.16 us steps.
//   Among the shapes that take 2^12 in one round, 256 x 4 keeps 32 registers (128 x 8
//   needs 56) and 8 warps to combine (512 x 2 has 16). The preferred
//   shared-memory carveout (tried at 0, 25, 50 and 100 %) and __launch_bounds__ with
//   one block per SM made no difference; a cluster of 2 to 8 blocks sharing the tile
//   through distributed shared memory was slower (4.3-4.6 us at 2^12): its launch and
//   barrier cost more than the extra SMs' bandwidth saves. scanlab-bench reduce
//   (median of 20): 2^10 int32 3.79 vs CUB 4.53 us, 2^12 int32 3.97 vs 3.94, float
//   4.11 vs 4.03 (the looping kernel: 4.4 and 4.6).
struct reduce_policy_sm90 {
  static constexpr int threads = 512;
  static constexpr int vectors_per_thread = 4;
  static constexpr int scalar_items_per_thread = 8;
  static constexpr int blocks_per_sm = 2;
  struct tile {  // one round: n <= threads x vectors_per_thread vectors (16 KB)
    static constexpr int threads = 256;
    static constexpr int vectors_per_thread = 4;
    static constexpr int scalar_items_per_thread = 16;
  };
  struct single_block {
    static constexpr int threads = 512;
    static constexpr int vectors_per_thread = 8;
    static constexpr int scalar_items_per_thread = 8;
    static constexpr int tiles = 2;  // rounds of threads x vectors_per_thread the single block may take
  };
};

// Segmented reduction: one block per segment. Segments are often short, so a
// smaller block wastes fewer idle threads; 4 vectors per thread as above. blocks_per_sm is
// not promised to the compiler (segmented_reduce_kernel is bounded by its threads alone) nor
// used to size a grid: the SM holds what it holds (8 on 8.0 and 9.0 and newer datacentre
// parts, 6 on 8.6/8.9/12.0, 4 on Turing). The same shape on every family.
struct segmented_reduce_policy_sm90 {
  static constexpr int threads = 256;
  static constexpr int vectors_per_thread = 4;
  static constexpr int scalar_items_per_thread = 8;
  static constexpr int blocks_per_sm = 8;
};

// Shared memory of every reduction kernel: block_reduce's one T per warp (at most 32
// warps), bounded here for accumulators of up to 128 bytes.
inline constexpr std::size_t reduce_smem_bound = 32 * 128;

// Every family runs these shapes (arch::fits: threads, blocks and shared memory per SM, at
// least 64 registers a thread): the grid kernel's 2 blocks of 512 per SM (its
// __launch_bounds__), the single-block and tile kernels' one block, one segmented block.
static_assert(arch::all_families([](auto family) {
                constexpr int f = decltype(family)::value;
                using P = reduce_policy_sm90;
                return arch::fits(f, P::threads, P::blocks_per_sm, reduce_smem_bound) &&
                       arch::fits(f, P::single_block::threads, 1, reduce_smem_bound) &&
                       arch::fits(f, P::tile::threads, 1, reduce_smem_bound) &&
                       arch::fits(f, segmented_reduce_policy_sm90::threads, 1, reduce_smem_bound);
              }),
              "a reduction shape does not fit some architecture");

}  // namespace scanlab::detail
