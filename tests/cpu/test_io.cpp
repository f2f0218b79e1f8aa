// Dataset I/O: .npy reading and writing, atomic output, raw binary and text files, convert(),
// segment keys (load_keys, keys_as, run_offsets).
// CPU only. Every test works in its own temporary directory, removed afterwards.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <limits>
#include <new>
#include <random>
#include <stdexcept>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/array.hpp"
#include "common/atomic_file.hpp"
#include "common/dataset.hpp"
#include "common/file_format.hpp"
#include "common/mapped_input.hpp"
#include "common/npy.hpp"
#include "common/test_util.hpp"
#include "common/values.hpp"

namespace fs = std::filesystem;
using namespace scanlab::io;

namespace {

// ---- Helpers ----

class io_test : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "." + info->name();
    for (char& c : name) {
      if (c == '/') c = '_';
    }
    dir_ = fs::temp_directory_path() / ("scanlab_test_io_" + std::to_string(::getpid()) + "_" + name);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  fs::path file(const std::string& name) const { return dir_ / name; }

  // The names in the test directory (temporary files included).
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  fs::path dir_;
};

void write_bytes(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

template <class T>
std::string bytes_of(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

// A .npy file by hand: magic, version, header length (2 bytes for 1.x, 4 for 2.x/3.x), header, data.
std::string npy_bytes(int major, std::string_view header, std::string_view data = {}, int minor = 0) {
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += static_cast<char>(minor);
  const auto length = static_cast<std::uint32_t>(header.size());
  const int length_bytes = major == 1 ? 2 : 4;
  for (int i = 0; i < length_bytes; ++i) out += static_cast<char>((length >> (8 * i)) & 0xff);
  out += header;
  out += data;
  return out;
}

// Runs `action`, expecting an io_error with a one-line message containing every phrase.
void expect_io_error(const std::function<void()>& action, std::initializer_list<std::string_view> phrases) {
  try {
    action();
    ADD_FAILURE() << "no io_error thrown; expected one containing \"" << *phrases.begin() << "\"";
  } catch (const io_error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << "message is not one line: " << message;
    for (std::string_view phrase : phrases) {
      EXPECT_NE(message.find(phrase), std::string::npos) << "\"" << phrase << "\" not in: " << message;
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw something other than io_error: " << e.what();
  }
}

// A host_array of random bytes (every bit pattern, so NaNs too: compared bytewise).
host_array random_array(dtype type, std::vector<std::int64_t> shape, std::uint64_t seed) {
  host_array array(type, std::move(shape));
  std::mt19937_64 rng(seed);
  std::size_t i = 0;
  for (; i + 8 <= array.bytes(); i += 8) {
    const std::uint64_t bits = rng();
    std::memcpy(array.data() + i, &bits, 8);
  }
  for (; i < array.bytes(); ++i) array.data()[i] = static_cast<std::byte>(rng());
  return array;
}

bool same_bytes(const host_array& a, const host_array& b) {
  return a.type() == b.type() && a.shape() == b.shape() && std::memcmp(a.data(), b.data(), a.bytes()) == 0;
}

template <class T>
host_array array_of(std::vector<T> values) {
  host_array array(dtype_of<T>(), {static_cast<std::int64_t>(values.size())});
  if (!values.empty()) std::memcpy(array.data(), values.data(), array.bytes());
  return array;
}

template <class T>
std::vector<T> values_of(const host_array& array) {
  const auto view = array.as<T>();
  return {view.begin(), view.end()};
}

// ---- .npy round trips over every dtype ----

template <class T>
class npy_round_trip : public io_test {};
using element_types = ::testing::Types<std::uint8_t, std::int8_t, std::uint16_t, std::int16_t, std::uint32_t,
                                       std::int32_t, std::uint64_t, std::int64_t, float, double>;
TYPED_TEST_SUITE(npy_round_trip, element_types);

TYPED_TEST(npy_round_trip, shapes_including_empty_and_large) {
  const std::uint64_t seed = scanlab::test::test_seed();
  SCOPED_TRACE(scanlab::test::seed_trace(seed));
  const dtype type = dtype_of<TypeParam>();
  const std::vector<std::vector<std::int64_t>> shapes = {{0},     {1},    {7},    {63},    {64},     {65},
                                                         {3, 4},  {1, 1}, {0, 5}, {3, 0},  {17, 33}, {1000000},
                                                         {1000, 1000}, {2, 3, 5}, {4, 0, 3}, {1, 1, 1}};
  for (const auto& shape : shapes) {
    ::testing::Message trace;
    trace << "shape";
    for (const std::int64_t extent : shape) trace << " " << extent;
    SCOPED_TRACE(trace);
    const host_array written = random_array(type, shape, seed + shape[0]);
    const fs::path path = this->file("a.npy");
    write_npy(path, written);

    const npy_header header = read_npy_header(path);
    EXPECT_EQ(header.data_offset % 64, 0u);
    EXPECT_EQ(header.version_major, 1);
    EXPECT_EQ(header.type, type);
    EXPECT_EQ(header.shape, shape);
    EXPECT_EQ(fs::file_size(path), header.data_offset + written.bytes());

    const host_array read = read_npy(path);
    EXPECT_TRUE(same_bytes(written, read));
    EXPECT_EQ(this->listing(), std::vector<std::string>{"a.npy"});  // no temporary left
  }
}

TYPED_TEST(npy_round_trip, streaming_writer_in_uneven_pieces) {
  const std::uint64_t seed = scanlab::test::test_seed();
  SCOPED_TRACE(scanlab::test::seed_trace(seed));
  const host_array written = random_array(dtype_of<TypeParam>(), {123, 45}, seed);
  const fs::path path = this->file("s.npy");
  {
    npy_writer writer(path, written.type(), written.shape());
    std::size_t offset = 0;
    std::size_t piece = 1;
    while (offset < written.bytes()) {
      const std::size_t n = std::min(piece, written.bytes() - offset);
      writer.write(written.data() + offset, n);
      offset += n;
      piece = piece * 3 + 1;
    }
    EXPECT_EQ(writer.data_written(), written.bytes());
    writer.commit();
  }
  EXPECT_TRUE(same_bytes(written, read_npy(path)));
  EXPECT_EQ(read_bytes(path), make_npy_header(written.type(), written.shape()) +
                                  std::string(reinterpret_cast<const char*>(written.data()), written.bytes()));
}

// ---- The header as numpy.save writes it ----

using npy_format = io_test;

TEST_F(npy_format, matches_numpy_byte_for_byte) {
  // np.save("a.npy", np.array([1, 2, 3], dtype="<i4")) with NumPy 1.24: the 57-character dict,
  // 20 spare spaces for growing the first axis (21 digits - len("3")), 40 spaces of padding
  // and '\n': a header of 118 bytes (length 'v', 0x76), data at offset 128.
  const std::string dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }";
  ASSERT_EQ(dict.size(), 57u);
  const std::string expected_header = std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict + std::string(60, ' ') + "\n";
  const std::string expected = expected_header + std::string("\x01\0\0\0\x02\0\0\0\x03\0\0\0", 12);

  EXPECT_EQ(make_npy_header(dtype::i32, {3}), expected_header);
  write_npy(file("a.npy"), array_of<std::int32_t>({1, 2, 3}));
  EXPECT_EQ(read_bytes(file("a.npy")), expected);

  // np.zeros((2, 3)): '<f8' and the tuple written "(2, 3)".
  const std::string dict2 = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }";
  EXPECT_EQ(make_npy_header(dtype::f64, {2, 3}),
            std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict2 + std::string(58, ' ') + "\n");
  // A 1-byte type is '|u1'.
  EXPECT_NE(make_npy_header(dtype::u8, {5}).find("'descr': '|u1'"), std::string::npos);
}

TEST_F(npy_format, header_always_padded_to_64) {
  for (dtype type : all_dtypes) {
    for (std::vector<std::int64_t> shape :
         {std::vector<std::int64_t>{0}, {9}, {12345678}, {std::numeric_limits<std::int32_t>::max()}, {3, 5},
          {1234567890123, 7}, {0, 0}}) {
      const std::string header = make_npy_header(type, shape);
      EXPECT_EQ(header.size() % 64, 0u);
      EXPECT_EQ(header.back(), '\n');
      EXPECT_EQ(header.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
      EXPECT_EQ(static_cast<std::size_t>(static_cast<unsigned char>(header[8]) |
                                         (static_cast<unsigned char>(header[9]) << 8)),
                header.size() - 10);
    }
  }
  EXPECT_THROW(make_npy_header(dtype::f32, {}), std::invalid_argument);
  EXPECT_THROW(make_npy_header(dtype::f32, {1, 2, 3, 4}), std::invalid_argument);
  // np.zeros((2, 3, 4), dtype='<f4'): 3-D, the most the apps take ([batch, length, channels])
  EXPECT_NE(make_npy_header(dtype::f32, {2, 3, 4}).find("'shape': (2, 3, 4), }"), std::string::npos);
}

// ---- Reading files written by hand ----

using npy_read = io_test;

TEST_F(npy_read, versions_1_2_3) {
  const std::vector<double> values = {1.5, -2.25, 1e300};
  const std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }";
  for (int major : {1, 2, 3}) {
    SCOPED_TRACE(major);
    write_bytes(file("v.npy"), npy_bytes(major, dict + "\n", bytes_of(values)));
    const host_array a = read_npy(file("v.npy"));
    EXPECT_EQ(read_npy_header(file("v.npy")).version_major, major);
    EXPECT_EQ(values_of<double>(a), values);
  }
  // 3.0: a UTF-8 header (an extra key with a non-ASCII value is ignored).
  write_bytes(file("u.npy"),
              npy_bytes(3, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'note': 'caf\xc3\xa9', }\n",
                        bytes_of(values)));
  EXPECT_EQ(values_of<double>(read_npy(file("u.npy"))), values);
}

TEST_F(npy_read, odd_paddings_and_spellings) {
  const std::vector<std::int16_t> values = {1, -2, 300, -32768, 32767};
  const std::string data = bytes_of(values);
  const std::vector<std::string> headers = {
      "{'descr': '<i2', 'fortran_order': False, 'shape': (5,), }",        // no padding at all
      "{'descr': '<i2', 'fortran_order': False, 'shape': (5,), }\n",      // just the newline
      "{'descr': '<i2', 'fortran_order': False, 'shape': (5,)}   \t\n",  // no trailing comma, tab
      "{'descr':'<i2','fortran_order':False,'shape':(5,)}" + std::string(4000, ' ') + "\n",  // long padding
      "  {\"shape\": (5,), \"descr\": \"<i2\", \"fortran_order\": False}\n",  // double quotes, any order
      "{'descr': '<i2', 'fortran_order': False, 'shape': (5L,), }\n",     // Python 2 long
      "{'descr': '=i2', 'fortran_order': False, 'shape': [5], }\n",       // native order, list shape
      "{'descr': 'i2', 'fortran_order': False, 'shape': (5,), 'extra': (1, [2, None]), }\n",
      "{'descr': '<i2', 'fortran_order': False, 'shape': (5,), }" + std::string(7, '\0'),  // NUL padding
  };
  for (const std::string& header : headers) {
    SCOPED_TRACE(header.substr(0, 70));
    write_bytes(file("p.npy"), npy_bytes(1, header, data));
    const host_array a = read_npy(file("p.npy"));
    EXPECT_EQ(a.shape(), (std::vector<std::int64_t>{5}));
    EXPECT_EQ(values_of<std::int16_t>(a), values);
  }
}

