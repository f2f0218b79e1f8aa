#include "common/table.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace {

TEST(TextTable, AlignsColumns) {
  scanlab::text_table table({"variant", "n", "GB/s"});
  table.add_row({"production", "2^28", "3012"});
  table.add_row({"ladder/interleaved", "1024", "12"});
  std::ostringstream out;
  table.print(out);
  const std::string text = out.str();
  // Header, rule, two rows.
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 4);
  // Text columns are left-aligned, numeric ones right-aligned.
  EXPECT_NE(text.find("production          "), std::string::npos) << text;
  EXPECT_NE(text.find("  3012\n"), std::string::npos) << text;
  EXPECT_NE(text.find("    12\n"), std::string::npos) << text;
}

TEST(TextTable, RejectsTooManyCells) {
  scanlab::text_table table({"a"});
  EXPECT_THROW(table.add_row({"1", "2"}), std::invalid_argument);
}

TEST(Format, Counts) {
  EXPECT_EQ(scanlab::format_count(1 << 20), "2^20");
  EXPECT_EQ(scanlab::format_count(std::int64_t{1} << 40), "2^40");
  EXPECT_EQ(scanlab::format_count(1000), "1000");
  EXPECT_EQ(scanlab::format_count(1), "1");
  EXPECT_EQ(scanlab::format_count(0), "0");
}

TEST(Format, Times) {
  EXPECT_EQ(scanlab::format_time_ms(0.0005), "500 ns");
  EXPECT_EQ(scanlab::format_time_ms(0.0142), "14.2 us");
  EXPECT_EQ(scanlab::format_time_ms(0.881), "0.881 ms");
  EXPECT_EQ(scanlab::format_time_ms(12.34), "12.3 ms");
}

}  // namespace
