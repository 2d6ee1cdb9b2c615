// One direction of an emulated link, as Mahimahi's mm-link + mm-delay model it (docs/EMULATION.md):
// packets wait in a drop-tail queue, leave it one at a time at the capacity a bandwidth trace gives
// at that moment, then travel for a fixed one-way delay.
//
// Pure arithmetic on a clock the caller supplies, so it is tested without a network. Invariants:
//   - FIFO: packets leave in arrival order; a packet starts once it has arrived and the packet before
//     it has left: start_k = max(arrival_k, departure_{k-1});
//   - serialization follows the trace exactly: departure_k = trace.arrival_s(start_k, 8 · size_k),
//     so while the queue is never empty the bytes that leave in [t0, t1) are the trace's integral
//     over it (up to one packet at each end); an idle link banks no capacity (Mahimahi wastes an
//     unused delivery opportunity the same way);
//   - drop-tail: a packet that would make the bytes queued (arrived, not yet departed, the packet
//     being serialized included) exceed the limit is dropped on arrival;
//   - delivery_k = departure_k + one-way delay.
#pragma once
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <optional>

#include "traces/bandwidth_trace.h"

namespace kvstream::emulation {

struct LinkDirectionConfig {
  // Capacity over time; nullptr: unlimited (only the delay applies). Link time t is trace time
  // trace_offset_s + t (before trace time 0, while a link is being set up, it is trace time 0).
  std::shared_ptr<const traces::BandwidthTrace> trace;
  double trace_offset_s = 0;
  double one_way_delay_s = 0;
  uint64_t queue_limit_bytes = std::numeric_limits<uint64_t>::max();  // drop-tail bound
};

struct LinkDirectionStats {
  uint64_t packets = 0, bytes = 0;        // admitted
  uint64_t dropped_packets = 0, dropped_bytes = 0;
  uint64_t max_queued_bytes = 0;
};

class LinkQueue {
 public:
  // Throws std::invalid_argument for a negative delay or offset, a zero queue limit, or a
  // chunk-indexed trace (an emulated link needs capacity over time).
  explicit LinkQueue(LinkDirectionConfig config);

  // A packet of `bytes` arrives at link time `now_s` (non-decreasing across calls): the link time at
  // which it is delivered at the far end, or nothing when the queue drops it.
  std::optional<double> admit(double now_s, uint32_t bytes);

  uint64_t queued_bytes(double now_s);  // arrived, not yet departed
  const LinkDirectionStats& stats() const { return stats_; }
  const LinkDirectionConfig& config() const { return config_; }

 private:
  struct InFlight {
    double departure_s;
    uint32_t bytes;
  };
  void forget_departed(double now_s);

  LinkDirectionConfig config_;
  std::deque<InFlight> queue_;  // admitted packets not yet departed, in order
  uint64_t queued_bytes_ = 0;
  double last_departure_s_ = 0;
  double last_arrival_s_ = 0;
  LinkDirectionStats stats_;
};

}  // namespace kvstream::emulation