TEST_F(npy_read, one_byte_types_any_order) {
  for (std::string descr : {"|u1", "<u1", "=u1", ">u1", "u1"}) {
    write_bytes(file("b.npy"),
                npy_bytes(1, "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (2,), }\n", "\x07\xff"));
    EXPECT_EQ(values_of<std::uint8_t>(read_npy(file("b.npy"))), (std::vector<std::uint8_t>{7, 255})) << descr;
  }
  write_bytes(file("c.npy"), npy_bytes(1, "{'descr': '|i1', 'fortran_order': False, 'shape': (2,), }\n", "\x07\xff"));
  EXPECT_EQ(values_of<std::int8_t>(read_npy(file("c.npy"))), (std::vector<std::int8_t>{7, -1}));
}

TEST_F(npy_read, two_d_and_scalar) {
  const std::vector<float> values = {1, 2, 3, 4, 5, 6};
  write_bytes(file("m.npy"), npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n",
                                       bytes_of(values)));
  const host_array m = read_npy(file("m.npy"));
  EXPECT_EQ(m.shape(), (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(values_of<float>(m), values);

  // A 0-d scalar reads as one element, 1-D.
  write_bytes(file("s.npy"), npy_bytes(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (), }\n",
                                       bytes_of(std::vector<std::int64_t>{-42})));
  const host_array s = read_npy(file("s.npy"));
  EXPECT_EQ(s.shape(), (std::vector<std::int64_t>{1}));
  EXPECT_EQ(values_of<std::int64_t>(s), (std::vector<std::int64_t>{-42}));

  // Data need not be aligned: a 50-byte header puts it at offset 60.
  const std::string tight = "{'descr':'<f4','fortran_order':False,'shape':(6,)}";
  ASSERT_EQ(tight.size(), 50u);
  write_bytes(file("u.npy"), npy_bytes(1, tight, bytes_of(values)));
  EXPECT_EQ(read_npy_header(file("u.npy")).data_offset, 60u);
  EXPECT_EQ(values_of<float>(read_npy(file("u.npy"))), values);
}

// ---- Malformed files: one io_error each, naming the file and the problem ----

TEST_F(npy_read, malformed_files) {
  const std::string f4_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }\n";
  const std::string f4_data(16, '\0');
  struct bad_case {
    std::string label;
    std::string bytes;
    std::vector<std::string_view> phrases;
  };
  const auto with_dict = [&](const std::string& dict, const std::string& data = std::string(16, '\0')) {
    return npy_bytes(1, dict, data);
  };
  const std::vector<bad_case> cases = {
      {"empty", "", {"bad magic"}},
      {"zip", std::string("PK\x03\x04 not numpy at all", 22), {"bad magic"}},
      {"text", "1,2,3\n4,5,6\n", {"bad magic"}},
      {"magic prefix only", std::string("\x93NUM", 4), {"truncated header"}},
      {"no length", std::string("\x93NUMPY\x01\x00\x10", 9), {"truncated header"}},
      {"version 4.0", npy_bytes(4, f4_dict, f4_data), {"unsupported .npy version 4.0"}},
      {"version 1.1", npy_bytes(1, f4_dict, f4_data, 1), {"unsupported .npy version 1.1"}},
      {"version 0.0", npy_bytes(0, f4_dict, f4_data), {"unsupported .npy version 0.0"}},
      {"header cut", npy_bytes(1, f4_dict).substr(0, 30), {"truncated header", "needs"}},
      {"header too long", npy_bytes(2, std::string(20000, ' ')), {"header length 20000", "10000"}},
      {"not a dict", with_dict("[1, 2, 3]\n"), {"header is not a valid dict"}},
      {"garbage", with_dict("{'descr': <f4, }\n"), {"header is not a valid dict"}},
      {"unclosed", with_dict("{'descr': '<f4', 'shape': (4,\n"), {"header is not a valid dict"}},
      {"trailing junk", with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), } x\n"),
       {"header is not a valid dict"}},
      {"missing shape", with_dict("{'descr': '<f4', 'fortran_order': False}\n"), {"missing key 'shape'"}},
      {"missing descr", with_dict("{'fortran_order': False, 'shape': (4,)}\n"), {"missing key 'descr'"}},
      {"missing fortran", with_dict("{'descr': '<f4', 'shape': (4,)}\n"), {"missing key 'fortran_order'"}},
      {"shape not tuple", with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': 4}\n"), {"'shape' is"}},
      {"shape of strings", with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': ('4',)}\n"), {"'shape'"}},
      {"shape float", with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (4.0,)}\n"),
       {"header is not a valid dict"}},
      {"negative extent", with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (-4,)}\n"), {"negative"}},
      {"fortran not bool", with_dict("{'descr': '<f4', 'fortran_order': 0, 'shape': (4,)}\n"), {"'fortran_order'"}},
      {"descr with a newline", with_dict("{'descr': '<\n\x01" "f4', 'fortran_order': False, 'shape': (2,)}\n"),
       {"unsupported dtype '<\\n\\x01f4'"}},
      {"character not in Python", with_dict("{'descr': '<f4', 'fortran_order': \x0b}\n"),
       {"unexpected character '\\x0b'"}},
      // (<c8 and <f2 are read: linrec_dtypes_test; complex256 and float128 are not)
      {"complex256", with_dict("{'descr': '<c32', 'fortran_order': False, 'shape': (2,)}\n"),
       {"unsupported dtype '<c32'", "<f4"}},
      {"float128", with_dict("{'descr': '<f16', 'fortran_order': False, 'shape': (1,)}\n"), {"unsupported dtype '<f16'"}},
      {"bool", with_dict("{'descr': '|b1', 'fortran_order': False, 'shape': (16,)}\n"), {"unsupported dtype '|b1'"}},
      {"bytes", with_dict("{'descr': '|S4', 'fortran_order': False, 'shape': (4,)}\n"), {"unsupported dtype '|S4'"}},
      {"pipe multibyte", with_dict("{'descr': '|i4', 'fortran_order': False, 'shape': (4,)}\n"),
       {"unsupported dtype '|i4'"}},
      {"structured", with_dict("{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (4,)}\n"),
       {"structured"}},
      {"object", with_dict("{'descr': '|O', 'fortran_order': False, 'shape': (2,)}\n"), {"object dtype '|O'"}},
      {"big-endian", with_dict("{'descr': '>i4', 'fortran_order': False, 'shape': (4,)}\n"),
       {"big-endian dtype '>i4'"}},
      {"fortran order", with_dict("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2)}\n"),
       {"fortran_order True"}},
      {"4-D", with_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4, 1)}\n"),
       {"4-D shape (2, 3, 4, 1)", "only 1-D to 3-D"}},
      {"huge shape", with_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 8)}\n"),
       {"too large"}},
      {"short data", with_dict(f4_dict, std::string(15, '\0')), {"truncated data", "needs 16 bytes, file has 15"}},
      {"no data", with_dict(f4_dict, ""), {"truncated data", "file has 0"}},
      {"trailing bytes", with_dict(f4_dict, std::string(20, '\0')),
       {"shape and size disagree", "needs 16 bytes, file has 20"}},
      {"claims 1e12 elements", with_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,)}\n"),
       {"truncated data", "needs 8000000000000 bytes"}},
  };
  for (const bad_case& c : cases) {
    SCOPED_TRACE(c.label);
    const fs::path path = file("bad_" + std::to_string(&c - cases.data()) + ".npy");
    write_bytes(path, c.bytes);
    expect_io_error([&] { (void)read_npy(path); }, {path.filename().string()});
    for (std::string_view phrase : c.phrases) expect_io_error([&] { (void)read_npy(path); }, {phrase});
    // The same bytes from memory: the same message.
    std::string from_file;
    try {
      (void)read_npy(path);
    } catch (const io_error& e) {
      from_file = e.what();
    }
    expect_io_error([&] { (void)parse_npy(c.bytes, path); }, {from_file});
  }
}

TEST_F(npy_read, from_memory_as_from_a_file) {
  const std::uint64_t seed = scanlab::test::test_seed();
  SCOPED_TRACE(scanlab::test::seed_trace(seed));
  const host_array written = random_array(dtype::i16, {3, 5}, seed);
  write_npy(file("m.npy"), written);
  const std::string bytes = read_bytes(file("m.npy"));
  EXPECT_TRUE(same_bytes(parse_npy(bytes, "mem.npy"), written));
  expect_io_error([&] { (void)parse_npy(bytes.substr(0, bytes.size() - 1), "mem.npy"); },
                  {"mem.npy: truncated data", "needs 30 bytes, file has 29"});
  expect_io_error([&] { (void)parse_npy(bytes.substr(0, 40), "mem.npy"); }, {"mem.npy: truncated header"});
}

// A zero extent makes an empty array whatever the other extent says: a valid 128-byte file of
// shape (2^60, 0) reads as such, and nothing is sized by the 2^60.
TEST_F(npy_read, empty_shape_with_a_huge_extent) {
  const std::int64_t huge = std::int64_t{1} << 60;
  for (const std::vector<std::int64_t>& shape : {std::vector<std::int64_t>{huge, 0}, {0, huge}}) {
    write_bytes(file("e.npy"), make_npy_header(dtype::f32, shape));
    const host_array a = read_npy(file("e.npy"));
    EXPECT_EQ(a.shape(), shape);
    EXPECT_EQ(a.size(), 0);
    EXPECT_EQ(a.bytes(), 0u);
  }
}

TEST_F(npy_read, truncated_data_message) {
  const fs::path path = file("data.npy");
  write_bytes(path, npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1000,), }\n",
                              std::string(3996, '\0')));
  try {
    (void)read_npy(path);
    FAIL() << "no error";
  } catch (const io_error& e) {
    EXPECT_EQ(std::string(e.what()),
              path.string() + ": truncated data: shape (1000,) of <f4 needs 4000 bytes, file has 3996");
  }
}

TEST_F(npy_read, missing_or_not_a_file) {
  expect_io_error([&] { (void)read_npy(file("absent.npy")); }, {"absent.npy", "cannot open", "No such file"});
  fs::create_directory(file("folder.npy"));
  expect_io_error([&] { (void)read_npy(file("folder.npy")); }, {"folder.npy", "is a directory"});
}

// ---- npy_writer and atomic output ----

using npy_writer_test = io_test;

TEST_F(npy_writer_test, destroyed_without_commit_leaves_nothing) {
  {
    npy_writer writer(file("w.npy"), dtype::i32, {4});
    const std::int32_t values[4] = {1, 2, 3, 4};
    writer.write(values, sizeof values);
    EXPECT_EQ(listing().size(), 1u);  // the temporary file
    EXPECT_EQ(listing()[0].rfind(".w.npy.tmp.", 0), 0u) << listing()[0];
  }
  EXPECT_TRUE(listing().empty());
}

TEST_F(npy_writer_test, too_few_bytes_is_an_error_and_leaves_nothing) {
  npy_writer writer(file("w.npy"), dtype::f64, {3, 2});
  const double values[5] = {};
  writer.write(values, sizeof values);
  expect_io_error([&] { writer.commit(); }, {"w.npy", "40 of the 48 data bytes", "(3, 2)"});
  EXPECT_TRUE(listing().empty());  // removed at once, not only when the writer dies
  expect_io_error([&] { writer.commit(); }, {"w.npy"});
  EXPECT_TRUE(listing().empty());
}

