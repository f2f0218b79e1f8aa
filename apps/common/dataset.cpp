#include "common/dataset.hpp"

#include "common/file_format.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <span>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

namespace scanlab::io {
namespace {

std::string lower_extension(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

constexpr std::string_view supported_extensions = ".npy, .bin, .raw, .dat, .txt, .csv, .tsv";

bool is_raw_extension(const std::string& ext) { return ext == ".bin" || ext == ".raw" || ext == ".dat"; }
bool is_text_extension(const std::string& ext) { return ext == ".txt" || ext == ".csv" || ext == ".tsv"; }

// `head`: the file's first bytes where it was read (an output has none); a format they show
// is named.
[[noreturn]] void unsupported_extension(const std::filesystem::path& path, const std::string& ext,
                                        std::string_view head = {}) {
  std::string what = (ext.empty() ? std::string("no file extension") : "unsupported file extension \"" + ext + "\"") +
                     " (supported: " + std::string(supported_extensions) + ")";
  if (sniff(head) != signature::none) what += "; " + describe_start(head);
  throw io_error(path, what);
}

// What sniff() and the messages look at: a file's first bytes.
constexpr std::size_t head_bytes = 64;

std::string read_file_head(const std::filesystem::path& path) {
  input_file file(path);
  std::string head(static_cast<std::size_t>(std::min<std::uint64_t>(file.size(), head_bytes)), '\0');
  head.resize(file.read_at(0, head.data(), head.size()));
  return head;
}

// Whether a stream that starts with `head` is (or was meant to be) a .npy file: the magic,
// or a start of it cut short.
bool starts_as_npy(std::string_view head) {
  return !head.empty() && npy_magic.starts_with(head.substr(0, npy_magic.size()));
}

// Standard input (or any stream of unknown size): .npy by its magic, else text.
host_array read_stream_dataset(int fd, const std::filesystem::path& name, const read_options& options) {
  return guard_allocation(name, [&] {
    std::string head(head_bytes, '\0');
    head.resize(read_stream(fd, head.data(), head.size(), name));
    if (starts_as_npy(head)) return read_npy_stream(fd, std::move(head), name, options.type);
    if (sniff(head) != signature::none || !looks_like_text(head)) {
      throw io_error(name, "neither a .npy file nor text: " + describe_start(head) +
                               " (raw binary needs a file named .bin, .raw or .dat, and --dtype)");
    }
    std::string text = std::move(head);
    char buffer[1 << 16];
    while (const std::size_t n = read_stream(fd, buffer, sizeof buffer, name)) text.append(buffer, n);
    return parse_text(text, name, options.type.value_or(dtype::f64), options.column);
  });
}

// ---- Text parsing ----

bool is_blank(char c, char delimiter) { return (c == ' ' || c == '\t' || c == '\r') && c != delimiter; }

std::string_view trim(std::string_view s, char delimiter = 0) {
  while (!s.empty() && is_blank(s.front(), delimiter)) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back(), delimiter)) s.remove_suffix(1);
  return s;
}

// A field with its surrounding quotes removed (a doubled quote inside stays doubled: numbers
// never hold one, and header names are unescaped by unquote()).
std::string_view strip_quotes(std::string_view field) {
  if (field.size() >= 2 && field.front() == '"' && field.back() == '"') return field.substr(1, field.size() - 2);
  return field;
}

std::string unquote(std::string_view field) {
  if (field.size() < 2 || field.front() != '"' || field.back() != '"') return std::string(field);
  std::string out;
  for (std::size_t i = 1; i + 1 < field.size(); ++i) {
    out += field[i];
    if (field[i] == '"' && field[i + 1] == '"') ++i;
  }
  return out;
}

// The fields of a line, trimmed; "..." quotes protect delimiters. delimiter 0: the line is one field.
class field_splitter {
 public:
  field_splitter(std::string_view line, char delimiter) : line_(line), delimiter_(delimiter) {}

