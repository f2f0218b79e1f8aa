// scanlab-stream-bench: the streaming (out-of-core) algorithms' throughput against the PCIe
// copies they are bound by (issue #24's targets: reduce >= 90 % of pinned H2D, scan and
// compaction >= 85 % of both directions at once; the external sort in <= 3x the time of
// moving its data across the link four times).
//
//   scanlab-stream-bench [--n N] [--budget BYTES] [--repeat R] [--slots K] [--chunk BYTES]
//   scanlab-stream-bench --sort [--n N] [--budget BYTES] [--repeat R] [--run BYTES] [--in-place] [--pairs]
//
// --sort: uint32 keys (with --pairs, uint32 values too), pinned host arrays and a pinned
// scratch the bench allocates once. Rows: pinned H2D and D2H of the data's bytes, one way
// each (through a device buffer of at most 1 GiB, piece after piece), then the sort, with
// its ratio to 4 one-way copies, 2 * (H2D + D2H): the run formation and the merge each move
// the data in and out once. The target is a ratio <= 3. Host memory: the keys (and values)
// twice, or once with --in-place, plus the scratch (the same size again). With --in-place
// the input is refilled (not timed) before each run. The first run's output is checked
// (sorted, and for pairs every value with its key).
//
// float32 data, pinned host arrays unless a row says pageable. Each row: the median of R
// host-synchronous calls (std::chrono, after one warm-up), in GB/s of host bytes moved
// (reduce: 4n read; scan: 4n in + 4n out; compaction: 4n in + 4 * kept out) and as a
// fraction of the copy bandwidth measured here: pinned H2D alone (reduce) or H2D and D2H
// at once on two streams (scan, compaction). Exit codes: 0, 1 error, 2 bad command line,
// 3 no GPU.
#include <scanlab/error.hpp>
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
#include <vector>

namespace {

namespace ss = scanlab::streaming;

struct is_positive {
  __host__ __device__ bool operator()(float x) const { return x > 0.0f; }
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

  // The copy ceilings: the same bytes, device buffers as large as the input.
  float* d_a = nullptr;
  float* d_b = nullptr;
  SCANLAB_CHECK(cudaMalloc(&d_a, bytes));
  SCANLAB_CHECK(cudaMalloc(&d_b, bytes));
  cudaStream_t s1 = nullptr;
  cudaStream_t s2 = nullptr;
  SCANLAB_CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  SCANLAB_CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  const double h2d = median_seconds(repeat, [&] {
    SCANLAB_CHECK(cudaMemcpyAsync(d_a, h_x, bytes, cudaMemcpyHostToDevice, s1));
    SCANLAB_CHECK(cudaStreamSynchronize(s1));
  });
  const double d2h = median_seconds(repeat, [&] {
    SCANLAB_CHECK(cudaMemcpyAsync(h_y, d_b, bytes, cudaMemcpyDeviceToHost, s1));
    SCANLAB_CHECK(cudaStreamSynchronize(s1));
  });
  const double both = median_seconds(repeat, [&] {
    SCANLAB_CHECK(cudaMemcpyAsync(d_a, h_x, bytes, cudaMemcpyHostToDevice, s1));
    SCANLAB_CHECK(cudaMemcpyAsync(h_y, d_b, bytes, cudaMemcpyDeviceToHost, s2));
    SCANLAB_CHECK(cudaStreamSynchronize(s1));
    SCANLAB_CHECK(cudaStreamSynchronize(s2));
  });
  SCANLAB_CHECK(cudaFree(d_a));
  SCANLAB_CHECK(cudaFree(d_b));
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
  const double t_select =
      median_seconds(repeat, [&] { SCANLAB_CHECK(ss::select_if(ws, h_x, h_y, n, kept, is_positive{})); });
  row("streaming select_if (half kept)", static_cast<double>(bytes + static_cast<std::size_t>(kept) * sizeof(float)),
      t_select, both_gbps, "both");
  const double t_page_reduce =
      median_seconds(repeat, [&] { SCANLAB_CHECK(ss::reduce_sum(ws, pageable.data(), n, sum)); });
  row("streaming reduce_sum, pageable", static_cast<double>(bytes), t_page_reduce, h2d_gbps, "H2D");
  const double t_page_scan = median_seconds(
      repeat, [&] { SCANLAB_CHECK(ss::inclusive_sum(ws, pageable.data(), pageable_out.data(), n)); });
  row("streaming inclusive_sum, pageable", 2.0 * static_cast<double>(bytes), t_page_scan, both_gbps, "both");