TEST_F(npy_writer_test, too_many_bytes_is_an_error_and_leaves_nothing) {
  npy_writer writer(file("w.npy"), dtype::u16, {3});
  const std::uint16_t values[4] = {};
  writer.write(values, 4);
  expect_io_error([&] { writer.write(values, 4); }, {"w.npy", "more than the 6"});
  EXPECT_TRUE(listing().empty());
  expect_io_error([&] { writer.write(values, 2); }, {"w.npy"});
  expect_io_error([&] { writer.commit(); }, {"w.npy"});
  EXPECT_TRUE(listing().empty());
}

TEST_F(npy_writer_test, failed_write_keeps_existing_target) {
  const fs::path path = file("keep.npy");
  write_npy(path, array_of<float>({1, 2, 3}));
  const std::string before = read_bytes(path);
  {
    npy_writer writer(path, dtype::f32, {5});
    const float values[5] = {9, 9, 9, 9, 9};
    writer.write(values, 8);
    expect_io_error([&] { writer.commit(); }, {"keep.npy"});
  }
  {
    npy_writer writer(path, dtype::f32, {5});
    const float values[5] = {9, 9, 9, 9, 9};
    writer.write(values, sizeof values);
    // destroyed without commit
  }
  EXPECT_EQ(read_bytes(path), before);
  EXPECT_EQ(listing(), std::vector<std::string>{"keep.npy"});

  // A commit replaces it.
  npy_writer writer(path, dtype::f32, {1});
  const float one = 7;
  writer.write(&one, sizeof one);
  writer.commit();
  EXPECT_EQ(values_of<float>(read_npy(path)), std::vector<float>{7});
  EXPECT_EQ(listing(), std::vector<std::string>{"keep.npy"});
}

TEST_F(npy_writer_test, moved_writer_still_commits) {
  npy_writer first(file("m.npy"), dtype::i8, {2});
  npy_writer second = std::move(first);
  const std::int8_t values[2] = {-1, 1};
  second.write(values, 2);
  second.commit();
  EXPECT_EQ(values_of<std::int8_t>(read_npy(file("m.npy"))), (std::vector<std::int8_t>{-1, 1}));
  EXPECT_EQ(listing(), std::vector<std::string>{"m.npy"});
}

TEST_F(npy_writer_test, bad_directory_or_shape) {
  expect_io_error([&] { npy_writer w(file("missing/out.npy"), dtype::f32, {1}); },
                  {"missing/out.npy", "does not exist"});
  expect_io_error([&] { npy_writer w(file("tesseract.npy"), dtype::f32, {2, 2, 2, 2}); }, {"tesseract.npy", "4-D"});
  expect_io_error([&] { npy_writer w(file("neg.npy"), dtype::f32, {-1}); }, {"neg.npy", "negative"});
  EXPECT_TRUE(listing().empty());
  expect_io_error([&] { write_npy(file("missing/out.npy"), array_of<float>({1})); },
                  {"missing/out.npy", "does not exist"});
}

using atomic_file_test = io_test;

TEST_F(atomic_file_test, writes_and_replaces) {
  write_file_atomically(file("r.json"), "{\"a\": 1}\n");
  EXPECT_EQ(read_bytes(file("r.json")), "{\"a\": 1}\n");
  write_file_atomically(file("r.json"), "");
  EXPECT_EQ(read_bytes(file("r.json")), "");
  EXPECT_EQ(listing(), std::vector<std::string>{"r.json"});
}

TEST_F(atomic_file_test, temp_file_beside_target) {
  atomic_file f(file("t.txt"));
  EXPECT_EQ(f.temp_path().parent_path(), dir_);
  const std::string name = f.temp_path().filename().string();
  EXPECT_EQ(name.rfind(".t.txt.tmp." + std::to_string(::getpid()) + ".", 0), 0u) << name;
  EXPECT_TRUE(fs::exists(f.temp_path()));
  f.write("abc");
  EXPECT_EQ(f.bytes_written(), 3u);
  const fs::path temp = f.temp_path();
  f.commit();
  EXPECT_FALSE(fs::exists(temp));
  EXPECT_EQ(read_bytes(file("t.txt")), "abc");
  expect_io_error([&] { f.write("more"); }, {"t.txt"});
}

TEST_F(atomic_file_test, two_at_once_get_different_temp_files) {
  atomic_file a(file("x"));
  atomic_file b(file("x"));
  EXPECT_NE(a.temp_path(), b.temp_path());
  a.write("a");
  b.write("b");
  a.commit();
  b.commit();
  EXPECT_EQ(read_bytes(file("x")), "b");
}

TEST_F(atomic_file_test, relative_path_in_current_directory) {
  const fs::path saved = fs::current_path();
  fs::current_path(dir_);
  write_file_atomically("plain.txt", "hello");
  fs::current_path(saved);
  EXPECT_EQ(read_bytes(file("plain.txt")), "hello");
}

TEST_F(atomic_file_test, unusable_targets) {
  expect_io_error([&] { write_file_atomically(file("nope/r.json"), "x"); }, {"nope/r.json", "does not exist"});
  write_bytes(file("plain"), "x");
  expect_io_error([&] { write_file_atomically(file("plain/r.json"), "x"); }, {"plain/r.json", "not a directory"});
  fs::create_directory(file("sub"));
  expect_io_error([&] { write_file_atomically(file("sub"), "x"); }, {"sub", "is a directory"});
  expect_io_error([&] { write_file_atomically(dir_ / "", "x"); }, {"not a file name"});
}

TEST_F(atomic_file_test, unwritable_directory) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: directory permissions are not enforced";
  fs::create_directory(file("ro"));
  fs::permissions(file("ro"), fs::perms::owner_read | fs::perms::owner_exec);
  expect_io_error([&] { write_file_atomically(file("ro/r.json"), "x"); }, {"ro/r.json", "Permission denied"});
  fs::permissions(file("ro"), fs::perms::owner_all);
}

// ---- Raw binary ----

using raw_test = io_test;

TEST_F(raw_test, round_trip_and_size_checks) {
  const std::uint64_t seed = scanlab::test::test_seed();
  SCOPED_TRACE(scanlab::test::seed_trace(seed));
  for (dtype type : all_dtypes) {
    for (const char* ext : {".bin", ".raw", ".dat"}) {
      const host_array written = random_array(type, {1001}, seed);
      const fs::path path = file(std::string("r") + ext);
      write_dataset(path, written);
      EXPECT_EQ(fs::file_size(path), written.bytes());
      EXPECT_TRUE(same_bytes(written, read_raw(path, type)));
      EXPECT_TRUE(same_bytes(written, read_dataset(path, {.type = type})));
    }
  }
  write_bytes(file("odd.bin"), std::string(10, 'x'));
  expect_io_error([&] { (void)read_raw(file("odd.bin"), dtype::f32); },
                  {"odd.bin", "10 bytes", "not a whole number of float32"});
  EXPECT_EQ(read_raw(file("odd.bin"), dtype::i16).size(), 5);

  write_bytes(file("empty.bin"), "");
  EXPECT_EQ(read_raw(file("empty.bin"), dtype::f64).size(), 0);
  expect_io_error([&] { (void)read_raw(file("none.bin"), dtype::f64); }, {"none.bin", "cannot open"});
}

// ---- Text ----

using text_test = io_test;

TEST_F(text_test, one_value_per_line) {
  write_bytes(file("v.txt"), "1\n2.5\n-3\n+4\n1e3\n");
  EXPECT_EQ(values_of<double>(read_text(file("v.txt"), dtype::f64, "")),
            (std::vector<double>{1, 2.5, -3, 4, 1000}));
  write_bytes(file("n.txt"), "10\n-20\n30");  // no final newline
  EXPECT_EQ(values_of<std::int32_t>(read_text(file("n.txt"), dtype::i32, "")),
            (std::vector<std::int32_t>{10, -20, 30}));
  write_bytes(file("e.txt"), "");
  EXPECT_EQ(read_text(file("e.txt"), dtype::f32, "").size(), 0);
  write_bytes(file("c.txt"), "# only a comment\n\n");
  EXPECT_EQ(read_text(file("c.txt"), dtype::f32, "").size(), 0);
}

TEST_F(text_test, blank_comment_lines_spaces_and_crlf) {
  write_bytes(file("v.txt"), "\xEF\xBB\xBF# values\r\n\r\n  1 \r\n\t2\r\n   # indented comment\r\n3\r\n\r\n");
  EXPECT_EQ(values_of<float>(read_text(file("v.txt"), dtype::f32, "")), (std::vector<float>{1, 2, 3}));
  write_bytes(file("v.csv"), "a,b\r\n1,2\r\n3,4\r\n");
  EXPECT_EQ(values_of<double>(read_text(file("v.csv"), dtype::f64, "b")), (std::vector<double>{2, 4}));
}

TEST_F(text_test, header_detection) {
  write_bytes(file("h.txt"), "value\n1\n2\n");
  EXPECT_EQ(values_of<double>(read_text(file("h.txt"), dtype::f64, "")), (std::vector<double>{1, 2}));
  write_bytes(file("h2.txt"), "value\n1\n2\n");
  EXPECT_EQ(values_of<double>(read_text(file("h2.txt"), dtype::f64, "value")), (std::vector<double>{1, 2}));
  // A numeric first line (nan and inf count as numbers) is data.
  write_bytes(file("d.txt"), "nan\n1\n");
  EXPECT_EQ(read_text(file("d.txt"), dtype::f64, "").size(), 2);
  // The chosen field decides: column 1 of this header row is numeric-looking only in column 0.
  write_bytes(file("m.csv"), "2024,price\n1,10\n2,20\n");
  EXPECT_EQ(values_of<double>(read_text(file("m.csv"), dtype::f64, "1")), (std::vector<double>{10, 20}));
  EXPECT_EQ(values_of<double>(read_text(file("m.csv"), dtype::f64, "0")), (std::vector<double>{2024, 1, 2}));
  // pandas writes an unnamed index column: an empty first header field.
  write_bytes(file("p.csv"), ",x\n0,1.5\n1,2.5\n");
  EXPECT_EQ(values_of<double>(read_text(file("p.csv"), dtype::f64, "x")), (std::vector<double>{1.5, 2.5}));
  EXPECT_EQ(values_of<std::int64_t>(read_text(file("p.csv"), dtype::i64, "")), (std::vector<std::int64_t>{0, 1}));
}

TEST_F(text_test, csv_by_name_and_index) {
  write_bytes(file("t.csv"), "id, name ,score\n1,alice,3.5\n2,bob,-1\n# skipped\n3,\"carol, jr\",7\n");
  EXPECT_EQ(values_of<double>(read_text(file("t.csv"), dtype::f64, "score")), (std::vector<double>{3.5, -1, 7}));
  EXPECT_EQ(values_of<double>(read_text(file("t.csv"), dtype::f64, "2")), (std::vector<double>{3.5, -1, 7}));
  EXPECT_EQ(values_of<std::uint32_t>(read_text(file("t.csv"), dtype::u32, "id")),
            (std::vector<std::uint32_t>{1, 2, 3}));
  EXPECT_EQ(values_of<std::uint32_t>(read_text(file("t.csv"), dtype::u32, "")),
            (std::vector<std::uint32_t>{1, 2, 3}));
  expect_io_error([&] { (void)read_text(file("t.csv"), dtype::f64, "name"); },
                  {"t.csv:2:", "\"alice\" is not a number"});
  expect_io_error([&] { (void)read_text(file("t.csv"), dtype::f64, "total"); },
                  {"t.csv:1:", "no column named \"total\"", "\"score\""});
  expect_io_error([&] { (void)read_text(file("t.csv"), dtype::f64, "5"); }, {"t.csv:1:", "column 5 is beyond"});
  // Quoted names and values.
  write_bytes(file("q.csv"), "\"a\",\"b \"\"quoted\"\"\"\n\"1\",\"2\"\n");
  EXPECT_EQ(values_of<double>(read_text(file("q.csv"), dtype::f64, "b \"quoted\"")), (std::vector<double>{2}));
  // .txt with commas is CSV.
  write_bytes(file("c.txt"), "x,y\n1,2\n3,4\n");
  EXPECT_EQ(values_of<double>(read_text(file("c.txt"), dtype::f64, "y")), (std::vector<double>{2, 4}));
}

