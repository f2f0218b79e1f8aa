// What the fuzzing harnesses check besides "no crash": a broken promise of a reader is a
// finding too, reported as a crash (abort) so that libFuzzer keeps the input.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace scanlab::fuzz {

[[noreturn]] inline void fail(std::string_view what, std::string_view detail = {}) {
  std::fprintf(stderr, "fuzz check failed: %.*s%s%.*s\n", static_cast<int>(what.size()), what.data(),
               detail.empty() ? "" : ": ", static_cast<int>(detail.size()), detail.data());
  std::abort();
}

inline void require(bool ok, std::string_view what) {
  if (!ok) fail(what);
}

// Every refusal of a reader is one line that starts with the file's name: no line break or
// other control character (a NUL would cut it short) from the file may reach it.
inline void require_one_line_naming(std::string_view message, std::string_view name) {
  if (message.substr(0, name.size()) != name) fail("the error does not start with the file's name", message);
  for (const char c : message) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) fail("the error is not one printable line", message);
  }
}

}  // namespace scanlab::fuzz
