// scanlab/streaming/sort.cuh: external (out-of-core) sort of host arrays of any length,
// keys or key-value pairs, within a device-memory budget (primitives/docs/streaming.md).
//
//   scanlab::streaming::workspace ws(std::size_t{16} << 30);             // 16 GiB of device memory
//   SCANLAB_CHECK(scanlab::streaming::sort_keys(ws, h_keys, h_keys, n));  // in place
//   scanlab::streaming::sort_options o;  o.h_scratch = h_pinned_scratch;  // sort_scratch_bytes<K>(n) bytes
//   SCANLAB_CHECK(scanlab::streaming::sort_pairs(ws, h_k, h_v, h_k_out, h_v_out, n, o));
//
// Two passes over the data, each one round trip across the host link:
//   1. Run formation: the pipeline (streaming/pipeline.cuh) streams chunks of the input
//      through the device; each chunk is radix-sorted there (scanlab::radix_sort_keys /
//      radix_sort_pairs, the sort stage below) and written back as a sorted run. With one
//      run (the input fits the budget's chunk) the run goes straight to the output: an
//      in-memory sort, and no second pass. Otherwise the runs go to a host scratch buffer.
//   2. Merge: a k-way merge of the R runs, streamed. The device holds a window of each run:
//      a ring of W = min(S, run length) items, refilled from the scratch as it drains. Each
//      step outputs the next S items (S set by the budget; the last step fewer):
//        a. split (one block): the smallest ordered-bits value t with at least S window items
//           <= t, by a binary search over the key bits (per-run binary searches inside it);
//           run r gives its items < t, and the S - #(< t) places left go to items equal to t
//           in run order (run 0's first). These are exactly the S first items of the
//           remaining input in (key, run, position) order: no run gives more than S items,
//           and a window holds min(S, what is left of its run), so every item taken is in a
//           window and every item left out, in a window or beyond it, comes after them;
//        b. gather (one kernel): each run's taken prefix, ring to a buffer, back to back in
//           run order;
//        c. merge: scanlab::merge_runs_keys / merge_runs_pairs of those R pieces (stable:
//           run r's before run r + 1's among equal keys) into one of two output buffers;
//        d. copy out: the merged S items to the output, on a second stream, overlapped with
//           (e) refill: each ring is topped up from the scratch (one or two copies per run).
//      The host reads the R counts of (a) once per step: its one wait on the device.
// Stable: equal keys keep their input order (the radix sort is stable within a run, the
// split and the merge take run i's before run j's for i < j), values move with their keys.
//
// Guarantees: the order of scanlab::radix_sort_keys (ascending by radix_ordered_bits: integers
// by value; floats with -0.0 equal to +0.0 in input order, every NaN after every number, NaNs
// in input order; keys moved as bit patterns), for the radix sort's key types (8- to 64-bit
// integers, float, double) and values (trivially copyable, 4 or 8 bytes). Identical to the
// in-memory radix sort of the whole array. Deterministic. Host-synchronous: the output is
// complete when the call returns (on failure it is unspecified, and the input unchanged). In
// place: the output arrays may be the input arrays (the merge reads only the scratch); other
// overlaps are not allowed, nor may the scratch overlap the arrays. Host arrays pinned or
// pageable (pageable: through pinned staging, bound by the CPU's copies).
//
// Progress: sort_options::on_progress, where set, is called on the calling thread after each
// run-formation chunk is queued for copy back and after each merge step (sort_progress: the
// pass, its items done, n, R), for a progress bar over a call that may take minutes; it costs
// nothing when null.
//
// Memory. Device: at most the workspace's budget (run formation: `slots` chunk buffers of the
// run's keys (and values) in and out, and the radix sort's temp storage; merge: R windows of
// W items, a gather buffer and two output buffers of S items, merge_runs' temp storage of
// about S items). Host: the scratch for R >= 2, n keys (and n values) in
// sort_scratch_bytes<Key, Value>(n) bytes: options.h_scratch if given (pinned for speed:
// cudaMallocHost or cudaHostRegister), else allocated pinned for the call (cudaMallocHost,
// falling back to pageable memory if that fails) and freed before it returns: a caller that
// sorts more than once should pass its own. Pinned staging (pageable arrays only): `slots`
// runs' bytes for run formation, 32 MiB for the merge.
//
// Errors: cudaErrorInvalidValue for n < 0, null arrays with n > 0, a device pointer given as
// a host array, a budget that does not hold one item per run, or R runs whose merge does not
// fit the budget (R windows of at least one item each: roughly budget^2 >= 8 n item_bytes^2
// for the default slots); cudaErrorMemoryAllocation where the scratch cannot be allocated;
// otherwise the first failing CUDA status.
#pragma once

#include <scanlab/algorithms/merge.cuh>
#include <scanlab/algorithms/radix_sort.cuh>
#include <scanlab/detail/launch.cuh>
#include <scanlab/detail/util.cuh>
#include <scanlab/error.hpp>
#include <scanlab/streaming/pipeline.cuh>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>

