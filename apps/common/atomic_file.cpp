#include "common/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <random>
#include <system_error>
#include <utility>

namespace scanlab::io {
namespace {

static_assert(sizeof(::off_t) == 8, "file offsets must be 64-bit (multi-GB datasets)");

// Linux moves at most about 2 GiB per read()/write() call; larger transfers loop over chunks.
constexpr std::size_t max_chunk = std::size_t{1} << 30;

std::string errno_text(int error) { return std::generic_category().message(error); }

std::string quoted(const std::filesystem::path& path) { return "\"" + path.string() + "\""; }

// A name no other process or thread will pick: pid + a per-process random seed + a counter,
// mixed (splitmix64) so that names do not look sequential.
std::string random_suffix() {
  static const std::uint64_t seed = [] {
    std::uint64_t s = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    try {
      std::random_device device;
      s ^= (std::uint64_t{device()} << 32) | device();
    } catch (...) {
      // No entropy source: the clock and the counter still make the name unique within this process.
    }
    return s;
  }();
  static std::atomic<std::uint64_t> counter{0};
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (counter.fetch_add(1) + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(z));
  return text;
}

}  // namespace

io_error::io_error(const std::filesystem::path& file, std::string_view what)
    : std::runtime_error(file.string() + ": " + std::string(what)) {}

std::string printable(std::string_view text, std::size_t limit) {
  std::string out;
  for (const char c : text.substr(0, limit)) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (byte < 0x20 || byte == 0x7f) {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      out += escaped;
    } else {
      out += c;
    }
  }
  if (text.size() > limit) out += "...";
  return out;
}

std::string quoted_excerpt(std::string_view text, std::size_t limit) {
  std::string out = "\"";  // built by appending: GCC 12 warns (-Wrestrict) on "\"" + string + "\""
  out += printable(text, limit);
  out += '"';
  return out;
}

std::string out_of_memory_message(const std::filesystem::path& file, const std::exception& cause) {
  return file.string() + ": out of memory while reading it (" + cause.what() + ")";
}

// ---- Standard input and output ----

bool is_standard_stream(const std::filesystem::path& path) { return path.native() == "-"; }

int reserve_standard_output() {
  static const int data_fd = [] {
    std::fflush(stdout);
    const int fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (fd < 0) throw io_error(std::string(standard_output_name), "cannot keep it for data: " + errno_text(errno));
    if (::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
      throw io_error(std::string(standard_output_name), "cannot point it at stderr: " + errno_text(errno));
    }
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    return fd;
  }();
  return data_fd;
}

void claim_standard_input() {
  static std::atomic<bool> claimed{false};
  if (claimed.exchange(true)) {
    throw io_error(std::string(standard_input_name), "already read for another input: only one input can be '-'");
  }
}