  SCANLAB_CHECK(cudaStreamDestroy(s1));
  SCANLAB_CHECK(cudaStreamDestroy(s2));
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

// One-way copy time of `bytes` of pinned host memory (H2D: to_device), piece by piece
// through a device buffer of at most 1 GiB, on one stream.
double one_way_seconds(unsigned char* h, std::size_t bytes, bool to_device, int repeat) {
  const std::size_t piece = std::min(bytes, std::size_t{1} << 30);
  void* d = nullptr;
  SCANLAB_CHECK(cudaMalloc(&d, piece));
  cudaStream_t stream = nullptr;
  SCANLAB_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const double seconds = median_seconds(repeat, [&] {
    for (std::size_t done = 0; done < bytes; done += piece) {
      const std::size_t part = std::min(piece, bytes - done);
      if (to_device) SCANLAB_CHECK(cudaMemcpyAsync(d, h + done, part, cudaMemcpyHostToDevice, stream));
      else SCANLAB_CHECK(cudaMemcpyAsync(h + done, d, part, cudaMemcpyDeviceToHost, stream));
    }
    SCANLAB_CHECK(cudaStreamSynchronize(stream));
  });
  SCANLAB_CHECK(cudaStreamDestroy(stream));
  SCANLAB_CHECK(cudaFree(d));
  return seconds;
}

void fill_keys(std::uint32_t* keys, std::int64_t n, std::uint64_t seed) {
  std::uint64_t x = seed;
  for (std::int64_t i = 0; i < n; ++i) {  // splitmix64: fast enough for 2^33 keys
    x += 0x9e3779b97f4a7c15ull;
    std::uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    keys[i] = static_cast<std::uint32_t>(z ^ (z >> 31));
  }
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

  const double h2d = one_way_seconds(reinterpret_cast<unsigned char*>(keys), bytes > key_bytes ? key_bytes : bytes,
                                     true, setup.repeat) * static_cast<double>(bytes) / static_cast<double>(key_bytes);
  const double d2h = one_way_seconds(reinterpret_cast<unsigned char*>(keys_out), key_bytes, false, setup.repeat) *
                     static_cast<double>(bytes) / static_cast<double>(key_bytes);
  refill();  // the D2H ceiling wrote over keys_out (the keys themselves with --in-place)

  ss::workspace ws(setup.budget, setup.opts);
  ss::sort_options sort_opts;
  sort_opts.max_run_bytes = setup.run_bytes;
  sort_opts.h_scratch = scratch;
  const auto sort_once = [&] {
    if (setup.pairs) SCANLAB_CHECK(ss::sort_pairs(ws, keys, values, keys_out, values_out, n, sort_opts));
    else SCANLAB_CHECK(ss::sort_keys(ws, keys, keys_out, n, sort_opts));
  };
  // The first run (a warm-up) is checked.
  std::vector<std::uint32_t> original;
  if (setup.pairs) original.assign(keys, keys + n);
  sort_once();
  for (std::int64_t i = 1; i < n; ++i) {
    if (keys_out[i - 1] > keys_out[i]) throw std::runtime_error("sort: output not sorted at " + std::to_string(i));
  }
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

}  // namespace

int main(int argc, char** argv) {
  std::int64_t n = std::int64_t{1} << 30;  // 4 GiB of float32
  std::size_t budget = std::size_t{1} << 30;
  int repeat = 5;
  ss::options opts;
  sort_setup sort;
  bool sort_mode = false;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      const bool has_value = i + 1 < argc;
      if (arg == "--help" || arg == "-h") {
        std::printf(
            "usage: scanlab-stream-bench [--n N] [--budget BYTES] [--repeat R] [--slots K] [--chunk BYTES]\n"
            "       scanlab-stream-bench --sort [--n N] [--budget BYTES] [--repeat R] [--slots K] [--run BYTES]\n"
            "                            [--in-place] [--pairs]\n"
            "  streaming reduce, scans and compaction of pinned (and pageable) float32 host arrays against\n"
            "  the measured PCIe copy bandwidth; with --sort, the external sort of uint32 keys (--pairs:\n"
            "  with uint32 values) against 4 one-way copies of its data. Sizes take K, M, G suffixes\n"
            "  (binary). Defaults: --n 1G (items: 4 GB), --budget 1G, --repeat 5, --slots 3, --chunk 64M,\n"
            "  --run 1G (the sort's run cap, sort_options.max_run_bytes).\n");
        return 0;
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
      else if (arg == "--budget") budget = static_cast<std::size_t>(parse_size(value));
      else if (arg == "--repeat") repeat = std::max(1, std::atoi(value));
      else if (arg == "--slots") opts.slots = std::atoi(value);
      else if (arg == "--chunk") opts.max_chunk_bytes = static_cast<std::size_t>(parse_size(value));
      else if (arg == "--run") sort.run_bytes = static_cast<std::size_t>(parse_size(value));
      else throw std::invalid_argument("unknown option " + arg + " (see --help)");
    }
    sort.n = n;
    sort.budget = budget;
    sort.repeat = repeat;
    sort.opts = opts;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scanlab-stream-bench: %s\n", e.what());
    return 2;
  }
  int devices = 0;
  if (const cudaError_t status = cudaGetDeviceCount(&devices); status != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "scanlab-stream-bench: no usable GPU (%s)\n",
                 status != cudaSuccess ? cudaGetErrorString(status) : "no CUDA device");
    return 3;
  }
  try {
    return sort_mode ? run_sort(sort) : run(n, budget, repeat, opts);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scanlab-stream-bench: %s\n", e.what());
    return 1;
  }
}
