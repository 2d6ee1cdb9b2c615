// A request's TCP connection over the fluid link (docs/EMULATION.md "Link models"), the simulator's
// `tcp` link model. What it adds to the fluid model, each measured against the emulator:
//   - headers: every packet_bytes on the wire carry mss_bytes of payload (1,500 and 1,448 for TCP
//     with timestamps over IPv4), so a chunk of B bytes puts B · packet / mss on the link;
//   - slow start: a fresh connection may have cwnd bytes in flight per round trip, cwnd starting at
//     initial_window_packets · mss and growing by the payload each round delivers (doubling after a
//     full window), until the window covers the path's
//     bandwidth-delay product (the capacity now · rtt); from then on the rest of the chunk flows at
//     the link's fluid rate. A round sends min(cwnd, what is left) through the shared link and the
//     next one starts a round trip after it began, or when its bytes are through if that is later;
//   - restart after idle (cubic and reno with net.ipv4.tcp_slow_start_after_idle=1, the kernel's
//     default; not bbr): a connection idle for longer than its retransmission timeout, about
//     rtt + 200 ms, halves its window for every timeout that passed, down to the initial window.
// The handshake and each request's round trip stay SimConfig's request_rtt_s and chunk_rtt_s.
// Not modelled: losses (the link's queue is taken as deep enough that TCP never overflows it) and
// the queueing delay a full window adds.
#pragma once
#include "sim/event_queue.h"
#include "sim/link.h"
#include "sim/sim_config.h"

namespace kvstream::sim {

class TcpConnectionLink final : public Link {
 public:
  // `shared`: the fluid link every connection of the run shares; `rate_bps(t)`: its capacity now.
  TcpConnectionLink(EventQueue& events, Link& shared, const TcpModel& model,
                    std::function<double(double now_s)> capacity_bps);
  void send(double bits, size_t chunk, EventQueue::Handler on_delivered) override;

  double cwnd_bytes() const { return cwnd_bytes_; }

 private:
  void round(size_t chunk);

  EventQueue& events_;
  Link& shared_;
  TcpModel model_;
  std::function<double(double)> capacity_bps_;
  double cwnd_bytes_;
  double idle_since_s_ = -1;  // when the last transfer ended; -1: never sent
  // The transfer in progress.
  double remaining_bits_ = 0;
  double round_start_s_ = 0;
  EventQueue::Handler on_delivered_;
};

}  // namespace kvstream::sim
