#include "common/table.hpp"

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <stdexcept>

namespace scanlab {

namespace {

bool is_numeric_cell(const std::string& cell) {
  if (cell.empty()) return true;
  return std::all_of(cell.begin(), cell.end(), [](char c) {
    return (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == '^' || c == 'e' || c == 'x' ||
           c == '%' || c == ' ' || c == 'u' || c == 'n' || c == 'm' || c == 's';
  });
}

}  // namespace

void text_table::add_row(std::vector<std::string> cells) {
  if (cells.size() > header_.size()) throw std::invalid_argument("text_table: row has more cells than the header");
  cells.resize(header_.size());
  rows_.push_back(std::move(cells));
}

void text_table::print(std::ostream& out) const {
  const std::size_t columns = header_.size();
  std::vector<std::size_t> width(columns);
  std::vector<bool> right(columns, true);
  for (std::size_t c = 0; c < columns; ++c) {
    width[c] = header_[c].size();
    for (const auto& row : rows_) {
      width[c] = std::max(width[c], row[c].size());
      if (!is_numeric_cell(row[c])) right[c] = false;
    }
  }
  auto print_row = [&](const std::vector<std::string>& row) {
    for (std::size_t c = 0; c < columns; ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      if (c > 0) out << "  ";
      out << (right[c] ? pad + row[c] : row[c] + (c + 1 < columns ? pad : ""));
    }
    out << '\n';
  };
  print_row(header_);
  std::size_t total = 0;
  for (std::size_t w : width) total += w;
  out << std::string(total + 2 * (columns > 0 ? columns - 1 : 0), '-') << '\n';
  for (const auto& row : rows_) print_row(row);
}

std::string format_fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

std::string format_time_ms(double ms) {
  if (ms < 0.001) return format_fixed(ms * 1e6, 0) + " ns";
  if (ms < 0.1) return format_fixed(ms * 1e3, 1) + " us";
  if (ms < 10) return format_fixed(ms, 3) + " ms";
  return format_fixed(ms, 1) + " ms";
}

std::string format_count(std::int64_t n) {
  if (n > 1 && (n & (n - 1)) == 0) {
    int bits = 0;
    while ((std::int64_t{1} << bits) < n) ++bits;
    return "2^" + std::to_string(bits);
  }
  return std::to_string(n);
}

}  // namespace scanlab
