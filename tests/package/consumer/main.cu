// Uses the installed scanlab headers: the device-wide reduce and inclusive scan, and
// block_reduce inside a kernel of our own. Checks first that this binary has code for
// the GPU (scanlab/device_check.cuh). Without a CUDA device, or on a GPU this build has
// no code for (it is built for sm_80 by the package test), it compiles, says why it skips
// the GPU part, and exits 0.
#include "report.hpp"

#include <scanlab/block/block_reduce.cuh>
#include <scanlab/device_check.cuh>
#include <scanlab/error.hpp>
#include <scanlab/functional.cuh>
#include <scanlab/iterator.cuh>
#include <scanlab/reduce.cuh>
#include <scanlab/scan.cuh>

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

__global__ void block_sum_kernel(const int* in, int* out) {
  using reducer = scanlab::block_reduce<int, 128>;
  __shared__ reducer::temp_storage storage;
  const int total = reducer(storage).reduce(in[threadIdx.x], scanlab::plus{});
  if (threadIdx.x == 0) *out = total;
}

int check(cudaError_t status, const char* what) { return report_failure(status, what); }

}  // namespace

int main() {
  int devices = 0;
  const cudaError_t probe = cudaGetDeviceCount(&devices);
  if (probe != cudaSuccess || devices == 0) {
    std::printf("scanlab_consumer: built against scanlab; no CUDA device (%s), skipping the GPU part\n",
                probe != cudaSuccess ? cudaGetErrorString(probe) : "none found");
    return 0;
  }
  say_built_for(SCANLAB_CUDA_ARCHITECTURES);
  int device = 0;
  scanlab::device_code_report code;
  if (check(cudaGetDevice(&device), "cudaGetDevice") || check(scanlab::check_device_code(device, code), "check")) {
    return 1;
  }
  if (!code.has_code()) {
    std::printf("scanlab_consumer: %s; skipping the GPU part\n", code.message.c_str());
    return 0;
  }

  const std::int64_t n = 1 << 20;
  std::vector<int> host(static_cast<std::size_t>(n));
  long long expected = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    host[static_cast<std::size_t>(i)] = static_cast<int>(i % 7) - 3;
    expected += host[static_cast<std::size_t>(i)];
  }
  int* d_in = nullptr;
  long long* d_out = nullptr;
  int* d_block = nullptr;
  int* d_scan = nullptr;
  void* d_temp = nullptr;
  std::size_t temp_bytes = 0;
  std::size_t scan_bytes = 0;
  if (check(cudaMalloc(&d_in, host.size() * sizeof(int)), "cudaMalloc") ||
      check(cudaMalloc(&d_out, sizeof(long long)), "cudaMalloc") ||
      check(cudaMalloc(&d_block, sizeof(int)), "cudaMalloc") ||
      check(cudaMalloc(&d_scan, host.size() * sizeof(int)), "cudaMalloc") ||
      check(cudaMemcpy(d_in, host.data(), host.size() * sizeof(int), cudaMemcpyHostToDevice), "cudaMemcpy") ||
      check(scanlab::reduce(nullptr, temp_bytes, static_cast<const int*>(d_in), d_out, n, 0LL, scanlab::plus{}),
            "scanlab::reduce (query)") ||
      check(scanlab::inclusive_scan(nullptr, scan_bytes, static_cast<const int*>(d_in), d_scan, n, scanlab::plus{}),
            "scanlab::inclusive_scan (query)") ||
      check(cudaMalloc(&d_temp, temp_bytes > scan_bytes ? temp_bytes : scan_bytes), "cudaMalloc") ||
      check(scanlab::reduce(d_temp, temp_bytes, static_cast<const int*>(d_in), d_out, n, 0LL, scanlab::plus{}),
            "scanlab::reduce") ||
      check(scanlab::inclusive_scan(d_temp, scan_bytes, static_cast<const int*>(d_in), d_scan, n, scanlab::plus{}),
            "scanlab::inclusive_scan")) {
    return 1;
  }
  block_sum_kernel<<<1, 128>>>(d_in, d_block);
  if (check(cudaGetLastError(), "block_sum_kernel")) return 1;
  long long got = 0;
  int block_got = 0;
  std::vector<int> scanned(host.size());
  if (check(cudaMemcpy(&got, d_out, sizeof(got), cudaMemcpyDeviceToHost), "cudaMemcpy") ||
      check(cudaMemcpy(&block_got, d_block, sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy") ||
      check(cudaMemcpy(scanned.data(), d_scan, scanned.size() * sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy")) {
    return 1;
  }
  long long block_expected = 0;
  for (int i = 0; i < 128; ++i) block_expected += host[static_cast<std::size_t>(i)];
  std::int64_t scan_mismatches = 0;
  int running = 0;
  for (std::size_t i = 0; i < host.size(); ++i) {
    running += host[i];
    scan_mismatches += scanned[i] != running ? 1 : 0;
  }
  cudaFree(d_scan);
  cudaFree(d_temp);
  cudaFree(d_block);
  cudaFree(d_out);
  cudaFree(d_in);
  std::printf("scanlab_consumer: reduce %lld (expected %lld), block_reduce %d (expected %lld), inclusive_scan %lld "
              "mismatches of %lld\n",
              got, expected, block_got, block_expected, static_cast<long long>(scan_mismatches),
              static_cast<long long>(n));
  return got == expected && block_got == block_expected && scan_mismatches == 0 ? 0 : 1;
}
