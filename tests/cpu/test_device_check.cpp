// The words of the device-code check (scanlab/device_check.hpp), host-only: how a
// CMAKE_CUDA_ARCHITECTURES list reads, which CMake value adds a GPU, and the one line
// an app prints when it has no code for the GPU.
#include <scanlab/device_check.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {

using scanlab::device_code_status;

TEST(DeviceCheckWords, SmNameAndCmakeValue) {
  EXPECT_EQ(scanlab::sm_name(7, 5), "sm_75");
  EXPECT_EQ(scanlab::sm_name(9, 0), "sm_90");
  EXPECT_EQ(scanlab::sm_name(12, 0), "sm_120");
  EXPECT_EQ(scanlab::sm_name(10, 3), "sm_103");
  EXPECT_EQ(scanlab::cmake_architecture(8, 6), "86");
  EXPECT_EQ(scanlab::cmake_architecture(10, 0), "100");
  EXPECT_EQ(scanlab::cmake_architecture(12, 0), "120");
}

TEST(DeviceCheckWords, DescribesArchitectureLists) {
  EXPECT_EQ(scanlab::describe_architectures(""), "");
  EXPECT_EQ(scanlab::describe_architectures("90"), "sm_90 + PTX compute_90");
  EXPECT_EQ(scanlab::describe_architectures("80-real"), "sm_80");
  EXPECT_EQ(scanlab::describe_architectures("120-virtual"), "PTX compute_120");
  EXPECT_EQ(scanlab::describe_architectures("90a-real"), "sm_90a");
  // CMake's own separator and the one the compile definition carries; stray spaces and
  // empty entries are ignored.
  EXPECT_EQ(scanlab::describe_architectures("75-real;80-real"), "sm_75, sm_80");
  EXPECT_EQ(scanlab::describe_architectures(" 75-real,, 80-real ,"), "sm_75, sm_80");
  EXPECT_EQ(scanlab::describe_architectures(
                "75-real,80-real,86-real,89-real,90-real,100-real,120-real,120-virtual"),
            "sm_75, sm_80, sm_86, sm_89, sm_90, sm_100, sm_120, PTX compute_120");
  // Words CMake accepts are kept as they are.
  EXPECT_EQ(scanlab::describe_architectures("native"), "native");
  EXPECT_EQ(scanlab::describe_architectures("all-major"), "all-major");
  EXPECT_EQ(scanlab::describe_architectures("80-fancy"), "80-fancy");
}

TEST(DeviceCheckWords, MissingCodeIsOneLineNamingDeviceBuildAndFlag) {
  const std::string line = scanlab::missing_device_code_message(0, "NVIDIA H100 80GB HBM3", 9, 0, "80-real",
                                                                device_code_status::missing);
  EXPECT_EQ(line,
            "GPU 0 (NVIDIA H100 80GB HBM3) is sm_90, but this binary has no code for it (built for sm_80): "
            "rebuild with -DCMAKE_CUDA_ARCHITECTURES=90 (or =native on that machine, or cmake --preset portable "
            "for every GPU from Turing to Blackwell)");
  EXPECT_EQ(line.find('\n'), std::string::npos);
}

TEST(DeviceCheckWords, OtherDevicesAndBuilds) {
  const std::string turing = scanlab::missing_device_code_message(1, "NVIDIA T4", 7, 5, "90",
                                                                  device_code_status::missing);
  EXPECT_NE(turing.find("GPU 1 (NVIDIA T4) is sm_75"), std::string::npos) << turing;
  EXPECT_NE(turing.find("(built for sm_90 + PTX compute_90)"), std::string::npos) << turing;
  EXPECT_NE(turing.find("-DCMAKE_CUDA_ARCHITECTURES=75 "), std::string::npos) << turing;

  const std::string ampere = scanlab::missing_device_code_message(0, "NVIDIA GeForce RTX 3080", 8, 6,
                                                                  "90-real,100-real", device_code_status::missing);
  EXPECT_NE(ampere.find("is sm_86"), std::string::npos) << ampere;
  EXPECT_NE(ampere.find("(built for sm_90, sm_100)"), std::string::npos) << ampere;
  EXPECT_NE(ampere.find("-DCMAKE_CUDA_ARCHITECTURES=86 "), std::string::npos) << ampere;

  // Built without SCANLAB_CUDA_ARCHITECTURES: the architectures are not named.
  const std::string unnamed = scanlab::missing_device_code_message(0, "NVIDIA B200", 10, 0, "",
                                                                   device_code_status::missing);
  EXPECT_NE(unnamed.find("is sm_100, but this binary has no code for it (built for other architectures)"),
            std::string::npos)
      << unnamed;
  EXPECT_NE(unnamed.find("-DCMAKE_CUDA_ARCHITECTURES=100 "), std::string::npos) << unnamed;
}

TEST(DeviceCheckWords, PtxTheDriverCannotCompile) {
  const std::string too_new = scanlab::missing_device_code_message(0, "NVIDIA RTX PRO 6000", 12, 0, "120-virtual",
                                                                   device_code_status::ptx_too_new);
  EXPECT_NE(too_new.find("has only PTX that this driver is too old to compile (built for PTX compute_120): "
                         "update the NVIDIA driver, or rebuild with -DCMAKE_CUDA_ARCHITECTURES=120"),
            std::string::npos)
      << too_new;
  const std::string no_jit = scanlab::missing_device_code_message(0, "NVIDIA L4", 8, 9, "80-virtual",
                                                                  device_code_status::no_jit);
  EXPECT_NE(no_jit.find("has only PTX and no JIT compiler is available to compile it (built for PTX compute_80): "
                        "rebuild with -DCMAKE_CUDA_ARCHITECTURES=89"),
            std::string::npos)
      << no_jit;
  EXPECT_EQ(too_new.find('\n'), std::string::npos);
  EXPECT_EQ(no_jit.find('\n'), std::string::npos);
}

}  // namespace