std::size_t read_stream(int fd, void* out, std::size_t bytes, const std::filesystem::path& name) {
  auto* p = static_cast<char*>(out);
  std::size_t done = 0;
  while (done < bytes) {
    const ::ssize_t n = ::read(fd, p + done, std::min(bytes - done, max_chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw io_error(name, "read failed: " + errno_text(errno));
    if (n == 0) break;  // end of the stream
    done += static_cast<std::size_t>(n);
  }
  return done;
}

// ---- atomic_file ----

atomic_file::atomic_file(std::filesystem::path target) : target_(std::move(target)) {
  if (is_standard_stream(target_)) {
    static std::atomic<bool> taken{false};
    target_ = std::string(standard_output_name);
    if (taken.exchange(true)) throw io_error(target_, "already written by another output: only one output can be '-'");
    fd_ = reserve_standard_output();
    stream_ = true;
    return;
  }
  const std::filesystem::path name = target_.filename();
  if (name.empty() || name == "." || name == "..") throw io_error(target_, "not a file name");
  const std::filesystem::path dir = target_.has_parent_path() ? target_.parent_path() : std::filesystem::path(".");

  struct stat info {};
  if (::stat(dir.c_str(), &info) != 0) {
    const int error = errno;
    if (error == ENOENT) throw io_error(target_, "cannot write: directory " + quoted(dir) + " does not exist");
    throw io_error(target_, "cannot write: directory " + quoted(dir) + ": " + errno_text(error));
  }
  if (!S_ISDIR(info.st_mode)) throw io_error(target_, "cannot write: " + quoted(dir) + " is not a directory");
  if (::stat(target_.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    throw io_error(target_, "cannot write: it is a directory");
  }

  std::string prefix = ".";
  prefix += name.string();
  prefix += ".tmp." + std::to_string(::getpid()) + ".";
  for (int attempt = 0; attempt < 16; ++attempt) {
    std::filesystem::path temp = dir / (prefix + random_suffix());
    // Read-write, not write-only: mapped_output maps it (MAP_SHARED, PROT_WRITE needs O_RDWR).
    const int fd = ::open(temp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      fd_ = fd;
      temp_ = std::move(temp);
      return;
    }
    const int error = errno;
    if (error == EINTR || error == EEXIST) continue;
    throw io_error(target_, "cannot create a file in directory " + quoted(dir) + ": " + errno_text(error));
  }
  throw io_error(target_, "cannot create a temporary file in directory " + quoted(dir) + ": every name tried exists");
}

atomic_file::atomic_file(atomic_file&& other) noexcept
    : target_(std::move(other.target_)),
      temp_(std::exchange(other.temp_, {})),
      fd_(std::exchange(other.fd_, -1)),
      written_(other.written_),
      stream_(other.stream_) {}

atomic_file& atomic_file::operator=(atomic_file&& other) noexcept {
  if (this != &other) {
    abort();
    target_ = std::move(other.target_);
    temp_ = std::exchange(other.temp_, {});
    fd_ = std::exchange(other.fd_, -1);
    written_ = other.written_;
    stream_ = other.stream_;
  }
  return *this;
}

atomic_file::~atomic_file() { abort(); }

void atomic_file::abort() noexcept {
  if (fd_ >= 0) {
    if (!stream_) ::close(fd_);
    fd_ = -1;
  }
  if (!temp_.empty()) {
    ::unlink(temp_.c_str());
    temp_.clear();
  }
}

void atomic_file::write(const void* data, std::size_t bytes) {
  if (fd_ < 0) throw io_error(target_, "write after the file was committed or abandoned");
  write_fully(data, bytes, std::nullopt);
  written_ += bytes;
}

void atomic_file::write_fully(const void* data, std::size_t bytes, std::optional<std::uint64_t> offset) {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const std::size_t piece = std::min(bytes, max_chunk);
    const ::ssize_t n = offset ? ::pwrite(fd_, p, piece, static_cast<::off_t>(*offset)) : ::write(fd_, p, piece);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : EIO;
      abort();
      throw io_error(target_, "write failed: " + errno_text(error));
    }
    p += n;
    bytes -= static_cast<std::size_t>(n);
    if (offset) *offset += static_cast<std::uint64_t>(n);
  }
}

void atomic_file::write_at(std::uint64_t offset, const void* data, std::size_t bytes) {
  if (fd_ < 0) throw io_error(target_, "write after the file was committed or abandoned");
  if (stream_) throw io_error(target_, "cannot rewrite bytes already sent to a stream");
  if (offset > written_ || bytes > written_ - offset) {
    abort();
    throw io_error(target_, "rewrite past the bytes written (" + std::to_string(offset + bytes) + " > " +
                                std::to_string(written_) + ")");
  }
  write_fully(data, bytes, offset);
}

void atomic_file::commit() {
  if (fd_ < 0) throw io_error(target_, "commit after the file was committed or abandoned");
  if (stream_) {
    fd_ = -1;  // nothing to flush or rename: the bytes went out as they were written
    return;
  }
  if (::fsync(fd_) != 0) {
    const int error = errno;
    abort();
    throw io_error(target_, "flushing to disk failed: " + errno_text(error));
  }
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) {
    const int error = errno;
    abort();
    throw io_error(target_, "closing failed: " + errno_text(error));
  }
  if (::rename(temp_.c_str(), target_.c_str()) != 0) {
    const int error = errno;
    abort();
    throw io_error(target_, "cannot replace the file: " + errno_text(error));
  }
  temp_.clear();
  // Make the rename itself durable. Best effort: some file systems refuse fsync on a directory,
  // and the data is already safe under its final name.
  const std::filesystem::path dir = target_.has_parent_path() ? target_.parent_path() : std::filesystem::path(".");
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

void write_file_atomically(const std::filesystem::path& path, std::string_view contents) {
  atomic_file file(path);
  file.write(contents);
  file.commit();
}

// ---- input_file ----

input_file::input_file(std::filesystem::path path) : path_(std::move(path)) {
  int fd = -1;
  do {
    fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) throw io_error(path_, "cannot open: " + errno_text(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int error = errno;
    ::close(fd);
    throw io_error(path_, "cannot read its size: " + errno_text(error));
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    throw io_error(path_, S_ISDIR(info.st_mode) ? "is a directory, not a file" : "is not a regular file");
  }
  fd_ = fd;
  size_ = static_cast<std::uint64_t>(info.st_size);
}

input_file::~input_file() {
  if (fd_ >= 0) ::close(fd_);
}

std::size_t input_file::read_at(std::uint64_t offset, void* out, std::size_t bytes) {
  auto* p = static_cast<char*>(out);
  std::size_t done = 0;
  while (done < bytes) {
    const ::ssize_t n = ::pread(fd_, p + done, std::min(bytes - done, max_chunk),
                                static_cast<::off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw io_error(path_, "read failed: " + errno_text(errno));
    if (n == 0) break;  // end of file
    done += static_cast<std::size_t>(n);
  }
  return done;
}

std::string input_file::read_all() {
  std::string contents(static_cast<std::size_t>(size_), '\0');
  const std::size_t n = read_at(0, contents.data(), contents.size());
  if (n != contents.size()) {
    throw io_error(path_, "file shrank while being read (" + std::to_string(size_) + " bytes, then " +
                              std::to_string(n) + ")");
  }
  return contents;
}

}  // namespace scanlab::io
