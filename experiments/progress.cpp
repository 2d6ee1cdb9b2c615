#include "experiments/progress.h"

#include <cstdio>
#include <ostream>
#include <string>

namespace kvstream::experiments {

namespace {
std::string clock_text(double seconds) {
  const long s = static_cast<long>(seconds + 0.5);
  char text[32];
  std::snprintf(text, sizeof text, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  return text;
}
}  // namespace

Progress::Progress(size_t total, size_t already_done, std::ostream& out, bool terminal)
    : total_(total), done_(already_done), resumed_(already_done), out_(out), terminal_(terminal),
      start_(std::chrono::steady_clock::now()), last_draw_(start_) {
  if (total_ > 0) last_line_percent_ = 100 * done_ / total_;
}

void Progress::advance() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++done_;
  draw(false);
}

void Progress::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  draw(true);
}

void Progress::draw(bool final) {
  const auto now = std::chrono::steady_clock::now();
  const double since_draw = std::chrono::duration<double>(now - last_draw_).count();
  const size_t percent = total_ ? 100 * done_ / total_ : 100;
  if (!final) {
    if (terminal_ && since_draw < 0.1) return;
    if (!terminal_ && percent < last_line_percent_ + 10 && since_draw < 30) return;
  }
  last_draw_ = now;
  last_line_percent_ = percent;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double rate = elapsed > 0 ? static_cast<double>(done_ - resumed_) / elapsed : 0;
  const std::string eta = rate > 0 ? clock_text(static_cast<double>(total_ - done_) / rate) : "?";
  char line[160];
  if (terminal_) {
    const int width = 30, filled = static_cast<int>(width * percent / 100);
    std::snprintf(line, sizeof line, "\r  %zu/%zu runs [%s%s] %3zu%%  %.1f runs/s  ETA %s ", done_, total_,
                  std::string(filled, '#').c_str(), std::string(width - filled, '.').c_str(), percent, rate, eta.c_str());
    out_ << line << (final ? "\n" : "") << std::flush;
  } else {
    std::snprintf(line, sizeof line, "progress: %zu/%zu runs (%zu%%), %.1f runs/s, ETA %s", done_, total_, percent, rate,
                  eta.c_str());
    out_ << line << std::endl;
  }
}

}  // namespace kvstream::experiments
