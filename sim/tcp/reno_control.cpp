#include "sim/tcp/reno_control.h"

#include <algorithm>

namespace kvstream::sim {

void RenoControl::on_loss(const RoundSample&) { cwnd_ = ssthresh_ = std::max(2.0, cwnd_ / 2); }

void RenoControl::congestion_avoidance(const RoundSample&) { cwnd_ += 1; }

}  // namespace kvstream::sim
