// Datasets on disk in the formats the apps accept, chosen by what a file starts with and by
// its extension:
//   .npy              NumPy (see npy.hpp); the file's own dtype and shape
//   .bin .raw .dat    raw little-endian elements, no header: the dtype must be given
//   .txt .csv .tsv    text, one value per line, or one column of a delimited table
// Extensions are matched without regard to case. Every failure is an io_error whose one-line
// message names the file (and for text, the line); so is running out of memory. What a reader
// allocates is bounded by the file's size (text: one element per line at most).
//
// Reading: a file that starts with the .npy magic "\x93NUMPY" is read as .npy whatever its name
// (x.bin, x.dat, x.txt, no extension); so is a file named .npy, and one that is not a .npy
// is an error that shows its first bytes and names the format they show where file_format.hpp
// knows it ("x.npy: not a .npy file (bad magic): it starts with "\x1f\x8b...": gzip-compressed
// data ..."). Otherwise the extension decides: raw binary (any bytes), or text (a text file that
// starts with another format's signature, such as a Matrix Market matrix or gzip, is an error
// naming it). Any other extension is an error.
//
// Standard input and output: the path "-" (atomic_file.hpp) reads standard input, once per
// process: a .npy stream (by its magic; read straight into the array) or text (bytes that
// look_like_text: read whole, then parsed as a .txt file is, the delimiter detected); anything
// else is an error showing its first bytes. Writing "-" writes a .npy to standard output.
//
// Text files:
//   - Blank lines and lines whose first non-blank character is '#' are skipped.
//   - Delimiter: ',' for .csv, tab for .tsv; otherwise (.txt) ',' if the first data line
//     holds a comma, else tab if it holds a tab, else none: the whole line is the value.
//   - Column: empty = the first; all digits = a 0-based index; anything else = a name,
//     matched against the header row. Fields may be quoted with "..." ("" inside is a quote).
//   - Header row: the first data line is a header when a column name was asked for, or when
//     its chosen field is not a number (std::from_chars as a double; "nan" and "inf" count
//     as numbers). A header row is skipped.
//   - Values are parsed with std::from_chars straight into the requested type (floats round
//     correctly, a leading '+' is accepted); "nan", "inf" and "-inf" are accepted for floats;
//     a value that is not a number, an integer with a fraction, or one out of the type's
//     range is an error naming the line: `values.csv:17: "abc" is not a number`.
//     Floats too small for the type round to zero or a subnormal; too large is an error.
//   - "\r\n" line ends are accepted.
//   - float16 and bfloat16 (scanlab-linrec's types) are read as float64 and rounded once to
//     the type (to nearest even; beyond its largest finite value is an error); they are
//     written as their float32 value (exact). Complex text is refused both ways: use .npy.
#pragma once

#include <filesystem>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/array.hpp"
#include "common/atomic_file.hpp"
#include "common/mapped_input.hpp"
#include "common/npy.hpp"

namespace scanlab::io {

struct read_options {
  // (Default member initializers let callers write {.type = t} without -Wmissing-field-initializers.)
  std::optional<dtype> type = std::nullopt;  // needed for raw files; for text: the element type
                                             // (default float64); ignored for .npy, which names its own
  std::string column = {};  // text: a column name or a 0-based index; empty = the first column
};

// A 1-D array of the file's bytes; the file size must be a multiple of the element size.
host_array read_raw(const std::filesystem::path& path, dtype type);

// A 1-D array of one column of a text file (rules above).
host_array read_text(const std::filesystem::path& path, dtype type, const std::string& column);

// A 1-D array of one column of text already in memory, read as read_text() reads a file;
// `name` stands for the file in messages and its extension picks the delimiter.
host_array parse_text(std::string_view text, const std::filesystem::path& name, dtype type, const std::string& column);

// Dispatches on the magic and the extension (see the top of this file); "-" is standard input.
// A raw file without options.type is an error ("raw binary needs --dtype"); so is an extension
// not listed above.
host_array read_dataset(const std::filesystem::path& path, const read_options& options = {});

// The same dispatch, for inputs that may not fit in memory: a .npy or raw file is memory-mapped
// (mapped_input.hpp: the same checks and messages, nothing read yet), anything else (text,
// standard input, a .npy whose data offset would misalign its elements) is read as
// read_dataset reads it.
input_array open_dataset(const std::filesystem::path& path, const read_options& options = {});

// Writes atomically, by extension: .npy or "-" (npy; "-" to standard output, as it goes),
// .bin/.raw/.dat (raw bytes), .txt/.csv/.tsv
// (one value per line in C order, so a 2-D array is written flattened; floats in the
// shortest form that reads back to the same value, "nan", "inf", "-inf"). Others: error.
void write_dataset(const std::filesystem::path& path, const host_array& array);

// An output written as it is computed (the apps' streaming path): write() its element bytes in
// C order in pieces, then commit(). By extension, as write_dataset: .npy or "-" (the header
// first; "-" to standard output as it goes) or raw binary (.bin, .raw, .dat); atomically (a
// temporary file beside the target, renamed over it by commit(); destroyed without commit(),
// or after any failed write such as a full disk, the temporary is removed and an existing
// file under the name is left as it was). Text outputs are refused (io_error): write them
// from memory with write_dataset.
//
// length_known = false: the count is known only at the end (compaction). `shape` then holds
// the most that may be written, and commit_with_length() gives the first extent (the .npy
// header is rewritten in place); standard output is refused up front, since its header has
// gone out before the count is known.
class stream_writer {
 public:
  stream_writer(const std::filesystem::path& path, dtype type, std::vector<std::int64_t> shape,
                bool length_known = true);

