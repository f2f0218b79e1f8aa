// The production radix sort: one histogram pass up front, then ONE kernel per 8-bit digit
// that ranks, looks back and scatters ("onesweep" digit binning).
//
//   1. onesweep_histogram_kernel  reads the keys once and counts the digits of EVERY pass
//                                 (passes x 256 global counts): a pass's digit counts do
//                                 not depend on the order the earlier passes leave.
//   2. onesweep_bins_kernel       one block per pass: exclusive scan of its 256 counts, the
//                                 global position where each digit's keys start.
//   3. onesweep_pass_kernel       per pass, one block per tile, tiles claimed in order with
//                                 an atomic ticket:
//        a. load the tile's keys (warp-striped: lane l of warp w holds keys w*32*I + 32i + l,
//           so every load instruction reads 32 consecutive keys);
//        b. count the digits per warp (shared atomics, a run of equal digits in a thread's
//           items added once);
//        c. per digit (thread d): the warps' counts scanned in warp order give each warp's
//           start, their sum is the tile's count of d, published AT ONCE as the tile's
//           "aggregate" (radix_sort_digit_state.cuh), before the tile ranks anything; a
//           block scan over the 256 counts gives each digit's start inside the tile;
//        d. rank inside each warp (warp multi-split): for item slot i in order, the lanes
//           holding the same digit find each other (8 ballots, or match.any), the lowest
//           of them takes the group's ranks from the warp's offset for that digit (one
//           atomicAdd), and each lane's rank is that offset plus the peers below it. Slots
//           in order, lanes in order: equal digits keep their input order (stable). Each
//           key goes to shared memory at its rank: the tile, sorted by digit;
//        e. thread d looks back over the earlier tiles' counts of d until an inclusive one,
//           publishes its own inclusive count, and so knows where the tile's keys of digit
//           d go: global digit start + keys of d in earlier tiles. The look-back comes as
//           late as it can: the predecessors published their counts before they ranked;
//        f. the sorted tile is read back in order and written out: consecutive threads write
//           consecutive addresses of each digit's run (32-bit destinations and no bounds
//           checks in full tiles of sorts below 2^31 keys). Values (loaded before the look-back)
//           follow the same ranks through shared memory.
// Traffic per 32-bit key: the keys are read 5 times (histogram + 4 passes) and written 4
// times (values: read and written once per pass); the multi-pass sort reads them 8 times
// (a histogram and a scatter per pass), writes them 4 times, and adds its counts arrays.
#pragma once

#include <scanlab/arch.cuh>
#include <scanlab/algorithms/radix_sort_common.cuh>
#include <scanlab/algorithms/radix_sort_digit_state.cuh>
#include <scanlab/block/block_scan.cuh>
#include <scanlab/detail/launch.cuh>
#include <scanlab/detail/shuffle.cuh>
#include <scanlab/detail/util.cuh>
#include <scanlab/error.hpp>
#include <scanlab/functional.cuh>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace scanlab::radix_sort_detail {

// How lanes with the same digit find each other in the warp multi-split.
enum class onesweep_ranking {
  match,   // one __match_any_sync per key
  ballot,  // eight __ballot_sync per key (one per digit bit; one more in a partial tile)
};

// Tuning for sm_90 (H100), measured at 2^28 uniform uint32 keys (whole sort, median of 7):
//   keys:  384 x 19 7.09 ms; 256 x 20 7.07; 384 x 16 7.23; 256 x 16 (4 blocks/SM) 7.60;
//          384 x 20 (2 blocks/SM) 7.81; 512 x 12-14 (2 blocks/SM) 8.3-8.5 with the former
//          1.0 ms histogram (0.54 ms now);
//   pairs (4-byte values): 384 x 16 (2 blocks/SM) 10.28 ms; 512 x 12 10.60; 256 x 20 10.74;
//          384 x 12 (3 blocks/SM) 11.14.
//   Again on an H200 (2026-11-29), float keys with 32-bit positions (argsort, the last pass
//   writing them as int64), after the pass kernel kept its ranks and out digits packed
//   (two and four to a register): 384 x 16 at 3 blocks/SM 8.94 ms, against 9.78 at 2 (and
//   9.70 at 2 unpacked, the former default); 384 x 18 at 3 8.87 (slower at 2^20: 0.089 ms
//   against 0.083); 320 x 20 at 3 8.92; 256 x 24 at 3 9.03; 384 x 20 at 2 9.27; 448 x 18
//   at 2 9.30; 384 x 14 at 3 9.15. Keys alone: 384 x 19 at 3 stays best (6.88 ms; 256 x 20
//   6.93, 384 x 19 at 2 7.92, 512 x 14 at 2 8.04).
//   8-byte keys or values, the same GPU and day, 2^26 uniform (the former shape for all
//   three: 256 x 12 at 3 blocks/SM):
//     float keys + 8-byte values: 256 x 14 at 3 3.09 ms (256 x 12 3.23; 384 x 10 at 3 3.13;
//       256 x 16 at 2 3.15; 256 x 16 at 3 spills, 3.36);
//     8-byte keys + 4-byte values: 256 x 16 at 3 5.70 ms (256 x 12 6.24; at 2 5.75; 256 x
//       14 5.90; 384 x 10 at 3 5.85);
//     8-byte keys + 8-byte values: 256 x 16 at 2 6.78 ms (256 x 12 at 3 7.39; 384 x 10 at 2
//       6.83; 256 x 14 at 3 7.13; 256 x 16 at 3 spills, 7.65).
//   8-byte keys alone and 1- or 2-byte keys with 8-byte values keep 256 x 12 (not measured).
// Ranking by 8 ballots: 6.09 ms on uniform keys (7.09 before the ballot combination
// peers &= ~(vote ^ ones) and the 32-bit scatter) against 10.8 with match.any, which is
// faster only when a warp holds few distinct digits (constant keys 4.10 against 6.97).
// Thread d < 256 owns digit d in the per-digit steps. The tile's keys (or values) must fit
// the static shared memory (48 KB) with the per-warp offsets.
template <int KeyBytes, int ValueBytes = 0>
struct onesweep_policy {
  static constexpr bool wide = KeyBytes >= 8 || ValueBytes >= 8;
  static constexpr int block_threads = wide ? 256 : 384;
  static constexpr int items_per_thread = [] {
    if (!wide) return ValueBytes > 0 ? 16 : 19;
    if (KeyBytes == 8 && ValueBytes > 0) return 16;
    if (KeyBytes == 4 && ValueBytes == 8) return 14;
    return 12;
  }();
  static constexpr int tile_items = block_threads * items_per_thread;
  static constexpr onesweep_ranking ranking = onesweep_ranking::ballot;
  // Resident blocks per SM the register allocation must allow (the look-back's waiting
  // is hidden only by other resident blocks): 3 (at most 56 registers for 384 threads,
  // 85 for 256); 8-byte keys with 8-byte values 2 (16 items of each: 127 registers).
  static constexpr int min_blocks_per_sm = KeyBytes == 8 && ValueBytes == 8 ? 2 : 3;
  // The up-front histogram: a chunk of threads x items keys per block and round, one
  // block per SM (its column counters take up to 128 KB of shared memory).
  static constexpr int histogram_threads = 1024;
  static constexpr int histogram_items = 16;
  static constexpr int histogram_blocks_per_sm = 1;
};

