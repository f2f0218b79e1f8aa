#include "common/bench.hpp"


#include <scanlab/error.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>

namespace scanlab::bench {

namespace detail {
// read_bandwidth.cu: reads `bytes` (a multiple of 16) from d_in on `stream`, keeping only a
// value that depends on every byte (written to *d_sink, which must hold `blocks` words).
void enqueue_read(const void* d_in, std::size_t bytes, unsigned* d_sink, int blocks, cudaStream_t stream);
int read_blocks(int device);
}  // namespace detail

namespace {

// Ceilings measured once per process and device.
std::map<int, double>& memcpy_cache() {
  static std::map<int, double> cache;
  return cache;
}
std::map<int, double>& read_cache() {
  static std::map<int, double> cache;
  return cache;
}

// Two buffers of up to 512 MiB each (far larger than L2), halved while the GPU is short of memory.
struct bandwidth_buffers {
  void* src = nullptr;
  void* dst = nullptr;
  std::size_t bytes = std::size_t{512} << 20;
  explicit bandwidth_buffers(std::size_t dst_bytes_per_src_byte) {
    while (bytes >= (std::size_t{16} << 20)) {
      if (cudaMalloc(&src, bytes) == cudaSuccess) {
        if (dst_bytes_per_src_byte == 0 || cudaMalloc(&dst, bytes) == cudaSuccess) return;
        cudaFree(src);
        src = nullptr;
      }
      cudaGetLastError();
      bytes /= 2;
    }
    throw cuda_error(cudaErrorMemoryAllocation, "bandwidth buffers", __FILE__, __LINE__);
  }
  ~bandwidth_buffers() {
    if (src != nullptr) cudaFree(src);
    if (dst != nullptr) cudaFree(dst);
  }
  bandwidth_buffers(const bandwidth_buffers&) = delete;
  bandwidth_buffers& operator=(const bandwidth_buffers&) = delete;
};

}  // namespace

std::string_view name(ceiling c) {
  switch (c) {
    case ceiling::memcpy: return "memcpy";
    case ceiling::read: return "read";
    case ceiling::none: return "none";
  }
  return "none";
}

timing from_samples(std::vector<double> samples_ms, int warmup, bool flush_l2) {
  if (samples_ms.empty()) throw std::logic_error("bench::from_samples: no samples");
  timing t;
  t.warmup = warmup;
  t.flush_l2 = flush_l2;
  t.runs = static_cast<int>(samples_ms.size());
  std::vector<double> sorted = samples_ms;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t mid = sorted.size() / 2;
  t.median_ms = sorted.size() % 2 == 1 ? sorted[mid] : 0.5 * (sorted[mid - 1] + sorted[mid]);
  t.min_ms = sorted.front();
  t.max_ms = sorted.back();
  const double count = static_cast<double>(sorted.size());
  t.mean_ms = std::accumulate(sorted.begin(), sorted.end(), 0.0) / count;
  double squares = 0;
  for (double x : sorted) squares += (x - t.mean_ms) * (x - t.mean_ms);
  // The sample standard deviation over the mean (0 for a single sample).
  t.noise = sorted.size() > 1 && t.mean_ms > 0 ? std::sqrt(squares / (count - 1)) / t.mean_ms : 0.0;
  t.samples_ms = std::move(samples_ms);
  return t;
}

timing minus(const timing& t, double ms) {
  std::vector<double> samples = t.samples_ms;
  for (double& x : samples) x = std::max(x - ms, 1e-6);
  timing out = from_samples(std::move(samples), t.warmup, t.flush_l2);
  out.clocks = t.clocks;
  return out;
}

device_info query_device(int ordinal) {
  cudaDeviceProp prop{};
  SCANLAB_CHECK(cudaGetDeviceProperties(&prop, ordinal));
  device_info info;
  info.ordinal = ordinal;
  info.name = prop.name;
  info.sm_count = prop.multiProcessorCount;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.l2_bytes = prop.l2CacheSize;
  info.global_bytes = static_cast<std::int64_t>(prop.totalGlobalMem);
  SCANLAB_CHECK(cudaRuntimeGetVersion(&info.runtime_version));
  SCANLAB_CHECK(cudaDriverGetVersion(&info.driver_version));
  return info;
}

std::string baseline_label() {
  const baseline_info b = baseline();
  return "CUB " + b.cub_version + " (" + (b.headers == "CUDA toolkit" ? b.headers : "CCCL headers " + b.headers) + ")";
}

harness::harness(config cfg, cudaStream_t stream) : cfg_(cfg), stream_(stream) {
  cfg_.repeat = std::max(cfg_.repeat, 10);
  cfg_.warmup = std::max(cfg_.warmup, 1);
  SCANLAB_CHECK(cudaGetDevice(&device_));
  SCANLAB_CHECK(cudaEventCreate(&start_));
  SCANLAB_CHECK(cudaEventCreate(&stop_));
  if (cfg_.flush_l2) {
    int l2_bytes = 0;
    SCANLAB_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device_));
    // Writing twice the L2's size evicts every line the previous run left there.
    flush_bytes_ = std::max<std::size_t>(2 * static_cast<std::size_t>(l2_bytes), std::size_t{8} << 20);
    SCANLAB_CHECK(cudaMalloc(&flush_buffer_, flush_bytes_));
  }
}

