// scanlab-stream-bench: the streaming (out-of-core) algorithms' throughput against the PCIe
// copies they are bound by (issue #24's targets: reduce >= 90 % of pinned H2D, scan and
// compaction >= 85 % of both directions at once; the external sort in <= 3x the time of
// moving its data across the link four times).
//
//   scanlab-stream-bench [--n N] [--budget BYTES] [--repeat R] [--slots K] [--chunk BYTES]
//   scanlab-stream-bench --sort [--n N] [--budget BYTES|all] [--repeat R] [--run BYTES] [--in-place] [--pairs]
//   scanlab-stream-bench --large [--n N] [--budget BYTES|all]
//
// --sort: uint32 keys (with --pairs, uint32 values too), pinned host arrays and a pinned
// scratch the bench allocates once. Rows: pinned H2D and D2H of the data's bytes, one way
// each (through a device buffer of at most 1 GiB, piece after piece), then the sort, with
// its ratio to 4 one-way copies, 2 * (H2D + D2H): the run formation and the merge each move
// the data in and out once. The target is a ratio <= 3. Host memory: the keys (and values)
// twice, or once with --in-place, plus the scratch (the same size again). With --in-place
// the input is refilled (not timed) before each run. The first run's output is checked
// (sorted, the input's multiset of keys, and for pairs every value with its key).
//
// --large: an array larger than the GPU (see run_large): reduce, scan and compaction in place
// on one pinned uint32 array, each once and checked exactly.
//
// float32 data, pinned host arrays unless a row says pageable. Each row: the median of R
// host-synchronous calls (std::chrono, after one warm-up), in GB/s of host bytes moved
// (reduce: 4n read; scan: 4n in + 4n out; compaction: 4n in + 4 * kept out) and as a
// fraction of the copy bandwidth measured here: pinned H2D alone (reduce) or H2D and D2H
// at once on two streams (scan, compaction). Compaction that keeps half the items cannot
// keep both directions busy: its row is also judged against the link's bound for its bytes
// (the kept bytes both ways at once, the rest of the input one way). Exit codes: 0, 1 error, 2 bad command line,
// 3 no GPU.
#include "common/gpu.hpp"

#include <scanlab/error.hpp>
#include <scanlab/mix64.hpp>
#include <scanlab/streaming.cuh>

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace ss = scanlab::streaming;

struct is_positive {
  __host__ __device__ bool operator()(float x) const { return x > 0.0f; }
};
struct is_finite {  // every item of the bench's data: compaction with both directions full
  __host__ __device__ bool operator()(float x) const { return x > -2.0f && x < 2.0f; }
};

// Median seconds of `repeat` runs of fn, after one warm-up.
double median_seconds(int repeat, const std::function<void()>& fn) {
  fn();
  std::vector<double> times;
  for (int r = 0; r < repeat; ++r) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

void row(const char* name, double bytes, double seconds, double ceiling_gbps, const char* ceiling_name) {
  const double gbps = bytes / seconds / 1e9;
  if (ceiling_gbps > 0) {
    std::printf("%-34s %10.3f ms %8.2f GB/s %6.1f %% of %s\n", name, seconds * 1e3, gbps, 100.0 * gbps / ceiling_gbps,
                ceiling_name);
  } else {
    std::printf("%-34s %10.3f ms %8.2f GB/s\n", name, seconds * 1e3, gbps);
  }
}

std::int64_t parse_size(const char* text) {
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  double scale = 1;
  if (end != nullptr && *end != '\0') {
    const char unit = *end;
    scale = unit == 'K' ? 1024.0 : unit == 'M' ? 1048576.0 : unit == 'G' ? 1073741824.0 : -1.0;
  }
  if (!(value > 0) || scale < 0) throw std::invalid_argument(std::string("bad size '") + text + "'");
  return static_cast<std::int64_t>(value * scale);
}

// "all": the device's free memory less 1 GiB (the streaming calls without a budget of their
// own: as much of the GPU as there is).
std::size_t parse_budget(const char* text) {
  if (std::string(text) != "all") return static_cast<std::size_t>(parse_size(text));
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  SCANLAB_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t margin = std::size_t{1} << 30;
  if (free_bytes <= 2 * margin) throw std::runtime_error("--budget all: the GPU has less than 2 GiB free");
  return free_bytes - margin;
}

// fn(begin, end, part) over [0, n) split into one contiguous part per CPU thread; returns the
// number of parts. The bench's fills and checks of arrays of tens of gigabytes.
unsigned parallel_parts() { return std::max(1u, std::thread::hardware_concurrency()); }
template <class Fn>
void parallel_for(std::int64_t n, Fn fn) {
  const unsigned parts = parallel_parts();
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < parts; ++t) {
    const std::int64_t begin = n * t / parts;
    const std::int64_t end = n * (t + 1) / parts;
    threads.emplace_back([=, &fn] { fn(begin, end, t); });
  }
  for (auto& thread : threads) thread.join();
}

