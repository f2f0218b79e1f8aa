// scanlab/algorithms/quicksort.cuh: quicksort on the GPU, three-way partitions around many pivots per level.
//
//   std::size_t temp_bytes = 0;
//   SCANLAB_CHECK(scanlab::quicksort(nullptr, temp_bytes, d_keys_in, d_keys_out, n, stream));
//   ... allocate temp_bytes at d_temp ...
//   SCANLAB_CHECK(scanlab::quicksort(d_temp, temp_bytes, d_keys_in, d_keys_out, n, stream));
//   (quicksort_pairs: the same with values riding along with their keys)
//
// The algorithm, level by level (the host drives the recursion):
//   1. every segment longer than the leaf size gets pivot_count = 31 pivots: evenly spaced
//      order statistics of 512 samples drawn from 512 equal strata of the segment (the
//      median of samples, generalised; choose_pivots_kernel);
//   2. every segment is partitioned three ways around EACH of its pivots at once: 63
//      buckets, "less than pivot 0 | equal to pivot 0 | between pivots 0 and 1 | equal to
//      pivot 1 | ... | greater than pivot 30". All segments of a level in three launches:
//      each tile counts its keys per bucket (bucket_count_kernel), one exclusive scan of
//      all the counts gives every tile's run of every bucket its place, and each tile
//      writes its buckets there (bucket_scatter_kernel). Keys move between two buffers
//      (the output and a temp buffer) from level to level;
//   3. the next level is planned on the device: one scan over every (segment, bucket)
//      entry places each bucket in its list (plan_count_kernel, plan_write_kernel): each
//      equal bucket is finished (copied to the output where the level wrote to the temp
//      buffer, copy_runs_kernel); the other buckets are the next level's segments, or, at
//      most leaf-size long, leaves. The host reads back only the totals (how many segments,
//      tiles, leaves and runs) to size the next launches;
//   4. leaves are sorted by one block each in shared memory (a merge sort,
//      leaf_merge_sort_kernel), many in one launch, straight into the output.
// Duplicates cannot degrade it: all keys equal to a pivot are finished by the level that
// meets them (an all-equal or two-valued input is one level). The pivots are elements of
// their segment, so every bucket between pivots is smaller than its segment: every level
// progresses. A level divides the segments by about 32, so a sort takes about
// log32(n / leaf size) levels (2^28 four-byte keys: 3), each reading the keys twice and
// writing them once.
//
// The worst case is O(n log n) by construction, as in introsort:
//   * the sample positions are hashed with a per-call seed, so an input cannot know where
//     the samples fall. With positions a fixed function of the segment (the first versions),
//     an input that holds the smallest keys where every level samples made each level
//     remove only 496 keys: on 2^20 uint32 keys 2082 levels and 160 ms instead of 2 levels
//     and 0.24 ms (H100; apps/partition/quicksort_adversary.hpp builds such an input).
//     Sampled this way the 31 pivots are quantiles of a stratified random sample, whatever
//     the keys' arrangement;
//   * a level budget: after 2 ceil(log32(n / leaf size)) + 2 partition levels (twice what
//     a sort takes, plus two) the segments still left, whatever their number and size, are
//     finished by a merge sort whose cost does not depend on the keys (chunks of the leaf
//     capacity sorted in shared memory, then passes merging neighbouring runs pairwise:
//     merge_pass_kernel). A level costs O(keys left) and there are O(log n) of them; the
//     merge sort is O(s log s) for s keys left. So even an input that knew the seed
//     (quicksort_options::seed) costs at most about the budget's levels plus one merge sort.
//
// Contract:
//   * Keys: int32, uint32, int64, uint64, float, double (any type with operator< works;
//     floats are ordered with every NaN after every number: nan_last_less; -0.0 and +0.0
//     are equivalent and keep no particular order). Values: any trivially copyable type.
//   * Not stable (the order of equivalent keys, and so of their values, is unspecified).
//     Keys alone under the default order: the output is the same on every run (equivalent
//     keys are identical bit patterns; floats are sorted as their ordered bits). Pairs, or a
//     comparator under which different values are equivalent: the order among equivalent
//     keys depends on the pivots, so on the sampling seed, and may differ from call to call.
//     Set quicksort_options::seed for the same output on every run (at the price of positions
//     that whoever knows the seed can predict; the level budget still bounds the cost).
//   * In place allowed: d_keys_out == d_keys_in (and d_values_out == d_values_in).
//   * Two-phase temp storage (as CUB): n keys (+ n values), plus the bucket counts, the plan
//     entries and the segment and leaf lists: about 1 byte per key for four-byte keys
//     (1.9 for pairs or eight-byte keys, 3.7 for eight-byte pairs). That covers Turing's
//     smaller leaf (twice the segments and leaves); the plan of the H100's leaf alone is
//     0.55 (1, 2) bytes per key: the size query does not ask which GPU runs. Any alignment.
//   * NOT asynchronous: the host reads each level's totals to size the next level, so the
//     call synchronises `stream` once per partition level (about log32(n / leaf size)
//     times; never for n <= the leaf size). Returns the first failing CUDA status; never throws.
//   * n is 64-bit; n = 0 and n = 1 work.
#pragma once