TEST_F(text_test, tsv) {
  write_bytes(file("t.tsv"), "a\tb\tc\n1\t2\t3\n4\t\t6\n");
  EXPECT_EQ(values_of<double>(read_text(file("t.tsv"), dtype::f64, "c")), (std::vector<double>{3, 6}));
  expect_io_error([&] { (void)read_text(file("t.tsv"), dtype::f64, "b"); }, {"t.tsv:3:", "empty value"});
  // A .txt with tabs and no comma is tab-separated.
  write_bytes(file("t.txt"), "1\t2\n3\t4\n");
  EXPECT_EQ(values_of<double>(read_text(file("t.txt"), dtype::f64, "1")), (std::vector<double>{2, 4}));
}

TEST_F(text_test, bad_values_name_the_line) {
  write_bytes(file("values.csv"), "# header comment\nv\n1\n\n2\nabc\n");
  try {
    (void)read_text(file("values.csv"), dtype::f64, "");
    FAIL() << "no error";
  } catch (const io_error& e) {
    EXPECT_EQ(std::string(e.what()), file("values.csv").string() + ":6: \"abc\" is not a number");
  }
  write_bytes(file("i.txt"), "1\n1.5\n");
  expect_io_error([&] { (void)read_text(file("i.txt"), dtype::i32, ""); }, {"i.txt:2:", "\"1.5\" is not an integer"});
  write_bytes(file("p.txt"), "1\n2x\n");
  expect_io_error([&] { (void)read_text(file("p.txt"), dtype::f64, ""); }, {"p.txt:2:", "\"2x\" is not a number"});
  write_bytes(file("s.txt"), "1\n1 2\n");
  expect_io_error([&] { (void)read_text(file("s.txt"), dtype::f64, ""); }, {"s.txt:2:", "\"1 2\" is not a number"});
  write_bytes(file("l.txt"), "1\n" + std::string(500, '7') + "z\n");
  expect_io_error([&] { (void)read_text(file("l.txt"), dtype::f64, ""); }, {"l.txt:2:", "...\" is not a number"});
  write_bytes(file("f.csv"), "1,2\n3\n");
  expect_io_error([&] { (void)read_text(file("f.csv"), dtype::f64, "1"); },
                  {"f.csv:2:", "column 1 is beyond the 1 field", "\"3\""});
  write_bytes(file("one.txt"), "1\n2\n");
  expect_io_error([&] { (void)read_text(file("one.txt"), dtype::f64, "1"); }, {"one.txt:1:", "column 1 is beyond"});
  write_bytes(file("empty.csv"), "");
  expect_io_error([&] { (void)read_text(file("empty.csv"), dtype::f64, "x"); }, {"empty.csv", "no header row"});
  expect_io_error([&] { (void)read_text(file("absent.csv"), dtype::f64, ""); }, {"absent.csv", "cannot open"});
}

TEST_F(text_test, integer_ranges) {
  const auto expect_range_error = [&](dtype type, const std::string& text) {
    write_bytes(file("r.txt"), "0\n" + text + "\n");
    expect_io_error([&] { (void)read_text(file("r.txt"), type, ""); },
                    {"r.txt:2:", "\"" + text + "\" is out of range for " + std::string(name(type))});
  };
  expect_range_error(dtype::u8, "256");
  expect_range_error(dtype::u8, "-1");
  expect_range_error(dtype::i8, "128");
  expect_range_error(dtype::i8, "-129");
  expect_range_error(dtype::u16, "65536");
  expect_range_error(dtype::i32, "2147483648");
  expect_range_error(dtype::u32, "-5");
  expect_range_error(dtype::u64, "18446744073709551616");
  expect_range_error(dtype::i64, "-9223372036854775809");

  write_bytes(file("ok.txt"), "255\n0\n-0\n");
  EXPECT_EQ(values_of<std::uint8_t>(read_text(file("ok.txt"), dtype::u8, "")), (std::vector<std::uint8_t>{255, 0, 0}));
  write_bytes(file("big.txt"), "9223372036854775807\n-9223372036854775808\n");
  EXPECT_EQ(values_of<std::int64_t>(read_text(file("big.txt"), dtype::i64, "")),
            (std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::max(),
                                       std::numeric_limits<std::int64_t>::min()}));
  write_bytes(file("u.txt"), "18446744073709551615\n");
  EXPECT_EQ(values_of<std::uint64_t>(read_text(file("u.txt"), dtype::u64, "")),
            (std::vector<std::uint64_t>{std::numeric_limits<std::uint64_t>::max()}));
}

TEST_F(text_test, nan_inf_and_float_limits) {
  write_bytes(file("f.txt"), "nan\ninf\n-inf\nNaN\n+inf\n1e-50\n");
  const std::vector<float> f = values_of<float>(read_text(file("f.txt"), dtype::f32, ""));
  ASSERT_EQ(f.size(), 6u);
  EXPECT_TRUE(std::isnan(f[0]));
  EXPECT_EQ(f[1], std::numeric_limits<float>::infinity());
  EXPECT_EQ(f[2], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(f[3]));
  EXPECT_EQ(f[4], std::numeric_limits<float>::infinity());
  EXPECT_EQ(f[5], 0.0f);  // underflow rounds to zero
  const std::vector<double> d = values_of<double>(read_text(file("f.txt"), dtype::f64, ""));
  EXPECT_TRUE(std::isnan(d[0]));
  EXPECT_EQ(d[2], -std::numeric_limits<double>::infinity());
  EXPECT_EQ(d[5], 1e-50);

  write_bytes(file("o.txt"), "1e39\n");
  expect_io_error([&] { (void)read_text(file("o.txt"), dtype::f32, ""); }, {"o.txt:1:", "out of range for float32"});
  EXPECT_EQ(values_of<double>(read_text(file("o.txt"), dtype::f64, "")), std::vector<double>{1e39});
  write_bytes(file("sub.txt"), "4.9e-324\n");
  EXPECT_EQ(values_of<double>(read_text(file("sub.txt"), dtype::f64, "")),
            std::vector<double>{std::numeric_limits<double>::denorm_min()});
}

template <class T>
class text_round_trip : public io_test {};
TYPED_TEST_SUITE(text_round_trip, element_types);

TYPED_TEST(text_round_trip, exact_values) {
  const std::uint64_t seed = scanlab::test::test_seed();
  SCOPED_TRACE(scanlab::test::seed_trace(seed));
  std::vector<TypeParam> values = scanlab::test::random_values<TypeParam>(2000, seed, false);
  values.push_back(std::numeric_limits<TypeParam>::max());
  values.push_back(std::numeric_limits<TypeParam>::lowest());
  values.push_back(std::numeric_limits<TypeParam>::min());
  if constexpr (std::is_floating_point_v<TypeParam>) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> exponent(-300, 300);
    for (int i = 0; i < 1000; ++i) values.push_back(static_cast<TypeParam>(std::pow(10.0, exponent(rng))));
    for (TypeParam v : {TypeParam(0.1), TypeParam(-0.0), std::numeric_limits<TypeParam>::denorm_min(),
                        std::numeric_limits<TypeParam>::infinity(), -std::numeric_limits<TypeParam>::infinity()}) {
      values.push_back(v);
    }
  }
  const host_array written = array_of(values);
  for (const char* name : {"t.txt", "t.csv", "t.tsv"}) {
    write_dataset(this->file(name), written);
    const host_array read = read_dataset(this->file(name), {.type = dtype_of<TypeParam>()});
    EXPECT_TRUE(same_bytes(written, read)) << name;
  }
  if constexpr (std::is_floating_point_v<TypeParam>) {
    // NaN round-trips as a NaN.
    write_dataset(this->file("nan.txt"), array_of<TypeParam>({std::numeric_limits<TypeParam>::quiet_NaN()}));
    EXPECT_TRUE(std::isnan(read_dataset(this->file("nan.txt"), {.type = dtype_of<TypeParam>()}).template as<TypeParam>()[0]));
  }
}

TEST_F(text_test, two_d_written_flattened) {
  host_array m(dtype::i32, {2, 3});
  for (int i = 0; i < 6; ++i) m.as<std::int32_t>()[static_cast<std::size_t>(i)] = i * 10;
  write_dataset(file("m.txt"), m);
  EXPECT_EQ(read_bytes(file("m.txt")), "0\n10\n20\n30\n40\n50\n");
  write_dataset(file("f.csv"), array_of<float>({0.1f, 1.0f / 3.0f}));
  EXPECT_EQ(read_bytes(file("f.csv")), "0.1\n0.33333334\n");
}

// ---- read_dataset / write_dataset dispatch ----

using dataset_test = io_test;

TEST_F(dataset_test, dispatch_by_extension) {
  const host_array a = array_of<std::int32_t>({5, -6, 7});
  write_dataset(file("a.npy"), a);
  EXPECT_TRUE(same_bytes(read_dataset(file("a.npy")), a));
  EXPECT_TRUE(same_bytes(read_dataset(file("a.npy"), {.type = dtype::f64}), a));  // .npy: the file's dtype
  write_dataset(file("A.NPY"), a);
  EXPECT_TRUE(same_bytes(read_dataset(file("A.NPY")), a));

  write_dataset(file("a.bin"), a);
  EXPECT_TRUE(same_bytes(read_dataset(file("a.bin"), {.type = dtype::i32}), a));
  expect_io_error([&] { (void)read_dataset(file("a.bin")); }, {"a.bin", "raw binary needs --dtype"});
  write_bytes(file("a.dat"), "1234");
  expect_io_error([&] { (void)read_dataset(file("a.dat")); }, {"a.dat", "raw binary needs --dtype"});

  write_bytes(file("a.csv"), "x,y\n1,2\n3,4\n");
  EXPECT_EQ(values_of<double>(read_dataset(file("a.csv"), {.column = "y"})), (std::vector<double>{2, 4}));
  EXPECT_EQ(values_of<std::int16_t>(read_dataset(file("a.csv"), {.type = dtype::i16, .column = "x"})),
            (std::vector<std::int16_t>{1, 3}));
  write_bytes(file("b.TSV"), "1\t2\n");
  EXPECT_EQ(values_of<double>(read_dataset(file("b.TSV"), {.column = "1"})), std::vector<double>{2});

  write_bytes(file("a.xyz"), "1\n");
  expect_io_error([&] { (void)read_dataset(file("a.xyz")); },
                  {"a.xyz", "unsupported file extension \".xyz\"", ".npy", ".bin", ".csv"});
  write_bytes(file("noext"), "1\n");
  expect_io_error([&] { (void)read_dataset(file("noext")); }, {"noext", "no file extension", ".npy"});
  expect_io_error([&] { write_dataset(file("out.json"), a); }, {"out.json", "unsupported file extension"});
  expect_io_error([&] { write_dataset(file("nodir/out.npy"), a); }, {"nodir/out.npy", "does not exist"});
  expect_io_error([&] { (void)read_dataset(file("missing.npy")); }, {"missing.npy", "cannot open"});
}

