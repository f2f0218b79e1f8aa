// scanlab/streaming/pipeline.cuh: the one pipeline behind the streaming (out-of-core)
// algorithms, and the workspace that holds its resources between calls.
//
// A host array of any length flows through a ring of `slots` device chunk buffers, one
// CUDA stream per slot. For chunk i (slot s = i % slots), in this order on the host:
//   1. acquire: where a pinned staging buffer is used (a pageable host array), wait until
//      chunk i - slots has left slot s (its `done` event) and copy its output out of the
//      staging buffer to the caller's array;
//   2. copy in: pageable input is first copied by the CPU into the slot's pinned staging
//      buffer, then cudaMemcpyAsync to the slot's device buffer on stream s;
//   3. compute: stream s waits for chunk i - 1's `computed` event (the chain), then the
//      algorithm enqueues its device work (the in-memory primitive and a carry or fold
//      kernel) and the pipeline records `computed`. The chain serialises compute, so
//      one temp storage serves every chunk and a running value (scan carry, reduce
//      accumulator) passes from chunk to chunk on the device, without a host round trip;
//   4. copy out, one chunk behind (chunk i - 1's, once chunk i's copy in and compute are
//      queued): the algorithm says what to copy back (select reads its count first: the
//      only host wait on compute), the pipeline enqueues it on that chunk's stream (into
//      staging where the output is pageable) and records `done`.
// The copy engines thus run chunk i + 1's copy in while chunk i's output goes back, and
// compute (far faster than PCIe) hides between them. At the end the staged outputs are
// flushed in order and every stream is synchronised: the calls are host-synchronous.
//
// An algorithm (a "stage") supplies:
//   static constexpr std::size_t item_bytes;                    host bytes of one item
//   std::size_t slot_bytes(std::int64_t items) const;           device bytes of one slot
//   std::size_t word_bytes;                                     device words (carry, accumulator, counts)
//   cudaError_t temp_bytes(std::int64_t items, std::size_t&)   the in-memory primitive's temp storage
//   transfer input(pipeline&, const chunk&)                     host -> device copy of a chunk
//   cudaError_t compute(pipeline&, const chunk&, cudaStream_t)
//   cudaError_t output(pipeline&, const chunk&, transfer&)      device -> host copy (bytes 0: none)
//   cudaError_t finish(pipeline&, cudaStream_t)                 after the last chunk's compute
#pragma once

#include <scanlab/detail/util.cuh>
#include <scanlab/error.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

namespace scanlab::streaming {

// Tuning of the pipeline (defaults fit PCIe Gen5 on the H100).
struct options {
  // Device chunk buffers in the ring, 2 to 8. Two already keep both copy directions busy
  // when compute is negligible; three leave slack for the host's staging copies.
  int slots = 3;
  // The most input bytes of one chunk (before the device budget is applied). Smaller
  // chunks overlap more of the first copy in and the last copy out; larger ones spend less
  // per-chunk overhead (a few microseconds each: events, two tiny kernels).
  std::size_t max_chunk_bytes = std::size_t{64} << 20;
};

namespace detail {

inline constexpr int max_slots = 8;

// Everything a pipeline needs that outlives one call.
struct workspace_state {
  int device = -1;
  unsigned char* d_mem = nullptr;  // the device budget's allocation (what the last calls needed)
  std::size_t d_bytes = 0;
  unsigned char* h_staging = nullptr;  // pinned, one chunk per slot (pageable host arrays only)
  std::size_t h_bytes = 0;
  std::int64_t* h_words = nullptr;  // pinned, one word per slot (select's counts)
  int num_streams = 0;
  cudaStream_t streams[max_slots]{};
  cudaEvent_t computed[max_slots]{};
  cudaEvent_t done[max_slots]{};
  // What the last call did: for tests and benchmarks.
  std::int64_t chunk_items = 0;
  std::int64_t num_chunks = 0;

