// The transfer-time predictor the planning policies share: how long this request's next chunks take
// under the run's link model, given a throughput estimate (docs/CACHEGEN.md §11.4 "Predictors").
//
//   fluid  a transfer of b bits takes b / r at the estimated rate r: the paper's view, and today's
//          mpc and cachegen predictions exactly (samples are the transfers' throughputs);
//   link   under the `tcp` link model, a transfer runs the request's TCP connection's rounds
//          (sim/tcp/tcp_connection.h) on a path of constant capacity r: slow start, the window, the
//          queue's losses, restart after idle. The sender knows its connection as the kernel does
//          (tcp_info: window, threshold, round trip, idle time): the predictor keeps a model of it,
//          replaying each finished transfer on the capacity that explains its observed duration.
//          Those capacities are the samples the throughput estimator reads, so "robust" guards the
//          capacity prediction with its own past errors, as RobustMPC does. Under `fluid` the link
//          predictor is the fluid one.
// One object serves one request (a Policy's lifetime): observe() before each decision, sent() after.
#pragma once
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sim/policy.h"
#include "sim/request_timeline.h"

namespace kvstream::sim {

class TransferPredictor {
 public:
  enum class Kind { kFluid, kLink };
  // By option value: "fluid" or "link"; throws std::invalid_argument naming both otherwise.
  static Kind kind_named(const std::string& name);

  explicit TransferPredictor(Kind kind) : kind_(kind) {}

  // Learns from the transfers that finished since the last decision (call first at each decision).
  void observe(const DecisionContext& context);
  // The transfer of context.chunk as `choice` leaves now (call once the choice is made).
  void sent(const DecisionContext& context, int choice);

  // What a throughput estimator should read: the request's history under the fluid view, else the
  // capacity each finished transfer implies (as samples of that throughput).
  std::span<const TransferSample> samples(const DecisionContext& context) const;
  // The request from now on at constant capacity rate_bps: a model whose transfers predict the
  // link's, and the timeline to advance from (context.timeline with the modelled connection).
  TimelineModel model(const DecisionContext& context, double rate_bps) const;
  Timeline start(const DecisionContext& context) const;
  // Seconds to send `bits`, one chunk after another from now, at rate_bps (fluid: their sum / rate).
  double send_s(const DecisionContext& context, std::span<const double> bits, double rate_bps) const;

  // Whether it predicts through a modelled connection (the link predictor under the tcp link model).
  bool models_connection(const DecisionContext& context) const {
    return kind_ == Kind::kLink && context.config.link_model == LinkModel::kTcp;
  }

 private:
  struct Pending {
    size_t chunk;
    double start_s, bits;
    bool sampled;  // a KV transfer whose end the history records
  };

  Kind kind_;
  std::optional<TcpConnection> connection_;  // the modelled connection after the finished transfers
  std::vector<Pending> pending_;             // sent, not yet observed, in order
  size_t history_seen_ = 0;                  // history samples consumed
  std::vector<TransferSample> capacity_samples_;
};

}  // namespace kvstream::sim
