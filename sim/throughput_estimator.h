// Throughput estimators (docs/CACHEGEN.md §11.4 "Predictors"): predict the link's throughput for the
// next chunk from the transfers a sender has already seen. Each is a pure function of the history.
#pragma once
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kvstream::sim {

// One completed transfer of this request's KV, as the sender saw it: its bytes started to flow at
// start_s (after the request RTT) and the last one arrived at end_s > start_s. Transfers without
// duration (no bits) and text chunks (a few bytes: a round trip, not a bandwidth) are not recorded.
struct TransferSample {
  double bits = 0;
  double start_s = 0, end_s = 0;
  double throughput_bps() const { return end_s > start_s ? bits / (end_s - start_s) : 0; }
};

class ThroughputEstimator {
 public:
  virtual ~ThroughputEstimator() = default;
  // Predicted throughput in bit/s; nullopt before the first sample.
  virtual std::optional<double> estimate_bps(std::span<const TransferSample> history) const = 0;
};

// By name: "last" (the previous chunk's throughput, the paper rule), "hm" (harmonic mean of the
// last `window` samples), "ewma" (weight `alpha` on the newest sample), "robust" (RobustMPC: hm
// divided by 1 + the largest relative error of hm's past predictions over the last `window`).
// Throws std::invalid_argument for an unknown name or window < 1 or alpha outside (0, 1].
std::unique_ptr<ThroughputEstimator> make_estimator(const std::string& name, int window = 5, double alpha = 0.5);

}  // namespace kvstream::sim