// The pass kernel's shared memory for a policy's shape (one block, static: 43.6 KB for the
// 4-byte key shape, 39 KB for pairs with 4-byte values, 34.9 KB for the 8-byte shapes, 21.7
// and 29 KB for 1- and 2-byte keys).
template <int Threads, int TileItems, class Bits, class Value>
struct onesweep_storage {
  using scan_t = block_scan<std::uint32_t, Threads>;
  // Per warp and digit: first the warp's count of the digit; then where the warp's keys of
  // the digit start inside the tile, advanced by the ranking as it hands out ranks.
  std::uint32_t warp_offsets[Threads / 32][radix];
  // Where the tile's keys of each digit go: out[global_base + tile position]; 32-bit
  // when every position of the sort fits 31 bits (fewer instructions per key).
  union {
    std::int64_t wide[radix];
    std::int32_t narrow[radix];
  } global_base;
  union {
    Bits keys[TileItems];
    Value values[TileItems];
  } exchange;
  typename scan_t::temp_storage scan;
  std::int64_t tile;
};

template <int KeyBytes, int ValueBytes>
using onesweep_storage_for =
    onesweep_storage<onesweep_policy<KeyBytes, ValueBytes>::block_threads, onesweep_policy<KeyBytes, ValueBytes>::tile_items,
                     typename unsigned_of_size<KeyBytes>::type,
                     typename std::conditional_t<ValueBytes == 0, std::type_identity<keys_only>,
                                                 unsigned_of_size<ValueBytes>>::type>;

// Registers a thread of the pass kernel keeps at least: the sm_90 shape of 384 threads at 3
// blocks per SM allows 56 (65536 / 1152), which it was measured with.
inline constexpr int onesweep_min_registers = 56;

// Family `Family`'s entry of the default table: the sm_90 shape (the same threads, items,
// tile and ranking everywhere), with the most resident blocks per SM, at most sm_90's,
// that the family holds (threads, blocks, shared memory and registers: arch::fits).
// __launch_bounds__ then never promises what the SM cannot hold (ptxas would warn and
// ignore it, as it did on sm_75 for 2 or 3 blocks of 384 threads: Turing holds 1024
// threads and 64 KB per SM). Resulting min_blocks_per_sm (4-byte keys / pairs with 4-byte
// values / 8-byte keys or values / 1- and 2-byte keys alone):
//   90, 100, 80:   3 / 3 / 3 / 3 (the sm_90 values)
//   86, 89, 120:   2 / 2 / 2 / 3 (100 KB per SM holds two 43, 39 or 35 KB blocks, not three)
//   75:            1 / 1 / 1 / 2 (64 KB per SM holds one; 1024 threads two of 384)
template <int KeyBytes, int ValueBytes, int Family>
struct onesweep_family_policy : onesweep_policy<KeyBytes, ValueBytes> {
  using base = onesweep_policy<KeyBytes, ValueBytes>;
  static constexpr std::size_t smem_bytes = sizeof(onesweep_storage_for<KeyBytes, ValueBytes>);
  static constexpr int min_blocks_per_sm = [] {
    int blocks = base::min_blocks_per_sm;
    while (blocks > 1 && !arch::fits(Family, base::block_threads, blocks, smem_bytes, onesweep_min_registers)) --blocks;
    return blocks;
  }();
};

// The default tuning table of the onesweep passes (scanlab/arch.cuh). A user's policy (one
// for every GPU, e.g. derived from radix_sort_policy) is used as given.
template <int KeyBytes, int ValueBytes = 0>
struct onesweep_tuning {
  template <int Family>
  struct at {
    using type = onesweep_family_policy<KeyBytes, ValueBytes, Family>;
  };
};

