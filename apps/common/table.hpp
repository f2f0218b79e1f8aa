// A plain-text table with aligned columns, for app and benchmark output.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace scanlab {

class text_table {
 public:
  explicit text_table(std::vector<std::string> header) : header_(std::move(header)) {}
  // A row with fewer cells than the header is padded with empty cells; more is an error.
  void add_row(std::vector<std::string> cells);
  // Columns are left-aligned when any cell is non-numeric, otherwise right-aligned.
  void print(std::ostream& out) const;
  [[nodiscard]] std::size_t rows() const { return rows_.size(); }

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// "1.234" style with `digits` after the point.
std::string format_fixed(double value, int digits);
// A time in milliseconds shown in a readable unit: "812 ns", "14.2 us", "0.881 ms", "6.42 ms".
std::string format_time_ms(double ms);
// An element count: powers of two as "2^28", others as plain digits.
std::string format_count(std::int64_t n);

}  // namespace scanlab
