// A compute resource (a GPU, or one stream of it) that runs jobs one at a time in submission
// order (FIFO). Decode and prefill either share one Executor or have one each (SimConfig).
//
// A job lasts its modelled duration_s of simulated time, unless the executor has a JobRunner: then
// the runner does the job's real work (emulation with a model: emulation/model/model_job_runner.h)
// and the job lasts as long as that takes, on the real-time event queue.
#pragma once
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>

#include "sim/event_queue.h"

namespace kvstream::sim {

// One piece of GPU work of one request.
struct GpuJob {
  enum class Kind { kDecode, kRecompute, kQueryPrefill };
  Kind kind = Kind::kDecode;
  size_t request = 0;
  size_t chunk = 0;        // kDecode, kRecompute
  int choice = 0;          // kDecode: the level index
  double duration_s = 0;   // the cost model's time for it
};

class JobRunner {
 public:
  virtual ~JobRunner() = default;
  // Called once, from any thread, when the job is done: with nullptr, or with what went wrong
  // (which ends the run: the executor rethrows it on the event loop).
  using Finished = std::function<void(std::exception_ptr error)>;
  // Starts `job`'s real work. Jobs of one executor never overlap.
  virtual void start(const GpuJob& job, Finished finished) = 0;
  // Waits for the job in progress, if any, and forgets the rest: no finished() is called after it
  // returns (so that an emulation ended by an error can free its event queue).
  virtual void stop() = 0;
};

class Executor {
 public:
  // Called when the job ends, with the time it started (start - submission = queueing).
  using Done = std::function<void(double start_s)>;

  // Without a runner jobs take their duration_s; with one (real-time events only), their real time.
  explicit Executor(EventQueue& events, JobRunner* runner = nullptr) : events_(events), runner_(runner) {}
  void submit(const GpuJob& job, Done done);
  double busy_s() const { return busy_s_; }

 private:
  struct Queued {
    GpuJob job;
    Done done;
  };
  void start_next();
  void finish_running();

  EventQueue& events_;
  JobRunner* runner_;
  std::deque<Queued> queue_;
  bool running_ = false;
  Queued running_job_;
  double running_start_s_ = 0;
  double busy_s_ = 0;  // total time spent running jobs
};

}  // namespace kvstream::sim
