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
//   transfer_list input(pipeline&, const chunk&)                host -> device copies of a chunk
//   cudaError_t compute(pipeline&, const chunk&, cudaStream_t)
//   cudaError_t output(pipeline&, const chunk&, transfer_list&) device -> host copies (none: empty)
//   cudaError_t finish(pipeline&, cudaStream_t)                 after the last chunk's compute
// A transfer list has one part per host array (a sort of pairs moves keys and values: two);
// part k is the k-th array given to stream_chunks, staged or not on its own.
#pragma once

#include <scanlab/detail/util.cuh>
#include <scanlab/error.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
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
  std::int64_t* h_table = nullptr;  // pinned, h_table_bytes (the external sort's per-run table)
  std::size_t h_table_bytes = 0;
  int num_streams = 0;
  cudaStream_t streams[max_slots]{};
  cudaEvent_t computed[max_slots]{};
  cudaEvent_t done[max_slots]{};
  // What the last call did: for tests and benchmarks.
  std::int64_t chunk_items = 0;
  std::int64_t num_chunks = 0;
  std::int64_t merge_steps = 0;  // the external sort's merge pass (0: none)

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
    if (h_table != nullptr) (void)cudaFreeHost(h_table);
    d_mem = nullptr;
    h_staging = nullptr;
    h_words = nullptr;
    h_table = nullptr;
    d_bytes = h_bytes = h_table_bytes = 0;
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
  // Steps of the last external sort's merge pass (0: it had one run, or no sort yet).
  [[nodiscard]] std::int64_t last_merge_steps() const noexcept { return state_.merge_steps; }
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

// The copies of one chunk, one per host array (part k: the k-th array of stream_chunks).
struct transfer_list {
  static constexpr int max_parts = 2;
  transfer part[max_parts]{};
  int parts = 0;
  transfer_list() = default;
  transfer_list(const transfer& t) : part{t}, parts(1) {}  // NOLINT: one array, as most stages
  transfer_list(const transfer& first, const transfer& second) : part{first, second}, parts(2) {}
  [[nodiscard]] std::size_t bytes() const {
    std::size_t total = 0;
    for (int k = 0; k < parts; ++k) total += part[k].bytes;
    return total;
  }
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

// One of the workspace's buffers grown to `bytes` (never shrunk; its contents are not kept).
// Device memory: the streams must be idle (every call synchronises them before it returns,
// or before it regrows).
template <class T, class Alloc, class Release>
[[nodiscard]] cudaError_t grow_buffer(T*& buffer, std::size_t& held, std::size_t bytes, Alloc alloc, Release release) {
  if (held >= bytes) return cudaSuccess;
  if (buffer != nullptr) SCANLAB_TRY(release(buffer));
  buffer = nullptr;
  held = 0;
  void* fresh = nullptr;
  SCANLAB_TRY(alloc(&fresh, bytes));
  buffer = static_cast<T*>(fresh);
  held = bytes;
  return cudaSuccess;
}
inline cudaError_t device_alloc(void** p, std::size_t bytes) { return cudaMalloc(p, bytes); }
inline cudaError_t device_release(void* p) { return cudaFree(p); }
inline cudaError_t pinned_alloc(void** p, std::size_t bytes) { return cudaMallocHost(p, bytes); }
inline cudaError_t pinned_release(void* p) { return cudaFreeHost(p); }

// The device allocation, the pinned staging, the pinned word table (the external sort's).
[[nodiscard]] inline cudaError_t ensure_device_bytes(workspace_state& ws, std::size_t bytes) {
  return grow_buffer(ws.d_mem, ws.d_bytes, bytes, device_alloc, device_release);
}
[[nodiscard]] inline cudaError_t ensure_staging_bytes(workspace_state& ws, std::size_t bytes) {
  return grow_buffer(ws.h_staging, ws.h_bytes, bytes, pinned_alloc, pinned_release);
}
[[nodiscard]] inline cudaError_t ensure_host_table(workspace_state& ws, std::size_t words) {
  return grow_buffer(ws.h_table, ws.h_table_bytes, words * sizeof(std::int64_t), pinned_alloc, pinned_release);
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
  SCANLAB_TRY(ensure_device_bytes(ws, p.device_bytes()));
  if (ws.h_words == nullptr) {
    SCANLAB_TRY(cudaMallocHost(&ws.h_words, sizeof(std::int64_t) * max_slots));
  }
  return ensure_staging_bytes(ws, staged ? static_cast<std::size_t>(p.slots) * staging_bytes_per_slot : 0);
}

// Which parts of a chunk's copies go through the pinned staging buffers (pageable arrays).
struct staged_parts {
  bool in[transfer_list::max_parts]{};
  bool out[transfer_list::max_parts]{};
  [[nodiscard]] bool any_in() const {
    for (const bool b : in) {
      if (b) return true;
    }
    return false;
  }
  [[nodiscard]] bool any() const {
    for (int k = 0; k < transfer_list::max_parts; ++k) {
      if (in[k] || out[k]) return true;
    }
    return false;
  }
};

// One call's run of the ring over a host array (see the top of this file).
class pipeline {
 public:
  pipeline(workspace_state& ws, const plan& p, std::int64_t n, std::size_t staging_bytes_per_slot,
           const staged_parts& staged)
      : ws_(ws), plan_(p), n_(n), staging_stride_(staging_bytes_per_slot), staged_(staged) {}

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
  // Where part k of a slot's copies sits in its staging buffer: the parts back to back.
  [[nodiscard]] static std::size_t staging_offset(const transfer_list& list, int k) {
    std::size_t offset = 0;
    for (int j = 0; j < k; ++j) offset += align_up(list.part[j].bytes);
    return offset;
  }