// Every family's entry fits, with the registers the shape needs (56, not the default 64:
// the sm_90 entry of 384 threads at 3 blocks per SM has 56).
template <int KeyBytes, int ValueBytes>
inline constexpr bool onesweep_tuning_fits = arch::table_fits<onesweep_tuning<KeyBytes, ValueBytes>>(
    [](auto policy) { return decltype(policy)::type::smem_bytes; }, onesweep_min_registers);
// Every shape the default sorts use (keys 1 to 8 bytes, values 4 or 8 bytes) fits every
// family with its min_blocks_per_sm; and the sm_90 entry is exactly the measured policy.
static_assert(onesweep_tuning_fits<1, 0> && onesweep_tuning_fits<2, 0> && onesweep_tuning_fits<4, 0> &&
                  onesweep_tuning_fits<8, 0> && onesweep_tuning_fits<4, 4> && onesweep_tuning_fits<4, 8> &&
                  onesweep_tuning_fits<8, 4> && onesweep_tuning_fits<8, 8> && onesweep_tuning_fits<1, 4> &&
                  onesweep_tuning_fits<2, 8>,
              "a radix sort pass shape does not fit some architecture");
static_assert(onesweep_family_policy<4, 0, 90>::min_blocks_per_sm == onesweep_policy<4, 0>::min_blocks_per_sm &&
                  onesweep_family_policy<4, 4, 90>::min_blocks_per_sm == onesweep_policy<4, 4>::min_blocks_per_sm &&
                  onesweep_family_policy<8, 0, 90>::min_blocks_per_sm == onesweep_policy<8, 0>::min_blocks_per_sm &&
                  onesweep_family_policy<8, 8, 90>::min_blocks_per_sm == onesweep_policy<8, 8>::min_blocks_per_sm &&
                  onesweep_family_policy<4, 8, 90>::min_blocks_per_sm == onesweep_policy<4, 8>::min_blocks_per_sm,
              "the sm_90 entries are the measured policy");

// ---- 1. all digit counts, every pass, one read of the keys ----

// Shared-memory counters of the histogram: [pass][digit][column], lane l counting in
// column l % columns. The counters of one digit are `columns` consecutive words, so lane
// l always hits bank l (32 columns) or one of two lanes per bank (16 columns): the
// increments of a warp never queue on one bank, whatever the digits. With one shared
// counter per digit, 32 random digits meet about 3.5 to a bank, and the increments,
// not the reads of the keys, set the speed. 128 KB at most (8-byte keys: 16 columns), on
// GPUs with that much shared memory per block (scanlab/arch.cuh); the others take half the
// columns (64 KB: two lanes per bank for 4-byte keys, four for 8-byte keys).
template <class Bits>
constexpr std::size_t histogram_smem_for(int columns) {
  return sizeof(Bits) * radix * static_cast<std::size_t>(columns) * sizeof(std::uint32_t);
}
template <class Bits, int Family>
inline constexpr int histogram_columns = [] {
  int columns = sizeof(Bits) >= 8 ? 16 : 32;
  while (columns > 1 && histogram_smem_for<Bits>(columns) > arch::limits_of(Family).smem_per_block) columns /= 2;
  return columns;
}();
template <class Bits, int Family>
inline constexpr std::size_t histogram_smem_bytes = histogram_smem_for<Bits>(histogram_columns<Bits, Family>);
static_assert(arch::all_families([](auto family) {
                return arch::fits(decltype(family)::value, 1024, 1,
                                  histogram_smem_bytes<std::uint64_t, decltype(family)::value>, 32) &&
                       arch::fits(decltype(family)::value, 1024, 1,
                                  histogram_smem_bytes<std::uint32_t, decltype(family)::value>, 32);
              }),
              "the radix histogram's counters do not fit some architecture");

