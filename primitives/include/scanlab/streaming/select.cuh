// scanlab/streaming/select.cuh: stream compaction of host arrays of any length (out of core).
//
//   std::int64_t kept = 0;
//   SCANLAB_CHECK(scanlab::streaming::select_if(std::size_t{1} << 30, h_x, h_kept, n, kept, is_positive{}));
//
// Each chunk is compacted on the device by scanlab::select_if into the slot's output buffer;
// the compaction writes its count straight into a pinned host word (mapped: no copy queued
// behind the copy engine's chunk transfers). Before the chunk's kept items
// can be copied back (to h_out + the total so far), the host must know how many there are:
// it waits for the chunk's compute event and reads the word. That is the one host wait on
// compute per chunk; it comes one chunk behind (chunk i's count is read once chunk i + 1's
// copy in and compaction are queued), so the copy engines and the GPU keep working while the
// host waits. Only the kept items cross PCIe back.
//
// Guarantees: those of scanlab::select_if: stable (kept items in input order), pred called on
// the device (no side effects, possibly more than once per item), deterministic. h_out
// receives exactly num_selected items (nothing is written past them: an h_out of n items is
// always enough). In place: h_out == h_in is allowed (the kept items of a chunk land at or
// before its start, behind every unread chunk); other overlaps are not. Host arrays pinned or
// pageable (as scan.cuh). Host-synchronous; on failure num_selected is unchanged and h_out
// unspecified. cudaErrorInvalidValue for n < 0, null arrays with n > 0, or a budget that does
// not hold one item per chunk (the slot holds the chunk twice: input and kept items).
#pragma once

#include <scanlab/algorithms/select.cuh>
#include <scanlab/streaming/pipeline.cuh>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace scanlab::streaming {

namespace detail {

template <class T, class Pred>
struct select_stage {
  static constexpr std::size_t item_bytes = sizeof(T);
  static constexpr std::size_t word_bytes = 0;  // the counts live in the pipeline's pinned host words
  const T* h_in;
  T* h_out;
  Pred pred;
  std::int64_t total = 0;

  // [input items][kept items]
  [[nodiscard]] std::size_t slot_bytes(std::int64_t items) const {
    return 2 * align_up(static_cast<std::size_t>(items) * sizeof(T));
  }
  [[nodiscard]] static T* kept_items(const pipeline& p, const chunk& c, std::int64_t chunk_items) {
    return reinterpret_cast<T*>(p.slot(c.slot) + align_up(static_cast<std::size_t>(chunk_items) * sizeof(T)));
  }
  [[nodiscard]] cudaError_t temp_bytes(std::int64_t items, std::size_t& bytes) const {
    return ::scanlab::select_if(nullptr, bytes, static_cast<const T*>(nullptr), static_cast<T*>(nullptr), nullptr, items,
                                pred);
  }
  [[nodiscard]] transfer input(const pipeline& p, const chunk& c) const {
    return {const_cast<T*>(h_in + c.begin), p.slot(c.slot), static_cast<std::size_t>(c.items) * sizeof(T)};
  }
  [[nodiscard]] cudaError_t compute(const pipeline& p, const chunk& c, cudaStream_t stream) const {
    // Pinned host memory is addressable by the device (unified addressing); the kernel's write
    // is visible to the host once the chunk's `computed` event has completed.
    std::size_t bytes = p.temp_bytes();
    return ::scanlab::select_if(p.temp(), bytes, reinterpret_cast<const T*>(p.slot(c.slot)),
                                kept_items(p, c, p.chunk_items()), p.host_word(c.slot), c.items, pred, stream);
  }
  [[nodiscard]] cudaError_t output(const pipeline& p, const chunk& c, transfer_list& out) {
    SCANLAB_TRY(p.wait_computed(c));
    const std::int64_t kept = *p.host_word(c.slot);
    out = transfer{h_out + total, kept_items(p, c, p.chunk_items()), static_cast<std::size_t>(kept) * sizeof(T)};
    total += kept;
    return cudaSuccess;
  }
  [[nodiscard]] cudaError_t finish(const pipeline&, cudaStream_t) const { return cudaSuccess; }
};

}  // namespace detail

// h_out gets the h_in[i] for which pred(h_in[i]) is true, in order; num_selected their count.
template <class T, class Pred>
[[nodiscard]] cudaError_t select_if(workspace& ws, const T* h_in, T* h_out, std::int64_t n,
                                    std::int64_t& num_selected, Pred pred) {
  if (n > 0 && (h_in == nullptr || h_out == nullptr)) return cudaErrorInvalidValue;
  detail::select_stage<T, Pred> stage{h_in, h_out, pred};
  SCANLAB_TRY(detail::stream_chunks(ws, stage, n, h_in, h_out));
  num_selected = stage.total;
  return cudaSuccess;
}

// The same with a workspace of device_bytes made for the call (default options).
template <class T, class Pred>
[[nodiscard]] cudaError_t select_if(std::size_t device_bytes, const T* h_in, T* h_out, std::int64_t n,
                                    std::int64_t& num_selected, Pred pred) {
  workspace ws(device_bytes);
  return select_if(ws, h_in, h_out, n, num_selected, pred);
}

}  // namespace scanlab::streaming
