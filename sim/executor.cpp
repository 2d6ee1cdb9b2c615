#include "sim/executor.h"

namespace kvstream::sim {

void Executor::submit(double duration_s, Done done) {
  queue_.push_back({duration_s, std::move(done)});
  if (!running_) start_next();
}

void Executor::start_next() {
  if (queue_.empty()) {
    running_ = false;
    return;
  }
  running_ = true;
  running_job_ = std::move(queue_.front());
  queue_.pop_front();
  running_start_s_ = events_.now_s();
  busy_s_ += running_job_.duration_s;
  events_.schedule(running_start_s_ + running_job_.duration_s, [this] { finish_running(); });
}

void Executor::finish_running() {
  const Done done = std::move(running_job_.done);
  done(running_start_s_);  // may submit more jobs: they queue behind the ones already waiting
  start_next();
}

}  // namespace kvstream::sim