template <class Bits, bool IsFloat, int Threads, int Items>
__global__ void __launch_bounds__(Threads)
    onesweep_histogram_kernel(const Bits* keys, std::int64_t n, key_transform<Bits, IsFloat> transform,
                              pass_plan plan, std::uint64_t* counts) {
  constexpr int max_passes = static_cast<int>(sizeof(Bits));  // 8-bit digits
  constexpr int columns = histogram_columns<Bits, arch::compiled_family>;
  constexpr int words = max_passes * radix * columns;
  extern __shared__ __align__(16) unsigned char histogram_smem[];
  auto* column_counts = reinterpret_cast<std::uint32_t*>(histogram_smem);
  for (int i = static_cast<int>(threadIdx.x); i < words; i += Threads) column_counts[i] = 0;
  __syncthreads();

  const int passes = plan.passes();
  int shift[max_passes];
  unsigned mask[max_passes];
#pragma unroll
  for (int p = 0; p < max_passes; ++p) {
    shift[p] = p < passes ? plan.shift(p) : 0;
    mask[p] = p < passes ? plan.mask(p) : 0u;
  }
  const unsigned column = threadIdx.x % columns;

  // 1-byte keys at a 16-byte aligned address: 16 keys a load, four loads in flight a
  // thread, over the whole 16-key vectors (byte loads held the histogram of 2^28 uint8 keys
  // to 0.8 TB/s); the rest below, key by key.
  std::int64_t scalar_begin = 0;
  if constexpr (sizeof(Bits) == 1) {
    if (reinterpret_cast<std::uintptr_t>(keys) % 16 == 0) {
      constexpr int in_flight = 4;
      const std::int64_t vectors = n / 16;
      scalar_begin = vectors * 16;
      std::uint32_t* pass_counts = column_counts + column;  // one pass: 1-byte keys
      const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * Threads;
      for (std::int64_t v = static_cast<std::int64_t>(blockIdx.x) * Threads + threadIdx.x; v < vectors;
           v += stride * in_flight) {
        uint4 words[in_flight];
#pragma unroll
        for (int k = 0; k < in_flight; ++k) {
          if (v + k * stride < vectors) words[k] = __ldg(reinterpret_cast<const uint4*>(keys) + v + k * stride);
        }
#pragma unroll
        for (int k = 0; k < in_flight; ++k) {
          if (v + k * stride >= vectors) break;
          const unsigned w[4] = {words[k].x, words[k].y, words[k].z, words[k].w};
#pragma unroll
          for (int b = 0; b < 16; ++b) {
            const Bits key = static_cast<Bits>(w[b / 4] >> (8 * (b % 4)));
            const unsigned d = static_cast<unsigned>(transform.ordered(key) >> shift[0]) & mask[0];
            atomicAdd(pass_counts + d * columns, 1u);
          }
        }
      }
    }
  }

  constexpr std::int64_t chunk = std::int64_t{Threads} * Items;
  for (std::int64_t base = scalar_begin + static_cast<std::int64_t>(blockIdx.x) * chunk; base < n;
       base += static_cast<std::int64_t>(gridDim.x) * chunk) {
    Bits ordered[Items];
    bool valid[Items];
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const std::int64_t index = base + std::int64_t{i} * Threads + threadIdx.x;
      valid[i] = index < n;
      ordered[i] = valid[i] ? transform.ordered(keys[index]) : Bits{0};
    }
#pragma unroll
    for (int p = 0; p < max_passes; ++p) {
      if (p >= passes) break;
      std::uint32_t* pass_counts = column_counts + p * radix * columns + column;
#pragma unroll
      for (int i = 0; i < Items; ++i) {
        const unsigned d = static_cast<unsigned>(ordered[i] >> shift[p]) & mask[p];
        if (valid[i]) atomicAdd(pass_counts + d * columns, 1u);
      }
    }
  }
  __syncthreads();
  // Per (pass, digit): the sum of its columns, read starting at a different column per
  // thread so that a warp's reads fall in different banks.
  for (int e = static_cast<int>(threadIdx.x); e < passes * radix; e += Threads) {
    const std::uint32_t* row = column_counts + e * columns;
    std::uint32_t sum = 0;
    for (int j = 0; j < columns; ++j) sum += row[(j + e) % columns];
    if (sum != 0) atomicAdd(reinterpret_cast<unsigned long long*>(counts + e), static_cast<unsigned long long>(sum));
  }
}

// ---- 2. per pass: digit counts -> global digit starts ----

// (A template only so that the header can be included by several translation units.)
template <class Count>
__global__ void __launch_bounds__(radix) onesweep_bins_kernel(Count* bins) {
  using scan_t = block_scan<Count, radix>;
  __shared__ typename scan_t::temp_storage storage;
  Count* pass_bins = bins + static_cast<std::size_t>(blockIdx.x) * radix;
  const Count count = pass_bins[threadIdx.x];
  pass_bins[threadIdx.x] = scan_t(storage).exclusive_scan(count, Count{0}, plus{});
}

// ---- 3'. 1-byte keys alone, sorted on all 8 bits: the output is each value's run ----

// Keys equal in all their bits are the same byte, so a keys-only sort of 1-byte keys on
// their whole width is a counting sort: the histogram and the digit starts above say where
// each of the 256 values' run begins, and this kernel writes the runs, instead of a pass
// that ranks and scatters every key. Thread t writes outputs [16 t, 16 t + 16) (grid-stride),
// one 16-byte store where the output is aligned: its first item's value by a binary search
// over the 257 run bounds in shared memory; inside one run (most chunks) the value
// replicated, else the next runs as its items cross them.
// `flip` maps ordered digits back to keys (the transform is ordered = raw ^ flip).
// H200, 2^28 uint8 keys, the whole sort: 0.211 ms (as a onesweep pass 1.585 ms; CUB's
// DeviceRadixSort 1.979 ms).
template <class Bits>
__global__ void __launch_bounds__(256) counting_fill_kernel(const std::uint64_t* starts, Bits flip, Bits* out,
                                                            std::int64_t n) {
  static_assert(sizeof(Bits) == 1, "the counting fill writes 1-byte keys");
  constexpr int items = 16;
  __shared__ std::int64_t bound[radix + 1];  // bound[d]: where digit d's run begins; bound[256] = n
  for (int d = static_cast<int>(threadIdx.x); d < radix; d += static_cast<int>(blockDim.x)) {
    bound[d] = static_cast<std::int64_t>(starts[d]);
  }
  if (threadIdx.x == 0) bound[radix] = n;
  __syncthreads();
  const bool vector = reinterpret_cast<std::uintptr_t>(out) % items == 0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c * items < n;
       c += stride) {
    const std::int64_t first = c * items;
    int d = 0;  // the last digit whose run begins at or before `first` (bound[0] = 0)
    for (int step = radix / 2; step > 0; step /= 2) {
      if (bound[d + step] <= first) d += step;
    }
    if (vector && first + items <= n && bound[d + 1] >= first + items) {  // one run: one value
      const unsigned word = static_cast<Bits>(static_cast<Bits>(d) ^ flip) * 0x01010101u;
      *reinterpret_cast<uint4*>(out + first) = make_uint4(word, word, word, word);
      continue;
    }
    alignas(16) Bits bytes[items];
#pragma unroll
    for (int k = 0; k < items; ++k) {
      while (d < radix - 1 && bound[d + 1] <= first + k) ++d;
      bytes[k] = static_cast<Bits>(static_cast<Bits>(d) ^ flip);
    }
    if (vector && first + items <= n) {
      *reinterpret_cast<uint4*>(out + first) = *reinterpret_cast<const uint4*>(bytes);
    } else {
      for (int k = 0; k < items && first + k < n; ++k) out[first + k] = bytes[k];
    }
  }
}