#include <scanlab/algorithms/partition_kernels.cuh>
#include <scanlab/algorithms/quicksort_kernels.cuh>
#include <scanlab/detail/launch.cuh>
#include <scanlab/detail/util.cuh>
#include <scanlab/scan.cuh>
#include <scanlab/error.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>
#include <type_traits>
#include <vector>

namespace scanlab {

// Where a sort's time went (host clock, the stream synchronised at each step; tuning only).
struct quicksort_profile {
  double levels_ms = 0;  // pivots, counts, scan, scatter of every level
  double plan_ms = 0;    // planning the next level (on the device) and reading its size
  double copy_ms = 0;    // equal buckets to the output
  double leaves_ms = 0;  // leaf sorts (one launch per size class)
  double fallback_ms = 0;  // the merge sort of the segments left past the level budget
  int levels = 0;          // partition levels
  std::int64_t leaves = 0;
  std::int64_t fallback_segments = 0;  // segments left past the level budget
  std::int64_t fallback_keys = 0;      // and their keys
  int merge_passes = 0;                // merge passes the largest of them took
};

// Reproducibility, test and tuning hooks; users never need them.
struct quicksort_options {
  std::int64_t leaf_items = 0;  // segments up to this size are sorted by one block (0: the largest that fits)
  bool bitonic_leaves = false;  // sort the leaves with the bitonic network instead of the merge sort
  quicksort_profile* profile = nullptr;  // where the time went (synchronises after each step)
  // The sampling seed. Unset: a fresh one per call (from a clock, a call counter and
  // addresses: unknown to whoever chose the keys, though not a cryptographic secret). Set:
  // the same pivots, so the same output, on every run.
  std::optional<std::uint64_t> seed{};
  // Partition levels after which the segments left are merge-sorted; negative: the default,
  // 2 ceil(log32(n / leaf size)) + 2. 0 merge-sorts the whole input (tests of that path).
  int level_budget = -1;
  // Test hook: sample positions a fixed function of the segment (salt 0, the sampler of the
  // first versions), so that apps/partition/quicksort_adversary.hpp's input defeats it again.
  bool fixed_sampling = false;
};

namespace quicksort_detail {

// The largest leaf a block sorts on family `Family` (quicksort_kernels.cuh: leaf_capacity_for;
// the default, Hopper's, is the largest of every family: 16384 four-byte keys, 8192
// eight-byte keys or four-byte pairs; Turing's is half of it).
template <class K, class V, int Family = 90>
constexpr int leaf_capacity() {
  return leaf_capacity_for<K, V, Family>();
}
static_assert(leaf_tuning_fits<std::uint32_t, no_value> && leaf_tuning_fits<std::uint64_t, no_value> &&
                  leaf_tuning_fits<std::uint32_t, std::uint32_t> && leaf_tuning_fits<std::uint64_t, std::uint64_t>,
              "a leaf does not fit some architecture's shared memory");

// The leaf capacity of keys K (and values V) on the current device: the family of the code
// the driver runs for this translation unit's kernels (tests place sizes around it).
template <class K, class V = no_value>
[[nodiscard]] cudaError_t device_leaf_capacity(std::int64_t& capacity) {
  return detail::with_policy<detail::arch_probe_kernel<>, leaf_tuning<K, V>>([&](auto policy) {
    capacity = decltype(policy)::type::capacity;
    return cudaSuccess;
  });
}
inline constexpr int small_leaf = static_cast<int>(leaf_class_bound(0));
inline constexpr int leaf_threads = 512;
inline constexpr int small_leaf_threads = 256;

// The default level budget: twice the levels a sort of n keys takes with even splits
// (ceil(log32(n / leaf))), plus two. Random keys take that many levels, or one more for the
// few buckets that come out larger than a leaf (2^28 uint32: 3 + 1 of a budget of 8), so the
// budget is not reached by chance; and it is O(log n), which bounds the levels' cost.
inline int default_level_budget(std::int64_t n, std::int64_t leaf) {
  int levels = 0;
  for (std::int64_t covered = leaf; covered < n; ++levels) {
    covered = covered > n / (pivot_count + 1) ? n : covered * (pivot_count + 1);
  }
  return 2 * levels + 2;
}

// A fresh sampling seed for each call: a call counter, two clocks and two addresses (the
// caller's temp storage, and this function's counter: placed by ASLR), mixed. Whoever
// chooses the keys knows none of them; it is no cryptographic secret.
inline std::uint64_t fresh_seed(const void* temp) {
  static std::atomic<std::uint64_t> calls{0};
  const std::uint64_t call = calls.fetch_add(1, std::memory_order_relaxed);
  const auto steady = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  const auto wall = static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  const std::uint64_t places = reinterpret_cast<std::uintptr_t>(temp) ^ (reinterpret_cast<std::uintptr_t>(&calls) << 17);
  return mix64(mix64(steady + call * 0x9e3779b97f4a7c15ull) ^ mix64(wall ^ places));
}

// Sizes of everything the driver keeps in temp storage, for n elements and a leaf capacity
// `cap` (the family's that runs; the sizing call takes the largest total over the families).
template <class K, class V>
struct plan_sizes {
  static constexpr bool has_values = !std::is_same_v<V, no_value>;
  using tuning = level_tuning<K, V>;