namespace scanlab::streaming {

// What sort_options::on_progress is told: how far the call has come.
struct sort_progress {
  int pass = 1;            // 1: run formation, 2: the merge
  std::int64_t done = 0;   // items of this pass handed to the copy back (pass 1) or merged (pass 2)
  std::int64_t n = 0;      // items in all
  std::int64_t runs = 0;   // R (1: the one run is the output, there is no pass 2)
};

// The external sort's own knobs (the workspace's options set the ring's slots).
struct sort_options {
  // The most input bytes (keys and values) of one run. Larger runs mean fewer runs (R), so
  // larger merge windows and fewer, larger copies per merge step; smaller ones overlap more
  // of run formation's first copy in and last copy out. 1 GiB: 32 runs for 32 GiB of input.
  std::size_t max_run_bytes = std::size_t{1} << 30;
  // Host scratch for the runs, sort_scratch_bytes<Key, Value>(n) bytes (pinned for speed), or
  // null: allocated for the call. Unused when the input makes one run.
  void* h_scratch = nullptr;
  // Progress (an app's progress bar): called on the calling thread between pieces of work, after
  // each run-formation chunk's copy back is queued and after each merge step, with `context`.
  // It must not throw or call into this workspace; null: not called.
  void (*on_progress)(void* context, const sort_progress& progress) = nullptr;
  void* progress_context = nullptr;
};

namespace detail {

using radix_sort_detail::has_values_v;
using radix_sort_detail::keys_only;

template <class Value>
inline constexpr std::size_t value_bytes_v = has_values_v<Value> ? sizeof(Value) : 0;

// Where the runs' values start in the scratch: after the keys, 256-byte aligned.
template <class Key>
constexpr std::size_t scratch_values_offset(std::int64_t n) {
  return align_up(static_cast<std::size_t>(n) * sizeof(Key));
}

}  // namespace detail

// Host scratch bytes of an external sort of n items (keys, or pairs with Value).
template <class Key, class Value = radix_sort_detail::keys_only>
[[nodiscard]] constexpr std::size_t sort_scratch_bytes(std::int64_t n) {
  if (n <= 0) return 0;
  return detail::scratch_values_offset<Key>(n) + static_cast<std::size_t>(n) * detail::value_bytes_v<Value>;
}

namespace detail {

// ---- pass 1: run formation, a pipeline stage --------------------------------------------

// Slot layout: [keys in][keys out][values in][values out], each 256-byte aligned.
template <class Key, class Value>
struct sort_stage {
  static constexpr bool with_values = has_values_v<Value>;
  static constexpr std::size_t item_bytes = sizeof(Key) + value_bytes_v<Value>;
  static constexpr std::size_t word_bytes = 0;
  const Key* h_keys_in;
  const Value* h_values_in;
  Key* h_keys_out;  // the output (one run) or the scratch
  Value* h_values_out;
  const sort_options* progress = nullptr;  // on_progress, if set
  std::int64_t n = 0;
  std::int64_t runs = 0;

  [[nodiscard]] static std::size_t key_bytes(std::int64_t items) { return align_up(static_cast<std::size_t>(items) * sizeof(Key)); }
  [[nodiscard]] static std::size_t value_bytes(std::int64_t items) {
    return align_up(static_cast<std::size_t>(items) * value_bytes_v<Value>);
  }
  [[nodiscard]] std::size_t slot_bytes(std::int64_t items) const { return 2 * (key_bytes(items) + value_bytes(items)); }

  struct slot_buffers {
    Key* keys_in;
    Key* keys_out;
    Value* values_in;
    Value* values_out;
  };
  [[nodiscard]] static slot_buffers buffers(const pipeline& p, const chunk& c) {
    unsigned char* base = p.slot(c.slot);
    const std::size_t kb = key_bytes(p.chunk_items());
    const std::size_t vb = value_bytes(p.chunk_items());
    return {reinterpret_cast<Key*>(base), reinterpret_cast<Key*>(base + kb), reinterpret_cast<Value*>(base + 2 * kb),
            reinterpret_cast<Value*>(base + 2 * kb + vb)};
  }