// ---- 3. one pass: rank, look back, scatter ----

template <class Bits, bool IsFloat, class Value>
struct onesweep_pass_params {
  const Bits* keys_in;
  Bits* keys_out;             // null: the pass's keys are not needed (argsort's last pass)
  const Value* values_in;     // null: the values are the input positions (argsort's first pass)
  Value* values_out;
  // Non-null (4-byte values only: argsort's last pass into 64-bit indices): the values are
  // written here, zero-extended, instead of to values_out.
  std::uint64_t* values_out_wide;
  std::int64_t n;
  digit_extractor<Bits, IsFloat> digit;
  const std::uint64_t* bins;  // this pass's 256 global digit starts
  digit_state state;
  unsigned long long* ticket;
};

// N small unsigned numbers (each < 2^Bits) held in registers by one thread, 32 / Bits to a
// register when Packed (a shift and a mask more per access, fewer registers), one each
// otherwise. Indices must be compile-time constants after unrolling, as for any array
// meant to stay in registers.
template <int N, int Bits, bool Packed>
struct register_uints {
  static constexpr int per_word = Packed ? 32 / Bits : 1;
  std::uint32_t words[(N + per_word - 1) / per_word];

  __device__ __forceinline__ void clear() {
#pragma unroll
    for (int w = 0; w < (N + per_word - 1) / per_word; ++w) words[w] = 0;
  }
  __device__ __forceinline__ void set(int i, std::uint32_t v) {  // after clear(), once per i
    if constexpr (Packed) {
      words[i / per_word] |= v << (Bits * (i % per_word));
    } else {
      words[i] = v;
    }
  }
  [[nodiscard]] __device__ __forceinline__ std::uint32_t get(int i) const {
    if constexpr (Packed) {
      return (words[i / per_word] >> (Bits * (i % per_word))) & ((1u << Bits) - 1u);
    } else {
      return words[i];
    }
  }
};

// The lanes of the warp that hold the same digit as this lane (digit == radix: no key).
// Partial: some lanes may hold no key (only in the tile that ends the input).
template <onesweep_ranking Ranking, bool Partial>
__device__ __forceinline__ unsigned digit_peers(unsigned digit) {
  if constexpr (Ranking == onesweep_ranking::match) {
    return __match_any_sync(detail::full_warp_mask, digit);
  } else {
    unsigned peers = detail::full_warp_mask;
    if constexpr (Partial) {
      const bool has_key = digit < radix;
      peers = __ballot_sync(detail::full_warp_mask, has_key);
      if (!has_key) peers = ~peers;
    }
#pragma unroll
    for (int b = 0; b < digit_bits; ++b) {
      // ones where this lane's bit b is set: the lanes agreeing on bit b are ~(vote ^ ones)
      const unsigned ones = 0u - ((digit >> b) & 1u);
      const unsigned vote = __ballot_sync(detail::full_warp_mask, ones != 0u);
      peers &= ~(vote ^ ones);
    }
    return peers;
  }
}

// The blocks per SM the pass kernel's __launch_bounds__ promises: the policy's, but no more
// than the compiled family's threads per SM hold. The default table's entries already fit;
// this keeps a user's policy derived from radix_sort_policy (3 blocks of 384 threads) from
// promising Turing 1152 threads of 1024, which ptxas would only warn about and ignore.
template <class Policy>
inline constexpr int onesweep_launch_blocks = [] {
  const int hold = arch::limits_of(arch::compiled_family).threads_per_sm / Policy::block_threads;
  return Policy::min_blocks_per_sm < hold ? Policy::min_blocks_per_sm : (hold > 1 ? hold : 1);
}();

