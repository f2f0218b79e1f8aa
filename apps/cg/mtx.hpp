// Matrix Market (.mtx) files: the sparse "coordinate" format.
//
// What is read:
//   %%MatrixMarket matrix coordinate <field> <symmetry>
//   % comment lines (and blank lines) anywhere before the entries
//   <rows> <cols> <entries>
//   <i> <j> [<value>]          one line per entry, 1-based indices
// with field real, double (a synonym some writers use), integer or pattern (no value: 1),
// and symmetry general or symmetric. The banner's words are matched without regard to
// case. A symmetric file stores one triangle: every off-diagonal entry (i, j) also gives
// (j, i) (either triangle is accepted); it must be square. Duplicate entries are summed.
// Blank lines and '%' lines may also appear between entries.
//
// Refused, each with one line naming the file and the line: a missing or malformed banner,
// object other than "matrix", format "array" (dense), field complex, symmetry
// skew-symmetric or hermitian, a size line that is not three non-negative integers (or
// exceeds 2^31 - 1 rows or columns), an entry with the wrong number of fields, an index
// out of range, a value that is not a finite number (an integer field's value must be an
// integer), duplicates that add up beyond the range of a double (the line named is the
// last), fewer entries than the size line says (a truncated file) or more, and more rows
// than the file has bytes (CSR stores an offset per row, empty or not: this bounds what a
// file can make the reader allocate by its size). Running out of memory while reading is an
// mtx_error naming the file as well.
#pragma once

#include "cg/sparse.hpp"

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

namespace scanlab::mtx {

// A file that cannot be read or is not a supported Matrix Market file: "file:line: reason".
class mtx_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Reads and checks a whole file (host memory only).
sparse::csr_matrix read_mtx(const std::filesystem::path& path);

// The same for text already in memory; `name` is used in error messages.
sparse::csr_matrix parse_mtx(std::string_view text, const std::string& name);

}  // namespace scanlab::mtx
