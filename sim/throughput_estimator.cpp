#include "sim/throughput_estimator.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace kvstream::sim {

namespace {

class LastSample final : public ThroughputEstimator {
 public:
  std::optional<double> estimate_bps(std::span<const TransferSample> history) const override {
    if (history.empty()) return std::nullopt;
    return history.back().throughput_bps();
  }
};

// Harmonic mean of the last `window` throughputs: the throughput of sending equal bit counts
// through each of them, robust to one fast outlier.
std::optional<double> harmonic_mean_bps(std::span<const TransferSample> history, int window) {
  if (history.empty()) return std::nullopt;
  const size_t n = std::min<size_t>(history.size(), static_cast<size_t>(window));
  double inverse_sum = 0;
  for (size_t i = history.size() - n; i < history.size(); ++i) {
    const double bps = history[i].throughput_bps();
    if (bps <= 0) return 0.0;  // a stalled transfer: predict nothing gets through
    inverse_sum += 1 / bps;
  }
  return static_cast<double>(n) / inverse_sum;
}

class HarmonicMean final : public ThroughputEstimator {
 public:
  explicit HarmonicMean(int window) : window_(window) {}
  std::optional<double> estimate_bps(std::span<const TransferSample> history) const override {
    return harmonic_mean_bps(history, window_);
  }

 private:
  int window_;
};

class Ewma final : public ThroughputEstimator {
 public:
  explicit Ewma(double alpha) : alpha_(alpha) {}
  std::optional<double> estimate_bps(std::span<const TransferSample> history) const override {
    if (history.empty()) return std::nullopt;
    double estimate = history.front().throughput_bps();
    for (size_t i = 1; i < history.size(); ++i) estimate = alpha_ * history[i].throughput_bps() + (1 - alpha_) * estimate;
    return estimate;
  }

 private:
  double alpha_;
};

// RobustMPC (Yin et al., SIGCOMM'15): discount the harmonic mean by the worst relative error
// |predicted - actual| / actual that the harmonic mean made on each of the last `window` samples.
class RobustHarmonicMean final : public ThroughputEstimator {
 public:
  explicit RobustHarmonicMean(int window) : window_(window) {}
  std::optional<double> estimate_bps(std::span<const TransferSample> history) const override {
    const auto hm = harmonic_mean_bps(history, window_);
    if (!hm) return std::nullopt;
    double max_error = 0;
    const size_t first = history.size() > static_cast<size_t>(window_) ? history.size() - window_ : 1;
    for (size_t i = std::max<size_t>(first, 1); i < history.size(); ++i) {
      const double actual = history[i].throughput_bps();
      const auto predicted = harmonic_mean_bps(history.first(i), window_);
      if (actual > 0 && predicted) max_error = std::max(max_error, std::abs(*predicted - actual) / actual);
    }
    return *hm / (1 + max_error);
  }

 private:
  int window_;
};

}  // namespace

std::unique_ptr<ThroughputEstimator> make_estimator(const std::string& name, int window, double alpha) {
  if (window < 1) throw std::invalid_argument("estimator window must be >= 1, got " + std::to_string(window));
  if (!(alpha > 0 && alpha <= 1)) throw std::invalid_argument("estimator alpha must be in (0, 1], got " + std::to_string(alpha));
  if (name == "last") return std::make_unique<LastSample>();
  if (name == "hm") return std::make_unique<HarmonicMean>(window);
  if (name == "ewma") return std::make_unique<Ewma>(alpha);
  if (name == "robust") return std::make_unique<RobustHarmonicMean>(window);
  throw std::invalid_argument("unknown throughput estimator \"" + name + "\" (known: last, hm, ewma, robust)");
}

}  // namespace kvstream::sim
