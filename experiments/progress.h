// Progress of a sweep: done/total, rate and ETA. On a terminal, one bar redrawn in place (at most
// ten times a second); otherwise plain lines (every 10% or 30 s) that read well in a batch log.
#pragma once
#include <chrono>
#include <cstddef>
#include <iosfwd>
#include <mutex>

namespace kvstream::experiments {

class Progress {
 public:
  // `already_done` runs were finished before (a resumed sweep); the rate counts only new ones.
  Progress(size_t total, size_t already_done, std::ostream& out, bool terminal);
  void advance();  // thread-safe
  void finish();   // the final state, and a newline after a bar

 private:
  void draw(bool final);

  size_t total_, done_, resumed_;
  std::ostream& out_;
  bool terminal_;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point start_, last_draw_;
  size_t last_line_percent_ = 0;
};

}  // namespace kvstream::experiments
