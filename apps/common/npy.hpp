// NumPy .npy files: reading (format versions 1.0, 2.0 and 3.0) and writing (1.0, or 2.0 when
// the header does not fit), for the dtypes of common/array.hpp in 1-D to 3-D shapes.
//
// What is read: little-endian ('<'), native ('=', this is a little-endian host) or
// order-free ('|', and any order for 1-byte types) descr strings of kind u, i, f or c and the
// sizes in array.hpp (<f2 float16, <c8 complex64, <c16 complex128: scanlab-linrec's types);
// bfloat16 as the descr "bfloat16", or as a 2-byte void ('<V2', '|V2': what ml_dtypes and
// JAX np.save a bfloat16 array as) only where the caller asks for bfloat16 (`requested`,
// the user's --dtype): otherwise that is an error saying so. bfloat16 is written as '<V2'; C order only; shapes of 1 to 3 dimensions (array.hpp's max_dims). A 0-d shape `()` is read
// as a 1-D array of one element. Header keys besides descr, fortran_order and shape are
// ignored; headers longer than 10000 bytes are refused (NumPy's own default limit).
// The data must be exactly what the shape needs: short files and trailing bytes are errors.
//
// A file is read as .npy by what it starts with, "\x93NUMPY" (file_format.hpp), whatever its
// name: dataset.hpp says how the readers choose.
//
// What is written matches numpy.save byte for byte: the header dict with sorted keys and the
// spare spaces NumPy leaves for growing the first axis, padded with spaces and a '\n' so
// that the data starts at a multiple of 64 bytes.
//
// Every failure is an io_error whose one-line message names the file. A shape with a zero
// extent holds no data whatever its other extent (up to 2^63 - 1): nothing is allocated for it,
// but a caller that sizes anything by one extent alone must bound it itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/array.hpp"
#include "common/atomic_file.hpp"

namespace scanlab::io {

// What a .npy header says, and where its data starts.
struct npy_header {
  dtype type = dtype::u8;
  std::vector<std::int64_t> shape;  // 1 or 2 extents (a 0-d file reads as {1})
  int version_major = 1;            // 1, 2 or 3
  std::uint64_t data_offset = 0;    // bytes before the data
  std::uint64_t data_bytes = 0;     // what the shape needs
};

// The largest header read, in bytes (NumPy's default max_header_size).
inline constexpr std::size_t npy_max_header_bytes = 10000;

// Reads and checks the header only (also that the file size matches the shape).
// `requested` (here and below): the dtype the user named (--dtype), which only decides
// whether a 2-byte void descr reads as bfloat16; a file's own numeric descr always wins.
npy_header read_npy_header(const std::filesystem::path& path, std::optional<dtype> requested = std::nullopt);

// Reads a whole file: one read of the data into the array's buffer. What is allocated is
// what the file holds (the header is checked first); running out of memory is an io_error
// naming the file.
host_array read_npy(const std::filesystem::path& path, std::optional<dtype> requested = std::nullopt);

// The same for a whole file's bytes already in memory; `name` stands for the file in error
// messages (the fuzzing harness, tests/fuzz, reads through this).
host_array parse_npy(std::string_view bytes, const std::filesystem::path& name,
                     std::optional<dtype> requested = std::nullopt);

// The same for a stream whose size is not known ahead (a pipe: standard input): `head` holds
// what was read from it already (any number of bytes, from the first), the rest is read from
// descriptor `fd` to the end of the stream. The same checks and messages as read_npy; the
// data are read straight into the array (a stream is never held twice).
host_array read_npy_stream(int fd, std::string head, const std::filesystem::path& name,
                           std::optional<dtype> requested = std::nullopt);

// Writes atomically (a temporary file renamed over `path`): header, then the data in one go.
void write_npy(const std::filesystem::path& path, const host_array& array);

// The header numpy.save writes for this dtype and shape: magic, version, length and dict,
// padded to a multiple of 64 bytes. std::invalid_argument for a shape that is not 1-D or 2-D
// or has a negative extent.
std::string make_npy_header(dtype type, const std::vector<std::int64_t>& shape);

// Streaming writer for outputs too large to hold twice: write() the element bytes in C order
// in as many pieces as convenient, then commit().
class npy_writer {
 public:
  // Creates the temporary file beside `path` and writes the header. io_error if the directory
  // does not exist or is not writable, or the shape is not 1-D or 2-D.
  npy_writer(std::filesystem::path path, dtype type, std::vector<std::int64_t> shape);
  npy_writer(npy_writer&&) noexcept = default;
  npy_writer& operator=(npy_writer&&) noexcept = default;
  npy_writer(const npy_writer&) = delete;
  npy_writer& operator=(const npy_writer&) = delete;
  // Without a successful commit(): removes the temporary file; an existing file at `path`
  // is left as it was.
  ~npy_writer() = default;

  // Appends element bytes. io_error (and the temporary file removed) if this would write
  // more than the shape holds, or the write fails.
  void write(const void* data, std::size_t bytes);
  // io_error (and the temporary file removed) unless exactly the shape's bytes were written;
  // otherwise flushes, closes and renames the file over `path`.
  void commit();
  // For an output whose length is known only at the end (compaction): the writer was made
  // with the most rows it may get; the header is rewritten with `first_extent` as the shape's
  // first extent (in place: numpy.save's header leaves room for the first axis to grow to 21
  // digits, so its length does not change), then as commit(). io_error (temporary removed)
  // unless exactly that shape's bytes were written, or for standard output (a stream's header
  // has gone out already).
  void commit_with_length(std::int64_t first_extent);

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return file_.target(); }
  [[nodiscard]] std::uint64_t data_bytes() const noexcept { return data_bytes_; }
  [[nodiscard]] std::uint64_t data_written() const noexcept { return data_written_; }

 private:
  atomic_file file_;
  dtype type_;
  std::vector<std::int64_t> shape_;
  std::uint64_t data_bytes_ = 0;
  std::uint64_t data_written_ = 0;
};

}  // namespace scanlab::io
