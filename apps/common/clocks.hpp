// GPU clocks and clock-event (throttle) reasons, read through NVML.
//
// NVML ships with the driver, not the toolkit: it is opened at run time
// (dlopen("libnvidia-ml.so.1")), so nothing links against it and a machine without it
// (or without a driver) simply has no clock data: every query answers "unknown".
// Host code only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace scanlab::clocks {

// One reading, taken while timed work was in flight.
struct sample {
  unsigned sm_mhz = 0;
  unsigned mem_mhz = 0;
  std::uint64_t reasons = 0;  // NVML clock-event reasons (a bit mask; 0: none)
};

// The readings of one measurement.
struct record {
  std::vector<sample> samples;  // empty: NVML unavailable
  unsigned sm_max_mhz = 0;      // the device's maximum SM clock (0: unknown)
  [[nodiscard]] bool available() const { return !samples.empty(); }
};

// Whether NVML could be opened and initialised (tried once per process).
[[nodiscard]] bool nvml_available();
// A reading of the CUDA device `ordinal` now; nullopt without NVML.
[[nodiscard]] std::optional<sample> read(int ordinal);
// The maximum SM clock of the CUDA device `ordinal` (MHz); nullopt without NVML.
[[nodiscard]] std::optional<unsigned> max_sm_mhz(int ordinal);
// The driver's version string ("580.159.04"); nullopt without NVML.
[[nodiscard]] std::optional<std::string> driver_version();

// Reason bits that say the clocks were held down (everything but "GPU idle").
inline constexpr std::uint64_t reason_gpu_idle = 0x1;
[[nodiscard]] inline std::uint64_t limiting(std::uint64_t reasons) { return reasons & ~reason_gpu_idle; }
// "sw_power_cap", "hw_slowdown", "sw_thermal", ...: one name per limiting bit.
[[nodiscard]] std::vector<std::string> reason_names(std::uint64_t reasons);

// A measurement is throttled when a busy sample names a limiting reason, or its SM clock
// is below `threshold` (75 %) of the maximum.
inline constexpr double throttle_threshold = 0.75;
[[nodiscard]] bool throttled(const record& r);

}  // namespace scanlab::clocks
