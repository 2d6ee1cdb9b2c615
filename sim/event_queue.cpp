#include "sim/event_queue.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace kvstream::sim {

void EventQueue::schedule(double at_s, Handler handler) {
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

}  // namespace kvstream::sim
