// Aggregates over request results: what a sweep reports per (policy, SLO, trace set).
#pragma once
#include <nlohmann/json.hpp>
#include <vector>

#include "sim/request_result.h"

namespace kvstream::sim {

struct Summary {
  size_t requests = 0;
  size_t completed = 0;
  double mean_ttft_s = 0, p50_ttft_s = 0, p95_ttft_s = 0;  // over completed requests
  double slo_violation_rate = 0;  // share of requests that missed the SLO (incl. never completed)
  double mean_bytes = 0;
  double mean_quality = 0;        // over completed requests
};

// The p-th percentile (0-100) of ascending `sorted` by linear interpolation between order statistics
// (numpy's default); 0 when empty.
double percentile(const std::vector<double>& sorted, double p);

// summarize() one request at a time: the same sums in the same order, so the same Summary. Holds the
// completed requests' TTFTs (8 bytes each, what percentiles and their intervals need) and a few counts.
class SummaryAccumulator {
 public:
  void add(const RequestResult& r);  // reads completed, ttft_s, slo_met, bytes, quality
  size_t requests() const { return requests_; }
  size_t violations() const { return violations_; }
  const std::vector<double>& completed_ttfts_s() const { return ttfts_; }  // in the order added
  Summary summary() const;

 private:
  size_t requests_ = 0, violations_ = 0;
  double bytes_ = 0, ttft_s_ = 0, quality_ = 0;  // sums
  std::vector<double> ttfts_;
};

// Percentiles as percentile() computes them.
Summary summarize(const std::vector<RequestResult>& results);
nlohmann::json to_json(const Summary& summary);

}  // namespace kvstream::sim
