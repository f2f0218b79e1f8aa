#include "cg/mtx.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "common/atomic_file.hpp"
#include "common/file_format.hpp"

namespace scanlab::mtx {

namespace {

enum class field { real, integer, pattern };
enum class symmetry { general, symmetric };

// Walks the text line by line, counting lines from 1.
class line_reader {
 public:
  explicit line_reader(std::string_view text) : text_(text) {}
  // The next line without its "\n" or "\r\n"; false at the end.
  bool next(std::string_view& line) {
    if (pos_ >= text_.size()) return false;
    const std::size_t end = text_.find('\n', pos_);
    const std::size_t stop = end == std::string_view::npos ? text_.size() : end;
    line = text_.substr(pos_, stop - pos_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos_ = stop + 1;
    ++number_;
    return true;
  }
  [[nodiscard]] std::int64_t number() const { return number_; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  std::int64_t number_ = 0;
};

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool skippable(std::string_view line) {
  const std::size_t first = line.find_first_not_of(" \t");
  return first == std::string_view::npos || line[first] == '%';
}

// A non-negative integer, the whole word.
bool parse_count(std::string_view word, std::int64_t& value) {
  const auto [ptr, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
  return ec == std::errc() && ptr == word.data() + word.size() && value >= 0;
}

std::string quoted(std::string_view word) { return io::quoted_excerpt(word, 40); }

// parse_mtx() without the translation of allocation failures.
sparse::csr_matrix parse_mtx_text(std::string_view text, const std::string& name) {
  line_reader reader(text);
  const auto fail = [&](std::int64_t line, const std::string& why) -> mtx_error {
    return mtx_error(name + ":" + std::to_string(line) + ": " + why);
  };

  // Banner.
  std::string_view line;
  if (!reader.next(line)) throw fail(1, "empty file (expected a %%MatrixMarket banner)");
  const auto banner = split_words(line);
  if (banner.empty() || lower(banner[0]) != "%%matrixmarket") {
    std::string why = "not a Matrix Market file (the first line must start with %%MatrixMarket)";
    if (io::sniff(text) != io::signature::none) why += ": " + io::describe_start(text);  // a .npy, gzip, ...
    throw fail(1, why);
  }
  if (banner.size() != 5) {
    throw fail(1, "the banner needs 4 words after %%MatrixMarket: matrix coordinate <field> <symmetry>");
  }
  if (lower(banner[1]) != "matrix") throw fail(1, "unsupported object " + quoted(banner[1]) + " (only matrix)");
  const std::string format = lower(banner[2]);
  if (format == "array") throw fail(1, "unsupported format \"array\" (dense): only coordinate (sparse) is read");
  if (format != "coordinate") throw fail(1, "unknown format " + quoted(banner[2]) + " (expected coordinate)");
  const std::string field_word = lower(banner[3]);
  field f;
  if (field_word == "real" || field_word == "double") f = field::real;
  else if (field_word == "integer") f = field::integer;
  else if (field_word == "pattern") f = field::pattern;
  else if (field_word == "complex") throw fail(1, "unsupported field \"complex\" (real, integer or pattern)");
  else throw fail(1, "unknown field " + quoted(banner[3]) + " (real, integer or pattern)");
  const std::string symmetry_word = lower(banner[4]);
  symmetry sym;
  if (symmetry_word == "general") sym = symmetry::general;
  else if (symmetry_word == "symmetric") sym = symmetry::symmetric;
  else if (symmetry_word == "skew-symmetric" || symmetry_word == "hermitian") {
    throw fail(1, "unsupported symmetry " + quoted(banner[4]) + " (general or symmetric)");
  } else {
    throw fail(1, "unknown symmetry " + quoted(banner[4]) + " (general or symmetric)");
  }

  // Size line: the first line that is not blank or a comment.
  bool have_size = false;
  std::int64_t rows = 0, cols = 0, stated = 0;
  while (reader.next(line)) {
    if (skippable(line)) continue;
    const auto words = split_words(line);
    if (words.size() != 3 || !parse_count(words[0], rows) || !parse_count(words[1], cols) ||
        !parse_count(words[2], stated)) {
      throw fail(reader.number(), "the size line must be three non-negative integers: rows columns entries");
    }
    have_size = true;
    break;
  }
  if (!have_size) throw fail(reader.number() + 1, "the file ends before the size line (rows columns entries)");
  constexpr std::int64_t max_dim = std::numeric_limits<std::int32_t>::max();
  if (rows > max_dim || cols > max_dim) {
    throw fail(reader.number(), std::to_string(rows) + " x " + std::to_string(cols) +
                                    " is too large (at most 2^31 - 1 rows and columns)");
  }
  // CSR keeps an offset per row, entries or not: bound the rows by the file's size, so that a
  // 60-byte file cannot ask for gigabytes of offsets (each of its entries takes 4 bytes or more).
  if (static_cast<std::uint64_t>(rows) > text.size()) {
    throw fail(reader.number(), std::to_string(rows) + " rows is more than a file of " + std::to_string(text.size()) +
                                    " bytes can describe (at most one row per byte of the file)");
  }
  if (sym == symmetry::symmetric && rows != cols) {
    throw fail(reader.number(), "a symmetric matrix must be square, not " + std::to_string(rows) + " x " +
                                    std::to_string(cols));
  }

  // Entries.
  std::vector<sparse::coo_entry> entries;
  // Every entry takes at least 4 characters ("1 1\n"): a size line that promises more than
  // the text can hold must not reserve memory for them.
  const auto plausible = std::min<std::int64_t>(stated, static_cast<std::int64_t>(text.size() / 4));
  entries.reserve(static_cast<std::size_t>(sym == symmetry::symmetric ? 2 * plausible : plausible));
  const std::size_t fields = f == field::pattern ? 2 : 3;
  std::int64_t read = 0;
  while (reader.next(line)) {
    if (skippable(line)) continue;
    if (read == stated) {
      throw fail(reader.number(), "more entries than the " + std::to_string(stated) + " the size line states");
    }
    const auto words = split_words(line);
    if (words.size() != fields) {
      throw fail(reader.number(), "an entry of a " + field_word + " matrix has " + std::to_string(fields) +
                                      " fields (row column" + (fields == 3 ? " value" : "") + "), not " +
                                      std::to_string(words.size()));
    }
    std::int64_t i = 0, j = 0;
    if (!parse_count(words[0], i) || !parse_count(words[1], j)) {
      throw fail(reader.number(), "indices must be positive integers: " + quoted(words[0]) + " " + quoted(words[1]));
    }
    if (i < 1 || i > rows || j < 1 || j > cols) {
      throw fail(reader.number(), "index (" + std::to_string(i) + ", " + std::to_string(j) + ") is outside the " +
                                      std::to_string(rows) + " x " + std::to_string(cols) + " matrix (1-based)");
    }
    double value = 1.0;
    if (f != field::pattern) {
      const std::string_view w = words[2];
      const char* begin = w.data();
      const char* end = w.data() + w.size();
      if (begin != end && *begin == '+') ++begin;  // from_chars takes no leading '+'
      if (f == field::integer) {
        std::int64_t integer = 0;
        const auto [ptr, ec] = std::from_chars(begin, end, integer);
        if (ec == std::errc::result_out_of_range) throw fail(reader.number(), "integer " + quoted(w) + " out of range");
        if (ec != std::errc() || ptr != end) throw fail(reader.number(), quoted(w) + " is not an integer");
        value = static_cast<double>(integer);
      } else {
        const auto [ptr, ec] = std::from_chars(begin, end, value);
        if (ec == std::errc::result_out_of_range) {
          throw fail(reader.number(), "value " + quoted(w) + " is out of the range of a double");
        }
        if (ec != std::errc() || ptr != end) throw fail(reader.number(), quoted(w) + " is not a number");
        if (!std::isfinite(value)) throw fail(reader.number(), "value " + quoted(w) + " is not finite");
      }
    }
    const auto r = static_cast<std::int32_t>(i - 1);
    const auto c = static_cast<std::int32_t>(j - 1);
    entries.push_back({r, c, value});
    if (sym == symmetry::symmetric && r != c) entries.push_back({c, r, value});
    ++read;
  }
  if (read < stated) {
    throw fail(reader.number(), "the file ends after " + std::to_string(read) + " of " + std::to_string(stated) +
                                    " entries (truncated?)");
  }
  sparse::csr_matrix m = sparse::from_entries(rows, cols, std::move(entries));
  // Duplicates are summed: finite values can still add up beyond the range of a double.
  for (std::int64_t r = 0; r < m.rows; ++r) {
    for (std::int64_t k = m.row_ptr[r]; k < m.row_ptr[r + 1]; ++k) {
      if (!std::isfinite(m.values[k])) {
        throw fail(reader.number(), "the entries at (" + std::to_string(r + 1) + ", " + std::to_string(m.col[k] + 1) +
                                        ") add up to a value beyond the range of a double (duplicates are summed)");
      }
    }
  }
  return m;
}

}  // namespace

sparse::csr_matrix parse_mtx(std::string_view text, const std::string& name) {
  return io::guard_allocation<mtx_error>(name, [&] { return parse_mtx_text(text, name); });
}

sparse::csr_matrix read_mtx(const std::filesystem::path& path) {
  return io::guard_allocation<mtx_error>(path, [&] {
    std::string text;
    try {
      io::input_file file(path);
      text = file.read_all();
    } catch (const io::io_error& e) {
      throw mtx_error(e.what());
    }
    return parse_mtx_text(text, path.string());
  });
}

}  // namespace scanlab::mtx
