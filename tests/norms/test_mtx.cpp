// The Matrix Market reader of scanlab-cg (apps/cg/mtx.hpp): valid files in each supported
// variant, and every malformed case giving one line that names the file and the line.
#include "cg/mtx.hpp"
#include "cg/sparse.hpp"
#include "common/test_data.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace {

using scanlab::mtx::mtx_error;
using scanlab::mtx::parse_mtx;
using scanlab::sparse::csr_matrix;

// The dense form of a CSR matrix, for comparisons.
std::vector<std::vector<double>> dense(const csr_matrix& m) {
  std::vector<std::vector<double>> d(static_cast<std::size_t>(m.rows), std::vector<double>(m.cols, 0.0));
  for (std::int64_t r = 0; r < m.rows; ++r) {
    for (std::int64_t k = m.row_ptr[r]; k < m.row_ptr[r + 1]; ++k) d[r][m.col[k]] = m.values[k];
  }
  return d;
}

// The error message of parsing `text`, or "" if it parsed.
std::string error_of(const std::string& text) {
  try {
    (void)parse_mtx(text, "m.mtx");
  } catch (const mtx_error& e) {
    return e.what();
  }
  return "";
}

void expect_error(const std::string& text, const std::string& where, const std::string& words) {
  const std::string message = error_of(text);
  ASSERT_FALSE(message.empty()) << "parsed, but should fail with " << where << ": ..." << words;
  EXPECT_EQ(message.rfind(where, 0), 0u) << "message: " << message;
  EXPECT_NE(message.find(words), std::string::npos) << "message: " << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
}

TEST(mtx_reader, GeneralReal) {
  const csr_matrix m = parse_mtx(
      "%%MatrixMarket matrix coordinate real general\n"
      "% a comment\n"
      "\n"
      "2 3 4\n"
      "1 1 1.5\n"
      "2 3 -2e1\n"
      "1 3 +0.25\n"
      "2 1 7\n",
      "m.mtx");
  EXPECT_EQ(m.rows, 2);
  EXPECT_EQ(m.cols, 3);
  EXPECT_EQ(m.nnz(), 4);
  const auto d = dense(m);
  EXPECT_EQ(d[0][0], 1.5);
  EXPECT_EQ(d[0][2], 0.25);
  EXPECT_EQ(d[1][0], 7.0);
  EXPECT_EQ(d[1][2], -20.0);
  // Columns ascend within a row.
  EXPECT_EQ(m.col[0], 0);
  EXPECT_EQ(m.col[1], 2);
}

TEST(mtx_reader, SymmetricExpandsTheStoredTriangle) {
  const csr_matrix m = parse_mtx(
      "%%MatrixMarket matrix coordinate real symmetric\n"
      "3 3 4\n"
      "1 1 2\n"
      "2 1 -1\n"
      "3 3 5\r\n"  // CRLF line end
      "2 3 4\n",   // the upper triangle is accepted too
      "m.mtx");
  EXPECT_EQ(m.nnz(), 6);
  const auto d = dense(m);
  EXPECT_EQ(d[0][1], -1.0);
  EXPECT_EQ(d[1][0], -1.0);
  EXPECT_EQ(d[1][2], 4.0);
  EXPECT_EQ(d[2][1], 4.0);
  EXPECT_EQ(d[2][2], 5.0);
  EXPECT_TRUE(scanlab::sparse::is_symmetric(m));
}

TEST(mtx_reader, PatternIntegerAndDuplicates) {
  const csr_matrix p = parse_mtx("%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 2\n2 1\n", "p.mtx");
  EXPECT_EQ(dense(p)[0][1], 1.0);
  EXPECT_EQ(dense(p)[1][0], 1.0);
  const csr_matrix i = parse_mtx("%%matrixmarket MATRIX Coordinate Integer General\n1 1 2\n1 1 3\n1 1 -5\n", "i.mtx");
  EXPECT_EQ(i.nnz(), 1);  // duplicates are summed
  EXPECT_EQ(i.values[0], -2.0);
}

TEST(mtx_reader, EmptyMatrix) {
  const csr_matrix m = parse_mtx("%%MatrixMarket matrix coordinate real general\n0 0 0\n", "e.mtx");
  EXPECT_EQ(m.rows, 0);
  EXPECT_EQ(m.nnz(), 0);
  EXPECT_EQ(m.row_ptr.size(), 1u);
}

TEST(mtx_reader, BadBanner) {
  expect_error("", "m.mtx:1:", "empty file");
  expect_error("3 3 1\n1 1 1\n", "m.mtx:1:", "not a Matrix Market file");
  expect_error(std::string("\x93NUMPY\x01\x00v\x00{'descr'", 18), "m.mtx:1:", "it starts with \"\\x93NUMPY");
  expect_error(std::string("\x1f\x8b\x08\x00", 4), "m.mtx:1:", "gzip-compressed data");
  expect_error("%%MatrixMarket matrix coordinate real\n1 1 1\n1 1 1\n", "m.mtx:1:", "4 words");
  expect_error("%%MatrixMarket vector coordinate real general\n", "m.mtx:1:", "unsupported object");
  expect_error("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", "m.mtx:1:", "\"array\"");
  expect_error("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", "m.mtx:1:", "complex");
  expect_error("%%MatrixMarket matrix coordinate real skew-symmetric\n", "m.mtx:1:", "skew-symmetric");
  expect_error("%%MatrixMarket matrix coordinate real hermitian\n", "m.mtx:1:", "hermitian");
  expect_error("%%MatrixMarket matrix coordinate real upper\n", "m.mtx:1:", "unknown symmetry");
  expect_error("%%MatrixMarket matrix sparse real general\n", "m.mtx:1:", "unknown format");
}