  // Waits for the streams and frees everything (errors ignored: nothing to do with them).
  void release() noexcept {
    for (int s = 0; s < num_streams; ++s) {
      (void)cudaStreamSynchronize(streams[s]);
      (void)cudaEventDestroy(computed[s]);
      (void)cudaEventDestroy(done[s]);
      (void)cudaStreamDestroy(streams[s]);
    }
    num_streams = 0;
    if (d_mem != nullptr) (void)cudaFree(d_mem);
    if (h_staging != nullptr) (void)cudaFreeHost(h_staging);
    if (h_words != nullptr) (void)cudaFreeHost(h_words);
    d_mem = nullptr;
    h_staging = nullptr;
    h_words = nullptr;
    d_bytes = h_bytes = 0;
    device = -1;
  }
};

}  // namespace detail

// The resources of the streaming calls: up to device_bytes of device memory, the streams and
// events of the ring, pinned staging buffers for pageable arrays. Acquired on first use and
// kept (grown as a call needs, never past device_bytes), so that a sequence of calls pays
// for the allocations once: a call with a temporary workspace (the device_bytes overloads)
// allocates pinned staging for pageable arrays each time (about as slow as copying it).
// Bound to the device current at its first call (another device later:
// cudaErrorInvalidDevice). One call at a time (not thread-safe). Destruction waits for its
// streams and frees everything.
class workspace {
 public:
  workspace() = default;
  explicit workspace(std::size_t device_bytes, const options& opts = {}) noexcept
      : device_bytes_(device_bytes), options_(opts) {}
  ~workspace() { state_.release(); }
  workspace(const workspace&) = delete;
  workspace& operator=(const workspace&) = delete;
  workspace(workspace&& other) noexcept
      : device_bytes_(other.device_bytes_), options_(other.options_), state_(std::exchange(other.state_, {})) {}
  workspace& operator=(workspace&& other) noexcept {
    if (this != &other) {
      state_.release();
      device_bytes_ = other.device_bytes_;
      options_ = other.options_;
      state_ = std::exchange(other.state_, {});
    }
    return *this;
  }

  // The device-memory budget: chunk buffers, the primitive's temp storage and a few words.
  [[nodiscard]] std::size_t device_bytes() const noexcept { return device_bytes_; }
  [[nodiscard]] const streaming::options& pipeline_options() const noexcept { return options_; }
  // Items per chunk and chunks of the last successful call (0 before any).
  [[nodiscard]] std::int64_t last_chunk_items() const noexcept { return state_.chunk_items; }
  [[nodiscard]] std::int64_t last_num_chunks() const noexcept { return state_.num_chunks; }
  // Device bytes held now (at most device_bytes()).
  [[nodiscard]] std::size_t device_bytes_held() const noexcept { return state_.d_bytes; }

  // For the pipeline (streaming/pipeline.cuh); not part of the API.
  [[nodiscard]] detail::workspace_state& state() noexcept { return state_; }

