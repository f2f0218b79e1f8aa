#include "common/npy.hpp"

#include "common/file_format.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace scanlab::io {

// The data are copied to and from memory as they are: the host must be little-endian,
// as NumPy's '<' files are (every machine scanlab targets is).
static_assert(std::endian::native == std::endian::little, "the .npy reader assumes a little-endian host");

namespace {

constexpr std::size_t array_align = 64;            // numpy.lib.format.ARRAY_ALIGN
constexpr std::size_t growth_axis_max_digits = 21;  // numpy.lib.format.GROWTH_AXIS_MAX_DIGITS
// The most bytes a file's magic, version, header length and header can take.
constexpr std::size_t npy_head_bytes = 12 + npy_max_header_bytes;

// Python's repr of a shape tuple: "()", "(7,)", "(3, 4)".
std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1) out += ",";
  return out + ")";
}

// Bytes that `shape` of elements of `element_size` bytes needs; nullopt on 64-bit overflow.
std::optional<std::uint64_t> bytes_needed(const std::vector<std::int64_t>& shape, std::size_t element_size) {
  std::uint64_t bytes = element_size;
  for (std::int64_t extent : shape) {
    if (extent < 0) return std::nullopt;
    const auto e = static_cast<std::uint64_t>(extent);
    if (e != 0 && bytes > std::numeric_limits<std::uint64_t>::max() / e) return std::nullopt;
    bytes *= e;
  }
  // host_array counts elements in int64_t.
  if (bytes / element_size > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
  return bytes;
}

// ---- A parser for the Python literal in the header ----
// The subset NumPy's headers use: dicts with string keys, tuples, lists, strings, integers
// (a Python 2 'L' suffix accepted), True, False and None.

struct syntax_error {
  std::string what;
};

struct py_value {
  enum class kind { none, boolean, integer, string, tuple, list, dict };
  kind type = kind::none;
  bool boolean = false;
  std::int64_t integer = 0;
  std::string text;
  std::vector<py_value> items;    // tuple and list elements; dict values
  std::vector<std::string> keys;  // dict keys, parallel to items

  const py_value* find(std::string_view key) const {
    // The last occurrence wins, as in a Python dict display.
    for (std::size_t i = keys.size(); i-- > 0;) {
      if (keys[i] == key) return &items[i];
    }
    return nullptr;
  }
};

std::string_view kind_name(py_value::kind k) {
  switch (k) {
    case py_value::kind::none: return "None";
    case py_value::kind::boolean: return "a bool";
    case py_value::kind::integer: return "an integer";
    case py_value::kind::string: return "a string";
    case py_value::kind::tuple: return "a tuple";
    case py_value::kind::list: return "a list";
    case py_value::kind::dict: return "a dict";
  }
  return "?";
}

class py_parser {
 public:
  explicit py_parser(std::string_view text) : text_(text) {}

  // The whole header: one dict, then only padding.
  py_value parse_header() {
    skip_space();
    if (at_end() || peek() != '{') fail("does not start with '{'");
    py_value value = parse_value();
    skip_space();
    while (!at_end() && peek() == '\0') ++pos_;  // NUL padding, also accepted
    if (!at_end()) fail("unexpected text after the dict at offset " + std::to_string(pos_));
    return value;
  }

 private:
  static constexpr int max_depth = 16;

  [[noreturn]] void fail(std::string what) const { throw syntax_error{std::move(what)}; }
  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return text_[pos_]; }
  void skip_space() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) ++pos_;
  }
  bool take(char c) {
    skip_space();
    if (!at_end() && peek() == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!take(c)) {
      fail(std::string("expected '") + c + "' at offset " + std::to_string(pos_));
    }
  }

  py_value parse_value() {
    skip_space();
    if (at_end()) fail("ends in the middle of a value");
    if (++depth_ > max_depth) fail("nested too deeply");
    py_value value;
    const char c = peek();
    if (c == '{') {
      value = parse_dict();
    } else if (c == '(' || c == '[') {
      value = parse_sequence();
    } else if (c == '\'' || c == '"') {
      value.type = py_value::kind::string;
      value.text = parse_string();
    } else if (c == '-' || c == '+' || (c >= '0' && c <= '9')) {
      value.type = py_value::kind::integer;
      value.integer = parse_integer();
    } else {
      value = parse_name();
    }
    --depth_;
    return value;
  }

  py_value parse_dict() {
    py_value value;
    value.type = py_value::kind::dict;
    expect('{');
    while (!take('}')) {
      skip_space();
      if (at_end() || (peek() != '\'' && peek() != '"')) fail("a dict key is not a string");
      value.keys.push_back(parse_string());
      expect(':');
      value.items.push_back(parse_value());
      if (!take(',')) {
        expect('}');
        break;
      }
    }
    return value;
  }

  // "(a, b)" and "(a,)" are tuples, "(a)" is just a, "[...]" is a list.
  py_value parse_sequence() {
    skip_space();
    const char open = peek();
    const char close = open == '(' ? ')' : ']';
    ++pos_;
    py_value value;
    value.type = open == '(' ? py_value::kind::tuple : py_value::kind::list;
    bool saw_comma = false;
    while (!take(close)) {
      value.items.push_back(parse_value());
      if (take(',')) {
        saw_comma = true;
      } else {
        expect(close);
        break;
      }
    }
    if (open == '(' && value.items.size() == 1 && !saw_comma) return std::move(value.items[0]);
    return value;
  }

  std::string parse_string() {
    const char quote = peek();
    ++pos_;
    std::string out;
    while (true) {
      if (at_end()) fail("a string is not closed");
      char c = peek();
      ++pos_;
      if (c == quote) break;
      if (c == '\\') {
        if (at_end()) fail("a string is not closed");
        c = peek();
        ++pos_;
      }
      out += c;
    }
    return out;
  }

  std::int64_t parse_integer() {
    bool negative = false;
    if (peek() == '-' || peek() == '+') {
      negative = peek() == '-';
      ++pos_;
    }
    const std::size_t start = pos_;
    std::uint64_t magnitude = 0;
    while (!at_end() && peek() >= '0' && peek() <= '9') {
      const auto digit = static_cast<std::uint64_t>(peek() - '0');
      if (magnitude > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) fail("an integer is too large");
      magnitude = magnitude * 10 + digit;
      ++pos_;
    }
    if (pos_ == start) fail("a sign without digits at offset " + std::to_string(start));
    if (!at_end() && (peek() == 'L' || peek() == 'l')) ++pos_;  // Python 2 long
    if (!at_end() && (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '.')) {
      fail("a number that is not an integer at offset " + std::to_string(start));
    }
    const auto limit = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    if (magnitude > limit + (negative ? 1 : 0)) fail("an integer is too large");
    if (negative) return magnitude == limit + 1 ? std::numeric_limits<std::int64_t>::min()
                                                : -static_cast<std::int64_t>(magnitude);
    return static_cast<std::int64_t>(magnitude);
  }

  py_value parse_name() {
    const std::size_t start = pos_;
    while (!at_end() && (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_')) ++pos_;
    const std::string_view word = text_.substr(start, pos_ - start);
    py_value value;
    if (word == "True" || word == "False") {
      value.type = py_value::kind::boolean;
      value.boolean = word == "True";
    } else if (word == "None") {
      value.type = py_value::kind::none;
    } else {
      std::string what = "unexpected ";
      if (word.empty()) {
        what += "character '";
        what += printable(text_.substr(pos_, 1));
      } else {
        what += "'";
        what += word;
      }
      fail(what + "' at offset " + std::to_string(start));
    }
    return value;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

std::string supported_descrs() { return dtype_list(" ", npy_descr, true) + " (bfloat16, with --dtype bfloat16)"; }

// The dtype of a descr string such as "<f4", or an io_error saying why it cannot be read.
// `requested`: the dtype the user asked for (--dtype), which alone makes a 2-byte void
// ("<V2", "|V2": raw bytes, what ml_dtypes/JAX save a bfloat16 array as) read as bfloat16.
dtype parse_descr(const std::filesystem::path& path, const std::string& descr_text, std::optional<dtype> requested) {
  std::string_view d = descr_text;
  const std::string descr = printable(descr_text);  // as the messages show it
  if (d == "bfloat16") return dtype::bf16;           // the name, as some writers put it
  char order = 0;
  if (!d.empty() && (d[0] == '<' || d[0] == '>' || d[0] == '=' || d[0] == '|')) {
    order = d[0];
    d.remove_prefix(1);
  }
  if (!d.empty() && d[0] == 'O') {
    throw io_error(path, "object dtype '" + descr + "' is not supported (Python objects, not numbers)");
  }
  if (!d.empty() && d[0] == 'V') {
    if (d != "V2") {
      throw io_error(path, "void dtype '" + descr + "' (raw bytes) is not supported: only a 2-byte void ('<V2') is "
                           "read, as bfloat16, with --dtype bfloat16");
    }
    if (order == '>') throw io_error(path, "big-endian dtype '" + descr + "' is not supported (little-endian only)");
    if (requested != dtype::bf16) {
      throw io_error(path, "2-byte void dtype '" + descr + "' holds raw bytes, not a numeric type: if they are "
                           "bfloat16 (as ml_dtypes and JAX save it with np.save), pass --dtype bfloat16");
    }
    return dtype::bf16;
  }
  std::optional<dtype> type;
  const auto match = [&](dtype t) {
    if (npy_descr(t).substr(1) == d) type = t;
  };
  for (dtype t : all_dtypes) match(t);
  for (dtype t : linrec_only_dtypes) {
    if (t != dtype::bf16) match(t);
  }
  const std::string unsupported = "unsupported dtype '" + descr + "' (supported: " + supported_descrs() + ")";
  if (!type) throw io_error(path, unsupported);
  if (size_of(*type) > 1) {
    if (order == '>') throw io_error(path, "big-endian dtype '" + descr + "' is not supported (little-endian only)");
    if (order == '|') throw io_error(path, unsupported);  // a byte order is required for multi-byte types
  }
  return *type;
}

// The data after a header: exactly what the shape needs, or an error saying how far off.
// `shape` and `descr` as the header wrote them.
void check_data_size(const std::filesystem::path& path, const npy_header& header, const std::string& shape,
                     const std::string& descr, std::uint64_t available) {
  const std::string claim = "shape " + shape + " of " + descr + " needs " + std::to_string(header.data_bytes) +
                            " bytes, file has " + std::to_string(available);
  if (available < header.data_bytes) throw io_error(path, "truncated data: " + claim);
  if (available > header.data_bytes) throw io_error(path, "shape and size disagree: " + claim + " (trailing bytes)");
}

// The header of a file of `size` bytes whose first bytes are `head` (at least
// min(size, npy_head_bytes) of them: the header cannot be longer). A stream's size is not
// known ahead (nullopt): then `head` is all it held up to npy_head_bytes, and whether the
// data that follow fit the shape is for its reader to check.
npy_header parse_npy_header(const std::filesystem::path& path, std::string_view head,
                            std::optional<std::uint64_t> size, std::optional<dtype> requested) {
  const std::size_t got = std::min<std::size_t>(head.size(), 12);
  const auto byte_at = [&](std::size_t i) { return static_cast<unsigned char>(head[i]); };

  if (got == 0) throw io_error(path, "not a .npy file (bad magic): the file is empty");
  if (std::memcmp(head.data(), npy_magic.data(), std::min(got, npy_magic.size())) != 0) {
    throw io_error(path, "not a .npy file (bad magic): " + describe_start(head) + " (a .npy file starts with \"\\x93NUMPY\")");
  }
  if (got < 8) throw io_error(path, "truncated header: the file has only " + std::to_string(got) + " bytes");
  const int major = byte_at(6);
  const int minor = byte_at(7);
  if (major < 1 || major > 3 || minor != 0) {
    throw io_error(path, "unsupported .npy version " + std::to_string(major) + "." + std::to_string(minor) +
                             " (1.0, 2.0 and 3.0 are read)");
  }
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  const std::size_t prelude_bytes = 8 + length_bytes;
  if (got < prelude_bytes) {
    throw io_error(path, "truncated header: the file has only " + std::to_string(got) + " bytes");
  }
  std::uint64_t header_length = 0;
  for (std::size_t i = 0; i < length_bytes; ++i) header_length |= std::uint64_t{byte_at(8 + i)} << (8 * i);
  if (header_length > npy_max_header_bytes) {
    throw io_error(path, "header length " + std::to_string(header_length) + " exceeds the limit of " +
                             std::to_string(npy_max_header_bytes) + " bytes");
  }
  const std::uint64_t data_offset = prelude_bytes + header_length;
  const std::uint64_t held = size.value_or(head.size());
  if (held < data_offset) {
    throw io_error(path, "truncated header: it needs " + std::to_string(data_offset) + " bytes, the file has " +
                             std::to_string(held));
  }
  if (head.size() < data_offset) throw io_error(path, "truncated header: the file shrank while being read");
  const std::string_view text = head.substr(prelude_bytes, static_cast<std::size_t>(header_length));

  py_value dict;
  try {
    dict = py_parser(text).parse_header();
  } catch (const syntax_error& e) {
    throw io_error(path, "header is not a valid dict: " + e.what);
  }
  for (std::string_view key : {"descr", "fortran_order", "shape"}) {
    if (!dict.find(key)) throw io_error(path, "header is not a valid dict: missing key '" + std::string(key) + "'");
  }

  const py_value& descr = *dict.find("descr");
  if (descr.type == py_value::kind::list || descr.type == py_value::kind::dict) {
    throw io_error(path, "unsupported dtype: structured (record) dtypes are not supported (supported: " +
                             supported_descrs() + ")");
  }
  if (descr.type != py_value::kind::string) {
    throw io_error(path, "header is not a valid dict: 'descr' is " + std::string(kind_name(descr.type)) +
                             ", not a string");
  }
  npy_header header;
  header.type = parse_descr(path, descr.text, requested);
  header.version_major = major;

  const py_value& fortran = *dict.find("fortran_order");
  if (fortran.type != py_value::kind::boolean) {
    throw io_error(path, "header is not a valid dict: 'fortran_order' is " + std::string(kind_name(fortran.type)) +
                             ", not True or False");
  }
  if (fortran.boolean) throw io_error(path, "fortran_order True is not supported (only C order)");

  const py_value& shape = *dict.find("shape");
  if (shape.type != py_value::kind::tuple && shape.type != py_value::kind::list) {
    throw io_error(path, "header is not a valid dict: 'shape' is " + std::string(kind_name(shape.type)) +
                             ", not a tuple");
  }
  for (const py_value& extent : shape.items) {
    if (extent.type != py_value::kind::integer) {
      throw io_error(path, "header is not a valid dict: 'shape' holds " + std::string(kind_name(extent.type)) +
                               ", not only integers");
    }
    header.shape.push_back(extent.integer);
  }
  for (std::int64_t extent : header.shape) {
    if (extent < 0) throw io_error(path, "shape " + shape_text(header.shape) + " has a negative extent");
  }
  if (header.shape.size() > max_dims) {
    throw io_error(path, std::to_string(header.shape.size()) + "-D shape " + shape_text(header.shape) +
                             " is not supported (only 1-D to 3-D)");
  }
  const std::string shape_as_written = shape_text(header.shape);
  if (header.shape.empty()) header.shape = {1};  // a 0-d scalar reads as one element

  const std::optional<std::uint64_t> needed = bytes_needed(header.shape, size_of(header.type));
  if (!needed) throw io_error(path, "shape " + shape_as_written + " is too large");
  header.data_offset = data_offset;
  header.data_bytes = *needed;
  if (size) check_data_size(path, header, shape_as_written, descr.text, *size - data_offset);
  return header;
}

// The first bytes of a file, as many as a header can take (fewer in a shorter file).
std::string read_head(input_file& file) {
  std::string head(static_cast<std::size_t>(std::min<std::uint64_t>(file.size(), npy_head_bytes)), '\0');
  head.resize(file.read_at(0, head.data(), head.size()));
  return head;
}

// Checks a shape to be written; returns its data bytes.
std::uint64_t checked_data_bytes(const std::filesystem::path& path, dtype type, const std::vector<std::int64_t>& shape) {
  if (shape.empty() || shape.size() > max_dims) {
    throw io_error(path, "cannot write a " + std::to_string(shape.size()) + "-D shape " + shape_text(shape) +
                             " (only 1-D to 3-D)");
  }
  const std::optional<std::uint64_t> bytes = bytes_needed(shape, size_of(type));
  if (!bytes) throw io_error(path, "cannot write shape " + shape_text(shape) + ": negative or too large");
  return *bytes;
}

}  // namespace

std::string make_npy_header(dtype type, const std::vector<std::int64_t>& shape) {
  if (shape.empty() || shape.size() > max_dims) throw std::invalid_argument("make_npy_header: only 1-D to 3-D shapes");
  for (std::int64_t extent : shape) {
    if (extent < 0) throw std::invalid_argument("make_npy_header: negative extent");
  }
  // As numpy.lib.format._write_array_header: the dict with sorted keys, then spare spaces so
  // that the first axis can grow in place to 21 digits.
  std::string dict = "{'descr': '" + std::string(npy_descr(type)) + "', 'fortran_order': False, 'shape': " +
                     shape_text(shape) + ", }";
  dict.append(growth_axis_max_digits - std::to_string(shape[0]).size(), ' ');

  // As _wrap_header: 1 to 64 spaces and a '\n' make the prelude + header a multiple of 64.
  // Version 1.0 stores the length in 2 bytes; 2.0 in 4 when it does not fit.
  for (int major : {1, 2}) {
    const std::size_t prelude_bytes = major == 1 ? 10 : 12;
    const std::size_t unpadded = dict.size() + 1;
    const std::size_t padding = array_align - (prelude_bytes + unpadded) % array_align;
    const std::size_t header_length = unpadded + padding;
    if (major == 1 && header_length > 0xffff) continue;
    std::string out(npy_magic);
    out += static_cast<char>(major);
    out += '\0';
    for (std::size_t i = 0; i < prelude_bytes - 8; ++i) out += static_cast<char>((header_length >> (8 * i)) & 0xff);
    out += dict;
    out.append(padding, ' ');
    out += '\n';
    return out;
  }
  throw std::logic_error("make_npy_header: unreachable");
}

npy_header read_npy_header(const std::filesystem::path& path, std::optional<dtype> requested) {
  input_file file(path);
  return parse_npy_header(path, read_head(file), file.size(), requested);
}

host_array read_npy(const std::filesystem::path& path, std::optional<dtype> requested) {
  return guard_allocation(path, [&] {
    input_file file(path);
    const npy_header header = parse_npy_header(path, read_head(file), file.size(), requested);
    host_array array(header.type, header.shape);
    const std::size_t got = file.read_at(header.data_offset, array.data(), array.bytes());
    if (got != array.bytes()) {
      throw io_error(path, "truncated data: the file shrank while being read (" + std::to_string(got) + " of " +
                               std::to_string(array.bytes()) + " data bytes)");
    }
    return array;
  });
}

host_array parse_npy(std::string_view bytes, const std::filesystem::path& name, std::optional<dtype> requested) {
  return guard_allocation(name, [&] {
    const npy_header header = parse_npy_header(name, bytes, bytes.size(), requested);
    host_array array(header.type, header.shape);
    if (array.bytes() > 0) std::memcpy(array.data(), bytes.data() + header.data_offset, array.bytes());
    return array;
  });
}

host_array read_npy_stream(int fd, std::string head, const std::filesystem::path& name,
                           std::optional<dtype> requested) {
  return guard_allocation(name, [&] {
    if (const std::size_t had = head.size(); had < npy_head_bytes) {  // as much as a header can take
      head.resize(npy_head_bytes);
      head.resize(had + read_stream(fd, head.data() + had, npy_head_bytes - had, name));
    }
    const npy_header header = parse_npy_header(name, head, std::nullopt, requested);
    host_array array(header.type, header.shape);
    const std::string_view after_header = std::string_view(head).substr(header.data_offset);
    const std::size_t buffered = std::min(after_header.size(), array.bytes());
    if (buffered > 0) std::memcpy(array.data(), after_header.data(), buffered);
    std::uint64_t available = after_header.size();
    if (available < array.bytes()) {
      available += read_stream(fd, array.data() + buffered, array.bytes() - buffered, name);
    }
    if (available >= array.bytes()) {  // anything after the data is an error too: count it all
      char rest[1 << 16];
      while (const std::size_t n = read_stream(fd, rest, sizeof rest, name)) available += n;
    }
    check_data_size(name, header, shape_text(header.shape), std::string(npy_descr(header.type)), available);
    return array;
  });
}

void write_npy(const std::filesystem::path& path, const host_array& array) {
  checked_data_bytes(path, array.type(), array.shape());
  const std::string header = make_npy_header(array.type(), array.shape());
  atomic_file file(path);
  file.write(header);
  file.write(array.data(), array.bytes());
  file.commit();
}

// ---- npy_writer ----

npy_writer::npy_writer(std::filesystem::path path, dtype type, std::vector<std::int64_t> shape)
    : file_((checked_data_bytes(path, type, shape), std::move(path))),
      type_(type),
      shape_(std::move(shape)),
      data_bytes_(checked_data_bytes(file_.target(), type_, shape_)) {
  file_.write(make_npy_header(type_, shape_));
}

void npy_writer::write(const void* data, std::size_t bytes) {
  if (bytes > data_bytes_ - data_written_) {
    file_.abort();
    throw io_error(path(), "npy_writer: " + std::to_string(data_written_ + bytes) + " data bytes written, more than the " +
                               std::to_string(data_bytes_) + " that shape " + shape_text(shape_) + " of " +
                               std::string(npy_descr(type_)) + " holds");
  }
  file_.write(data, bytes);
  data_written_ += bytes;
}

void npy_writer::commit() {
  if (data_written_ != data_bytes_) {
    file_.abort();
    throw io_error(path(), "npy_writer: only " + std::to_string(data_written_) + " of the " +
                               std::to_string(data_bytes_) + " data bytes that shape " + shape_text(shape_) + " of " +
                               std::string(npy_descr(type_)) + " needs were written");
  }
  file_.commit();
}

void npy_writer::commit_with_length(std::int64_t first_extent) {
  if (first_extent < 0 || first_extent > shape_[0]) {
    file_.abort();
    throw io_error(path(), "npy_writer: first extent " + std::to_string(first_extent) + " outside [0, " +
                               std::to_string(shape_[0]) + "]");
  }
  const std::string old_header = make_npy_header(type_, shape_);
  shape_[0] = first_extent;
  data_bytes_ = checked_data_bytes(path(), type_, shape_);
  const std::string header = make_npy_header(type_, shape_);
  if (header.size() != old_header.size()) {  // cannot happen with the growth padding; never write a wrong one
    file_.abort();
    throw std::logic_error("npy_writer: the header changed length");
  }
  if (data_written_ != data_bytes_) {
    file_.abort();
    throw io_error(path(), "npy_writer: " + std::to_string(data_written_) + " data bytes written, shape " +
                               shape_text(shape_) + " of " + std::string(npy_descr(type_)) + " needs " +
                               std::to_string(data_bytes_));
  }
  file_.write_at(0, header.data(), header.size());
  file_.commit();
}

}  // namespace scanlab::io