TEST(mtx_reader, BadSizeLine) {
  const std::string banner = "%%MatrixMarket matrix coordinate real general\n";
  expect_error(banner, "m.mtx:2:", "ends before the size line");
  expect_error(banner + "% only comments\n", "m.mtx:3:", "ends before the size line");
  expect_error(banner + "3 3\n", "m.mtx:2:", "three non-negative integers");
  expect_error(banner + "3 x 1\n", "m.mtx:2:", "three non-negative integers");
  expect_error(banner + "3 -3 1\n", "m.mtx:2:", "three non-negative integers");
  expect_error(banner + "3 3 1 4\n", "m.mtx:2:", "three non-negative integers");
  expect_error(banner + "3000000000 1 0\n", "m.mtx:2:", "too large");
  expect_error("%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n", "m.mtx:2:", "must be square");
}

TEST(mtx_reader, BadEntries) {
  const std::string head = "%%MatrixMarket matrix coordinate real general\n% c\n3 3 2\n";
  expect_error(head + "1 1 1\n4 1 2\n", "m.mtx:5:", "outside the 3 x 3 matrix");
  expect_error(head + "0 1 1\n", "m.mtx:4:", "outside");
  expect_error(head + "1 -1 1\n", "m.mtx:4:", "positive integers");
  expect_error(head + "1 1.5 1\n", "m.mtx:4:", "positive integers");
  expect_error(head + "1 1 abc\n", "m.mtx:4:", "\"abc\" is not a number");
  expect_error(head + "1 1 a\rb\x01\n", "m.mtx:4:", "\"a\\rb\\x01\" is not a number");
  expect_error(head + "1 1 1.0x\n", "m.mtx:4:", "is not a number");
  expect_error(head + "1 1 1e999\n", "m.mtx:4:", "out of the range");
  expect_error(head + "1 1 nan\n", "m.mtx:4:", "not finite");
  expect_error(head + "1 1\n", "m.mtx:4:", "has 3 fields");
  expect_error(head + "1 1 1 1\n", "m.mtx:4:", "has 3 fields");
  expect_error(head + "1 1 1\n", "m.mtx:4:", "ends after 1 of 2 entries");
  expect_error(head + "1 1 1\n2 2 2\n3 3 3\n", "m.mtx:6:", "more entries than the 2");
  expect_error("%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 2.5\n", "m.mtx:3:", "not an integer");
  // Each value finite, their sum not.
  expect_error("%%MatrixMarket matrix coordinate real general\n2 2 3\n2 1 1e308\n1 1 1\n2 1 1e308\n", "m.mtx:5:",
               "the entries at (2, 1) add up to a value beyond the range of a double");
  expect_error("%%MatrixMarket matrix coordinate pattern general\n1 1 1\n1 1 2.5\n", "m.mtx:3:", "has 2 fields");
}

// A size line may claim any number of rows; CSR stores an offset for each, so the rows are
// bounded by the file's size: a 61-byte file cannot make the reader allocate 17 GB of row
// offsets (2^31 - 1 of them), nor a small one 1.6 GB for 2e8 rows with one entry.
TEST(mtx_reader, RowsBoundedByTheFileSize) {
  const std::string banner = "%%MatrixMarket matrix coordinate real general\n";
  expect_error(banner + "2147483647 1 0\n", "m.mtx:2:", "2147483647 rows is more than a file of 61 bytes");
  expect_error(banner + "200000000 200000000 1\n1 1 1\n", "m.mtx:2:", "200000000 rows is more than a file of");
  expect_error("%%MatrixMarket matrix coordinate pattern symmetric\n% a comment\n100 100 0\n", "m.mtx:3:",
               "100 rows is more than a file of 73 bytes");
  // Empty rows are still read where the file is large enough to account for them.
  const csr_matrix m = parse_mtx(banner + "40 40 1\n1 1 1\n", "m.mtx");
  EXPECT_EQ(m.rows, 40);
  EXPECT_EQ(m.nnz(), 1);
  EXPECT_EQ(m.row_ptr.size(), 41u);
}

// The error message of reading a file, or "" if it was read.
std::string read_error_of(const std::filesystem::path& path) {
  try {
    (void)scanlab::mtx::read_mtx(path);
  } catch (const mtx_error& e) {
    return e.what();
  }
  return "";
}

TEST(mtx_reader, FilesOnDisk) {
  const std::filesystem::path dir = scanlab::test::data_dir();
  const csr_matrix m = scanlab::mtx::read_mtx(dir / "norms_spd6.mtx");
  EXPECT_EQ(m.rows, 6);
  EXPECT_EQ(m.nnz(), 20);  // 6 diagonal + 7 off-diagonal entries mirrored
  EXPECT_TRUE(scanlab::sparse::is_symmetric(m));
  EXPECT_NE(read_error_of(dir / "norms_truncated.mtx").find("norms_truncated.mtx:5: the file ends after 3 of 4 entries"),
            std::string::npos);
  EXPECT_NE(read_error_of(dir / "no_such_file.mtx").find("no_such_file.mtx: cannot open"), std::string::npos);
  // 2^31 - 1 rows in 61 bytes: 17 GB of row offsets, refused from the size line.
  const std::string hostile = read_error_of(dir / "cg_hostile_size.mtx");
  EXPECT_NE(hostile.find("cg_hostile_size.mtx:2: 2147483647 rows is more than a file of 61 bytes"), std::string::npos)
      << hostile;
}

}  // namespace