harness::~harness() {
  if (flush_buffer_ != nullptr) cudaFree(flush_buffer_);
  if (start_ != nullptr) cudaEventDestroy(start_);
  if (stop_ != nullptr) cudaEventDestroy(stop_);
}

void harness::flush_l2() {
  if (flush_buffer_ == nullptr) return;
  static int fill = 0;
  fill = (fill + 1) & 0xff;
  SCANLAB_CHECK(cudaMemsetAsync(flush_buffer_, fill, flush_bytes_, stream_));
}

timing harness::time(const std::function<void(cudaStream_t)>& work) {
  for (int i = 0; i < cfg_.warmup; ++i) {
    flush_l2();
    work(stream_);
  }
  SCANLAB_CHECK(cudaStreamSynchronize(stream_));
  SCANLAB_CHECK(cudaGetLastError());

  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(cfg_.repeat));
  clocks::record readings;
  if (const auto max = clocks::max_sm_mhz(device_)) readings.sm_max_mhz = *max;
  for (int i = 0; i < cfg_.repeat; ++i) {
    flush_l2();
    SCANLAB_CHECK(cudaEventRecord(start_, stream_));
    work(stream_);
    SCANLAB_CHECK(cudaEventRecord(stop_, stream_));
    // Read while the run is (most likely) in flight: the reading is outside the events.
    if (const auto reading = clocks::read(device_)) readings.samples.push_back(*reading);
    SCANLAB_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    SCANLAB_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    samples.push_back(ms);
  }
  SCANLAB_CHECK(cudaGetLastError());
  timing t = from_samples(std::move(samples), cfg_.warmup, cfg_.flush_l2);
  t.clocks = std::move(readings);
  return t;
}

double harness::memcpy_gbps() {
  if (auto it = memcpy_cache().find(device_); it != memcpy_cache().end()) return it->second;
  bandwidth_buffers buffers(1);
  SCANLAB_CHECK(cudaMemsetAsync(buffers.src, 1, buffers.bytes, stream_));
  const timing t = time([&](cudaStream_t s) {
    SCANLAB_CHECK(cudaMemcpyAsync(buffers.dst, buffers.src, buffers.bytes, cudaMemcpyDeviceToDevice, s));
  });
  const double gbps = 2.0 * static_cast<double>(buffers.bytes) / (t.median_ms * 1e6);
  memcpy_cache()[device_] = gbps;
  return gbps;
}

double harness::read_gbps() {
  if (auto it = read_cache().find(device_); it != read_cache().end()) return it->second;
  // One buffer of twice memcpy's size: the same 1 GiB of traffic, all of it reads.
  bandwidth_buffers first(0), second(0);
  const int blocks = detail::read_blocks(device_);
  unsigned* d_sink = nullptr;
  SCANLAB_CHECK(cudaMalloc(reinterpret_cast<void**>(&d_sink), static_cast<std::size_t>(blocks) * sizeof(unsigned)));
  SCANLAB_CHECK(cudaMemsetAsync(first.src, 1, first.bytes, stream_));
  SCANLAB_CHECK(cudaMemsetAsync(second.src, 2, second.bytes, stream_));
  timing t;
  try {
    t = time([&](cudaStream_t s) {
      detail::enqueue_read(first.src, first.bytes, d_sink, blocks, s);
      detail::enqueue_read(second.src, second.bytes, d_sink, blocks, s);
    });
  } catch (...) {
    cudaFree(d_sink);
    throw;
  }
  cudaFree(d_sink);
  const double gbps = static_cast<double>(first.bytes + second.bytes) / (t.median_ms * 1e6);
  read_cache()[device_] = gbps;
  return gbps;
}

}  // namespace scanlab::bench
