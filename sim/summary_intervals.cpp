#include "sim/summary_intervals.h"

#include <algorithm>

#include "sim/summary.h"

namespace kvstream::sim {

namespace {

// splitmix64: a fixed generator (std's distributions are implementation-defined, and a summary must
// read the same on every machine).
struct Generator {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n): the modulo's bias is below n / 2^64, nothing at the sizes of a sweep.
  size_t below(size_t n) { return size_t(next() % n); }
};

// The p-th percentile of `values` as sim::percentile gives it on their sorted copy, in linear time;
// reorders `values`.
double percentile_unsorted(std::vector<double>& values, double p) {
  const double rank = p / 100 * double(values.size() - 1);
  const auto lo = size_t(std::floor(rank));
  std::nth_element(values.begin(), values.begin() + std::ptrdiff_t(lo), values.end());
  const double below = values[lo];
  if (lo + 1 >= values.size()) return below;
  const double above = *std::min_element(values.begin() + std::ptrdiff_t(lo) + 1, values.end());
  return below + (rank - double(lo)) * (above - below);
}

Interval middle_95(std::vector<double>& estimates) {
  std::sort(estimates.begin(), estimates.end());
  return {percentile(estimates, 2.5), percentile(estimates, 97.5)};
}

}  // namespace

Interval wilson_interval(size_t hits, size_t n, double z) {
  if (n == 0) return {};
  const double p = double(hits) / double(n), nn = double(n), z2 = z * z;
  const double centre = (p + z2 / (2 * nn)) / (1 + z2 / nn);
  const double half = z * std::sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn)) / (1 + z2 / nn);
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

SummaryIntervals summary_intervals(const std::vector<double>& ttfts, size_t requests, size_t violations, uint64_t seed) {
  SummaryIntervals out;
  out.slo_violation_rate = wilson_interval(violations, requests);
  if (ttfts.empty()) return out;
  Generator generator{seed};
  std::vector<double> sample(ttfts.size()), means, p50s, p95s;
  for (int b = 0; b < kBootstrapResamples; ++b) {
    double sum = 0;
    for (auto& x : sample) sum += x = ttfts[generator.below(ttfts.size())];
    means.push_back(sum / double(sample.size()));
    p50s.push_back(percentile_unsorted(sample, 50));
    p95s.push_back(percentile_unsorted(sample, 95));
  }
  out.mean_ttft_s = middle_95(means);
  out.p50_ttft_s = middle_95(p50s);
  out.p95_ttft_s = middle_95(p95s);
  return out;
}

}  // namespace kvstream::sim