  void write(const void* data, std::size_t bytes);
  // length_known: exactly the shape's bytes must have been written.
  void commit();
  // !length_known: the first extent written (the other extents as given).
  void commit_with_length(std::int64_t first_extent);

 private:
  std::optional<npy_writer> npy_;
  std::optional<atomic_file> raw_;
  std::uint64_t written_ = 0;
  std::uint64_t row_bytes_ = 0;
  std::uint64_t most_bytes_ = 0;
  std::filesystem::path path_;
};

// An output array written in place through a shared mapping of its file: for a result that
// one call produces whole and that may be larger than memory (scanlab-sort's streaming path:
// the external sort writes its output array directly).
//
// The file is an atomic_file's temporary beside the target: the .npy header (numpy.save's,
// as write_dataset writes it) or none (raw), then the data, preallocated with posix_fallocate
// before anything is mapped, so that a full disk (ENOSPC, or EFBIG past a file size limit) is
// one io_error here, "<file>: write failed: <reason> (reserving <bytes> for the output)", and
// never a SIGBUS when a page of the mapping is written later. The file is then mapped
// read-write (MAP_SHARED); commit() flushes the mapping (msync), unmaps it and commits the
// file (fsync, close, rename over the target). Destroyed without a successful commit(), or
// after any failure, the mapping is dropped and the temporary removed: nothing appears under
// the target's name and an existing file there is left as it was.
//
// By extension, 1-D: .npy or raw binary (.bin, .raw, .dat). Standard output and text are
// refused (io_error): a mapping needs a file, and text is not the array's bytes.
class mapped_output {
 public:
  mapped_output(const std::filesystem::path& path, dtype type, std::int64_t n);
  mapped_output(const mapped_output&) = delete;
  mapped_output& operator=(const mapped_output&) = delete;
  ~mapped_output();

  // The n elements (zeros until written), writable until commit(); null for n = 0.
  [[nodiscard]] std::byte* data() const noexcept { return data_; }
  [[nodiscard]] std::int64_t size() const noexcept { return n_; }
  [[nodiscard]] dtype type() const noexcept { return type_; }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

  // Flushes, unmaps, renames over the target. io_error (the temporary removed) on failure.
  void commit();

 private:
  void unmap() noexcept;

  std::filesystem::path path_;
  std::optional<atomic_file> file_;
  dtype type_;
  std::int64_t n_;
  void* base_ = nullptr;  // the mapping: the whole file, header included
  std::size_t map_bytes_ = 0;
  std::byte* data_ = nullptr;
};

// Element-wise static_cast to `type`, same shape. Integer narrowing wraps as static_cast
// does. An io_error naming the element (and `source`, the file the array came from, where
// one is given) where the value has no counterpart: a float that is NaN or outside the range
// of an integer target (where static_cast would be undefined), or a finite float64 beyond
// the largest float32 (about 3.4e38; it would become infinity). NaN and infinities convert
// to themselves between float types; values too small for float32 round to zero or a
// subnormal, as when text is read. The linrec-only types (array.hpp): float16 and bfloat16
// convert to and from every real type through float64 (one rounding to the 16-bit type),
// real types to complex with a zero imaginary part, complex64 and complex128 to each other;
// complex to real is an error.
host_array convert(const host_array& array, dtype type, const std::filesystem::path& source = {});

}  // namespace scanlab::io
