// scanlab/device_check.hpp: the words of the device-code check, in plain C++.
//
// Whether a binary can run on a GPU is decided on the device by scanlab/device_check.cuh
// (check_device_code). This header holds what that check says about it: how a list of
// CUDA architectures reads, which CMake value adds code for a GPU, and the one-line
// message an app prints when it has no code for the GPU it was given. No CUDA header is
// needed, so host-only code and CPU tests can use it.
#pragma once

#include <string>
#include <string_view>

namespace scanlab {

// What a binary holds for one device.
enum class device_code_status {
  present,      // SASS for the device, or PTX the driver compiled for it
  missing,      // neither SASS that runs on it nor PTX (cudaErrorNoKernelImageForDevice)
  ptx_too_new,  // only PTX, from a newer toolkit than the driver can compile (cudaErrorUnsupportedPtxVersion)
  no_jit,       // only PTX, and no JIT compiler to turn it into SASS (cudaErrorJitCompilerNotFound)
};

// "sm_90" for compute capability 9.0, "sm_120" for 12.0.
[[nodiscard]] inline std::string sm_name(int major, int minor) {
  return "sm_" + std::to_string(major) + std::to_string(minor);
}

// The value of CMAKE_CUDA_ARCHITECTURES that adds SASS for compute capability major.minor:
// "90" for 9.0, "86" for 8.6, "120" for 12.0.
[[nodiscard]] inline std::string cmake_architecture(int major, int minor) {
  return std::to_string(major) + std::to_string(minor);
}

// Reads a CMAKE_CUDA_ARCHITECTURES value (entries separated by ';' or ',', as CMake
// takes it or as passed through a compile definition) the way nvcc builds it:
// "80-real;90" -> "sm_80, sm_90 + PTX compute_90", "120-virtual" -> "PTX compute_120".
// Entries that are not numbers (native, all, all-major) are kept as they are. An
// empty list gives "".
[[nodiscard]] inline std::string describe_architectures(std::string_view list) {
  std::string out;
  auto append = [&out](const std::string& part) {
    if (!out.empty()) out += ", ";
    out += part;
  };
  while (!list.empty()) {
    const std::size_t end = list.find_first_of(";,");
    std::string_view entry = list.substr(0, end);
    list = end == std::string_view::npos ? std::string_view{} : list.substr(end + 1);
    while (!entry.empty() && entry.front() == ' ') entry.remove_prefix(1);
    while (!entry.empty() && entry.back() == ' ') entry.remove_suffix(1);
    if (entry.empty()) continue;
    const std::size_t dash = entry.find('-');
    const std::string_view number = entry.substr(0, dash);
    const std::string_view kind = dash == std::string_view::npos ? std::string_view{} : entry.substr(dash + 1);
    // Digits, optionally followed by 'a' (90a: the architecture-specific features of sm_90).
    const std::string_view digits = !number.empty() && number.back() == 'a' ? number.substr(0, number.size() - 1)
                                                                            : number;
    const bool numeric = !digits.empty() && digits.find_first_not_of("0123456789") == std::string_view::npos;
    if (!numeric) {
      append(std::string(entry));  // native, all, all-major, or something CMake would have refused
    } else if (kind == "real") {
      append("sm_" + std::string(number));
    } else if (kind == "virtual") {
      append("PTX compute_" + std::string(number));
    } else if (kind.empty()) {
      append("sm_" + std::string(number) + " + PTX compute_" + std::string(number));
    } else {
      append(std::string(entry));
    }
  }
  return out;
}

// The one line an app prints when this binary cannot run on the GPU: which GPU, its
// sm_XY, what the binary was built for (`built_for`: its CMAKE_CUDA_ARCHITECTURES, or
// empty where not recorded) and how to build for it. `status` must not be `present`.
// E.g. "GPU 0 (NVIDIA H100 80GB HBM3) is sm_90, but this binary has no code for it
// (built for sm_80): rebuild with -DCMAKE_CUDA_ARCHITECTURES=90 (or =native on that
// machine, or cmake --preset portable for every GPU from Turing to Blackwell)".
[[nodiscard]] inline std::string missing_device_code_message(int ordinal, std::string_view name, int major,
                                                             int minor, std::string_view built_for,
                                                             device_code_status status) {
  const std::string described = describe_architectures(built_for);
  const std::string built = described.empty() ? std::string("built for other architectures")
                                              : "built for " + described;
  std::string line = "GPU " + std::to_string(ordinal) + " (" + std::string(name) + ") is " + sm_name(major, minor) +
                     ", but this binary ";
  switch (status) {
    case device_code_status::ptx_too_new:
      line += "has only PTX that this driver is too old to compile (" + built +
              "): update the NVIDIA driver, or rebuild";
      break;
    case device_code_status::no_jit:
      line += "has only PTX and no JIT compiler is available to compile it (" + built + "): rebuild";
      break;
    case device_code_status::present:  // not a failure; worded like the missing case
    case device_code_status::missing:
    default:
      line += "has no code for it (" + built + "): rebuild";
      break;
  }
  line += " with -DCMAKE_CUDA_ARCHITECTURES=" + cmake_architecture(major, minor) +
          " (or =native on that machine, or cmake --preset portable for every GPU from Turing to Blackwell)";
  return line;
}

}  // namespace scanlab
