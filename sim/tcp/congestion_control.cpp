#include "sim/tcp/congestion_control.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "sim/tcp/bbr_control.h"
#include "sim/tcp/cubic_control.h"
#include "sim/tcp/reno_control.h"

namespace kvstream::sim {

namespace {

// The registry: each modelled algorithm by its kernel name.
template <typename Control>
std::unique_ptr<CongestionControl> make(const TcpModel& model) {
  return std::make_unique<Control>(model);
}
using Factory = std::unique_ptr<CongestionControl> (*)(const TcpModel&);
const std::vector<std::pair<std::string, Factory>> kRegistry = {
    {"cubic", make<CubicControl>}, {"reno", make<RenoControl>}, {"bbr", make<BbrControl>}};

}  // namespace

const std::vector<std::string>& modelled_congestion_controls() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& [name, factory] : kRegistry) out.push_back(name);
    return out;
  }();
  return names;
}

std::unique_ptr<CongestionControl> make_congestion_control(const TcpModel& model) {
  for (const auto& [name, factory] : kRegistry)
    if (name == model.congestion_control) return factory(model);
  std::string known;
  for (const auto& name : modelled_congestion_controls()) known += (known.empty() ? "" : ", ") + name;
  throw std::invalid_argument("the tcp link model has no model of congestion control \"" + model.congestion_control +
                              "\" (modelled: " + known + ")");
}

LossBasedControl::LossBasedControl(const TcpModel& model)
    : model_(model), cwnd_(model.initial_window_packets), ssthresh_(std::numeric_limits<double>::infinity()) {}

void LossBasedControl::on_round(const RoundSample& sample) {
  // Linux's tcp_is_cwnd_limited: a round's acknowledgements grow the window only while the window is
  // used, and a round that filled it counts for the round after it too (is_cwnd_limited holds until
  // the data sent then is acknowledged). A chunk's last, short round thus still grows the window.
  const bool filled = sample.sent_packets + 1 >= cwnd_;
  const bool cwnd_limited = filled || last_round_filled_;
  last_round_filled_ = filled;
  if (sample.lost_packets > 0) {
    on_loss(sample);
    return;
  }
  if (cwnd_ < ssthresh_) {
    if (leaves_slow_start(sample)) return;
    // Slow start: one packet more per packet acknowledged, up to ssthresh (the window doubles per
    // round); unlimited, up to twice what was in flight.
    const double grown = std::min(cwnd_ + sample.delivered_packets, std::max(ssthresh_, cwnd_));
    cwnd_ = cwnd_limited ? grown : std::min(grown, std::max(cwnd_, 2 * sample.sent_packets));
    return;
  }
  if (cwnd_limited) congestion_avoidance(sample);
}

void LossBasedControl::on_restart(double idle_s, double rto_s) {
  if (!model_.slow_start_after_idle) return;
  // tcp_cwnd_restart: ssthresh keeps 3/4 of the window, which halves per timeout of idleness, down to
  // the initial window.
  if (idle_s <= rto_s) return;
  ssthresh_ = std::max(ssthresh_, 0.75 * cwnd_);
  for (double left_s = idle_s - rto_s; left_s > 0 && cwnd_ > model_.initial_window_packets; left_s -= rto_s)
    cwnd_ = std::max<double>(model_.initial_window_packets, cwnd_ / 2);
}

}  // namespace kvstream::sim
