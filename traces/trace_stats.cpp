#include "traces/trace_stats.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kvstream::traces {
namespace {

// (capacity_bps, weight_s) pairs covering one period: the segments, or bin_s-long bin averages.
std::vector<std::pair<double, double>> weighted_capacities(const BandwidthTrace& trace, double bin_s) {
  std::vector<std::pair<double, double>> values;
  if (bin_s == 0) {
    for (const TraceSegment& s : trace.segments()) values.emplace_back(s.capacity_bps, s.duration_s);
    return values;
  }
  const double period_s = trace.duration_s();
  constexpr double kMaxBins = 1e8;
  if (period_s / bin_s > kMaxBins)
    throw std::invalid_argument("trace_stats: bin_s " + std::to_string(bin_s) + " s makes more than 1e8 bins of the " +
                                std::to_string(period_s) + " s period");
  for (double i = 0; i * bin_s < period_s; ++i) {
    const double t0_s = i * bin_s;
    const double t1_s = std::min(t0_s + bin_s, period_s);
    values.emplace_back(trace.bits_between(t0_s, t1_s) / (t1_s - t0_s), t1_s - t0_s);
  }
  return values;
}

// The smallest capacity whose cumulative weight reaches `fraction` of the total (values sorted by
// capacity). The relative slack keeps exact ties (cumulative weight == fraction * total) on the
// lower value despite rounding in the sums.
double weighted_percentile(const std::vector<std::pair<double, double>>& sorted, double total_s, double fraction) {
  const double target_s = fraction * total_s * (1 - 1e-12);
  double cumulative_s = 0;
  for (const auto& [capacity_bps, weight_s] : sorted) {
    cumulative_s += weight_s;
    if (cumulative_s >= target_s) return capacity_bps;
  }
  return sorted.back().first;
}

}  // namespace

TraceStats trace_stats(const BandwidthTrace& trace, double bin_s) {
  if (!(bin_s >= 0) || !std::isfinite(bin_s))
    throw std::invalid_argument("trace_stats: bin_s must be finite and >= 0");
  auto values = weighted_capacities(trace, bin_s);
  std::sort(values.begin(), values.end());
  double total_s = 0;
  for (const auto& v : values) total_s += v.second;
  const double mean_bps = trace.mean_bps();
  double variance = 0;  // (bit/s)^2
  for (const auto& [capacity_bps, weight_s] : values)
    variance += weight_s * (capacity_bps - mean_bps) * (capacity_bps - mean_bps);
  variance /= total_s;

  TraceStats stats;
  stats.name = trace.name();
  stats.duration_s = trace.duration_s();
  stats.mean_mbps = mean_bps / 1e6;
  stats.p10_mbps = weighted_percentile(values, total_s, 0.1) / 1e6;
  stats.p50_mbps = weighted_percentile(values, total_s, 0.5) / 1e6;
  stats.p90_mbps = weighted_percentile(values, total_s, 0.9) / 1e6;
  stats.cv = mean_bps > 0 ? std::sqrt(variance) / mean_bps : 0;
  stats.segments = trace.segments().size();
  stats.chunk_indexed = trace.chunk_indexed();
  stats.bin_s = bin_s;
  return stats;
}

nlohmann::json to_json(const TraceStats& stats) {
  return {{"name", stats.name},         {"duration_s", stats.duration_s}, {"mean_mbps", stats.mean_mbps},
          {"p10_mbps", stats.p10_mbps}, {"p50_mbps", stats.p50_mbps},     {"p90_mbps", stats.p90_mbps},
          {"cv", stats.cv},             {"segments", stats.segments},     {"chunk_indexed", stats.chunk_indexed},
          {"bin_s", stats.bin_s}};
}

}  // namespace kvstream::traces
