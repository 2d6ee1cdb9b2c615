// The discrete-event core (ns-3/SimGrid style, reduced to what kvstream needs): a clock and a
// queue of callbacks ordered by (time, sequence number). The sequence number is the order of
// scheduling, so events at equal times run in the order they were scheduled and equal inputs give
// identical runs, independent of heap implementation details.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

namespace kvstream::sim {

class EventQueue {
 public:
  using Handler = std::function<void()>;

  double now_s() const { return now_s_; }
  uint64_t events_run() const { return events_run_; }

  // Runs `handler` at time `at_s` (>= now_s(); earlier times are a logic error and throw).
  void schedule(double at_s, Handler handler);
  // Runs events in (time, sequence) order until the queue is empty.
  void run();

 private:
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
};

}  // namespace kvstream::sim