// Tuning: onesweep_tuning (the default table) or one user policy (arch::active_policy).
template <class Tuning, class Bits, bool IsFloat, class Value>
__global__ void __launch_bounds__(arch::active_policy<Tuning>::block_threads,
                                  onesweep_launch_blocks<arch::active_policy<Tuning>>)
    onesweep_pass_kernel(const onesweep_pass_params<Bits, IsFloat, Value> p) {
  using Policy = arch::active_policy<Tuning>;
  constexpr onesweep_ranking Ranking = Policy::ranking;
  constexpr int threads = Policy::block_threads;
  constexpr int items = Policy::items_per_thread;
  constexpr int warps = threads / 32;
  constexpr int tile_items = Policy::tile_items;
  constexpr bool has_values = has_values_v<Value>;
  static_assert(threads >= radix && threads % 32 == 0, "one thread per digit, whole warps");
  static_assert(tile_items <= 65536, "tile ranks travel in 16 bits");
  using scan_t = block_scan<std::uint32_t, threads>;
  using storage_t = onesweep_storage<threads, tile_items, Bits, Value>;
  // The hard limits of this architecture (a user policy too: scanlab/arch.cuh).
  static_assert(arch::fits_block(arch::compiled_family, threads, sizeof(storage_t)),
                "the pass kernel's tile does not fit this architecture's shared memory");
  __shared__ storage_t s;

  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid & 31;
  const int warp = tid >> 5;

  if (tid == 0) s.tile = static_cast<std::int64_t>(atomicAdd(p.ticket, 1ull));
  for (int i = tid; i < warps * radix; i += threads) (&s.warp_offsets[0][0])[i] = 0;
  __syncthreads();
  const std::int64_t tile = s.tile;
  const std::int64_t tile_base = tile * tile_items;
  const std::int64_t left = p.n - tile_base;
  const int tile_n = left < tile_items ? static_cast<int>(left) : tile_items;
  const bool full_tile = tile_n == tile_items;

  // a. Load, warp-striped. item_digits[i]: item i's digit (radix: no key, past the end).
  const int warp_first = warp * 32 * items;
  Bits keys[items];
  unsigned item_digits[items];
#pragma unroll
  for (int i = 0; i < items; ++i) {
    const int position = warp_first + i * 32 + lane;
    if (full_tile || position < tile_n) {
      keys[i] = p.keys_in[tile_base + position];
      item_digits[i] = p.digit(keys[i]);
    } else {
      keys[i] = Bits{0};
      item_digits[i] = radix;
    }
  }

  // b. Per-warp digit counts. A run of equal digits in a thread's items is added once
  //    (sorted and low-entropy data then do not serialise on one counter).
  {
    unsigned run_digit = item_digits[0];
    std::uint32_t run_length = 0;
#pragma unroll
    for (int i = 0; i < items; ++i) {
      if (item_digits[i] != run_digit) {
        if (run_digit < radix) atomicAdd(&s.warp_offsets[warp][run_digit], run_length);
        run_digit = item_digits[i];
        run_length = 0;
      }
      ++run_length;
    }
    if (run_digit < radix) atomicAdd(&s.warp_offsets[warp][run_digit], run_length);
  }
  __syncthreads();

  // c. Per digit (thread d): the tile's count, published at once so that later tiles can
  //    look back past this one while it is still ranking; the warps' starts (warp order)
  //    and the digit's start inside the tile (block scan over the 256 counts).
  std::uint32_t digit_count = 0;
  if (tid < radix) {
#pragma unroll
    for (int w = 0; w < warps; ++w) {
      const std::uint32_t c = s.warp_offsets[w][tid];
      s.warp_offsets[w][tid] = digit_count;
      digit_count += c;
    }
    if (tile == 0) {
      p.state.publish_inclusive(0, static_cast<unsigned>(tid), digit_count);
    } else {
      p.state.publish_aggregate(tile, static_cast<unsigned>(tid), digit_count);
    }
  }
  const std::uint32_t digit_start = scan_t(s.scan).exclusive_scan(digit_count, 0u, plus{});
  if (tid < radix) {
#pragma unroll
    for (int w = 0; w < warps; ++w) s.warp_offsets[w][tid] += digit_start;
  }
  __syncthreads();

  // d. Rank inside the warp (warp multi-split) and put each key at its rank in shared
  //    memory: for item slot i in order, the lanes holding the same digit find each other,
  //    one of them (the leader) takes the group's ranks from the warp's offset for the
  //    digit (one atomicAdd), and each lane's rank is that offset plus the peers below it.
  //    Slots in order, lanes in order: equal digits keep their input order (stable).
  const unsigned lanes_below = (1u << lane) - 1u;
  // The items' ranks, kept for the values (the pairs kernel holds them, the values and
  // the out digits across the look-back and the keys' scatter). With 4-byte values they
  // are packed, two ranks and four out digits to a register: that is what fits 384 x 16
  // pairs in the 56 registers of 3 blocks per SM (8.94 ms at 2^28 on an H200, against 9.70
  // at 2 blocks unpacked). With 8-byte values (256 threads, 85 registers) packing only
  // adds instructions (uint32 keys with uint64 values 3.21 against 3.09 ms at 2^26).
  constexpr bool packed = sizeof(Value) <= 4;  // keys alone: the ranks are not kept
  register_uints<items, 16, packed> ranks;
  ranks.clear();
  const auto rank = [&](auto partial) {
    constexpr bool is_partial = decltype(partial)::value;
#pragma unroll
    for (int i = 0; i < items; ++i) {
      const unsigned digit = item_digits[i];
      const unsigned peers = digit_peers<Ranking, is_partial>(digit);
      const int leader = __ffs(static_cast<int>(peers)) - 1;
      unsigned first = 0;
      if (lane == leader && (!is_partial || digit < radix)) {
        first = atomicAdd(&s.warp_offsets[warp][digit], static_cast<unsigned>(__popc(peers)));
      }
      first = __shfl_sync(detail::full_warp_mask, first, leader);
      const unsigned rank = first + static_cast<unsigned>(__popc(peers & lanes_below));
      ranks.set(i, rank);
      if (!is_partial || digit < radix) s.exchange.keys[rank] = keys[i];
      __syncwarp();  // this slot's offset update comes before the next slot's, whichever lane leads
    }
  };
  if (full_tile) {
    rank(std::false_type{});
  } else {
    rank(std::true_type{});
  }

  // The values' loads are issued now: they travel while the tile looks back and scatters.
  using value_t = std::conditional_t<has_values, Value, unsigned char>;
  value_t values[has_values ? items : 1];
  if constexpr (has_values) {
#pragma unroll
    for (int i = 0; i < items; ++i) {
      const int position = warp_first + i * 32 + lane;
      if (full_tile || position < tile_n) {
        values[i] = p.values_in != nullptr ? p.values_in[tile_base + position]
                                           : static_cast<Value>(tile_base + position);
      }
    }
  }

  // e. Look back (thread d): keys of digit d in the earlier tiles. Done as late as possible:
  //    the predecessors published their counts while this tile was ranking.
  //    The destination base is never negative: the keys of smaller digits in this tile
  //    (digit_start) are among all keys of smaller digits (the global start).
  const bool narrow = p.n <= std::int64_t{INT32_MAX};
  if (tid < radix) {
    std::uint64_t earlier = 0;
    if (tile > 0) {
      earlier = p.state.exclusive_count(tile, static_cast<unsigned>(tid));
      p.state.publish_inclusive(tile, static_cast<unsigned>(tid), earlier + digit_count);
    }
    const auto base = static_cast<std::int64_t>(p.bins[tid] + earlier) - static_cast<std::int64_t>(digit_start);
    if (narrow) {
      s.global_base.narrow[tid] = static_cast<std::int32_t>(base);
    } else {
      s.global_base.wide[tid] = base;
    }
  }
  __syncthreads();

  // f. Out of shared memory in tile order (now sorted by digit): consecutive threads write
  //    consecutive addresses of each digit's run. The common case for keys alone (a full
  //    tile of a sort of fewer than 2^31 keys) has no bounds checks and 32-bit
  //    destinations. Pairs take the general path: keeping the values' destinations in
  //    registers took the pairs kernel from 72 to 80 registers and 9.97 to 10.7 ms at 2^28.
  if constexpr (!has_values) {
    if (full_tile && narrow) {
#pragma unroll
      for (int k = 0; k < items; ++k) {
        const int position = k * threads + tid;
        const Bits key = s.exchange.keys[position];
        if (p.keys_out != nullptr) p.keys_out[s.global_base.narrow[p.digit(key)] + position] = key;
      }
      return;
    }
  }
  const auto base_of = [&](unsigned digit) -> std::int64_t {
    return narrow ? std::int64_t{s.global_base.narrow[digit]} : s.global_base.wide[digit];
  };
  // The digits of the items this thread writes, kept for the values' scatter.
  register_uints<items, digit_bits, packed> out_digits;
  out_digits.clear();
#pragma unroll
  for (int k = 0; k < items; ++k) {
    const int position = k * threads + tid;
    if (position < tile_n) {
      const Bits key = s.exchange.keys[position];
      const unsigned digit = p.digit(key);
      out_digits.set(k, digit);
      if (p.keys_out != nullptr) p.keys_out[base_of(digit) + position] = key;
    }
  }
  if constexpr (has_values) {
    __syncthreads();  // every key is out of the exchange buffer
#pragma unroll
    for (int i = 0; i < items; ++i) {
      const int position = warp_first + i * 32 + lane;
      if (position < tile_n) s.exchange.values[ranks.get(i)] = values[i];
    }
    __syncthreads();
    const auto scatter_values = [&](auto* out) {
#pragma unroll
      for (int k = 0; k < items; ++k) {
        const int position = k * threads + tid;
        if (position < tile_n) out[base_of(out_digits.get(k)) + position] = s.exchange.values[position];
      }
    };
    if constexpr (sizeof(Value) == 4) {
      if (p.values_out_wide != nullptr) {
        scatter_values(p.values_out_wide);
        return;
      }
    }
    scatter_values(p.values_out);
  }
}