TEST_F(text_test, from_memory_as_from_a_file) {
  const std::string text = "a,b\n1,2\n3,4\n";
  write_bytes(file("t.csv"), text);
  EXPECT_TRUE(same_bytes(parse_text(text, "mem.csv", dtype::i32, "b"), read_text(file("t.csv"), dtype::i32, "b")));
  EXPECT_EQ(values_of<double>(parse_text("5\n6\n", "mem.txt", dtype::f64, "")), (std::vector<double>{5, 6}));
  expect_io_error([&] { (void)parse_text("1\nx\n", "mem.txt", dtype::f64, ""); }, {"mem.txt:2: \"x\" is not a number"});
  // Control characters of a field are escaped: the message stays one printable line.
  expect_io_error([&] { (void)parse_text(std::string("1\n\x01\r2\0\n", 7), "mem.txt", dtype::f64, ""); },
                  {"mem.txt:2: \"\\x01\\r2\\x00\" is not a number"});
}

// ---- Running out of memory while reading ----

TEST(guard_allocation, allocation_failures_become_one_line_naming_the_file) {
  expect_io_error([] { (void)guard_allocation("f.npy", []() -> int { throw std::bad_alloc(); }); },
                  {"f.npy: out of memory while reading it (std::bad_alloc)"});
  // A container asked for more than it can ever hold throws std::length_error instead.
  const std::size_t too_many = std::vector<double>().max_size() + std::size_t{1};
  expect_io_error([&] { (void)guard_allocation("f.txt", [&] { return std::vector<double>(too_many); }); },
                  {"f.txt: out of memory while reading it"});
  EXPECT_EQ(guard_allocation("f", [] { return 7; }), 7);
  EXPECT_THROW((void)guard_allocation("f", []() -> int { throw std::invalid_argument("other"); }), std::invalid_argument);
}

// Files larger than the memory the process may use (4 GiB of data in sparse files that take no
// disk space, read under a 2 GiB cap on the address space): every reader fails with an io_error
// naming the file, not with a bare std::bad_alloc.
using reader_memory_DeathTest = io_test;

TEST_F(reader_memory_DeathTest, allocation_failure_names_the_file) {
  constexpr std::uint64_t data_bytes = std::uint64_t{1} << 32;
  const fs::path npy = file("big.npy");
  write_bytes(npy, make_npy_header(dtype::f64, {static_cast<std::int64_t>(data_bytes / 8)}));
  fs::resize_file(npy, fs::file_size(npy) + data_bytes);
  for (const char* name : {"big.bin", "big.txt"}) {
    write_bytes(file(name), "");
    fs::resize_file(file(name), data_bytes);
  }
  // In the child: cap the address space, read, and exit 1 with the message of an io_error.
  const auto read_capped = [](const std::function<void()>& read) {
    const rlim_t cap = rlim_t{1} << 31;
    const rlimit limit{cap, cap};
    if (::setrlimit(RLIMIT_AS, &limit) != 0) std::_Exit(3);
    try {
      read();
      std::fprintf(stderr, "read without an error\n");
      std::_Exit(0);
    } catch (const io_error& e) {
      std::fprintf(stderr, "io_error: %s\n", e.what());
      std::_Exit(1);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "another exception: %s\n", e.what());
      std::_Exit(2);
    }
  };
  EXPECT_EXIT(read_capped([&] { (void)read_npy(npy); }), ::testing::ExitedWithCode(1),
              "io_error: [^\n]*big.npy: out of memory while reading it");
  EXPECT_EXIT(read_capped([&] { (void)read_dataset(file("big.bin"), {.type = dtype::f64}); }),
              ::testing::ExitedWithCode(1), "io_error: [^\n]*big.bin: out of memory while reading it");
  EXPECT_EXIT(read_capped([&] { (void)read_dataset(file("big.txt")); }), ::testing::ExitedWithCode(1),
              "io_error: [^\n]*big.txt: out of memory while reading it");
}

// ---- Formats by their first bytes ----

TEST(file_format, signatures) {
  EXPECT_EQ(sniff(std::string("\x93NUMPY\x01\x00", 8)), signature::npy);
  EXPECT_EQ(sniff("%%MatrixMarket matrix coordinate real general\n"), signature::matrix_market);
  EXPECT_EQ(sniff("%%matrixmarket"), signature::matrix_market);
  EXPECT_EQ(sniff("PK\x03\x04rest"), signature::zip);
  EXPECT_EQ(sniff("\x1f\x8b\x08"), signature::gzip);
  EXPECT_EQ(sniff("BZh91AY"), signature::bzip2);
  EXPECT_EQ(sniff("BZh is a word"), signature::none);
  EXPECT_EQ(sniff(std::string("\xfd" "7zXZ\0\0", 7)), signature::xz);
  EXPECT_EQ(sniff("\x28\xb5\x2f\xfd"), signature::zstd);
  EXPECT_EQ(sniff("\x89HDF\r\n\x1a\n"), signature::hdf5);
  EXPECT_EQ(sniff("RIFF\x24\x08\0\0WAVE"), signature::riff);
  for (const char* plain : {"", "1\n2\n", "x,y\n", "\x93NUM"}) EXPECT_EQ(sniff(plain), signature::none) << plain;
  EXPECT_TRUE(looks_like_text("1.5\t2\r\n# comment\n\xc3\xa9\n"));
  EXPECT_TRUE(looks_like_text(""));
  EXPECT_FALSE(looks_like_text(std::string("1\0" "2", 3)));
  EXPECT_FALSE(looks_like_text("\x01\x02"));
  EXPECT_EQ(describe_start(""), "the file is empty");
  EXPECT_EQ(describe_start("1,2\n"), "it starts with \"1,2\\n\"");
  EXPECT_NE(describe_start("\x1f\x8b\x08\x00").find("gzip-compressed data"), std::string::npos);
}

TEST_F(dataset_test, magic_decides_over_extension) {
  const host_array a = array_of<std::int16_t>({3, -1, 4, -1, 5});
  write_dataset(file("a.npy"), a);
  const std::string npy = read_bytes(file("a.npy"));
  // A .npy under another name is read as one, without --dtype (and despite another --dtype).
  for (const char* name : {"a.bin", "a.dat", "a.raw", "a.txt", "a.csv", "a.xyz", "noext"}) {
    write_bytes(file(name), npy);
    EXPECT_TRUE(same_bytes(read_dataset(file(name)), a)) << name;
    EXPECT_TRUE(same_bytes(read_dataset(file(name), {.type = dtype::f64}), a)) << name;
  }
  // A file named .npy that is not one: its first bytes, and the format they show.
  write_bytes(file("text.npy"), "x,y\n1,2\n3,4\n");
  expect_io_error([&] { (void)read_dataset(file("text.npy")); },
                  {"text.npy: not a .npy file (bad magic): it starts with \"x,y\\n1,2\\n3,4\\n\"",
                   "a .npy file starts with \"\\x93NUMPY\""});
  write_bytes(file("packed.npy"), std::string("\x1f\x8b\x08\x00\x00\x00", 6));
  expect_io_error([&] { (void)read_dataset(file("packed.npy")); },
                  {"packed.npy", "it starts with \"\\x1f\\x8b\\x08\\x00\\x00\\x00\"", "gzip-compressed data"});
  write_bytes(file("archive.npy"), std::string("PK\x03\x04\x14\x00", 6));
  expect_io_error([&] { (void)read_dataset(file("archive.npy")); }, {"archive.npy", "zip archive", ".npz"});
  write_bytes(file("empty.npy"), "");
  expect_io_error([&] { (void)read_dataset(file("empty.npy")); }, {"empty.npy", "the file is empty"});
  // Text files that are another format; raw files stay raw whatever they hold.
  write_bytes(file("matrix.txt"), "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1.0\n");
  expect_io_error([&] { (void)read_dataset(file("matrix.txt")); }, {"matrix.txt", "Matrix Market", "scanlab-cg"});
  write_bytes(file("packed.csv"), std::string("\x1f\x8b\x08\x00", 4));
  expect_io_error([&] { (void)read_dataset(file("packed.csv")); }, {"packed.csv", "gzip-compressed data"});
  write_bytes(file("gz.bin"), std::string("\x1f\x8b\x08\x00", 4));
  EXPECT_EQ(read_dataset(file("gz.bin"), {.type = dtype::u8}).size(), 4);
  // An unknown extension: still an error, naming what the bytes show where they show something.
  write_bytes(file("data.gz"), std::string("\x1f\x8b\x08\x00", 4));
  expect_io_error([&] { (void)read_dataset(file("data.gz")); },
                  {"data.gz", "unsupported file extension \".gz\"", "gzip-compressed data"});
}

// Standard input and output, in a child process (EXPECT_EXIT forks): its descriptors 0 and 1
// are pointed at files or pipes, and a failed check exits with a code that says which.
using standard_streams_DeathTest = io_test;

// Points descriptor `target` at `path` (opened with `flags`), or exits 9.
void redirect(int target, const fs::path& path, int flags) {
  const int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0 || ::dup2(fd, target) < 0) std::_Exit(9);
  ::close(fd);
}

// Runs `body` and exits 0, or 1 with an io_error's message on stderr.
void exit_with(const std::function<void()>& body) {
  try {
    body();
    std::_Exit(0);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    std::_Exit(1);
  }
}

TEST_F(standard_streams_DeathTest, reads_npy_and_text_from_standard_input_once) {
  const host_array a = array_of<double>({1.5, -2, 1e300});
  write_dataset(file("a.npy"), a);
  const auto read_stdin = [&](const fs::path& from, const read_options& options = {}) {
    redirect(STDIN_FILENO, from, O_RDONLY);
    return read_dataset("-", options);
  };
  EXPECT_EXIT(exit_with([&] {
                if (!same_bytes(read_stdin(file("a.npy")), a)) std::_Exit(2);
                (void)read_dataset("-");  // a second reader of standard input
              }),
              ::testing::ExitedWithCode(1), "error: standard input: already read for another input: only one input can be '-'");
  write_bytes(file("values"), "# comment\n7\n-8\n9\n");
  EXPECT_EXIT(exit_with([&] {
                if (values_of<std::int32_t>(read_stdin(file("values"), {.type = dtype::i32})) !=
                    std::vector<std::int32_t>{7, -8, 9}) {
                  std::_Exit(2);
                }
              }),
              ::testing::ExitedWithCode(0), "");
  write_bytes(file("columns"), "x,y\n1,2\n3,4\n");
  EXPECT_EXIT(exit_with([&] {
                if (values_of<double>(read_stdin(file("columns"), {.column = "y"})) != std::vector<double>{2, 4}) {
                  std::_Exit(2);
                }
              }),
              ::testing::ExitedWithCode(0), "");
  write_bytes(file("junk"), std::string("\x01\x02\x03\x00rest", 8));
  EXPECT_EXIT(exit_with([&] { (void)read_stdin(file("junk")); }), ::testing::ExitedWithCode(1),
              "error: standard input: neither a .npy file nor text: it starts with");
  write_bytes(file("short"), read_bytes(file("a.npy")).substr(0, 128 + 20));
  EXPECT_EXIT(exit_with([&] { (void)read_stdin(file("short")); }), ::testing::ExitedWithCode(1),
              "error: standard input: truncated data: shape \\(3,\\) of <f8 needs 24 bytes, file has 20");
  write_bytes(file("long"), read_bytes(file("a.npy")) + std::string(100000, 'x'));
  EXPECT_EXIT(exit_with([&] { (void)read_stdin(file("long")); }), ::testing::ExitedWithCode(1),
              "error: standard input: shape and size disagree: .* file has 100024 \\(trailing bytes\\)");
  write_bytes(file("magic only"), std::string("\x93NUM", 4));
  EXPECT_EXIT(exit_with([&] { (void)read_stdin(file("magic only")); }), ::testing::ExitedWithCode(1),
              "error: standard input: truncated header");
}

