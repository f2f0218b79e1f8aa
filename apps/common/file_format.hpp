// What a file's first bytes say it is. The dataset readers (dataset.hpp) pick .npy by its
// magic whatever the file is called, and name the format of a file they cannot read instead
// of failing somewhere inside it ("x.npy: not a .npy file: ... gzip-compressed data").
//
// Signatures recognised (the bytes a file starts with):
//   .npy            \x93NUMPY
//   Matrix Market   %%MatrixMarket (any case; scanlab-cg's matrices)
//   zip             PK\x03\x04 (also NumPy's .npz), PK\x05\x06 (an empty archive)
//   gzip            \x1f\x8b
//   bzip2           BZh then a digit 1-9
//   xz              \xfd7zXZ\0
//   zstd            \x28\xb5\x2f\xfd
//   HDF5            \x89HDF\r\n\x1a\n
//   RIFF (WAV)      RIFF....WAVE, or RIFF alone
// Raw binary has no signature; text is recognised by its bytes (looks_like_text).
#pragma once

#include <string>
#include <string_view>

namespace scanlab::io {

enum class signature { none, npy, matrix_market, zip, gzip, bzip2, xz, zstd, hdf5, riff };

// The bytes every .npy file starts with.
inline constexpr std::string_view npy_magic{"\x93NUMPY", 6};

// The signature `head` (a file's first bytes, at least 16 where the file has them) starts with.
[[nodiscard]] signature sniff(std::string_view head);

// What a signature means, for a message: "gzip-compressed data (decompress it first)".
// Empty for signature::none.
[[nodiscard]] std::string_view describe(signature s);

// Whether `head` reads as text: no NUL and no control characters other than tab, line feed,
// vertical tab, form feed and carriage return (bytes from 0x80 up are taken for UTF-8).
// An empty head is text (an empty text file holds no values).
[[nodiscard]] bool looks_like_text(std::string_view head);

// The start of a file for a one-line message: `it starts with "PK\x03\x04..."`, followed by
// what the signature means where one is recognised, or "the file is empty".
[[nodiscard]] std::string describe_start(std::string_view head);

}  // namespace scanlab::io