 private:
  std::size_t device_bytes_ = 0;
  streaming::options options_{};
  detail::workspace_state state_{};
};

namespace detail {

using scanlab::detail::align_up;

// One chunk of the input: items [begin, begin + items), in ring slot `slot`.
struct chunk {
  std::int64_t index = 0;
  std::int64_t begin = 0;
  std::int64_t items = 0;
  int slot = 0;
};

// A copy between the caller's host array and a slot's device memory.
struct transfer {
  void* host = nullptr;
  void* device = nullptr;
  std::size_t bytes = 0;
};

// How a host pointer can be copied: directly (pinned or registered host memory, managed
// memory) or through the pinned staging buffers (pageable memory). Device memory is refused
// (these are the host-array forms; use the in-memory primitives). Only the start of the
// array is asked about: an array partly registered is not supported.
enum class host_access { direct, staged };

[[nodiscard]] inline cudaError_t classify_host_pointer(const void* p, host_access& access) {
  cudaPointerAttributes attributes{};
  SCANLAB_TRY(cudaPointerGetAttributes(&attributes, p));
  switch (attributes.type) {
    case cudaMemoryTypeUnregistered: access = host_access::staged; return cudaSuccess;
    case cudaMemoryTypeHost:
    case cudaMemoryTypeManaged: access = host_access::direct; return cudaSuccess;
    default: return cudaErrorInvalidValue;
  }
}

// Chunk size and layout for a budget: the largest chunk whose `slots` slot buffers and shared
// storage fit, capped by options.max_chunk_bytes and by n.
struct plan {
  std::int64_t chunk_items = 0;
  std::int64_t num_chunks = 0;
  int slots = 0;  // slots in use: min(options.slots, num_chunks), at least 1
  std::size_t slot_bytes = 0;
  std::size_t word_bytes = 0;  // device layout: [words][temp][slot 0][slot 1]...
  std::size_t temp_bytes = 0;  // for the largest chunk (every chunk's temp fits)
  std::size_t device_bytes() const {
    return word_bytes + temp_bytes + static_cast<std::size_t>(slots) * slot_bytes;
  }
};

template <class Stage>
[[nodiscard]] cudaError_t make_plan(const Stage& stage, std::int64_t n, std::size_t budget, const options& opts,
                                    plan& result) {
  if (n < 0 || opts.slots < 2 || opts.slots > max_slots) return cudaErrorInvalidValue;
  // Device bytes of `items` per chunk (every slot counted, as for a long input).
  std::size_t need = 0;
  const auto bytes_for = [&](std::int64_t items, std::size_t& bytes) -> cudaError_t {
    std::size_t temp = 0;
    SCANLAB_TRY(stage.temp_bytes(items, temp));
    bytes = align_up(stage.word_bytes) + align_up(temp) + static_cast<std::size_t>(opts.slots) * align_up(stage.slot_bytes(items));
    return cudaSuccess;
  };
  SCANLAB_TRY(bytes_for(1, need));
  if (need > budget) return cudaErrorInvalidValue;  // not even one item per chunk
  std::int64_t cap = static_cast<std::int64_t>(std::max<std::size_t>(opts.max_chunk_bytes / Stage::item_bytes, 1));
  if (n > 0) cap = std::min(cap, n);
  // Largest fitting size in [1, cap]: the sizes are non-decreasing in the chunk's items.
  std::int64_t lo = 1;
  std::int64_t hi = cap;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    SCANLAB_TRY(bytes_for(mid, need));
    if (need <= budget) lo = mid;
    else hi = mid - 1;
  }
  result.chunk_items = lo;
  result.num_chunks = n == 0 ? 0 : scanlab::detail::ceil_div<std::int64_t>(n, lo);
  result.slots = static_cast<int>(std::clamp<std::int64_t>(result.num_chunks, 1, opts.slots));
  result.word_bytes = align_up(stage.word_bytes);
  SCANLAB_TRY(stage.temp_bytes(lo, result.temp_bytes));
  result.temp_bytes = align_up(result.temp_bytes);
  result.slot_bytes = align_up(stage.slot_bytes(lo));
  return cudaSuccess;
}

// Streams, events and memory for a plan (grown, never shrunk).
[[nodiscard]] inline cudaError_t prepare(workspace_state& ws, const plan& p, std::size_t staging_bytes_per_slot,
                                         bool staged) {
  int device = 0;
  SCANLAB_TRY(cudaGetDevice(&device));
  if (ws.device >= 0 && ws.device != device) return cudaErrorInvalidDevice;
  ws.device = device;
  while (ws.num_streams < p.slots) {
    const int s = ws.num_streams;
    SCANLAB_TRY(cudaStreamCreateWithFlags(&ws.streams[s], cudaStreamNonBlocking));
    if (const cudaError_t status = cudaEventCreateWithFlags(&ws.computed[s], cudaEventDisableTiming)) {
      (void)cudaStreamDestroy(ws.streams[s]);
      return status;
    }
    if (const cudaError_t status = cudaEventCreateWithFlags(&ws.done[s], cudaEventDisableTiming)) {
      (void)cudaEventDestroy(ws.computed[s]);
      (void)cudaStreamDestroy(ws.streams[s]);
      return status;
    }
    ++ws.num_streams;
  }
  if (ws.d_bytes < p.device_bytes()) {
    // The streams are idle between calls (every call synchronises them before it returns).
    if (ws.d_mem != nullptr) SCANLAB_TRY(cudaFree(ws.d_mem));
    ws.d_mem = nullptr;
    ws.d_bytes = 0;
    SCANLAB_TRY(cudaMalloc(&ws.d_mem, p.device_bytes()));
    ws.d_bytes = p.device_bytes();
  }
  if (ws.h_words == nullptr) {
    SCANLAB_TRY(cudaMallocHost(&ws.h_words, sizeof(std::int64_t) * max_slots));
  }
  const std::size_t staging = staged ? static_cast<std::size_t>(p.slots) * staging_bytes_per_slot : 0;
  if (ws.h_bytes < staging) {
    if (ws.h_staging != nullptr) SCANLAB_TRY(cudaFreeHost(ws.h_staging));
    ws.h_staging = nullptr;
    ws.h_bytes = 0;
    SCANLAB_TRY(cudaMallocHost(&ws.h_staging, staging));
    ws.h_bytes = staging;
  }
  return cudaSuccess;
}

// One call's run of the ring over a host array (see the top of this file).
class pipeline {
 public:
  pipeline(workspace_state& ws, const plan& p, std::int64_t n, std::size_t staging_bytes_per_slot, bool in_staged,
           bool out_staged)
      : ws_(ws), plan_(p), n_(n), staging_stride_(staging_bytes_per_slot), in_staged_(in_staged),
        out_staged_(out_staged) {}

