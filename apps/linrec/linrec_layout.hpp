// Where the steps of each sequence of a linear-recurrence problem lie in its flat arrays:
// the layouts of scanlab/algorithms/linrec.cuh, for the CPU reference (linrec_reference.hpp),
// the app and the tests. Plain C++ (no long double, no CUDA): .cu files may include it.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

namespace scanlab::linrec_ref {

// Sequence k, step t:
//   row-major [batch, length]                 k * length + t
//   channels-last [groups, length, channels]  (g * length + t) * channels + c, k = g * channels + c
//                                             (interleaved [length, batch]: one group, channels = batch)
//   variable lengths (offsets)                offsets[k] + t, t < offsets[k + 1] - offsets[k]
struct sequence_layout {
  std::int64_t sequences = 1;
  std::int64_t length = 0;                // every sequence's (not with offsets)
  std::int64_t channels = 0;              // > 0: channels-last with this many channels
  std::span<const std::int64_t> offsets;  // sequences + 1 values: variable lengths

  [[nodiscard]] static sequence_layout rows(std::int64_t batch, std::int64_t length) {
    return {.sequences = batch, .length = length, .channels = 0, .offsets = {}};
  }
  [[nodiscard]] static sequence_layout interleaved(std::int64_t batch, std::int64_t length) {
    return {.sequences = batch, .length = length, .channels = batch > 0 ? batch : 1, .offsets = {}};
  }
  [[nodiscard]] static sequence_layout channels_last(std::int64_t groups, std::int64_t length, std::int64_t channels) {
    return {.sequences = groups * channels, .length = length, .channels = channels > 0 ? channels : 1, .offsets = {}};
  }
  [[nodiscard]] static sequence_layout varlen(std::span<const std::int64_t> offsets) {
    if (offsets.empty()) throw std::logic_error("linrec layout: offsets need at least one value");
    return {.sequences = static_cast<std::int64_t>(offsets.size()) - 1, .length = 0, .channels = 0, .offsets = offsets};
  }

  [[nodiscard]] bool variable() const { return !offsets.empty(); }
  [[nodiscard]] std::int64_t length_of(std::int64_t k) const {
    return variable() ? offsets[static_cast<std::size_t>(k) + 1] - offsets[static_cast<std::size_t>(k)] : length;
  }
  [[nodiscard]] std::int64_t at(std::int64_t k, std::int64_t t) const {
    if (variable()) return offsets[static_cast<std::size_t>(k)] + t;
    if (channels > 0) return ((k / channels) * length + t) * channels + k % channels;
    return k * length + t;
  }
  [[nodiscard]] std::int64_t elements() const {
    return variable() ? offsets.back() : sequences * length;
  }
};

// Why `offsets` cannot describe sequences over n elements ("" when they can): offsets[0]
// == 0, nondecreasing, offsets[S] == n. What the library assumes and does not check.
[[nodiscard]] inline std::string offsets_problem(std::span<const std::int64_t> offsets, std::int64_t n) {
  if (offsets.empty()) return "no values (S sequences need S + 1 offsets)";
  if (offsets.front() != 0) return "offsets[0] is " + std::to_string(offsets.front()) + ", not 0";
  for (std::size_t s = 1; s < offsets.size(); ++s) {
    if (offsets[s] < offsets[s - 1]) {
      return "not nondecreasing: offsets[" + std::to_string(s) + "] = " + std::to_string(offsets[s]) +
             " < offsets[" + std::to_string(s - 1) + "] = " + std::to_string(offsets[s - 1]);
    }
  }
  if (offsets.back() != n) {
    return "the last offset, offsets[" + std::to_string(offsets.size() - 1) + "] = " + std::to_string(offsets.back()) +
           ", is not n = " + std::to_string(n) + " (the number of elements)";
  }
  return "";
}

}  // namespace scanlab::linrec_ref