  [[nodiscard]] cudaError_t sort(void* d_temp, std::size_t& bytes, const slot_buffers& b, std::int64_t items,
                                 cudaStream_t stream) const {
    if constexpr (with_values) {
      return ::scanlab::radix_sort_pairs(d_temp, bytes, static_cast<const Key*>(b.keys_in), b.keys_out,
                                         static_cast<const Value*>(b.values_in), b.values_out, items, {}, stream);
    } else {
      return ::scanlab::radix_sort_keys(d_temp, bytes, static_cast<const Key*>(b.keys_in), b.keys_out, items, {},
                                        stream);
    }
  }
  [[nodiscard]] cudaError_t temp_bytes(std::int64_t items, std::size_t& bytes) const {
    return sort(nullptr, bytes, slot_buffers{}, items, nullptr);
  }
  [[nodiscard]] transfer_list input(const pipeline& p, const chunk& c) const {
    const slot_buffers b = buffers(p, c);
    const transfer keys{const_cast<Key*>(h_keys_in + c.begin), b.keys_in, static_cast<std::size_t>(c.items) * sizeof(Key)};
    if constexpr (with_values) {
      return {keys, transfer{const_cast<Value*>(h_values_in + c.begin), b.values_in,
                             static_cast<std::size_t>(c.items) * sizeof(Value)}};
    } else {
      return keys;
    }
  }
  [[nodiscard]] cudaError_t compute(const pipeline& p, const chunk& c, cudaStream_t stream) const {
    std::size_t bytes = p.temp_bytes();
    return sort(p.temp(), bytes, buffers(p, c), c.items, stream);
  }
  [[nodiscard]] cudaError_t output(const pipeline& p, const chunk& c, transfer_list& out) const {
    if (progress != nullptr && progress->on_progress != nullptr) {
      progress->on_progress(progress->progress_context, sort_progress{1, c.begin + c.items, n, runs});
    }
    const slot_buffers b = buffers(p, c);
    const transfer keys{h_keys_out + c.begin, b.keys_out, static_cast<std::size_t>(c.items) * sizeof(Key)};
    if constexpr (with_values) {
      out = transfer_list{keys, transfer{h_values_out + c.begin, b.values_out,
                                         static_cast<std::size_t>(c.items) * sizeof(Value)}};
    } else {
      out = keys;
    }
    return cudaSuccess;
  }
  [[nodiscard]] cudaError_t finish(const pipeline&, cudaStream_t) const { return cudaSuccess; }
};

// ---- pass 2: the streamed k-way merge ---------------------------------------------------

inline constexpr int split_threads = 256;
inline constexpr int gather_threads = 256;

// Run r's window is a ring of `capacity` items at windows + r * capacity; table[2r] is the
// ring position of its first item, table[2r + 1] how many items it holds.
// The number of window items whose ordered bits are below t (Strict) or at most t.
template <bool Strict, class Bits, bool IsFloat>
__device__ std::int64_t window_rank(const Bits* ring, std::int64_t capacity, std::int64_t head, std::int64_t avail,
                                    std::uint64_t t, radix_sort_detail::key_transform<Bits, IsFloat> order) {
  std::int64_t lo = 0;
  std::int64_t hi = avail;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    std::int64_t at = head + mid;
    if (at >= capacity) at -= capacity;
    const std::uint64_t key = order.ordered(ring[at]);
    if (Strict ? key < t : key <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// Step (a), one block: counts[r] = the items run r gives to this step (take in all),
// offsets[r] = where they go in the gather buffer (offsets[runs] = take).
template <class Bits, bool IsFloat>
__global__ void __launch_bounds__(split_threads)
    external_sort_split_kernel(const Bits* windows, std::int64_t capacity, const std::int64_t* table, int runs,
                               std::int64_t take, radix_sort_detail::key_transform<Bits, IsFloat> order,
                               std::int64_t* counts, std::int64_t* offsets) {
  __shared__ unsigned long long total;
  // The smallest t with #(items <= t) >= take: a binary search over the ordered bits.
  std::uint64_t lo = 0;
  std::uint64_t hi = static_cast<std::uint64_t>(static_cast<Bits>(~Bits{0}));
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (threadIdx.x == 0) total = 0;
    __syncthreads();
    unsigned long long mine = 0;
    for (int r = static_cast<int>(threadIdx.x); r < runs; r += split_threads) {
      const std::int64_t head = table[2 * r];
      const std::int64_t avail = table[2 * r + 1];
      mine += static_cast<unsigned long long>(
          window_rank<false>(windows + static_cast<std::int64_t>(r) * capacity, capacity, head, avail, mid, order));
    }
    if (mine != 0) atomicAdd(&total, mine);
    __syncthreads();
    const bool enough = total >= static_cast<unsigned long long>(take);
    __syncthreads();  // every thread has read total before thread 0 clears it
    if (enough) hi = mid;
    else lo = mid + 1;
  }
  // Per run: items below t (counts) and at most t (offsets, for now).
  for (int r = static_cast<int>(threadIdx.x); r < runs; r += split_threads) {
    const Bits* ring = windows + static_cast<std::int64_t>(r) * capacity;
    const std::int64_t head = table[2 * r];
    const std::int64_t avail = table[2 * r + 1];
    counts[r] = window_rank<true>(ring, capacity, head, avail, lo, order);
    offsets[r] = window_rank<false>(ring, capacity, head, avail, lo, order);
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  // Items equal to t fill the places left, run 0's first (stability); then the offsets.
  std::int64_t below = 0;
  for (int r = 0; r < runs; ++r) below += counts[r];
  std::int64_t left = take - below;
  std::int64_t offset = 0;
  for (int r = 0; r < runs; ++r) {
    const std::int64_t equal = offsets[r] - counts[r];
    const std::int64_t more = equal < left ? equal : left;
    left -= more;
    counts[r] += more;
    offsets[r] = offset;
    offset += counts[r];
  }
  offsets[runs] = offset;
}

// Step (b): run r's counts[r] first window items to gather + offsets[r] (keys, and values).
template <class Bits, class ValueBits>
__global__ void __launch_bounds__(gather_threads)
    external_sort_gather_kernel(const Bits* key_windows, const ValueBits* value_windows, std::int64_t capacity,
                                const std::int64_t* table, const std::int64_t* counts, const std::int64_t* offsets,
                                int runs, Bits* keys_out, ValueBits* values_out) {
  for (int r = static_cast<int>(blockIdx.y); r < runs; r += static_cast<int>(gridDim.y)) {
    const std::int64_t base = static_cast<std::int64_t>(r) * capacity;
    const std::int64_t head = table[2 * r];
    const std::int64_t count = counts[r];
    const std::int64_t out = offsets[r];
    for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * gather_threads + threadIdx.x; i < count;
         i += static_cast<std::int64_t>(gridDim.x) * gather_threads) {
      std::int64_t at = head + i;
      if (at >= capacity) at -= capacity;
      keys_out[out + i] = key_windows[base + at];
      if constexpr (has_values_v<ValueBits>) values_out[out + i] = value_windows[base + at];
    }
  }
}

// A copy between a host array and device memory on `stream` (to_device: host to device):
// asynchronous where the host side is pinned (bounce == nullptr), else through the pinned
// `bounce` buffer piece by piece, host-synchronous.
[[nodiscard]] inline cudaError_t copy_across(void* dst, const void* src, std::size_t bytes, bool to_device,
                                             cudaStream_t stream, unsigned char* bounce, std::size_t bounce_bytes) {
  if (bytes == 0) return cudaSuccess;
  if (bounce == nullptr) return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream);
  auto* out = static_cast<unsigned char*>(dst);
  const auto* in = static_cast<const unsigned char*>(src);
  for (std::size_t done = 0; done < bytes; done += bounce_bytes) {
    const std::size_t piece = std::min(bounce_bytes, bytes - done);
    if (to_device) {
      SCANLAB_TRY(cudaStreamSynchronize(stream));  // the bounce buffer's last piece has left
      std::memcpy(bounce, in + done, piece);
      SCANLAB_TRY(cudaMemcpyAsync(out + done, bounce, piece, cudaMemcpyDefault, stream));
    } else {
      SCANLAB_TRY(cudaMemcpyAsync(bounce, in + done, piece, cudaMemcpyDefault, stream));
      SCANLAB_TRY(cudaStreamSynchronize(stream));
      std::memcpy(out + done, bounce, piece);
    }
  }
  return cudaStreamSynchronize(stream);
}

// Pinned bounce buffer per direction for pageable arrays in the merge.
inline constexpr std::size_t merge_bounce_bytes = std::size_t{16} << 20;

// The merge's device layout for runs of run_items items and steps of `step` items, carved
// (or, with base null, sized) the same way.
template <class Key, class Value>
struct merge_layout {
  using Bits = radix_sort_detail::key_bits_t<Key>;
  std::int64_t* table = nullptr;    // 2 words per run: ring head, items held
  std::int64_t* counts = nullptr;   // per run
  std::int64_t* offsets = nullptr;  // runs + 1
  Key* key_windows = nullptr;
  Value* value_windows = nullptr;
  Key* gather_keys = nullptr;
  Value* gather_values = nullptr;
  Key* out_keys[2]{};
  Value* out_values[2]{};
  void* merge_temp = nullptr;
  std::size_t merge_temp_bytes = 0;
  std::int64_t capacity = 0;  // ring items per run
  std::size_t bytes = 0;      // in all

