#include "sim/transfer_predictor.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace kvstream::sim {

namespace {

// The capacity (bit/s) at which `connection` sends `bits` from start_s in duration_s: bisection in
// log space between 1 kbit/s and 10 Tbit/s (a transfer is no slower on more capacity). A transfer
// faster than the model allows at any capacity (its duration set by round trips, not capacity)
// or slower than at the least says little about capacity: its throughput is taken instead.
// `connection` is left as after the transfer at that capacity.
double replay(TcpConnection& connection, double start_s, double bits, double duration_s) {
  const auto duration_at = [&](double rate_bps) {
    TcpConnection copy = connection;
    return copy.transfer_end_s(start_s, bits, ConstantCapacity(rate_bps)) - start_s;
  };
  double lo_bps = 1e3, hi_bps = 1e13;
  double rate_bps;
  if (duration_at(hi_bps) >= duration_s || duration_at(lo_bps) <= duration_s) {
    rate_bps = bits / duration_s;
  } else {
    // Invariant: duration_at(lo) > duration_s > duration_at(hi).
    for (int step = 0; step < 60 && hi_bps > lo_bps * (1 + 1e-9); ++step) {
      const double mid_bps = std::sqrt(lo_bps * hi_bps);
      (duration_at(mid_bps) > duration_s ? lo_bps : hi_bps) = mid_bps;
    }
    rate_bps = std::sqrt(lo_bps * hi_bps);
  }
  connection.transfer_end_s(start_s, bits, ConstantCapacity(rate_bps));
  return rate_bps;
}

}  // namespace

TransferPredictor::Kind TransferPredictor::kind_named(const std::string& name) {
  if (name == "fluid") return Kind::kFluid;
  if (name == "link") return Kind::kLink;
  throw std::invalid_argument("expected predictor \"link\" or \"fluid\", got \"" + name + "\"");
}

void TransferPredictor::observe(const DecisionContext& context) {
  if (!models_connection(context)) return;
  if (!connection_) connection_.emplace(context.config.tcp);
  for (size_t i = 0; i < pending_.size(); ++i) {
    const Pending& transfer = pending_[i];
    // Its end: the history's next sample for a KV transfer; with pipelining the last one sent
    // ended when this decision's request leaves. Otherwise (a text chunk without pipelining) it
    // is replayed at the latest capacity sample, or not at all before the first.
    double end_s = std::numeric_limits<double>::quiet_NaN();
    if (transfer.sampled && history_seen_ < context.history.size())
      end_s = context.history[history_seen_++].end_s;
    else if (context.config.pipelining && i + 1 == pending_.size())
      end_s = context.now_s;
    if (std::isfinite(end_s) && end_s > transfer.start_s) {
      const double rate_bps = replay(*connection_, transfer.start_s, transfer.bits, end_s - transfer.start_s);
      if (transfer.sampled) capacity_samples_.push_back({transfer.bits, transfer.start_s, transfer.start_s + transfer.bits / rate_bps});
    } else if (!capacity_samples_.empty()) {
      connection_->transfer_end_s(transfer.start_s, transfer.bits, ConstantCapacity(capacity_samples_.back().throughput_bps()));
    }
  }
  pending_.clear();
}

void TransferPredictor::sent(const DecisionContext& context, int choice) {
  if (!models_connection(context)) return;
  const double bits = context.costs.bits(context.chunk, choice);
  pending_.push_back({context.chunk, context.now_s + context.config.chunk_rtt_s, bits, choice != kText && bits > 0});
}

std::span<const TransferSample> TransferPredictor::samples(const DecisionContext& context) const {
  return models_connection(context) ? std::span<const TransferSample>(capacity_samples_) : context.history;
}

TimelineModel TransferPredictor::model(const DecisionContext& context, double rate_bps) const {
  const auto transfer = [rate_bps](double start_s, double bits, size_t) {
    return ConstantCapacity(rate_bps).arrival_s(start_s, bits);
  };
  std::optional<ConnectionPath> path;
  if (models_connection(context)) path = ConnectionPath{context.config.tcp, std::make_shared<ConstantCapacity>(rate_bps)};
  return TimelineModel(context.costs, context.config, transfer, path);
}

Timeline TransferPredictor::start(const DecisionContext& context) const {
  Timeline state = context.timeline;
  state.connection = models_connection(context) && connection_ ? std::make_shared<const TcpConnection>(*connection_) : nullptr;
  return state;
}

double TransferPredictor::send_s(const DecisionContext& context, std::span<const double> bits, double rate_bps) const {
  if (!models_connection(context) || !connection_) {
    double total_bits = 0;
    for (const double b : bits) total_bits += b;
    return total_bits / rate_bps;
  }
  TcpConnection connection = *connection_;
  const ConstantCapacity capacity(rate_bps);
  double end_s = context.now_s;
  for (const double b : bits) end_s = connection.transfer_end_s(end_s, b, capacity);
  return end_s - context.now_s;
}

}  // namespace kvstream::sim
