// The outer loop of the apps' streaming paths (scanlab-reduce, -scan, -compact with
// --device-memory, or on inputs larger than GPU memory).
//
// The streaming library (scanlab/streaming.cuh) is host-synchronous: one call runs a whole
// host array through the GPU and returns when it is done. The apps call it once per slice of
// the input (--stream-slice, default 1 GiB), carrying the running value between slices (the
// reduce accumulator, the scan's last value, the kept count), so that between two calls they
// can draw the progress bar, stop on Ctrl-C (the output's temporary file removed), check the
// slice against the CPU reference while its pages are in memory, and write the slice's output;
// and a slice bounds the host buffers an output needs. The cost: each call fills and drains
// the library's pipeline once (about one chunk, 64 MiB, not overlapped per slice).
#pragma once

#include "common/cli.hpp"
#include "common/progress.hpp"
#include "common/stream_workspace.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <stdexcept>
#include <string>

namespace scanlab::cli {

// What a streaming run measured.
struct stream_timing {
  double seconds = 0;      // the whole loop (GPU calls, CPU reference, writing)
  double gpu_seconds = 0;  // inside the streaming library's calls (what `step` reports)
  std::int64_t slices = 0;
};

// Calls step(begin, count) for consecutive slices of [0, n) of about slice_bytes of input
// (items of item_bytes; at least one item per slice); step returns the seconds it spent in
// the streaming library. Draws a progress bar over the input bytes where `progress` (and
// stderr is a terminal). Throws std::runtime_error("interrupted") between slices after
// Ctrl-C or SIGTERM where catch_interrupts() was called.
template <class Step>
stream_timing for_each_slice(const std::string& name, bool progress, std::int64_t n, std::size_t item_bytes,
                             std::uint64_t slice_bytes, Step&& step) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  stream_timing timing;
  progress_bar bar(name, static_cast<std::uint64_t>(n) * item_bytes, progress);
  const auto slice = std::max<std::int64_t>(1, static_cast<std::int64_t>(slice_bytes / item_bytes));
  for (std::int64_t begin = 0; begin < n; begin += slice) {
    if (interrupted()) throw std::runtime_error("interrupted: nothing written");
    const std::int64_t count = std::min(slice, n - begin);
    timing.gpu_seconds += step(begin, count);
    ++timing.slices;
    bar.update(static_cast<std::uint64_t>(begin + count) * item_bytes);
  }
  timing.seconds = std::chrono::duration<double>(clock::now() - start).count();
  return timing;
}

// Seconds spent in `call` (a streaming library call: host-synchronous).
template <class Call>
double timed(Call&& call) {
  const auto start = std::chrono::steady_clock::now();
  call();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The summary of a streaming run: one line (on `out` with --bench, else in the log) saying
// how much host data went through (input read plus output written: `host_bytes`), in how many
// slices and chunks, and at what rate, over the whole loop and inside the library's calls;
// returned as the "streaming" object of the app's JSON report.
nlohmann::json stream_summary(const path_choice& path, const stream_workspace& ws, const stream_timing& timing,
                              std::uint64_t host_bytes, bool bench, std::ostream& out);

}  // namespace scanlab::cli