// splitmix64's output for state x (the project's one mix64, scanlab/mix64.hpp).
std::uint64_t splitmix64(std::uint64_t x) { return scanlab::mix64(x + 0x9e3779b97f4a7c15ull); }

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The copy ceilings: seconds (median of `repeat`, after a warm-up) to copy `bytes` of pinned
// host memory from h_in to the device (`in`), from the device into h_out (`out`), or both at
// once on two streams, each through device buffers of at most max_piece bytes, piece after
// piece.
double link_seconds(const void* h_in, void* h_out, std::size_t bytes, bool in, bool out, int repeat,
                    std::size_t max_piece = std::size_t{1} << 30) {
  const std::size_t piece = std::min(bytes, max_piece);
  void* d_in = nullptr;
  void* d_out = nullptr;
  SCANLAB_CHECK(cudaMalloc(&d_in, piece));
  SCANLAB_CHECK(cudaMalloc(&d_out, piece));
  cudaStream_t s_in = nullptr;
  cudaStream_t s_out = nullptr;
  SCANLAB_CHECK(cudaStreamCreateWithFlags(&s_in, cudaStreamNonBlocking));
  SCANLAB_CHECK(cudaStreamCreateWithFlags(&s_out, cudaStreamNonBlocking));
  const auto* source = static_cast<const unsigned char*>(h_in);
  auto* target = static_cast<unsigned char*>(h_out);
  const double seconds = median_seconds(repeat, [&] {
    for (std::size_t done = 0; done < bytes; done += piece) {
      const std::size_t part = std::min(piece, bytes - done);
      if (in) SCANLAB_CHECK(cudaMemcpyAsync(d_in, source + done, part, cudaMemcpyHostToDevice, s_in));
      if (out) SCANLAB_CHECK(cudaMemcpyAsync(target + done, d_out, part, cudaMemcpyDeviceToHost, s_out));
    }
    SCANLAB_CHECK(cudaStreamSynchronize(s_in));
    SCANLAB_CHECK(cudaStreamSynchronize(s_out));
  });
  SCANLAB_CHECK(cudaStreamDestroy(s_in));
  SCANLAB_CHECK(cudaStreamDestroy(s_out));
  SCANLAB_CHECK(cudaFree(d_in));
  SCANLAB_CHECK(cudaFree(d_out));
  return seconds;
}

