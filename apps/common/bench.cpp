#include "common/bench.hpp"

#include "common/table.hpp"

#include <scanlab/error.hpp>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <ostream>

namespace scanlab::bench {

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
  SCANLAB_CHECK(cudaEventCreate(&start_));
  SCANLAB_CHECK(cudaEventCreate(&stop_));
  if (cfg_.flush_l2) {
    int device = 0;
    SCANLAB_CHECK(cudaGetDevice(&device));
    int l2_bytes = 0;
    SCANLAB_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
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
  for (int i = 0; i < cfg_.repeat; ++i) {
    flush_l2();
    SCANLAB_CHECK(cudaEventRecord(start_, stream_));
    work(stream_);
    SCANLAB_CHECK(cudaEventRecord(stop_, stream_));
    SCANLAB_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    SCANLAB_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    samples.push_back(ms);
  }
  SCANLAB_CHECK(cudaGetLastError());
  std::sort(samples.begin(), samples.end());
  timing t;
  t.runs = static_cast<int>(samples.size());
  const std::size_t mid = samples.size() / 2;
  t.median_ms = samples.size() % 2 == 1 ? samples[mid] : 0.5 * (samples[mid - 1] + samples[mid]);
  t.min_ms = samples.front();
  t.max_ms = samples.back();
  return t;
}

double harness::memcpy_gbps() {
  if (memcpy_gbps_) return *memcpy_gbps_;
  // 512 MiB each way (far larger than L2); halve the size if the GPU is short of memory.
  std::size_t bytes = std::size_t{512} << 20;
  void* src = nullptr;
  void* dst = nullptr;
  while (bytes >= (std::size_t{16} << 20)) {
    if (cudaMalloc(&src, bytes) == cudaSuccess) {
      if (cudaMalloc(&dst, bytes) == cudaSuccess) break;
      cudaFree(src);
      src = nullptr;
    }
    cudaGetLastError();
    bytes /= 2;
  }
  if (dst == nullptr) throw cuda_error(cudaErrorMemoryAllocation, "memcpy bandwidth buffers", __FILE__, __LINE__);
  SCANLAB_CHECK(cudaMemsetAsync(src, 1, bytes, stream_));
  const timing t = time([&](cudaStream_t s) {
    SCANLAB_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s));
  });
  cudaFree(src);
  cudaFree(dst);
  memcpy_gbps_ = 2.0 * static_cast<double>(bytes) / (t.median_ms * 1e6);
  return *memcpy_gbps_;
}

void print_results(std::ostream& out, const std::vector<result>& results, double memcpy_gbps) {
  text_table table({"suite", "variant", "type", "dataset", "n", "time", "GB/s", "% memcpy", "vs CUB", "check"});
  for (const result& r : results) {
    const auto speedup = r.speedup();
    table.add_row({r.suite, r.variant, r.type, r.dataset, format_count(r.n), format_time_ms(r.time.median_ms),
                   format_fixed(r.gbps(), 0),
                   memcpy_gbps > 0 ? format_fixed(100.0 * r.gbps() / memcpy_gbps, 1) + "%" : "",
                   speedup ? format_fixed(*speedup, 2) + "x" : "", r.validation});
  }
  table.print(out);
  if (memcpy_gbps > 0) {
    out << "memcpy (device to device, read + write): " << format_fixed(memcpy_gbps, 0) << " GB/s; "
        << "'vs CUB' > 1 means faster than CUB on the same input; " << baseline_label() << ".\n";
  }
}

nlohmann::json to_json(const std::vector<result>& results, const device_info& device, double memcpy_gbps) {
  nlohmann::json rows = nlohmann::json::array();
  for (const result& r : results) {
    nlohmann::json row = {
        {"suite", r.suite},
        {"variant", r.variant},
        {"type", r.type},
        {"dataset", r.dataset},
        {"n", r.n},
        {"bytes", r.bytes},
        {"median_ms", r.time.median_ms},
        {"min_ms", r.time.min_ms},
        {"max_ms", r.time.max_ms},
        {"runs", r.time.runs},
        {"gbps", r.gbps()},
        {"items_per_second", r.items_per_second()},
        {"pct_memcpy", memcpy_gbps > 0 ? 100.0 * r.gbps() / memcpy_gbps : 0.0},
        {"validation", r.validation},
    };
    if (r.baseline_ms) row["baseline_ms"] = *r.baseline_ms;
    if (auto s = r.speedup()) row["speedup_vs_baseline"] = *s;
    rows.push_back(std::move(row));
  }
  const baseline_info cub = baseline();
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return {
      {"scanlab_version", SCANLAB_VERSION},
      {"timestamp", stamp},
      {"device",
       {{"name", device.name},
        {"ordinal", device.ordinal},
        {"sm_count", device.sm_count},
        {"compute_capability", std::to_string(device.cc_major) + "." + std::to_string(device.cc_minor)},
        {"l2_bytes", device.l2_bytes},
        {"global_bytes", device.global_bytes},
        {"cuda_runtime", device.runtime_version},
        {"cuda_driver", device.driver_version}}},
      {"memcpy_gbps", memcpy_gbps},
      {"baseline", {{"cub_version", cub.cub_version}, {"headers", cub.headers}}},
      {"results", std::move(rows)},
  };
}

}  // namespace scanlab::bench
