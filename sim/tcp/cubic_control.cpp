#include "sim/tcp/cubic_control.h"

#include <algorithm>
#include <cmath>

namespace kvstream::sim {

void CubicControl::on_loss(const RoundSample&) {
  epoch_start_s_ = -1;
  w_max_ = cwnd_ < w_max_ ? cwnd_ * (1 + kBeta) / 2 : cwnd_;
  cwnd_ = ssthresh_ = std::max(2.0, cwnd_ * kBeta);
}

bool CubicControl::leaves_slow_start(const RoundSample& s) {
  if (hystart_found_ || !model_.hystart || cwnd_ < kHystartLowWindow || !(s.capacity_bps > 0)) return false;
  // Delay increase: the round's first ACKs (HyStart takes the least of 8) came back more than
  // clamp(rtt / 8, 4 ms, 16 ms) late; found after those 8 ACKs, each of which had grown the window.
  if (s.queue_delay_s > std::clamp(s.rtt_s / 8, kHystartDelayMin_s, kHystartDelayMax_s)) {
    hystart_found_ = true;
    cwnd_ += kHystartMinSamples;
    ssthresh_ = cwnd_;
    return true;
  }
  // The ACK train:
  const double packet_bits = 8 * model_.packet_bytes;
  const double train_s = s.sent_packets * packet_bits / s.capacity_bps;
  const double threshold_s = s.rtt_s / 2;
  if (train_s <= threshold_s) return false;
  // The train passed the mark after threshold_s of ACKs, each of which had grown the window by one.
  hystart_found_ = true;
  cwnd_ += threshold_s * s.capacity_bps / packet_bits;
  ssthresh_ = cwnd_;
  return true;
}

void CubicControl::congestion_avoidance(const RoundSample& s) {
  if (epoch_start_s_ < 0) {
    epoch_start_s_ = s.now_s;
    reno_cwnd_ = cwnd_;
    if (w_max_ <= cwnd_) {
      k_s_ = 0;
      origin_ = cwnd_;
    } else {
      k_s_ = std::cbrt((w_max_ - cwnd_) / kC);
      origin_ = w_max_;
    }
  }
  const double t_s = s.now_s - epoch_start_s_ + s.rtt_s;
  const double since_k_s = t_s - k_s_;
  const double target = origin_ + kC * since_k_s * since_k_s * since_k_s;  // W(t) = C (t - K)^3 + W_max
  // cnt: acknowledgements per packet of growth.
  double cnt = target > cwnd_ ? cwnd_ / (target - cwnd_) : 100 * cwnd_;
  if (w_max_ == 0) cnt = std::min(cnt, 20.0);
  // TCP friendliness: Reno with beta's equivalent additive increase, one packet per
  // cwnd (1 + beta) / (3 (1 - beta)) acknowledgements (about 0.53 per round).
  reno_cwnd_ += s.delivered_packets / (cwnd_ * (1 + kBeta) / (3 * (1 - kBeta)));
  if (reno_cwnd_ > cwnd_) cnt = std::min(cnt, cwnd_ / (reno_cwnd_ - cwnd_));
  cnt = std::max(cnt, 2.0);
  cwnd_ += s.delivered_packets / cnt;
}

}  // namespace kvstream::sim