  // The slot is about to take a new chunk: where its staging buffer is used, wait for the
  // slot's previous chunk and copy its staged output to the caller's array.
  [[nodiscard]] cudaError_t acquire(int s) {
    if (!used_[s]) return cudaSuccess;
    if (staged_.any_in()) SCANLAB_TRY(cudaEventSynchronize(ws_.done[s]));
    return flush(s);
  }
  [[nodiscard]] cudaError_t flush(int s) {
    const transfer_list& out = pending_[s];
    if (out.bytes() == 0) return cudaSuccess;
    SCANLAB_TRY(cudaEventSynchronize(ws_.done[s]));
    for (int k = 0; k < out.parts; ++k) {
      if (staged_.out[k] && out.part[k].bytes > 0) {
        std::memcpy(out.part[k].host, staging(s) + staging_offset(out, k), out.part[k].bytes);
      }
    }
    pending_[s] = {};
    return cudaSuccess;
  }

  template <class Stage>
  [[nodiscard]] cudaError_t copy_in(Stage& stage, const chunk& c) {
    const transfer_list in = stage.input(*this, c);
    for (int k = 0; k < in.parts; ++k) {
      const transfer& part = in.part[k];
      if (part.bytes == 0) continue;
      const void* source = part.host;
      if (staged_.in[k]) {
        unsigned char* staged = staging(c.slot) + staging_offset(in, k);
        std::memcpy(staged, part.host, part.bytes);
        source = staged;
      }
      SCANLAB_TRY(cudaMemcpyAsync(part.device, source, part.bytes, cudaMemcpyDefault, ws_.streams[c.slot]));
    }
    return cudaSuccess;
  }

  template <class Stage>
  [[nodiscard]] cudaError_t copy_out(Stage& stage, const chunk& c) {
    transfer_list out{};
    SCANLAB_TRY(stage.output(*this, c, out));
    const cudaStream_t stream = ws_.streams[c.slot];
    bool staged = false;
    for (int k = 0; k < out.parts; ++k) {
      const transfer& part = out.part[k];
      if (part.bytes == 0) continue;
      void* target = part.host;
      if (staged_.out[k]) {
        target = staging(c.slot) + staging_offset(out, k);
        staged = true;
      }
      SCANLAB_TRY(cudaMemcpyAsync(target, part.device, part.bytes, cudaMemcpyDefault, stream));
    }
    if (staged) pending_[c.slot] = out;
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
  staged_parts staged_;
  bool used_[max_slots]{};
  transfer_list pending_[max_slots]{};
};

// Whether each host array must be staged; a null array (reduce has no output) is not.
[[nodiscard]] inline cudaError_t classify_parts(std::initializer_list<const void*> arrays,
                                               bool (&staged)[transfer_list::max_parts]) {
  if (arrays.size() > transfer_list::max_parts) return cudaErrorInvalidValue;
  int k = 0;
  for (const void* array : arrays) {
    host_access access = host_access::direct;
    if (array != nullptr) SCANLAB_TRY(classify_host_pointer(array, access));
    staged[k++] = access == host_access::staged;
  }
  return cudaSuccess;
}

// Pinned staging bytes per slot: a chunk's parts back to back, each 256-byte aligned.
[[nodiscard]] inline std::size_t staging_bytes_per_slot(std::int64_t chunk_items, std::size_t item_bytes) {
  return align_up(static_cast<std::size_t>(chunk_items) * item_bytes + 256 * transfer_list::max_parts);
}

// The whole call: plan for the workspace's budget (with `opts`: the workspace's options, or a
// stage's own chunk cap), classify the host arrays (part k of the stage's copies is inputs[k]
// or outputs[k]), get the resources, run the ring. Outputs may be null (reduce). n == 0
// checks the budget and does nothing else.
template <class Stage>
[[nodiscard]] cudaError_t stream_chunks(workspace& ws, Stage& stage, std::int64_t n,
                                        std::initializer_list<const void*> inputs,
                                        std::initializer_list<const void*> outputs, const options& opts) {
  plan p{};
  SCANLAB_TRY(make_plan(stage, n, ws.device_bytes(), opts, p));
  workspace_state& state = ws.state();
  if (n == 0) {
    state.chunk_items = p.chunk_items;
    state.num_chunks = 0;
    return cudaSuccess;
  }
  for (const void* array : inputs) {
    if (array == nullptr) return cudaErrorInvalidValue;
  }
  staged_parts staged{};
  SCANLAB_TRY(classify_parts(inputs, staged.in));
  SCANLAB_TRY(classify_parts(outputs, staged.out));
  const std::size_t staging_per_slot = staging_bytes_per_slot(p.chunk_items, Stage::item_bytes);
  SCANLAB_TRY(prepare(state, p, staging_per_slot, staged.any()));
  pipeline run(state, p, n, staging_per_slot, staged);
  SCANLAB_TRY(run.run(stage));
  state.chunk_items = p.chunk_items;
  state.num_chunks = p.num_chunks;
  return cudaSuccess;
}

// One input array and at most one output (h_out null: none), the workspace's options.
template <class Stage>
[[nodiscard]] cudaError_t stream_chunks(workspace& ws, Stage& stage, std::int64_t n, const void* h_in,
                                        const void* h_out) {
  return stream_chunks(ws, stage, n, {h_in}, {h_out}, ws.pipeline_options());
}

// The one-item kernel of the device-side carries: *dst = src ? *src : value.
template <class T>
__global__ void streaming_carry_kernel(T* dst, const T* src, T value) {
  *dst = src != nullptr ? *src : value;
}

}  // namespace detail
}  // namespace scanlab::streaming
