// Where the tests' small data files (tests/data) are. In order: $SCANLAB_TEST_DATA (CTest
// sets it), a test_data folder beside the test executable (the build copies tests/data to
// build/bin/test_data, so the files travel with the binaries to another machine), and the
// source tree the binary was built from.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace scanlab::test {

inline std::filesystem::path data_dir() {
  if (const char* env = std::getenv("SCANLAB_TEST_DATA"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::filesystem::path beside = exe.parent_path() / "test_data";
    if (std::filesystem::is_directory(beside, ec)) return beside;
  }
  return SCANLAB_SOURCE_TEST_DATA;
}

}  // namespace scanlab::test