int run(std::int64_t n, std::size_t budget, int repeat, const ss::options& opts) {
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
  float* h_x = nullptr;
  float* h_y = nullptr;
  SCANLAB_CHECK(cudaMallocHost(&h_x, bytes));
  SCANLAB_CHECK(cudaMallocHost(&h_y, bytes));
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (std::int64_t i = 0; i < n; ++i) h_x[i] = dist(rng);
  std::vector<float> pageable(h_x, h_x + n);
  std::vector<float> pageable_out(static_cast<std::size_t>(n));

  // The copy ceilings: the same bytes, h_x in and h_y out, each one copy (device buffers as
  // large as the input).
  const double h2d = link_seconds(h_x, h_y, bytes, true, false, repeat, bytes);
  const double d2h = link_seconds(h_x, h_y, bytes, false, true, repeat, bytes);
  const double both = link_seconds(h_x, h_y, bytes, true, true, repeat, bytes);
  const double h2d_gbps = static_cast<double>(bytes) / h2d / 1e9;
  const double both_gbps = 2.0 * static_cast<double>(bytes) / both / 1e9;

  ss::workspace ws(budget, opts);
  float sum = 0;
  std::int64_t kept = 0;
  SCANLAB_CHECK(ss::reduce_sum(ws, h_x, n, sum));  // to report the chunking
  std::printf("n = %lld float32 (%.2f GB), budget %.1f MiB, %d slots, chunk %lld items, %lld chunks, median of %d\n",
              static_cast<long long>(n), static_cast<double>(bytes) / 1e9, static_cast<double>(budget) / 1048576.0,
              opts.slots, static_cast<long long>(ws.last_chunk_items()), static_cast<long long>(ws.last_num_chunks()),
              repeat);
  row("pinned H2D (cudaMemcpyAsync)", static_cast<double>(bytes), h2d, 0, "");
  row("pinned D2H", static_cast<double>(bytes), d2h, 0, "");
  row("pinned H2D + D2H at once", 2.0 * static_cast<double>(bytes), both, 0, "");

  const double t_reduce = median_seconds(repeat, [&] { SCANLAB_CHECK(ss::reduce_sum(ws, h_x, n, sum)); });
  row("streaming reduce_sum", static_cast<double>(bytes), t_reduce, h2d_gbps, "H2D");
  const double t_max = median_seconds(repeat, [&] { SCANLAB_CHECK(ss::reduce_max(ws, h_x, n, sum)); });
  row("streaming reduce_max", static_cast<double>(bytes), t_max, h2d_gbps, "H2D");
  const double t_scan = median_seconds(repeat, [&] { SCANLAB_CHECK(ss::inclusive_sum(ws, h_x, h_y, n)); });
  row("streaming inclusive_sum", 2.0 * static_cast<double>(bytes), t_scan, both_gbps, "both");
  const double t_excl = median_seconds(repeat, [&] { SCANLAB_CHECK(ss::exclusive_sum(ws, h_x, h_y, n)); });
  row("streaming exclusive_sum", 2.0 * static_cast<double>(bytes), t_excl, both_gbps, "both");
  const double t_select_all =
      median_seconds(repeat, [&] { SCANLAB_CHECK(ss::select_if(ws, h_x, h_y, n, kept, is_finite{})); });
  if (kept != n) throw std::runtime_error("select_if (all kept) kept " + std::to_string(kept) + " items");
  row("streaming select_if (all kept)", 2.0 * static_cast<double>(bytes), t_select_all, both_gbps, "both");
  const double t_select =
      median_seconds(repeat, [&] { SCANLAB_CHECK(ss::select_if(ws, h_x, h_y, n, kept, is_positive{})); });
  const double kept_bytes = static_cast<double>(kept) * sizeof(float);
  row("streaming select_if (half kept)", static_cast<double>(bytes) + kept_bytes, t_select, both_gbps, "both");
  // With fewer items back than in, both directions cannot be busy the whole time: the link's
  // bound is the kept bytes moving both ways at once, then the rest of the input alone.
  const double select_bound = kept_bytes / (both_gbps * 1e9 / 2) + (static_cast<double>(bytes) - kept_bytes) / (h2d_gbps * 1e9);
  std::printf("%-34s %10.3f ms %8s      %6.1f %% of the link bound (kept bytes both ways, the rest H2D)\n",
              "  link bound for half kept", select_bound * 1e3, "", 100.0 * select_bound / t_select);
  const double t_page_reduce =
      median_seconds(repeat, [&] { SCANLAB_CHECK(ss::reduce_sum(ws, pageable.data(), n, sum)); });
  row("streaming reduce_sum, pageable", static_cast<double>(bytes), t_page_reduce, h2d_gbps, "H2D");
  const double t_page_scan = median_seconds(
      repeat, [&] { SCANLAB_CHECK(ss::inclusive_sum(ws, pageable.data(), pageable_out.data(), n)); });
  row("streaming inclusive_sum, pageable", 2.0 * static_cast<double>(bytes), t_page_scan, both_gbps, "both");

  SCANLAB_CHECK(cudaFreeHost(h_x));
  SCANLAB_CHECK(cudaFreeHost(h_y));
  return 0;
}