TEST_F(standard_streams_DeathTest, reads_a_large_npy_through_a_pipe) {
  // 3 MB: many times a pipe's buffer, so the reader waits for the writer as it would after a |.
  std::vector<std::uint32_t> values(750000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::uint32_t>(i * 2654435761u);
  const host_array a = array_of<std::uint32_t>(values);
  EXPECT_EXIT(exit_with([&] {
                int ends[2];
                if (::pipe(ends) != 0 || ::dup2(ends[0], STDIN_FILENO) < 0) std::_Exit(9);
                ::close(ends[0]);
                std::thread writer([&] {
                  const std::string bytes = make_npy_header(dtype::u32, {static_cast<std::int64_t>(values.size())}) +
                                            bytes_of(values);
                  for (std::size_t done = 0; done < bytes.size();) {
                    const ::ssize_t n = ::write(ends[1], bytes.data() + done, bytes.size() - done);
                    if (n <= 0) std::_Exit(8);
                    done += static_cast<std::size_t>(n);
                  }
                  ::close(ends[1]);
                });
                const host_array read = read_dataset("-");
                writer.join();
                if (!same_bytes(read, a)) std::_Exit(2);
              }),
              ::testing::ExitedWithCode(0), "");
}

TEST_F(standard_streams_DeathTest, writes_npy_to_standard_output_and_prints_to_stderr) {
  const host_array a = array_of<float>({0.25f, -3.0f});
  EXPECT_EXIT(exit_with([&] {
                redirect(STDOUT_FILENO, file("out.npy"), O_WRONLY | O_CREAT | O_TRUNC);
                write_dataset("-", a);
                std::cout << "a result line" << std::endl;  // must not reach the data
                std::printf("and a printf line\n");
                write_dataset("-", a);  // a second output to standard output
              }),
              ::testing::ExitedWithCode(1),
              "a result line\nand a printf line\nerror: standard output: already written by another output: only one "
              "output can be '-'");
  EXPECT_EQ(read_bytes(file("out.npy")), make_npy_header(dtype::f32, {2}) + bytes_of(std::vector<float>{0.25f, -3.0f}));
  EXPECT_TRUE(same_bytes(read_npy(file("out.npy")), a));
  // An npy_writer streams to it as well.
  EXPECT_EXIT(exit_with([&] {
                redirect(STDOUT_FILENO, file("streamed.npy"), O_WRONLY | O_CREAT | O_TRUNC);
                npy_writer writer("-", dtype::f32, {2});
                writer.write(a.data(), 4);
                writer.write(a.data() + 4, 4);
                writer.commit();
              }),
              ::testing::ExitedWithCode(0), "");
  EXPECT_TRUE(same_bytes(read_npy(file("streamed.npy")), a));
}

// ---- convert ----

TEST(convert, element_wise_static_cast) {
  host_array m(dtype::f64, {2, 2});
  const std::vector<double> src = {1.9, -2.9, 1e9, -0.5};
  std::memcpy(m.data(), src.data(), m.bytes());
  const host_array i = convert(m, dtype::i32);
  EXPECT_EQ(i.shape(), m.shape());
  EXPECT_EQ(values_of<std::int32_t>(i), (std::vector<std::int32_t>{1, -2, 1000000000, 0}));
  EXPECT_EQ(values_of<float>(convert(m, dtype::f32)), (std::vector<float>{1.9f, -2.9f, 1e9f, -0.5f}));

  // Integer narrowing wraps, as static_cast does.
  EXPECT_EQ(values_of<std::int8_t>(convert(array_of<std::int32_t>({200, -1, 127}), dtype::i8)),
            (std::vector<std::int8_t>{-56, -1, 127}));
  EXPECT_EQ(values_of<std::uint32_t>(convert(array_of<std::int64_t>({-1}), dtype::u32)),
            (std::vector<std::uint32_t>{4294967295u}));
  EXPECT_EQ(values_of<double>(convert(array_of<std::uint64_t>({1u << 20}), dtype::f64)), std::vector<double>{1048576});

  // Same dtype: a copy.
  const host_array a = array_of<std::uint16_t>({1, 2, 3});
  EXPECT_TRUE(same_bytes(convert(a, dtype::u16), a));
  EXPECT_EQ(convert(host_array(dtype::f32, {0}), dtype::i64).size(), 0);

  // Float to integer where static_cast would be undefined: an error.
  expect_io_error([&] { (void)convert(array_of<double>({1, std::nan("")}), dtype::i32); },
                  {"element 1", "out of range for int32"});
  expect_io_error([&] { (void)convert(array_of<float>({3e9f}), dtype::i32); }, {"element 0", "int32"});
  expect_io_error([&] { (void)convert(array_of<double>({-1}), dtype::u64); }, {"uint64"});
  expect_io_error([&] { (void)convert(array_of<double>({9.3e18}), dtype::i64); }, {"int64"});
  EXPECT_EQ(values_of<std::uint8_t>(convert(array_of<double>({255.9, -0.9}), dtype::u8)),
            (std::vector<std::uint8_t>{255, 0}));
  EXPECT_EQ(values_of<std::int64_t>(convert(array_of<double>({-9223372036854775808.0}), dtype::i64)),
            std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::min()});
}

// float64 to float32: a finite value beyond float32's range is an error, as documented (it
// would otherwise become infinity); NaN and infinities stay what they are; tiny values round
// to zero or a subnormal.
TEST(convert, float64_to_float32_range) {
  const double inf = std::numeric_limits<double>::infinity();
  expect_io_error([&] { (void)convert(array_of<double>({1, 1e300}), dtype::f32); },
                  {"convert: element 1 (1e+300) of a float64 array is out of range for float32"});
  expect_io_error([&] { (void)convert(array_of<double>({-1e39}), dtype::f32); }, {"element 0", "float32"});
  // Named after the file the array came from, where the caller gives it.
  expect_io_error([&] { (void)convert(array_of<double>({1e300}), dtype::f32, "y.npy"); },
                  {"y.npy: converting: element 0 (1e+300)"});

  // The largest float32 and what rounds to it stay finite; half an ulp above rounds to infinity.
  const double flt_max = std::numeric_limits<float>::max();
  const double half_ulp = std::ldexp(1.0, 103);
  EXPECT_EQ(values_of<float>(convert(array_of<double>({flt_max, -flt_max, flt_max + half_ulp / 2}), dtype::f32)),
            (std::vector<float>{std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(),
                                std::numeric_limits<float>::max()}));
  expect_io_error([&] { (void)convert(array_of<double>({flt_max + half_ulp}), dtype::f32); }, {"float32"});

  const std::vector<float> special = values_of<float>(convert(array_of<double>({inf, -inf, std::nan(""), 1e-50, -1e-40}), dtype::f32));
  EXPECT_EQ(special[0], std::numeric_limits<float>::infinity());
  EXPECT_EQ(special[1], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(special[2]));
  EXPECT_EQ(special[3], 0.0f);
  EXPECT_EQ(special[4], static_cast<float>(-1e-40));  // a subnormal
}

// Segment keys: bit patterns of 32 bits for narrow integer files, 64 bits for wide ones,
// each file's dtype kept so that keys_as gives back the values the file held; run_offsets
// finds the runs of equal keys.
TEST_F(io_test, keys_round_trip_and_runs) {
  write_npy(file("k8.npy"), array_of<std::int8_t>({-1, -1, 5, -128, -128, -128}));
  const key_array narrow = load_keys(file("k8.npy").string(), 6);
  EXPECT_EQ(narrow.type, dtype::i8);
  EXPECT_EQ(narrow.bits.type(), dtype::u32);
  EXPECT_EQ(values_of<std::int8_t>(keys_as(narrow.bits, narrow.type)),
            (std::vector<std::int8_t>{-1, -1, 5, -128, -128, -128}));
  EXPECT_EQ(run_offsets(narrow.bits), (std::vector<std::int64_t>{0, 2, 3, 6}));

  // uint64 keys that differ only above bit 31 are different keys.
  const std::uint64_t high = std::uint64_t{1} << 32;
  write_npy(file("k64.npy"), array_of<std::uint64_t>({high, high, 2 * high, 0}));
  const key_array wide = load_keys(file("k64.npy").string(), 4);
  EXPECT_EQ(wide.type, dtype::u64);
  EXPECT_EQ(wide.bits.type(), dtype::u64);
  EXPECT_EQ(run_offsets(wide.bits), (std::vector<std::int64_t>{0, 2, 3, 4}));
  EXPECT_EQ(values_of<std::int64_t>(keys_as(array_of<std::uint64_t>({~std::uint64_t{0}}), dtype::i64)),
            std::vector<std::int64_t>{-1});

  // No keys, no runs; one key, one run.
  EXPECT_EQ(run_offsets(array_of<std::uint32_t>({})), std::vector<std::int64_t>{0});
  EXPECT_EQ(run_offsets(array_of<std::uint32_t>({7})), (std::vector<std::int64_t>{0, 1}));
  EXPECT_THROW((void)load_keys(file("k64.npy").string(), 5), std::runtime_error);
}

// ---- The linrec-only dtypes: float16, bfloat16, complex64, complex128 ----

using linrec_dtypes_test = io_test;

TEST(linrec_dtypes, names_sizes_descrs_and_parsing) {
  EXPECT_EQ(size_of(dtype::f16), 2u);
  EXPECT_EQ(size_of(dtype::bf16), 2u);
  EXPECT_EQ(size_of(dtype::c64), 8u);
  EXPECT_EQ(size_of(dtype::c128), 16u);
  EXPECT_EQ(npy_descr(dtype::f16), "<f2");
  EXPECT_EQ(npy_descr(dtype::bf16), "<V2");
  EXPECT_EQ(npy_descr(dtype::c64), "<c8");
  EXPECT_EQ(npy_descr(dtype::c128), "<c16");
  for (dtype t : linrec_only_dtypes) {
    EXPECT_TRUE(is_linrec_only(t));
    EXPECT_EQ(parse_dtype(name(t)), t) << name(t);
    EXPECT_FALSE(is_float(t));
    // Not among the dtypes every app takes, nor in their --help list.
    EXPECT_EQ(std::find(all_dtypes.begin(), all_dtypes.end(), t), all_dtypes.end());
    EXPECT_EQ(dtype_choices().find(name(t)), std::string::npos);
    EXPECT_NE(dtype_choices(true).find(name(t)), std::string::npos);
  }
  EXPECT_EQ(parse_dtype("half"), dtype::f16);
  EXPECT_EQ(parse_dtype("<f2"), dtype::f16);
  EXPECT_EQ(parse_dtype("bf16"), dtype::bf16);
  EXPECT_EQ(parse_dtype("<c8"), dtype::c64);
  EXPECT_EQ(parse_dtype("c16"), dtype::c128);
  EXPECT_EQ(dtype_of<float16_bits>(), dtype::f16);
  EXPECT_EQ(dtype_of<std::complex<double>>(), dtype::c128);
  // io::visit stays over all_dtypes: the others are refused, naming the type and the app.
  try {
    visit(dtype::bf16, []<class T>() {});
    ADD_FAILURE() << "visit took bfloat16";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("bfloat16 data: only scanlab-linrec takes"), std::string::npos) << e.what();
  }
}

