// Summary statistics of a bandwidth trace over one period, time-weighted (each capacity counts for
// as long as it holds). For a chunk-indexed trace every chunk weighs the same (1 s placeholders), so
// the statistics are per chunk.
#pragma once
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "traces/bandwidth_trace.h"

namespace kvstream::traces {

struct TraceStats {
  std::string name;
  double duration_s = 0;  // one period
  double mean_mbps = 0;   // bits per period / period
  // Time-weighted percentiles: pX is the smallest capacity c such that the capacity is <= c for at
  // least X % of the period.
  double p10_mbps = 0;
  double p50_mbps = 0;
  double p90_mbps = 0;
  double cv = 0;          // time-weighted standard deviation / mean; 0 when the mean is 0
  size_t segments = 0;    // segments of the trace (not of the averaging bins)
  bool chunk_indexed = false;
  double bin_s = 0;       // averaging bin of the percentiles and cv; 0 = the trace's own segments
};

// Statistics of one period of `trace`. With bin_s > 0 the percentiles and cv are of the mean
// capacity over consecutive bins of bin_s seconds (the last one shorter when bin_s does not divide
// the period, and weighted by its length) — e.g. 1 s for Mahimahi traces, whose 1 ms bins alternate
// between 0 and multiples of 12 Mbps. Throws std::invalid_argument when bin_s is negative or not finite.
TraceStats trace_stats(const BandwidthTrace& trace, double bin_s = 0);

// {"name", "duration_s", "mean_mbps", "p10_mbps", "p50_mbps", "p90_mbps", "cv", "segments",
//  "chunk_indexed", "bin_s"}.
nlohmann::json to_json(const TraceStats& stats);

}  // namespace kvstream::traces