  std::int64_t leaf = 0;           // the leaf size in use
  std::int64_t max_segments = 0;   // segments of one level (each longer than the leaf size)
  std::int64_t max_tiles = 0;      // tiles of one level
  std::int64_t max_leaves = 0;     // leaves one level can produce
  std::size_t scan_bytes = 0;      // temp storage of the scans of a level's counts and of its plan
  std::size_t total = 0;
  // Offsets (from the aligned base).
  std::size_t keys_pingpong = 0, values_pingpong = 0;
  std::size_t segments[2] = {}, pivots = 0, tile_segment = 0, counts = 0, bucket_starts = 0, runs = 0, leaves = 0,
              plan = 0, totals = 0, scan = 0;

  plan_sizes(std::int64_t n, std::int64_t leaf_items, std::int64_t cap) {
    leaf = leaf_items <= 0 || leaf_items > cap ? cap : (leaf_items < 2 ? 2 : leaf_items);
    // A level's segments are numbered in 32 bits (the tile -> segment map): a leaf hook that
    // small for that large an n is raised (sort_direct refuses n where even the capacity is).
    if (n / (leaf + 1) >= INT32_MAX && leaf < cap) leaf = std::min(cap, n / (INT32_MAX - 1));
    max_segments = n / (leaf + 1) + 1;
    max_tiles = n / tuning::tile_items + max_segments + 1;
    // A level's leaves are buckets between pivots: at most pivot_count + 1 per segment, at
    // most n in all (one leaf when n itself fits a leaf).
    max_leaves = std::min<std::int64_t>((pivot_count + 1) * max_segments, n) + 1;
    const std::int64_t count_entries = buckets * max_tiles;
    const std::int64_t plan_entries = buckets * max_segments;
    std::int64_t* no_counts = nullptr;
    plan_entry* no_plan = nullptr;
    std::size_t count_scan_bytes = 0;
    std::size_t plan_scan_bytes = 0;
    if (scanlab::exclusive_sum(nullptr, count_scan_bytes, no_counts, no_counts, count_entries) != cudaSuccess ||
        scanlab::exclusive_scan(nullptr, plan_scan_bytes, no_plan, no_plan, plan_entries, plan_entry{}, plan_add{}) !=
            cudaSuccess) {
      count_scan_bytes = plan_scan_bytes = 0;  // cannot happen for a valid size; dispatch() checks it again
    }
    scan_bytes = std::max(count_scan_bytes, plan_scan_bytes);
    std::size_t at = 0;
    const auto take = [&](std::size_t bytes) {
      const std::size_t here = at;
      at += detail::align_up(bytes);
      return here;
    };
    const auto un = static_cast<std::size_t>(n);
    keys_pingpong = take(un * sizeof(K));
    if constexpr (has_values) values_pingpong = take(un * sizeof(V));
    const auto segs = static_cast<std::size_t>(max_segments);
    segments[0] = take(segs * sizeof(level_segment));
    segments[1] = take(segs * sizeof(level_segment));
    pivots = take(segs * pivot_count * sizeof(K));
    tile_segment = take(static_cast<std::size_t>(max_tiles) * sizeof(std::int32_t));
    counts = take(static_cast<std::size_t>(count_entries) * sizeof(std::int64_t));
    bucket_starts = take(segs * buckets * sizeof(std::int64_t));
    runs = take(segs * pivot_count * sizeof(run_copy));
    leaves = take(static_cast<std::size_t>(max_leaves) * sizeof(leaf_desc));
    plan = take(static_cast<std::size_t>(plan_entries) * sizeof(plan_entry));
    totals = take(sizeof(plan_entry));
    scan = take(scan_bytes);
    total = at + 256;  // + alignment slack of d_temp
  }
};

// Leaf: the leaf_policy (quicksort_kernels.cuh) of the family the leaf kernel runs.
template <class K, class V, class Comp, class Leaf>
class driver {
  static constexpr bool has_values = !std::is_same_v<V, no_value>;
  using sizes_t = plan_sizes<K, V>;
  using tuning = level_tuning<K, V>;

 public:
  driver(unsigned char* base, const sizes_t& sizes, const K* keys_in, K* keys_out, const V* values_in, V* values_out,
         std::int64_t n, Comp comp, const quicksort_options& options, cudaStream_t stream)
      : base_(base), sizes_(sizes), n_(n), comp_(comp), bitonic_(options.bitonic_leaves), profile_(options.profile),
        seed_(options.seed ? *options.seed : fresh_seed(base)), fixed_sampling_(options.fixed_sampling),
        level_budget_(options.level_budget >= 0 ? options.level_budget : default_level_budget(n, sizes.leaf)),
        stream_(stream) {
    key_buffers_[0] = keys_in;
    key_buffers_[1] = reinterpret_cast<K*>(base + sizes.keys_pingpong);
    key_buffers_[2] = keys_out;
    keys_out_ = keys_out;
    if constexpr (has_values) {
      value_buffers_[0] = values_in;
      value_buffers_[1] = reinterpret_cast<V*>(base + sizes.values_pingpong);
      value_buffers_[2] = values_out;
      values_out_ = values_out;
    }
    segments_[0] = reinterpret_cast<level_segment*>(base + sizes.segments[0]);
    segments_[1] = reinterpret_cast<level_segment*>(base + sizes.segments[1]);
  }