// ---- host side ----

// One sort with policy `policy` (the entry of `Tuning` the pass kernel runs, or the user's
// policy), its temp storage sized for `max_tiles` tiles (the most of any entry).
template <class policy, class Tuning, class Bits, bool IsFloat, class Value>
[[nodiscard]] cudaError_t onesweep_sort_with(void* d_temp, std::size_t& temp_bytes,
                                             const sort_request<Bits, IsFloat, Value>& r, std::int64_t max_tiles,
                                             cudaStream_t stream) {
  constexpr bool has_values = has_values_v<Value>;
  const std::int64_t n = r.n;
  const int passes = r.plan.passes();
  const std::int64_t num_tiles = detail::ceil_div<std::int64_t>(n, policy::tile_items);
  if (num_tiles > max_tiles) return cudaErrorInvalidValue;  // cannot happen: max_tiles is the most

  // 1-byte keys alone on all their bits take the counting fill (3'. above) for the passes.
  constexpr bool countable = sizeof(Bits) == 1 && !has_values && !IsFloat;
  const bool counting = countable && r.plan.begin_bit == 0 && r.plan.end_bit == 8 && r.keys_out != nullptr;

  // Temp storage: [alternate keys][final keys, when the caller wants none][alternate values]
  // [cleared: global digit counts | tickets | digit state] (the counting fill: the counts).
  temp_carver carve(d_temp);
  const auto count = static_cast<std::size_t>(n);
  Bits* alternate_keys = counting ? nullptr : carve.take<Bits>(count);
  Bits* final_keys = r.keys_out != nullptr ? r.keys_out : carve.take<Bits>(count);
  Value* alternate_values = has_values ? carve.take<Value>(count) : nullptr;
  const std::size_t bins_bytes = detail::align_up(static_cast<std::size_t>(passes) * radix * sizeof(std::uint64_t));
  const std::size_t tickets_bytes = detail::align_up(static_cast<std::size_t>(passes) * sizeof(unsigned long long));
  const std::size_t cleared_bytes =
      bins_bytes + (counting ? 0 : tickets_bytes + digit_state::storage_bytes(max_tiles));
  auto* cleared = carve.take<unsigned char>(cleared_bytes);
  if (const auto answer = detail::temp_storage_query(d_temp, temp_bytes, carve.bytes())) return *answer;
  if (n == 0) return cudaSuccess;

  auto* bins = reinterpret_cast<std::uint64_t*>(cleared);
  auto* tickets = reinterpret_cast<unsigned long long*>(cleared + bins_bytes);
  auto* state_words = reinterpret_cast<std::uint64_t*>(cleared + bins_bytes + tickets_bytes);
  SCANLAB_TRY(cudaMemsetAsync(cleared, 0, cleared_bytes, stream));

  // 1. Every pass's digit counts. As many blocks as are resident, but enough that no
  //    block counts 2^31 keys (its shared counters are 32-bit).
  constexpr auto histogram = onesweep_histogram_kernel<Bits, IsFloat, policy::histogram_threads, policy::histogram_items>;
  // Its counters' shared memory depends on the architecture of the code the driver runs.
  int histogram_sm = 0;
  SCANLAB_TRY(detail::kernel_sm<histogram>(histogram_sm));
  const std::size_t histogram_smem = arch::with_family(
      histogram_sm, [](auto family) { return histogram_smem_bytes<Bits, decltype(family)::value>; });
  // resident_grid allows the kernel its dynamic shared memory (once per device).
  int resident = 0;
  bool cooperative = false;
  SCANLAB_TRY((detail::resident_grid<histogram>(policy::histogram_threads, policy::histogram_blocks_per_sm, resident,
                                                 cooperative, histogram_smem)));
  const std::int64_t chunks =
      detail::ceil_div<std::int64_t>(n, std::int64_t{policy::histogram_threads} * policy::histogram_items);
  std::int64_t histogram_grid = chunks < resident ? chunks : resident;
  const std::int64_t least = detail::ceil_div<std::int64_t>(n, std::int64_t{1} << 31);
  if (histogram_grid < least) histogram_grid = least;
  SCANLAB_TRY(detail::launch(histogram, static_cast<unsigned>(histogram_grid), policy::histogram_threads,
                             histogram_smem, stream, r.keys_in, n, r.transform, r.plan, bins));

  // 2. Global digit starts.
  SCANLAB_TRY(detail::launch(onesweep_bins_kernel<std::uint64_t>, static_cast<unsigned>(passes), radix, 0, stream,
                             bins));

  // 3'. 1-byte keys alone on all their bits: the runs, written from the digit starts.
  if constexpr (countable) {
    if (counting) {
      const std::int64_t blocks = detail::ceil_div<std::int64_t>(detail::ceil_div<std::int64_t>(n, 16), 256);
      return detail::launch(counting_fill_kernel<Bits>, static_cast<unsigned>(blocks < 65536 ? blocks : 65536), 256, 0,
                            stream, static_cast<const std::uint64_t*>(bins), r.transform.flip, r.keys_out, n);
    }
  }

  // 3. The passes.
  const ping_pong<Bits> key_buffers{r.keys_in, final_keys, alternate_keys, passes};
  const ping_pong<Value> value_buffers{r.values_in, r.values_out, alternate_values, passes};
  for (int pass = 0; pass < passes; ++pass) {
    onesweep_pass_params<Bits, IsFloat, Value> params{
        .keys_in = key_buffers.source(pass),
        .keys_out = key_buffers.destination(pass),
        .values_in = has_values ? value_buffers.source(pass) : nullptr,
        .values_out = has_values ? value_buffers.destination(pass) : nullptr,
        .values_out_wide = pass == passes - 1 ? r.values_out_wide : nullptr,
        .n = n,
        .digit = {r.transform, r.plan.shift(pass), r.plan.mask(pass)},
        .bins = bins + static_cast<std::size_t>(pass) * radix,
        .state = digit_state(state_words, pass),
        .ticket = tickets + pass};
    // The sorted keys of the last pass are not wanted when the caller asked for none.
    if (pass == passes - 1 && r.keys_out == nullptr) params.keys_out = nullptr;
    SCANLAB_TRY(detail::launch(onesweep_pass_kernel<Tuning, Bits, IsFloat, Value>,
                               static_cast<unsigned>(num_tiles), policy::block_threads, 0, stream, params));
  }
  return cudaSuccess;
}

