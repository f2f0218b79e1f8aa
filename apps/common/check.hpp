// One validation check, the same in every app (the "validation" array of an app report,
// docs/json-schema.md): the app's result compared with one reference. Host code, no
// dependencies, so GPU translation units may fill checks too.
#pragma once

#include <optional>
#include <string>

namespace scanlab {

struct check {
  std::string against;              // the reference: "CPU reference", "CUB DevicePartition::If", "std::sort", ...
  bool passed = false;
  std::string detail;               // one line: what was compared, the bound, the first difference
  std::optional<double> max_error = std::nullopt;  // the largest error found, where a number means something (else null)
};

}  // namespace scanlab