  // Device memory given to the stage: its words, the primitive's temp storage (one for every
  // chunk: the chain serialises compute), one buffer per slot; each 256-byte aligned.
  [[nodiscard]] unsigned char* words() const { return ws_.d_mem; }
  [[nodiscard]] unsigned char* temp() const { return ws_.d_mem + plan_.word_bytes; }
  [[nodiscard]] std::size_t temp_bytes() const { return plan_.temp_bytes; }
  [[nodiscard]] unsigned char* slot(int s) const {
    return ws_.d_mem + plan_.word_bytes + plan_.temp_bytes + static_cast<std::size_t>(s) * plan_.slot_bytes;
  }
  // Items of a full chunk (the last may have fewer).
  [[nodiscard]] std::int64_t chunk_items() const { return plan_.chunk_items; }
  // A pinned host word per slot (select: the chunk's count).
  [[nodiscard]] std::int64_t* host_word(int s) const { return ws_.h_words + s; }
  // Host wait until the chunk's compute (and what the stage enqueued with it) is done.
  [[nodiscard]] cudaError_t wait_computed(const chunk& c) const { return cudaEventSynchronize(ws_.computed[c.slot]); }

  template <class Stage>
  [[nodiscard]] cudaError_t run(Stage& stage) {
    const cudaError_t status = run_chunks(stage);
    if (status != cudaSuccess) {
      // Nothing may still be copying into or out of memory the caller is about to reuse.
      for (int s = 0; s < plan_.slots; ++s) (void)cudaStreamSynchronize(ws_.streams[s]);
    }
    return status;
  }

 private:
  [[nodiscard]] chunk make_chunk(std::int64_t i) const {
    const std::int64_t begin = i * plan_.chunk_items;
    return {i, begin, std::min(plan_.chunk_items, n_ - begin), static_cast<int>(i % plan_.slots)};
  }
  [[nodiscard]] unsigned char* staging(int s) const {
    return ws_.h_staging + static_cast<std::size_t>(s) * staging_stride_;
  }

  // The slot is about to take a new chunk: where its staging buffer is used, wait for the
  // slot's previous chunk and copy its staged output to the caller's array.
  [[nodiscard]] cudaError_t acquire(int s) {
    if (!used_[s]) return cudaSuccess;
    if (in_staged_) SCANLAB_TRY(cudaEventSynchronize(ws_.done[s]));
    return flush(s);
  }
  [[nodiscard]] cudaError_t flush(int s) {
    if (pending_[s].bytes == 0) return cudaSuccess;
    SCANLAB_TRY(cudaEventSynchronize(ws_.done[s]));
    std::memcpy(pending_[s].host, staging(s), pending_[s].bytes);
    pending_[s] = {};
    return cudaSuccess;
  }

  template <class Stage>
  [[nodiscard]] cudaError_t copy_in(Stage& stage, const chunk& c) {
    const transfer in = stage.input(*this, c);
    if (in.bytes == 0) return cudaSuccess;
    const void* source = in.host;
    if (in_staged_) {
      std::memcpy(staging(c.slot), in.host, in.bytes);
      source = staging(c.slot);
    }
    return cudaMemcpyAsync(in.device, source, in.bytes, cudaMemcpyDefault, ws_.streams[c.slot]);
  }