  // The next field, or false after the last one.
  bool next(std::string_view& field) {
    if (done_) return false;
    if (delimiter_ == 0) {
      done_ = true;
      field = trim(line_);
      return true;
    }
    std::size_t i = pos_;
    while (i < line_.size() && is_blank(line_[i], delimiter_)) ++i;
    if (i < line_.size() && line_[i] == '"') {
      for (++i; i < line_.size(); ++i) {
        if (line_[i] == '"') {
          if (i + 1 < line_.size() && line_[i + 1] == '"') {
            ++i;
          } else {
            ++i;
            break;
          }
        }
      }
    }
    const std::size_t end = std::min(line_.find(delimiter_, i), line_.size());
    field = trim(line_.substr(pos_, end - pos_), delimiter_);
    if (end == line_.size()) {
      done_ = true;
    } else {
      pos_ = end + 1;
    }
    return true;
  }

 private:
  std::string_view line_;
  char delimiter_;
  std::size_t pos_ = 0;
  bool done_ = false;
};

std::vector<std::string_view> split_fields(std::string_view line, char delimiter) {
  std::vector<std::string_view> fields;
  field_splitter splitter(line, delimiter);
  std::string_view field;
  while (splitter.next(field)) fields.push_back(field);
  return fields;
}

// Field `index` of the line; false if the line has fewer fields.
bool field_at(std::string_view line, char delimiter, std::size_t index, std::string_view& field) {
  field_splitter splitter(line, delimiter);
  for (std::size_t i = 0; i <= index; ++i) {
    if (!splitter.next(field)) return false;
  }
  return true;
}

// Offending text for a message: quoted, shortened if long, control characters escaped.
std::string shown(std::string_view text) { return quoted_excerpt(text, 60); }

enum class parse_status { ok, not_number, not_integer, out_of_range };

// from_chars rejects a leading '+', which text files do contain.
std::string_view drop_plus(std::string_view text) {
  if (text.size() >= 2 && text[0] == '+' && text[1] != '-' && text[1] != '+') text.remove_prefix(1);
  return text;
}

bool parses_as_double(std::string_view text) {
  text = drop_plus(text);
  double value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ptr == text.data() + text.size() && !text.empty() && (ec == std::errc() || ec == std::errc::result_out_of_range);
}

template <class T>
parse_status parse_number(std::string_view text, T& out) {
  const std::string_view digits = drop_plus(text);
  const char* first = digits.data();
  const char* last = digits.data() + digits.size();
  if (digits.empty()) return parse_status::not_number;
  const auto [ptr, ec] = std::from_chars(first, last, out);
  if (ptr == last && ec == std::errc()) return parse_status::ok;
  if constexpr (std::is_integral_v<T>) {
    if (ptr == last && ec == std::errc::result_out_of_range) return parse_status::out_of_range;
    if (std::is_unsigned_v<T> && digits[0] == '-') {
      // "-5" for an unsigned type: a number, out of range ("-0" is zero).
      std::uint64_t magnitude = 0;
      const auto [p, e] = std::from_chars(first + 1, last, magnitude);
      if (p == last && digits.size() > 1 && (e == std::errc() || e == std::errc::result_out_of_range)) {
        if (e == std::errc() && magnitude == 0) {
          out = 0;
          return parse_status::ok;
        }
        return parse_status::out_of_range;
      }
    }
    return parses_as_double(text) ? parse_status::not_integer : parse_status::not_number;
  } else {
    if (ptr != last) return parse_status::not_number;
    // result_out_of_range: too large (an error) or too small (rounds to zero or a subnormal,
    // as the nearest value of the type; strtold tells which).
    const std::string copy(digits);
    errno = 0;
    const long double wide = std::strtold(copy.c_str(), nullptr);
    if (std::isinf(wide) || std::fabs(wide) > static_cast<long double>(std::numeric_limits<T>::max())) {
      return parse_status::out_of_range;
    }
    out = static_cast<T>(wide);
    return parse_status::ok;
  }
}

// What the caller asked for as a column.
struct column_choice {
  bool by_name = false;
  std::string name;
  std::size_t index = 0;
};

column_choice parse_column(const std::filesystem::path& path, const std::string& column) {
  column_choice choice;
  if (column.empty()) return choice;
  if (std::all_of(column.begin(), column.end(), [](unsigned char c) { return std::isdigit(c) != 0; })) {
    const auto [ptr, ec] = std::from_chars(column.data(), column.data() + column.size(), choice.index);
    if (ec != std::errc()) throw io_error(path, "column index " + column + " is too large");
    return choice;
  }
  choice.by_name = true;
  choice.name = column;
  return choice;
}

// Lines of a text, numbered from 1, without their "\n" or "\r\n".
class line_reader {
 public:
  explicit line_reader(std::string_view text) : text_(text) {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") text_.remove_prefix(3);  // a UTF-8 byte order mark
  }