  [[nodiscard]] cudaError_t carve(void* base, int runs, std::int64_t run_items, std::int64_t step) {
    constexpr std::size_t vb = value_bytes_v<Value>;
    using value_byte = unsigned char;
    const auto values = [&](std::int64_t items) { return static_cast<std::size_t>(items) * vb; };
    scanlab::detail::temp_carver carver(base);
    capacity = std::min(step, run_items);
    table = carver.take<std::int64_t>(2 * static_cast<std::size_t>(runs));
    counts = carver.take<std::int64_t>(static_cast<std::size_t>(runs));
    offsets = carver.take<std::int64_t>(static_cast<std::size_t>(runs) + 1);
    key_windows = carver.take<Key>(static_cast<std::size_t>(runs) * static_cast<std::size_t>(capacity));
    value_windows = reinterpret_cast<Value*>(carver.take<value_byte>(static_cast<std::size_t>(runs) * values(capacity)));
    gather_keys = carver.take<Key>(static_cast<std::size_t>(step));
    gather_values = reinterpret_cast<Value*>(carver.take<value_byte>(values(step)));
    for (int b = 0; b < 2; ++b) {
      out_keys[b] = carver.take<Key>(static_cast<std::size_t>(step));
      out_values[b] = reinterpret_cast<Value*>(carver.take<value_byte>(values(step)));
    }
    // merge_runs' temp storage is largest with three nonempty runs or more.
    const std::int64_t worst[] = {0, std::min<std::int64_t>(1, step), std::min<std::int64_t>(2, step), step};
    if constexpr (has_values_v<Value>) {
      SCANLAB_TRY(::scanlab::merge_runs_pairs(nullptr, merge_temp_bytes, static_cast<const Key*>(nullptr),
                                              static_cast<const Value*>(nullptr), std::span<const std::int64_t>(worst),
                                              static_cast<Key*>(nullptr), static_cast<Value*>(nullptr)));
    } else {
      SCANLAB_TRY(::scanlab::merge_runs_keys(nullptr, merge_temp_bytes, static_cast<const Key*>(nullptr),
                                             std::span<const std::int64_t>(worst), static_cast<Key*>(nullptr)));
    }
    merge_temp = carver.take<unsigned char>(merge_temp_bytes);
    bytes = carver.bytes();
    return cudaSuccess;
  }
};

// The largest merge step that fits the budget (0: not even one item).
template <class Key, class Value>
[[nodiscard]] cudaError_t plan_merge_step(int runs, std::int64_t run_items, std::int64_t n, std::size_t budget,
                                          std::int64_t& step) {
  merge_layout<Key, Value> layout;
  SCANLAB_TRY(layout.carve(nullptr, runs, run_items, 1));
  if (layout.bytes > budget) {
    step = 0;
    return cudaSuccess;
  }
  std::int64_t lo = 1;
  std::int64_t hi = n;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    SCANLAB_TRY(layout.carve(nullptr, runs, run_items, mid));
    if (layout.bytes <= budget) lo = mid;
    else hi = mid - 1;
  }
  step = lo;
  return cudaSuccess;
}

// The host arrays of the merge: the runs (in the scratch) and the output.
template <class Key, class Value>
struct merge_arrays {
  const Key* run_keys;
  const Value* run_values;
  Key* out_keys;
  Value* out_values;
  bool runs_staged;
  bool out_staged;
};

// Pass 2 (see the top of this file). The workspace's streams 0 and 1 and their events exist
// (run formation had at least two chunks, so at least two slots).
template <class Key, class Value>
class merge_pass {
 public:
  using Bits = radix_sort_detail::key_bits_t<Key>;
  using ValueBits = merge_detail::value_bits_of<Value>;
  static constexpr bool with_values = has_values_v<Value>;