// ---- --sort ---------------------------------------------------------------------------------

struct sort_setup {
  std::int64_t n = std::int64_t{1} << 30;
  std::size_t budget = std::size_t{1} << 30;
  int repeat = 5;
  ss::options opts;
  std::size_t run_bytes = std::size_t{1} << 30;
  bool in_place = false;
  bool pairs = false;
};

template <class T>
T* pinned_array(std::size_t count) {
  void* p = nullptr;
  SCANLAB_CHECK(cudaMallocHost(&p, std::max<std::size_t>(count, 1) * sizeof(T)));
  return static_cast<T*>(p);
}

void fill_keys(std::uint32_t* keys, std::int64_t n, std::uint64_t seed) {
  parallel_for(n, [&](std::int64_t begin, std::int64_t end, unsigned) {
    for (std::int64_t i = begin; i < end; ++i) keys[i] = static_cast<std::uint32_t>(splitmix64(seed + static_cast<std::uint64_t>(i)));
  });
}

// The multiset of keys as two order-free sums (of the keys' mix and of its square), on every
// CPU thread: a sort that loses, duplicates or changes keys changes them (but for a
// 2^-64-scale accident).
std::pair<std::uint64_t, std::uint64_t> key_multiset(const std::uint32_t* keys, std::int64_t n) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> part(parallel_parts());
  parallel_for(n, [&](std::int64_t begin, std::int64_t end, unsigned t) {
    std::uint64_t a = 0;
    std::uint64_t b = 0;
    for (std::int64_t i = begin; i < end; ++i) {
      const std::uint64_t m = splitmix64(keys[i]);
      a += m;
      b += m * m;
    }
    part[t] = {a, b};
  });
  std::pair<std::uint64_t, std::uint64_t> total{0, 0};
  for (const auto& [a, b] : part) {
    total.first += a;
    total.second += b;
  }
  return total;
}

// The first i in [1, n) with keys[i - 1] > keys[i], or n (on every CPU thread).
std::int64_t first_unsorted(const std::uint32_t* keys, std::int64_t n) {
  std::vector<std::int64_t> part(parallel_parts(), n);
  parallel_for(n, [&](std::int64_t begin, std::int64_t end, unsigned t) {
    for (std::int64_t i = std::max<std::int64_t>(begin, 1); i < end; ++i) {
      if (keys[i - 1] > keys[i]) {
        part[t] = i;
        return;
      }
    }
  });
  return *std::min_element(part.begin(), part.end());
}

