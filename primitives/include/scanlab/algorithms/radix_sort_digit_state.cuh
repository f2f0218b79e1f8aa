// Decoupled look-back with one running count per (tile, digit): the state the single-pass
// ("onesweep") radix sort passes hand forward from tile to tile.
//
// Relation to device/tile_state.cuh. The shared tile state carries ONE value per tile (a
// scan's running total) and, to make float scans deterministic, a canonical grouping in
// windows of 32 tiles. A radix sort pass needs 256 values per tile: for every digit d, how
// many keys with digit d the earlier tiles hold (that is where this tile's keys of digit d
// go). The values are integer counts, so any order of adding them gives the same result,
// and no canonical grouping is needed: each digit does the plain look-back, walking back
// over predecessors, adding their published counts, until one that published an inclusive
// count. What is kept is the tile state's protocol and memory-ordering argument: status
// and value share one 64-bit word, written and read with single relaxed gpu-scope accesses
// (the same helpers), so a reader sees either nothing or a whole (status, count) pair.
//
// Word layout: bits 56..63 a status code, bits 0..55 the count (counts up to 2^56: 64-bit
// sizes throughout). The code names the pass, so ONE state array serves every pass of a
// sort with one clearing (a memset before the first pass) instead of one per pass:
//   code 0                 nothing (cleared memory)
//   code 2 * pass + 1      aggregate: this tile's own count of the digit, in this pass
//   code 2 * pass + 2      inclusive: this tile's count plus all earlier tiles', this pass
// Codes of earlier passes are older than anything this pass publishes and read as
// "not yet"; codes of later passes cannot exist while this pass runs (a pass is one kernel,
// passes are stream-ordered).
//
// Deadlock freedom is the tile state's argument: tiles are handed out in order by an
// atomic ticket (one counter per pass, cleared with the state), so a tile waits only on
// tiles held by blocks that are already running.
#pragma once

#include <scanlab/algorithms/radix_sort_common.cuh>
#include <scanlab/device/tile_state.cuh>

#include <cstddef>
#include <cstdint>

namespace scanlab::radix_sort_detail {

class digit_state {
 public:
  static constexpr int code_shift = 56;
  static constexpr std::uint64_t count_mask = (std::uint64_t{1} << code_shift) - 1;

  // Bytes for num_tiles tiles: one word per (tile, digit). Cleared to zero before pass 0.
  __host__ __device__ static constexpr std::size_t storage_bytes(std::int64_t num_tiles) {
    return static_cast<std::size_t>(num_tiles) * radix * sizeof(std::uint64_t);
  }

  digit_state() = default;
  __host__ __device__ digit_state(std::uint64_t* d_words, int pass) : words_(d_words), pass_(pass) {}

  // One thread per digit: this tile's own count.
  __device__ void publish_aggregate(std::int64_t tile, unsigned digit, std::uint64_t count) const {
    device::tile_state_detail::store_relaxed(word(tile, digit), pack(aggregate_code(), count));
  }
  // One thread per digit: the count of this tile and all tiles before it.
  __device__ void publish_inclusive(std::int64_t tile, unsigned digit, std::uint64_t count) const {
    device::tile_state_detail::store_relaxed(word(tile, digit), pack(inclusive_code(), count));
  }

  // One thread per digit, tile >= 1, after publishing the tile's aggregate: how many keys
  // of this digit the tiles before `tile` hold. Walks back from tile - 1, adding
  // aggregates, and stops at the first inclusive count; a predecessor that has published
  // nothing yet in this pass is polled again. Four predecessors are polled at once (four
  // loads in flight instead of one round trip per step). Tile 0 always publishes an
  // inclusive count, so the walk never passes it.
  __device__ std::uint64_t exclusive_count(std::int64_t tile, unsigned digit) const {
    constexpr int batch = 4;
    std::uint64_t sum = 0;
    std::int64_t next = tile - 1;  // the first predecessor not yet added
    for (;;) {
      std::uint64_t w[batch];
#pragma unroll
      for (int b = 0; b < batch; ++b) {
        w[b] = next - b >= 0 ? device::tile_state_detail::load_relaxed(word(next - b, digit)) : 0;
      }
      int added = 0;
#pragma unroll
      for (int b = 0; b < batch; ++b) {
        if (added != b) break;  // an earlier slot of this batch was not ready
        const auto code = static_cast<std::uint32_t>(w[b] >> code_shift);
        if (code < aggregate_code()) break;  // not published in this pass yet: poll it again
        sum += w[b] & count_mask;
        if (code == inclusive_code()) return sum;
        ++added;
      }
      next -= added;
    }
  }

 private:
  __device__ std::uint32_t aggregate_code() const { return 2u * static_cast<std::uint32_t>(pass_) + 1u; }
  __device__ std::uint32_t inclusive_code() const { return 2u * static_cast<std::uint32_t>(pass_) + 2u; }
  __device__ static std::uint64_t pack(std::uint32_t code, std::uint64_t count) {
    return (static_cast<std::uint64_t>(code) << code_shift) | (count & count_mask);
  }
  __device__ std::uint64_t* word(std::int64_t tile, unsigned digit) const {
    return words_ + static_cast<std::size_t>(tile) * radix + digit;
  }

  std::uint64_t* words_ = nullptr;
  int pass_ = 0;
};

}  // namespace scanlab::radix_sort_detail
