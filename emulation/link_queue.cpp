#include "emulation/link_queue.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace kvstream::emulation {

LinkQueue::LinkQueue(LinkDirectionConfig config) : config_(std::move(config)) {
  if (!(config_.one_way_delay_s >= 0) || !std::isfinite(config_.one_way_delay_s))
    throw std::invalid_argument("a link's one-way delay must be finite and >= 0 s");
  if (!(config_.trace_offset_s >= 0)) throw std::invalid_argument("a link's trace offset must be >= 0 s");
  if (config_.queue_limit_bytes == 0) throw std::invalid_argument("a link's queue must hold at least one byte");
  if (config_.trace && config_.trace->chunk_indexed())
    throw std::invalid_argument("trace \"" + config_.trace->name() +
                                "\" is chunk-indexed (one rate per chunk): an emulated link needs capacity over time");
}

void LinkQueue::forget_departed(double now_s) {
  while (!queue_.empty() && queue_.front().departure_s <= now_s) {
    queued_bytes_ -= queue_.front().bytes;
    queue_.pop_front();
  }
}

uint64_t LinkQueue::queued_bytes(double now_s) {
  forget_departed(now_s);
  return queued_bytes_;
}

std::optional<double> LinkQueue::admit(double now_s, uint32_t bytes) {
  now_s = std::max(now_s, last_arrival_s_);  // a clock read twice may step back by rounding: keep FIFO
  last_arrival_s_ = now_s;
  forget_departed(now_s);
  if (queued_bytes_ + bytes > config_.queue_limit_bytes) {
    ++stats_.dropped_packets;
    stats_.dropped_bytes += bytes;
    return std::nullopt;
  }
  const double start_s = std::max(now_s, last_departure_s_);
  double departure_s = start_s;
  if (config_.trace) {  // before trace time 0 (link time < 0: setting up) the link serves as from trace time 0
    const double trace_start_s = std::max(0.0, config_.trace_offset_s + start_s);
    departure_s = config_.trace->arrival_s(trace_start_s, 8.0 * bytes) - config_.trace_offset_s;
  }
  last_departure_s_ = departure_s;
  queue_.push_back({departure_s, bytes});
  queued_bytes_ += bytes;
  stats_.max_queued_bytes = std::max(stats_.max_queued_bytes, queued_bytes_);
  ++stats_.packets;
  stats_.bytes += bytes;
  return departure_s + config_.one_way_delay_s;
}

}  // namespace kvstream::emulation
