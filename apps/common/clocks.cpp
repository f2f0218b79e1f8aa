#include "common/clocks.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <array>
#include <map>
#include <mutex>

namespace scanlab::clocks {

namespace {

// The few NVML entry points used, with NVML's C signatures (nvml.h is not needed:
// its handle is an opaque pointer and its status an int, 0 meaning success).
using nvml_device = void*;
using nvml_status = int;
constexpr int nvml_clock_sm = 1;
constexpr int nvml_clock_mem = 2;

struct nvml_api {
  nvml_status (*init)() = nullptr;
  nvml_status (*handle_by_pci_bus_id)(const char*, nvml_device*) = nullptr;
  nvml_status (*clock_info)(nvml_device, int, unsigned*) = nullptr;
  nvml_status (*max_clock_info)(nvml_device, int, unsigned*) = nullptr;
  nvml_status (*event_reasons)(nvml_device, unsigned long long*) = nullptr;
  nvml_status (*driver_version)(char*, unsigned) = nullptr;
  std::map<int, nvml_device> devices;  // by CUDA ordinal
  bool ok = false;
};

template <class F>
bool bind(void* library, const char* symbol, F& out) {
  out = reinterpret_cast<F>(dlsym(library, symbol));
  return out != nullptr;
}

// Opened once and kept for the life of the process (NVML is never shut down: the
// process ends soon after its benchmarks, and a later call would need it again).
nvml_api& api() {
  static nvml_api a;
  static std::once_flag once;
  std::call_once(once, [] {
    void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) return;
    bool bound = bind(library, "nvmlInit_v2", a.init) &&
                 bind(library, "nvmlDeviceGetHandleByPciBusId_v2", a.handle_by_pci_bus_id) &&
                 bind(library, "nvmlDeviceGetClockInfo", a.clock_info) &&
                 bind(library, "nvmlDeviceGetMaxClockInfo", a.max_clock_info) &&
                 bind(library, "nvmlSystemGetDriverVersion", a.driver_version);
    // Renamed in driver 535 ("throttle" became "clocks event"); either will do.
    if (!bind(library, "nvmlDeviceGetCurrentClocksEventReasons", a.event_reasons)) {
      bound = bound && bind(library, "nvmlDeviceGetCurrentClocksThrottleReasons", a.event_reasons);
    }
    a.ok = bound && a.init() == 0;
  });
  return a;
}

std::optional<nvml_device> device(int ordinal) {
  nvml_api& a = api();
  if (!a.ok) return std::nullopt;
  if (auto it = a.devices.find(ordinal); it != a.devices.end()) return it->second;
  std::array<char, 32> bus_id{};
  if (cudaDeviceGetPCIBusId(bus_id.data(), static_cast<int>(bus_id.size()), ordinal) != cudaSuccess) {
    cudaGetLastError();
    return std::nullopt;
  }
  nvml_device handle = nullptr;
  if (a.handle_by_pci_bus_id(bus_id.data(), &handle) != 0) return std::nullopt;
  a.devices[ordinal] = handle;
  return handle;
}

}  // namespace

bool nvml_available() { return api().ok; }

std::optional<sample> read(int ordinal) {
  const auto d = device(ordinal);
  if (!d) return std::nullopt;
  nvml_api& a = api();
  sample s;
  unsigned long long reasons = 0;
  if (a.clock_info(*d, nvml_clock_sm, &s.sm_mhz) != 0 || a.clock_info(*d, nvml_clock_mem, &s.mem_mhz) != 0 ||
      a.event_reasons(*d, &reasons) != 0) {
    return std::nullopt;
  }
  s.reasons = reasons;
  return s;
}

std::optional<unsigned> max_sm_mhz(int ordinal) {
  const auto d = device(ordinal);
  unsigned mhz = 0;
  if (!d || api().max_clock_info(*d, nvml_clock_sm, &mhz) != 0 || mhz == 0) return std::nullopt;
  return mhz;
}

std::optional<std::string> driver_version() {
  nvml_api& a = api();
  std::array<char, 96> text{};
  if (!a.ok || a.driver_version(text.data(), static_cast<unsigned>(text.size())) != 0) return std::nullopt;
  return std::string(text.data());
}

std::vector<std::string> reason_names(std::uint64_t reasons) {
  // nvmlClocksEventReason* bits, as nvml.h numbers them.
  static constexpr std::pair<std::uint64_t, const char*> names[] = {
      {0x2, "applications_clocks_setting"}, {0x4, "sw_power_cap"},   {0x8, "hw_slowdown"},
      {0x10, "sync_boost"},                 {0x20, "sw_thermal"},     {0x40, "hw_thermal"},
      {0x80, "hw_power_brake"},             {0x100, "display_clock"},
  };
  std::vector<std::string> out;
  std::uint64_t known = reason_gpu_idle;
  for (const auto& [bit, text] : names) {
    known |= bit;
    if ((reasons & bit) != 0) out.emplace_back(text);
  }
  if ((reasons & ~known) != 0) out.push_back("other");
  return out;
}

bool throttled(const record& r) {
  for (const sample& s : r.samples) {
    if (limiting(s.reasons) != 0) return true;
    // A sample the driver calls idle (the work finished before it was read) says nothing
    // about the clock the work ran at.
    const bool busy = (s.reasons & reason_gpu_idle) == 0;
    if (busy && r.sm_max_mhz > 0 && s.sm_mhz < throttle_threshold * r.sm_max_mhz) return true;
  }
  return false;
}

}  // namespace scanlab::clocks
