// Fuzzing harness of the text/CSV reader (apps/common/dataset.hpp). The first two bytes
// choose how the rest is read, as the command line would: byte 0 the element type (of the
// ten), byte 1 the extension (.txt, .csv, .tsv: the delimiter) and the --column (empty, an
// index, a name, an index too large). The reader must refuse with one line naming the file
// (and the line), or return a 1-D array of at most one value per line whose values, printed
// as write_dataset prints them, read back the same.
#include "common/dataset.hpp"
#include "fuzz_check.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

using scanlab::fuzz::require;
namespace io = scanlab::io;

namespace {

constexpr std::array<std::string_view, 3> extensions = {".txt", ".csv", ".tsv"};
constexpr std::array<std::string_view, 8> columns = {"", "0", "1", "2", "b", "value", "\"", "99999999999999999999"};

// The shortest text of each value, one per line, as write_dataset writes text.
template <class T>
std::string printed(const io::host_array& array) {
  std::string out;
  char number[64];
  for (const T value : array.as<T>()) {
    const auto [end, ec] = std::to_chars(number, number + sizeof number, value);
    require(ec == std::errc(), "to_chars failed");
    out.append(number, end);
    out += '\n';
  }
  return out;
}

template <class T>
bool same_values(const io::host_array& a, const io::host_array& b) {
  const auto x = a.as<T>();
  const auto y = b.as<T>();
  return std::equal(x.begin(), x.end(), y.begin(), y.end(), [](T p, T q) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(p) || std::isnan(q)) return std::isnan(p) && std::isnan(q);
      return p == q && std::signbit(p) == std::signbit(q);
    }
    return p == q;
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const io::dtype type = io::all_dtypes[data[0] % io::all_dtypes.size()];
  const std::string name = "fuzz" + std::string(extensions[(data[1] >> 3) % extensions.size()]);
  const std::string column(columns[data[1] & 7]);
  const std::string_view text(reinterpret_cast<const char*>(data + 2), size - 2);

  io::host_array array;
  try {
    array = io::parse_text(text, name, type, column);
  } catch (const io::io_error& e) {
    scanlab::fuzz::require_one_line_naming(e.what(), name);
    return 0;
  }
  require(array.type() == type && array.shape().size() == 1, "not a 1-D array of the type asked for");
  const auto lines = static_cast<std::int64_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  require(array.size() <= lines, "more values than lines");

  io::visit(type, [&]<class T>() {
    const io::host_array back = io::parse_text(printed<T>(array), "again.txt", type, "");
    require(same_values<T>(array, back), "printed values read back differently");
  });
  return 0;
}
