// The network between the KV store and the GPU (docs/ARCHITECTURE.md §4 sim/): capacity follows a
// bandwidth trace. Two models behind one interface:
//   SharedLink        a time-indexed trace shared fairly (processor sharing) by concurrent transfers;
//   ChunkIndexedLink  CacheGen's per-chunk traces: chunk c travels at the trace's c-th rate, one
//                     transfer at a time (single-request workloads).
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/event_queue.h"
#include "traces/bandwidth_trace.h"

namespace kvstream::sim {

class Link {
 public:
  virtual ~Link() = default;
  // Starts sending chunk `chunk` at choice `choice` (a level index, or text: sim/cost_model.h), `bits`
  // long, now; `on_delivered` runs at the time the last bit arrives. The simulator's links need only
  // the size; a real connection (emulation/tcp_link.h) fetches that chunk's bytes at that choice.
  virtual void send(double bits, size_t chunk, int choice, EventQueue::Handler on_delivered) = 0;
  // When the first bit of `chunk`'s last transfer arrived, for a link that sees it (a real
  // connection, emulation/tcp_link.h: a chunk request's round trip comes first); < 0 for the
  // simulator's links, whose bits flow from the moment they are sent. Valid in on_delivered.
  virtual double first_bit_s(size_t /*chunk*/) const { return -1; }
};

// Arrival time of `bits` sent alone from start_s: the arithmetic both links reduce to with one transfer.
// `hint` speeds up a sequence of nearby queries (BandwidthTrace::SearchHint); the answer is the same.
double solo_transfer_end_s(const traces::BandwidthTrace& trace, double trace_offset_s, double start_s, double bits,
                           size_t chunk, traces::BandwidthTrace::SearchHint* hint = nullptr);

class SharedLink final : public Link {
 public:
  SharedLink(EventQueue& events, const traces::BandwidthTrace& trace, double trace_offset_s);
  void send(double bits, size_t chunk, int choice, EventQueue::Handler on_delivered) override;
  // The bits of every transfer in flight not yet delivered, now.
  double bits_in_flight() const;

 private:
  struct Flow {
    double remaining_bits;
    EventQueue::Handler on_delivered;
  };
  // Invariant: every active flow has received bits_between(flows_since, now) / flows.size() since
  // `updated_s_`; all flows progress at the same rate, so the one with the least remaining bits
  // finishes first, after n x remaining bits have crossed the link.
  void catch_up();
  double served_per_flow_bits(double now_s) const;  // by each flow since updated_s_
  void schedule_next_completion();
  void on_completion_event(uint64_t generation);

  EventQueue& events_;
  const traces::BandwidthTrace& trace_;
  double trace_offset_s_;
  std::vector<Flow> flows_;
  std::vector<EventQueue::Handler> finished_;  // scratch of on_completion_event
  double updated_s_ = 0;
  uint64_t generation_ = 0;  // completion events of older generations are stale and ignored
};

class ChunkIndexedLink final : public Link {
 public:
  ChunkIndexedLink(EventQueue& events, const traces::BandwidthTrace& trace) : events_(events), trace_(trace) {}
  // Throws std::logic_error when a transfer is already in flight.
  void send(double bits, size_t chunk, int choice, EventQueue::Handler on_delivered) override;

 private:
  EventQueue& events_;
  const traces::BandwidthTrace& trace_;
  double busy_until_s_ = -1;
};

}  // namespace kvstream::sim