TEST(linrec_dtypes, sixteen_bit_rounding) {
  // Exact values, the largest, the smallest subnormal, ties to even, overflow, NaN, signed zero.
  EXPECT_EQ(float16_from_double(1.0), 0x3c00);
  EXPECT_EQ(float16_from_double(-2.0), 0xc000);
  EXPECT_EQ(float16_from_double(65504.0), 0x7bff);
  EXPECT_EQ(float16_from_double(65520.0), 0x7c00);  // halfway past the largest: rounds to infinity
  EXPECT_EQ(float16_from_double(65519.99), 0x7bff);
  EXPECT_EQ(float16_from_double(std::ldexp(1.0, -24)), 0x0001);
  EXPECT_EQ(float16_from_double(std::ldexp(1.0, -25)), 0x0000);  // a tie: to even (zero)
  EXPECT_EQ(float16_from_double(std::ldexp(1.5, -25)), 0x0001);
  EXPECT_EQ(float16_from_double(1.0 + std::ldexp(1.0, -11)), 0x3c00);  // tie to even
  EXPECT_EQ(float16_from_double(1.0 + 3 * std::ldexp(1.0, -11)), 0x3c02);
  EXPECT_EQ(float16_from_double(-0.0), 0x8000);
  EXPECT_EQ(float16_from_double(std::numeric_limits<double>::infinity()), 0x7c00);
  EXPECT_TRUE(std::isnan(float16_to_double(float16_from_double(std::nan("")))));
  EXPECT_EQ(bfloat16_from_double(1.0), 0x3f80);
  EXPECT_EQ(bfloat16_from_double(-3.0), 0xc040);
  EXPECT_EQ(bfloat16_from_double(1.0 + std::ldexp(1.0, -8)), 0x3f80);  // tie to even
  EXPECT_EQ(bfloat16_from_double(3.4e38), 0x7f80);                      // beyond the largest (~3.39e38)
  EXPECT_EQ(bfloat16_from_double(std::ldexp(1.0, -133)), 0x0001);
  // Every finite 16-bit pattern widens exactly and rounds back to itself; the float32 path agrees
  // with the top half of float32 rounded to nearest even.
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const auto b = static_cast<std::uint16_t>(bits);
    const double h = float16_to_double(b);
    if (!std::isnan(h)) {
      EXPECT_EQ(float16_from_double(h), b) << bits;
    }
    const double f = bfloat16_to_double(b);
    if (!std::isnan(f)) {
      EXPECT_EQ(bfloat16_from_double(f), b) << bits;
      float as_float = static_cast<float>(f);
      std::uint32_t word = 0;
      std::memcpy(&word, &as_float, 4);
      EXPECT_EQ(word >> 16, bits);
      EXPECT_EQ(word & 0xffffu, 0u);
    }
  }
  std::mt19937_64 rng(scanlab::test::test_seed());
  for (int i = 0; i < 100000; ++i) {  // float -> bfloat16 as the usual bit trick (finite, no NaN)
    const float v = std::ldexp(std::uniform_real_distribution<float>(-1, 1)(rng), static_cast<int>(rng() % 200) - 100);
    std::uint32_t word = 0;
    std::memcpy(&word, &v, 4);
    const auto expected = static_cast<std::uint16_t>((word + 0x7fffu + ((word >> 16) & 1u)) >> 16);
    EXPECT_EQ(bfloat16_from_double(v), expected) << v;
  }
}

TEST_F(linrec_dtypes_test, npy_round_trips) {
  const std::uint64_t seed = scanlab::test::test_seed();
  SCOPED_TRACE(scanlab::test::seed_trace(seed));
  for (dtype type : linrec_only_dtypes) {
    SCOPED_TRACE(std::string(name(type)));
    for (const std::vector<std::int64_t>& shape : {std::vector<std::int64_t>{0}, {7}, {3, 5}, {2, 3, 4}}) {
      const host_array written = random_array(type, shape, seed);
      write_npy(file("x.npy"), written);
      const std::string bytes = read_bytes(file("x.npy"));
      EXPECT_NE(bytes.find("'descr': '" + std::string(npy_descr(type)) + "'"), std::string::npos);
      EXPECT_EQ(bytes.size() % 64, written.bytes() % 64);
      // bfloat16 is written as <V2, read back as bfloat16 only when asked for
      EXPECT_TRUE(same_bytes(written, read_npy(file("x.npy"), type)));
      EXPECT_TRUE(same_bytes(written, read_dataset(file("x.npy"), {.type = type})));
      if (type != dtype::bf16) {
        EXPECT_TRUE(same_bytes(written, read_npy(file("x.npy"))));
      }
      // raw binary with the type given
      write_dataset(file("x.bin"), written);
      const host_array raw = read_raw(file("x.bin"), type);
      EXPECT_EQ(raw.size(), written.size());
      EXPECT_EQ(std::memcmp(raw.data(), written.data(), written.bytes()), 0);
    }
  }
}

