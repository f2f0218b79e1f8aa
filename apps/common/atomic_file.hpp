// The file layer under the dataset I/O: the error type every reader and writer throws,
// atomic output (write a temporary beside the target, rename over it on commit), and
// a checked reader of whole files and file ranges. POSIX only; 64-bit offsets throughout.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace scanlab::io {

// Every failure of the dataset I/O. The message is one line: "<file>: <what is wrong>",
// e.g. "data.npy: truncated data: shape (1000,) of <f4 needs 4000 bytes, file has 3996".
class io_error : public std::runtime_error {
 public:
  explicit io_error(const std::string& message) : std::runtime_error(message) {}
  io_error(const std::filesystem::path& file, std::string_view what);
};

// Text from a file made fit for a one-line message: cut to `limit` bytes ("..." after) and
// control characters written as \n, \r, \t or \xNN (a header or a field may hold any byte).
std::string printable(std::string_view text, std::size_t limit = 60);
// The same in double quotes: "abc", "a\nb", "0123456789...".
std::string quoted_excerpt(std::string_view text, std::size_t limit = 60);

// The one line said when memory runs out while reading `file`:
// "<file>: out of memory while reading it (<what the allocator said>)".
std::string out_of_memory_message(const std::filesystem::path& file, const std::exception& cause);

// Runs `read`, a reader of `file`, and turns running out of memory inside it (std::bad_alloc,
// or std::length_error from a container asked for more than it can hold) into an Error
// carrying out_of_memory_message(): one line naming the file, like every other failure to
// read it. Readers bound what they allocate by the file's size; this is for the files that
// are simply larger than the memory there is.
template <class Error = io_error, class Read>
decltype(auto) guard_allocation(const std::filesystem::path& file, Read&& read) {
  try {
    return std::forward<Read>(read)();
  } catch (const std::bad_alloc& e) {
    throw Error(out_of_memory_message(file, e));
  } catch (const std::length_error& e) {
    throw Error(out_of_memory_message(file, e));
  }
}

// ---- Standard input and output ----
// The path "-" names standard input where a dataset is read (-i -) and standard output where
// one is written (-o -). Messages name them by these words:
inline constexpr std::string_view standard_input_name = "standard input";
inline constexpr std::string_view standard_output_name = "standard output";

[[nodiscard]] bool is_standard_stream(const std::filesystem::path& path);

// Sets standard output apart for data. The first call keeps the stream the process was given
// (a duplicate of descriptor 1, which the output "-" writes to) and points descriptor 1 at
// standard error, line-buffered: whatever is printed from then on (std::cout, printf: results,
// tables) reaches the terminal on stderr and the data stream stays a valid file. Call it
// before anything is printed to stdout. Later calls return the same descriptor.
int reserve_standard_output();

// Standard input is a stream: it can be read once. The first call claims it, a later one
// throws io_error ("standard input: already read for another input: only one input can be '-'"),
// before anything is read.
void claim_standard_input();

// Reads from descriptor `fd` until `bytes` have come or the stream ends, looping over short
// reads; returns the count. io_error naming `name` on a read error.
std::size_t read_stream(int fd, void* out, std::size_t bytes, const std::filesystem::path& name);

// Output that appears whole or not at all. The constructor creates
// `<dir>/.<name>.tmp.<pid>.<random>` beside the target; write() appends to it; commit()
// flushes it to disk (fsync), closes it and renames it over the target. Destroyed without
// a successful commit(), the temporary file is removed and an existing target is untouched.
// Any failed write or commit aborts the file at once (the temporary is removed), so a
// caller that catches the error leaves nothing behind either.
// The target "-" is standard output (reserve_standard_output): written as it goes, once per
// process (a second io_error: only one output can be '-'), without a temporary file; commit()
// then only stops writing, and a reader of a stream abandoned half-way sees it truncated.
class atomic_file {
 public:
  // io_error naming the target if its directory does not exist or is not writable.
  explicit atomic_file(std::filesystem::path target);
  atomic_file(atomic_file&& other) noexcept;
  atomic_file& operator=(atomic_file&& other) noexcept;
  atomic_file(const atomic_file&) = delete;
  atomic_file& operator=(const atomic_file&) = delete;
  ~atomic_file();

  void write(const void* data, std::size_t bytes);
  void write(std::string_view text) { write(text.data(), text.size()); }
  // Overwrites bytes already written, at `offset` from the start (pwrite; the append position
  // is unchanged): a header rewritten once the length is known (npy_writer::commit_with_length).
  // io_error for standard output (a stream cannot be rewritten) or past what was written.
  void write_at(std::uint64_t offset, const void* data, std::size_t bytes);
  void commit();
  // Removes the temporary file now; the object is then closed (commit() would throw).
  void abort() noexcept;

  [[nodiscard]] const std::filesystem::path& target() const noexcept { return target_; }
  [[nodiscard]] const std::filesystem::path& temp_path() const noexcept { return temp_; }
  [[nodiscard]] std::uint64_t bytes_written() const noexcept { return written_; }
  [[nodiscard]] bool is_open() const noexcept { return fd_ >= 0; }
  // The temporary file's descriptor (-1 once closed), for writers that preallocate and map it
  // (mapped_output, dataset.hpp); owned by this object.
  [[nodiscard]] int native_handle() const noexcept { return fd_; }

 private:
  // write() or, at `offset`, pwrite() until all is written; a failure aborts the file and throws.
  void write_fully(const void* data, std::size_t bytes, std::optional<std::uint64_t> offset);

  std::filesystem::path target_;
  std::filesystem::path temp_;
  int fd_ = -1;
  std::uint64_t written_ = 0;
  bool stream_ = false;  // standard output: fd_ is not ours to close
};

// Writes `contents` to `path` through an atomic_file (for JSON reports and the like).
void write_file_atomically(const std::filesystem::path& path, std::string_view contents);

// A regular file opened for reading. The constructor throws io_error naming the path if it
// is missing, unreadable or not a regular file (a directory, say).
class input_file {
 public:
  explicit input_file(std::filesystem::path path);
  input_file(const input_file&) = delete;
  input_file& operator=(const input_file&) = delete;
  ~input_file();

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  // The size when opened.
  [[nodiscard]] std::uint64_t size() const noexcept { return size_; }
  // The open descriptor (for mmap: mapped_input.hpp); owned by this object.
  [[nodiscard]] int native_handle() const noexcept { return fd_; }
  // Reads up to `bytes` at `offset` into `out`, looping over short reads; returns the count
  // read, less than `bytes` only at the end of the file. io_error on a read error.
  std::size_t read_at(std::uint64_t offset, void* out, std::size_t bytes);
  // The whole file as a string; io_error if it changed size under us.
  std::string read_all();

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

}  // namespace scanlab::io
