// Fuzzing harness of the .npy reader (apps/common/npy.hpp): the bytes are a whole file.
// Besides not crashing, leaking or allocating more than the file holds (scripts/fuzz.sh caps
// mallocs far below what any input here could honestly need), the reader must either refuse
// with one line naming the file, or return an array whose data are exactly the file's last
// bytes and which reads back the same from the header numpy.save would write for it.
#include "common/npy.hpp"
#include "fuzz_check.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

using scanlab::fuzz::require;
namespace io = scanlab::io;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  io::host_array array;
  try {
    array = io::parse_npy(bytes, "fuzz.npy");
  } catch (const io::io_error& e) {
    scanlab::fuzz::require_one_line_naming(e.what(), "fuzz.npy: ");
    return 0;
  }
  require(array.bytes() <= size, "more data than the file holds");
  require(std::memcmp(array.data(), data + (size - array.bytes()), array.bytes()) == 0,
          "the data are not the file's last bytes");

  const std::string again = io::make_npy_header(array.type(), array.shape()) +
                            std::string(reinterpret_cast<const char*>(array.data()), array.bytes());
  const io::host_array back = io::parse_npy(again, "again.npy", array.type());  // bfloat16 is written as <V2
  require(back.type() == array.type() && back.shape() == array.shape(), "the rewritten header reads differently");
  require(std::memcmp(back.data(), array.data(), array.bytes()) == 0, "the rewritten data read differently");
  return 0;
}