  merge_pass(workspace_state& ws, const merge_arrays<Key, Value>& arrays, std::int64_t n, std::int64_t run_items,
             std::int64_t step, const sort_options& opts)
      : ws_(ws), arrays_(arrays), n_(n), run_items_(run_items), step_(step),
        runs_(static_cast<int>(scanlab::detail::ceil_div(n, run_items))), opts_(opts) {}

  [[nodiscard]] cudaError_t run() {
    const cudaError_t status = run_steps();
    if (status != cudaSuccess) {
      (void)cudaStreamSynchronize(ws_.streams[0]);
      (void)cudaStreamSynchronize(ws_.streams[1]);
    }
    return status;
  }
  [[nodiscard]] std::int64_t steps() const { return steps_; }

 private:
  struct run_state {
    std::int64_t head = 0;    // ring position of the window's first item
    std::int64_t held = 0;    // items in the window
    std::int64_t loaded = 0;  // items of the run copied to the device so far
    std::int64_t length = 0;
  };

  [[nodiscard]] cudaError_t prepare() {
    SCANLAB_TRY(layout_.carve(nullptr, runs_, run_items_, step_));
    SCANLAB_TRY(ensure_device_bytes(ws_, layout_.bytes));
    SCANLAB_TRY(layout_.carve(ws_.d_mem, runs_, run_items_, step_));
    SCANLAB_TRY(ensure_host_table(ws_, 3 * static_cast<std::size_t>(runs_)));
    if (arrays_.runs_staged || arrays_.out_staged) SCANLAB_TRY(ensure_staging_bytes(ws_, 2 * merge_bounce_bytes));
    state_.resize(static_cast<std::size_t>(runs_));
    for (int r = 0; r < runs_; ++r) {
      state_[static_cast<std::size_t>(r)].length = std::min(run_items_, n_ - static_cast<std::int64_t>(r) * run_items_);
    }
    return cudaSuccess;
  }

  [[nodiscard]] unsigned char* bounce(bool staged, int direction) const {
    return staged ? ws_.h_staging + static_cast<std::size_t>(direction) * merge_bounce_bytes : nullptr;
  }