  // Profiling only: the time since the last mark (the stream drained) into `phase`.
  [[nodiscard]] cudaError_t mark(double quicksort_profile::* phase) {
    if (profile_ == nullptr) return cudaSuccess;
    SCANLAB_TRY(cudaStreamSynchronize(stream_));
    const auto now = std::chrono::steady_clock::now();
    profile_->*phase += std::chrono::duration<double, std::milli>(now - mark_).count();
    mark_ = now;
    return cudaSuccess;
  }

  [[nodiscard]] cudaError_t run() {
    if (profile_ != nullptr) {
      *profile_ = {};
      SCANLAB_TRY(cudaStreamSynchronize(stream_));
      mark_ = std::chrono::steady_clock::now();
    }
    auto* d_leaves = reinterpret_cast<leaf_desc*>(base_ + sizes_.leaves);
    if (n_ <= sizes_.leaf) {
      // A kernel argument rather than a copy from this stack frame: stream capture would
      // record the copy with the frame's address, dead when the graph is replayed.
      SCANLAB_TRY(detail::launch(store_kernel<leaf_desc>, 1, 1, 0, stream_, d_leaves, leaf_desc{0, n_, 0, 0}));
      std::int64_t leaves[leaf_classes] = {};
      leaves[leaf_class(n_)] = 1;
      return flush_leaves(leaves);
    }
    std::int64_t num_segments = 1;
    std::int64_t tiles = detail::ceil_div<std::int64_t>(n_, tuning::tile_items);
    SCANLAB_TRY(detail::launch(store_kernel<level_segment>, 1, 1, 0, stream_, segments_[0],
                               level_segment{0, n_, 0, tiles}));
    int current = 0;  // which segment list holds this level's segments
    int source = 0;   // buffer of this level's segments: 0 input, then 1, 2, 1, 2, ...
    for (int depth = 0; num_segments > 0; ++depth) {
      const int target = source == 1 ? 2 : 1;
      if (tiles > sizes_.max_tiles || num_segments > sizes_.max_segments) {
        return cudaErrorInvalidValue;  // cannot happen: the bounds of plan_sizes hold for every level
      }
      if (depth >= level_budget_) return merge_remaining(current, num_segments, source);
      // The level's salt: the seed and the depth mixed (segments of different levels that
      // start at the same place sample different positions). 0: the fixed sampler (hook).
      const std::uint64_t salt =
          fixed_sampling_ ? 0 : mix64(seed_ + static_cast<std::uint64_t>(depth + 1) * 0x9e3779b97f4a7c15ull);
      SCANLAB_TRY(level(current, num_segments, tiles, source, target, salt));
      SCANLAB_TRY(mark(&quicksort_profile::levels_ms));
      if (profile_ != nullptr) ++profile_->levels;
      plan_entry next{};
      SCANLAB_TRY(plan(current, num_segments, target, next));
      SCANLAB_TRY(mark(&quicksort_profile::plan_ms));
      if (next.runs > 0) SCANLAB_TRY(copy_runs(next.runs, next.run_tiles, target));
      SCANLAB_TRY(mark(&quicksort_profile::copy_ms));
      SCANLAB_TRY(flush_leaves(next.leaves));
      SCANLAB_TRY(mark(&quicksort_profile::leaves_ms));
      num_segments = next.segments;
      tiles = next.tiles;
      current ^= 1;
      source = target;
    }
    return cudaSuccess;
  }

 private:
  // One level: pivots (and the tile -> segment map), counts, one scan, scatter.
  [[nodiscard]] cudaError_t level(int current, std::int64_t num_segments, std::int64_t tiles, int source, int target,
                                  std::uint64_t salt) {
    const level_segment* d_segments = segments_[current];
    auto* d_pivots = reinterpret_cast<K*>(base_ + sizes_.pivots);
    auto* d_tile_segment = reinterpret_cast<std::int32_t*>(base_ + sizes_.tile_segment);
    auto* d_counts = reinterpret_cast<std::int64_t*>(base_ + sizes_.counts);
    SCANLAB_TRY(detail::launch(choose_pivots_kernel<K, Comp>, static_cast<unsigned>(num_segments), pivot_samples, 0,
                               stream_, d_segments, key_buffers_[source], d_pivots, d_tile_segment, comp_, salt));
    level_params<K, V, Comp> params{};
    params.keys_in = key_buffers_[source];
    params.keys_out = const_cast<K*>(key_buffers_[target]);  // targets are 1 and 2: writable buffers
    if constexpr (has_values) {
      params.values_in = value_buffers_[source];
      params.values_out = const_cast<V*>(value_buffers_[target]);
    }
    params.segments = d_segments;
    params.tile_segment = d_tile_segment;
    params.pivots = d_pivots;
    params.counts = d_counts;
    params.bucket_starts = reinterpret_cast<std::int64_t*>(base_ + sizes_.bucket_starts);
    params.comp = comp_;
    SCANLAB_TRY(detail::launch(bucket_count_kernel<tuning, K, V, Comp>, static_cast<unsigned>(tiles), tuning::threads,
                               0, stream_, params));
    std::size_t scan_bytes = sizes_.scan_bytes;
    SCANLAB_TRY(scanlab::exclusive_sum(base_ + sizes_.scan, scan_bytes, d_counts, d_counts, buckets * tiles, stream_));
    return detail::launch(bucket_scatter_kernel<tuning, K, V, Comp>, static_cast<unsigned>(tiles), tuning::threads, 0,
                          stream_, params);
  }