// Policy: void (the default table, onesweep_tuning) or a user's policy (every GPU).
template <class Policy = void, class Bits, bool IsFloat, class Value>
[[nodiscard]] cudaError_t onesweep_sort(void* d_temp, std::size_t& temp_bytes,
                                        const sort_request<Bits, IsFloat, Value>& r, cudaStream_t stream) {
  using tuning = std::conditional_t<std::is_void_v<Policy>,
                                    onesweep_tuning<static_cast<int>(sizeof(Bits)),
                                                    has_values_v<Value> ? static_cast<int>(sizeof(Value)) : 0>,
                                    Policy>;
  if (r.n < 0) return cudaErrorInvalidValue;
  // Temp storage for the smallest tile over the table's entries (the most tiles; today every
  // entry has the sm_90 tile), so that the sizing call does not ask the device.
  constexpr std::int64_t smallest_tile =
      -arch::max_over_policies<tuning>([](auto policy) { return -std::int64_t{decltype(policy)::type::tile_items}; });
  const std::int64_t max_tiles = detail::ceil_div<std::int64_t>(r.n, smallest_tile);
  if (d_temp == nullptr || r.n == 0) {
    return onesweep_sort_with<arch::policy_for<tuning, 90>, tuning>(d_temp, temp_bytes, r, max_tiles, stream);
  }
  // The run: the entry of the family whose code the driver runs for the pass kernel.
  return detail::with_policy<onesweep_pass_kernel<tuning, Bits, IsFloat, Value>, tuning>([&](auto policy) {
    return onesweep_sort_with<typename decltype(policy)::type, tuning>(d_temp, temp_bytes, r, max_tiles, stream);
  });
}

}  // namespace scanlab::radix_sort_detail
