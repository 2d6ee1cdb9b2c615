// CUBIC (RFC 9438) as Linux's tcp_cubic.c runs it, in the tcp link model's rounds:
//   - HyStart's delay increase (hystart_detect's second test): in slow start with at least 16
//     packets in flight, a round whose first packets queued longer than clamp(rtt / 8, 4, 16 ms)
//     behind the round before ends slow start. On a bursty trace a short outage is enough: measured
//     in the emulator on LTE at 20 ms, cubic leaves slow start at a few dozen packets and then
//     grows 5 % per round, several times slower than the fluid model's full rate;
//   - HyStart's ACK train (hystart_detect's first test): in slow start with at least 16 packets in
//     flight, a round whose ACKs return over more than half the minimum round trip (the window
//     has reached half the path's bandwidth-delay product) ends slow start, with ssthresh = cwnd
//     once the train has passed that mark. Measured in the emulator, this is what makes cubic slow
//     at high round trips: the window stops at about the path's BDP at that moment, and a path that
//     was slow then (a bursty trace) stays under-used;
//   - congestion avoidance along W(t) = C (t - K)^3 + W_max (C = 0.4 packets/s^3), t counted from
//     the epoch's start plus the minimum round trip; never below the Reno-friendly estimate; and
//     while no loss has set W_max, at least 5 % more per round (tcp_cubic.c's "cnt = 20");
//   - on loss, W_max = cwnd (fast convergence: (1 + beta) / 2 of it when below the last W_max) and
//     cwnd = ssthresh = beta cwnd, beta = 717/1024.
#pragma once
#include "sim/tcp/congestion_control.h"

namespace kvstream::sim {

class CubicControl final : public LossBasedControl {
 public:
  using LossBasedControl::LossBasedControl;
  std::unique_ptr<CongestionControl> clone() const override { return std::make_unique<CubicControl>(*this); }

  static constexpr double kBeta = 717.0 / 1024;
  static constexpr double kC = 41.0 * 10 / 1024;  // bic_scale 41: 0.4 packets/s^3
  static constexpr double kHystartLowWindow = 16;
  static constexpr double kHystartMinSamples = 8;
  static constexpr double kHystartDelayMin_s = 0.004, kHystartDelayMax_s = 0.016;

 private:
  void on_loss(const RoundSample& sample) override;
  bool leaves_slow_start(const RoundSample& sample) override;
  void congestion_avoidance(const RoundSample& sample) override;

  double w_max_ = 0;          // last_max_cwnd: the window at the last loss (0: none yet)
  double epoch_start_s_ = -1;  // < 0: no epoch (after a loss, or before congestion avoidance)
  double origin_ = 0, k_s_ = 0;
  double reno_cwnd_ = 0;      // the Reno-friendly estimate of this epoch
  bool hystart_found_ = false;
};

}  // namespace kvstream::sim
