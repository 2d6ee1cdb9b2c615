// BBR (v1, Linux's tcp_bbr.c) in the tcp link model's rounds. A round sends the pacing gain times
// the bottleneck bandwidth estimate for one minimum round trip, within a window of cwnd_gain
// bandwidth-delay products:
//   - STARTUP: gain 2/ln 2, the window growing by what each round delivered (doubling per round),
//     until the bandwidth estimate has not grown by 25 % for 3 rounds;
//   - DRAIN: gain ln 2 / 2 for one round, to empty the queue startup built;
//   - PROBE_BW: gains 5/4, 3/4, 1, 1, 1, 1, 1, 1, one per round (starting at the third phase).
// The estimate is the largest delivery rate of the last 10 rounds. BBR v1 does not back off on
// loss: lost packets are only sent again. Not modelled: PROBE_RTT (every 10 s; requests are
// shorter), and the pacing's sub-round timing.
#pragma once
#include <deque>

#include "sim/tcp/congestion_control.h"

namespace kvstream::sim {

class BbrControl final : public CongestionControl {
 public:
  explicit BbrControl(const TcpModel& model);
  double window_packets() const override;
  void on_round(const RoundSample& sample) override;
  void on_restart(double, double) override {}  // BBR paces on from its estimate after idleness
  bool paced() const override { return true; }
  std::unique_ptr<CongestionControl> clone() const override { return std::make_unique<BbrControl>(*this); }

  enum class Mode { kStartup, kDrain, kProbeBw };
  Mode mode() const { return mode_; }
  double bandwidth_bps() const;

  static constexpr double kHighGain = 2.885;  // 2 / ln 2
  static constexpr double kCwndGain = 2;
  static constexpr int kBandwidthRounds = 10;

 private:
  double pacing_gain() const;

  TcpModel model_;
  Mode mode_ = Mode::kStartup;
  double cwnd_;                        // packets
  std::deque<double> samples_bps_;     // delivery rates of the last rounds, newest last
  double full_bandwidth_bps_ = 0;
  int rounds_without_growth_ = 0;
  int cycle_ = 2;                      // PROBE_BW phase
};

}  // namespace kvstream::sim
