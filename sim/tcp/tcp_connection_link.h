// A request's TCP connection over the fluid link, the simulator's `tcp` link model (docs/EMULATION.md
// "The simulator's link models"), in rounds of one round trip each (the rounds' arithmetic is
// TcpConnection's, sim/tcp/tcp_connection.h; this link times them with events on the shared link):
//   - headers: every packet_bytes on the wire carry mss_bytes of payload (1,500 and 1,448 for TCP
//     with timestamps over IPv4), so a chunk of B bytes puts B · packet / mss on the link;
//   - a round sends the congestion control's window (sim/tcp/congestion_control.h: slow start, HyStart,
//     cubic's growth, BBR's pacing), or what is left of the chunk, through the shared fluid link;
//     the next round starts a round trip after it began, or when its bits are through if later
//     (a window beyond the path's bandwidth-delay product queues, and the link stays busy);
//   - the drop-tail queue: of a round's window, what exceeds the path's bandwidth-delay product
//     (capacity · rtt) plus the queue's room is lost, sent again in later rounds, and the congestion
//     control hears of the loss; the first round of a transfer, unless the congestion control
//     paces (bbr), arrives as one burst that only the queue holds;
//   - one queue for every connection on the link: what the others have in flight beyond the
//     bandwidth-delay product stands in it (up to its limit), taking its room and delaying every
//     round of this connection by its drain time, so a newcomer's slow start runs at the round
//     trip the queue makes (alone, nothing changes);
//   - a tail loss (a round that sent all that was left lost its end): recovery waits for the tail
//     loss probe, two smoothed round trips;
//   - restart after idle: a connection that sat idle for longer than its retransmission timeout
//     (about rtt + 200 ms) restarts its window, as the congestion control says.
// Without a round trip the connection is the fluid link plus headers. The handshake and each
// request's round trip stay SimConfig's request_rtt_s and chunk_rtt_s.
// Not modelled: the queueing delay the request of the next chunk waits behind, the split of the
// link between connections' rounds in flight by their windows (the fluid link shares it equally
// among them), the timing of packets inside a round.
#pragma once
#include "sim/event_queue.h"
#include "sim/link.h"
#include "sim/link_capacity.h"
#include "sim/tcp/tcp_connection.h"
#include "traces/bandwidth_trace.h"

namespace kvstream::sim {

class TcpConnectionLink final : public Link {
 public:
  // `shared`: the fluid link every connection of the run shares, over `trace` from `trace_offset_s`
  // (a capacity over time). Throws std::invalid_argument for a congestion control without a model.
  TcpConnectionLink(EventQueue& events, SharedLink& shared, const TcpModel& model, const traces::BandwidthTrace& trace,
                    double trace_offset_s);
  void send(double bits, size_t chunk, int choice, EventQueue::Handler on_delivered) override;

  const TcpConnection& connection() const { return connection_; }
  const CongestionControl& congestion_control() const { return connection_.congestion_control(); }
  double lost_bits() const { return connection_.lost_bits(); }

 private:
  void round(size_t chunk);

  EventQueue& events_;
  SharedLink& shared_;
  TraceCapacity capacity_;
  TcpConnection connection_;
  int choice_ = 0;  // of the transfer in flight
  EventQueue::Handler on_delivered_;
};

}  // namespace kvstream::sim
