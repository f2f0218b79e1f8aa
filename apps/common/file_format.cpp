#include "common/file_format.hpp"

#include "common/atomic_file.hpp"

#include <algorithm>
#include <cctype>

namespace scanlab::io {
namespace {

bool starts_with_nocase(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() &&
         std::equal(prefix.begin(), prefix.end(), text.begin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
         });
}

}  // namespace

signature sniff(std::string_view head) {
  if (head.starts_with(npy_magic)) return signature::npy;
  if (starts_with_nocase(head, "%%MatrixMarket")) return signature::matrix_market;
  if (head.starts_with("PK\x03\x04") || head.starts_with("PK\x05\x06")) return signature::zip;
  if (head.starts_with("\x1f\x8b")) return signature::gzip;
  if (head.size() >= 4 && head.starts_with("BZh") && head[3] >= '1' && head[3] <= '9') return signature::bzip2;
  if (head.starts_with(std::string_view("\xfd" "7zXZ\0", 6))) return signature::xz;
  if (head.starts_with("\x28\xb5\x2f\xfd")) return signature::zstd;
  if (head.starts_with("\x89HDF\r\n\x1a\n")) return signature::hdf5;
  if (head.starts_with("RIFF")) return signature::riff;
  return signature::none;
}

std::string_view describe(signature s) {
  switch (s) {
    case signature::none: return {};
    case signature::npy: return "a NumPy .npy file";
    case signature::matrix_market: return "a Matrix Market file (a sparse matrix: scanlab-cg -i reads those)";
    case signature::zip: return "a zip archive (a NumPy .npz is one: save the array with numpy.save instead)";
    case signature::gzip: return "gzip-compressed data (decompress it first)";
    case signature::bzip2: return "bzip2-compressed data (decompress it first)";
    case signature::xz: return "xz-compressed data (decompress it first)";
    case signature::zstd: return "zstd-compressed data (decompress it first)";
    case signature::hdf5: return "an HDF5 file (save the array with numpy.save instead)";
    case signature::riff: return "a RIFF file such as a WAV (data/fetch.sh shows how to convert one to .npy)";
  }
  return {};
}

bool looks_like_text(std::string_view head) {
  return std::none_of(head.begin(), head.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return (byte < 0x20 && (byte < '\t' || byte > '\r')) || byte == 0x7f;
  });
}

std::string describe_start(std::string_view head) {
  if (head.empty()) return "the file is empty";
  constexpr std::size_t shown = 16;
  std::string text = "it starts with ";
  if (looks_like_text(head)) {
    text += quoted_excerpt(head, shown);
  } else {  // binary: every byte above ASCII as \xNN too
    text += '"';
    for (const char c : head.substr(0, shown)) {
      const auto byte = static_cast<unsigned char>(c);
      if (byte < 0x80) {
        text += printable(std::string_view(&c, 1));
      } else {
        constexpr char digits[] = "0123456789abcdef";
        text += {'\\', 'x', digits[byte >> 4], digits[byte & 15]};
      }
    }
    text += head.size() > shown ? "...\"" : "\"";
  }
  if (const std::string_view what = describe(sniff(head)); !what.empty()) {
    text += ": ";
    text += what;
  }
  return text;
}

}  // namespace scanlab::io
