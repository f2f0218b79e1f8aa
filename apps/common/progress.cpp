#include "common/progress.hpp"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <iostream>

namespace scanlab::cli {

bool stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

status_line::status_line(std::string prefix, bool enabled, double per_second, std::chrono::milliseconds delay)
    : prefix_(std::move(prefix)),
      enabled_(enabled && stderr_is_terminal()),
      interval_(std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(1.0 / per_second))),
      next_(start_ + delay) {}

status_line::~status_line() { clear(); }

bool status_line::due() const { return enabled_ && clock::now() >= next_; }

void status_line::show(std::string_view text, bool force) {
  if (!enabled_ || (!force && !due())) return;
  next_ = clock::now() + interval_;
  drawn_ = true;
  std::string line = "\r" + prefix_ + ": ";
  line += text;
  line += "\033[K";  // erase what a longer previous line left
  std::cerr << line << std::flush;
}

void status_line::append(std::string_view text) {
  if (drawn_) std::cerr << text << std::flush;
}

void status_line::clear() {
  if (drawn_) std::cerr << "\r\033[K" << std::flush;
  drawn_ = false;
}

double status_line::elapsed_seconds() const { return std::chrono::duration<double>(clock::now() - start_).count(); }

std::string show_bytes(double bytes) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB"};
  int unit = 0;
  while (bytes >= 1000.0 && unit < 4) {
    bytes /= 1000.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.2f %s", bytes, units[unit]);
  return text;
}

progress_bar::progress_bar(std::string prefix, std::uint64_t total, bool enabled)
    : total_(total), line_(std::move(prefix), enabled, 10, std::chrono::milliseconds(0)) {}

void progress_bar::update(std::uint64_t done, bool force) {
  if (!force && !line_.due()) return;
  const double fraction = total_ == 0 ? 1.0 : static_cast<double>(done) / static_cast<double>(total_);
  constexpr int width = 30;
  const int filled = static_cast<int>(fraction * width);
  const double seconds = line_.elapsed_seconds();
  std::string line = "[";  // appended piece by piece: GCC 12 warns (-Wrestrict) on "[" + std::string(...)
  line.append(static_cast<std::size_t>(filled), '#');
  line.append(static_cast<std::size_t>(width - filled), ' ');
  line += "] ";
  char percent[16];
  std::snprintf(percent, sizeof percent, "%3d%% ", static_cast<int>(fraction * 100.0));
  line += percent + show_bytes(static_cast<double>(done)) + " / " + show_bytes(static_cast<double>(total_));
  if (seconds > 0.2) line += ", " + show_bytes(static_cast<double>(done) / seconds) + "/s";
  line_.show(line, force);
}

void progress_bar::syncing() {
  update(total_, true);
  line_.append(", syncing");
}

namespace {

volatile std::sig_atomic_t interrupt_flag = 0;

extern "C" void on_interrupt(int signal_number) {
  interrupt_flag = 1;
  std::signal(signal_number, SIG_DFL);  // a second Ctrl-C ends the program at once
}

}  // namespace

void catch_interrupts() {
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
}

bool interrupted() { return interrupt_flag != 0; }

}  // namespace scanlab::cli
