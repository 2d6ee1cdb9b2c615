// A compute resource (a GPU, or one stream of it) that runs jobs one at a time in submission
// order (FIFO). Decode and prefill either share one Executor or have one each (SimConfig).
#pragma once
#include <deque>
#include <functional>

#include "sim/event_queue.h"

namespace kvstream::sim {

class Executor {
 public:
  // Called when the job ends, with the time it started (start - submission = queueing).
  using Done = std::function<void(double start_s)>;

  explicit Executor(EventQueue& events) : events_(events) {}
  void submit(double duration_s, Done done);
  double busy_s() const { return busy_s_; }

 private:
  struct Job {
    double duration_s;
    Done done;
  };
  void start_next();
  void finish_running();

  EventQueue& events_;
  std::deque<Job> queue_;
  bool running_ = false;
  Job running_job_;
  double running_start_s_ = 0;
  double busy_s_ = 0;  // total time spent running jobs
};

}  // namespace kvstream::sim
