#include "sim/tcp/bbr_control.h"

#include <algorithm>

namespace kvstream::sim {

namespace {
constexpr double kCycleGains[] = {1.25, 0.75, 1, 1, 1, 1, 1, 1};
}

BbrControl::BbrControl(const TcpModel& model) : model_(model), cwnd_(model.initial_window_packets) {}

double BbrControl::bandwidth_bps() const {
  // Before the first sample: the initial window per round trip (tcp_bbr.c's bbr_init_pacing_rate_from_rtt).
  if (samples_bps_.empty())
    return model_.rtt_s > 0 ? model_.initial_window_packets * 8 * model_.packet_bytes / model_.rtt_s : 0;
  return *std::max_element(samples_bps_.begin(), samples_bps_.end());
}

double BbrControl::pacing_gain() const {
  switch (mode_) {
    case Mode::kStartup: return kHighGain;
    case Mode::kDrain: return 1 / kHighGain;
    case Mode::kProbeBw: return kCycleGains[cycle_];
  }
  return 1;
}

double BbrControl::window_packets() const {
  const double bdp_packets = bandwidth_bps() * model_.rtt_s / (8 * model_.packet_bytes);
  const double paced = std::max(1.0, pacing_gain() * bdp_packets);
  const double window = mode_ == Mode::kStartup ? cwnd_ : std::max(4.0, kCwndGain * bdp_packets);
  return std::min(paced, window);
}

void BbrControl::on_round(const RoundSample& s) {
  // A round that did not fill the window (a chunk's last) is application-limited: its rate says
  // nothing of the pipe being full (bbr_check_full_bw_reached skips it).
  const bool app_limited = s.sent_packets + 1 < window_packets();
  if (s.round_s > 0) {
    samples_bps_.push_back(s.delivered_packets * 8 * model_.packet_bytes / s.round_s);
    if (int(samples_bps_.size()) > kBandwidthRounds) samples_bps_.pop_front();
  }
  switch (mode_) {
    case Mode::kStartup:
      cwnd_ += s.delivered_packets;
      // bbr_check_full_bw_reached: three rounds without 25 % more bandwidth fill the pipe.
      if (app_limited) break;
      if (bandwidth_bps() >= 1.25 * full_bandwidth_bps_) {
        full_bandwidth_bps_ = bandwidth_bps();
        rounds_without_growth_ = 0;
      } else if (++rounds_without_growth_ >= 3) {
        mode_ = Mode::kDrain;
      }
      break;
    case Mode::kDrain:
      mode_ = Mode::kProbeBw;
      break;
    case Mode::kProbeBw:
      cycle_ = (cycle_ + 1) % 8;
      break;
  }
}

}  // namespace kvstream::sim
