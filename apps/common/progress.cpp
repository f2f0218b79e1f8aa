#include "common/progress.hpp"

#include <unistd.h>

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

}  // namespace scanlab::cli