int run_sort(const sort_setup& setup) {
  const std::int64_t n = setup.n;
  const std::size_t key_bytes = static_cast<std::size_t>(n) * sizeof(std::uint32_t);
  const std::size_t bytes = key_bytes * (setup.pairs ? 2 : 1);
  auto* keys = pinned_array<std::uint32_t>(static_cast<std::size_t>(n));
  auto* values = setup.pairs ? pinned_array<std::uint32_t>(static_cast<std::size_t>(n)) : nullptr;
  auto* keys_out = setup.in_place ? keys : pinned_array<std::uint32_t>(static_cast<std::size_t>(n));
  auto* values_out = !setup.pairs ? nullptr : setup.in_place ? values : pinned_array<std::uint32_t>(static_cast<std::size_t>(n));
  const std::size_t scratch_bytes = setup.pairs ? ss::sort_scratch_bytes<std::uint32_t, std::uint32_t>(n)
                                                : ss::sort_scratch_bytes<std::uint32_t>(n);
  auto* scratch = pinned_array<unsigned char>(scratch_bytes);
  const auto refill = [&] {
    fill_keys(keys, n, 42);
    if (values != nullptr) std::iota(values, values + n, 0u);
  };
  refill();

  const double scale = static_cast<double>(bytes) / static_cast<double>(key_bytes);  // pairs: keys and values
  const double h2d = link_seconds(keys, keys_out, key_bytes, true, false, setup.repeat) * scale;
  const double d2h = link_seconds(keys, keys_out, key_bytes, false, true, setup.repeat) * scale;
  refill();  // the D2H ceiling wrote over keys_out (the keys themselves with --in-place)

  ss::workspace ws(setup.budget, setup.opts);
  ss::sort_options sort_opts;
  sort_opts.max_run_bytes = setup.run_bytes;
  sort_opts.h_scratch = scratch;
  const auto sort_once = [&] {
    if (setup.pairs) SCANLAB_CHECK(ss::sort_pairs(ws, keys, values, keys_out, values_out, n, sort_opts));
    else SCANLAB_CHECK(ss::sort_keys(ws, keys, keys_out, n, sort_opts));
  };
  // The first run (a warm-up) is checked: sorted, the same multiset of keys.
  std::vector<std::uint32_t> original;
  if (setup.pairs) original.assign(keys, keys + n);
  const auto multiset_in = key_multiset(keys, n);
  sort_once();
  if (const std::int64_t i = first_unsorted(keys_out, n); i < n) {
    throw std::runtime_error("sort: output not sorted at " + std::to_string(i));
  }
  if (key_multiset(keys_out, n) != multiset_in) throw std::runtime_error("sort: the output's keys are not the input's");
  if (setup.pairs) {
    for (std::int64_t i = 0; i < n; ++i) {
      if (original[values_out[i]] != keys_out[i]) throw std::runtime_error("sort: value " + std::to_string(i) + " lost its key");
      if (i > 0 && keys_out[i - 1] == keys_out[i] && values_out[i - 1] > values_out[i]) {
        throw std::runtime_error("sort: not stable at " + std::to_string(i));
      }
    }
  }
  std::vector<double> times;
  for (int r = 0; r < setup.repeat; ++r) {
    if (setup.in_place) refill();
    const auto start = std::chrono::steady_clock::now();
    sort_once();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  const double t_sort = times[times.size() / 2];

  std::printf("sort of n = %lld uint32 keys%s (%.2f GB), budget %.1f MiB, %d slots, runs of %lld items: %lld runs, "
              "%lld merge steps, median of %d%s\n",
              static_cast<long long>(n), setup.pairs ? " with uint32 values" : "", static_cast<double>(bytes) / 1e9,
              static_cast<double>(setup.budget) / 1048576.0, setup.opts.slots,
              static_cast<long long>(ws.last_chunk_items()), static_cast<long long>(ws.last_num_chunks()),
              static_cast<long long>(ws.last_merge_steps()), setup.repeat, setup.in_place ? ", in place" : "");
  row("pinned H2D, one way", static_cast<double>(bytes), h2d, 0, "");
  row("pinned D2H, one way", static_cast<double>(bytes), d2h, 0, "");
  const double four_ways = 2.0 * (h2d + d2h);
  std::printf("%-34s %10.3f ms\n", "4 one-way copies, 2 (H2D + D2H)", four_ways * 1e3);
  std::printf("%-34s %10.3f ms %8.2f x the 4 copies (target <= 3)\n",
              setup.pairs ? "streaming sort_pairs" : "streaming sort_keys", t_sort * 1e3, t_sort / four_ways);

  SCANLAB_CHECK(cudaFreeHost(scratch));
  if (!setup.in_place) SCANLAB_CHECK(cudaFreeHost(keys_out));
  if (setup.pairs && !setup.in_place) SCANLAB_CHECK(cudaFreeHost(values_out));
  if (setup.pairs) SCANLAB_CHECK(cudaFreeHost(values));
  SCANLAB_CHECK(cudaFreeHost(keys));
  return 0;
}

// ---- --large ---------------------------------------------------------------------------------
//
// One pinned uint32 array (4n bytes, meant to be larger than the GPU's memory), each algorithm
// once, in place on the host, each result checked exactly on every CPU thread against the
// data's formula x[i] = top 32 bits of splitmix64(i) (uint32: the sums wrap mod 2^32, exactly):
//   reduce_sum                   the CPU's sum;
//   inclusive_sum, in place      out[0] = x[0], out[i] - out[i - 1] = x[i];
//   select_if (odd), in place    the kept items are the odd x[i], in order, and their count.
// Ceilings: pinned H2D, D2H and both at once on two streams, over min(4n / 2, 8 GiB) bytes of
// the array (1 GiB pieces): rates, which the array's size does not change.

struct is_odd {
  __host__ __device__ bool operator()(std::uint32_t x) const { return (x & 1u) != 0; }
};

std::uint32_t large_item(std::int64_t i) { return static_cast<std::uint32_t>(splitmix64(static_cast<std::uint64_t>(i)) >> 32); }

void fill_large(std::uint32_t* x, std::int64_t n) {
  parallel_for(n, [&](std::int64_t begin, std::int64_t end, unsigned) {
    for (std::int64_t i = begin; i < end; ++i) x[i] = large_item(i);
  });
}

void check_large(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("--large: ") + what + ": wrong result");
  std::printf("%-34s checked exactly\n", "");
}

