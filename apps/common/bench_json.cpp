// Writing benchmark reports: kept apart from the harness so GPU tests need no file I/O.
#include "common/atomic_file.hpp"
#include "common/bench.hpp"

namespace scanlab::bench {

void write_json(const std::filesystem::path& path, const nlohmann::json& report) {
  io::write_file_atomically(path, report.dump(2) + "\n");
}

}  // namespace scanlab::bench
