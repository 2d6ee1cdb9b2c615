#include "sim/summary.h"

#include <algorithm>
#include <cmath>

namespace kvstream::sim {

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double rank = p / 100 * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (rank - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

void SummaryAccumulator::add(const RequestResult& r) {
  ++requests_;
  bytes_ += r.bytes;
  if (!r.slo_met) ++violations_;
  if (!r.completed) return;
  ttfts_.push_back(r.ttft_s);
  ttft_s_ += r.ttft_s;
  quality_ += r.quality;
}

Summary SummaryAccumulator::summary() const {
  Summary s;
  s.requests = requests_;
  s.completed = ttfts_.size();
  std::vector<double> sorted = ttfts_;
  std::sort(sorted.begin(), sorted.end());
  if (s.completed) {
    s.mean_ttft_s = ttft_s_ / static_cast<double>(s.completed);
    s.mean_quality = quality_ / static_cast<double>(s.completed);
  }
  s.p50_ttft_s = percentile(sorted, 50);
  s.p95_ttft_s = percentile(sorted, 95);
  if (s.requests) {
    s.slo_violation_rate = static_cast<double>(violations_) / static_cast<double>(s.requests);
    s.mean_bytes = bytes_ / static_cast<double>(s.requests);
  }
  return s;
}

Summary summarize(const std::vector<RequestResult>& results) {
  SummaryAccumulator accumulator;
  for (const auto& r : results) accumulator.add(r);
  return accumulator.summary();
}

nlohmann::json to_json(const Summary& s) {
  // Over completed requests only: null when none completed.
  const auto completed_only = [&](double x) { return s.completed ? nlohmann::json(x) : nlohmann::json(nullptr); };
  return {{"requests", s.requests},
          {"completed", s.completed},
          {"mean_ttft_s", completed_only(s.mean_ttft_s)},
          {"p50_ttft_s", completed_only(s.p50_ttft_s)},
          {"p95_ttft_s", completed_only(s.p95_ttft_s)},
          {"slo_violation_rate", s.slo_violation_rate},
          {"mean_bytes", s.mean_bytes},
          {"mean_quality", completed_only(s.mean_quality)}};
}

}  // namespace kvstream::sim
