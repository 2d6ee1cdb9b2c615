// 95 % confidence intervals of what a summary reports over requests (experiments/SCHEMA.md
// "summary.csv"): for the TTFT mean, p50 and p95 a percentile bootstrap over the completed requests
// (kBootstrapResamples resamples drawn by a generator seeded by the caller, so that a group's interval
// is the same in every run, shard and merge), and for the SLO violation rate Wilson's score interval
// (exact enough at the counts a sweep has, and never outside [0, 1]).
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kvstream::sim {

inline constexpr int kBootstrapResamples = 1000;
inline constexpr double kZ95 = 1.959963984540054;  // the standard normal's 97.5th percentile

struct Interval {
  double lo = NAN, hi = NAN;  // NaN when there is nothing to estimate from
};

// Wilson's score interval of a proportion: `hits` of `n` at z (95 %: kZ95).
Interval wilson_interval(size_t hits, size_t n, double z = kZ95);

struct SummaryIntervals {
  Interval mean_ttft_s, p50_ttft_s, p95_ttft_s, slo_violation_rate;
};

// `completed_ttfts_s`: the TTFTs of the completed requests (any order); `requests` and `violations`
// count every request. Percentiles as sim::percentile computes them (linear, numpy's default).
SummaryIntervals summary_intervals(const std::vector<double>& completed_ttfts_s, size_t requests, size_t violations,
                                   uint64_t seed);

}  // namespace kvstream::sim