  // The next level's segments, this level's leaves and equal runs, from the bucket starts
  // (two small kernels around one scan); `next` receives their numbers (the one
  // synchronisation of a level).
  [[nodiscard]] cudaError_t plan(int current, std::int64_t num_segments, int target, plan_entry& next) {
    plan_params p{};
    p.segments = segments_[current];
    p.bucket_starts = reinterpret_cast<const std::int64_t*>(base_ + sizes_.bucket_starts);
    p.entries = buckets * num_segments;
    p.leaf = sizes_.leaf;
    p.tile_items = tuning::tile_items;
    p.target = target;
    p.copy_equal = key_buffers_[target] != keys_out_;
    p.offsets = reinterpret_cast<plan_entry*>(base_ + sizes_.plan);
    p.next_segments = segments_[current ^ 1];
    p.leaves = reinterpret_cast<leaf_desc*>(base_ + sizes_.leaves);
    p.runs = reinterpret_cast<run_copy*>(base_ + sizes_.runs);
    p.totals = reinterpret_cast<plan_entry*>(base_ + sizes_.totals);
    const auto grid = static_cast<unsigned>(detail::ceil_div<std::int64_t>(p.entries, plan_threads));
    SCANLAB_TRY(detail::launch(plan_count_kernel<>, grid, plan_threads, 0, stream_, p));
    std::size_t scan_bytes = sizes_.scan_bytes;
    SCANLAB_TRY(scanlab::exclusive_scan(base_ + sizes_.scan, scan_bytes, p.offsets, p.offsets, p.entries, plan_entry{},
                                        plan_add{}, stream_));
    SCANLAB_TRY(detail::launch(plan_write_kernel<>, grid, plan_threads, 0, stream_, p));
    SCANLAB_TRY(cudaMemcpyAsync(&next, p.totals, sizeof(next), cudaMemcpyDeviceToHost, stream_));
    SCANLAB_TRY(cudaStreamSynchronize(stream_));
    return cudaSuccess;
  }

  [[nodiscard]] cudaError_t copy_runs(std::int64_t num_runs, std::int64_t tiles, int target) {
    const auto* d_runs = reinterpret_cast<const run_copy*>(base_ + sizes_.runs);
    const std::int64_t grid = tiles < 4096 ? tiles : 4096;
    [[maybe_unused]] const V* values_from = nullptr;
    [[maybe_unused]] V* values_to = nullptr;
    if constexpr (has_values) {
      values_from = value_buffers_[target];
      values_to = values_out_;
    }
    return detail::launch(copy_runs_kernel<K, V>, static_cast<unsigned>(grid), copy_threads, 0, stream_, d_runs,
                          num_runs, tiles, key_buffers_[target], keys_out_, values_from, values_to);
  }

  // A leaf launch's parameters with the three buffers a leaf may be read from (its
  // leaf_desc::source picks one); the caller sets the leaves and the output.
  [[nodiscard]] leaf_params<K, V> leaf_sources() const {
    leaf_params<K, V> params{};
    for (int b = 0; b < 3; ++b) {
      params.key_sources[b] = key_buffers_[b];
      if constexpr (has_values) params.value_sources[b] = value_buffers_[b];
    }
    return params;
  }