  // Copies run r's items [loaded, loaded + count) into its ring at ring position `at` (no wrap).
  [[nodiscard]] cudaError_t load(int r, std::int64_t at, std::int64_t count, cudaStream_t stream) {
    run_state& s = state_[static_cast<std::size_t>(r)];
    const std::int64_t source = static_cast<std::int64_t>(r) * run_items_ + s.loaded;
    const std::int64_t target = static_cast<std::int64_t>(r) * layout_.capacity + at;
    unsigned char* b = bounce(arrays_.runs_staged, 0);
    SCANLAB_TRY(copy_across(layout_.key_windows + target, arrays_.run_keys + source,
                            static_cast<std::size_t>(count) * sizeof(Key), true, stream, b, merge_bounce_bytes));
    if constexpr (with_values) {
      SCANLAB_TRY(copy_across(layout_.value_windows + target, arrays_.run_values + source,
                              static_cast<std::size_t>(count) * sizeof(Value), true, stream, b, merge_bounce_bytes));
    }
    s.loaded += count;
    s.held += count;
    return cudaSuccess;
  }

  // Tops run r's ring up with the run's next items (one copy, or two where the ring wraps).
  [[nodiscard]] cudaError_t refill(int r, cudaStream_t stream) {
    const run_state& s = state_[static_cast<std::size_t>(r)];
    const std::int64_t capacity = layout_.capacity;
    std::int64_t count = std::min(capacity - s.held, s.length - s.loaded);
    if (count <= 0) return cudaSuccess;
    const std::int64_t at = (s.head + s.held) % capacity;
    const std::int64_t first = std::min(count, capacity - at);
    SCANLAB_TRY(load(r, at, first, stream));
    count -= first;
    return count > 0 ? load(r, 0, count, stream) : cudaSuccess;
  }

  [[nodiscard]] cudaError_t run_steps() {
    SCANLAB_TRY(prepare());
    const cudaStream_t main = ws_.streams[0];
    const cudaStream_t out = ws_.streams[1];
    cudaEvent_t merged[2] = {ws_.computed[0], ws_.computed[1]};
    cudaEvent_t copied[2] = {ws_.done[0], ws_.done[1]};
    for (int r = 0; r < runs_; ++r) SCANLAB_TRY(refill(r, main));

    std::int64_t* h_table = ws_.h_table;
    std::int64_t* h_counts = ws_.h_table + 2 * runs_;
    std::vector<std::int64_t> offsets(static_cast<std::size_t>(runs_) + 1);
    const auto order = radix_sort_detail::make_key_transform<Key>(false);
    const auto* key_windows = reinterpret_cast<const Bits*>(layout_.key_windows);
    const std::int64_t per_run_blocks =
        std::clamp<std::int64_t>(scanlab::detail::ceil_div<std::int64_t>(step_ / runs_ + 1, 4 * gather_threads), 1, 1024);
    const dim3 gather_grid(static_cast<unsigned>(per_run_blocks), static_cast<unsigned>(std::min(runs_, 65535)));

    for (std::int64_t produced = 0; produced < n_; ++steps_) {
      const std::int64_t take = std::min(step_, n_ - produced);
      const int b = static_cast<int>(steps_ % 2);
      // (a) split: the windows' state up, the counts back.
      for (int r = 0; r < runs_; ++r) {
        h_table[2 * r] = state_[static_cast<std::size_t>(r)].head;
        h_table[2 * r + 1] = state_[static_cast<std::size_t>(r)].held;
      }
      SCANLAB_TRY(cudaMemcpyAsync(layout_.table, h_table, 2 * static_cast<std::size_t>(runs_) * sizeof(std::int64_t),
                                  cudaMemcpyHostToDevice, main));
      SCANLAB_TRY(scanlab::detail::launch(external_sort_split_kernel<Bits, std::is_floating_point_v<Key>>,
                                          1, split_threads, 0, main, key_windows, layout_.capacity,
                                          static_cast<const std::int64_t*>(layout_.table), runs_, take, order,
                                          layout_.counts, layout_.offsets));
      SCANLAB_TRY(cudaMemcpyAsync(h_counts, layout_.counts, static_cast<std::size_t>(runs_) * sizeof(std::int64_t),
                                  cudaMemcpyDeviceToHost, main));
      // (b) gather, queued before the host waits for the counts.
      SCANLAB_TRY(scanlab::detail::launch(
          external_sort_gather_kernel<Bits, ValueBits>, gather_grid, dim3(gather_threads), 0, main, key_windows,
          reinterpret_cast<const ValueBits*>(layout_.value_windows), layout_.capacity,
          static_cast<const std::int64_t*>(layout_.table), static_cast<const std::int64_t*>(layout_.counts),
          static_cast<const std::int64_t*>(layout_.offsets), runs_, reinterpret_cast<Bits*>(layout_.gather_keys),
          reinterpret_cast<ValueBits*>(layout_.gather_values)));
      SCANLAB_TRY(cudaStreamSynchronize(main));  // the host's one wait per step
      offsets[0] = 0;
      for (int r = 0; r < runs_; ++r) {
        const std::int64_t count = h_counts[r];
        run_state& s = state_[static_cast<std::size_t>(r)];
        if (count < 0 || count > s.held) return cudaErrorUnknown;  // cannot happen: a broken invariant
        offsets[static_cast<std::size_t>(r) + 1] = offsets[static_cast<std::size_t>(r)] + count;
      }
      if (offsets.back() != take) return cudaErrorUnknown;

      // (c) merge into output buffer b, once its previous contents (step - 2) have left.
      if (steps_ >= 2) SCANLAB_TRY(cudaStreamWaitEvent(main, copied[b], 0));
      std::size_t temp_bytes = layout_.merge_temp_bytes;
      const std::span<const std::int64_t> pieces(offsets);
      if constexpr (with_values) {
        SCANLAB_TRY(::scanlab::merge_runs_pairs(layout_.merge_temp, temp_bytes,
                                                static_cast<const Key*>(layout_.gather_keys),
                                                static_cast<const Value*>(layout_.gather_values), pieces,
                                                layout_.out_keys[b], layout_.out_values[b], main));
      } else {
        SCANLAB_TRY(::scanlab::merge_runs_keys(layout_.merge_temp, temp_bytes,
                                               static_cast<const Key*>(layout_.gather_keys), pieces,
                                               layout_.out_keys[b], main));
      }
      SCANLAB_TRY(cudaEventRecord(merged[b], main));

      // (d) copy out on the second stream.
      SCANLAB_TRY(cudaStreamWaitEvent(out, merged[b], 0));
      unsigned char* ob = bounce(arrays_.out_staged, 1);
      SCANLAB_TRY(copy_across(arrays_.out_keys + produced, layout_.out_keys[b],
                              static_cast<std::size_t>(take) * sizeof(Key), false, out, ob, merge_bounce_bytes));
      if constexpr (with_values) {
        SCANLAB_TRY(copy_across(arrays_.out_values + produced, layout_.out_values[b],
                                static_cast<std::size_t>(take) * sizeof(Value), false, out, ob, merge_bounce_bytes));
      }
      SCANLAB_TRY(cudaEventRecord(copied[b], out));

      // (e) refill, behind the gather on the main stream (it overwrites what the gather read).
      for (int r = 0; r < runs_; ++r) {
        run_state& s = state_[static_cast<std::size_t>(r)];
        const std::int64_t count = h_counts[r];
        if (count == 0) continue;
        s.head = (s.head + count) % layout_.capacity;
        s.held -= count;
        SCANLAB_TRY(refill(r, main));
      }
      produced += take;
      if (opts_.on_progress != nullptr) opts_.on_progress(opts_.progress_context, sort_progress{2, produced, n_, runs_});
    }
    SCANLAB_TRY(cudaStreamSynchronize(main));
    return cudaStreamSynchronize(out);
  }

