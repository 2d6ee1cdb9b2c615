#include "sim/event_queue.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace kvstream::sim {

void EventQueue::schedule(double at_s, Handler handler) {
  // In real time the clock moves on between the reading a time was computed from and this call (a
  // request's arrival, computed before the handler that starts it ran at the clock's later time):
  // such an event runs now, late by that much, as it would on a real machine.
  if (real_time_ && std::isfinite(at_s) && at_s < now_s_) at_s = now_s_;
  if (!(at_s >= now_s_) || std::isinf(at_s))
    throw std::logic_error("EventQueue: event scheduled at " + std::to_string(at_s) + " s, before now (" +
                           std::to_string(now_s_) + " s) or at infinity");
  size_t slot = handlers_.size();
  if (free_slots_.empty()) {
    handlers_.push_back(std::move(handler));
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
    handlers_[slot] = std::move(handler);
  }
  heap_.push_back({at_s, next_sequence_++, slot});
  std::push_heap(heap_.begin(), heap_.end(), runs_later);
}

void EventQueue::run() {
  if (real_time_) {
    run_real_time();
    return;
  }
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), runs_later);
    const Entry entry = heap_.back();
    heap_.pop_back();
    Handler handler = std::move(handlers_[entry.slot]);
    free_slots_.push_back(entry.slot);
    now_s_ = entry.at_s;
    ++events_run_;
    handler();  // may schedule more events
  }
}

void EventQueue::use_real_time(std::chrono::steady_clock::time_point zero, double deadline_s) {
  real_time_ = true;
  zero_ = zero;
  deadline_s_ = deadline_s;
}

double EventQueue::clock_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - zero_).count();
}

void EventQueue::post(Handler handler) {
  {
    std::lock_guard<std::mutex> lock(inbox_mutex_);
    inbox_.push_back(std::move(handler));
  }
  inbox_changed_.notify_one();
}

void EventQueue::run_real_time() {
  std::vector<Handler> posted;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(inbox_mutex_);
      if (inbox_.empty()) {
        if (heap_.empty() && holds_ == 0) return;
        const auto due = [&] { return !inbox_.empty(); };
        const double wake_s = std::min(heap_.empty() ? deadline_s_ : heap_.front().at_s, deadline_s_);
        if (wake_s > clock_s()) {
          if (std::isinf(wake_s))
            inbox_changed_.wait(lock, due);
          else
            inbox_changed_.wait_until(lock, zero_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                        std::chrono::duration<double>(wake_s)),
                                      due);
        }
        if (inbox_.empty() && clock_s() >= deadline_s_ && (!heap_.empty() || holds_ > 0))
          throw RealTimeDeadlinePassed("the real-time event loop reached its deadline of " + std::to_string(deadline_s_) +
                                       " s with work left");
      }
      posted.swap(inbox_);
    }
    for (Handler& handler : posted) {  // at the clock's time, never before the events already run
      now_s_ = std::max(now_s_, clock_s());
      ++events_run_;
      handler();
    }
    posted.clear();
    while (!heap_.empty() && heap_.front().at_s <= clock_s()) {  // at their own times, which have come
      std::pop_heap(heap_.begin(), heap_.end(), runs_later);
      const Entry entry = heap_.back();
      heap_.pop_back();
      Handler handler = std::move(handlers_[entry.slot]);
      free_slots_.push_back(entry.slot);
      now_s_ = std::max(now_s_, entry.at_s);
      ++events_run_;
      handler();
    }
  }
}

}  // namespace kvstream::sim