TEST_F(linrec_dtypes_test, bfloat16_descrs) {
  const std::string data = bytes_of(std::vector<std::uint16_t>{0x3f80, 0xc040});  // 1, -3
  for (const char* descr : {"<V2", "|V2", "=V2", "bfloat16"}) {
    SCOPED_TRACE(descr);
    write_bytes(file("b.npy"), npy_bytes(1, std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (2,), }\n", data));
    const host_array a = read_dataset(file("b.npy"), {.type = dtype::bf16});
    ASSERT_EQ(a.type(), dtype::bf16);
    EXPECT_EQ(std::memcmp(a.data(), data.data(), 4), 0);
    if (std::string_view(descr) != "bfloat16") {
      // Without --dtype bfloat16 (or with another), a 2-byte void is an error naming the fix.
      expect_io_error([&] { (void)read_dataset(file("b.npy")); },
                      {"b.npy", "2-byte void dtype", "raw bytes", "bfloat16", "--dtype bfloat16"});
      expect_io_error([&] { (void)read_dataset(file("b.npy"), {.type = dtype::f16}); }, {"--dtype bfloat16"});
    } else {
      EXPECT_EQ(read_dataset(file("b.npy")).type(), dtype::bf16);
    }
  }
  // Other voids and a big-endian one are refused.
  write_bytes(file("v4.npy"), npy_bytes(1, "{'descr': '<V4', 'fortran_order': False, 'shape': (1,), }\n", "abcd"));
  expect_io_error([&] { (void)read_dataset(file("v4.npy"), {.type = dtype::bf16}); }, {"v4.npy", "void dtype '<V4'"});
  write_bytes(file("be.npy"), npy_bytes(1, "{'descr': '>V2', 'fortran_order': False, 'shape': (2,), }\n", data));
  expect_io_error([&] { (void)read_dataset(file("be.npy"), {.type = dtype::bf16}); }, {"big-endian"});
  // Big-endian and order-free multi-byte numeric descrs of the new kinds too.
  write_bytes(file("f2.npy"), npy_bytes(1, "{'descr': '>f2', 'fortran_order': False, 'shape': (2,), }\n", data));
  expect_io_error([&] { (void)read_dataset(file("f2.npy")); }, {"big-endian dtype '>f2'"});
  write_bytes(file("c8.npy"), npy_bytes(1, "{'descr': '|c8', 'fortran_order': False, 'shape': (1,), }\n", std::string(8, '\0')));
  expect_io_error([&] { (void)read_dataset(file("c8.npy")); }, {"unsupported dtype '|c8'", "<c8"});
  write_bytes(file("c32.npy"), npy_bytes(1, "{'descr': '<c32', 'fortran_order': False, 'shape': (1,), }\n", std::string(32, '\0')));
  expect_io_error([&] { (void)read_dataset(file("c32.npy")); }, {"unsupported dtype '<c32'"});
}

TEST_F(linrec_dtypes_test, text_and_convert) {
  write_bytes(file("h.txt"), "1\n0.1\n65504\n-2.5e-8\n");
  const host_array h = read_dataset(file("h.txt"), {.type = dtype::f16});
  ASSERT_EQ(h.type(), dtype::f16);
  const auto* bits = reinterpret_cast<const std::uint16_t*>(h.data());
  EXPECT_EQ(bits[0], 0x3c00);
  EXPECT_EQ(bits[1], float16_from_double(0.1));
  EXPECT_EQ(bits[2], 0x7bff);
  EXPECT_EQ(bits[3], float16_from_double(-2.5e-8));
  write_bytes(file("big.txt"), "1\n70000\n");
  expect_io_error([&] { (void)read_dataset(file("big.txt"), {.type = dtype::f16}); }, {"big.txt", "out of range for float16"});
  // Written as the float32 value, which reads back to the same bits.
  write_dataset(file("h_out.txt"), h);
  EXPECT_TRUE(same_bytes(h, read_dataset(file("h_out.txt"), {.type = dtype::f16})));
  const host_array bf = read_dataset(file("h.txt"), {.type = dtype::bf16});
  write_dataset(file("bf_out.csv"), bf);
  EXPECT_TRUE(same_bytes(bf, read_dataset(file("bf_out.csv"), {.type = dtype::bf16})));
  // Complex text is refused both ways.
  expect_io_error([&] { (void)read_dataset(file("h.txt"), {.type = dtype::c64}); }, {"h.txt", "text input of complex64"});
  const host_array c = array_of<std::complex<float>>({{1, 2}, {-3, 0.5f}});
  expect_io_error([&] { write_dataset(file("c.txt"), c); }, {"c.txt", "text output of complex64", ".npy"});
  // convert: real <-> 16-bit, real -> complex, complex64 <-> complex128; complex -> real refused.
  const host_array d = array_of<double>({1.0, 0.1, -1e-3});
  const host_array d16 = convert(d, dtype::f16);
  EXPECT_EQ(reinterpret_cast<const std::uint16_t*>(d16.data())[1], float16_from_double(0.1));
  EXPECT_EQ(values_of<float>(convert(d16, dtype::f32))[0], 1.0f);
  EXPECT_EQ(values_of<std::complex<double>>(convert(d, dtype::c128))[1], std::complex<double>(0.1, 0));
  EXPECT_EQ(values_of<std::complex<double>>(convert(c, dtype::c128))[1], std::complex<double>(-3, 0.5));
  expect_io_error([&] { (void)convert(c, dtype::f32, "c.npy"); }, {"c.npy", "complex64", "cannot be converted to float32"});
  expect_io_error([&] { (void)convert(array_of<double>({1e6}), dtype::f16); }, {"out of range for float16"});
  EXPECT_TRUE(same_bytes(convert(d16, dtype::f16), d16));
  EXPECT_EQ(convert(array_of<std::int32_t>({-7}), dtype::bf16).type(), dtype::bf16);
}

// ---- Inputs larger than memory: mapped (mapped_input.hpp), outputs streamed (stream_writer) ----

using mapped_test = io_test;

TEST_F(mapped_test, npy_and_raw_map_what_the_readers_read) {
  std::vector<std::int32_t> values(1000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::int32_t>(i * 7919 % 1001) - 500;
  write_npy(file("x.npy"), array_of(values));
  const mapped_array npy = map_npy(file("x.npy"));
  EXPECT_EQ(npy.type(), dtype::i32);
  EXPECT_EQ(npy.shape(), (std::vector<std::int64_t>{1000}));
  ASSERT_EQ(npy.bytes(), values.size() * 4);
  EXPECT_EQ(std::memcmp(npy.data(), values.data(), npy.bytes()), 0);

  write_bytes(file("x.bin"), bytes_of(values));
  const input_array raw = open_dataset(file("x.bin"), {.type = dtype::i32});
  EXPECT_TRUE(raw.is_mapped());
  ASSERT_EQ(raw.size(), 1000);
  EXPECT_EQ(raw.as<std::int32_t>()[999], values[999]);
  EXPECT_THROW((void)raw.as<float>(), std::invalid_argument);

  // take(): the mapped elements copied into an array the in-memory path can use.
  input_array mapped = open_dataset(file("x.npy"));
  EXPECT_TRUE(mapped.is_mapped());
  EXPECT_EQ(values_of<std::int32_t>(mapped.take(file("x.npy"))), values);

  // Text is read, not mapped.
  write_bytes(file("t.txt"), "1\n2\n");
  EXPECT_FALSE(open_dataset(file("t.txt"), {.type = dtype::i64}).is_mapped());
}

TEST_F(mapped_test, empty_and_two_d) {
  write_npy(file("e.npy"), host_array(dtype::f64, {0}));
  const mapped_array empty = map_npy(file("e.npy"));
  EXPECT_EQ(empty.size(), 0);
  EXPECT_EQ(empty.bytes(), 0u);
  host_array two_d(dtype::u16, {3, 5});
  for (std::int64_t i = 0; i < 15; ++i) two_d.as<std::uint16_t>()[static_cast<std::size_t>(i)] = static_cast<std::uint16_t>(i);
  write_npy(file("m.npy"), two_d);
  const mapped_array m = map_npy(file("m.npy"));
  EXPECT_EQ(m.shape(), (std::vector<std::int64_t>{3, 5}));
  EXPECT_EQ(m.size(), 15);
  EXPECT_EQ(reinterpret_cast<const std::uint16_t*>(m.data())[14], 14);
}

TEST_F(mapped_test, the_readers_checks_and_messages) {
  write_npy(file("x.npy"), array_of<float>({1, 2, 3, 4}));
  std::string bytes = read_bytes(file("x.npy"));
  write_bytes(file("short.npy"), bytes.substr(0, bytes.size() - 3));
  expect_io_error([&] { (void)map_npy(file("short.npy")); }, {"short.npy", "truncated data", "needs 16 bytes, file has 13"});
  expect_io_error([&] { (void)open_dataset(file("short.npy")); }, {"short.npy", "truncated data"});
  write_bytes(file("long.npy"), bytes + "x");
  expect_io_error([&] { (void)map_npy(file("long.npy")); }, {"long.npy", "trailing bytes"});
  write_bytes(file("bad.npy"), npy_bytes(1, "{'descr': 5}  \n"));
  expect_io_error([&] { (void)open_dataset(file("bad.npy")); }, {"bad.npy", "header"});
  write_bytes(file("odd.bin"), "12345");
  expect_io_error([&] { (void)open_dataset(file("odd.bin"), {.type = dtype::i32}); }, {"odd.bin", "not a whole number"});
  expect_io_error([&] { (void)open_dataset(file("missing.npy")); }, {"missing.npy", "cannot open"});
  fs::create_directories(file("dir.npy"));
  expect_io_error([&] { (void)open_dataset(file("dir.npy")); }, {"dir.npy", "directory"});
  // A header padded so that the data would be misaligned: read instead of mapped.
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  header += std::string(63 - (10 + header.size()) % 64 + 1, ' ') + "\n";  // data at 65: not a multiple of 4
  const float two[2] = {1.5f, -2.0f};
  write_bytes(file("odd.npy"), npy_bytes(1, header, std::string_view(reinterpret_cast<const char*>(two), sizeof two)));
  const input_array odd = open_dataset(file("odd.npy"));
  EXPECT_FALSE(odd.is_mapped());
  EXPECT_EQ(odd.as<float>()[1], -2.0f);
}

using stream_writer_test = io_test;

TEST_F(stream_writer_test, length_known_at_the_end_rewrites_the_header) {
  {
    stream_writer writer(file("k.npy"), dtype::i64, {1000}, false);
    const std::vector<std::int64_t> kept = {5, -6, 7};
    writer.write(kept.data(), 3 * sizeof(std::int64_t));
    writer.commit_with_length(3);
  }
  EXPECT_EQ(values_of<std::int64_t>(read_npy(file("k.npy"))), (std::vector<std::int64_t>{5, -6, 7}));
  // Byte for byte what write_npy (numpy.save) writes for the same array.
  write_npy(file("ref.npy"), array_of<std::int64_t>({5, -6, 7}));
  EXPECT_EQ(read_bytes(file("k.npy")), read_bytes(file("ref.npy")));
  {
    stream_writer writer(file("none.npy"), dtype::f32, {1u << 20}, false);
    writer.commit_with_length(0);
  }
  EXPECT_EQ(read_npy(file("none.npy")).size(), 0);
  // Raw: the bytes as they came.
  {
    stream_writer writer(file("k.bin"), dtype::u8, {10}, false);
    writer.write("ab", 2);
    writer.commit_with_length(2);
  }
  EXPECT_EQ(read_bytes(file("k.bin")), "ab");
  EXPECT_THROW(stream_writer(file("k.txt"), dtype::u8, {10}), io_error);
  EXPECT_THROW(stream_writer("-", dtype::u8, {10}, false), io_error);  // a stream's header goes out first
}

TEST_F(stream_writer_test, wrong_counts_and_abandoned_writes_leave_nothing) {
  write_npy(file("keep.npy"), array_of<float>({1, 2}));
  const std::string before = read_bytes(file("keep.npy"));
  {
    stream_writer writer(file("keep.npy"), dtype::f32, {8}, false);
    const float values[3] = {1, 2, 3};
    writer.write(values, sizeof values);
    expect_io_error([&] { writer.commit_with_length(2); }, {"keep.npy", "12 data bytes written"});
  }
  {
    stream_writer writer(file("keep.npy"), dtype::f32, {8});
    const float values[3] = {1, 2, 3};
    writer.write(values, sizeof values);
  }  // destroyed without commit (an exception on the way out, Ctrl-C)
  EXPECT_EQ(read_bytes(file("keep.npy")), before);
  EXPECT_EQ(listing(), std::vector<std::string>{"keep.npy"});
}

// A full disk, simulated without root: `write` run under a file size limit of 64 KiB
// (RLIMIT_FSIZE, as `ulimit -f`) with SIGXFSZ ignored, so that write() fails with EFBIG as it
// fails with ENOSPC on a full disk. Returns the io_error's message ("" if none was thrown).
std::string on_a_full_disk(const std::function<void()>& write) {
  rlimit old_limit{};
  if (::getrlimit(RLIMIT_FSIZE, &old_limit) != 0) return "getrlimit failed";
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old_limit;
  small.rlim_cur = 64 << 10;
  std::string message;
  if (::setrlimit(RLIMIT_FSIZE, &small) != 0) {
    message = "setrlimit failed";
  } else {
    try {
      write();
    } catch (const io_error& e) {
      message = e.what();
    }
  }
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);
  return message;
}

TEST_F(stream_writer_test, full_disk_is_one_clear_error_and_leaves_nothing) {
  write_npy(file("out.npy"), array_of<std::int32_t>({1, 2, 3}));
  const std::string before = read_bytes(file("out.npy"));
  const std::string message = on_a_full_disk([&] {
    stream_writer writer(file("out.npy"), dtype::i32, {1 << 20});
    const std::vector<std::int32_t> chunk(4096, 7);
    for (int i = 0; i < 256; ++i) writer.write(chunk.data(), chunk.size() * sizeof(std::int32_t));
    writer.commit();
  });
  EXPECT_NE(message.find("out.npy: write failed: File too large"), std::string::npos) << message;
  EXPECT_EQ(read_bytes(file("out.npy")), before);
  EXPECT_EQ(listing(), std::vector<std::string>{"out.npy"});
}

// ---- Outputs written in place through a mapping (mapped_output: scanlab-sort's streaming path) ----

using mapped_output_test = io_test;

TEST_F(mapped_output_test, writes_what_write_dataset_writes) {
  {
    mapped_output out(file("k.npy"), dtype::i64, 3);
    const std::int64_t values[3] = {5, -6, 7};
    std::memcpy(out.data(), values, sizeof values);
    EXPECT_EQ(listing().size(), 1u);  // the temporary only
    EXPECT_FALSE(std::filesystem::exists(file("k.npy")));
    out.commit();
  }
  write_npy(file("ref.npy"), array_of<std::int64_t>({5, -6, 7}));
  EXPECT_EQ(read_bytes(file("k.npy")), read_bytes(file("ref.npy")));
  {
    mapped_output out(file("none.npy"), dtype::f32, 0);
    EXPECT_EQ(out.data(), nullptr);
    out.commit();
  }
  write_npy(file("none_ref.npy"), array_of<float>({}));
  EXPECT_EQ(read_bytes(file("none.npy")), read_bytes(file("none_ref.npy")));
  {
    mapped_output out(file("k.bin"), dtype::u8, 2);
    std::memcpy(out.data(), "ab", 2);
    out.commit();
  }
  EXPECT_EQ(read_bytes(file("k.bin")), "ab");
  expect_io_error([&] { mapped_output(file("k.txt"), dtype::u8, 10); }, {"k.txt", "not as text"});
  expect_io_error([&] { mapped_output("-", dtype::u8, 10); }, {"standard output", "give a .npy or raw file"});
  expect_io_error([&] { mapped_output(file("k.xyz"), dtype::u8, 10); }, {"k.xyz", "unsupported file extension"});
}

TEST_F(mapped_output_test, abandoned_leaves_nothing) {
  write_npy(file("keep.npy"), array_of<float>({1, 2}));
  const std::string before = read_bytes(file("keep.npy"));
  {
    mapped_output out(file("keep.npy"), dtype::f32, 1000);
    std::memset(out.data(), 1, 4000);
  }  // destroyed without commit (an exception on the way out, Ctrl-C)
  EXPECT_EQ(read_bytes(file("keep.npy")), before);
  EXPECT_EQ(listing(), std::vector<std::string>{"keep.npy"});
}

// A full disk (on_a_full_disk) is found when the file is preallocated, before any page of the
// mapping is written: one error, nothing left.
TEST_F(mapped_output_test, full_disk_fails_when_preallocating) {
  write_npy(file("out.npy"), array_of<std::int32_t>({1, 2, 3}));
  const std::string before = read_bytes(file("out.npy"));
  const std::string message = on_a_full_disk([&] {
    mapped_output out(file("out.npy"), dtype::i32, 1 << 20);
    out.commit();
  });
  EXPECT_NE(message.find("out.npy: write failed: File too large (reserving 4194432 bytes for the output)"),
            std::string::npos)
      << message;
  EXPECT_EQ(read_bytes(file("out.npy")), before);
  EXPECT_EQ(listing(), std::vector<std::string>{"out.npy"});
}

}  // namespace