  workspace_state& ws_;
  merge_arrays<Key, Value> arrays_;
  std::int64_t n_;
  std::int64_t run_items_;
  std::int64_t step_;
  int runs_;
  const sort_options& opts_;
  std::int64_t steps_ = 0;
  merge_layout<Key, Value> layout_{};
  std::vector<run_state> state_;
};

// The scratch of the runs: the caller's, or allocated for the call (pinned, else pageable).
class scratch_buffer {
 public:
  scratch_buffer() = default;
  ~scratch_buffer() {
    if (owned_ == ownership::pinned) (void)cudaFreeHost(data_);
    if (owned_ == ownership::pageable) std::free(data_);
  }
  scratch_buffer(const scratch_buffer&) = delete;
  scratch_buffer& operator=(const scratch_buffer&) = delete;

  [[nodiscard]] cudaError_t acquire(void* given, std::size_t bytes) {
    if (given != nullptr) {
      data_ = given;
      return cudaSuccess;
    }
    if (cudaMallocHost(&data_, bytes) == cudaSuccess) {
      owned_ = ownership::pinned;
      return cudaSuccess;
    }
    (void)cudaGetLastError();  // a failed pinned allocation: try pageable memory
    data_ = std::malloc(bytes);
    if (data_ == nullptr) return cudaErrorMemoryAllocation;
    owned_ = ownership::pageable;
    return cudaSuccess;
  }
  [[nodiscard]] unsigned char* data() const { return static_cast<unsigned char*>(data_); }

