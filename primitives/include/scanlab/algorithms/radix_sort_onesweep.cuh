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
//        b. rank them inside each warp (warp multi-split): for item slot i in order, the
//           lanes holding the same digit find each other (match.any, or 8 ballots), the
//           lowest of them adds the group's size to the warp's counter for that digit, and
//           each lane's rank is the counter's old value plus the peers below it. Slots in
//           order, lanes in order: equal digits keep their input order (stable);
//        c. per digit (thread d): the warps' counts scanned in warp order give each warp's
//           start, their sum is the tile's count of d, published at once as the tile's
//           "aggregate" (radix_sort_digit_state.cuh); a block scan over the 256 counts
//           gives each digit's start inside the tile;
//        d. thread d looks back over the earlier tiles' counts of d until an inclusive one,
//           publishes its own inclusive count, and so knows where the tile's keys of digit
//           d go: global digit start + keys of d in earlier tiles;
//        e. keys are written to shared memory at their tile-local rank (now sorted by digit
//           inside the tile), then read back in order and written out: consecutive threads
//           write consecutive addresses of each digit's run. Values follow the same ranks.
// Traffic per 32-bit key: the keys are read 5 times (histogram + 4 passes) and written 4
// times (values: read and written once per pass); the multi-pass sort reads them 8 times
// (a histogram and a scatter per pass), writes them 4 times, and adds its counts arrays.
#pragma once

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