  // Sorts the leaves of the list (grouped by size class, `counts[c]` of class c): each
  // class one launch whose blocks fit its largest leaf (threads and shared memory).
  [[nodiscard]] cudaError_t flush_leaves(const std::int64_t (&counts)[leaf_classes]) {
    std::int64_t all = 0;
    for (const std::int64_t c : counts) all += c;
    if (all == 0) return cudaSuccess;
    if (all > sizes_.max_leaves) return cudaErrorInvalidValue;  // cannot happen: see plan_sizes
    if (profile_ != nullptr) profile_->leaves += all;
    leaf_params<K, V> params = leaf_sources();
    params.keys_out = keys_out_;
    if constexpr (has_values) params.values_out = values_out_;
    // The merge sort (threads * merge_items >= the leaf size), or the bitonic network (hook).
    const auto kernel = bitonic_ ? leaf_sort_kernel<K, V, Comp> : leaf_merge_sort_kernel<K, V, Comp>;
    SCANLAB_TRY(detail::allow_dynamic_smem(kernel, leaf_smem_bytes<K, V>(static_cast<int>(sizes_.leaf))));
    const auto* d_leaves = reinterpret_cast<const leaf_desc*>(base_ + sizes_.leaves);
    std::int64_t first = 0;
    for (int c = 0; c < leaf_classes; ++c) {
      if (counts[c] > 0) {
        const std::int64_t bound = c < 2 && leaf_class_bound(c) < sizes_.leaf ? leaf_class_bound(c) : sizes_.leaf;
        const std::int64_t warps = detail::ceil_div<std::int64_t>(detail::ceil_div<std::int64_t>(bound, merge_items), 32);
        const int threads = bitonic_ ? (bound <= small_leaf ? small_leaf_threads : leaf_threads) : static_cast<int>(32 * warps);
        params.leaves = d_leaves + first;
        SCANLAB_TRY(detail::launch(kernel, static_cast<unsigned>(counts[c]), threads,
                                   leaf_smem_bytes<K, V>(static_cast<int>(bound)), stream_, params, comp_));
        first += counts[c];
      }
    }
    return cudaSuccess;
  }

  // The segments left when the level budget runs out (this level's list, in buffer
  // `source`), finished by a merge sort that costs O(s log s) for s keys whatever they are:
  // chunks of the leaf capacity sorted by the leaf kernel, then merge_pass_kernel passes over
  // runs of width chunk, 2 chunk, ... The steps are planned on the host from the segment list
  // (one copy back): this path is for inputs that outlasted the budget, not the common case.
  // A segment of p passes has its chunks sorted into the output if p is even, else into the
  // ping-pong buffer, so that its last pass ends in the output; a pass takes only the
  // segments not yet done, so each segment's keys move ceil(log2(size / chunk)) + 1 times.
  [[nodiscard]] cudaError_t merge_remaining(int current, std::int64_t num_segments, int source) {
    try {
      return merge_remaining_planned(current, num_segments, source);
    } catch (const std::bad_alloc&) {
      return cudaErrorMemoryAllocation;  // the host lists (never larger than the level's segments and chunks)
    }
  }

  [[nodiscard]] cudaError_t merge_remaining_planned(int current, std::int64_t num_segments, int source) {
    constexpr std::int64_t chunk = Leaf::capacity;
    constexpr int tile = Leaf::merge_tile;
    static_assert(sizeof(merge_segment) == sizeof(level_segment), "a pass's list reuses a level's segment list");
    std::vector<level_segment> segments(static_cast<std::size_t>(num_segments));
    SCANLAB_TRY(cudaMemcpyAsync(segments.data(), segments_[current], segments.size() * sizeof(level_segment),
                                cudaMemcpyDeviceToHost, stream_));
    SCANLAB_TRY(cudaStreamSynchronize(stream_));
    std::vector<int> passes(segments.size());
    int most = 0;
    std::int64_t chunks[2] = {};  // of the segments whose passes are even (chunks to the output), odd
    std::int64_t keys = 0;
    for (std::size_t s = 0; s < segments.size(); ++s) {
      int p = 0;
      while ((chunk << p) < segments[s].size) ++p;
      passes[s] = p;
      most = std::max(most, p);
      chunks[p % 2] += detail::ceil_div<std::int64_t>(segments[s].size, chunk);
      keys += segments[s].size;
    }
    if (chunks[0] + chunks[1] > sizes_.max_leaves) return cudaErrorInvalidValue;  // cannot happen: see plan_sizes
    std::vector<leaf_desc> leaves(static_cast<std::size_t>(chunks[0] + chunks[1]));
    std::int64_t at[2] = {0, chunks[0]};
    for (std::size_t s = 0; s < segments.size(); ++s) {
      const level_segment& seg = segments[s];
      for (std::int64_t off = 0; off < seg.size; off += chunk) {
        leaves[static_cast<std::size_t>(at[passes[s] % 2]++)] = {seg.begin + off, std::min(chunk, seg.size - off),
                                                                 source, 0};
      }
    }
    auto* d_leaves = reinterpret_cast<leaf_desc*>(base_ + sizes_.leaves);
    SCANLAB_TRY(cudaMemcpyAsync(d_leaves, leaves.data(), leaves.size() * sizeof(leaf_desc), cudaMemcpyHostToDevice,
                                stream_));
    // 1. The chunks: the leaf merge sort, into the output (group 0) or the ping-pong buffer.
    const auto leaf_kernel = leaf_merge_sort_kernel<K, V, Comp>;
    const std::size_t smem = leaf_smem_bytes<K, V>(static_cast<int>(chunk));
    SCANLAB_TRY(detail::allow_dynamic_smem(leaf_kernel, smem));
    const int leaf_block = static_cast<int>(32 * detail::ceil_div<std::int64_t>(detail::ceil_div<std::int64_t>(chunk, merge_items), 32));
    K* pingpong = const_cast<K*>(key_buffers_[1]);  // the temp buffer: writable
    [[maybe_unused]] V* values_pingpong = nullptr;
    leaf_params<K, V> lp = leaf_sources();
    if constexpr (has_values) values_pingpong = const_cast<V*>(value_buffers_[1]);
    for (int g = 0; g < 2; ++g) {
      if (chunks[g] == 0) continue;
      lp.leaves = d_leaves + (g == 0 ? 0 : chunks[0]);
      lp.keys_out = g == 0 ? keys_out_ : pingpong;
      if constexpr (has_values) lp.values_out = g == 0 ? values_out_ : values_pingpong;
      SCANLAB_TRY(detail::launch(leaf_kernel, static_cast<unsigned>(chunks[g]), leaf_block, smem, stream_, lp, comp_));
    }
    // 2. The passes, each over the segments it has not finished (a pass's list replaces the
    // level's segment list, already copied here; stream order keeps the last pass's reads
    // before the copy).
    auto* d_list = reinterpret_cast<merge_segment*>(segments_[current]);
    std::vector<merge_segment> list;
    list.reserve(segments.size());
    for (int k = 0; k < most; ++k) {
      list.clear();
      std::int64_t tiles = 0;
      for (std::size_t s = 0; s < segments.size(); ++s) {
        if (passes[s] <= k) continue;
        list.push_back({segments[s].begin, segments[s].size, tiles, (passes[s] - 1 - k) % 2 == 0 ? 1 : 0});
        tiles += detail::ceil_div<std::int64_t>(segments[s].size, tile);
      }
      SCANLAB_TRY(cudaMemcpyAsync(d_list, list.data(), list.size() * sizeof(merge_segment), cudaMemcpyHostToDevice,
                                  stream_));
      merge_params<K, V, Comp> mp{};
      mp.segments = d_list;
      mp.num_segments = static_cast<std::int64_t>(list.size());
      mp.tiles = tiles;
      mp.width = chunk << k;
      mp.keys_out = keys_out_;
      mp.keys_pingpong = pingpong;
      if constexpr (has_values) {
        mp.values_out = values_out_;
        mp.values_pingpong = values_pingpong;
      }
      mp.comp = comp_;
      const std::int64_t grid = tiles < merge_grid ? tiles : merge_grid;
      SCANLAB_TRY(detail::launch(merge_pass_kernel<tile, K, V, Comp>, static_cast<unsigned>(grid),
                                 tile / merge_pass_items, 0, stream_, mp));
    }
    if (profile_ != nullptr) {
      profile_->fallback_segments += num_segments;
      profile_->fallback_keys += keys;
      profile_->merge_passes = std::max(profile_->merge_passes, most);
    }
    return mark(&quicksort_profile::fallback_ms);
  }

