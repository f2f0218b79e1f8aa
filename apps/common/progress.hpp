// A one-line status on standard error, redrawn in place: the progress of a long run
// (scanlab-gen's bar, the iterations of scanlab-cg and scanlab-jacobi).
//
// It shows only where stderr is a terminal (never in a log file or a pipe), not before
// `delay` has passed (a short run shows nothing), at most `per_second` times a second, and
// the line is cleared when the run ends (clear(), or the destructor) so that what is printed
// next starts on a clean line. Asking whether a redraw is due costs one clock read: callers
// that call it on every step build the text only when it is.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace scanlab::cli {

class status_line {
 public:
  using clock = std::chrono::steady_clock;

  // `prefix` starts the line ("scanlab-cg"); enabled = false shows nothing (-q).
  explicit status_line(std::string prefix, bool enabled = true, double per_second = 4,
                       std::chrono::milliseconds delay = std::chrono::milliseconds(500));
  status_line(const status_line&) = delete;
  status_line& operator=(const status_line&) = delete;
  ~status_line();

  // Whether show() would draw now.
  [[nodiscard]] bool due() const;
  // Draws "<prefix>: <text>" over the previous line if due (or `force`, once enabled).
  void show(std::string_view text, bool force = false);
  // Appends to the line as drawn (e.g. ", syncing"), without redrawing it.
  void append(std::string_view text);
  // Erases the line if one was drawn.
  void clear();

  [[nodiscard]] bool enabled() const { return enabled_; }
  [[nodiscard]] double elapsed_seconds() const;

 private:
  std::string prefix_;
  bool enabled_;
  clock::duration interval_;
  clock::time_point start_ = clock::now();
  clock::time_point next_;
  bool drawn_ = false;
};

// Whether progress lines can be seen: stderr is a terminal.
[[nodiscard]] bool stderr_is_terminal();

// "1.23 GB" (decimal units, as disks are sold).
[[nodiscard]] std::string show_bytes(double bytes);

// A progress bar over `total` bytes on a status_line: "[####      ]  40% 1.20 GB / 3.00 GB,
// 850 MB/s", redrawn at most 10 times a second, only on a terminal (scanlab-gen's output, the
// streaming paths of scanlab-reduce, -scan and -compact).
class progress_bar {
 public:
  progress_bar(std::string prefix, std::uint64_t total, bool enabled);
  void update(std::uint64_t done, bool force = false);
  // The last state, shown while the file is flushed to disk.
  void syncing();

 private:
  std::uint64_t total_;
  status_line line_;
};

// Ctrl-C and SIGTERM set a flag instead of ending the process, so that a long run can stop
// between two steps and remove its temporary output on the way out (a second signal ends the
// process at once). interrupted() reads the flag; exit code 130 is the shells' for SIGINT.
void catch_interrupts();
[[nodiscard]] bool interrupted();
inline constexpr int exit_interrupted = 130;

}  // namespace scanlab::cli