namespace scanlab::radix_sort_detail {

// How lanes with the same digit find each other in the warp multi-split.
enum class onesweep_ranking {
  match,   // one __match_any_sync per key
  ballot,  // eight __ballot_sync per key (one per digit bit)
};

// Tuning for sm_90 (H100). 256 threads: thread d < 256 owns digit d in the look-back.
// Items per thread: enough keys per tile that the look-back (256 words per tile) and the
// per-tile fixed work stay small next to the keys moved.
template <int KeyBytes, int ValueBytes = 0>
struct onesweep_policy {
  static constexpr int block_threads = 256;
  static constexpr int items_per_thread = KeyBytes >= 8 ? 12 : 16;
  static constexpr int tile_items = block_threads * items_per_thread;
  static constexpr onesweep_ranking ranking = onesweep_ranking::match;
  // Resident blocks per SM the register allocation must allow: waiting in the look-back is
  // hidden only by other resident blocks. 4 (64 registers) for up to 8 bytes of key and
  // value; wider pairs need more registers (they spill at 64): 3.
  static constexpr int min_blocks_per_sm = KeyBytes + ValueBytes <= 8 ? 4 : 3;
  // The up-front histogram: each thread counts this many keys per chunk, in registers
  // first (runs of equal digits are added to shared memory as one count), at most this
  // many resident blocks per SM.
  static constexpr int histogram_threads = 256;
  static constexpr int histogram_items = 16;
  static constexpr int histogram_blocks_per_sm = 4;
};

// ---- 1. all digit counts, every pass, one read of the keys ----

template <class Bits, bool IsFloat, int Threads, int Items>
__global__ void __launch_bounds__(Threads)
    onesweep_histogram_kernel(const Bits* keys, std::int64_t n, key_transform<Bits, IsFloat> transform,
                              pass_plan plan, std::uint64_t* counts) {
  constexpr int max_passes = static_cast<int>(sizeof(Bits));  // 8-bit digits
  __shared__ std::uint32_t block_counts[max_passes][radix];
  for (int i = static_cast<int>(threadIdx.x); i < max_passes * radix; i += Threads) (&block_counts[0][0])[i] = 0;
  __syncthreads();

  const int passes = plan.passes();
  int shift[max_passes];
  unsigned mask[max_passes];
#pragma unroll
  for (int p = 0; p < max_passes; ++p) {
    shift[p] = p < passes ? plan.shift(p) : 0;
    mask[p] = p < passes ? plan.mask(p) : 0u;
  }

  constexpr std::int64_t chunk = std::int64_t{Threads} * Items;
  for (std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * chunk; base < n;
       base += static_cast<std::int64_t>(gridDim.x) * chunk) {
    Bits ordered[Items];
    bool valid[Items];
#pragma unroll
    for (int i = 0; i < Items; ++i) {
      const std::int64_t index = base + std::int64_t{i} * Threads + threadIdx.x;
      valid[i] = index < n;
      ordered[i] = valid[i] ? transform.ordered(keys[index]) : Bits{0};
    }
    // Per pass: a run of equal digits is counted in a register and added once. Sorted,
    // constant and low-entropy data then cost few shared-memory atomics (those would
    // otherwise all hit the same few counters).
#pragma unroll
    for (int p = 0; p < max_passes; ++p) {
      if (p >= passes) break;
      unsigned run_digit = 0;
      std::uint32_t run_length = 0;
#pragma unroll
      for (int i = 0; i < Items; ++i) {
        if (!valid[i]) continue;
        const unsigned d = static_cast<unsigned>(ordered[i] >> shift[p]) & mask[p];
        if (d != run_digit && run_length != 0) {
          atomicAdd(&block_counts[p][run_digit], run_length);
          run_length = 0;
        }
        run_digit = d;
        ++run_length;
      }
      if (run_length != 0) atomicAdd(&block_counts[p][run_digit], run_length);
    }
  }
  __syncthreads();
  for (int i = static_cast<int>(threadIdx.x); i < passes * radix; i += Threads) {
    const std::uint32_t c = (&block_counts[0][0])[i];
    if (c != 0) atomicAdd(reinterpret_cast<unsigned long long*>(counts + i), static_cast<unsigned long long>(c));
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

// ---- 3. one pass: rank, look back, scatter ----

template <class Bits, bool IsFloat, class Value>
struct onesweep_pass_params {
  const Bits* keys_in;
  Bits* keys_out;             // null: the pass's keys are not needed (argsort's last pass)
  const Value* values_in;     // null: the values are the input positions (argsort's first pass)
  Value* values_out;
  std::int64_t n;
  digit_extractor<Bits, IsFloat> digit;
  const std::uint64_t* bins;  // this pass's 256 global digit starts
  digit_state state;
  unsigned long long* ticket;
};

// The lanes of the warp that hold the same digit as this lane (digit == radix: no key).
template <onesweep_ranking Ranking>
__device__ __forceinline__ unsigned digit_peers(unsigned digit) {
  if constexpr (Ranking == onesweep_ranking::match) {
    return __match_any_sync(detail::full_warp_mask, digit);
  } else {
    const bool has_key = digit < radix;
    unsigned peers = __ballot_sync(detail::full_warp_mask, has_key);
    if (!has_key) peers = ~peers;
#pragma unroll
    for (int b = 0; b < digit_bits; ++b) {
      const bool bit = ((digit >> b) & 1u) != 0;
      const unsigned vote = __ballot_sync(detail::full_warp_mask, bit);
      peers &= bit ? vote : ~vote;
    }
    return peers;
  }
}

template <class Policy, onesweep_ranking Ranking, class Bits, bool IsFloat, class Value>
__global__ void __launch_bounds__(Policy::block_threads, Policy::min_blocks_per_sm)
    onesweep_pass_kernel(const onesweep_pass_params<Bits, IsFloat, Value> p) {
  constexpr int threads = Policy::block_threads;
  constexpr int items = Policy::items_per_thread;
  constexpr int warps = threads / 32;
  constexpr int tile_items = Policy::tile_items;
  constexpr bool has_values = has_values_v<Value>;
  static_assert(threads >= radix && threads % 32 == 0, "one thread per digit, whole warps");
  static_assert(tile_items <= 65536, "tile ranks travel in 16 bits");
  using scan_t = block_scan<std::uint32_t, threads>;

  struct storage_t {
    // Per warp and digit: the warp's running count while ranking; then the warp's start
    // inside the tile (digit start + earlier warps' counts).
    std::uint32_t warp_counts[warps][radix];
    // Where the tile's keys of each digit go: out[global_base[d] + tile position].
    std::int64_t global_base[radix];
    union {
      Bits keys[tile_items];
      Value values[tile_items];
    } exchange;
    typename scan_t::temp_storage scan;
    std::int64_t tile;
  };
  __shared__ storage_t s;

  const int tid = static_cast<int>(threadIdx.x);
  const int lane = tid & 31;
  const int warp = tid >> 5;

  if (tid == 0) s.tile = static_cast<std::int64_t>(atomicAdd(p.ticket, 1ull));
  for (int i = tid; i < warps * radix; i += threads) (&s.warp_counts[0][0])[i] = 0;
  __syncthreads();
  const std::int64_t tile = s.tile;
  const std::int64_t tile_base = tile * tile_items;
  const std::int64_t left = p.n - tile_base;
  const int tile_n = left < tile_items ? static_cast<int>(left) : tile_items;
  const bool full_tile = tile_n == tile_items;

  // a. Load, warp-striped.
  const int warp_first = warp * 32 * items;
  Bits keys[items];
  // Per item: digit << 16 | rank (the digit radix marks "no key": past the end). One
  // register for both keeps the kernel inside the register budget of 3 blocks per SM.
  unsigned slots[items];
#pragma unroll
  for (int i = 0; i < items; ++i) {
    const int position = warp_first + i * 32 + lane;
    if (full_tile || position < tile_n) {
      keys[i] = p.keys_in[tile_base + position];
      slots[i] = p.digit(keys[i]) << 16;
    } else {
      keys[i] = Bits{0};
      slots[i] = unsigned{radix} << 16;
    }
  }

  // b. Rank inside the warp.
  const unsigned lanes_below = (1u << lane) - 1u;
#pragma unroll
  for (int i = 0; i < items; ++i) {
    const unsigned digit = slots[i] >> 16;
    const unsigned peers = digit_peers<Ranking>(digit);
    const int leader = __ffs(static_cast<int>(peers)) - 1;
    unsigned before = 0;
    if (lane == leader && digit < radix) {
      before = s.warp_counts[warp][digit];
      s.warp_counts[warp][digit] = before + static_cast<unsigned>(__popc(peers));
    }
    before = __shfl_sync(detail::full_warp_mask, before, leader);
    slots[i] |= before + static_cast<unsigned>(__popc(peers & lanes_below));
    __syncwarp();  // the counter update is seen by the next slot's leader, whichever lane it is
  }
  __syncthreads();

  // c. Per digit: warp starts, the tile's count (published at once), digit starts.
  std::uint32_t digit_count = 0;
  if (tid < radix) {
#pragma unroll
    for (int w = 0; w < warps; ++w) {
      const std::uint32_t c = s.warp_counts[w][tid];
      s.warp_counts[w][tid] = digit_count;
      digit_count += c;
    }
    if (tile == 0) {
      p.state.publish_inclusive(0, static_cast<unsigned>(tid), digit_count);
    } else {
      p.state.publish_aggregate(tile, static_cast<unsigned>(tid), digit_count);
    }
  }
  const std::uint32_t digit_start = scan_t(s.scan).exclusive_scan(digit_count, 0u, plus{});

  // d. Look back: keys of this digit in earlier tiles.
  if (tid < radix) {
#pragma unroll
    for (int w = 0; w < warps; ++w) s.warp_counts[w][tid] += digit_start;
    std::uint64_t earlier = 0;
    if (tile > 0) {
      earlier = p.state.exclusive_count(tile, static_cast<unsigned>(tid));
      p.state.publish_inclusive(tile, static_cast<unsigned>(tid), earlier + digit_count);
    }
    s.global_base[tid] = static_cast<std::int64_t>(p.bins[tid] + earlier) - static_cast<std::int64_t>(digit_start);
  }
  __syncthreads();

  // e. Through shared memory, sorted by digit inside the tile, then out in tile order.
#pragma unroll
  for (int i = 0; i < items; ++i) {
    const unsigned digit = slots[i] >> 16;
    if (digit < radix) {
      slots[i] += s.warp_counts[warp][digit];  // the rank inside the tile (< 2^16)
      s.exchange.keys[slots[i] & 0xffffu] = keys[i];
    }
  }
  __syncthreads();
  unsigned out_digits[items];
#pragma unroll
  for (int k = 0; k < items; ++k) {
    const int position = k * threads + tid;
    out_digits[k] = 0;
    if (full_tile || position < tile_n) {
      const Bits key = s.exchange.keys[position];
      out_digits[k] = p.digit(key);
      if (p.keys_out != nullptr) p.keys_out[s.global_base[out_digits[k]] + position] = key;
    }
  }
  if constexpr (has_values) {
    Value values[items];
#pragma unroll
    for (int i = 0; i < items; ++i) {
      const int position = warp_first + i * 32 + lane;
      if ((slots[i] >> 16) < radix) {
        values[i] = p.values_in != nullptr ? p.values_in[tile_base + position]
                                           : static_cast<Value>(tile_base + position);
      }
    }
    __syncthreads();  // every key is out of the exchange buffer
#pragma unroll
    for (int i = 0; i < items; ++i) {
      if ((slots[i] >> 16) < radix) s.exchange.values[slots[i] & 0xffffu] = values[i];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < items; ++k) {
      const int position = k * threads + tid;
      if (full_tile || position < tile_n) {
        p.values_out[s.global_base[out_digits[k]] + position] = s.exchange.values[position];
      }
    }
  }
}

// ---- host side ----

template <class Policy = void, onesweep_ranking Ranking = onesweep_ranking::match, class Bits, bool IsFloat,
          class Value>
[[nodiscard]] cudaError_t onesweep_sort(void* d_temp, std::size_t& temp_bytes,
                                        const sort_request<Bits, IsFloat, Value>& r, cudaStream_t stream) {
  using policy = std::conditional_t<std::is_void_v<Policy>,
                                    onesweep_policy<static_cast<int>(sizeof(Bits)),
                                                    has_values_v<Value> ? static_cast<int>(sizeof(Value)) : 0>,
                                    Policy>;
  constexpr bool has_values = has_values_v<Value>;
  if (r.n < 0) return cudaErrorInvalidValue;
  const std::int64_t n = r.n;
  const int passes = r.plan.passes();
  const std::int64_t num_tiles = detail::ceil_div<std::int64_t>(n, policy::tile_items);

  // Temp storage: [alternate keys][final keys, when the caller wants none][alternate values]
  // [cleared: global digit counts | tickets | digit state].
  temp_carver carve(d_temp);
  const auto count = static_cast<std::size_t>(n);
  Bits* alternate_keys = carve.take<Bits>(count);
  Bits* final_keys = r.keys_out != nullptr ? r.keys_out : carve.take<Bits>(count);
  Value* alternate_values = has_values ? carve.take<Value>(count) : nullptr;
  const std::size_t bins_bytes = detail::align_up(static_cast<std::size_t>(passes) * radix * sizeof(std::uint64_t));
  const std::size_t tickets_bytes = detail::align_up(static_cast<std::size_t>(passes) * sizeof(unsigned long long));
  const std::size_t cleared_bytes = bins_bytes + tickets_bytes + digit_state::storage_bytes(num_tiles);
  auto* cleared = carve.take<unsigned char>(cleared_bytes);
  if (d_temp == nullptr) {
    temp_bytes = carve.bytes();
    return cudaSuccess;
  }
  if (temp_bytes < carve.bytes()) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;

  auto* bins = reinterpret_cast<std::uint64_t*>(cleared);
  auto* tickets = reinterpret_cast<unsigned long long*>(cleared + bins_bytes);
  auto* state_words = reinterpret_cast<std::uint64_t*>(cleared + bins_bytes + tickets_bytes);
  SCANLAB_TRY(cudaMemsetAsync(cleared, 0, cleared_bytes, stream));

  // 1. Every pass's digit counts. As many blocks as are resident, but enough that no
  //    block counts 2^31 keys (its shared counters are 32-bit).
  constexpr auto histogram = onesweep_histogram_kernel<Bits, IsFloat, policy::histogram_threads, policy::histogram_items>;
  int resident = 0;
  bool cooperative = false;
  SCANLAB_TRY((detail::resident_grid<histogram>(policy::histogram_threads, policy::histogram_blocks_per_sm, resident,
                                                 cooperative)));
  const std::int64_t chunks =
      detail::ceil_div<std::int64_t>(n, std::int64_t{policy::histogram_threads} * policy::histogram_items);
  std::int64_t histogram_grid = chunks < resident ? chunks : resident;
  const std::int64_t least = detail::ceil_div<std::int64_t>(n, std::int64_t{1} << 31);
  if (histogram_grid < least) histogram_grid = least;
  histogram<<<static_cast<unsigned>(histogram_grid), policy::histogram_threads, 0, stream>>>(r.keys_in, n, r.transform,
                                                                                             r.plan, bins);
  SCANLAB_TRY_LAUNCH();

  // 2. Global digit starts.
  onesweep_bins_kernel<<<static_cast<unsigned>(passes), radix, 0, stream>>>(bins);
  SCANLAB_TRY_LAUNCH();

  // 3. The passes.
  const ping_pong<Bits> key_buffers{r.keys_in, final_keys, alternate_keys, passes};
  const ping_pong<Value> value_buffers{r.values_in, r.values_out, alternate_values, passes};
  for (int pass = 0; pass < passes; ++pass) {
    onesweep_pass_params<Bits, IsFloat, Value> params{
        .keys_in = key_buffers.source(pass),
        .keys_out = key_buffers.destination(pass),
        .values_in = has_values ? value_buffers.source(pass) : nullptr,
        .values_out = has_values ? value_buffers.destination(pass) : nullptr,
        .n = n,
        .digit = {r.transform, r.plan.shift(pass), r.plan.mask(pass)},
        .bins = bins + static_cast<std::size_t>(pass) * radix,
        .state = digit_state(state_words, pass),
        .ticket = tickets + pass};
    // The sorted keys of the last pass are not wanted when the caller asked for none.
    if (pass == passes - 1 && r.keys_out == nullptr) params.keys_out = nullptr;
    onesweep_pass_kernel<policy, Ranking><<<static_cast<unsigned>(num_tiles), policy::block_threads, 0, stream>>>(params);
    SCANLAB_TRY_LAUNCH();
  }
  return cudaSuccess;
}

}  // namespace scanlab::radix_sort_detail
