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

// Percentiles as percentile() computes them.
Summary summarize(const std::vector<RequestResult>& results);
nlohmann::json to_json(const Summary& summary);

}  // namespace kvstream::sim