  // Blocks of a merge pass (each strides over the tiles): enough to fill an H100 many times.
  static constexpr std::int64_t merge_grid = 1 << 16;

  unsigned char* base_;
  const sizes_t& sizes_;
  std::int64_t n_;
  Comp comp_;
  bool bitonic_;
  quicksort_profile* profile_;
  std::uint64_t seed_;
  bool fixed_sampling_;
  int level_budget_;
  std::chrono::steady_clock::time_point mark_ = std::chrono::steady_clock::now();
  cudaStream_t stream_;
  const K* key_buffers_[3] = {};
  const V* value_buffers_[3] = {};
  K* keys_out_ = nullptr;
  V* values_out_ = nullptr;
  level_segment* segments_[2] = {};  // this level's segments and the next level's, alternately
};

// The sort itself, for any key type and order.
template <class K, class V, class Comp>
[[nodiscard]] cudaError_t sort_direct(void* d_temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out,
                                      const V* values_in, V* values_out, std::int64_t n, Comp comp,
                                      cudaStream_t stream, quicksort_options options) {
  if (n < 0) return cudaErrorInvalidValue;
  // Temp storage for whichever leaf capacity runs (the device is not asked here: the sizing
  // call answers the same on every GPU): the largest plan over the families. A smaller leaf
  // means more segments and leaves, so Turing's plan is the largest. Segments and tiles are
  // numbered by 32-bit grids and maps (about 8.8e12 four-byte keys): refused on every GPU
  // where some family's plan would overflow them.
  // (Two plans in practice: families with the capacity of the one before are skipped.)
  std::size_t needed = 0;
  bool numbered = true;
  std::int64_t previous = 0;
  static_cast<void>(arch::all_families([&](auto family) {
    const std::int64_t capacity = leaf_capacity_for<K, V, decltype(family)::value>();
    if (capacity == previous) return true;
    previous = capacity;
    const plan_sizes<K, V> plan(n, options.leaf_items, capacity);
    needed = std::max(needed, plan.total);
    numbered = numbered && plan.max_segments < INT32_MAX && plan.max_tiles < INT32_MAX;
    return true;
  }));
  if (!numbered) return cudaErrorInvalidValue;
  if (const auto answer = detail::temp_storage_query(d_temp, temp_bytes, needed)) return *answer;
  if (n == 0) return cudaSuccess;
  auto* base = reinterpret_cast<unsigned char*>(detail::align_up(reinterpret_cast<std::uintptr_t>(d_temp)));
  // The leaf capacity of the family whose code the driver runs for the leaf kernel (both leaf
  // kernels and the level kernels are in this translation unit: the same family).
  return detail::with_policy<leaf_merge_sort_kernel<K, V, Comp>, leaf_tuning<K, V>>([&](auto policy) -> cudaError_t {
    using leaf = typename decltype(policy)::type;
    const plan_sizes<K, V> sizes(n, options.leaf_items, leaf::capacity);
    if (sizes.total > needed) return cudaErrorInvalidValue;  // cannot happen: needed is the largest
    driver<K, V, Comp, leaf> d(base, sizes, keys_in, keys_out, values_in, values_out, n, comp, options, stream);
    return d.run();
  });
}

// Floats under the default order: mapped into d_keys_out as ordered unsigned integers
// (float_order), sorted there in place as integers, mapped back: two streaming passes
// instead of a NaN test in every comparison of the bucket searches and the merges: H100,
// uniform float32 2^26 4.79 -> 4.30 ms, 2^28 about 18 -> 15.8 ms (2.74x CUB's radix sort,
// whose time the direct form exceeded 3x); float64 2^26 6.74 -> 6.43 ms. Same temp
// storage as the direct sort.
template <class K, class V>
[[nodiscard]] cudaError_t sort_float_as_bits(void* d_temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out,
                                             const V* values_in, V* values_out, std::int64_t n, cudaStream_t stream,
                                             quicksort_options options) {
  using U = typename float_order<K>::U;
  auto* bits = reinterpret_cast<U*>(keys_out);
  if (d_temp == nullptr || n <= 0) {
    return sort_direct(d_temp, temp_bytes, static_cast<const U*>(bits), bits, values_in, values_out, n,
                       partition_detail::nan_last_less{}, stream, options);
  }
  // Check the temp storage before touching the keys (nothing is written on a refused call).
  std::size_t needed = 0;
  SCANLAB_TRY(sort_direct(nullptr, needed, static_cast<const U*>(bits), bits, values_in, values_out, n,
                          partition_detail::nan_last_less{}, stream, options));
  if (temp_bytes < needed) return cudaErrorInvalidValue;
  const auto grid = static_cast<unsigned>(detail::ceil_div<std::int64_t>(n, code_threads * code_items));
  SCANLAB_TRY(detail::launch(float_order_kernel<K, true>, grid, code_threads, 0, stream,
                             reinterpret_cast<const U*>(keys_in), bits, n));
  SCANLAB_TRY(sort_direct(d_temp, temp_bytes, static_cast<const U*>(bits), bits, values_in, values_out, n,
                          partition_detail::nan_last_less{}, stream, options));
  return detail::launch(float_order_kernel<K, false>, grid, code_threads, 0, stream, static_cast<const U*>(bits), bits,
                        n);
}

template <class K, class V, class Comp>
[[nodiscard]] cudaError_t dispatch(void* d_temp, std::size_t& temp_bytes, const K* keys_in, K* keys_out,
                                   const V* values_in, V* values_out, std::int64_t n, Comp comp, cudaStream_t stream,
                                   quicksort_options options) {
  if constexpr (std::is_floating_point_v<K> && std::is_same_v<Comp, partition_detail::nan_last_less>) {
    return sort_float_as_bits(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, stream, options);
  } else {
    return sort_direct(d_temp, temp_bytes, keys_in, keys_out, values_in, values_out, n, comp, stream, options);
  }
}

}  // namespace quicksort_detail

// d_keys_out = d_keys_in sorted ascending (NaNs last). Synchronises `stream` (see above).
template <class K, class Comp = partition_detail::nan_last_less>
[[nodiscard]] cudaError_t quicksort(void* d_temp, std::size_t& temp_bytes, const K* d_keys_in, K* d_keys_out,
                                    std::int64_t n, cudaStream_t stream = nullptr, Comp comp = {},
                                    quicksort_options options = {}) {
  using quicksort_detail::no_value;
  return quicksort_detail::dispatch<K, no_value, Comp>(d_temp, temp_bytes, d_keys_in, d_keys_out,
                                                       static_cast<const no_value*>(nullptr),
                                                       static_cast<no_value*>(nullptr), n, comp, stream, options);
}

// Keys sorted as above, each value moved with its key. Synchronises `stream` (see above).
template <class K, class V, class Comp = partition_detail::nan_last_less>
[[nodiscard]] cudaError_t quicksort_pairs(void* d_temp, std::size_t& temp_bytes, const K* d_keys_in, K* d_keys_out,
                                          const V* d_values_in, V* d_values_out, std::int64_t n,
                                          cudaStream_t stream = nullptr, Comp comp = {},
                                          quicksort_options options = {}) {
  static_assert(std::is_trivially_copyable_v<V>, "values must be trivially copyable");
  return quicksort_detail::dispatch<K, V, Comp>(d_temp, temp_bytes, d_keys_in, d_keys_out, d_values_in, d_values_out,
                                                n, comp, stream, options);
}

}  // namespace scanlab
