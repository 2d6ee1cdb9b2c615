// The window of the `tcp` link model's connection (sim/tcp/tcp_connection_link.h), one congestion
// control per file, named as the kernel names them (docs/EMULATION.md "The simulator's link
// models"). The model works in rounds: a round sends up to window_packets(), the bits cross the
// shared fluid link, and the round's outcome (what was delivered, what overflowed the drop-tail
// queue) updates the window.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "sim/tcp/tcp_model.h"

namespace kvstream::sim {

// What one round did, as the sender learns it about a round trip later.
struct RoundSample {
  double now_s = 0;            // when the round's last bit was through
  double round_s = 0;          // from the round's start
  double sent_packets = 0;     // the round's window (or what was left to send)
  double delivered_packets = 0;
  double lost_packets = 0;     // overflowed the bottleneck's queue; sent again in later rounds
  double capacity_bps = 0;     // the path's mean capacity over the round
  double rtt_s = 0;            // the path's round trip without queueing
  double queue_delay_s = 0;    // the queueing delay the round's first packets met (behind the round before)
};

class CongestionControl {
 public:
  virtual ~CongestionControl() = default;
  // Packets the next round may have in flight.
  virtual double window_packets() const = 0;
  virtual void on_round(const RoundSample& sample) = 0;
  // The connection sends again after `idle_s` without data in flight; `rto_s` is its retransmission
  // timeout (net.ipv4.tcp_slow_start_after_idle applies where the algorithm honours it).
  virtual void on_restart(double idle_s, double rto_s) = 0;
  // Whether the sender paces its window over the round trip; otherwise the first round of a
  // transfer on an idle connection leaves as one burst, at the sender's line rate.
  virtual bool paced() const = 0;
  // An independent copy of this state (a planner branches on a connection, sim/tcp/tcp_connection.h).
  virtual std::unique_ptr<CongestionControl> clone() const = 0;
};

// The model of model.congestion_control; throws std::invalid_argument for a name without one
// (listing those with one).
std::unique_ptr<CongestionControl> make_congestion_control(const TcpModel& model);
const std::vector<std::string>& modelled_congestion_controls();

// Slow start and Linux's tcp_cwnd_restart, shared by the loss-based algorithms (reno, cubic): the
// window grows by what each round delivered until ssthresh, and halves once per timeout of idleness.
class LossBasedControl : public CongestionControl {
 public:
  explicit LossBasedControl(const TcpModel& model);
  double window_packets() const override { return cwnd_; }
  void on_round(const RoundSample& sample) override;
  void on_restart(double idle_s, double rto_s) override;
  bool paced() const override { return false; }  // Linux paces cubic and reno only under the fq qdisc
  double ssthresh_packets() const { return ssthresh_; }

 protected:
  // After a round with losses: the window and ssthresh (multiplicative decrease).
  virtual void on_loss(const RoundSample& sample) = 0;
  // A slow-start round ended without loss: whether to leave slow start now (HyStart), setting cwnd_
  // and ssthresh_ itself.
  virtual bool leaves_slow_start(const RoundSample&) { return false; }
  // A round in congestion avoidance ended without loss.
  virtual void congestion_avoidance(const RoundSample& sample) = 0;

  TcpModel model_;
  double cwnd_, ssthresh_;
  bool last_round_filled_ = false;
};

}  // namespace kvstream::sim