  // The next line that is neither blank nor a '#' comment; false at the end.
  bool next_data_line(std::string_view& line, std::size_t& number) {
    while (pos_ < text_.size()) {
      const std::size_t end = std::min(text_.find('\n', pos_), text_.size());
      line = text_.substr(pos_, end - pos_);
      pos_ = end + 1;
      number = ++line_number_;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      const std::string_view content = trim(line);
      if (content.empty() || content.front() == '#') continue;
      return true;
    }
    return false;
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  std::size_t line_number_ = 0;
};

std::string line_prefix(const std::filesystem::path& path, std::size_t line) {
  return path.string() + ":" + std::to_string(line) + ": ";
}

[[noreturn]] void beyond_fields(const std::filesystem::path& path, std::size_t number, std::string_view line,
                                char delimiter, std::size_t index) {
  const std::size_t count = split_fields(line, delimiter).size();
  throw io_error(line_prefix(path, number) + "column " + std::to_string(index) + " is beyond the " +
                 std::to_string(count) + (count == 1 ? " field" : " fields") + " of this line: " + shown(line));
}

template <class T>
host_array parse_text_as(const std::filesystem::path& path, dtype type, std::string_view text, char delimiter,
                         const column_choice& column) {
  line_reader lines(text);
  std::string_view line;
  std::size_t number = 0;
  std::vector<T> values;

  if (!lines.next_data_line(line, number)) {
    if (column.by_name) throw io_error(path, "no header row to find column \"" + column.name + "\" in: no data lines");
    return host_array(type, {0});
  }
  // Detect the delimiter of a .txt file from its first data line.
  if (delimiter == '?') delimiter = line.find(',') != std::string_view::npos    ? ','
                                    : line.find('\t') != std::string_view::npos ? '\t'
                                                                                : char{0};
  std::size_t index = column.index;
  bool first_is_data = true;
  if (column.by_name) {
    const std::vector<std::string_view> names = split_fields(line, delimiter);
    std::size_t found = names.size();
    for (std::size_t i = 0; i < names.size() && found == names.size(); ++i) {
      if (unquote(names[i]) == column.name) found = i;
    }
    if (found == names.size()) {
      std::string list;
      for (std::string_view n : names) list += (list.empty() ? "" : ", ") + shown(unquote(n));
      throw io_error(line_prefix(path, number) + "no column named " + shown(column.name) + " in the header row (" +
                     list + ")");
    }
    index = found;
    first_is_data = false;
  } else {
    std::string_view field;
    if (!field_at(line, delimiter, index, field)) beyond_fields(path, number, line, delimiter, index);
    first_is_data = parses_as_double(strip_quotes(field));
  }

  do {
    if (!first_is_data) {
      first_is_data = true;
      continue;
    }
    std::string_view field;
    if (!field_at(line, delimiter, index, field)) beyond_fields(path, number, line, delimiter, index);
    field = strip_quotes(field);
    if (field.empty()) {
      throw io_error(line_prefix(path, number) + "empty value in column " + std::to_string(index));
    }
    T value{};
    switch (parse_number(field, value)) {
      case parse_status::ok: break;
      case parse_status::not_number: throw io_error(line_prefix(path, number) + shown(field) + " is not a number");
      case parse_status::not_integer:
        throw io_error(line_prefix(path, number) + shown(field) + " is not an integer (reading " +
                       std::string(name(type)) + ")");
      case parse_status::out_of_range:
        throw io_error(line_prefix(path, number) + shown(field) + " is out of range for " + std::string(name(type)));
    }
    values.push_back(value);
  } while (lines.next_data_line(line, number));

  host_array array(type, {static_cast<std::int64_t>(values.size())});
  if (!values.empty()) std::memcpy(array.data(), values.data(), array.bytes());
  return array;
}

// ---- Text writing ----

template <class T>
void write_text(atomic_file& file, const host_array& array) {
  constexpr std::size_t flush_at = std::size_t{1} << 20;
  std::string buffer;
  buffer.reserve(flush_at + 64);
  char number[64];
  for (const T value : array.template as<T>()) {
    const auto [end, ec] = std::to_chars(number, number + sizeof number, value);
    if (ec != std::errc()) throw std::logic_error("to_chars: buffer too small");
    buffer.append(number, end);
    buffer += '\n';
    if (buffer.size() >= flush_at) {
      file.write(buffer);
      buffer.clear();
    }
  }
  file.write(buffer);
}

}  // namespace

host_array read_raw(const std::filesystem::path& path, dtype type) {
  return guard_allocation(path, [&] {
    input_file file(path);
    const std::size_t element = size_of(type);
    if (file.size() % element != 0) {
      throw io_error(path, "raw binary of " + std::to_string(file.size()) + " bytes is not a whole number of " +
                               std::string(name(type)) + " elements (" + std::to_string(element) + " bytes each)");
    }
    host_array array(type, {static_cast<std::int64_t>(file.size() / element)});
    const std::size_t got = file.read_at(0, array.data(), array.bytes());
    if (got != array.bytes()) throw io_error(path, "the file shrank while being read");
    return array;
  });
}

host_array parse_text(std::string_view text, const std::filesystem::path& name, dtype type, const std::string& column) {
  return guard_allocation(name, [&] {
    const column_choice choice = parse_column(name, column);
    const std::string ext = lower_extension(name);
    const char delimiter = ext == ".csv" ? ',' : ext == ".tsv" ? '\t' : '?';  // '?': detect
    if (is_complex(type)) {
      throw io_error(name, "text input of " + std::string(io::name(type)) +
                               " is not supported: give complex values in a .npy file (<c8, <c16)");
    }
    if (is_16bit_float(type)) {  // read as float64, then rounded once to the 16-bit type
      return convert(parse_text_as<double>(name, dtype::f64, text, delimiter, choice), type, name);
    }
    return visit(type, [&]<class T>() { return parse_text_as<T>(name, type, text, delimiter, choice); });
  });
}

host_array read_text(const std::filesystem::path& path, dtype type, const std::string& column) {
  return guard_allocation(path, [&] {
    input_file file(path);
    return parse_text(file.read_all(), path, type, column);
  });
}

host_array read_dataset(const std::filesystem::path& path, const read_options& options) {
  if (is_standard_stream(path)) {
    claim_standard_input();
    return read_stream_dataset(STDIN_FILENO, std::string(standard_input_name), options);
  }
  const std::string ext = lower_extension(path);
  const std::string head = read_file_head(path);
  // The magic decides before the name: x.bin or x.dat holding a .npy is read as one; x.npy
  // holding anything else gets read_npy's "not a .npy file: it starts with ...".
  if (ext == ".npy" || sniff(head) == signature::npy) return read_npy(path, options.type);
  if (is_raw_extension(ext)) {
    if (!options.type) {
      throw io_error(path, "raw binary needs --dtype (the file has no header to name its element type; one of " +
                               dtype_choices() + ")");
    }
    return read_raw(path, *options.type);
  }
  if (is_text_extension(ext)) {
    if (sniff(head) != signature::none) throw io_error(path, "not a list of values: " + describe_start(head));
    return read_text(path, options.type.value_or(dtype::f64), options.column);
  }
  unsupported_extension(path, ext, head);
}

input_array open_dataset(const std::filesystem::path& path, const read_options& options) {
  if (is_standard_stream(path)) return input_array(read_dataset(path, options));
  const std::string ext = lower_extension(path);
  const std::string head = read_file_head(path);
  if (ext == ".npy" || sniff(head) == signature::npy) {
    const npy_header header = read_npy_header(path);  // a bad header: read_npy's message
    if (header.data_offset % size_of(header.type) != 0) return input_array(read_npy(path));
    return input_array(map_npy(path));
  }
  if (is_raw_extension(ext) && options.type) return input_array(map_raw(path, *options.type));
  return input_array(read_dataset(path, options));  // text, or the errors read_dataset gives
}

stream_writer::stream_writer(const std::filesystem::path& path, dtype type, std::vector<std::int64_t> shape,
                             bool length_known)
    : path_(path) {
  const std::string ext = lower_extension(path);
  std::uint64_t rest = size_of(type);
  for (std::size_t d = 1; d < shape.size(); ++d) rest *= static_cast<std::uint64_t>(shape[d]);
  row_bytes_ = rest;
  most_bytes_ = shape.empty() ? 0 : rest * static_cast<std::uint64_t>(shape[0]);
  if (ext == ".npy" || is_standard_stream(path)) {
    if (!length_known && is_standard_stream(path)) {
      throw io_error(std::string(standard_output_name),
                     "cannot stream this output to standard output: its length, which the .npy header states "
                     "first, is known only at the end; give a file");
    }
    npy_.emplace(path, type, std::move(shape));
  } else if (is_raw_extension(ext)) {
    raw_.emplace(path);
  } else if (is_text_extension(ext)) {
    throw io_error(path, "a streamed output is written as .npy or raw binary (.bin, .raw, .dat), not as text");
  } else {
    unsupported_extension(path, ext);
  }
}

void stream_writer::write(const void* data, std::size_t bytes) {
  if (npy_) {
    npy_->write(data, bytes);
  } else {
    if (bytes > most_bytes_ - written_) {
      raw_->abort();
      throw io_error(path_, "stream_writer: more bytes written than the shape holds");
    }
    raw_->write(data, bytes);
  }
  written_ += bytes;
}

void stream_writer::commit() {
  if (npy_) {
    npy_->commit();
    return;
  }
  if (written_ != most_bytes_) {
    raw_->abort();
    throw io_error(path_, "stream_writer: " + std::to_string(written_) + " of " + std::to_string(most_bytes_) +
                              " bytes written");
  }
  raw_->commit();
}

void stream_writer::commit_with_length(std::int64_t first_extent) {
  if (npy_) {
    npy_->commit_with_length(first_extent);
    return;
  }
  if (written_ != static_cast<std::uint64_t>(first_extent) * row_bytes_) {
    raw_->abort();
    throw io_error(path_, "stream_writer: " + std::to_string(written_) + " bytes written for " +
                              std::to_string(first_extent) + " rows");
  }
  raw_->commit();
}

mapped_output::mapped_output(const std::filesystem::path& path, dtype type, std::int64_t n)
    : path_(path), type_(type), n_(n) {
  const std::string ext = lower_extension(path);
  if (is_standard_stream(path)) {
    throw io_error(std::string(standard_output_name),
                   "this output is written in place in a file (memory-mapped): give a .npy or raw file, not '-'");
  }
  if (is_text_extension(ext)) {
    throw io_error(path, "this output is written in place (memory-mapped) as .npy or raw binary (.bin, .raw, "
                         ".dat), not as text");
  }
  if (ext != ".npy" && !is_raw_extension(ext)) unsupported_extension(path, ext);
  const std::string header = ext == ".npy" ? make_npy_header(type, {n}) : std::string();
  const std::uint64_t total = header.size() + static_cast<std::uint64_t>(n) * size_of(type);
  file_.emplace(path);
  file_->write(header);
  int error = 0;
  do {
    error = total > header.size() ? ::posix_fallocate(file_->native_handle(), 0, static_cast<::off_t>(total)) : 0;
  } while (error == EINTR);
  if (error != 0) {
    file_->abort();
    throw io_error(path, "write failed: " + std::generic_category().message(error) + " (reserving " +
                             std::to_string(total) + " bytes for the output)");
  }
  if (n == 0) return;
  void* p = ::mmap(nullptr, static_cast<std::size_t>(total), PROT_READ | PROT_WRITE, MAP_SHARED,
                   file_->native_handle(), 0);
  if (p == MAP_FAILED) {
    error = errno;
    file_->abort();
    throw io_error(path, "cannot map the output into memory: " + std::generic_category().message(error));
  }
  base_ = p;
  map_bytes_ = static_cast<std::size_t>(total);
  data_ = static_cast<std::byte*>(base_) + header.size();
}

mapped_output::~mapped_output() { unmap(); }  // file_'s destructor removes an uncommitted temporary

void mapped_output::unmap() noexcept {
  if (base_ != nullptr) ::munmap(base_, map_bytes_);
  base_ = nullptr;
  data_ = nullptr;
  map_bytes_ = 0;
}

void mapped_output::commit() {
  if (!file_ || !file_->is_open()) throw io_error(path_, "commit after the file was committed or abandoned");
  if (base_ != nullptr && ::msync(base_, map_bytes_, MS_SYNC) != 0) {
    const int error = errno;
    unmap();
    file_->abort();
    throw io_error(path_, "flushing to disk failed: " + std::generic_category().message(error));
  }
  unmap();
  file_->commit();
}

void write_dataset(const std::filesystem::path& path, const host_array& array) {
  const std::string ext = lower_extension(path);
  if (ext == ".npy" || is_standard_stream(path)) {
    write_npy(path, array);
  } else if (is_raw_extension(ext)) {
    atomic_file file(path);
    file.write(array.data(), array.bytes());
    file.commit();
  } else if (is_text_extension(ext)) {
    if (is_complex(array.type())) {
      throw io_error(path, "text output of " + std::string(name(array.type())) +
                               " is not supported: write a .npy (or raw .bin) file");
    }
    atomic_file file(path);
    if (is_16bit_float(array.type())) {  // the float32 widening (exact), shortest form
      write_text<float>(file, convert(array, dtype::f32));
    } else {
      visit(array.type(), [&]<class T>() { write_text<T>(file, array); });
    }
    file.commit();
  } else {
    unsupported_extension(path, ext);
  }
}

namespace {

// convert() where either side is a linrec-only dtype (array.hpp): through float64 for the
// real types, part by part for complex.
host_array convert_linrec_only(const host_array& array, dtype type, const std::filesystem::path& source) {
  const dtype from = array.type();
  const auto fail = [&](const std::string& what) {
    return source.empty() ? io_error("convert: " + what) : io_error(source, "converting: " + what);
  };
  const auto unsupported = [&] {
    return fail("a " + std::string(name(from)) + " array cannot be converted to " + std::string(name(type)));
  };
  if (from == type) {
    host_array out(type, array.shape());
    if (array.bytes() > 0) std::memcpy(out.data(), array.data(), array.bytes());
    return out;
  }
  if (is_complex(from) != is_complex(type) && is_complex(from)) throw unsupported();  // complex -> real
  // Every value as float64 (real part; complex128 keeps its own below).
  host_array wide(dtype::f64, array.shape());
  const std::span<double> w = wide.as<double>();
  if (is_16bit_float(from)) {
    const auto bits = std::span(reinterpret_cast<const std::uint16_t*>(array.data()), w.size());
    for (std::size_t i = 0; i < w.size(); ++i) {
      w[i] = from == dtype::f16 ? float16_to_double(bits[i]) : bfloat16_to_double(bits[i]);
    }
  } else if (is_complex(from)) {  // complex64 <-> complex128
    host_array out(type, array.shape());
    if (from == dtype::c64) {
      const auto in = array.as<std::complex<float>>();
      std::copy(in.begin(), in.end(), out.as<std::complex<double>>().begin());
    } else {
      const auto in = array.as<std::complex<double>>();
      const auto result = out.as<std::complex<float>>();
      for (std::size_t i = 0; i < in.size(); ++i) {
        result[i] = std::complex<float>(in[i]);
        const bool overflow = (std::isinf(result[i].real()) && std::isfinite(in[i].real())) ||
                              (std::isinf(result[i].imag()) && std::isfinite(in[i].imag()));
        if (overflow) throw fail("element " + std::to_string(i) + " of a complex128 array is out of range for complex64");
      }
    }
    return out;
  } else {
    if (from != dtype::f64) {
      const host_array f64 = convert(array, dtype::f64, source);
      std::memcpy(wide.data(), f64.data(), wide.bytes());
    } else {
      std::memcpy(wide.data(), array.data(), wide.bytes());
    }
  }
  if (!is_linrec_only(type)) return convert(wide, type, source);
  host_array out(type, array.shape());
  const auto out_of_range = [&](std::size_t i) {
    char text[64];
    const auto printed = std::to_chars(text, text + sizeof text, w[i]);
    return fail("element " + std::to_string(i) + " (" + std::string(text, printed.ptr) + ") of a " +
                std::string(name(from)) + " array is out of range for " + std::string(name(type)));
  };
  for (std::size_t i = 0; i < w.size(); ++i) {
    switch (type) {
      case dtype::f16:
      case dtype::bf16: {
        const std::uint16_t bits = type == dtype::f16 ? float16_from_double(w[i]) : bfloat16_from_double(w[i]);
        const double back = type == dtype::f16 ? float16_to_double(bits) : bfloat16_to_double(bits);
        if (std::isinf(back) && std::isfinite(w[i])) throw out_of_range(i);
        reinterpret_cast<std::uint16_t*>(out.data())[i] = bits;
        break;
      }
      case dtype::c64: {
        const auto re = static_cast<float>(w[i]);
        if (std::isinf(re) && std::isfinite(w[i])) throw out_of_range(i);
        out.as<std::complex<float>>()[i] = {re, 0.0f};
        break;
      }
      case dtype::c128: out.as<std::complex<double>>()[i] = {w[i], 0.0}; break;
      default: throw unsupported();
    }
  }
  return out;
}

}  // namespace

host_array convert(const host_array& array, dtype type, const std::filesystem::path& source) {
  if (is_linrec_only(array.type()) || is_linrec_only(type)) return convert_linrec_only(array, type, source);
  host_array out(type, array.shape());
  visit(array.type(), [&]<class From>() {
    visit(type, [&]<class To>() {
      const std::span<const From> in = array.template as<From>();
      const std::span<To> result = out.template as<To>();
      const auto out_of_range = [&](std::size_t i) {
        char text[64];
        const auto printed = std::to_chars(text, text + sizeof text, in[i]);
        const std::string what = "element " + std::to_string(i) + " (" + std::string(text, printed.ptr) + ") of a " +
                                 std::string(name(array.type())) + " array is out of range for " +
                                 std::string(name(type));
        return source.empty() ? io_error("convert: " + what) : io_error(source, "converting: " + what);
      };
      for (std::size_t i = 0; i < in.size(); ++i) {
        if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
          // static_cast is undefined unless the truncated value fits: check against the
          // exact powers of two that bound To.
          const double truncated = std::trunc(static_cast<double>(in[i]));
          const double low = static_cast<double>(std::numeric_limits<To>::min());
          const double high = std::ldexp(1.0, std::numeric_limits<To>::digits);
          if (!(truncated >= low && truncated < high)) throw out_of_range(i);
        }
        result[i] = static_cast<To>(in[i]);
        if constexpr (std::is_floating_point_v<From> && std::is_floating_point_v<To>) {
          // A finite value beyond the target's largest would round to infinity: an error, as
          // it is when text is read. NaN and infinities stay what they are.
          if (std::isinf(result[i]) && std::isfinite(in[i])) throw out_of_range(i);
        }
      }
    });
  });
  return out;
}

}  // namespace scanlab::io
