// Fuzzing harness of the Matrix Market reader of scanlab-cg (apps/cg/mtx.hpp): the bytes are
// a whole file. The reader must refuse with one line naming the file and the line, or return
// a well-formed CSR matrix: rows + 1 ascending offsets, columns ascending and unique within
// each row and inside the matrix, finite values, and no more rows than the file has bytes
// (what bounds its memory).
#include "cg/mtx.hpp"
#include "fuzz_check.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

using scanlab::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  scanlab::sparse::csr_matrix m;
  try {
    m = scanlab::mtx::parse_mtx(text, "fuzz.mtx");
  } catch (const scanlab::mtx::mtx_error& e) {
    scanlab::fuzz::require_one_line_naming(e.what(), "fuzz.mtx:");
    return 0;
  }
  require(m.rows >= 0 && m.cols >= 0, "negative extents");
  require(static_cast<std::uint64_t>(m.rows) <= size, "more rows than the file has bytes");
  require(m.row_ptr.size() == static_cast<std::size_t>(m.rows) + 1, "not rows + 1 row offsets");
  require(m.values.size() == m.col.size(), "values and columns differ in number");
  require(m.row_ptr.front() == 0 && m.row_ptr.back() == m.nnz(), "the row offsets do not span the entries");
  for (std::int64_t r = 0; r < m.rows; ++r) {
    require(m.row_ptr[r] <= m.row_ptr[r + 1], "row offsets descend");
    for (std::int64_t k = m.row_ptr[r]; k < m.row_ptr[r + 1]; ++k) {
      require(m.col[k] >= 0 && m.col[k] < m.cols, "a column outside the matrix");
      require(k == m.row_ptr[r] || m.col[k - 1] < m.col[k], "columns of a row not ascending and unique");
      require(std::isfinite(m.values[k]), "a value that is not finite");
    }
  }
  return 0;
}