 private:
  enum class ownership { none, pinned, pageable };
  void* data_ = nullptr;
  ownership owned_ = ownership::none;
};

template <class Key, class Value>
[[nodiscard]] cudaError_t external_sort(workspace& ws, const Key* h_keys_in, const Value* h_values_in, Key* h_keys_out,
                                        Value* h_values_out, std::int64_t n, const sort_options& sort_opts) {
  merge_detail::check_types<Key, Value>();  // the radix sort's and the merge's types
  constexpr bool with_values = has_values_v<Value>;
  using stage_type = sort_stage<Key, Value>;
  options opts = ws.pipeline_options();
  opts.max_chunk_bytes = sort_opts.max_run_bytes;
  workspace_state& state = ws.state();
  state.merge_steps = 0;
  if (n > 0 && (h_keys_in == nullptr || h_keys_out == nullptr ||
                (with_values && (h_values_in == nullptr || h_values_out == nullptr)))) {
    return cudaErrorInvalidValue;
  }
  stage_type stage{h_keys_in, h_values_in, h_keys_out, h_values_out, &sort_opts, n};
  plan runs{};
  SCANLAB_TRY(make_plan(stage, n, ws.device_bytes(), opts, runs));
  stage.runs = runs.num_chunks;
  if (runs.num_chunks <= 1) {  // n == 0, or one run: the in-memory sort, straight to the output
    if constexpr (with_values) {
      return stream_chunks(ws, stage, n, {h_keys_in, h_values_in}, {h_keys_out, h_values_out}, opts);
    } else {
      return stream_chunks(ws, stage, n, {h_keys_in}, {h_keys_out}, opts);
    }
  }
  // Several runs: check that their merge fits before any work, and where the output goes.
  if (runs.num_chunks > INT32_MAX) return cudaErrorInvalidValue;
  std::int64_t step = 0;
  SCANLAB_TRY((plan_merge_step<Key, Value>(static_cast<int>(runs.num_chunks), runs.chunk_items, n,
                                           ws.device_bytes(), step)));
  if (step < 1) return cudaErrorInvalidValue;
  bool out_staged[transfer_list::max_parts]{};
  if constexpr (with_values) SCANLAB_TRY(classify_parts({h_keys_out, h_values_out}, out_staged));
  else SCANLAB_TRY(classify_parts({h_keys_out}, out_staged));

  scratch_buffer scratch;
  SCANLAB_TRY(scratch.acquire(sort_opts.h_scratch, sort_scratch_bytes<Key, Value>(n)));
  auto* run_keys = reinterpret_cast<Key*>(scratch.data());
  auto* run_values = reinterpret_cast<Value*>(scratch.data() + scratch_values_offset<Key>(n));
  bool runs_staged[transfer_list::max_parts]{};
  SCANLAB_TRY(classify_parts({scratch.data()}, runs_staged));

  // Pass 1: the runs into the scratch.
  stage.h_keys_out = run_keys;
  stage.h_values_out = run_values;
  if constexpr (with_values) {
    SCANLAB_TRY(stream_chunks(ws, stage, n, {h_keys_in, h_values_in}, {run_keys, run_values}, opts));
  } else {
    SCANLAB_TRY(stream_chunks(ws, stage, n, {h_keys_in}, {run_keys}, opts));
  }
  // Pass 2: the merge into the output.
  const merge_arrays<Key, Value> arrays{run_keys,       run_values, h_keys_out, h_values_out, runs_staged[0],
                                        out_staged[0] || out_staged[1]};
  merge_pass<Key, Value> merge(state, arrays, n, runs.chunk_items, step, sort_opts);
  SCANLAB_TRY(merge.run());
  state.merge_steps = merge.steps();
  return cudaSuccess;
}

}  // namespace detail

// h_out = h_in sorted ascending (the radix sort's order, stable). h_out == h_in: in place.
template <class Key>
[[nodiscard]] cudaError_t sort_keys(workspace& ws, const Key* h_in, Key* h_out, std::int64_t n,
                                    const sort_options& opts = {}) {
  using detail::keys_only;
  return detail::external_sort<Key, keys_only>(ws, h_in, nullptr, h_out, nullptr, n, opts);
}

// The keys sorted as sort_keys does, each value moving with its key. The outputs may be the
// inputs (in place).
template <class Key, class Value>
[[nodiscard]] cudaError_t sort_pairs(workspace& ws, const Key* h_keys_in, const Value* h_values_in, Key* h_keys_out,
                                     Value* h_values_out, std::int64_t n, const sort_options& opts = {}) {
  return detail::external_sort<Key, Value>(ws, h_keys_in, h_values_in, h_keys_out, h_values_out, n, opts);
}

// The same with a workspace of device_bytes made for the call (default pipeline options).
template <class Key>
[[nodiscard]] cudaError_t sort_keys(std::size_t device_bytes, const Key* h_in, Key* h_out, std::int64_t n,
                                    const sort_options& opts = {}) {
  workspace ws(device_bytes);
  return sort_keys(ws, h_in, h_out, n, opts);
}
template <class Key, class Value>
[[nodiscard]] cudaError_t sort_pairs(std::size_t device_bytes, const Key* h_keys_in, const Value* h_values_in,
                                     Key* h_keys_out, Value* h_values_out, std::int64_t n,
                                     const sort_options& opts = {}) {
  workspace ws(device_bytes);
  return sort_pairs(ws, h_keys_in, h_values_in, h_keys_out, h_values_out, n, opts);
}

}  // namespace scanlab::streaming