  template <class Stage>
  [[nodiscard]] cudaError_t copy_out(Stage& stage, const chunk& c) {
    transfer out{};
    SCANLAB_TRY(stage.output(*this, c, out));
    const cudaStream_t stream = ws_.streams[c.slot];
    if (out.bytes > 0) {
      if (out_staged_) {
        SCANLAB_TRY(cudaMemcpyAsync(staging(c.slot), out.device, out.bytes, cudaMemcpyDefault, stream));
        pending_[c.slot] = out;
      } else {
        SCANLAB_TRY(cudaMemcpyAsync(out.host, out.device, out.bytes, cudaMemcpyDefault, stream));
      }
    }
    return cudaEventRecord(ws_.done[c.slot], stream);
  }

  template <class Stage>
  [[nodiscard]] cudaError_t run_chunks(Stage& stage) {
    const std::int64_t chunks = plan_.num_chunks;
    for (std::int64_t i = 0; i < chunks; ++i) {
      const chunk c = make_chunk(i);
      const cudaStream_t stream = ws_.streams[c.slot];
      SCANLAB_TRY(acquire(c.slot));
      used_[c.slot] = true;
      SCANLAB_TRY(copy_in(stage, c));
      if (i > 0) SCANLAB_TRY(cudaStreamWaitEvent(stream, ws_.computed[(i - 1) % plan_.slots], 0));
      SCANLAB_TRY(stage.compute(*this, c, stream));
      SCANLAB_TRY(cudaEventRecord(ws_.computed[c.slot], stream));
      if (i > 0) SCANLAB_TRY(copy_out(stage, make_chunk(i - 1)));
    }
    if (chunks == 0) return cudaSuccess;
    const chunk last = make_chunk(chunks - 1);
    SCANLAB_TRY(copy_out(stage, last));
    SCANLAB_TRY(stage.finish(*this, ws_.streams[last.slot]));
    for (std::int64_t i = std::max<std::int64_t>(0, chunks - plan_.slots); i < chunks; ++i) {
      SCANLAB_TRY(flush(make_chunk(i).slot));
    }
    for (int s = 0; s < plan_.slots; ++s) SCANLAB_TRY(cudaStreamSynchronize(ws_.streams[s]));
    return cudaSuccess;
  }

  workspace_state& ws_;
  plan plan_;
  std::int64_t n_;
  std::size_t staging_stride_;
  bool in_staged_;
  bool out_staged_;
  bool used_[max_slots]{};
  transfer pending_[max_slots]{};
};

// The whole call: plan for the workspace's budget, classify the host arrays, get the
// resources, run the ring. h_out may be null (reduce). n == 0 checks the budget and does
// nothing else.
template <class Stage>
[[nodiscard]] cudaError_t stream_chunks(workspace& ws, Stage& stage, std::int64_t n, const void* h_in,
                                        const void* h_out) {
  plan p{};
  SCANLAB_TRY(make_plan(stage, n, ws.device_bytes(), ws.pipeline_options(), p));
  workspace_state& state = ws.state();
  if (n == 0) {
    state.chunk_items = p.chunk_items;
    state.num_chunks = 0;
    return cudaSuccess;
  }
  if (h_in == nullptr) return cudaErrorInvalidValue;
  host_access in_access{};
  host_access out_access = host_access::direct;
  SCANLAB_TRY(classify_host_pointer(h_in, in_access));
  if (h_out != nullptr) SCANLAB_TRY(classify_host_pointer(h_out, out_access));
  const bool in_staged = in_access == host_access::staged;
  const bool out_staged = out_access == host_access::staged;
  const std::size_t staging_per_slot = align_up(static_cast<std::size_t>(p.chunk_items) * Stage::item_bytes);
  SCANLAB_TRY(prepare(state, p, staging_per_slot, in_staged || out_staged));
  pipeline run(state, p, n, staging_per_slot, in_staged, out_staged);
  SCANLAB_TRY(run.run(stage));
  state.chunk_items = p.chunk_items;
  state.num_chunks = p.num_chunks;
  return cudaSuccess;
}

// The one-item kernel of the device-side carries: *dst = src ? *src : value.
template <class T>
__global__ void streaming_carry_kernel(T* dst, const T* src, T value) {
  *dst = src != nullptr ? *src : value;
}

}  // namespace detail
}  // namespace scanlab::streaming
