// The discrete-event core (ns-3/SimGrid style, reduced to what kvstream needs): a clock and a
// queue of callbacks ordered by (time, sequence number). The sequence number is the order of
// scheduling, so events at equal times run in the order they were scheduled and equal inputs give
// identical runs, independent of heap implementation details.
//
// The same queue runs in real time for the emulator (kvstream emulate, docs/EMULATION.md): an event
// then runs when the steady clock reaches its time (time 0 = `zero`), and other threads hand in
// events with post(), which run as soon as the loop takes them, at the clock's time. run() waits
// while something outside holds it (a transfer in flight) and returns once nothing is left.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace kvstream::sim {

struct RealTimeDeadlinePassed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class EventQueue {
 public:
  using Handler = std::function<void()>;

  double now_s() const { return now_s_; }
  uint64_t events_run() const { return events_run_; }

  // Runs `handler` at time `at_s` (>= now_s(); earlier times are a logic error and throw, except in
  // real time, where an earlier time runs now, late).
  void schedule(double at_s, Handler handler);
  // Runs events in (time, sequence) order until the queue is empty (and, in real time, no hold()
  // is outstanding).
  void run();

  // Real time: event time t is steady-clock time zero + t. Call before run(). When the clock reaches
  // `deadline_s` with work left (events queued or a hold() outstanding), run() throws
  // RealTimeDeadlinePassed instead of waiting on (an emulated link that delivers nothing).
  void use_real_time(std::chrono::steady_clock::time_point zero,
                     double deadline_s = std::numeric_limits<double>::infinity());
  // Thread-safe: runs `handler` on the loop thread as soon as it gets there (real time only).
  void post(Handler handler);
  // Loop thread: something outside will post() (e.g. a transfer in flight), so run() must wait for
  // it even with no event queued; each hold() is ended by one release().
  void hold() { ++holds_; }
  void release() { --holds_; }
  // Real time since zero, from any thread (real time only).
  double clock_s() const;

 private:
  void run_real_time();

  // The heap holds small plain entries; handlers stay put in slots (reused through a free list),
  // so sifting moves 24 bytes instead of a std::function.
  struct Entry {
    double at_s;
    uint64_t sequence;
    size_t slot;
  };
  // Min-heap order: the event that runs next compares greatest.
  static bool runs_later(const Entry& a, const Entry& b) {
    return a.at_s != b.at_s ? a.at_s > b.at_s : a.sequence > b.sequence;
  }
  std::vector<Entry> heap_;
  std::vector<Handler> handlers_;
  std::vector<size_t> free_slots_;
  double now_s_ = 0;
  uint64_t next_sequence_ = 0;
  uint64_t events_run_ = 0;

  bool real_time_ = false;
  std::chrono::steady_clock::time_point zero_;
  double deadline_s_ = std::numeric_limits<double>::infinity();
  int holds_ = 0;
  std::mutex inbox_mutex_;
  std::condition_variable inbox_changed_;
  std::vector<Handler> inbox_;  // posted, not yet run
};

}  // namespace kvstream::sim
