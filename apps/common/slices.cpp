#include "common/slices.hpp"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <ostream>

namespace scanlab::cli {

nlohmann::json stream_summary(const path_choice& path, const stream_workspace& ws, const stream_timing& timing,
                              std::uint64_t host_bytes, bool bench, std::ostream& out) {
  const auto rate = [&](double seconds) { return seconds > 0 ? static_cast<double>(host_bytes) / seconds / 1e9 : 0.0; };
  char numbers[160];
  std::snprintf(numbers, sizeof numbers, "%.3f s, %.2f GB/s of host data (in the streaming calls: %.3f s, %.2f GB/s)",
                timing.seconds, rate(timing.seconds), timing.gpu_seconds, rate(timing.gpu_seconds));
  const std::string line = "streamed " + show_bytes(static_cast<double>(host_bytes)) + " in " +
                           std::to_string(timing.slices) + " slice(s), " + std::to_string(ws.chunk_items()) +
                           " items per chunk, " + show_bytes(static_cast<double>(ws.device_bytes_held())) +
                           " of device memory held: " + numbers;
  if (bench) {
    out << '\n' << line << '\n';
  } else {
    spdlog::info("{}", line);
  }
  return {{"reason", path.reason},
          {"device_memory_limit", path.device_bytes},
          {"device_bytes_held", ws.device_bytes_held()},
          {"chunk_items", ws.chunk_items()},
          {"slices", timing.slices},
          {"host_bytes", host_bytes},
          {"seconds", timing.seconds},
          {"gbps", rate(timing.seconds)},
          {"streaming_call_seconds", timing.gpu_seconds},
          {"streaming_call_gbps", rate(timing.gpu_seconds)}};
}

}  // namespace scanlab::cli
