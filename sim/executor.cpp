#include "sim/executor.h"

namespace kvstream::sim {

void Executor::submit(const GpuJob& job, Done done) {
  queue_.push_back({job, std::move(done)});
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
  if (!runner_) {
    events_.schedule(running_start_s_ + running_job_.job.duration_s, [this] { finish_running(); });
    return;
  }
  events_.hold();  // run() waits for the runner
  runner_->start(running_job_.job, [this](std::exception_ptr error) {
    events_.post([this, error] {
      events_.release();
      if (error) std::rethrow_exception(error);
      finish_running();
    });
  });
}

void Executor::finish_running() {
  busy_s_ += events_.now_s() - running_start_s_;
  const Done done = std::move(running_job_.done);
  done(running_start_s_);  // may submit more jobs: they queue behind the ones already waiting
  start_next();
}

}  // namespace kvstream::sim
