// Results handed on in order of their position, whatever order the threads that make them finish in:
// what lets `kvstream run` write runs.jsonl sorted and accumulate summary.csv's rows in run order
// while the runs finish. A thread may work at most `window` positions ahead of the next one to hand
// on (it waits in wait_turn beyond that), so at most `window` results are ever held.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <optional>

namespace kvstream::experiments {

template <typename T>
class InOrder {
 public:
  // `consume` gets each result in position order, `end_of_batch` is called after each run of
  // consecutive positions handed on; both one call at a time.
  InOrder(size_t window, std::function<void(T&&)> consume, std::function<void()> end_of_batch)
      : window_(window), consume_(std::move(consume)), end_of_batch_(std::move(end_of_batch)) {}

  // Blocks while `position` is `window` or more ahead of the next to hand on; false once stopped.
  bool wait_turn(size_t position) {
    std::unique_lock<std::mutex> lock(mutex_);
    turn_.wait(lock, [&] { return stopped_ || position < next_ + window_; });
    return !stopped_;
  }

  // The result of `position` (nullopt: nothing to hand on there). Hands on every result that is now
  // next; what `consume` or `end_of_batch` throw comes out here.
  void deliver(size_t position, std::optional<T> result) {
    std::lock_guard<std::mutex> lock(mutex_);
    waiting_.emplace(position, std::move(result));
    if (waiting_.begin()->first != next_) return;
    for (auto it = waiting_.begin(); it != waiting_.end() && it->first == next_; it = waiting_.erase(it), ++next_)
      if (it->second) consume_(std::move(*it->second));
    end_of_batch_();
    turn_.notify_all();
  }

  // Releases every thread waiting for its turn (after a failure): wait_turn answers false from now on.
  void stop() {
    std::lock_guard<std::mutex> lock(mutex_);
    stopped_ = true;
    turn_.notify_all();
  }

 private:
  const size_t window_;
  const std::function<void(T&&)> consume_;
  const std::function<void()> end_of_batch_;
  std::mutex mutex_;
  std::condition_variable turn_;
  std::map<size_t, std::optional<T>> waiting_;  // position -> result, for positions >= next_
  size_t next_ = 0;
  bool stopped_ = false;
};

}  // namespace kvstream::experiments
