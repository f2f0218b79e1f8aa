// Values and segment inputs of the dataset apps (scanlab-reduce, scanlab-scan): a value as
// text, --init parsed in a given type, --offsets and --keys files read and checked.
#pragma once

#include "common/array.hpp"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace scanlab::io {

// The shortest text that reads back as the same value of its type.
template <class V>
std::string format_value(V v) {
  if constexpr (std::is_floating_point_v<V>) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*g", std::is_same_v<V, float> ? 9 : 17, static_cast<double>(v));
    return buffer;
  } else {
    return std::to_string(v);
  }
}

// Element i of an array as text (format_value of its type).
std::string text_of(const host_array& values, std::int64_t i);

// `option` 'text' as one value of `type` (e.g. --init in the result's type), or an
// std::invalid_argument saying what was expected.
host_array parse_value(const std::string& option, const std::string& text, dtype type);

// Segment boundaries from a file (.npy of any integer dtype; text and raw files are read as
// int64): at least two, non-decreasing, within [0, n]; an error naming the file and the
// first offending position otherwise.
std::vector<std::int64_t> load_offsets(const std::string& path, std::int64_t n);

// Segment keys as read from a file: their bit patterns, for equality, and the file's dtype,
// for writing keys back out (keys_as).
struct key_array {
  host_array bits;  // uint32 when the file's integers are 4 bytes or fewer, else uint64
  dtype type;       // the file's integer dtype
};

// Segment keys from a file: n integers of any integer dtype (a segment starts wherever the
// key changes); floats are refused (NaN and -0.0 make float equality a poor segment key).
// The bits are uint32 when every key fits 32 bits, else uint64 (bit patterns: equality is
// all that matters).
key_array load_keys(const std::string& path, std::int64_t n);

// Key bit patterns (uint32 or uint64, as load_keys makes them) as keys of `type` again: each
// the value the file held.
host_array keys_as(const host_array& bits, dtype type);

// Where the runs of equal consecutive keys (uint32 or uint64 bits) begin, then n: run r is
// [offsets[r], offsets[r + 1]); {0} for no keys (no runs).
std::vector<std::int64_t> run_offsets(const host_array& bits);

// What the dataset apps split their input by: nothing (the whole input), runs of equal keys,
// or offsets (at most one of the two).
struct segments {
  std::optional<host_array> keys;    // bits (load_keys), one per item
  std::vector<std::int64_t> offsets; // segment boundaries (load_offsets); empty: none
};

}  // namespace scanlab::io