int run_large(std::int64_t n, std::size_t budget, const ss::options& opts) {
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(std::uint32_t);
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  SCANLAB_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  auto start = std::chrono::steady_clock::now();
  auto* x = pinned_array<std::uint32_t>(static_cast<std::size_t>(n));
  const double alloc_seconds = seconds_since(start);
  start = std::chrono::steady_clock::now();
  fill_large(x, n);
  std::printf("n = %lld uint32 (%.2f GB) in one pinned host array (allocated in %.1f s, filled in %.1f s on %u "
              "threads); the GPU has %.2f GB (%s); budget %.1f MiB, %d slots, once each, in place\n",
              static_cast<long long>(n), static_cast<double>(bytes) / 1e9, alloc_seconds, seconds_since(start),
              parallel_parts(), static_cast<double>(total_bytes) / 1e9,
              bytes > total_bytes ? "the array does not fit it" : "the array fits it", static_cast<double>(budget) / 1048576.0,
              opts.slots);

  const std::size_t link_bytes = std::min(bytes / 2, std::size_t{8} << 30);
  auto* raw = reinterpret_cast<unsigned char*>(x);
  unsigned char* second_half = raw + link_bytes;
  const double h2d_gbps = static_cast<double>(link_bytes) / link_seconds(raw, second_half, link_bytes, true, false, 3) / 1e9;
  const double d2h_gbps = static_cast<double>(link_bytes) / link_seconds(raw, second_half, link_bytes, false, true, 3) / 1e9;
  const double both_gbps =
      2.0 * static_cast<double>(link_bytes) / link_seconds(raw, second_half, link_bytes, true, true, 3) / 1e9;
  std::printf("%-34s %10s    %8.2f GB/s (over %.2f GB)\n", "pinned H2D", "", h2d_gbps, static_cast<double>(link_bytes) / 1e9);
  std::printf("%-34s %10s    %8.2f GB/s\n", "pinned D2H", "", d2h_gbps);
  std::printf("%-34s %10s    %8.2f GB/s\n", "pinned H2D + D2H at once", "", both_gbps);
  fill_large(x, n);  // the D2H ceilings wrote over the array's second half

  ss::workspace ws(budget, opts);
  std::uint32_t sum = 0;
  start = std::chrono::steady_clock::now();
  SCANLAB_CHECK(ss::reduce_sum(ws, x, n, sum));
  row("streaming reduce_sum", static_cast<double>(bytes), seconds_since(start), h2d_gbps, "H2D");
  std::vector<std::uint32_t> part_sum(parallel_parts());
  parallel_for(n, [&](std::int64_t begin, std::int64_t end, unsigned t) {
    std::uint32_t acc = 0;
    for (std::int64_t i = begin; i < end; ++i) acc += x[i];
    part_sum[t] = acc;
  });
  check_large(std::accumulate(part_sum.begin(), part_sum.end(), std::uint32_t{0}) == sum, "reduce_sum");
  std::printf("%-34s %lld chunks of %lld items\n", "", static_cast<long long>(ws.last_num_chunks()),
              static_cast<long long>(ws.last_chunk_items()));

  start = std::chrono::steady_clock::now();
  SCANLAB_CHECK(ss::inclusive_sum(ws, x, x, n));
  row("streaming inclusive_sum, in place", 2.0 * static_cast<double>(bytes), seconds_since(start), both_gbps, "both");
  std::vector<char> part_ok(parallel_parts(), 1);
  parallel_for(n, [&](std::int64_t begin, std::int64_t end, unsigned t) {
    for (std::int64_t i = begin; i < end; ++i) {
      const std::uint32_t before = i == 0 ? 0u : x[i - 1];
      if (static_cast<std::uint32_t>(x[i] - before) != large_item(i)) {
        part_ok[t] = 0;
        return;
      }
    }
  });
  check_large(std::all_of(part_ok.begin(), part_ok.end(), [](char ok) { return ok != 0; }), "inclusive_sum");

  fill_large(x, n);
  std::int64_t kept = 0;
  start = std::chrono::steady_clock::now();
  SCANLAB_CHECK(ss::select_if(ws, x, x, n, kept, is_odd{}));
  const double t_select = seconds_since(start);
  // Each part's odd items of the formula, counted, then found at the part's offset of the output.
  std::vector<std::int64_t> part_kept(parallel_parts() + 1, 0);
  parallel_for(n, [&](std::int64_t begin, std::int64_t end, unsigned t) {
    std::int64_t count = 0;
    for (std::int64_t i = begin; i < end; ++i) count += large_item(i) & 1u;
    part_kept[t + 1] = count;
  });
  std::partial_sum(part_kept.begin(), part_kept.end(), part_kept.begin());
  std::fill(part_ok.begin(), part_ok.end(), 1);
  parallel_for(n, [&](std::int64_t begin, std::int64_t end, unsigned t) {
    std::int64_t at = part_kept[t];
    for (std::int64_t i = begin; i < end; ++i) {
      const std::uint32_t item = large_item(i);
      if ((item & 1u) == 0) continue;
      if (x[at++] != item) {
        part_ok[t] = 0;
        return;
      }
    }
  });
  const double kept_bytes = static_cast<double>(kept) * sizeof(std::uint32_t);
  row("streaming select_if, in place", static_cast<double>(bytes) + kept_bytes, t_select, both_gbps, "both");
  const double bound = kept_bytes / (both_gbps * 1e9 / 2) + (static_cast<double>(bytes) - kept_bytes) / (h2d_gbps * 1e9);
  std::printf("%-34s %10.3f ms %8s      %6.1f %% of the link bound (%.1f %% kept)\n", "  link bound", bound * 1e3, "",
              100.0 * bound / t_select, 100.0 * static_cast<double>(kept) / static_cast<double>(n));
  check_large(kept == part_kept.back() && std::all_of(part_ok.begin(), part_ok.end(), [](char ok) { return ok != 0; }),
              "select_if");
  SCANLAB_CHECK(cudaFreeHost(x));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t n = std::int64_t{1} << 30;  // 4 GiB of float32
  std::size_t budget = std::size_t{1} << 30;
  int repeat = 5;
  ss::options opts;
  sort_setup sort;
  bool sort_mode = false;
  bool large_mode = false;
  const char* budget_text = nullptr;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      const bool has_value = i + 1 < argc;
      if (arg == "--help" || arg == "-h") {
        std::printf(
            "usage: scanlab-stream-bench [--n N] [--budget BYTES] [--repeat R] [--slots K] [--chunk BYTES]\n"
            "       scanlab-stream-bench --sort [--n N] [--budget BYTES] [--repeat R] [--slots K] [--run BYTES]\n"
            "                            [--in-place] [--pairs]\n"
            "       scanlab-stream-bench --large [--n N] [--budget BYTES] [--slots K] [--chunk BYTES]\n"
            "  streaming reduce, scans and compaction of pinned (and pageable) float32 host arrays against\n"
            "  the measured PCIe copy bandwidth; with --sort, the external sort of uint32 keys (--pairs:\n"
            "  with uint32 values) against 4 one-way copies of its data. Sizes take K, M, G suffixes\n"
            "  (binary); --budget all takes the GPU's free memory less 1 GiB. Defaults: --n 1G (items: 4 GB),\n"
            "  --budget 1G, --repeat 5, --slots 3, --chunk 64M, --run 1G (the sort's run cap,\n"
            "  sort_options.max_run_bytes). --large: reduce, inclusive scan and compaction of one pinned\n"
            "  uint32 array of N items (make it larger than the GPU), in place, once each, checked exactly.\n");
        return 0;
      }
      if (arg == "--large") {
        large_mode = true;
        continue;
      }
      if (arg == "--sort" || arg == "--in-place" || arg == "--pairs") {
        sort_mode = true;
        sort.in_place = sort.in_place || arg == "--in-place";
        sort.pairs = sort.pairs || arg == "--pairs";
        continue;
      }
      if (!has_value) throw std::invalid_argument("option " + arg + " needs a value (or unknown option)");
      const char* value = argv[++i];
      if (arg == "--n") n = parse_size(value);
      else if (arg == "--budget") budget_text = value;
      else if (arg == "--repeat") repeat = std::max(1, std::atoi(value));
      else if (arg == "--slots") opts.slots = std::atoi(value);
      else if (arg == "--chunk") opts.max_chunk_bytes = static_cast<std::size_t>(parse_size(value));
      else if (arg == "--run") sort.run_bytes = static_cast<std::size_t>(parse_size(value));
      else throw std::invalid_argument("unknown option " + arg + " (see --help)");
    }
    if (large_mode && sort_mode) throw std::invalid_argument("--large and --sort are separate runs");
    if (budget_text != nullptr && std::string(budget_text) != "all") budget = parse_budget(budget_text);
    sort.n = n;
    sort.budget = budget;
    sort.repeat = repeat;
    sort.opts = opts;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scanlab-stream-bench: %s\n", e.what());
    return 2;
  }
  // The apps' words for a missing GPU (no driver, a driver too old, no device): one line.
  if (const std::string reason = scanlab::gpu_unavailable_reason(); !reason.empty()) {
    std::fprintf(stderr, "scanlab-stream-bench: %s\n", reason.c_str());
    return 3;
  }
  try {
    if (budget_text != nullptr && std::string(budget_text) == "all") {
      budget = parse_budget(budget_text);
      sort.budget = budget;
    }
    if (large_mode) return run_large(n, budget, opts);
    return sort_mode ? run_sort(sort) : run(n, budget, repeat, opts);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scanlab-stream-bench: %s\n", e.what());
    return 1;
  }
}
