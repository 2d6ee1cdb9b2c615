// One TCP connection of the `tcp` link model as a value: its congestion control's state and the
// arithmetic of its rounds (docs/EMULATION.md "The simulator's link models"; the model itself is
// described in sim/tcp/tcp_connection_link.h). Two users share this one implementation:
//   - TcpConnectionLink runs the rounds through the simulator's shared fluid link, with events;
//   - transfer_end_s runs them alone on a LinkCapacity, as plain arithmetic: the exact
//     single-request model that oracle-dp plans on (the true trace), and the transfer-time
//     predictor of mpc (a constant predicted rate, sim/transfer_predictor.h).
// A copy is an independent connection (the congestion control is cloned), so planners branch on it.
#pragma once
#include <memory>
#include <optional>

#include "sim/link_capacity.h"
#include "sim/tcp/congestion_control.h"
#include "sim/tcp/tcp_model.h"

namespace kvstream::sim {

class TcpConnection {
 public:
  // Throws std::invalid_argument for a congestion control without a model.
  explicit TcpConnection(const TcpModel& model);
  TcpConnection(const TcpConnection& other);
  TcpConnection& operator=(const TcpConnection& other);
  TcpConnection(TcpConnection&&) = default;
  TcpConnection& operator=(TcpConnection&&) = default;

  // What one round sends, decided when it starts.
  struct Round {
    double start_s = 0;
    double sent_bits = 0;     // the window, or what was left (headers included)
    double through_bits = 0;  // what the path and its queue hold: crosses the link now
    double lost_bits = 0;     // overflowed the drop-tail queue: sent again in later rounds
    double probe_s = 0;       // a tail loss's wait for its probe (two smoothed round trips)
    double first_packet_wait_s = 0;  // the round's first packet's wait for capacity
    // Its wait behind other connections' packets in the shared queue: its acknowledgements return that
    // much later, or, without a round trip (one round, no window), its bits flow that much later.
    double shared_queue_wait_s = 0;
  };

  // A transfer of `payload_bits` begins at now_s (a connection idle for longer than its timeout
  // restarts its window first).
  void begin_transfer(double now_s, double payload_bits);
  // The next round of the transfer in progress, starting at now_s on `capacity`, while other
  // connections have `others_in_flight_bits` on the link (0: alone). What of those exceeds the
  // path's bandwidth-delay product stands in the one drop-tail queue they share (up to its limit),
  // and every round waits behind it: a newcomer's slow start runs at that longer round trip.
  Round begin_round(double now_s, const LinkCapacity& capacity, double others_in_flight_bits = 0);
  // The round's bits are through at now_s: the congestion control hears of it. Returns when the
  // next round starts, or nullopt when the transfer is complete (the connection is then idle).
  std::optional<double> end_round(const Round& round, double now_s, const LinkCapacity& capacity);

  // When a transfer of `payload_bits` that begins at start_s completes, sent alone on `capacity`:
  // the rounds above, each round's bits arriving at capacity.arrival_s. +infinity when a round
  // never completes (no capacity).
  double transfer_end_s(double start_s, double payload_bits, const LinkCapacity& capacity);

  const TcpModel& model() const { return model_; }
  const CongestionControl& congestion_control() const { return *control_; }
  double lost_bits() const { return lost_bits_; }

 private:
  TcpModel model_;
  std::unique_ptr<CongestionControl> control_;
  double idle_since_s_ = -1;  // when the last transfer ended; -1: never sent
  double lost_bits_ = 0;      // over the connection's life
  // The transfer in progress.
  double remaining_bits_ = 0;
  bool first_round_ = false;
  // How far the last round's bits overran its round trip: ACK-clocked, the next round's first
  // packets would have queued behind them that long.
  double overrun_s_ = 0;
};

}  // namespace kvstream::sim
